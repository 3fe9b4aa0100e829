// RUN: molten-opt %s --split-input-file -p fuse-reduction | filecheck %s --check-prefix=REDUCTION
// RUN: molten-opt %s --split-input-file -p fuse-epilogue | filecheck %s --check-prefix=EPILOGUE
// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,fuse-epilogue | filecheck %s --check-prefix=EPILOGUE-DECOMP
// RUN: molten-opt %s --split-input-file -p MOLTEN_KERNEL_LEVEL_PIPELINE | filecheck %s --check-prefix=PIPELINE

// Ops that a group only takes in for users outside it, and leaves in place
// for those users to recompute, are not copied into its kernel (fusion.py,
// fuse: only what the yielded values need goes in): the kernel computes
// nothing it neither yields nor uses, its fused_ops name only what it
// computes, and the inputs only those ops read are not its inputs. (Before
// the fix, grow() took such an op in as a user, kept_outside() left it in
// place, and fuse() still cloned it into the kernel: a dead copy.)

// The sum's group takes in %y (a multiply over its rows) but %y's user %z
// cannot join (it also reads %q, which depends on the group through a
// matmul), and %y is left for %z's group: the row_reduce kernel is the sum
// alone.
func.func @convexity(%x: tensor<4x8xf32>, %m: tensor<1x4xf32>) -> tensor<4x8xf32> {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %p = molten.matmul %s, %m : (tensor<4x1xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %q = molten.reduce_sum %p axes = [1] keepdim : tensor<4x4xf32> -> tensor<4x1xf32>
  %y = molten.mul %x, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %z = molten.mul %y, %q : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}

// REDUCTION-LABEL: func.func @convexity(
// REDUCTION-NEXT:    %s = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// REDUCTION-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// REDUCTION-NEXT:      %s_1 = molten.reduce_sum %x_1 axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// REDUCTION-NEXT:      kernel.yield %s_1 : tensor<4x1xf32>
// REDUCTION-NEXT:    }

// PIPELINE-LABEL: kernel.func @convexity_row_reduce0(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>) row_reduce
// PIPELINE-SAME:    attributes {fused_ops = ["reduce_sum"]} {

// -----

// rms_norm whose result is broadcast-added to a larger tensor: the add, and
// with it the rms_norm's elementwise tail, is recomputed by the [2, 4, 8]
// pointwise kernel, so the row_reduce kernel is the square and the mean,
// reading x only (not w).
func.func @rms_norm_broadcast(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %r: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %square = molten.square %x : tensor<4x8xf32>
  %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = molten.constant dense<1.000000e-06> : tensor<f32>
  %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
  %mul = molten.mul %x, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %norm = molten.mul %mul, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = molten.add %norm, %r : (tensor<4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// REDUCTION-LABEL: func.func @rms_norm_broadcast(
// REDUCTION-NEXT:    %mean = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// REDUCTION-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// REDUCTION-NEXT:      %square = molten.square %x_1 : tensor<4x8xf32>
// REDUCTION-NEXT:      %mean_1 = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// REDUCTION-NEXT:      kernel.yield %mean_1 : tensor<4x1xf32>
// REDUCTION-NEXT:    }

// PIPELINE-LABEL: kernel.func @rms_norm_broadcast_row_reduce0(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>) row_reduce
// PIPELINE-SAME:    attributes {fused_ops = ["square", "reduce_mean"]} {
// PIPELINE:       kernel.func @rms_norm_broadcast_pointwise0(
// PIPELINE-SAME:    attributes {fused_ops = ["add", "rsqrt", "mul", "mul", "add"]} {

// -----

// A matmul whose neg is read by a reduction and by a larger broadcast add:
// the neg is recomputed by their groups, so the gemm kernel is the matmul
// alone.
func.func @epilogue_recomputed(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %big: tensor<2x16x32xf32>) -> (tensor<16x1xf32>, tensor<2x16x32xf32>) {
  %mm = molten.matmul %x, %w : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %neg = molten.neg %mm : tensor<16x32xf32>
  %sum = molten.reduce_sum %neg axes = [1] keepdim : tensor<16x32xf32> -> tensor<16x1xf32>
  %wide = molten.add %neg, %big : (tensor<16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  func.return %sum, %wide : tensor<16x1xf32>, tensor<2x16x32xf32>
}

// EPILOGUE-LABEL: func.func @epilogue_recomputed(
// EPILOGUE-NEXT:    %mm = kernel.fused gemm(%x, %w) : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32> {
// EPILOGUE-NEXT:    ^bb0(%x_1: tensor<16x64xf32>, %w_1: tensor<64x32xf32>):
// EPILOGUE-NEXT:      %mm_1 = molten.matmul %x_1, %w_1 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// EPILOGUE-NEXT:      kernel.yield %mm_1 : tensor<16x32xf32>
// EPILOGUE-NEXT:    }

// PIPELINE-LABEL: kernel.func @epilogue_recomputed_gemm0(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> (tensor<16x32xf32>) gemm
// PIPELINE-SAME:    attributes {fused_ops = ["matmul"]} {

// -----

// Attention, decomposed, through fuse-epilogue: the scale multiply after
// q @ k^T is left for the softmax's row_reduce group (its users are the max
// and the subtraction), so the first gemm kernel is the matmul alone, not a
// matmul with a dead multiply. (In the whole pipeline fuse-reduction runs
// first and takes the multiply.)
func.func @attention(%q: tensor<2x16x64xf32>, %k: tensor<2x32x64xf32>, %v: tensor<2x32x64xf32>) -> tensor<2x16x64xf32> {
  %o = molten.attention %q, %k, %v scale = 1.250000e-01 : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x64xf32>) -> tensor<2x16x64xf32>
  func.return %o : tensor<2x16x64xf32>
}

// EPILOGUE-DECOMP-LABEL: func.func @attention(
// EPILOGUE-DECOMP-NEXT:    %matmul = kernel.fused gemm(%q, %k) : (tensor<2x16x64xf32>, tensor<2x32x64xf32>) -> tensor<2x16x32xf32> {
// EPILOGUE-DECOMP-NEXT:    ^bb0(%q_1: tensor<2x16x64xf32>, %k_1: tensor<2x32x64xf32>):
// EPILOGUE-DECOMP-NEXT:      %matmul_1 = molten.matmul %q_1, %k_1 transpose_b : (tensor<2x16x64xf32>, tensor<2x32x64xf32>) -> tensor<2x16x32xf32>
// EPILOGUE-DECOMP-NEXT:      kernel.yield %matmul_1 : tensor<2x16x32xf32>
// EPILOGUE-DECOMP-NEXT:    }
