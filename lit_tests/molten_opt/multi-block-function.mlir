// RUN: not molten-opt %s 2>&1 | filecheck %s
// RUN: not molten compile %s -o %t 2>&1 | filecheck %s

// A function of two blocks (a branch target): Molten's functions are one
// block of ops. The error points at the function, from molten-opt and from
// molten compile alike (no Python traceback).
func.func @two_blocks(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.neg %x : tensor<4x8xf32>
^bb1:
  func.return %0 : tensor<4x8xf32>
}

// CHECK:      {{^.*}}multi-block-function.mlir:7:1: error: func.func @two_blocks has a body of 2 blocks; a Molten function is one block of ops, without branches{{$}}
// CHECK-NEXT: {{^}}func.func @two_blocks(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {{{$}}
// CHECK-NOT:  Traceback
