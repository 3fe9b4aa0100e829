// RUN: not molten-opt %s 2>&1 | filecheck %s

// A string literal left open on a long line is a located error at once
// (xDSL's lexer would backtrack exponentially on it and never return).

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> attributes {note = "an unclosed string on a line long enough to hang the lexer's regex} {
// CHECK: {{.*}}unclosed-string.mlir:[[# @LINE - 1]]:69: error: string literal not closed on its line{{$}}
  func.return %x : tensor<4xf32>
}
