// RUN: not molten-opt %s 2>&1 | filecheck %s

// An op the molten dialect does not define is a located parse error, with no
// module and no traceback.

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.softplus %x : tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// CHECK-NOT:  builtin.module
// CHECK:      {{^.*}}unknown-op.mlir:[[# @LINE - 5]]:{{[0-9]+}}: error: Operation molten.softplus is not registered{{$}}
// CHECK-NEXT: {{^}}  %0 = molten.softplus %x : tensor<4x8xf32>{{$}}
// CHECK-NOT:  {{Traceback|internal error|builtin.module}}
