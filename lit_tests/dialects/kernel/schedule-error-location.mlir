// RUN: molten-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// An unknown or repeated #kernel.schedule field is reported at the field's
// name, with carets under it, like every parse error.

func.func @unknown_field() attributes {s = #kernel.schedule<block = 32, warps = 4>} {
  func.return
}

// CHECK:      {{^.*}}schedule-error-location.mlir:[[# @LINE - 4]]:73: error: unknown schedule field 'warps' (fields: block, rows_per_block, vector, elements_per_thread, split, tile, warp, stages, k_lanes, mma_warps, pack, persistent, cluster){{$}}
// CHECK-NEXT: {{^}}func.func @unknown_field() attributes {s = #kernel.schedule<block = 32, warps = 4>} {{[{]$}}
// CHECK-NEXT: {{^ {72}\^+$}}

// -----

func.func @block_twice() attributes {s = #kernel.schedule<block = 256, block = 128>} {
  func.return
}

// CHECK:      {{^.*}}schedule-error-location.mlir:[[# @LINE - 4]]:72: error: schedule field 'block' is given twice{{$}}
// CHECK-NEXT: {{^}}func.func @block_twice() attributes {s = #kernel.schedule<block = 256, block = 128>} {{[{]$}}
// CHECK-NEXT: {{^ {71}\^+$}}
