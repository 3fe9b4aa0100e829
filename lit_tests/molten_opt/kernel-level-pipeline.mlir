// The kernel-level IR and the CUDA of the cases, each made once (%t.kernel,
// %t.cu), then checked by every prefix below.
// RUN: molten-opt %s --split-input-file -p MOLTEN_KERNEL_LEVEL_PIPELINE > %t.kernel
// RUN: filecheck %s < %t.kernel
// RUN: filecheck %s --check-prefix=ONE < %t.kernel
// RUN: grep -c "kernel.func @" %t.kernel | filecheck %s --check-prefix=KERNELS
// RUN: grep -c "kernel.launch @" %t.kernel | filecheck %s --check-prefix=KERNELS
// RUN: molten-opt %s --split-input-file -p MOLTEN_DEFAULT_PIPELINE -t cuda > %t.cu
// RUN: filecheck %s --check-prefix=CUDA < %t.cu
// RUN: grep __global__ %t.cu | grep -Evc "_(scalar|simt)\(" | filecheck %s --check-prefix=KERNELS
// RUN: grep "<<<" %t.cu | grep -Evc "_(scalar|simt)<<<" | filecheck %s --check-prefix=KERNELS
// RUN: grep -Ec "_(scalar|simt)<<<" %t.cu | filecheck %s --check-prefix=VARIANTS

// The default pipeline up to the kernel level (KERNEL_LEVEL_PIPELINE of
// molten/pipeline.py: the molten-level passes, then fuse-attention, fuse-reduction,
// fuse-epilogue, fuse-elementwise, kernel-outline, kernel-schedule, tile,
// dce) on
// each case that must become exactly one kernel: one kernel.func, of the
// expected kind, schedule and fused ops, and one kernel.launch of it, the
// graph's only op besides its return. The whole default pipeline (which
// goes on to the cuda dialect) makes of each one __global__ kernel and one
// launch of it in the printed CUDA.
//
// The KERNELS line counts them: the seven cases hold seven kernel.funcs,
// seven kernel.launches, seven __global__ kernels and seven <<<...>>>
// launches, so, each case having its own (the other checks), exactly one of
// each per case. Besides, each kernel with vector accesses (all but the
// gemm) has a scalar variant, and the gemm (on tensor cores) a SIMT variant,
// launched instead when a pointer is misaligned.
// KERNELS: {{^7$}}
// VARIANTS: {{^7$}}
//
// The CHECK lines: the module is the kernel.func (no other kernel.func
// inside it up to its yield), then the graph, exactly one launch and the
// return. The ONE lines: a case's module starts with its kernel.func, has
// no other kernel.func before its one kernel.launch, and neither after it up
// to the next case. The CUDA lines find each case's kernel and launch.

