// RUN: molten-opt %s --split-input-file -p fuse-reduction | filecheck %s
// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,fuse-reduction | filecheck %s --check-prefix=DECOMP

// fuse-reduction: each row reduction (trailing axes, keepdim) grows into one
// `row_reduce` kernel.fused through the elementwise ops over its full or
// per-row shape, other reductions of the same rows, and smaller elementwise
// producers that broadcast in; any other reduction is first normalized to
// that form (transpose before, reshape after), or, where its axes are one
// run with a warp's worth of rows after it, reduced in place (strided rows). The input of each case is the
// IR before the pass, already decomposed into primitives, and the CHECK
// lines show the IR after this pass alone; the last cases are composites
// taken through the molten-level passes first (the DECOMP lines).

// rms_norm in f32: one row_reduce group of all seven ops; the eps constant
// is cloned in, x and the weight are the inputs, only the result is yielded.
func.func @rms_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %square = molten.square %x : tensor<4x8xf32>
  %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = molten.constant dense<1.000000e-06> : tensor<f32>
  %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
  %mul = molten.mul %x, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = molten.mul %mul, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @rms_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %w_1: tensor<8xf32>):
// CHECK-NEXT:      %eps = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %square = molten.square %x_1 : tensor<4x8xf32>
// CHECK-NEXT:      %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:      %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
// CHECK-NEXT:      %mul = molten.mul %x_1, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.mul %mul, %w_1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// rms_norm in f16, computed in f32 between casts: the casts of x and of the
// (smaller, broadcast) weight are pulled into the group, which reads the f16
// tensors and writes the f16 result.
func.func @rms_norm_f16(%x: tensor<4x8xf16>, %w: tensor<8xf16>) -> tensor<4x8xf16> {
  %xf = molten.cast %x : tensor<4x8xf16> to tensor<4x8xf32>
  %wf = molten.cast %w : tensor<8xf16> to tensor<8xf32>
  %square = molten.square %xf : tensor<4x8xf32>
  %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = molten.constant dense<1.000000e-06> : tensor<f32>
  %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
  %mul = molten.mul %xf, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %out = molten.mul %mul, %wf : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = molten.cast %out : tensor<4x8xf32> to tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @rms_norm_f16(%x: tensor<4x8xf16>, %w: tensor<8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x, %w) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf16>, %w_1: tensor<8xf16>):
// CHECK-NEXT:      %eps = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %xf = molten.cast %x_1 : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK-NEXT:      %wf = molten.cast %w_1 : tensor<8xf16> to tensor<8xf32>
// CHECK-NEXT:      %square = molten.square %xf : tensor<4x8xf32>
// CHECK-NEXT:      %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:      %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
// CHECK-NEXT:      %mul = molten.mul %xf, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %out = molten.mul %mul, %wf : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.cast %out : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf16>
// CHECK-NEXT:  }

// -----

