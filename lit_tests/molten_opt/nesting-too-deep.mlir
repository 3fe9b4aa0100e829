// RUN: not molten-opt %s 2>&1 | filecheck %s

// Brackets nested deeper than Molten reads (64) are a located error, not a
// RecursionError in the parser. Comments do not count: (((((((((((((((((

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK: {{.*}}nesting-too-deep.mlir:[[# @LINE + 1]]:91: error: brackets nested more than 64 deep; Molten reads specs nested less deeply{{$}}
  %y = "molten.exp"(%x) {a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-NOT: Traceback
