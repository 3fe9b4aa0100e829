// XFAIL: *
// RUN: molten-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// RUN: molten-opt %s --split-input-file --parsing-diagnostics | filecheck %s --check-prefix=NOMODULE

// BUG: ScheduleAttr.parse_parameters (dialects/kernel.py) stores each field
// in a dict, so a field written twice is accepted and the last value wins
// silently: `#kernel.schedule<block = 256, block = 128>` is a schedule of 128
// threads. The parser rejects an unknown field to catch a typo; a repeated
// one is the same kind of mistake and must be an error too. (The checks
// below are the correct behaviour; today both chunks print a module.)
// NOMODULE-NOT: builtin.module

func.func @block_twice() attributes {s = #kernel.schedule<block = 256, block = 128>} {
  func.return
}

// CHECK: {{^.*}}schedule-duplicate-field.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: {{.*}}block{{.*}}

// -----

kernel.func @tile_twice(%a: tensor<4xf32>) -> (tensor<4xf32>) gemm schedule #kernel.schedule<block = 256, tile = [64, 64, 16], tile = [128, 128, 32]> {
  kernel.yield %a : tensor<4xf32>
}

// CHECK: {{^.*}}schedule-duplicate-field.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: {{.*}}tile{{.*}}
