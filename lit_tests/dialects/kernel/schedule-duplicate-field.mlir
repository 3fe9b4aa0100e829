// RUN: molten-opt %s --split-input-file --parsing-diagnostics > %t
// RUN: filecheck %s < %t
// RUN: filecheck %s --check-prefix=NOMODULE < %t

// A #kernel.schedule field written twice is an error, as an unknown field is
// (the last value used to win silently: `#kernel.schedule<block = 256,
// block = 128>` was a schedule of 128 threads). The column is checked in
// schedule-error-location.mlir.
// NOMODULE-NOT: builtin.module

func.func @block_twice() attributes {s = #kernel.schedule<pointwise, block = 256, block = 128>} {
  func.return
}

// CHECK: {{^.*}}schedule-duplicate-field.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: schedule field 'block' is given twice{{$}}

// -----

kernel.func @tile_twice(%a: tensor<4xf32>) -> (tensor<4xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16], tile = [128, 128, 32]> {
  kernel.yield %a : tensor<4xf32>
}

// CHECK: {{^.*}}schedule-duplicate-field.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: schedule field 'tile' is given twice{{$}}

// -----

// in kernel.fused's custom form
func.func @vector_twice(%x: tensor<4xf32>) {
  %0 = kernel.fused pointwise schedule <pointwise, block = 32, vector = 2, vector = 4> (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// CHECK: {{^.*}}schedule-duplicate-field.mlir:[[# @LINE - 7]]:{{[0-9]+}}: error: schedule field 'vector' is given twice{{$}}