// Two bf16 rms_norms over different rows (4x8 and 6x8) sharing one weight
// cast: two groups (other rows), and the shared cast, a small elementwise
// producer, is recomputed inside each of them rather than yielded by one.
func.func @rms_norm_bf16_shared_weight(%x: tensor<4x8xbf16>, %z: tensor<6x8xbf16>, %w: tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<6x8xbf16>) {
  %wf = molten.cast %w : tensor<8xbf16> to tensor<8xf32>
  %xf = molten.cast %x : tensor<4x8xbf16> to tensor<4x8xf32>
  %xsq = molten.square %xf : tensor<4x8xf32>
  %xmean = molten.reduce_mean %xsq axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %xeps = molten.constant dense<1.000000e-06> : tensor<f32>
  %xadd = molten.add %xmean, %xeps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %xinv = molten.rsqrt %xadd : tensor<4x1xf32>
  %xn = molten.mul %xf, %xinv : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %xo = molten.mul %xn, %wf : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %a = molten.cast %xo : tensor<4x8xf32> to tensor<4x8xbf16>
  %zf = molten.cast %z : tensor<6x8xbf16> to tensor<6x8xf32>
  %zsq = molten.square %zf : tensor<6x8xf32>
  %zmean = molten.reduce_mean %zsq axes = [1] keepdim : tensor<6x8xf32> -> tensor<6x1xf32>
  %zeps = molten.constant dense<1.000000e-06> : tensor<f32>
  %zadd = molten.add %zmean, %zeps : (tensor<6x1xf32>, tensor<f32>) -> tensor<6x1xf32>
  %zinv = molten.rsqrt %zadd : tensor<6x1xf32>
  %zn = molten.mul %zf, %zinv : (tensor<6x8xf32>, tensor<6x1xf32>) -> tensor<6x8xf32>
  %zo = molten.mul %zn, %wf : (tensor<6x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
  %b = molten.cast %zo : tensor<6x8xf32> to tensor<6x8xbf16>
  func.return %a, %b : tensor<4x8xbf16>, tensor<6x8xbf16>
}

// CHECK-LABEL: func.func @rms_norm_bf16_shared_weight(%x: tensor<4x8xbf16>, %z: tensor<6x8xbf16>, %w: tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<6x8xbf16>) {
// CHECK-NEXT:    %a = kernel.fused row_reduce(%w, %x) : (tensor<8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16> {
// CHECK-NEXT:    ^bb0(%w_1: tensor<8xbf16>, %x_1: tensor<4x8xbf16>):
// CHECK-NEXT:      %xeps = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %wf = molten.cast %w_1 : tensor<8xbf16> to tensor<8xf32>
// CHECK-NEXT:      %xf = molten.cast %x_1 : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-NEXT:      %xsq = molten.square %xf : tensor<4x8xf32>
// CHECK-NEXT:      %xmean = molten.reduce_mean %xsq axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %xadd = molten.add %xmean, %xeps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:      %xinv = molten.rsqrt %xadd : tensor<4x1xf32>
// CHECK-NEXT:      %xn = molten.mul %xf, %xinv : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %xo = molten.mul %xn, %wf : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %a_1 = molten.cast %xo : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT:      kernel.yield %a_1 : tensor<4x8xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    %b = kernel.fused row_reduce(%w, %z) : (tensor<8xbf16>, tensor<6x8xbf16>) -> tensor<6x8xbf16> {
// CHECK-NEXT:    ^bb0(%w_1: tensor<8xbf16>, %z_1: tensor<6x8xbf16>):
// CHECK-NEXT:      %zeps = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %wf = molten.cast %w_1 : tensor<8xbf16> to tensor<8xf32>
// CHECK-NEXT:      %zf = molten.cast %z_1 : tensor<6x8xbf16> to tensor<6x8xf32>
// CHECK-NEXT:      %zsq = molten.square %zf : tensor<6x8xf32>
// CHECK-NEXT:      %zmean = molten.reduce_mean %zsq axes = [1] keepdim : tensor<6x8xf32> -> tensor<6x1xf32>
// CHECK-NEXT:      %zadd = molten.add %zmean, %zeps : (tensor<6x1xf32>, tensor<f32>) -> tensor<6x1xf32>
// CHECK-NEXT:      %zinv = molten.rsqrt %zadd : tensor<6x1xf32>
// CHECK-NEXT:      %zn = molten.mul %zf, %zinv : (tensor<6x8xf32>, tensor<6x1xf32>) -> tensor<6x8xf32>
// CHECK-NEXT:      %zo = molten.mul %zn, %wf : (tensor<6x8xf32>, tensor<8xf32>) -> tensor<6x8xf32>
// CHECK-NEXT:      %b_1 = molten.cast %zo : tensor<6x8xf32> to tensor<6x8xbf16>
// CHECK-NEXT:      kernel.yield %b_1 : tensor<6x8xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %a, %b : tensor<4x8xbf16>, tensor<6x8xbf16>
// CHECK-NEXT:  }

// -----

// layer_norm: the mean and the variance (two reductions of the same rows)
// and all the elementwise work are one group.
func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %mean = molten.reduce_mean %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %centered = molten.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %square = molten.square %centered : tensor<4x8xf32>
  %var = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = molten.constant dense<1.000000e-05> : tensor<f32>
  %add = molten.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %inv = molten.rsqrt %add : tensor<4x1xf32>
  %norm = molten.mul %centered, %inv : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %scaled = molten.mul %norm, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = molten.add %scaled, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x, %w, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %w_1: tensor<8xf32>, %b_1: tensor<8xf32>):
// CHECK-NEXT:      %eps = molten.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:      %mean = molten.reduce_mean %x_1 axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %centered = molten.sub %x_1, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %square = molten.square %centered : tensor<4x8xf32>
// CHECK-NEXT:      %var = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %add = molten.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:      %inv = molten.rsqrt %add : tensor<4x1xf32>
// CHECK-NEXT:      %norm = molten.mul %centered, %inv : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %scaled = molten.mul %norm, %w_1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.add %scaled, %b_1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// softmax over the last axis of a rank-3 tensor: max and sum in one group.
func.func @softmax(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %max = molten.reduce_max %x axes = [2] keepdim : tensor<2x4x16xf32> -> tensor<2x4x1xf32>
  %shifted = molten.sub %x, %max : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
  %exp = molten.exp %shifted : tensor<2x4x16xf32>
  %sum = molten.reduce_sum %exp axes = [2] keepdim : tensor<2x4x16xf32> -> tensor<2x4x1xf32>
  %y = molten.div %exp, %sum : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
  func.return %y : tensor<2x4x16xf32>
}

// CHECK-LABEL: func.func @softmax(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x) : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<2x4x16xf32>):
// CHECK-NEXT:      %max = molten.reduce_max %x_1 axes = [2] keepdim : tensor<2x4x16xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:      %shifted = molten.sub %x_1, %max : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT:      %exp = molten.exp %shifted : tensor<2x4x16xf32>
// CHECK-NEXT:      %sum = molten.reduce_sum %exp axes = [2] keepdim : tensor<2x4x16xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:      %y_1 = molten.div %exp, %sum : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<2x4x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x4x16xf32>
// CHECK-NEXT:  }

// -----

// log_softmax: x - max - log(sum(exp(x - max))), one group.
func.func @log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %max = molten.reduce_max %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %shifted = molten.sub %x, %max : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %exp = molten.exp %shifted : tensor<4x8xf32>
  %sum = molten.reduce_sum %exp axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %log = molten.log %sum : tensor<4x1xf32>
  %y = molten.sub %shifted, %log : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %max = molten.reduce_max %x_1 axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %shifted = molten.sub %x_1, %max : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %exp = molten.exp %shifted : tensor<4x8xf32>
