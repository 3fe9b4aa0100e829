// XFAIL: *
// RUN: molten-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// BUG: ScheduleAttr.parse_parameters (dialects/kernel.py) raises "unknown
// schedule field" only after it has consumed the field's name and its `=`,
// and calls parser.raise_error() without a position, so the error points at
// the field's value (`4` below), not at the unknown name the message is
// about. Parse errors point at the offending token (parse-errors.mlir in
// molten_opt/): here, `warps`. (The checks below are the correct behaviour;
// today the column is 81, the caret under `4`.)

func.func @unknown_field() attributes {s = #kernel.schedule<block = 32, warps = 4>} {
  func.return
}

// CHECK:      {{^.*}}schedule-error-location.mlir:[[# @LINE - 4]]:73: error: unknown schedule field 'warps' (fields: block, rows_per_block, vector, elements_per_thread, tile){{$}}
// CHECK-NEXT: {{^}}func.func @unknown_field() attributes {s = #kernel.schedule<block = 32, warps = 4>} {{[{]$}}
// CHECK-NEXT: {{^ {72}\^\^\^\^\^$}}
