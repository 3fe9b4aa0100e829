// RUN: molten-opt %s -p 'split-size-classes,fuse-epilogue{arch="sm_90a"},fuse-elementwise,merge-size-classes,kernel-outline,kernel-schedule{arch="sm_90a"},tile,lower-kernel-to-cuda' | filecheck %s
// RUN: molten-opt %s -p 'split-size-classes,fuse-epilogue{arch="sm_90a"},fuse-elementwise,merge-size-classes,kernel-outline,kernel-schedule{arch="sm_90a"},specialize-dims{sizes="T=3"}' | filecheck %s --check-prefix=THREE
// RUN: molten-opt %s -p 'split-size-classes,fuse-epilogue{arch="sm_90a"},fuse-elementwise,merge-size-classes,kernel-outline,kernel-schedule{arch="sm_90a"},specialize-dims{sizes="T=100"}' | filecheck %s --check-prefix=HUNDRED

// A graph in two copies by size class (split-size-classes): one launcher
// for both, each launch run where its variant's class and its copy's
// range hold T (the fused kernel's first class, T <= 32, from 9 only); the
// first copy's buffers are freed before the second's launches.

// CHECK:      cuda.host_func @mlp(%x: !cuda.ptr<bf16>, %wg: !cuda.ptr<bf16>, %wu: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>, %T: index) outputs 1 dims ["T"]
// CHECK-NEXT:   %u = cuda.alloc 4096 x %T : !cuda.ptr<bf16>
// CHECK-NEXT:   cuda.launch @mlp_gemm0_upto1 {{.*}}(%x, %wu, %u, %T) when [3, 1, 1]
// CHECK-NEXT:   cuda.launch @mlp_gemm0_upto4 {{.*}}(%x, %wu, %u, %T) when [3, 2, 4]
// CHECK-NEXT:   cuda.launch @mlp_gemm0_upto8 {{.*}}(%x, %wu, %u, %T) when [3, 5, 8]
// CHECK-NEXT:   cuda.launch @mlp_gemm1_upto1 {{.*}}(%x, %wg, %u, %y, %T) when [4, 1, 1]
// CHECK-NEXT:   cuda.launch @mlp_gemm1_upto4 {{.*}}(%x, %wg, %u, %y, %T) when [4, 2, 4]
// CHECK-NEXT:   cuda.launch @mlp_gemm1_upto8 {{.*}}(%x, %wg, %u, %y, %T) when [4, 5, 8]
// CHECK-NEXT:   cuda.free %u : !cuda.ptr<bf16>
// CHECK:        cuda.launch @mlp_gemm2_upto32 {{.*}}(%x, %wg, %wu, %y, %T, {{.*}}) when [4, 9, 32]
// CHECK:        cuda.launch @mlp_gemm2_upto128 {{.*}} when [4, 33, 128]
// CHECK:        cuda.launch @mlp_gemm2_rest {{.*}} when [4, 129, 0]
// CHECK-NEXT:   cuda.return

// Given T, the copy of its range is the graph, and the kernels only the
// other copy launches are dropped.
// THREE-NOT:  @mlp_gemm2
// THREE:      func.func @mlp(%x: tensor<3x512xbf16>, %wg: tensor<4096x512xbf16>, %wu: tensor<4096x512xbf16>) -> tensor<3x4096xbf16> {
// THREE-NEXT:   %u = kernel.launch @mlp_gemm0
// THREE-NEXT:   %y = kernel.launch @mlp_gemm1
// THREE-NOT:  func.func

// HUNDRED-NOT:  @mlp_gemm0
// HUNDRED-NOT:  @mlp_gemm1(
// HUNDRED:      kernel.func @mlp_gemm2({{.*}}) -> (tensor<100x4096xbf16>) gemm matched #kernel.gemm_match<side_by_side> schedule #kernel.schedule<{{.*}}persistent = 132>
// HUNDRED:      func.func @mlp(%x: tensor<100x512xbf16>, {{.*}}) -> tensor<100x4096xbf16> {
// HUNDRED-NEXT:   %y = kernel.launch @mlp_gemm2
// HUNDRED-NOT:  func.func

func.func @mlp(%x: tensor<?x512xbf16, ["T"]>, %wg: tensor<4096x512xbf16>, %wu: tensor<4096x512xbf16>) -> tensor<?x4096xbf16, ["T"]> {
  %g = molten.matmul %x, %wg transpose_b : (tensor<?x512xbf16, ["T"]>, tensor<4096x512xbf16>) -> tensor<?x4096xbf16, ["T"]>
  %u = molten.matmul %x, %wu transpose_b : (tensor<?x512xbf16, ["T"]>, tensor<4096x512xbf16>) -> tensor<?x4096xbf16, ["T"]>
  %s = molten.silu %g : tensor<?x4096xbf16, ["T"]>
  %y = molten.mul %s, %u : (tensor<?x4096xbf16, ["T"]>, tensor<?x4096xbf16, ["T"]>) -> tensor<?x4096xbf16, ["T"]>
  func.return %y : tensor<?x4096xbf16, ["T"]>
}
