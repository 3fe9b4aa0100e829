// RUN: molten-opt %s --split-input-file -p merge-size-classes | filecheck %s

// Copies whose kernels are alike join: one range for both. A copy fused
// otherwise stays apart.

// CHECK:      func.func @g_T1(%x: tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 1 <= T <= 8>} {
// CHECK-NEXT:   %y = kernel.fused pointwise(%x)
// CHECK:      func.func @g_T9(%x: tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 9 <= T>} {
// CHECK-NEXT:   %y = kernel.fused row_reduce(%x)
// CHECK-NOT:  func.func @g

func.func @g_T1(%x: tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 1 <= T <= 4>} {
  %y = kernel.fused pointwise (%x) : (tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> {
  ^bb0(%a: tensor<?x8xf32, ["T"]>):
    %e = molten.exp %a : tensor<?x8xf32, ["T"]>
    kernel.yield %e : tensor<?x8xf32, ["T"]>
  }
  func.return %y : tensor<?x8xf32, ["T"]>
}
func.func @g_T5(%x: tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 5 <= T <= 8>} {
  %y = kernel.fused pointwise (%x) : (tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> {
  ^bb0(%a: tensor<?x8xf32, ["T"]>):
    %e = molten.exp %a : tensor<?x8xf32, ["T"]>
    kernel.yield %e : tensor<?x8xf32, ["T"]>
  }
  func.return %y : tensor<?x8xf32, ["T"]>
}
func.func @g_T9(%x: tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 9 <= T>} {
  %y = kernel.fused row_reduce (%x) : (tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> {
  ^bb0(%a: tensor<?x8xf32, ["T"]>):
    %m = molten.reduce_max %a axes = [1] keepdim : tensor<?x8xf32, ["T"]> -> tensor<?x1xf32, ["T"]>
    %e = molten.sub %a, %m : (tensor<?x8xf32, ["T"]>, tensor<?x1xf32, ["T"]>) -> tensor<?x8xf32, ["T"]>
    kernel.yield %e : tensor<?x8xf32, ["T"]>
  }
  func.return %y : tensor<?x8xf32, ["T"]>
}

// -----

// All copies alike: the graph again, under its own name and unmarked.

// CHECK:      func.func @h(%x: tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> {
// CHECK-NEXT:   %y = kernel.fused pointwise(%x)
// CHECK-NOT:  func.func

func.func @h_T1(%x: tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@h, 1 <= T <= 8>} {
  %y = kernel.fused pointwise (%x) : (tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> {
  ^bb0(%a: tensor<?x8xf32, ["T"]>):
    %e = molten.exp %a : tensor<?x8xf32, ["T"]>
    kernel.yield %e : tensor<?x8xf32, ["T"]>
  }
  func.return %y : tensor<?x8xf32, ["T"]>
}
func.func @h_T9(%x: tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@h, 9 <= T>} {
  %y = kernel.fused pointwise (%x) : (tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]> {
  ^bb0(%a: tensor<?x8xf32, ["T"]>):
    %e = molten.exp %a : tensor<?x8xf32, ["T"]>
    kernel.yield %e : tensor<?x8xf32, ["T"]>
  }
  func.return %y : tensor<?x8xf32, ["T"]>
}