// CHECK-NEXT:      %sum = molten.reduce_sum %exp axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %log = molten.log %sum : tensor<4x1xf32>
// CHECK-NEXT:      %y_1 = molten.sub %shifted, %log : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// rms_norm * silu(gate): the gate's silu, over the full shape, joins the
// rms_norm group; one kernel reads x, w and gate.
func.func @rms_norm_silu(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %gate: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %square = molten.square %x : tensor<4x8xf32>
  %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %eps = molten.constant dense<1.000000e-06> : tensor<f32>
  %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
  %mul = molten.mul %x, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %norm = molten.mul %mul, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %silu = molten.silu %gate : tensor<4x8xf32>
  %y = molten.mul %norm, %silu : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @rms_norm_silu(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %gate: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x, %w, %gate) : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %w_1: tensor<8xf32>, %gate_1: tensor<4x8xf32>):
// CHECK-NEXT:      %eps = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %square = molten.square %x_1 : tensor<4x8xf32>
// CHECK-NEXT:      %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:      %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
// CHECK-NEXT:      %mul = molten.mul %x_1, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %norm = molten.mul %mul, %w_1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %silu = molten.silu %gate_1 : tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.mul %norm, %silu : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// layer_norm over the three trailing axes of a 16x4x8x8 tensor (16 rows of
// 256): both reductions over [1, 2, 3] and the [4, 8, 8] weight and bias.
func.func @layer_norm_3_axes(%x: tensor<16x4x8x8xf32>, %w: tensor<4x8x8xf32>, %b: tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32> {
  %mean = molten.reduce_mean %x axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
  %centered = molten.sub %x, %mean : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
  %square = molten.square %centered : tensor<16x4x8x8xf32>
  %var = molten.reduce_mean %square axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
  %eps = molten.constant dense<1.000000e-05> : tensor<f32>
  %add = molten.add %var, %eps : (tensor<16x1x1x1xf32>, tensor<f32>) -> tensor<16x1x1x1xf32>
  %inv = molten.rsqrt %add : tensor<16x1x1x1xf32>
  %norm = molten.mul %centered, %inv : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
  %scaled = molten.mul %norm, %w : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32>
  %y = molten.add %scaled, %b : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32>
  func.return %y : tensor<16x4x8x8xf32>
}

// CHECK-LABEL: func.func @layer_norm_3_axes(%x: tensor<16x4x8x8xf32>, %w: tensor<4x8x8xf32>, %b: tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32> {
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x, %w, %b) : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<16x4x8x8xf32>, %w_1: tensor<4x8x8xf32>, %b_1: tensor<4x8x8xf32>):
// CHECK-NEXT:      %eps = molten.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:      %mean = molten.reduce_mean %x_1 axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
// CHECK-NEXT:      %centered = molten.sub %x_1, %mean : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
// CHECK-NEXT:      %square = molten.square %centered : tensor<16x4x8x8xf32>
// CHECK-NEXT:      %var = molten.reduce_mean %square axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
// CHECK-NEXT:      %add = molten.add %var, %eps : (tensor<16x1x1x1xf32>, tensor<f32>) -> tensor<16x1x1x1xf32>
// CHECK-NEXT:      %inv = molten.rsqrt %add : tensor<16x1x1x1xf32>
// CHECK-NEXT:      %norm = molten.mul %centered, %inv : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
// CHECK-NEXT:      %scaled = molten.mul %norm, %w_1 : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32>
// CHECK-NEXT:      %y_1 = molten.add %scaled, %b_1 : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<16x4x8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<16x4x8x8xf32>
// CHECK-NEXT:  }

// -----

// A reduction over a non-trailing axis: a transpose puts the reduced axis
// last, a keepdim reduction of the rows follows and a reshape restores the
// [1, 8] result. The division by the column sums is not over those rows: it
// stays at the graph level (for fuse-elementwise).
func.func @non_trailing_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %sum = molten.reduce_sum %x axes = [0] keepdim : tensor<4x8xf32> -> tensor<1x8xf32>
  %y = molten.div %x, %sum : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @non_trailing_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %sum = molten.transpose %x permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
// CHECK-NEXT:    %sum_1 = kernel.fused row_reduce(%sum) : (tensor<8x4xf32>) -> tensor<8x1xf32> {
// CHECK-NEXT:    ^bb0(%sum_2: tensor<8x4xf32>):
// CHECK-NEXT:      %sum_3 = molten.reduce_sum %sum_2 axes = [1] keepdim : tensor<8x4xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      kernel.yield %sum_3 : tensor<8x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %sum_2 = molten.reshape %sum_1 : tensor<8x1xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %y = molten.div %x, %sum_2 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// A reduction without keepdim: reduced with keepdim inside the group (with
// its elementwise producer), and reshaped to [4] there too: the kernel
// stores the row values as the result (no copy after it).
func.func @no_keepdim(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %e = molten.exp %x : tensor<4x8xf32>
  %max = molten.reduce_max %e axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return %max : tensor<4xf32>
}

// CHECK-LABEL: func.func @no_keepdim(%x: tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %max = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %e = molten.exp %x_1 : tensor<4x8xf32>
// CHECK-NEXT:      %max_1 = molten.reduce_max %e axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %max_2 = molten.reshape %max_1 : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-NEXT:      kernel.yield %max_2 : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %max : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// Both at once: a reduction over axes [0, 2] without keepdim (two runs) is
// reduced a run at a time, the last first: the rows of axis 2 in place,
// then axis 0 of the [2, 4, 1] result, transposed (4 consecutive rows are
// fewer than a warp), and a reshape to [4] in that kernel.
func.func @middle_axes_no_keepdim(%x: tensor<2x4x8xf32>) -> tensor<4xf32> {
  %mean = molten.reduce_mean %x axes = [0, 2] : tensor<2x4x8xf32> -> tensor<4xf32>
  func.return %mean : tensor<4xf32>
}

