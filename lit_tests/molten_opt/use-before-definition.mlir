// RUN: molten-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A value used before its definition, or by the op that defines it, is a
// located error when the spec is read (xDSL's verifier does not check
// dominance; passes used to fail on it with KeyError or RecursionError).

func.func @use_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK: {{.*}}use-before-definition.mlir:[[# @LINE + 1]]:3: error: molten.exp: operand 0 uses %z, defined later: a value must be defined before its first use (SSA dominance){{$}}
  %y = molten.exp %z : tensor<4xf32>
  %z = molten.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @own_result(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK: {{.*}}use-before-definition.mlir:[[# @LINE + 1]]:3: error: molten.add: operand 0 uses its own result: a value must be defined before its first use (SSA dominance){{$}}
  %y = molten.add %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A return of a value defined later.
func.func @return_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK: {{.*}}use-before-definition.mlir:[[# @LINE + 1]]:3: error: func.return: operand 0 uses %y, defined later: a value must be defined before its first use (SSA dominance){{$}}
  func.return %y : tensor<4xf32>
  %y = molten.exp %x : tensor<4xf32>
}

// -----

// Well-formed: no error, the function is printed.
// CHECK: func.func @fine
func.func @fine(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = molten.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
