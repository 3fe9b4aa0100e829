// RUN: molten-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// A result updating an input in place (molten.updates) names an input of
// its own type, by position, once: otherwise a located error at the
// function, never a traceback.

// CHECK: {{^.*}}updates-invalid.mlir:[[# @LINE + 1]]:1: error: func.func @other_type: result 0's molten.updates: the result tensor<4xf16> must have the type of input 0 (tensor<4xf32>) it updates in place{{$}}
func.func @other_type(%x: tensor<4xf32>) -> (tensor<4xf16> {molten.updates = 0 : i64}) {
  %y = molten.cast %x : tensor<4xf32> to tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// -----

// CHECK: {{^.*}}updates-invalid.mlir:[[# @LINE + 1]]:1: error: func.func @past_the_inputs: result 0's molten.updates is 3; the function has 1 inputs{{$}}
func.func @past_the_inputs(%x: tensor<4xf32>) -> (tensor<4xf32> {molten.updates = 3 : i64}) {
  %y = molten.neg %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// CHECK: {{^.*}}updates-invalid.mlir:[[# @LINE + 1]]:1: error: func.func @a_name: result 0's molten.updates is "x", not an input's position (0 : i64){{$}}
func.func @a_name(%x: tensor<4xf32>) -> (tensor<4xf32> {molten.updates = "x"}) {
  %y = molten.neg %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// CHECK: {{^.*}}updates-invalid.mlir:[[# @LINE + 1]]:1: error: func.func @twice: result 1's molten.updates: input 0 is updated in place by two results{{$}}
func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32> {molten.updates = 0 : i64}, tensor<4xf32> {molten.updates = 0 : i64}) {
  %y = molten.neg %x : tensor<4xf32>
  func.return %y, %y : tensor<4xf32>, tensor<4xf32>
}
// CHECK-NOT: Traceback
