// RUN: molten-opt %s --split-input-file -p fuse-elementwise | filecheck %s
// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,fuse-elementwise | filecheck %s --check-prefix=DECOMP

// fuse-elementwise: DAGs of elementwise and index-map ops (rotate_half,
// broadcast_to, reshape, transpose) of one result shape become `pointwise`
// kernel.fused groups; smaller elementwise producers that broadcast in (a
// row vector, a scalar) are recomputed inside; values used outside a group
// are yielded; generators are cloned in, and a constant that is a graph
// result gets a kernel of its own. The input of each case is the IR before
// the pass, in primitives, and the CHECK lines show the IR after this pass
// alone; the DECOMP lines follow composites or f16/bf16 specs through the
// molten-level passes first.

// gelu(x * a + b) * c over one shape: one pointwise group, one output.
func.func @gelu_affine(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %xa = molten.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %xab = molten.add %xa, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = molten.gelu %xab : tensor<4x8xf32>
  %y = molten.mul %g, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @gelu_affine(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise(%x, %a, %b, %c) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %a_1: tensor<4x8xf32>, %b_1: tensor<4x8xf32>, %c_1: tensor<4x8xf32>):
// CHECK-NEXT:      %xa = molten.mul %x_1, %a_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %xab = molten.add %xa, %b_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %g = molten.gelu %xab : tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.mul %g, %c_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// The same with a row vector (a, b) and a scalar (c) operand, broadcast by
// the ops that read them: still one group over [4, 8].
func.func @gelu_affine_broadcast(%x: tensor<4x8xf32>, %a: tensor<8xf32>, %b: tensor<1x8xf32>, %c: tensor<f32>) -> tensor<4x8xf32> {
  %xa = molten.mul %x, %a : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %xab = molten.add %xa, %b : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %g = molten.gelu %xab approximate = "tanh" : tensor<4x8xf32>
  %y = molten.mul %g, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @gelu_affine_broadcast(%x: tensor<4x8xf32>, %a: tensor<8xf32>, %b: tensor<1x8xf32>, %c: tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise(%x, %a, %b, %c) : (tensor<4x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %a_1: tensor<8xf32>, %b_1: tensor<1x8xf32>, %c_1: tensor<f32>):
// CHECK-NEXT:      %xa = molten.mul %x_1, %a_1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %xab = molten.add %xa, %b_1 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %g = molten.gelu %xab approximate = "tanh" : tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.mul %g, %c_1 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// A row vector and a scalar computed by elementwise ops of their own (an exp
// of the bias, a tanh of the scale): these smaller producers broadcast into
// the [4, 8] domain and are recomputed per element inside the group.
func.func @broadcast_producers(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %eb = molten.exp %b : tensor<8xf32>
  %ts = molten.tanh %s : tensor<f32>
  %xb = molten.add %x, %eb : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = molten.mul %xb, %ts : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @broadcast_producers(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise(%b, %s, %x) : (tensor<8xf32>, tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%b_1: tensor<8xf32>, %s_1: tensor<f32>, %x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %eb = molten.exp %b_1 : tensor<8xf32>
// CHECK-NEXT:      %ts = molten.tanh %s_1 : tensor<f32>
// CHECK-NEXT:      %xb = molten.add %x_1, %eb : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.mul %xb, %ts : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// A chain of smaller ops (a cast and an add over [8]) whose only user is a
// larger op: they wait for it and are recomputed inside its group, which is
// the only kernel (no kernel is formed for the chain alone, as it would
// yield nothing). The original constant is left, dead, for dce.
func.func @scale_by_one_plus_w(%x: tensor<4x8xf32>, %w: tensor<8xf16>) -> tensor<4x8xf32> {
  %wf = molten.cast %w : tensor<8xf16> to tensor<8xf32>
  %one = molten.constant dense<1.000000e+00> : tensor<f32>
  %s = molten.add %wf, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y = molten.mul %x, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @scale_by_one_plus_w(%x: tensor<4x8xf32>, %w: tensor<8xf16>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise(%w, %x) : (tensor<8xf16>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%w_1: tensor<8xf16>, %x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %one = molten.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:      %wf = molten.cast %w_1 : tensor<8xf16> to tensor<8xf32>
// CHECK-NEXT:      %s = molten.add %wf, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
// CHECK-NEXT:      %y_1 = molten.mul %x_1, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %one = molten.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// An elementwise value used by two groups (over [4, 8] and over [2, 8]):
// each group recomputes it; it is never written out.
func.func @used_by_two_groups(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %z: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>) {
  %eb = molten.exp %b : tensor<8xf32>
  %y = molten.add %x, %eb : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %w = molten.mul %z, %eb : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %y, %w : tensor<4x8xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @used_by_two_groups(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %z: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>) {
// CHECK-NEXT:    %y = kernel.fused pointwise(%b, %x) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%b_1: tensor<8xf32>, %x_1: tensor<4x8xf32>):
// CHECK-NEXT:      %eb = molten.exp %b_1 : tensor<8xf32>
// CHECK-NEXT:      %y_1 = molten.add %x_1, %eb : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %w = kernel.fused pointwise(%b, %z) : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%b_1: tensor<8xf32>, %z_1: tensor<2x8xf32>):
// CHECK-NEXT:      %eb = molten.exp %b_1 : tensor<8xf32>
// CHECK-NEXT:      %w_1 = molten.mul %z_1, %eb : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:      kernel.yield %w_1 : tensor<2x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %w : tensor<4x8xf32>, tensor<2x8xf32>
// CHECK-NEXT:  }

// -----

// The same value also a graph result: it must be written out, so it is
// yielded (by a kernel of its own shape) and both groups read it.
func.func @used_by_two_groups_and_returned(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %z: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>, tensor<8xf32>) {
  %eb = molten.exp %b : tensor<8xf32>
  %y = molten.add %x, %eb : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %w = molten.mul %z, %eb : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %y, %w, %eb : tensor<4x8xf32>, tensor<2x8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @used_by_two_groups_and_returned(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %z: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>, tensor<8xf32>) {
// CHECK-NEXT:    %eb = kernel.fused pointwise(%b) : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^bb0(%b_1: tensor<8xf32>):
// CHECK-NEXT:      %eb_1 = molten.exp %b_1 : tensor<8xf32>
// CHECK-NEXT:      kernel.yield %eb_1 : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = kernel.fused pointwise(%x, %eb) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %eb_1: tensor<8xf32>):
// CHECK-NEXT:      %y_1 = molten.add %x_1, %eb_1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %w = kernel.fused pointwise(%z, %eb) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> {
// CHECK-NEXT:    ^bb0(%z_1: tensor<2x8xf32>, %eb_1: tensor<8xf32>):
// CHECK-NEXT:      %w_1 = molten.mul %z_1, %eb_1 : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:      kernel.yield %w_1 : tensor<2x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %w, %eb : tensor<4x8xf32>, tensor<2x8xf32>, tensor<8xf32>
// CHECK-NEXT:  }

// -----

// A value inside one group that is also a graph result: yielded next to the
// group's last value.
func.func @intermediate_returned(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %xa = molten.mul %x, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = molten.sigmoid %xa : tensor<4x8xf32>
  func.return %y, %xa : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @intermediate_returned(%x: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %xa, %y = kernel.fused pointwise(%x, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %a_1: tensor<4x8xf32>):
// CHECK-NEXT:      %xa_1 = molten.mul %x_1, %a_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.sigmoid %xa_1 : tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %xa_1, %y_1 : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %xa : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// rope, decomposed: rotate_half (an index map: its kernel reads x at the
// rotated index) joins the muls and the add; cos and sin broadcast in.
func.func @rope(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
  %rot = molten.rotate_half %x : tensor<2x16x64xf32>
  %xcos = molten.mul %x, %cos : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  %rsin = molten.mul %rot, %sin : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  %y = molten.add %xcos, %rsin : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  func.return %y : tensor<2x16x64xf32>
}

// CHECK-LABEL: func.func @rope(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise(%x, %cos, %sin) : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<2x16x64xf32>, %cos_1: tensor<16x64xf32>, %sin_1: tensor<16x64xf32>):
// CHECK-NEXT:      %rot = molten.rotate_half %x_1 : tensor<2x16x64xf32>
// CHECK-NEXT:      %xcos = molten.mul %x_1, %cos_1 : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:      %rsin = molten.mul %rot, %sin_1 : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:      %y_1 = molten.add %xcos, %rsin : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<2x16x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x16x64xf32>
// CHECK-NEXT:  }

// -----

// Index maps in a group: a row vector broadcast_to the full shape, a
// transpose of the other operand.
func.func @index_maps(%x: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %bb = molten.broadcast_to %b : tensor<8xf32> -> tensor<4x8xf32>
  %xt = molten.transpose %x permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %y = molten.add %xt, %bb : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @index_maps(%x: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise(%b, %x) : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%b_1: tensor<8xf32>, %x_1: tensor<8x4xf32>):
// CHECK-NEXT:      %bb = molten.broadcast_to %b_1 : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %xt = molten.transpose %x_1 permutation = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.add %xt, %bb : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// A reshape of a [4, 1] value that a [4, 8] op reads (the shape a
// normalized reduction leaves behind): the reshape waits for the larger op
// and is recomputed inside its group.
func.func @reshape_pulled_in(%r: tensor<4x1xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %rr = molten.reshape %r : tensor<4x1xf32> -> tensor<4xf32>
  %y = molten.div %x, %rr : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @reshape_pulled_in(%r: tensor<4x1xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise(%r, %x) : (tensor<4x1xf32>, tensor<8x4xf32>) -> tensor<8x4xf32> {
// CHECK-NEXT:    ^bb0(%r_1: tensor<4x1xf32>, %x_1: tensor<8x4xf32>):
// CHECK-NEXT:      %rr = molten.reshape %r_1 : tensor<4x1xf32> -> tensor<4xf32>
// CHECK-NEXT:      %y_1 = molten.div %x_1, %rr : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<8x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<8x4xf32>
// CHECK-NEXT:  }

// -----

// Generators: a constant and a causal_mask used by a group are cloned into
// it; a constant that is itself a graph result becomes a kernel of its own
// (as does one that is both used and returned, which its user then reads).
func.func @generators(%s: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4xf32>, tensor<f32>) {
  %scale = molten.constant dense<1.250000e-01> : tensor<f32>
  %mask = molten.causal_mask : tensor<8x8xf32>
  %scaled = molten.mul %s, %scale : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %y = molten.add %scaled, %mask : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %table = molten.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  func.return %y, %table, %scale : tensor<8x8xf32>, tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @generators(%s: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<4xf32>, tensor<f32>) {
// CHECK-NEXT:    %scale = kernel.fused pointwise() : () -> tensor<f32> {
// CHECK-NEXT:      %scale_1 = molten.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:      kernel.yield %scale_1 : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %mask = molten.causal_mask : tensor<8x8xf32>
// CHECK-NEXT:    %y = kernel.fused pointwise(%s, %scale) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32> {
// CHECK-NEXT:    ^bb0(%s_1: tensor<8x8xf32>, %scale_1: tensor<f32>):
// CHECK-NEXT:      %mask_1 = molten.causal_mask : tensor<8x8xf32>
// CHECK-NEXT:      %scaled = molten.mul %s_1, %scale_1 : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
// CHECK-NEXT:      %y_1 = molten.add %scaled, %mask_1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %table = kernel.fused pointwise() : () -> tensor<4xf32> {
// CHECK-NEXT:      %table_1 = molten.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// CHECK-NEXT:      kernel.yield %table_1 : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %table, %scale : tensor<8x8xf32>, tensor<4xf32>, tensor<f32>
// CHECK-NEXT:  }

// -----

// Convexity: the exp's users are an add of its shape and a matmul that the
// add also reads; the add cannot join the exp's group (the path through the
// matmul would leave it and come back): the exp is yielded and the add is a
// second group.
func.func @convexity(%x: tensor<4x4xf32>, %m: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = molten.exp %x : tensor<4x4xf32>
  %p = molten.matmul %e, %m : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = molten.add %e, %p : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @convexity(%x: tensor<4x4xf32>, %m: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    %e = kernel.fused pointwise(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x4xf32>):
// CHECK-NEXT:      %e_1 = molten.exp %x_1 : tensor<4x4xf32>
// CHECK-NEXT:      kernel.yield %e_1 : tensor<4x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %p = molten.matmul %e, %m : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:    %y = kernel.fused pointwise(%e, %p) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    ^bb0(%e_1: tensor<4x4xf32>, %p_1: tensor<4x4xf32>):
// CHECK-NEXT:      %y_1 = molten.add %e_1, %p_1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x4xf32>
// CHECK-NEXT:  }

// -----

// rope as a composite, through the molten-level passes: one pointwise group.
func.func @rope_composite(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
  %y = molten.rope %x, %cos, %sin : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  func.return %y : tensor<2x16x64xf32>
}

// DECOMP-LABEL: func.func @rope_composite(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
// DECOMP-NEXT:    %y = kernel.fused pointwise(%x, %cos, %sin) : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32> {
// DECOMP-NEXT:    ^bb0(%x_1: tensor<2x16x64xf32>, %cos_1: tensor<16x64xf32>, %sin_1: tensor<16x64xf32>):
// DECOMP-NEXT:      %rotate_half = molten.rotate_half %x_1 : tensor<2x16x64xf32>
// DECOMP-NEXT:      %mul = molten.mul %x_1, %cos_1 : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// DECOMP-NEXT:      %mul_1 = molten.mul %rotate_half, %sin_1 : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// DECOMP-NEXT:      %y_1 = molten.add %mul, %mul_1 : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// DECOMP-NEXT:      kernel.yield %y_1 : tensor<2x16x64xf32>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    func.return %y : tensor<2x16x64xf32>
// DECOMP-NEXT:  }

// -----

// An f16 rope: the casts of x, cos and sin, and the one back, are in the
// group too.
func.func @rope_f16(%x: tensor<4x8xf16>, %cos: tensor<8xf16>, %sin: tensor<8xf16>) -> tensor<4x8xf16> {
  %y = molten.rope %x, %cos, %sin : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}

// DECOMP-LABEL: func.func @rope_f16(%x: tensor<4x8xf16>, %cos: tensor<8xf16>, %sin: tensor<8xf16>) -> tensor<4x8xf16> {
// DECOMP-NEXT:    %y = kernel.fused pointwise(%x, %cos, %sin) : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16> {
// DECOMP-NEXT:    ^bb0(%x_1: tensor<4x8xf16>, %cos_1: tensor<8xf16>, %sin_1: tensor<8xf16>):
// DECOMP-NEXT:      %x_f32 = molten.cast %x_1 : tensor<4x8xf16> to tensor<4x8xf32>
// DECOMP-NEXT:      %cos_f32 = molten.cast %cos_1 : tensor<8xf16> to tensor<8xf32>
// DECOMP-NEXT:      %sin_f32 = molten.cast %sin_1 : tensor<8xf16> to tensor<8xf32>
// DECOMP-NEXT:      %rotate_half = molten.rotate_half %x_f32 : tensor<4x8xf32>
// DECOMP-NEXT:      %mul = molten.mul %x_f32, %cos_f32 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// DECOMP-NEXT:      %mul_1 = molten.mul %rotate_half, %sin_f32 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// DECOMP-NEXT:      %add = molten.add %mul, %mul_1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// DECOMP-NEXT:      %y_1 = molten.cast %add : tensor<4x8xf32> to tensor<4x8xf16>
// DECOMP-NEXT:      kernel.yield %y_1 : tensor<4x8xf16>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    func.return %y : tensor<4x8xf16>
// DECOMP-NEXT:  }

// -----

// gelu(x * a + b) * c in bf16, through the molten-level passes.
func.func @gelu_affine_bf16(%x: tensor<4x8xbf16>, %a: tensor<8xbf16>, %b: tensor<8xbf16>, %c: tensor<bf16>) -> tensor<4x8xbf16> {
  %xa = molten.mul %x, %a : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  %xab = molten.add %xa, %b : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  %g = molten.gelu %xab : tensor<4x8xbf16>
  %y = molten.mul %g, %c : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  func.return %y : tensor<4x8xbf16>
}

// DECOMP-LABEL: func.func @gelu_affine_bf16(%x: tensor<4x8xbf16>, %a: tensor<8xbf16>, %b: tensor<8xbf16>, %c: tensor<bf16>) -> tensor<4x8xbf16> {
// DECOMP-NEXT:    %y = kernel.fused pointwise(%x, %a, %b, %c) : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<bf16>) -> tensor<4x8xbf16> {
// DECOMP-NEXT:    ^bb0(%x_1: tensor<4x8xbf16>, %a_1: tensor<8xbf16>, %b_1: tensor<8xbf16>, %c_1: tensor<bf16>):
// DECOMP-NEXT:      %xa = molten.mul %x_1, %a_1 : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
// DECOMP-NEXT:      %xab = molten.add %xa, %b_1 : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
// DECOMP-NEXT:      %g = molten.gelu %xab : tensor<4x8xbf16>
// DECOMP-NEXT:      %y_1 = molten.mul %g, %c_1 : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
// DECOMP-NEXT:      kernel.yield %y_1 : tensor<4x8xbf16>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    func.return %y : tensor<4x8xbf16>
// DECOMP-NEXT:  }

// -----

// A projection's bias add, its split into heads and their transpose, then
// a scale (as attention's q is made): the add and the reshape are used only
// inside the group, so it recomputes them at the indices the transpose
// reads, one kernel over the heads' shape. A value also used outside the
// group at its own shape (%r, a graph result) is not pulled in behind the
// transpose.
func.func @bias_heads(%y: tensor<8x32xf32>, %b: tensor<32xf32>, %s: tensor<f32>) -> tensor<2x8x16xf32> {
  %a = molten.add %y, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %r = molten.reshape %a : tensor<8x32xf32> -> tensor<8x2x16xf32>
  %t = molten.transpose %r permutation = [1, 0, 2] : tensor<8x2x16xf32> -> tensor<2x8x16xf32>
  %q = molten.mul %t, %s : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8x16xf32>
  func.return %q : tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @bias_heads(%y: tensor<8x32xf32>, %b: tensor<32xf32>, %s: tensor<f32>) -> tensor<2x8x16xf32> {
// CHECK-NEXT:    %q = kernel.fused pointwise(%y, %b, %s) : (tensor<8x32xf32>, tensor<32xf32>, tensor<f32>) -> tensor<2x8x16xf32> {
// CHECK-NEXT:    ^bb0(%y_1: tensor<8x32xf32>, %b_1: tensor<32xf32>, %s_1: tensor<f32>):
// CHECK-NEXT:      %a = molten.add %y_1, %b_1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT:      %r = molten.reshape %a : tensor<8x32xf32> -> tensor<8x2x16xf32>
// CHECK-NEXT:      %t = molten.transpose %r permutation = [1, 0, 2] : tensor<8x2x16xf32> -> tensor<2x8x16xf32>
// CHECK-NEXT:      %q_1 = molten.mul %t, %s_1 : (tensor<2x8x16xf32>, tensor<f32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:      kernel.yield %q_1 : tensor<2x8x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %q : tensor<2x8x16xf32>

// -----

func.func @reshape_also_a_result(%y: tensor<8x32xf32>, %b: tensor<32xf32>) -> (tensor<8x2x16xf32>, tensor<2x8x16xf32>) {
  %a = molten.add %y, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %r = molten.reshape %a : tensor<8x32xf32> -> tensor<8x2x16xf32>
  %t = molten.transpose %r permutation = [1, 0, 2] : tensor<8x2x16xf32> -> tensor<2x8x16xf32>
  func.return %r, %t : tensor<8x2x16xf32>, tensor<2x8x16xf32>
}

// CHECK-LABEL: func.func @reshape_also_a_result
// CHECK-NEXT:    %r = kernel.fused pointwise(%y, %b)
// CHECK:           %a = molten.add
// CHECK-NEXT:      %r_1 = molten.reshape %a
// CHECK-NEXT:      kernel.yield %r_1
// CHECK:         %t = kernel.fused pointwise(%r)
// CHECK-NEXT:    ^bb0(%r_1: tensor<8x2x16xf32>):
// CHECK-NEXT:      %t_1 = molten.transpose %r_1

// -----

// Rotary tables from positions (iota x inv_freq, the two halves
// concatenated: pads and an add, then cos and sin) are recomputed inside
// the kernel that applies them: one kernel reads x and inv_freq, writes the
// result; nothing of the [8, 16] tables is stored (a pad, slice, broadcast
// or reshape reads its input in order: never written out).
func.func @rope_tables(%x: tensor<1x2x8x16xbf16>, %inv_freq: tensor<8xf32>) -> tensor<1x2x8x16xbf16> {
  %pos = molten.iota axis = 0 : tensor<8xi64>
  %posf = molten.cast %pos : tensor<8xi64> to tensor<8xf32>
  %column = molten.reshape %posf : tensor<8xf32> -> tensor<8x1xf32>
  %row = molten.reshape %inv_freq : tensor<8xf32> -> tensor<1x8xf32>
  %freqs = molten.mul %column, %row : (tensor<8x1xf32>, tensor<1x8xf32>) -> tensor<8x8xf32>
  %low = molten.pad %freqs axis = 1 before = 0 : tensor<8x8xf32> -> tensor<8x16xf32>
  %high = molten.pad %freqs axis = 1 before = 8 : tensor<8x8xf32> -> tensor<8x16xf32>
  %emb = molten.add %low, %high : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %cosf = molten.cos %emb : tensor<8x16xf32>
  %cos = molten.cast %cosf : tensor<8x16xf32> to tensor<8x16xbf16>
  %sinf = molten.sin %emb : tensor<8x16xf32>
  %sin = molten.cast %sinf : tensor<8x16xf32> to tensor<8x16xbf16>
  %a = molten.mul %x, %cos : (tensor<1x2x8x16xbf16>, tensor<8x16xbf16>) -> tensor<1x2x8x16xbf16>
  %r = molten.rotate_half %x : tensor<1x2x8x16xbf16>
  %b = molten.mul %r, %sin : (tensor<1x2x8x16xbf16>, tensor<8x16xbf16>) -> tensor<1x2x8x16xbf16>
  %y = molten.add %a, %b : (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16>
  func.return %y : tensor<1x2x8x16xbf16>
}

// CHECK-LABEL: func.func @rope_tables(%x: tensor<1x2x8x16xbf16>, %inv_freq: tensor<8xf32>) -> tensor<1x2x8x16xbf16> {
// CHECK:         %y = kernel.fused pointwise(%inv_freq, %x) : (tensor<8xf32>, tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16> {
// CHECK-NEXT:    ^bb0(%inv_freq_1: tensor<8xf32>, %x_1: tensor<1x2x8x16xbf16>):
// CHECK-NEXT:      %pos_1 = molten.iota axis = 0 : tensor<8xi64>
// CHECK:           %freqs = molten.mul
// CHECK-NEXT:      %low = molten.pad %freqs axis = 1 before = 0
// CHECK-NEXT:      %high = molten.pad %freqs axis = 1 before = 8
// CHECK-NEXT:      %emb = molten.add %low, %high
// CHECK-NEXT:      %cosf = molten.cos %emb
// CHECK:           %sinf = molten.sin %emb
// CHECK:           %r = molten.rotate_half %x_1
// CHECK:           %y_1 = molten.add %a, %b
// CHECK-NEXT:      kernel.yield %y_1 : tensor<1x2x8x16xbf16>
// CHECK-NEXT:    }
// CHECK-NOT:     kernel.fused
// CHECK:         func.return %y : tensor<1x2x8x16xbf16>
