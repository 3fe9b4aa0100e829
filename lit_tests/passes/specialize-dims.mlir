// RUN: molten-opt %s --split-input-file -p 'specialize-dims{sizes="T=17"}' | filecheck %s
// RUN: molten-opt %s --split-input-file -p 'specialize-dims{sizes="S=3"}' | filecheck %s --check-prefix=OTHER
// RUN: not molten-opt %s --split-input-file -p 'specialize-dims{sizes="T=0"}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: sed '/^\/\/ -----$/,$d' %s | molten-opt -p MOLTEN_DEFAULT_PIPELINE | filecheck %s --check-prefix=KERNELS

// Every type, the signature too, takes the sizes given; other names stay.

// CHECK-LABEL: func.func @gated_norm(%x: tensor<17x64xf32>, %w: tensor<64xf32>, %g: tensor<17x64xf32>) -> tensor<17x64xf32> {
// CHECK-NEXT:    %n = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<17x64xf32>, tensor<64xf32>) -> tensor<17x64xf32>
// CHECK-NEXT:    %m = molten.causal_mask : tensor<17x17xf32>
// CHECK-NEXT:    %y = molten.mul %n, %g : (tensor<17x64xf32>, tensor<17x64xf32>) -> tensor<17x64xf32>
// CHECK-NEXT:    func.return %y : tensor<17x64xf32>

// OTHER-LABEL: func.func @gated_norm(%x: tensor<?x64xf32, ["T"]>
// OTHER:         %m = molten.causal_mask : tensor<?x?xf32, ["T", "T"]>

// ZERO: {{^.*}}specialize-dims.mlir: error: specialize-dims: T = 0: a dimension name takes a positive size{{$}}

// Without specialize-dims, the row kernel and its launcher take T at run time.
// KERNELS: cuda.kernel @gated_norm_row_reduce0({{.*}}, %T: index) block
// KERNELS: cuda.host_func @gated_norm({{.*}}, %T: index) outputs 1 dims ["T"]

func.func @gated_norm(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64xf32>, %g: tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]> {
  %n = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<?x64xf32, ["T"]>, tensor<64xf32>) -> tensor<?x64xf32, ["T"]>
  %m = molten.causal_mask : tensor<?x?xf32, ["T", "T"]>
  %y = molten.mul %n, %g : (tensor<?x64xf32, ["T"]>, tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]>
  func.return %y : tensor<?x64xf32, ["T"]>
}

// -----

// A kernel with variants by T keeps, given T = 17, the variant whose class
// holds 17 as its schedule (at S = 3 the variants stay).

// CHECK-LABEL: kernel.func @gemm_over_t(%x: tensor<17x32xf32>, %w: tensor<32x32xf32>) -> (tensor<17x32xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 64, tile = [64, 32, 8]> {

// OTHER-LABEL: kernel.func @gemm_over_t
// OTHER-SAME:    variants [#kernel.variant<T <= 8,

kernel.func @gemm_over_t(%x: tensor<?x32xf32, ["T"]>, %w: tensor<32x32xf32>) -> (tensor<?x32xf32, ["T"]>) gemm variants [#kernel.variant<T <= 8, #kernel.schedule<gemm_simt, block = 32, tile = [32, 32, 8]>>, #kernel.variant<T <= 32, #kernel.schedule<gemm_simt, block = 64, tile = [64, 32, 8]>>, #kernel.variant<T, #kernel.schedule<gemm_simt, block = 128, tile = [128, 32, 8]>>] {
  %y = molten.matmul %x, %w : (tensor<?x32xf32, ["T"]>, tensor<32x32xf32>) -> tensor<?x32xf32, ["T"]>
  kernel.yield %y : tensor<?x32xf32, ["T"]>
}
