// RUN: molten-opt %s --split-input-file -p factor-row-scale,canonicalize,cse,dce | filecheck %s

// rms_norm(x, w) @ [b, c] as molten-decompose writes it, bf16: the row
// scale (rsqrt of the mean square) leaves the lhs, which becomes x * w;
// each product is kept in f32 until it is scaled, then rounded once. The
// two matmuls share the new lhs.
func.func @rms_norm_two_matmuls(%x: tensor<4x64xbf16>, %w: tensor<64xbf16>, %b: tensor<8x64xbf16>, %c: tensor<16x64xbf16>) -> (tensor<4x8xbf16>, tensor<4x16xbf16>) {
  %x_f32 = molten.cast %x : tensor<4x64xbf16> to tensor<4x64xf32>
  %w_f32 = molten.cast %w : tensor<64xbf16> to tensor<64xf32>
  %square = molten.square %x_f32 : tensor<4x64xf32>
  %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x64xf32> -> tensor<4x1xf32>
  %eps = molten.constant dense<1.000000e-06> : tensor<f32>
  %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = molten.rsqrt %add : tensor<4x1xf32>
  %s = molten.mul %x_f32, %r : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %n = molten.mul %s, %w_f32 : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %h = molten.cast %n : tensor<4x64xf32> to tensor<4x64xbf16>
  %y = molten.matmul %h, %b transpose_b : (tensor<4x64xbf16>, tensor<8x64xbf16>) -> tensor<4x8xbf16>
  %z = molten.matmul %h, %c transpose_b : (tensor<4x64xbf16>, tensor<16x64xbf16>) -> tensor<4x16xbf16>
  func.return %y, %z : tensor<4x8xbf16>, tensor<4x16xbf16>
}

// CHECK-LABEL: func.func @rms_norm_two_matmuls
// CHECK:         %r = molten.rsqrt %add : tensor<4x1xf32>
// CHECK-NEXT:    %unscaled = molten.mul %x_f32, %w_f32 : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
// CHECK-NEXT:    %unscaled_1 = molten.cast %unscaled : tensor<4x64xf32> to tensor<4x64xbf16>
// CHECK-NEXT:    %unscaled_product = molten.matmul %unscaled_1, %b transpose_b : (tensor<4x64xbf16>, tensor<8x64xbf16>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y = molten.mul %unscaled_product, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y_1 = molten.cast %y : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT:    %unscaled_product_1 = molten.matmul %unscaled_1, %c transpose_b : (tensor<4x64xbf16>, tensor<16x64xbf16>) -> tensor<4x16xf32>
// CHECK-NEXT:    %z = molten.mul %unscaled_product_1, %r : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:    %z_1 = molten.cast %z : tensor<4x16xf32> to tensor<4x16xbf16>
// CHECK-NEXT:    func.return %y_1, %z_1 : tensor<4x8xbf16>, tensor<4x16xbf16>

// -----

// f32, no casts; scalars are constant along K too: 2 * x * r @ b = (x @ b) * 2 * r.
func.func @f32_scalar(%x: tensor<4x64xf32>, %r: tensor<4x1xf32>, %b: tensor<64x8xf32>) -> tensor<4x8xf32> {
  %two = molten.constant dense<2.000000e+00> : tensor<f32>
  %s = molten.mul %x, %two : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
  %n = molten.mul %s, %r : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %y = molten.matmul %n, %b : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @f32_scalar
// CHECK-NEXT:    %two = molten.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %unscaled_product = molten.matmul %x, %b : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y = molten.mul %unscaled_product, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y_1 = molten.mul %y, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y_1 : tensor<4x8xf32>

// -----

// Left alone: f16 (x * w unscaled may overflow f16), a normalized lhs also
// used elsewhere, a transposed lhs, and a lhs with no factor constant
// along K.
func.func @left_alone(%x: tensor<4x64xf16>, %r: tensor<4x1xf16>, %b: tensor<64x8xf16>, %xf: tensor<4x64xf32>, %rf: tensor<4x1xf32>, %bf: tensor<64x8xf32>, %t: tensor<64x4xf32>, %rt: tensor<1x4xf32>, %w: tensor<64xf32>) -> (tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x64xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %h16 = molten.mul %x, %r : (tensor<4x64xf16>, tensor<4x1xf16>) -> tensor<4x64xf16>
  %y16 = molten.matmul %h16, %b : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
  %h = molten.mul %xf, %rf : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
  %y = molten.matmul %h, %bf : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  %ht = molten.mul %t, %rt : (tensor<64x4xf32>, tensor<1x4xf32>) -> tensor<64x4xf32>
  %yt = molten.matmul %ht, %bf transpose_a : (tensor<64x4xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  %hw = molten.mul %xf, %w : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %yw = molten.matmul %hw, %bf : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  func.return %y16, %y, %h, %yt, %yw : tensor<4x8xf16>, tensor<4x8xf32>, tensor<4x64xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT:    %h16 = molten.mul %x, %r
// CHECK-NEXT:    %y16 = molten.matmul %h16, %b :
// CHECK-NEXT:    %h = molten.mul %xf, %rf
// CHECK-NEXT:    %y = molten.matmul %h, %bf :
// CHECK-NEXT:    %ht = molten.mul %t, %rt
// CHECK-NEXT:    %yt = molten.matmul %ht, %bf transpose_a
// CHECK-NEXT:    %hw = molten.mul %xf, %w
// CHECK-NEXT:    %yw = molten.matmul %hw, %bf :
// CHECK-NEXT:    func.return

// -----

// The scale brings an axis that x lacks (x is 4x64, x * r 1x4x64): the
// product of x alone would have another shape, so it is left alone.
func.func @scale_adds_an_axis(%x: tensor<4x64xf32>, %r: tensor<1x4x1xf32>, %b: tensor<64x8xf32>) -> tensor<1x4x8xf32> {
  %n = molten.mul %x, %r : (tensor<4x64xf32>, tensor<1x4x1xf32>) -> tensor<1x4x64xf32>
  %y = molten.matmul %n, %b : (tensor<1x4x64xf32>, tensor<64x8xf32>) -> tensor<1x4x8xf32>
  func.return %y : tensor<1x4x8xf32>
}

// CHECK-LABEL: func.func @scale_adds_an_axis
// CHECK-NEXT:    %n = molten.mul %x, %r
// CHECK-NEXT:    %y = molten.matmul %n, %b :
