// RUN: molten-opt %s --split-input-file -p fuse-scan | filecheck %s

// fuse-scan: each cumsum grows into one `scan` kernel.fused through the
// elementwise ops of its shape (producers and users) and the smaller
// elementwise producers that broadcast in. The CHECK lines show the IR after
// this pass alone.

// A scaled input, a bias broadcast in, an epilogue: one group that reads x
// and b and writes the result.
func.func @scaled(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %half = molten.constant dense<5.000000e-01> : tensor<f32>
  %scaled = molten.mul %x, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %biased = molten.add %scaled, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %running = molten.cumsum %biased axis = 1 : tensor<4x8xf32>
  %y = molten.exp %running : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @scaled(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %half = molten.constant
// CHECK-NEXT:    %y = kernel.fused scan(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x8xf32>, %b_1: tensor<8xf32>):
// CHECK-NEXT:      %half_1 = molten.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:      %scaled = molten.mul %x_1, %half_1 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %biased = molten.add %scaled, %b_1 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %running = molten.cumsum %biased axis = 1 : tensor<4x8xf32>
// CHECK-NEXT:      %y_1 = molten.exp %running : tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %y_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// Two scans in a row are two kernels: the second reads the first's result.
// A reverse exclusive scan along the first axis (strided rows) keeps its
// attributes.
func.func @twice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %across = molten.cumsum %x axis = 1 : tensor<4x8xf32>
  %down = molten.cumsum %across axis = 0 reverse exclusive : tensor<4x8xf32>
  func.return %down : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @twice(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %across = kernel.fused scan(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK:           molten.cumsum %{{.*}} axis = 1 : tensor<4x8xf32>
// CHECK:         %down = kernel.fused scan(%across) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK:           molten.cumsum %{{.*}} axis = 0 reverse exclusive : tensor<4x8xf32>
// CHECK:         func.return %down : tensor<4x8xf32>

// -----

// An elementwise producer that a matmul also reads is written once by the
// scan's group (the matmul's kernel cannot recompute it), and the scan's
// users of another shape stay outside.
func.func @shared(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x1xf32>) {
  %e = molten.exp %x : tensor<4x8xf32>
  %running = molten.cumsum %e axis = 1 : tensor<4x8xf32>
  %p = molten.matmul %e, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %s = molten.reduce_sum %running axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return %running, %p, %s : tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x1xf32>
}

// CHECK-LABEL: func.func @shared(
// CHECK-NEXT:    %e, %running = kernel.fused scan(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK:           %e_1 = molten.exp %x_1 : tensor<4x8xf32>
// CHECK-NEXT:      %running_1 = molten.cumsum %e_1 axis = 1 : tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %e_1, %running_1 : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %p = molten.matmul %e, %w
// CHECK-NEXT:    %s = molten.reduce_sum %running axes = [1]
