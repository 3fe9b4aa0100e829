// RUN: MOLTEN_ROUNDTRIP
// RUN: MOLTEN_CUSTOM_ROUNDTRIP
// RUN: molten-opt %s --split-input-file -p MOLTEN_LEVEL_PIPELINE | filecheck %s --check-prefix=LEVEL1

// Named dimensions: a ? whose name is in the type's encoding. Ops derive
// their result types with the names: a name matches itself or 1.

// CHECK-LABEL: func.func @gated_norm(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64xf32>, %g: tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]> {
// CHECK-NEXT:    %n = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<?x64xf32, ["T"]>, tensor<64xf32>) -> tensor<?x64xf32, ["T"]>
// CHECK-NEXT:    %s = molten.silu %g : tensor<?x64xf32, ["T"]>
// CHECK-NEXT:    %y = molten.mul %n, %s : (tensor<?x64xf32, ["T"]>, tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]>
func.func @gated_norm(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64xf32>, %g: tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]> {
  %n = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<?x64xf32, ["T"]>, tensor<64xf32>) -> tensor<?x64xf32, ["T"]>
  %s = molten.silu %g : tensor<?x64xf32, ["T"]>
  %y = molten.mul %n, %s : (tensor<?x64xf32, ["T"]>, tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]>
  func.return %y : tensor<?x64xf32, ["T"]>
}

// LEVEL1-LABEL: func.func @gated_norm(
// LEVEL1:         %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<?x64xf32, ["T"]> -> tensor<?x1xf32, ["T"]>
// LEVEL1:         %add = molten.add %reduce_mean, %cst : (tensor<?x1xf32, ["T"]>, tensor<f32>) -> tensor<?x1xf32, ["T"]>

// -----

// A projection into heads: dynamic M, a reshape that keeps T, a transpose
// that moves it, and attention over a dynamic sequence with its causal mask.
// CHECK-LABEL: func.func @heads(
// CHECK:         %q = molten.matmul %x, %wq transpose_b : (tensor<?x128xbf16, ["T"]>, tensor<128x128xbf16>) -> tensor<?x128xbf16, ["T"]>
// CHECK-NEXT:    %h = molten.reshape %q : tensor<?x128xbf16, ["T"]> -> tensor<?x2x64xbf16, ["T"]>
// CHECK-NEXT:    %t = molten.transpose %h permutation = [1, 0, 2] : tensor<?x2x64xbf16, ["T"]> -> tensor<2x?x64xbf16, ["T"]>
// CHECK-NEXT:    %o = molten.attention %t, %t, %t scale = 1.250000e-01 causal : (tensor<2x?x64xbf16, ["T"]>, tensor<2x?x64xbf16, ["T"]>, tensor<2x?x64xbf16, ["T"]>) -> tensor<2x?x64xbf16, ["T"]>
// CHECK-NEXT:    %m = molten.causal_mask : tensor<?x?xf32, ["T", "T"]>
// CHECK-NEXT:    %s = molten.reduce_sum %t axes = [1] : tensor<2x?x64xbf16, ["T"]> -> tensor<2x64xbf16>
func.func @heads(%x: tensor<?x128xbf16, ["T"]>, %wq: tensor<128x128xbf16>) -> tensor<2x?x64xbf16, ["T"]> {
  %q = molten.matmul %x, %wq transpose_b : (tensor<?x128xbf16, ["T"]>, tensor<128x128xbf16>) -> tensor<?x128xbf16, ["T"]>
  %h = molten.reshape %q : tensor<?x128xbf16, ["T"]> -> tensor<?x2x64xbf16, ["T"]>
  %t = molten.transpose %h permutation = [1, 0, 2] : tensor<?x2x64xbf16, ["T"]> -> tensor<2x?x64xbf16, ["T"]>
  %o = molten.attention %t, %t, %t scale = 1.250000e-01 causal : (tensor<2x?x64xbf16, ["T"]>, tensor<2x?x64xbf16, ["T"]>, tensor<2x?x64xbf16, ["T"]>) -> tensor<2x?x64xbf16, ["T"]>
  %m = molten.causal_mask : tensor<?x?xf32, ["T", "T"]>
  %s = molten.reduce_sum %t axes = [1] : tensor<2x?x64xbf16, ["T"]> -> tensor<2x64xbf16>
  func.return %o : tensor<2x?x64xbf16, ["T"]>
}
