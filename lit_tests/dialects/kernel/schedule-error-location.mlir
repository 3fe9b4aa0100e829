// RUN: molten-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// An unknown or repeated #kernel.schedule field is reported at the field's
// name, with carets under it, like every parse error.

func.func @unknown_field() attributes {s = #kernel.schedule<pointwise, block = 32, warps = 4>} {
  func.return
}

// CHECK:      {{^.*}}schedule-error-location.mlir:[[# @LINE - 4]]:84: error: unknown schedule field 'warps' (a pointwise schedule takes block, vector, elements_per_thread){{$}}
// CHECK-NEXT: {{^}}func.func @unknown_field() attributes {s = #kernel.schedule<pointwise, block = 32, warps = 4>} {{[{]$}}
// CHECK-NEXT: {{^ {83}\^+$}}

// -----

func.func @block_twice() attributes {s = #kernel.schedule<pointwise, block = 256, block = 128>} {
  func.return
}

// CHECK:      {{^.*}}schedule-error-location.mlir:[[# @LINE - 4]]:83: error: schedule field 'block' is given twice{{$}}
// CHECK-NEXT: {{^}}func.func @block_twice() attributes {s = #kernel.schedule<pointwise, block = 256, block = 128>} {{[{]$}}
// CHECK-NEXT: {{^ {82}\^+$}}
