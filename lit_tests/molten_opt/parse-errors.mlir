// RUN: molten-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// RUN: not molten-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=NODIAG

// Parse errors name the file, line and column of the offending token, show
// the source line and underline the token, as `file:line:col: error: message`
// in both modes: under --parsing-diagnostics on stdout with exit 0, one per
// chunk; without it the first one on stderr with a non-zero exit.

func.func @missing_colon(%x: tensor<4x8xf32>) {
  %0 = molten.exp %x tensor<4x8xf32>
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:22: error: Expected ':'{{$}}
// CHECK-NEXT: {{^}}  %0 = molten.exp %x tensor<4x8xf32>{{$}}
// CHECK-NEXT: {{^}}                     ^^^^^^{{$}}

// NODIAG:      {{^.*}}parse-errors.mlir:[[# @LINE - 8]]:22: error: Expected ':'{{$}}
// NODIAG-NEXT: {{^}}  %0 = molten.exp %x tensor<4x8xf32>{{$}}
// NODIAG-NEXT: {{^}}                     ^^^^^^{{$}}
// NODIAG-NOT:  error

// -----

func.func @unknown_op(%x: tensor<4x8xf32>) {
  %0 = molten.frobnicate %x : tensor<4x8xf32>
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: Operation molten.frobnicate is not registered{{$}}
// CHECK-NEXT: {{^}}  %0 = molten.frobnicate %x : tensor<4x8xf32>{{$}}

// -----

func.func @bad_axes(%x: tensor<4x8xf32>) {
  %0 = molten.reduce_sum %x axes = 1 : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:36: error: '[' expected{{$}}
// CHECK-NEXT: {{^}}  %0 = molten.reduce_sum %x axes = 1 : tensor<4x8xf32> -> tensor<4xf32>{{$}}
// CHECK-NEXT: {{^}}                                   ^{{$}}

// -----

func.func @eps_with_type(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
  %0 = molten.rms_norm %x, %w eps = 1.0e-06 : f32 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:47: error: Expected '('{{$}}
// CHECK-NEXT: {{^}}  %0 = molten.rms_norm %x, %w eps = 1.0e-06 : f32 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>{{$}}
// CHECK-NEXT: {{^}}                                              ^^^{{$}}

// -----

func.func @unknown_dialect(%x: tensor<4x8xf32>) {
  %0 = foo.bar %x : tensor<4x8xf32>
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: Operation foo.bar is not registered{{$}}
// CHECK-NEXT: {{^}}  %0 = foo.bar %x : tensor<4x8xf32>{{$}}

