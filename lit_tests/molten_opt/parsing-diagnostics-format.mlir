// RUN: molten-opt %s --parsing-diagnostics | filecheck %s

// Under --parsing-diagnostics a parse error has the same layout as without
// it and as verifier errors: `file:line:col: error: message`.

func.func @missing_colon(%x: tensor<4x8xf32>) {
  %0 = molten.exp %x tensor<4x8xf32>
  func.return
}

// CHECK: {{^.*}}parsing-diagnostics-format.mlir:[[# @LINE - 4]]:22: error: Expected ':'{{$}}
