// RUN: molten-opt %s --split-input-file -p canonicalize | filecheck %s

// The molten canonicalization patterns (passes/canonicalization_patterns/
// molten.py) under xDSL's canonicalize, one pattern per case, and the cases
// where they must not fire. canonicalize also erases the ops left unused.

// x + 0 -> x, with the rank-0 zero broadcast by the add.
func.func @add_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = molten.constant dense<0.0> : tensor<f32>
  %0 = molten.add %x, %zero : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @add_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// 0 + x -> x, with a full-shape splat zero.
func.func @zero_add(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %zero = molten.constant dense<0.0> : tensor<4x8xf16>
  %0 = molten.add %zero, %x : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @zero_add(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf16>
// CHECK-NEXT:  }

// -----

// x + (-0.0) -> x (exact in IEEE arithmetic).
func.func @add_negative_zero(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %zero = molten.constant dense<-0.0> : tensor<bf16>
  %0 = molten.add %x, %zero : (tensor<8xbf16>, tensor<bf16>) -> tensor<8xbf16>
  func.return %0 : tensor<8xbf16>
}

// CHECK-LABEL: func.func @add_negative_zero(%x: tensor<8xbf16>) -> tensor<8xbf16> {
// CHECK-NEXT:    func.return %x : tensor<8xbf16>
// CHECK-NEXT:  }

// -----

// x - 0 -> x.
func.func @sub_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = molten.constant dense<0.0> : tensor<8xf32>
  %0 = molten.sub %x, %zero : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @sub_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: 0 - x is -x, not x.
func.func @zero_sub(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = molten.constant dense<0.0> : tensor<f32>
  %0 = molten.sub %zero, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @zero_sub(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %zero = molten.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %0 = molten.sub %zero, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// x * 1 -> x.
func.func @mul_one(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %one = molten.constant dense<1.0> : tensor<bf16>
  %0 = molten.mul %x, %one : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  func.return %0 : tensor<4x8xbf16>
}

// CHECK-LABEL: func.func @mul_one(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
// CHECK-NEXT:    func.return %x : tensor<4x8xbf16>
// CHECK-NEXT:  }

// -----

// 1 * x -> x.
func.func @one_mul(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %one = molten.constant dense<1.0> : tensor<f32>
  %0 = molten.mul %one, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @one_mul(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// x / 1 -> x.
func.func @div_one(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %one = molten.constant dense<1.0> : tensor<f16>
  %0 = molten.div %x, %one : (tensor<4x8xf16>, tensor<f16>) -> tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @div_one(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf16>
// CHECK-NEXT:  }

// -----

// NEGATIVE: 1 / x is not x.
func.func @one_div(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %one = molten.constant dense<1.0> : tensor<f32>
  %0 = molten.div %one, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @one_div(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %one = molten.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %0 = molten.div %one, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// The identity is seen through a broadcast_to of a scalar constant.
func.func @mul_one_through_broadcast(%x: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
  %one = molten.constant dense<1.0> : tensor<f32>
  %b = molten.broadcast_to %one : tensor<f32> -> tensor<8xf32>
  %0 = molten.mul %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @mul_one_through_broadcast(%x: tensor<4x8xf32>, %s: tensor<f32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: x * 1 where broadcasting makes the result larger than x. (The
// splat constant itself becomes a broadcast_to of a rank-0 constant.)
func.func @mul_one_enlarges(%x: tensor<8xf32>) -> tensor<4x8xf32> {
  %one = molten.constant dense<1.0> : tensor<4x1xf32>
  %0 = molten.mul %x, %one : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @mul_one_enlarges(%x: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %one = molten.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %one_1 = molten.broadcast_to %one : tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %0 = molten.mul %x, %one_1 : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: x * 2.
func.func @mul_two(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = molten.constant dense<2.0> : tensor<f32>
  %0 = molten.mul %x, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @mul_two(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %two = molten.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %0 = molten.mul %x, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: x + 1.
func.func @add_one(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %one = molten.constant dense<1.0> : tensor<f32>
  %0 = molten.add %x, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @add_one(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %one = molten.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %0 = molten.add %x, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: a dense, non-splat constant is not an identity.
func.func @mul_dense_ones(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = molten.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = molten.mul %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @mul_dense_ones(%x: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:    %c = molten.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %0 = molten.mul %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    func.return %0 : tensor<2xf32>
// CHECK-NEXT:  }

// -----

// neg(neg(x)) -> x.
func.func @neg_neg(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.neg %x : tensor<4x8xf32>
  %1 = molten.neg %0 : tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @neg_neg(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// neg(neg(neg(x))) -> neg(x).
func.func @neg_neg_neg(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = molten.neg %x : tensor<4x8xf16>
  %1 = molten.neg %0 : tensor<4x8xf16>
  %2 = molten.neg %1 : tensor<4x8xf16>
  func.return %2 : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @neg_neg_neg(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    %0 = molten.neg %x : tensor<4x8xf16>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf16>
// CHECK-NEXT:  }

// -----

// NEGATIVE: the negations are not adjacent.
func.func @neg_abs_neg(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.neg %x : tensor<4x8xf32>
  %1 = molten.abs %0 : tensor<4x8xf32>
  %2 = molten.neg %1 : tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @neg_abs_neg(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %0 = molten.neg %x : tensor<4x8xf32>
// CHECK-NEXT:    %1 = molten.abs %0 : tensor<4x8xf32>
// CHECK-NEXT:    %2 = molten.neg %1 : tensor<4x8xf32>
// CHECK-NEXT:    func.return %2 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// Elementwise ops of splats fold: 1.5 + 2.25 = 3.75.
func.func @fold_add_scalars() -> tensor<f32> {
  %a = molten.constant dense<1.5> : tensor<f32>
  %b = molten.constant dense<2.25> : tensor<f32>
  %0 = molten.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @fold_add_scalars() -> tensor<f32> {
// CHECK-NEXT:    %0 = molten.constant dense<3.750000e+00> : tensor<f32>
// CHECK-NEXT:    func.return %0 : tensor<f32>
// CHECK-NEXT:  }

// -----

// A splat of rank > 0 folds to a rank-0 constant broadcast to the result.
func.func @fold_exp_splat() -> tensor<4x8xf32> {
  %a = molten.constant dense<1.0> : tensor<4x8xf32>
  %0 = molten.exp %a : tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @fold_exp_splat() -> tensor<4x8xf32> {
// CHECK-NEXT:    %0 = molten.constant dense<2.71828198> : tensor<f32>
// CHECK-NEXT:    %1 = molten.broadcast_to %0 : tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %1 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// A cast of a splat folds, rounding to the result type: 0.1 in f16.
func.func @fold_cast_splat() -> tensor<2xf16> {
  %a = molten.constant dense<0.1> : tensor<2xf32>
  %0 = molten.cast %a : tensor<2xf32> to tensor<2xf16>
  func.return %0 : tensor<2xf16>
}

// CHECK-LABEL: func.func @fold_cast_splat() -> tensor<2xf16> {
// CHECK-NEXT:    %0 = molten.constant dense<9.997560e-02> : tensor<f16>
// CHECK-NEXT:    %1 = molten.broadcast_to %0 : tensor<f16> -> tensor<2xf16>
// CHECK-NEXT:    func.return %1 : tensor<2xf16>
// CHECK-NEXT:  }

// -----

// Folding sees through broadcasting: 3 * 2 - 0.5 = 5.5 on a 4x8 result.
func.func @fold_broadcasting_chain() -> tensor<4x8xf32> {
  %a = molten.constant dense<3.0> : tensor<f32>
  %b = molten.constant dense<2.0> : tensor<8xf32>
  %c = molten.constant dense<0.5> : tensor<4x1xf32>
  %0 = molten.mul %a, %b : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = molten.sub %0, %c : (tensor<8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @fold_broadcasting_chain() -> tensor<4x8xf32> {
// CHECK-NEXT:    %0 = molten.constant dense<5.500000e+00> : tensor<f32>
// CHECK-NEXT:    %1 = molten.broadcast_to %0 : tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %1 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// Folding computes in the result's element type: 1 / 3 in f16.
func.func @fold_f16_rounding() -> tensor<f16> {
  %a = molten.constant dense<1.0> : tensor<f16>
  %b = molten.constant dense<3.0> : tensor<f16>
  %0 = molten.div %a, %b : (tensor<f16>, tensor<f16>) -> tensor<f16>
  func.return %0 : tensor<f16>
}

// CHECK-LABEL: func.func @fold_f16_rounding() -> tensor<f16> {
// CHECK-NEXT:    %0 = molten.constant dense<3.332520e-01> : tensor<f16>
// CHECK-NEXT:    func.return %0 : tensor<f16>
// CHECK-NEXT:  }

// -----

// gelu's tanh form folds (gelu_tanh(1) = 0.841192).
func.func @fold_gelu_tanh() -> tensor<f32> {
  %a = molten.constant dense<1.0> : tensor<f32>
  %0 = molten.gelu %a approximate = "tanh" : tensor<f32>
  func.return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @fold_gelu_tanh() -> tensor<f32> {
// CHECK-NEXT:    %0 = molten.constant dense<8.411920e-01> : tensor<f32>
// CHECK-NEXT:    func.return %0 : tensor<f32>
// CHECK-NEXT:  }

// -----

// bf16 splats fold, rounded to bf16: exp(1) = 2.71875.
func.func @fold_exp_bf16() -> tensor<bf16> {
  %a = molten.constant dense<1.0> : tensor<bf16>
  %0 = molten.exp %a : tensor<bf16>
  func.return %0 : tensor<bf16>
}

// CHECK-LABEL: func.func @fold_exp_bf16() -> tensor<bf16> {
// CHECK-NEXT:    %0 = molten.constant dense<2.718750e+00> : tensor<bf16>
// CHECK-NEXT:    func.return %0 : tensor<bf16>
// CHECK-NEXT:  }

// -----

// A cast to bf16 of an f32 splat folds to the nearest bf16 (3.140625; xDSL
// prints bf16 with six significant digits).
func.func @fold_cast_to_bf16() -> tensor<4xbf16> {
  %a = molten.constant dense<3.14159> : tensor<4xf32>
  %0 = molten.cast %a : tensor<4xf32> to tensor<4xbf16>
  func.return %0 : tensor<4xbf16>
}

// CHECK-LABEL: func.func @fold_cast_to_bf16() -> tensor<4xbf16> {
// CHECK-NEXT:    %0 = molten.constant dense<3.140620e+00> : tensor<bf16>
// CHECK-NEXT:    %1 = molten.broadcast_to %0 : tensor<bf16> -> tensor<4xbf16>
// CHECK-NEXT:    func.return %1 : tensor<4xbf16>
// CHECK-NEXT:  }

// -----

// gelu's exact (erf) form folds too (gelu(1) = 0.841344746).
func.func @fold_gelu() -> tensor<4xf32> {
  %a = molten.constant dense<1.0> : tensor<4xf32>
  %0 = molten.gelu %a : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @fold_gelu() -> tensor<4xf32> {
// CHECK-NEXT:    %0 = molten.constant dense<0.841344714> : tensor<f32>
// CHECK-NEXT:    %1 = molten.broadcast_to %0 : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %1 : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: a fold whose value is NaN is not done (molten constants are
// finite): log(-1).
func.func @no_fold_nan() -> tensor<f32> {
  %a = molten.constant dense<-1.0> : tensor<f32>
  %0 = molten.log %a : tensor<f32>
  func.return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @no_fold_nan() -> tensor<f32> {
// CHECK-NEXT:    %a = molten.constant dense<-1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %0 = molten.log %a : tensor<f32>
// CHECK-NEXT:    func.return %0 : tensor<f32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: nor one that overflows the element type: exp(100) in f16.
func.func @no_fold_overflow() -> tensor<4xf16> {
  %a = molten.constant dense<100.0> : tensor<4xf16>
  %0 = molten.exp %a : tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// CHECK-LABEL: func.func @no_fold_overflow() -> tensor<4xf16> {
// CHECK-NEXT:    %a = molten.constant dense<1.000000e+02> : tensor<f16>
// CHECK-NEXT:    %a_1 = molten.broadcast_to %a : tensor<f16> -> tensor<4xf16>
// CHECK-NEXT:    %0 = molten.exp %a_1 : tensor<4xf16>
// CHECK-NEXT:    func.return %0 : tensor<4xf16>
// CHECK-NEXT:  }

// -----

// NEGATIVE: 0 / 0.
func.func @no_fold_zero_by_zero() -> tensor<f32> {
  %a = molten.constant dense<0.0> : tensor<f32>
  %0 = molten.div %a, %a : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// CHECK-LABEL: func.func @no_fold_zero_by_zero() -> tensor<f32> {
// CHECK-NEXT:    %a = molten.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %0 = molten.div %a, %a : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:    func.return %0 : tensor<f32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: dense, non-splat operands do not fold.
func.func @no_fold_non_splat(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = molten.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = molten.exp %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// CHECK-LABEL: func.func @no_fold_non_splat(%x: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:    %a = molten.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %0 = molten.exp %a : tensor<2xf32>
// CHECK-NEXT:    func.return %0 : tensor<2xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: one operand is not a constant.
func.func @no_fold_mixed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = molten.constant dense<3.0> : tensor<f32>
  %0 = molten.mul %x, %a : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @no_fold_mixed(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %a = molten.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %0 = molten.mul %x, %a : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %0 : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A splat constant of rank > 0 -> broadcast_to of a rank-0 constant.
func.func @splat_to_scalar() -> tensor<16xf16> {
  %a = molten.constant dense<7.0> : tensor<16xf16>
  func.return %a : tensor<16xf16>
}

// CHECK-LABEL: func.func @splat_to_scalar() -> tensor<16xf16> {
// CHECK-NEXT:    %a = molten.constant dense<7.000000e+00> : tensor<f16>
// CHECK-NEXT:    %a_1 = molten.broadcast_to %a : tensor<f16> -> tensor<16xf16>
// CHECK-NEXT:    func.return %a_1 : tensor<16xf16>
// CHECK-NEXT:  }

// -----

// A rank-0 splat is already canonical.
func.func @scalar_stays() -> tensor<bf16> {
  %a = molten.constant dense<7.0> : tensor<bf16>
  func.return %a : tensor<bf16>
}

// CHECK-LABEL: func.func @scalar_stays() -> tensor<bf16> {
// CHECK-NEXT:    %a = molten.constant dense<7.000000e+00> : tensor<bf16>
// CHECK-NEXT:    func.return %a : tensor<bf16>
// CHECK-NEXT:  }

// -----

// NEGATIVE: rotate_half of a splat is not a splat (it negates one half), so it
// is not folded; only its operand becomes broadcast_to(rank-0 constant).
func.func @rotate_half_splat() -> tensor<4xf32> {
  %a = molten.constant dense<1.0> : tensor<4xf32>
  %0 = molten.rotate_half %a : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @rotate_half_splat() -> tensor<4xf32> {
// CHECK-NEXT:    %a = molten.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %a_1 = molten.broadcast_to %a : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    %0 = molten.rotate_half %a_1 : tensor<4xf32>
// CHECK-NEXT:    func.return %0 : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: reductions are not folded.
func.func @reduce_splat() -> tensor<4xf32> {
  %a = molten.constant dense<1.0> : tensor<4x8xf32>
  %0 = molten.reduce_sum %a axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @reduce_splat() -> tensor<4xf32> {
// CHECK-NEXT:    %a = molten.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %a_1 = molten.broadcast_to %a : tensor<f32> -> tensor<4x8xf32>
// CHECK-NEXT:    %0 = molten.reduce_sum %a_1 axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %0 : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// add(x, broadcast_to(w)) -> add(x, w): the add's own broadcasting gives the
// same result type.
func.func @absorb_broadcast(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %b = molten.broadcast_to %w : tensor<8xf32> -> tensor<4x8xf32>
  %0 = molten.add %x, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @absorb_broadcast(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// The same for the lhs of a pow.
func.func @absorb_broadcast_lhs(%x: tensor<4x1xf16>, %y: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %b = molten.broadcast_to %x : tensor<4x1xf16> -> tensor<4x8xf16>
  %0 = molten.pow %b, %y : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @absorb_broadcast_lhs(%x: tensor<4x1xf16>, %y: tensor<4x8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    %0 = molten.pow %x, %y : (tensor<4x1xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf16>
// CHECK-NEXT:  }

// -----

// NEGATIVE: without the broadcast_to the add's result would be 8, not 4x8.
func.func @keep_needed_broadcast(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %b = molten.broadcast_to %w : tensor<8xf32> -> tensor<4x8xf32>
  %0 = molten.add %x, %b : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @keep_needed_broadcast(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %b = molten.broadcast_to %w : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %0 = molten.add %x, %b : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// A cast to the input's own type -> x.
func.func @noop_cast(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.cast %x : tensor<4x8xf32> to tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @noop_cast(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// A broadcast_to the input's own type -> x.
func.func @noop_broadcast_to(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = molten.broadcast_to %x : tensor<4x8xbf16> -> tensor<4x8xbf16>
  func.return %0 : tensor<4x8xbf16>
}

// CHECK-LABEL: func.func @noop_broadcast_to(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
// CHECK-NEXT:    func.return %x : tensor<4x8xbf16>
// CHECK-NEXT:  }

// -----

// A reshape to the input's own type -> x.
func.func @noop_reshape(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = molten.reshape %x : tensor<4x8xf16> -> tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @noop_reshape(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf16>
// CHECK-NEXT:  }

// -----

// The identity permutation -> x.
func.func @identity_transpose(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = molten.transpose %x permutation = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  func.return %0 : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @identity_transpose(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT:    func.return %x : tensor<2x4x8xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: a square transpose keeps the type but is not the identity.
func.func @non_identity_transpose(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = molten.transpose %x permutation = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @non_identity_transpose(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    %0 = molten.transpose %x permutation = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    func.return %0 : tensor<4x4xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: casts, reshapes and broadcasts that change the type stay.
func.func @real_shape_changes(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = molten.cast %x : tensor<4x4xf32> to tensor<4x4xf16>
  %1 = molten.reshape %0 : tensor<4x4xf16> -> tensor<2x8xf16>
  %2 = molten.broadcast_to %1 : tensor<2x8xf16> -> tensor<3x2x8xf16>
  %3 = molten.reshape %2 : tensor<3x2x8xf16> -> tensor<3x4x4xf16>
  %4 = molten.reduce_max %3 axes = [0] : tensor<3x4x4xf16> -> tensor<4x4xf16>
  %5 = molten.cast %4 : tensor<4x4xf16> to tensor<4x4xf32>
  func.return %5 : tensor<4x4xf32>
}

// CHECK-LABEL: func.func @real_shape_changes(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT:    %0 = molten.cast %x : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT:    %1 = molten.reshape %0 : tensor<4x4xf16> -> tensor<2x8xf16>
// CHECK-NEXT:    %2 = molten.broadcast_to %1 : tensor<2x8xf16> -> tensor<3x2x8xf16>
// CHECK-NEXT:    %3 = molten.reshape %2 : tensor<3x2x8xf16> -> tensor<3x4x4xf16>
// CHECK-NEXT:    %4 = molten.reduce_max %3 axes = [0] : tensor<3x4x4xf16> -> tensor<4x4xf16>
// CHECK-NEXT:    %5 = molten.cast %4 : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK-NEXT:    func.return %5 : tensor<4x4xf32>
// CHECK-NEXT:  }

// -----

// A flip of a flip is one flip over the axes flipped once; a flip over no
// axes is x. torch's reverse cumsum, flip(cumsum(flip(x))), is one reverse
// scan; flipped in its other direction, a forward one.
func.func @flips(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = molten.flip %x axes = [0, 1] : tensor<4x8xf32>
  %1 = molten.flip %0 axes = [1] : tensor<4x8xf32>
  %2 = molten.flip %x axes = [1] : tensor<4x8xf32>
  %3 = molten.cumsum %2 axis = 1 exclusive : tensor<4x8xf32>
  %4 = molten.flip %3 axes = [1] : tensor<4x8xf32>
  %5 = molten.cumsum %2 axis = 1 reverse : tensor<4x8xf32>
  %6 = molten.flip %5 axes = [1] : tensor<4x8xf32>
  func.return %1, %4, %6 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @flips(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %0 = molten.flip %x axes = [0] : tensor<4x8xf32>
// CHECK-NEXT:    %1 = molten.cumsum %x axis = 1 reverse exclusive : tensor<4x8xf32>
// CHECK-NEXT:    %2 = molten.cumsum %x axis = 1 : tensor<4x8xf32>
// CHECK-NEXT:    func.return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: a scan read by others as well as the flip, or flipped along
// another axis, stays.
func.func @flips_that_stay(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = molten.cumsum %x axis = 1 : tensor<4x8xf32>
  %1 = molten.flip %0 axes = [1] : tensor<4x8xf32>
  %2 = molten.cumsum %x axis = 0 : tensor<4x8xf32>
  %3 = molten.flip %2 axes = [1] : tensor<4x8xf32>
  func.return %0, %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @flips_that_stay(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %0 = molten.cumsum %x axis = 1 : tensor<4x8xf32>
// CHECK-NEXT:    %1 = molten.flip %0 axes = [1] : tensor<4x8xf32>
// CHECK-NEXT:    %2 = molten.cumsum %x axis = 0 : tensor<4x8xf32>
// CHECK-NEXT:    %3 = molten.flip %2 axes = [1] : tensor<4x8xf32>
// CHECK-NEXT:    func.return %0, %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// torch's exclusive scan, cat([zeros, cumsum(x.narrow(d, 0, n - 1))], d), is
// the sum of two pads: the pad of the zeros is a splat 0, x + 0 is x, and a
// cumsum of the slice without the last element after one zero is the
// exclusive cumsum of x. In reverse: the slice from 1, the zero after.
func.func @exclusive_scans(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = molten.constant dense<0.000000e+00> : tensor<f32>
  %zeros = molten.broadcast_to %zero : tensor<f32> -> tensor<4x1xf32>
  %head = molten.slice %x axis = 1 start = 0 : tensor<4x8xf32> -> tensor<4x7xf32>
  %running = molten.cumsum %head axis = 1 : tensor<4x7xf32>
  %0 = molten.pad %zeros axis = 1 before = 0 : tensor<4x1xf32> -> tensor<4x8xf32>
  %1 = molten.pad %running axis = 1 before = 1 : tensor<4x7xf32> -> tensor<4x8xf32>
  %2 = molten.add %0, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %tail = molten.slice %x axis = 1 start = 1 : tensor<4x8xf32> -> tensor<4x7xf32>
  %after = molten.cumsum %tail axis = 1 reverse : tensor<4x7xf32>
  %3 = molten.pad %after axis = 1 before = 0 : tensor<4x7xf32> -> tensor<4x8xf32>
  func.return %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @exclusive_scans(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %0 = molten.cumsum %x axis = 1 exclusive : tensor<4x8xf32>
// CHECK-NEXT:    %1 = molten.cumsum %x axis = 1 reverse exclusive : tensor<4x8xf32>
// CHECK-NEXT:    func.return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// NEGATIVE: a shift by a zero after (forward), from element 1 (forward), or
// of a slice shorter by two stays.
func.func @shifts_that_stay(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %head = molten.slice %x axis = 1 start = 0 : tensor<4x8xf32> -> tensor<4x7xf32>
  %running = molten.cumsum %head axis = 1 : tensor<4x7xf32>
  %0 = molten.pad %running axis = 1 before = 0 : tensor<4x7xf32> -> tensor<4x8xf32>
  %tail = molten.slice %x axis = 1 start = 1 : tensor<4x8xf32> -> tensor<4x7xf32>
  %later = molten.cumsum %tail axis = 1 : tensor<4x7xf32>
  %1 = molten.pad %later axis = 1 before = 1 : tensor<4x7xf32> -> tensor<4x8xf32>
  %short = molten.slice %x axis = 1 start = 0 : tensor<4x8xf32> -> tensor<4x6xf32>
  %partial = molten.cumsum %short axis = 1 : tensor<4x6xf32>
  %2 = molten.pad %partial axis = 1 before = 1 : tensor<4x6xf32> -> tensor<4x8xf32>
  func.return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @shifts_that_stay(
// CHECK-COUNT-3: molten.cumsum %{{.*}} axis = 1 : tensor<4x{{[67]}}xf32>

// -----

// Unused pure ops are erased.
func.func @dead_ops(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.exp %x : tensor<4x8xf32>
  %1 = molten.log %0 : tensor<4x8xf32>
  func.return %x : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @dead_ops(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    func.return %x : tensor<4x8xf32>
// CHECK-NEXT:  }
