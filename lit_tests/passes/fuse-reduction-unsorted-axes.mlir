// RUN: molten-opt %s --split-input-file -p fuse-reduction | filecheck %s

// Reduction axes are a set: `axes = [2, 1] keepdim` reduces the same
// trailing rows as `axes = [1, 2]`, so it is a row reduction and fuses with
// the division into one kernel (no transpose).

func.func @unsorted_trailing_axes(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = molten.reduce_sum %x axes = [2, 1] keepdim : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
  %y = molten.div %x, %s : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  func.return %y : tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @unsorted_trailing_axes(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NOT:     molten.transpose
// CHECK-NEXT:    %y = kernel.fused row_reduce(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<2x4x8xf32>):
// CHECK-NEXT:      %s = molten.reduce_sum %x_1 axes = [{{2, 1|1, 2}}] keepdim : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:      %y_1 = molten.div %x_1, %s : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<2x4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x4x8xf32>
// CHECK-NEXT:  }
