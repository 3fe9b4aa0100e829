// RUN: molten-opt %s --split-input-file -p fuse-epilogue | filecheck %s
// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,fuse-epilogue | filecheck %s --check-prefix=DECOMP
// RUN: molten-opt %s --split-input-file -p 'fuse-epilogue{arch="sm_90a"}' | filecheck %s --check-prefix=SM90A

// fuse-epilogue: each matmul grows into one `gemm` kernel.fused through the
// elementwise users of its result's shape (bias, activation, scale,
// residual, casts) and the elementwise producers of those users' other
// operands; the matmul's own operands stay inputs. The input of each case is
// the IR before the pass, in primitives, and the CHECK lines show the IR
// after this pass alone; the DECOMP lines follow a graph spec through the
// molten-level passes first.

// matmul + bias + gelu: one gemm group; the matmul's operands and the bias
// are its inputs, only the gelu is yielded.
func.func @matmul_bias_gelu(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %mm = molten.matmul %x, %w : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %biased = molten.add %mm, %b : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %y = molten.gelu %biased approximate = "tanh" : tensor<16x32xf32>
  func.return %y : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @matmul_bias_gelu(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    %y = kernel.fused gemm(%x, %w, %b) : (tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<16x64xf32>, %w_1: tensor<64x32xf32>, %b_1: tensor<32xf32>):
// CHECK-NEXT:      %mm = molten.matmul %x_1, %w_1 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %biased = molten.add %mm, %b_1 : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %y_1 = molten.gelu %biased approximate = "tanh" : tensor<16x32xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<16x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<16x32xf32>
// CHECK-NEXT:  }

// -----

// A matmul whose result is also a graph result: the group yields it next to
// the epilogue's result.
func.func @matmul_result_is_output(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %mm = molten.matmul %x, %w : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %biased = molten.add %mm, %b : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %y = molten.relu %biased : tensor<16x32xf32>
  func.return %mm, %y : tensor<16x32xf32>, tensor<16x32xf32>
}

// CHECK-LABEL: func.func @matmul_result_is_output(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
// CHECK-NEXT:    %mm, %y = kernel.fused gemm(%x, %w, %b) : (tensor<16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<16x64xf32>, %w_1: tensor<64x32xf32>, %b_1: tensor<32xf32>):
// CHECK-NEXT:      %mm_1 = molten.matmul %x_1, %w_1 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %biased = molten.add %mm_1, %b_1 : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %y_1 = molten.relu %biased : tensor<16x32xf32>
// CHECK-NEXT:      kernel.yield %mm_1, %y_1 : tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %mm, %y : tensor<16x32xf32>, tensor<16x32xf32>
// CHECK-NEXT:  }

// -----

// A batched matmul (a [2, 16, 64] batch times one [64, 32] matrix) in f16
// with an f32 epilogue: the casts, the bias (its cast recomputed per
// element), silu and a residual of the result's shape are all one group.
func.func @batched_matmul_epilogue(%a: tensor<2x16x64xf16>, %w: tensor<64x32xf16>, %b: tensor<32xf16>, %res: tensor<2x16x32xf16>) -> tensor<2x16x32xf16> {
  %mm = molten.matmul %a, %w : (tensor<2x16x64xf16>, tensor<64x32xf16>) -> tensor<2x16x32xf16>
  %mmf = molten.cast %mm : tensor<2x16x32xf16> to tensor<2x16x32xf32>
  %bf = molten.cast %b : tensor<32xf16> to tensor<32xf32>
  %biased = molten.add %mmf, %bf : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  %act = molten.silu %biased : tensor<2x16x32xf32>
  %acth = molten.cast %act : tensor<2x16x32xf32> to tensor<2x16x32xf16>
  %y = molten.add %acth, %res : (tensor<2x16x32xf16>, tensor<2x16x32xf16>) -> tensor<2x16x32xf16>
  func.return %y : tensor<2x16x32xf16>
}

// CHECK-LABEL: func.func @batched_matmul_epilogue(%a: tensor<2x16x64xf16>, %w: tensor<64x32xf16>, %b: tensor<32xf16>, %res: tensor<2x16x32xf16>) -> tensor<2x16x32xf16> {
// CHECK-NEXT:    %y = kernel.fused gemm(%a, %w, %b, %res) : (tensor<2x16x64xf16>, tensor<64x32xf16>, tensor<32xf16>, tensor<2x16x32xf16>) -> tensor<2x16x32xf16> {
// CHECK-NEXT:    ^bb0(%a_1: tensor<2x16x64xf16>, %w_1: tensor<64x32xf16>, %b_1: tensor<32xf16>, %res_1: tensor<2x16x32xf16>):
// CHECK-NEXT:      %mm = molten.matmul %a_1, %w_1 : (tensor<2x16x64xf16>, tensor<64x32xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:      %mmf = molten.cast %mm : tensor<2x16x32xf16> to tensor<2x16x32xf32>
// CHECK-NEXT:      %bf = molten.cast %b_1 : tensor<32xf16> to tensor<32xf32>
// CHECK-NEXT:      %biased = molten.add %mmf, %bf : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT:      %act = molten.silu %biased : tensor<2x16x32xf32>
// CHECK-NEXT:      %acth = molten.cast %act : tensor<2x16x32xf32> to tensor<2x16x32xf16>
// CHECK-NEXT:      %y_1 = molten.add %acth, %res_1 : (tensor<2x16x32xf16>, tensor<2x16x32xf16>) -> tensor<2x16x32xf16>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<2x16x32xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x16x32xf16>
// CHECK-NEXT:  }

// -----

// A transposed-B matmul, scaled by a constant (cloned in) and added to a
// residual computed elementwise over the result's shape: that producer of an
// epilogue operand is pulled in too. (The original constant is left at the
// graph level, dead, for dce.)
func.func @scale_and_residual(%x: tensor<16x64xf32>, %wt: tensor<32x64xf32>, %r: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %mm = molten.matmul %x, %wt transpose_b : (tensor<16x64xf32>, tensor<32x64xf32>) -> tensor<16x32xf32>
  %scale = molten.constant dense<1.250000e-01> : tensor<f32>
  %scaled = molten.mul %mm, %scale : (tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
  %rt = molten.tanh %r : tensor<16x32xf32>
  %y = molten.add %scaled, %rt : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  func.return %y : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @scale_and_residual(%x: tensor<16x64xf32>, %wt: tensor<32x64xf32>, %r: tensor<16x32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    %y = kernel.fused gemm(%x, %wt, %r) : (tensor<16x64xf32>, tensor<32x64xf32>, tensor<16x32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<16x64xf32>, %wt_1: tensor<32x64xf32>, %r_1: tensor<16x32xf32>):
// CHECK-NEXT:      %scale = molten.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:      %mm = molten.matmul %x_1, %wt_1 transpose_b : (tensor<16x64xf32>, tensor<32x64xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %scaled = molten.mul %mm, %scale : (tensor<16x32xf32>, tensor<f32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %rt = molten.tanh %r_1 : tensor<16x32xf32>
// CHECK-NEXT:      %y_1 = molten.add %scaled, %rt : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<16x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %scale = molten.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    func.return %y : tensor<16x32xf32>
// CHECK-NEXT:  }

// -----

// The matmul's own operands stay inputs, even when an elementwise op
// computes them: the exp of x is left at the graph level (for
// fuse-elementwise).
func.func @operand_producer_stays_out(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %ex = molten.exp %x : tensor<16x64xf32>
  %mm = molten.matmul %ex, %w : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %y = molten.relu %mm : tensor<16x32xf32>
  func.return %y : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @operand_producer_stays_out(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    %ex = molten.exp %x : tensor<16x64xf32>
// CHECK-NEXT:    %y = kernel.fused gemm(%ex, %w) : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    ^bb0(%ex_1: tensor<16x64xf32>, %w_1: tensor<64x32xf32>):
// CHECK-NEXT:      %mm = molten.matmul %ex_1, %w_1 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %y_1 = molten.relu %mm : tensor<16x32xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<16x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<16x32xf32>
// CHECK-NEXT:  }

// -----

// The epilogue stops at ops that are not elementwise over the result's shape:
// a reduction, and an add that broadcasts the result to a larger shape. The
// group is the matmul alone, its result yielded for them.
func.func @epilogue_boundaries(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %big: tensor<2x16x32xf32>) -> (tensor<16x1xf32>, tensor<2x16x32xf32>) {
  %mm = molten.matmul %x, %w : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %sum = molten.reduce_sum %mm axes = [1] keepdim : tensor<16x32xf32> -> tensor<16x1xf32>
  %wide = molten.add %mm, %big : (tensor<16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  func.return %sum, %wide : tensor<16x1xf32>, tensor<2x16x32xf32>
}

// CHECK-LABEL: func.func @epilogue_boundaries(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %big: tensor<2x16x32xf32>) -> (tensor<16x1xf32>, tensor<2x16x32xf32>) {
// CHECK-NEXT:    %mm = kernel.fused gemm(%x, %w) : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<16x64xf32>, %w_1: tensor<64x32xf32>):
// CHECK-NEXT:      %mm_1 = molten.matmul %x_1, %w_1 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      kernel.yield %mm_1 : tensor<16x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %sum = molten.reduce_sum %mm axes = [1] keepdim : tensor<16x32xf32> -> tensor<16x1xf32>
// CHECK-NEXT:    %wide = molten.add %mm, %big : (tensor<16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT:    func.return %sum, %wide : tensor<16x1xf32>, tensor<2x16x32xf32>
// CHECK-NEXT:  }

// -----

// Two matmuls in a row: the first one's epilogue (relu) feeds the second
// matmul, so it is yielded; the second matmul gets its own gemm group. The
// final add reads the relu and the second matmul: it cannot join the first
// group (the path relu -> matmul -> add leaves it), so it is the second
// matmul's epilogue, with the relu as an input.
func.func @two_matmuls(%x: tensor<16x64xf32>, %w1: tensor<64x32xf32>, %w2: tensor<32x32xf32>) -> tensor<16x32xf32> {
  %mm1 = molten.matmul %x, %w1 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %h = molten.relu %mm1 : tensor<16x32xf32>
  %mm2 = molten.matmul %h, %w2 : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
  %y = molten.add %mm2, %h : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  func.return %y : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @two_matmuls(%x: tensor<16x64xf32>, %w1: tensor<64x32xf32>, %w2: tensor<32x32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    %h = kernel.fused gemm(%x, %w1) : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<16x64xf32>, %w1_1: tensor<64x32xf32>):
// CHECK-NEXT:      %mm1 = molten.matmul %x_1, %w1_1 : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %h_1 = molten.relu %mm1 : tensor<16x32xf32>
// CHECK-NEXT:      kernel.yield %h_1 : tensor<16x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = kernel.fused gemm(%h, %w2) : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32> {
// CHECK-NEXT:    ^bb0(%h_1: tensor<16x32xf32>, %w2_1: tensor<32x32xf32>):
// CHECK-NEXT:      %mm2 = molten.matmul %h_1, %w2_1 : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      %y_1 = molten.add %mm2, %h_1 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<16x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<16x32xf32>
// CHECK-NEXT:  }

// -----

// gelu(x @ w + b) as a graph spec, through the molten-level passes.
func.func @gelu_linear(%x: tensor<8x128xbf16>, %w: tensor<128x256xbf16>, %b: tensor<256xbf16>) -> tensor<8x256xbf16> {
  %mm = molten.matmul %x, %w : (tensor<8x128xbf16>, tensor<128x256xbf16>) -> tensor<8x256xbf16>
  %biased = molten.add %mm, %b : (tensor<8x256xbf16>, tensor<256xbf16>) -> tensor<8x256xbf16>
  %y = molten.gelu %biased : tensor<8x256xbf16>
  func.return %y : tensor<8x256xbf16>
}

// DECOMP-LABEL: func.func @gelu_linear(%x: tensor<8x128xbf16>, %w: tensor<128x256xbf16>, %b: tensor<256xbf16>) -> tensor<8x256xbf16> {
// DECOMP-NEXT:    %y = kernel.fused gemm(%x, %w, %b) : (tensor<8x128xbf16>, tensor<128x256xbf16>, tensor<256xbf16>) -> tensor<8x256xbf16> {
// DECOMP-NEXT:    ^bb0(%x_1: tensor<8x128xbf16>, %w_1: tensor<128x256xbf16>, %b_1: tensor<256xbf16>):
// DECOMP-NEXT:      %mm = molten.matmul %x_1, %w_1 : (tensor<8x128xbf16>, tensor<128x256xbf16>) -> tensor<8x256xbf16>
// DECOMP-NEXT:      %biased = molten.add %mm, %b_1 : (tensor<8x256xbf16>, tensor<256xbf16>) -> tensor<8x256xbf16>
// DECOMP-NEXT:      %y_1 = molten.gelu %biased : tensor<8x256xbf16>
// DECOMP-NEXT:      kernel.yield %y_1 : tensor<8x256xbf16>
// DECOMP-NEXT:    }
// DECOMP-NEXT:    func.return %y : tensor<8x256xbf16>
// DECOMP-NEXT:  }

// -----

// A cast to a narrower type before a transpose: the transpose joins the
// group, which stores the bf16 result transposed (no kernel reads it back).
func.func @narrow_before_transpose(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>) -> tensor<32x8xbf16> {
  %m = molten.matmul %a, %b : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %c = molten.cast %m : tensor<8x32xf32> to tensor<8x32xbf16>
  %t = molten.transpose %c permutation = [1, 0] : tensor<8x32xbf16> -> tensor<32x8xbf16>
  func.return %t : tensor<32x8xbf16>
}

// CHECK-LABEL: func.func @narrow_before_transpose
// CHECK-NEXT:    %t = kernel.fused gemm(%a, %b) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<32x8xbf16> {
// CHECK:           %c = molten.cast %m
// CHECK-NEXT:      %t_1 = molten.transpose %c permutation = [1, 0]
// CHECK-NEXT:      kernel.yield %t_1 : tensor<32x8xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %t

// -----

// Sibling matmuls (one lhs, the same transposes and types) whose results one
// epilogue op reads: silu(x @ wg.T) * (x @ wu.T). For sm_90a, whose
// persistent TMA gemm computes both products from each tile of x it loads,
// one gemm kernel of both writes only the product; for other targets the
// up projection is a kernel of its own, read back by the gate's epilogue.
func.func @gate_up(%x: tensor<256x64xbf16>, %wg: tensor<128x64xbf16>, %wu: tensor<128x64xbf16>) -> tensor<256x128xbf16> {
  %gate = molten.matmul %x, %wg transpose_b : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<256x128xbf16>
  %up = molten.matmul %x, %wu transpose_b : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<256x128xbf16>
  %act = molten.silu %gate : tensor<256x128xbf16>
  %y = molten.mul %act, %up : (tensor<256x128xbf16>, tensor<256x128xbf16>) -> tensor<256x128xbf16>
  func.return %y : tensor<256x128xbf16>
}

// CHECK-LABEL: func.func @gate_up(
// CHECK-NEXT:    %up = kernel.fused gemm(%x, %wu) : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<256x128xbf16> {
// CHECK:         %y = kernel.fused gemm(%x, %wg, %up) : (tensor<256x64xbf16>, tensor<128x64xbf16>, tensor<256x128xbf16>) -> tensor<256x128xbf16> {

// SM90A-LABEL: func.func @gate_up(
// SM90A-NEXT:    %y = kernel.fused gemm matched #kernel.gemm_match<side_by_side>(%x, %wg, %wu) : (tensor<256x64xbf16>, tensor<128x64xbf16>, tensor<128x64xbf16>) -> tensor<256x128xbf16> {
// SM90A-NEXT:    ^bb0(%x_1: tensor<256x64xbf16>, %wg_1: tensor<128x64xbf16>, %wu_1: tensor<128x64xbf16>):
// SM90A-NEXT:      %gate = molten.matmul %x_1, %wg_1 transpose_b : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<256x128xbf16>
// SM90A-NEXT:      %up = molten.matmul %x_1, %wu_1 transpose_b : (tensor<256x64xbf16>, tensor<128x64xbf16>) -> tensor<256x128xbf16>
// SM90A-NEXT:      %act = molten.silu %gate : tensor<256x128xbf16>
// SM90A-NEXT:      %y_1 = molten.mul %act, %up : (tensor<256x128xbf16>, tensor<256x128xbf16>) -> tensor<256x128xbf16>
// SM90A-NEXT:      kernel.yield %y_1 : tensor<256x128xbf16>
// SM90A-NEXT:    }
// SM90A-NEXT:    func.return %y : tensor<256x128xbf16>

// A sibling a GEMV would compute (8 rows) stays a kernel of its own on sm_90a.
func.func @gate_up_gemv(%x: tensor<8x64xbf16>, %wg: tensor<128x64xbf16>, %wu: tensor<128x64xbf16>) -> tensor<8x128xbf16> {
  %gate = molten.matmul %x, %wg transpose_b : (tensor<8x64xbf16>, tensor<128x64xbf16>) -> tensor<8x128xbf16>
  %up = molten.matmul %x, %wu transpose_b : (tensor<8x64xbf16>, tensor<128x64xbf16>) -> tensor<8x128xbf16>
  %act = molten.silu %gate : tensor<8x128xbf16>
  %y = molten.mul %act, %up : (tensor<8x128xbf16>, tensor<8x128xbf16>) -> tensor<8x128xbf16>
  func.return %y : tensor<8x128xbf16>
}

// SM90A-LABEL: func.func @gate_up_gemv(
// SM90A-NEXT:    %up = kernel.fused gemm(%x, %wu)
// SM90A:         %y = kernel.fused gemm(%x, %wg, %up)

// -----

// Horizontal fusion: q, k and v of one x, of different widths, that no op
// reads together. On sm_90a they are one gemm kernel, each with its own
// epilogue (each tile of the kernel is one projection's), where the
// estimate finds one kernel no slower than three; elsewhere, and at 16
// rows (@qkv_decode), a kernel each.
func.func @qkv(%x: tensor<300x1024xbf16>, %wq: tensor<1024x1024xbf16>, %bq: tensor<1024xbf16>, %wk: tensor<256x1024xbf16>, %bk: tensor<256xbf16>, %wv: tensor<256x1024xbf16>) -> (tensor<300x1024xbf16>, tensor<300x256xbf16>, tensor<300x256xbf16>) {
  %q = molten.matmul %x, %wq transpose_b : (tensor<300x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<300x1024xbf16>
  %qb = molten.add %q, %bq : (tensor<300x1024xbf16>, tensor<1024xbf16>) -> tensor<300x1024xbf16>
  %k = molten.matmul %x, %wk transpose_b : (tensor<300x1024xbf16>, tensor<256x1024xbf16>) -> tensor<300x256xbf16>
  %kb = molten.add %k, %bk : (tensor<300x256xbf16>, tensor<256xbf16>) -> tensor<300x256xbf16>
  %v = molten.matmul %x, %wv transpose_b : (tensor<300x1024xbf16>, tensor<256x1024xbf16>) -> tensor<300x256xbf16>
  func.return %qb, %kb, %v : tensor<300x1024xbf16>, tensor<300x256xbf16>, tensor<300x256xbf16>
}

// CHECK-LABEL: func.func @qkv(
// CHECK-NEXT:    %qb = kernel.fused gemm(%x, %wq, %bq)
// CHECK:         %kb = kernel.fused gemm(%x, %wk, %bk)
// CHECK:         %v = kernel.fused gemm(%x, %wv)

// SM90A-LABEL: func.func @qkv(
// SM90A-NEXT:    %qb, %kb, %v = kernel.fused gemm(%x, %wq, %bq, %wk, %bk, %wv) : (tensor<300x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024xbf16>, tensor<256x1024xbf16>, tensor<256xbf16>, tensor<256x1024xbf16>) -> (tensor<300x1024xbf16>, tensor<300x256xbf16>, tensor<300x256xbf16>) {
// SM90A-NEXT:    ^bb0(%x_1: tensor<300x1024xbf16>, %wq_1: tensor<1024x1024xbf16>, %bq_1: tensor<1024xbf16>, %wk_1: tensor<256x1024xbf16>, %bk_1: tensor<256xbf16>, %wv_1: tensor<256x1024xbf16>):
// SM90A-NEXT:      %q = molten.matmul %x_1, %wq_1 transpose_b : (tensor<300x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<300x1024xbf16>
// SM90A-NEXT:      %qb_1 = molten.add %q, %bq_1 : (tensor<300x1024xbf16>, tensor<1024xbf16>) -> tensor<300x1024xbf16>
// SM90A-NEXT:      %k = molten.matmul %x_1, %wk_1 transpose_b : (tensor<300x1024xbf16>, tensor<256x1024xbf16>) -> tensor<300x256xbf16>
// SM90A-NEXT:      %kb_1 = molten.add %k, %bk_1 : (tensor<300x256xbf16>, tensor<256xbf16>) -> tensor<300x256xbf16>
// SM90A-NEXT:      %v_1 = molten.matmul %x_1, %wv_1 transpose_b : (tensor<300x1024xbf16>, tensor<256x1024xbf16>) -> tensor<300x256xbf16>
// SM90A-NEXT:      kernel.yield %qb_1, %kb_1, %v_1 : tensor<300x1024xbf16>, tensor<300x256xbf16>, tensor<300x256xbf16>
// SM90A-NEXT:    }
// SM90A-NEXT:    func.return %qb, %kb, %v : tensor<300x1024xbf16>, tensor<300x256xbf16>, tensor<300x256xbf16>

// -----

func.func @qkv_decode(%x: tensor<16x1024xbf16>, %wq: tensor<1024x1024xbf16>, %wk: tensor<256x1024xbf16>, %wv: tensor<256x1024xbf16>) -> (tensor<16x1024xbf16>, tensor<16x256xbf16>, tensor<16x256xbf16>) {
  %q = molten.matmul %x, %wq transpose_b : (tensor<16x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<16x1024xbf16>
  %k = molten.matmul %x, %wk transpose_b : (tensor<16x1024xbf16>, tensor<256x1024xbf16>) -> tensor<16x256xbf16>
  %v = molten.matmul %x, %wv transpose_b : (tensor<16x1024xbf16>, tensor<256x1024xbf16>) -> tensor<16x256xbf16>
  func.return %q, %k, %v : tensor<16x1024xbf16>, tensor<16x256xbf16>, tensor<16x256xbf16>
}

// SM90A-LABEL: func.func @qkv_decode(
// SM90A-NEXT:    %q = kernel.fused gemm(%x, %wq)
// SM90A:         %k = kernel.fused gemm(%x, %wk)
// SM90A:         %v = kernel.fused gemm(%x, %wv)

// -----

// A projection split into heads, [T, H * D] -> [H, T, D]: the reshape and
// the transpose join the group, which stores the biased result through
// them (the kernel writes each element where the layout sends it).
func.func @linear_heads(%x: tensor<16x64xf16>, %w: tensor<64x64xf16>, %b: tensor<64xf16>) -> tensor<2x16x32xf16> {
  %mm = molten.matmul %x, %w transpose_b : (tensor<16x64xf16>, tensor<64x64xf16>) -> tensor<16x64xf16>
  %biased = molten.add %mm, %b : (tensor<16x64xf16>, tensor<64xf16>) -> tensor<16x64xf16>
  %split = molten.reshape %biased : tensor<16x64xf16> -> tensor<16x2x32xf16>
  %heads = molten.transpose %split permutation = [1, 0, 2] : tensor<16x2x32xf16> -> tensor<2x16x32xf16>
  func.return %heads : tensor<2x16x32xf16>
}

// CHECK-LABEL: func.func @linear_heads(
// CHECK-NEXT:    %heads = kernel.fused gemm(%x, %w, %b) : (tensor<16x64xf16>, tensor<64x64xf16>, tensor<64xf16>) -> tensor<2x16x32xf16> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<16x64xf16>, %w_1: tensor<64x64xf16>, %b_1: tensor<64xf16>):
// CHECK-NEXT:      %mm = molten.matmul %x_1, %w_1 transpose_b : (tensor<16x64xf16>, tensor<64x64xf16>) -> tensor<16x64xf16>
// CHECK-NEXT:      %biased = molten.add %mm, %b_1 : (tensor<16x64xf16>, tensor<64xf16>) -> tensor<16x64xf16>
// CHECK-NEXT:      %split = molten.reshape %biased : tensor<16x64xf16> -> tensor<16x2x32xf16>
// CHECK-NEXT:      %heads_1 = molten.transpose %split permutation = [1, 0, 2] : tensor<16x2x32xf16> -> tensor<2x16x32xf16>
// CHECK-NEXT:      kernel.yield %heads_1 : tensor<2x16x32xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %heads : tensor<2x16x32xf16>

// -----

// A layout read back in the result's domain (a square transpose added to
// the result) would need elements other threads hold: the add stays out,
// reading the result and its transpose, both stored by the gemm.
func.func @layout_read_back(%x: tensor<32x64xf32>, %w: tensor<64x32xf32>) -> tensor<32x32xf32> {
  %mm = molten.matmul %x, %w : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
  %t = molten.transpose %mm permutation = [1, 0] : tensor<32x32xf32> -> tensor<32x32xf32>
  %y = molten.add %mm, %t : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %y : tensor<32x32xf32>
}

// CHECK-LABEL: func.func @layout_read_back(
// CHECK-NEXT:    %mm, %t = kernel.fused gemm(%x, %w) : (tensor<32x64xf32>, tensor<64x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
// CHECK:           %t_1 = molten.transpose %mm_1 permutation = [1, 0]
// CHECK-NEXT:      kernel.yield %mm_1, %t_1 : tensor<32x32xf32>, tensor<32x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = molten.add %mm, %t
