// RUN: not molten-opt %s 2>&1 | filecheck %s
// RUN: molten-opt %s --verify-diagnostics | filecheck %s --check-prefix=VERIFY

// A shape error is a located diagnostic, `file:line:col: error: message`,
// then the source line and a caret under the op; molten-opt exits non-zero,
// prints no module and no Python traceback. Under --verify-diagnostics the
// same diagnostic goes to stdout (stderr is not piped here) with exit 0.

builtin.module {
  func.func @nested(%x: tensor<4x8xf32>) -> tensor<31xf32> {
    %0 = molten.exp %x : tensor<4x8xf32>
    %1 = molten.reshape %0 : tensor<4x8xf32> -> tensor<31xf32>
    func.return %1 : tensor<31xf32>
  }
}

// CHECK-NOT:   builtin.module
// CHECK:       {{^.*}}shape-error.mlir:[[# @LINE - 6]]:5: error: molten.reshape: input tensor<4x8xf32> has 32 elements but result tensor<31xf32> has 31{{$}}
// CHECK-NEXT:  {{^}}    %1 = molten.reshape %0 : tensor<4x8xf32> -> tensor<31xf32>{{$}}
// CHECK-NEXT:  {{^}}    ^{{$}}
// CHECK-NOT:   {{Traceback|internal error|builtin.module}}

// VERIFY:      {{^.*}}shape-error.mlir:[[# @LINE - 11]]:5: error: molten.reshape: input tensor<4x8xf32> has 32 elements but result tensor<31xf32> has 31{{$}}
// VERIFY-NEXT: {{^}}    %1 = molten.reshape %0 : tensor<4x8xf32> -> tensor<31xf32>{{$}}
// VERIFY-NEXT: {{^}}    ^{{$}}
// VERIFY-NOT:  builtin.module