// The seed: rms_norm in f32 at the seed's shape (a copy of
// examples/fused_rmsnorm.mlir): one row_reduce kernel of the six primitives.
func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> (tensor<2048x5120xf32> {molten.name = "norm"}) {
  %norm = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
  func.return %norm : tensor<2048x5120xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   kernel.func @fused_rmsnorm_row_reduce0(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> (tensor<2048x5120xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 640, rows_per_block = 1, vector = 4, elements_per_thread = 8> attributes {fused_ops = ["square", "reduce_mean", "add", "rsqrt", "mul", "mul"]} {
// CHECK-NOT:    kernel.func
// CHECK:        kernel.yield %norm : tensor<2048x5120xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> (tensor<2048x5120xf32> {molten.name = "norm"}) {
// CHECK-NEXT:     %norm = kernel.launch @fused_rmsnorm_row_reduce0(%x, %w) : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
// CHECK-NEXT:     func.return %norm : tensor<2048x5120xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// ONE:         builtin.module {
// ONE-NEXT:      kernel.func @fused_rmsnorm_row_reduce0(
// ONE-NOT:       kernel.func
// ONE:             kernel.launch @fused_rmsnorm_row_reduce0(
// ONE-NOT:       kernel.{{func|launch}}

// CUDA:        __global__ {{.*}} fused_rmsnorm_row_reduce0(
// CUDA:        {{^ +}}fused_rmsnorm_row_reduce0<<<

// -----

// layer_norm in f16: mean and variance, the casts up and the cast down, one
// row_reduce kernel.
func.func @layer_norm(%x: tensor<64x768xf16>, %w: tensor<768xf16>, %b: tensor<768xf16>) -> tensor<64x768xf16> {
  %y = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<64x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<64x768xf16>
  func.return %y : tensor<64x768xf16>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   kernel.func @layer_norm_row_reduce0(%x: tensor<64x768xf16>, %w: tensor<768xf16>, %b: tensor<768xf16>) -> (tensor<64x768xf16>) row_reduce schedule #kernel.schedule<row_reduce, block = 64, rows_per_block = 1, vector = 8, elements_per_thread = 16> attributes {fused_ops = ["cast", "cast", "cast", "reduce_mean", "sub", "square", "reduce_mean", "add", "rsqrt", "mul", "mul", "add", "cast"]} {
// CHECK-NOT:    kernel.func
// CHECK:        kernel.yield %y : tensor<64x768xf16>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @layer_norm(%x: tensor<64x768xf16>, %w: tensor<768xf16>, %b: tensor<768xf16>) -> tensor<64x768xf16> {
// CHECK-NEXT:     %y = kernel.launch @layer_norm_row_reduce0(%x, %w, %b) : (tensor<64x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<64x768xf16>
// CHECK-NEXT:     func.return %y : tensor<64x768xf16>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// ONE:         {{^// -{5}$}}
// ONE-NEXT:    builtin.module {
// ONE-NEXT:      kernel.func @layer_norm_row_reduce0(
// ONE-NOT:       kernel.func
// ONE:             kernel.launch @layer_norm_row_reduce0(
// ONE-NOT:       kernel.{{func|launch}}

// CUDA:        {{^// -{5}$}}
// CUDA:        __global__ {{.*}} layer_norm_row_reduce0(
// CUDA:        {{^ +}}layer_norm_row_reduce0<<<

// -----

// softmax over the last axis of a rank-3 tensor: max and sum, one
// row_reduce kernel.
func.func @softmax(%x: tensor<8x16x1024xf32>) -> tensor<8x16x1024xf32> {
  %y = molten.softmax %x axis = 2 : tensor<8x16x1024xf32>
  func.return %y : tensor<8x16x1024xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   kernel.func @softmax_row_reduce0(%x: tensor<8x16x1024xf32>) -> (tensor<8x16x1024xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 128, rows_per_block = 1, vector = 4, elements_per_thread = 8> attributes {fused_ops = ["reduce_max", "sub", "exp", "reduce_sum", "div"]} {
// CHECK-NOT:    kernel.func
// CHECK:        kernel.yield %y : tensor<8x16x1024xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @softmax(%x: tensor<8x16x1024xf32>) -> tensor<8x16x1024xf32> {
// CHECK-NEXT:     %y = kernel.launch @softmax_row_reduce0(%x) : (tensor<8x16x1024xf32>) -> tensor<8x16x1024xf32>
// CHECK-NEXT:     func.return %y : tensor<8x16x1024xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// ONE:         {{^// -{5}$}}
// ONE-NEXT:    builtin.module {
// ONE-NEXT:      kernel.func @softmax_row_reduce0(
// ONE-NOT:       kernel.func
// ONE:             kernel.launch @softmax_row_reduce0(
// ONE-NOT:       kernel.{{func|launch}}

// CUDA:        {{^// -{5}$}}
// CUDA:        __global__ {{.*}} softmax_row_reduce0(
// CUDA:        {{^ +}}softmax_row_reduce0<<<

// -----

// rms_norm * silu(gate) in bf16: the gate's silu joins the rms_norm's
// row_reduce kernel.
func.func @rms_norm_silu(%x: tensor<32x4096xbf16>, %w: tensor<4096xbf16>, %g: tensor<32x4096xbf16>) -> tensor<32x4096xbf16> {
  %n = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<32x4096xbf16>, tensor<4096xbf16>) -> tensor<32x4096xbf16>
  %s = molten.silu %g : tensor<32x4096xbf16>
  %y = molten.mul %n, %s : (tensor<32x4096xbf16>, tensor<32x4096xbf16>) -> tensor<32x4096xbf16>
  func.return %y : tensor<32x4096xbf16>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   kernel.func @rms_norm_silu_row_reduce0(%x: tensor<32x4096xbf16>, %w: tensor<4096xbf16>, %g: tensor<32x4096xbf16>) -> (tensor<32x4096xbf16>) row_reduce schedule #kernel.schedule<row_reduce, block = 256, rows_per_block = 1, vector = 8, elements_per_thread = 16> attributes {fused_ops = ["cast", "cast", "square", "reduce_mean", "add", "rsqrt", "mul", "mul", "cast", "silu", "mul"]} {
// CHECK-NOT:    kernel.func
// CHECK:        kernel.yield %y : tensor<32x4096xbf16>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @rms_norm_silu(%x: tensor<32x4096xbf16>, %w: tensor<4096xbf16>, %g: tensor<32x4096xbf16>) -> tensor<32x4096xbf16> {
// CHECK-NEXT:     %y = kernel.launch @rms_norm_silu_row_reduce0(%x, %w, %g) : (tensor<32x4096xbf16>, tensor<4096xbf16>, tensor<32x4096xbf16>) -> tensor<32x4096xbf16>
// CHECK-NEXT:     func.return %y : tensor<32x4096xbf16>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// ONE:         {{^// -{5}$}}
// ONE-NEXT:    builtin.module {
// ONE-NEXT:      kernel.func @rms_norm_silu_row_reduce0(
// ONE-NOT:       kernel.func
// ONE:             kernel.launch @rms_norm_silu_row_reduce0(
// ONE-NOT:       kernel.{{func|launch}}

// CUDA:        {{^// -{5}$}}
// CUDA:        __global__ {{.*}} rms_norm_silu_row_reduce0(
// CUDA:        {{^ +}}rms_norm_silu_row_reduce0<<<

// -----

// gelu(x * a + b) * c, a and b row vectors, c a scalar: one pointwise
// kernel.
func.func @gelu_affine(%x: tensor<128x256xf32>, %a: tensor<256xf32>, %b: tensor<256xf32>, %c: tensor<f32>) -> tensor<128x256xf32> {
  %m = molten.mul %x, %a : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %s = molten.add %m, %b : (tensor<128x256xf32>, tensor<256xf32>) -> tensor<128x256xf32>
  %g = molten.gelu %s : tensor<128x256xf32>
  %y = molten.mul %g, %c : (tensor<128x256xf32>, tensor<f32>) -> tensor<128x256xf32>
  func.return %y : tensor<128x256xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   kernel.func @gelu_affine_pointwise0(%x: tensor<128x256xf32>, %a: tensor<256xf32>, %b: tensor<256xf32>, %c: tensor<f32>) -> (tensor<128x256xf32>) pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 4, elements_per_thread = 4> attributes {fused_ops = ["mul", "add", "gelu", "mul"]} {
// CHECK-NOT:    kernel.func
// CHECK:        kernel.yield %y : tensor<128x256xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @gelu_affine(%x: tensor<128x256xf32>, %a: tensor<256xf32>, %b: tensor<256xf32>, %c: tensor<f32>) -> tensor<128x256xf32> {
// CHECK-NEXT:     %y = kernel.launch @gelu_affine_pointwise0(%x, %a, %b, %c) : (tensor<128x256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<f32>) -> tensor<128x256xf32>
// CHECK-NEXT:     func.return %y : tensor<128x256xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// ONE:         {{^// -{5}$}}
// ONE-NEXT:    builtin.module {
// ONE-NEXT:      kernel.func @gelu_affine_pointwise0(
// ONE-NOT:       kernel.func
// ONE:             kernel.launch @gelu_affine_pointwise0(
// ONE-NOT:       kernel.{{func|launch}}

// CUDA:        {{^// -{5}$}}
// CUDA:        __global__ {{.*}} gelu_affine_pointwise0(
// CUDA:        {{^ +}}gelu_affine_pointwise0<<<

// -----

// gelu(x @ w + b) in f16: the bias and the gelu are the matmul's epilogue,
// one gemm kernel, on tensor cores, tiled.
func.func @mm_bias_gelu(%x: tensor<128x512xf16>, %w: tensor<512x256xf16>, %b: tensor<256xf16>) -> tensor<128x256xf16> {
  %mm = molten.matmul %x, %w : (tensor<128x512xf16>, tensor<512x256xf16>) -> tensor<128x256xf16>
  %s = molten.add %mm, %b : (tensor<128x256xf16>, tensor<256xf16>) -> tensor<128x256xf16>
  %y = molten.gelu %s approximate = "tanh" : tensor<128x256xf16>
  func.return %y : tensor<128x256xf16>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   kernel.func @mm_bias_gelu_gemm0(%x: tensor<128x512xf16>, %w: tensor<512x256xf16>, %b: tensor<256xf16>) -> (tensor<128x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [2, 1, 1], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 16, partial = [], lhs = [128, 32, 40], rhs = [32, 128, 136]> attributes {fused_ops = ["matmul", "add", "gelu"]} {
// CHECK-NOT:    kernel.func
// CHECK:        kernel.yield %y : tensor<128x256xf16>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @mm_bias_gelu(%x: tensor<128x512xf16>, %w: tensor<512x256xf16>, %b: tensor<256xf16>) -> tensor<128x256xf16> {
// CHECK-NEXT:     %y = kernel.launch @mm_bias_gelu_gemm0(%x, %w, %b) : (tensor<128x512xf16>, tensor<512x256xf16>, tensor<256xf16>) -> tensor<128x256xf16>
// CHECK-NEXT:     func.return %y : tensor<128x256xf16>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// ONE:         {{^// -{5}$}}
// ONE-NEXT:    builtin.module {
// ONE-NEXT:      kernel.func @mm_bias_gelu_gemm0(
// ONE-NOT:       kernel.func
// ONE:             kernel.launch @mm_bias_gelu_gemm0(
// ONE-NOT:       kernel.{{func|launch}}

// CUDA:        {{^// -{5}$}}
// CUDA:        __global__ {{.*}} mm_bias_gelu_gemm0(
// CUDA:        {{^ +}}mm_bias_gelu_gemm0<<<

// -----

// log_softmax, as primitives: one row_reduce kernel.
func.func @log_softmax(%x: tensor<32x512xf32>) -> tensor<32x512xf32> {
  %max = molten.reduce_max %x axes = [1] keepdim : tensor<32x512xf32> -> tensor<32x1xf32>
  %shifted = molten.sub %x, %max : (tensor<32x512xf32>, tensor<32x1xf32>) -> tensor<32x512xf32>
  %exp = molten.exp %shifted : tensor<32x512xf32>
  %sum = molten.reduce_sum %exp axes = [1] keepdim : tensor<32x512xf32> -> tensor<32x1xf32>
  %log = molten.log %sum : tensor<32x1xf32>
  %y = molten.sub %shifted, %log : (tensor<32x512xf32>, tensor<32x1xf32>) -> tensor<32x512xf32>
  func.return %y : tensor<32x512xf32>
}

// CHECK:      builtin.module {
// CHECK-NEXT:   kernel.func @log_softmax_row_reduce0(%x: tensor<32x512xf32>) -> (tensor<32x512xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 64, rows_per_block = 1, vector = 4, elements_per_thread = 8> attributes {fused_ops = ["reduce_max", "sub", "exp", "reduce_sum", "log", "sub"]} {
// CHECK-NOT:    kernel.func
// CHECK:        kernel.yield %y : tensor<32x512xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.func @log_softmax(%x: tensor<32x512xf32>) -> tensor<32x512xf32> {
// CHECK-NEXT:     %y = kernel.launch @log_softmax_row_reduce0(%x) : (tensor<32x512xf32>) -> tensor<32x512xf32>
// CHECK-NEXT:     func.return %y : tensor<32x512xf32>
// CHECK-NEXT:   }
// CHECK-NEXT: }

// ONE:         {{^// -{5}$}}
// ONE-NEXT:    builtin.module {
// ONE-NEXT:      kernel.func @log_softmax_row_reduce0(
// ONE-NOT:       kernel.func
// ONE:             kernel.launch @log_softmax_row_reduce0(
// ONE-NOT:       kernel.{{func|launch}}

// CUDA:        {{^// -{5}$}}
// CUDA:        __global__ {{.*}} log_softmax_row_reduce0(
// CUDA:        {{^ +}}log_softmax_row_reduce0<<<
