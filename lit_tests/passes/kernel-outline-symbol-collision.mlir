// RUN: molten-opt %s --split-input-file -p kernel-outline | filecheck %s

// kernel-outline never reuses a name any symbol of the module has: here a
// func.func is already @g_pointwise0, so the kernel is @g_pointwise1.

func.func @g_pointwise0(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kernel.fused pointwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = molten.exp %a : tensor<4xf32>
    kernel.yield %e : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @g_pointwise0(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    func.return %x : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @g_pointwise1(%a: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["exp"]} {
// CHECK-NEXT:    %e = molten.exp %a : tensor<4xf32>
// CHECK-NEXT:    kernel.yield %e : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %y = kernel.launch @g_pointwise1(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %y : tensor<4xf32>
// CHECK-NEXT:  }
