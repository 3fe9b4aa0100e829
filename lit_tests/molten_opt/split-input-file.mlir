// RUN: molten-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not molten-opt %s --split-input-file -o %t 2>&1 | filecheck %s --check-prefix=STOP
// RUN: filecheck %s --check-prefix=STOP-OUT --input-file %t

// With --split-input-file each chunk is parsed and verified on its own, and a
// diagnostic names its line in the whole file, not in the chunk. Without
// --verify-diagnostics the first failing chunk ends the run.

func.func @ok(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = molten.neg %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK:      func.func @ok(
// CHECK-NEXT:   %0 = molten.neg %x : tensor<4xf32>
// CHECK:      {{^// -{5}$}}

// STOP-OUT:      func.func @ok(
// STOP-OUT-NEXT:   %0 = molten.neg %x : tensor<4xf32>
// STOP-OUT-NOT:  func.func

// -----

func.func @second(%x: tensor<4x8xf32>, %w: tensor<9xf32>) {
  // Not at column 3: the column is the op's.
      %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>
  func.return
}

// CHECK:      {{^.*}}split-input-file.mlir:[[# @LINE - 4]]:7: error: molten.add: lhs tensor<4x8xf32> and rhs tensor<9xf32> cannot be broadcast together (dimension -1: 8 vs 9){{$}}
// CHECK-NEXT: {{^}}      %0 = molten.add
// CHECK-NEXT: {{^}}      ^{{$}}
// CHECK:      {{^// -{5}$}}

// STOP:       {{^.*}}split-input-file.mlir:[[# @LINE - 9]]:7: error: molten.add: lhs tensor<4x8xf32> and rhs tensor<9xf32> cannot be broadcast together (dimension -1: 8 vs 9){{$}}
// STOP-NOT:   error

// -----

func.func @third(%x: tensor<4x8xf32>) {
  %0 = molten.softmax %x axis = 2 : tensor<4x8xf32>
  func.return
}

// CHECK:      {{^.*}}split-input-file.mlir:[[# @LINE - 4]]:3: error: molten.softmax: axis 2 is out of range for input tensor<4x8xf32> (axis is in [0, 2)){{$}}

// -----

func.func @fourth(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.sigmoid %x : tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK:      func.func @fourth(
// CHECK-NEXT:   %0 = molten.sigmoid %x : tensor<4x8xf32>