// CHECK-LABEL: func.func @middle_axes_no_keepdim(%x: tensor<2x4x8xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %mean = kernel.fused row_reduce(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<2x4x8xf32>):
// CHECK-NEXT:      %mean_1 = molten.reduce_mean %x_1 axes = [2] keepdim : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT:      kernel.yield %mean_1 : tensor<2x4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %mean_1 = molten.transpose %mean permutation = [1, 2, 0] : tensor<2x4x1xf32> -> tensor<4x1x2xf32>
// CHECK-NEXT:    %mean_2 = kernel.fused row_reduce(%mean_1) : (tensor<4x1x2xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%mean_3: tensor<4x1x2xf32>):
// CHECK-NEXT:      %mean_4 = molten.reduce_mean %mean_3 axes = [2] keepdim : tensor<4x1x2xf32> -> tensor<4x1x1xf32>
// CHECK-NEXT:      %mean_5 = molten.reshape %mean_4 : tensor<4x1x1xf32> -> tensor<4xf32>
// CHECK-NEXT:      kernel.yield %mean_5 : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %mean_2 : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// BatchNorm's mean over [0, 2, 3] of NCHW: the rows of H x W in place
// (trailing), then the batch axis of the [8, 64, 1, 1] means as strided rows
// (64 channels after it). No transpose of x.
func.func @batch_norm_mean(%x: tensor<8x64x16x16xf32>) -> tensor<1x64x1x1xf32> {
  %mean = molten.reduce_mean %x axes = [0, 2, 3] keepdim : tensor<8x64x16x16xf32> -> tensor<1x64x1x1xf32>
  func.return %mean : tensor<1x64x1x1xf32>
}

// CHECK-LABEL: func.func @batch_norm_mean(%x: tensor<8x64x16x16xf32>) -> tensor<1x64x1x1xf32> {
// CHECK-NEXT:    %mean = kernel.fused row_reduce(%x) : (tensor<8x64x16x16xf32>) -> tensor<8x64x1x1xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<8x64x16x16xf32>):
// CHECK-NEXT:      %mean_1 = molten.reduce_mean %x_1 axes = [2, 3] keepdim : tensor<8x64x16x16xf32> -> tensor<8x64x1x1xf32>
// CHECK-NEXT:      kernel.yield %mean_1 : tensor<8x64x1x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %mean_1 = kernel.fused row_reduce(%mean) : (tensor<8x64x1x1xf32>) -> tensor<1x64x1x1xf32> {
// CHECK-NEXT:    ^bb0(%mean_2: tensor<8x64x1x1xf32>):
// CHECK-NEXT:      %mean_3 = molten.reduce_mean %mean_2 axes = [0] keepdim : tensor<8x64x1x1xf32> -> tensor<1x64x1x1xf32>
// CHECK-NEXT:      kernel.yield %mean_3 : tensor<1x64x1x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %mean_1 : tensor<1x64x1x1xf32>
// CHECK-NEXT:  }

// -----

// Strided rows: RMSNorm over the channels of [2, 16, 4, 8], axis 1 with
// 32 consecutive rows after it (a warp's worth), and rows of at most 64
// elements. No transpose: the reduction keeps its axis, and the group
// takes the per-row ops ([2, 1, 4, 8]) and the division over the full shape.
func.func @strided_rows(%x: tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32> {
  %sq = molten.square %x : tensor<2x16x4x8xf32>
  %ms = molten.reduce_mean %sq axes = [1] keepdim : tensor<2x16x4x8xf32> -> tensor<2x1x4x8xf32>
  %rms = molten.sqrt %ms : tensor<2x1x4x8xf32>
  %y = molten.div %x, %rms : (tensor<2x16x4x8xf32>, tensor<2x1x4x8xf32>) -> tensor<2x16x4x8xf32>
  func.return %y : tensor<2x16x4x8xf32>
}

// CHECK-LABEL: func.func @strided_rows(%x: tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x) : (tensor<2x16x4x8xf32>) -> tensor<2x16x4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<2x16x4x8xf32>):
// CHECK-NEXT:      %sq = molten.square %x_1 : tensor<2x16x4x8xf32>
// CHECK-NEXT:      %ms = molten.reduce_mean %sq axes = [1] keepdim : tensor<2x16x4x8xf32> -> tensor<2x1x4x8xf32>
// CHECK-NEXT:      %rms = molten.sqrt %ms : tensor<2x1x4x8xf32>
// CHECK-NEXT:      %y_1 = molten.div %x_1, %rms : (tensor<2x16x4x8xf32>, tensor<2x1x4x8xf32>) -> tensor<2x16x4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<2x16x4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x16x4x8xf32>
// CHECK-NEXT:  }

// -----

// Strided rows without keepdim: the max over axis 1 keeps it inside the
// group, and the reshape after it. Rows of 100 elements (longer than 64) are kept
// strided only with at least 16384 of them: [1, 100, 16384] is, and
// [4, 100, 64] (256 rows) is transposed.
func.func @strided_long_rows(%x: tensor<1x100x16384xf32>, %z: tensor<4x100x64xf32>) -> (tensor<1x16384xf32>, tensor<4x64xf32>) {
  %mx = molten.reduce_max %x axes = [1] : tensor<1x100x16384xf32> -> tensor<1x16384xf32>
  %mz = molten.reduce_max %z axes = [1] : tensor<4x100x64xf32> -> tensor<4x64xf32>
  func.return %mx, %mz : tensor<1x16384xf32>, tensor<4x64xf32>
}

// CHECK-LABEL: func.func @strided_long_rows
// CHECK-NEXT:    %mx = kernel.fused row_reduce(%x) : (tensor<1x100x16384xf32>) -> tensor<1x16384xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<1x100x16384xf32>):
// CHECK-NEXT:      %mx_1 = molten.reduce_max %x_1 axes = [1] keepdim : tensor<1x100x16384xf32> -> tensor<1x1x16384xf32>
// CHECK-NEXT:      %mx_2 = molten.reshape %mx_1 : tensor<1x1x16384xf32> -> tensor<1x16384xf32>
// CHECK-NEXT:      kernel.yield %mx_2 : tensor<1x16384xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %mz = molten.transpose %z permutation = [0, 2, 1] : tensor<4x100x64xf32> -> tensor<4x64x100xf32>
// CHECK:         molten.reduce_max %{{.*}} axes = [2] keepdim : tensor<4x64x100xf32> -> tensor<4x64x1xf32>
// CHECK:         molten.reshape %{{.*}} : tensor<4x64x1xf32> -> tensor<4x64xf32>

// -----

// Two independent reductions (no value in common): two groups.
func.func @two_independent(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
  %ex = molten.exp %x : tensor<4x8xf32>
  %sx = molten.reduce_sum %ex axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %az = molten.abs %z : tensor<4x8xf32>
  %mz = molten.reduce_max %az axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %sx, %mz : tensor<4x1xf32>, tensor<4x1xf32>
}

// CHECK-LABEL: func.func @two_independent(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>) {
// CHECK-NEXT:    %sx = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %ex = molten.exp %x_1 : tensor<4x8xf32>
// CHECK-NEXT:      %sx_1 = molten.reduce_sum %ex axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      kernel.yield %sx_1 : tensor<4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %mz = kernel.fused row_reduce(%z) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    ^bb0(%z_1: tensor<4x8xf32>):
// CHECK-NEXT:      %az = molten.abs %z_1 : tensor<4x8xf32>
// CHECK-NEXT:      %mz_1 = molten.reduce_max %az axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      kernel.yield %mz_1 : tensor<4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %sx, %mz : tensor<4x1xf32>, tensor<4x1xf32>
// CHECK-NEXT:  }

// -----

// Convexity: the sum's rows come back, through a matmul (not fusible into a
// row_reduce group), into a full-shape multiply. That multiply is of the
// group's shape, but taking it in would make a path leave the group and come
// back: it stays out, and the reciprocal, which the matmul also reads, is
// yielded.
func.func @convexity(%x: tensor<4x8xf32>, %m: tensor<1x8xf32>) -> tensor<4x8xf32> {
  %sum = molten.reduce_sum %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %inv = molten.reciprocal %sum : tensor<4x1xf32>
  %outer = molten.matmul %inv, %m : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %y = molten.mul %outer, %inv : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @convexity(%x: tensor<4x8xf32>, %m: tensor<1x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %inv = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %sum = molten.reduce_sum %x_1 axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %inv_1 = molten.reciprocal %sum : tensor<4x1xf32>
// CHECK-NEXT:      kernel.yield %inv_1 : tensor<4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %outer = molten.matmul %inv, %m : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y = molten.mul %outer, %inv : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// An op between the group's first and last op that the group needs (the
// matmul, an input of the group's last multiply) is moved before the fused op.
func.func @moved_before(%x: tensor<4x8xf32>, %a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %max = molten.reduce_max %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %p = molten.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %d = molten.sub %x, %max : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = molten.mul %d, %p : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @moved_before(%x: tensor<4x8xf32>, %a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %p = molten.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x, %p) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %p_1: tensor<4x8xf32>):
// CHECK-NEXT:      %max = molten.reduce_max %x_1 axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %d = molten.sub %x_1, %max : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.mul %d, %p_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// An elementwise value used by the group and by a larger elementwise op
// outside it: left in place and recomputed by both, not yielded.
func.func @shared_recomputed(%x: tensor<4x8xf32>, %r: tensor<2x4x8xf32>) -> (tensor<4x1xf32>, tensor<2x4x8xf32>) {
  %e = molten.exp %x : tensor<4x8xf32>
  %sum = molten.reduce_sum %e axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %p = molten.mul %e, %r : (tensor<4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %sum, %p : tensor<4x1xf32>, tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @shared_recomputed(%x: tensor<4x8xf32>, %r: tensor<2x4x8xf32>) -> (tensor<4x1xf32>, tensor<2x4x8xf32>) {
// CHECK-NEXT:    %sum = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %e = molten.exp %x_1 : tensor<4x8xf32>
// CHECK-NEXT:      %sum_1 = molten.reduce_sum %e axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      kernel.yield %sum_1 : tensor<4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %e = molten.exp %x : tensor<4x8xf32>
// CHECK-NEXT:    %p = molten.mul %e, %r : (tensor<4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    func.return %sum, %p : tensor<4x1xf32>, tensor<2x4x8xf32>
// CHECK-NEXT:  }

// -----

// An elementwise value used by the group and by a matmul: a matmul cannot
// recompute it, so the group yields it.
func.func @shared_matmul_operand(%x: tensor<4x8xf32>, %m: tensor<8x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
  %e = molten.exp %x : tensor<4x8xf32>
  %sum = molten.reduce_sum %e axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %p = molten.matmul %e, %m : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  func.return %sum, %p : tensor<4x1xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @shared_matmul_operand(%x: tensor<4x8xf32>, %m: tensor<8x8xf32>) -> (tensor<4x1xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %e, %sum = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %e_1 = molten.exp %x_1 : tensor<4x8xf32>
// CHECK-NEXT:      %sum_1 = molten.reduce_sum %e_1 axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      kernel.yield %e_1, %sum_1 : tensor<4x8xf32>, tensor<4x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %p = molten.matmul %e, %m : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %sum, %p : tensor<4x1xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// Values that are graph results are yielded, however cheap: the exp and the
// sum of a softmax, next to its result.
func.func @graph_results(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>) {
  %max = molten.reduce_max %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %shifted = molten.sub %x, %max : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %exp = molten.exp %shifted : tensor<4x8xf32>
  %sum = molten.reduce_sum %exp axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %y = molten.div %exp, %sum : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %y, %sum, %exp : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @graph_results(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %exp, %sum, %y = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %max = molten.reduce_max %x_1 axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %shifted = molten.sub %x_1, %max : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %exp_1 = molten.exp %shifted : tensor<4x8xf32>
// CHECK-NEXT:      %sum_1 = molten.reduce_sum %exp_1 axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:      %y_1 = molten.div %exp_1, %sum_1 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %exp_1, %sum_1, %y_1 : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %sum, %exp : tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// Through molten-decompose,canonicalize,cse: a bf16 rms_norm.
func.func @rms_norm_bf16(%x: tensor<8x32xbf16>, %w: tensor<32xbf16>) -> tensor<8x32xbf16> {
  %y = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<8x32xbf16>, tensor<32xbf16>) -> tensor<8x32xbf16>
  func.return %y : tensor<8x32xbf16>
}

// DECOMP-LABEL: func.func @rms_norm_bf16(%x: tensor<8x32xbf16>, %w: tensor<32xbf16>) -> tensor<8x32xbf16> {
// DECOMP-NEXT:    %y = kernel.fused row_reduce(%x, %w) : (tensor<8x32xbf16>, tensor<32xbf16>) -> tensor<8x32xbf16> {
// DECOMP-NEXT:    ^bb0(%x_1: tensor<8x32xbf16>, %w_1: tensor<32xbf16>):
// DECOMP-NEXT:      %cst = molten.constant dense<1.000000e-06> : tensor<f32>
// DECOMP-NEXT:      %x_f32 = molten.cast %x_1 : tensor<8x32xbf16> to tensor<8x32xf32>
// DECOMP-NEXT:      %w_f32 = molten.cast %w_1 : tensor<32xbf16> to tensor<32xf32>
// DECOMP-NEXT:      %square = molten.square %x_f32 : tensor<8x32xf32>
// DECOMP-NEXT:      %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<8x32xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:      %add = molten.add %reduce_mean, %cst : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xf32>
// DECOMP-NEXT:      %rsqrt = molten.rsqrt %add : tensor<8x1xf32>
// DECOMP-NEXT:      %mul = molten.mul %x_f32, %rsqrt : (tensor<8x32xf32>, tensor<8x1xf32>) -> tensor<8x32xf32>
// DECOMP-NEXT:      %mul_1 = molten.mul %mul, %w_f32 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// DECOMP-NEXT:      %y_1 = molten.cast %mul_1 : tensor<8x32xf32> to tensor<8x32xbf16>
// DECOMP-NEXT:      kernel.yield %y_1 : tensor<8x32xbf16>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    func.return %y : tensor<8x32xbf16>
// DECOMP-NEXT:  }

// -----

// An f16 layer_norm: x, weight and bias are cast up inside the group.
func.func @layer_norm_f16(%x: tensor<8x32xf16>, %w: tensor<32xf16>, %b: tensor<32xf16>) -> tensor<8x32xf16> {
  %y = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<8x32xf16>, tensor<32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
  func.return %y : tensor<8x32xf16>
}

// DECOMP-LABEL: func.func @layer_norm_f16(%x: tensor<8x32xf16>, %w: tensor<32xf16>, %b: tensor<32xf16>) -> tensor<8x32xf16> {
// DECOMP-NEXT:    %y = kernel.fused row_reduce(%x, %w, %b) : (tensor<8x32xf16>, tensor<32xf16>, tensor<32xf16>) -> tensor<8x32xf16> {
// DECOMP-NEXT:    ^bb0(%x_1: tensor<8x32xf16>, %w_1: tensor<32xf16>, %b_1: tensor<32xf16>):
// DECOMP-NEXT:      %cst = molten.constant dense<1.000000e-05> : tensor<f32>
// DECOMP-NEXT:      %x_f32 = molten.cast %x_1 : tensor<8x32xf16> to tensor<8x32xf32>
// DECOMP-NEXT:      %w_f32 = molten.cast %w_1 : tensor<32xf16> to tensor<32xf32>
// DECOMP-NEXT:      %b_f32 = molten.cast %b_1 : tensor<32xf16> to tensor<32xf32>
// DECOMP-NEXT:      %reduce_mean = molten.reduce_mean %x_f32 axes = [1] keepdim : tensor<8x32xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:      %sub = molten.sub %x_f32, %reduce_mean : (tensor<8x32xf32>, tensor<8x1xf32>) -> tensor<8x32xf32>
// DECOMP-NEXT:      %square = molten.square %sub : tensor<8x32xf32>
// DECOMP-NEXT:      %reduce_mean_1 = molten.reduce_mean %square axes = [1] keepdim : tensor<8x32xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:      %add = molten.add %reduce_mean_1, %cst : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xf32>
// DECOMP-NEXT:      %rsqrt = molten.rsqrt %add : tensor<8x1xf32>
// DECOMP-NEXT:      %mul = molten.mul %sub, %rsqrt : (tensor<8x32xf32>, tensor<8x1xf32>) -> tensor<8x32xf32>
// DECOMP-NEXT:      %mul_1 = molten.mul %mul, %w_f32 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// DECOMP-NEXT:      %add_1 = molten.add %mul_1, %b_f32 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// DECOMP-NEXT:      %y_1 = molten.cast %add_1 : tensor<8x32xf32> to tensor<8x32xf16>
// DECOMP-NEXT:      kernel.yield %y_1 : tensor<8x32xf16>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    func.return %y : tensor<8x32xf16>
// DECOMP-NEXT:  }

// -----

// layer_norm over three trailing axes, as a composite.
func.func @layer_norm_3_axes(%x: tensor<16x4x8x8xf32>, %w: tensor<4x8x8xf32>, %b: tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32> {
  %y = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32>
  func.return %y : tensor<16x4x8x8xf32>
}

// DECOMP-LABEL: func.func @layer_norm_3_axes(%x: tensor<16x4x8x8xf32>, %w: tensor<4x8x8xf32>, %b: tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32> {
// DECOMP-NEXT:    %y = kernel.fused row_reduce(%x, %w, %b) : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32> {
// DECOMP-NEXT:    ^bb0(%x_1: tensor<16x4x8x8xf32>, %w_1: tensor<4x8x8xf32>, %b_1: tensor<4x8x8xf32>):
// DECOMP-NEXT:      %cst = molten.constant dense<1.000000e-05> : tensor<f32>
// DECOMP-NEXT:      %reduce_mean = molten.reduce_mean %x_1 axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
// DECOMP-NEXT:      %sub = molten.sub %x_1, %reduce_mean : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
// DECOMP-NEXT:      %square = molten.square %sub : tensor<16x4x8x8xf32>
// DECOMP-NEXT:      %reduce_mean_1 = molten.reduce_mean %square axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
// DECOMP-NEXT:      %add = molten.add %reduce_mean_1, %cst : (tensor<16x1x1x1xf32>, tensor<f32>) -> tensor<16x1x1x1xf32>
// DECOMP-NEXT:      %rsqrt = molten.rsqrt %add : tensor<16x1x1x1xf32>
// DECOMP-NEXT:      %mul = molten.mul %sub, %rsqrt : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
// DECOMP-NEXT:      %mul_1 = molten.mul %mul, %w_1 : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32>
// DECOMP-NEXT:      %y_1 = molten.add %mul_1, %b_1 : (tensor<16x4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<16x4x8x8xf32>
// DECOMP-NEXT:      kernel.yield %y_1 : tensor<16x4x8x8xf32>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    func.return %y : tensor<16x4x8x8xf32>
// DECOMP-NEXT:  }

// -----

// A softmax along axis 0: each of its reductions is normalized (transpose,
// row reduction, reshape); the max and the sum reduce transposed tensors, so
// they are two row_reduce groups, with the elementwise work (over the
// untransposed shape) left between them.
func.func @softmax_axis0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = molten.softmax %x axis = 0 : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// DECOMP-LABEL: func.func @softmax_axis0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// DECOMP-NEXT:    %reduce_max = molten.transpose %x permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
// DECOMP-NEXT:    %reduce_max_1 = kernel.fused row_reduce(%reduce_max) : (tensor<8x4xf32>) -> tensor<8x1xf32> {
// DECOMP-NEXT:    ^bb0(%reduce_max_2: tensor<8x4xf32>):
// DECOMP-NEXT:      %reduce_max_3 = molten.reduce_max %reduce_max_2 axes = [1] keepdim : tensor<8x4xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:      kernel.yield %reduce_max_3 : tensor<8x1xf32>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    %reduce_max_2 = molten.reshape %reduce_max_1 : tensor<8x1xf32> -> tensor<1x8xf32>
// DECOMP-NEXT:    %sub = molten.sub %x, %reduce_max_2 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// DECOMP-NEXT:    %exp = molten.exp %sub : tensor<4x8xf32>
// DECOMP-NEXT:    %reduce_sum = molten.transpose %exp permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
// DECOMP-NEXT:    %reduce_sum_1 = kernel.fused row_reduce(%reduce_sum) : (tensor<8x4xf32>) -> tensor<8x1xf32> {
// DECOMP-NEXT:    ^bb0(%reduce_sum_2: tensor<8x4xf32>):
// DECOMP-NEXT:      %reduce_sum_3 = molten.reduce_sum %reduce_sum_2 axes = [1] keepdim : tensor<8x4xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:      kernel.yield %reduce_sum_3 : tensor<8x1xf32>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    %reduce_sum_2 = molten.reshape %reduce_sum_1 : tensor<8x1xf32> -> tensor<1x8xf32>
// DECOMP-NEXT:    %y = molten.div %exp, %reduce_sum_2 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// DECOMP-NEXT:    func.return %y : tensor<4x8xf32>
// DECOMP-NEXT:  }

// -----

// rms_norm * silu(gate) in f16.
func.func @rms_norm_silu_f16(%x: tensor<8x32xf16>, %w: tensor<32xf16>, %gate: tensor<8x32xf16>) -> tensor<8x32xf16> {
  %n = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
  %s = molten.silu %gate : tensor<8x32xf16>
  %y = molten.mul %n, %s : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
  func.return %y : tensor<8x32xf16>
}

// DECOMP-LABEL: func.func @rms_norm_silu_f16(%x: tensor<8x32xf16>, %w: tensor<32xf16>, %gate: tensor<8x32xf16>) -> tensor<8x32xf16> {
// DECOMP-NEXT:    %y = kernel.fused row_reduce(%x, %w, %gate) : (tensor<8x32xf16>, tensor<32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16> {
// DECOMP-NEXT:    ^bb0(%x_1: tensor<8x32xf16>, %w_1: tensor<32xf16>, %gate_1: tensor<8x32xf16>):
// DECOMP-NEXT:      %cst = molten.constant dense<1.000000e-06> : tensor<f32>
// DECOMP-NEXT:      %x_f32 = molten.cast %x_1 : tensor<8x32xf16> to tensor<8x32xf32>
// DECOMP-NEXT:      %w_f32 = molten.cast %w_1 : tensor<32xf16> to tensor<32xf32>
// DECOMP-NEXT:      %square = molten.square %x_f32 : tensor<8x32xf32>
// DECOMP-NEXT:      %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<8x32xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:      %add = molten.add %reduce_mean, %cst : (tensor<8x1xf32>, tensor<f32>) -> tensor<8x1xf32>
// DECOMP-NEXT:      %rsqrt = molten.rsqrt %add : tensor<8x1xf32>
// DECOMP-NEXT:      %mul = molten.mul %x_f32, %rsqrt : (tensor<8x32xf32>, tensor<8x1xf32>) -> tensor<8x32xf32>
// DECOMP-NEXT:      %mul_1 = molten.mul %mul, %w_f32 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// DECOMP-NEXT:      %n = molten.cast %mul_1 : tensor<8x32xf32> to tensor<8x32xf16>
// DECOMP-NEXT:      %s = molten.silu %gate_1 : tensor<8x32xf16>
// DECOMP-NEXT:      %y_1 = molten.mul %n, %s : (tensor<8x32xf16>, tensor<8x32xf16>) -> tensor<8x32xf16>
// DECOMP-NEXT:      kernel.yield %y_1 : tensor<8x32xf16>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    func.return %y : tensor<8x32xf16>
// DECOMP-NEXT:  }

// -----

// A narrowing cast whose whole cone the transpose's group can recompute
// from the inputs (x - max, cast) stays outside for it: the row kernel
// stores only the row maxima, and nothing of x's shape.
func.func @narrow_recomputed(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  %m = molten.reduce_max %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %s = molten.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %c = molten.cast %s : tensor<4x8xf32> to tensor<4x8xbf16>
  %t = molten.transpose %c permutation = [1, 0] : tensor<4x8xbf16> -> tensor<8x4xbf16>
  func.return %t : tensor<8x4xbf16>
}

// CHECK-LABEL: func.func @narrow_recomputed
// CHECK-NEXT:    %m = kernel.fused row_reduce(%x) : (tensor<4x8xf32>) -> tensor<4x1xf32> {
// CHECK:         %s = molten.sub %x, %m
// CHECK-NEXT:    %c = molten.cast %s
// CHECK-NEXT:    %t = molten.transpose %c

// -----

// torch.max(x, dim): the maximum and its position reduce the same rows of
// the same input; no value links them, but they are one group (x read once),
// and their reshapes without keepdim are in it too.
func.func @max_and_argmax(%x: tensor<4x8xbf16>) -> (tensor<4xbf16>, tensor<4xi64>) {
  %m = molten.reduce_max %x axes = [1] : tensor<4x8xbf16> -> tensor<4xbf16>
  %i = molten.argmax %x axes = [1] : tensor<4x8xbf16> -> tensor<4xi64>
  func.return %m, %i : tensor<4xbf16>, tensor<4xi64>
}

// CHECK-LABEL: func.func @max_and_argmax(%x: tensor<4x8xbf16>) -> (tensor<4xbf16>, tensor<4xi64>) {
// CHECK-NEXT:    %m, %i = kernel.fused row_reduce(%x) : (tensor<4x8xbf16>) -> (tensor<4xbf16>, tensor<4xi64>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xbf16>):
// CHECK-NEXT:      %m_1 = molten.reduce_max %x_1 axes = [1] keepdim : tensor<4x8xbf16> -> tensor<4x1xbf16>
// CHECK-NEXT:      %m_2 = molten.reshape %m_1 : tensor<4x1xbf16> -> tensor<4xbf16>
// CHECK-NEXT:      %i_1 = molten.argmax %x_1 axes = [1] keepdim : tensor<4x8xbf16> -> tensor<4x1xi64>
// CHECK-NEXT:      %i_2 = molten.reshape %i_1 : tensor<4x1xi64> -> tensor<4xi64>
// CHECK-NEXT:      kernel.yield %m_2, %i_2 : tensor<4xbf16>, tensor<4xi64>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %m, %i : tensor<4xbf16>, tensor<4xi64>
// CHECK-NEXT:  }
