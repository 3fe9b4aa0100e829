// RUN: molten-opt %s --split-input-file --parsing-diagnostics > %t
// RUN: filecheck %s < %t
// RUN: filecheck %s --check-prefix=NOMODULE < %t
// RUN: not molten-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST

// The kernel dialect's errors found while parsing, under --parsing-diagnostics
// (one located error per chunk, exit 0): the #kernel.schedule syntax (an
// unknown field, a field its family does not take, no family or `block`), a
// kind that is not one of the five, and the
// schedule's verifier, which runs as the attribute is built: a field < 1 is
// reported at the op that holds the schedule. Without --parsing-diagnostics
// the first error ends the run (FIRST).
//
// The column of the schedule field errors is checked in
// schedule-error-location.mlir.
// NOMODULE-NOT: builtin.module

// an unknown field
func.func @unknown_field() attributes {s = #kernel.schedule<gemm_mma, block = 32, warps = 4>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: unknown schedule field 'warps' (a gemm_mma schedule takes block, tile, warp, stages){{$}}
// CHECK-NEXT: {{^}}func.func @unknown_field() attributes {s = #kernel.schedule<gemm_mma, block = 32, warps = 4>} {{[{]$}}

// FIRST:      {{^.*}}parse-errors.mlir:[[# @LINE - 7]]:{{[0-9]+}}: error: unknown schedule field 'warps' (a gemm_mma schedule takes block, tile, warp, stages){{$}}
// FIRST-NOT:  error

// -----

// an unknown field in kernel.fused's schedule (written without the prefix)
func.func @unknown_field_fused(%x: tensor<4xf32>) {
  %0 = kernel.fused pointwise schedule <pointwise, block = 32, tiles = [4]> (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 7]]:{{[0-9]+}}: error: unknown schedule field 'tiles' (a pointwise schedule takes block, vector, elements_per_thread){{$}}

// -----

// a field the family does not take: a tile on a pointwise kernel, split-K on
// mma.sync, k_lanes (a GEMV's) on a wgmma gemm
func.func @tile_on_pointwise() attributes {s = #kernel.schedule<pointwise, block = 32, tile = [64, 64, 16]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a pointwise schedule takes no 'tile' (it takes block, vector, elements_per_thread){{$}}

// -----

kernel.func @split_mma(%a: tensor<4xf32>) -> (tensor<4xf32>) gemm schedule #kernel.schedule<gemm_mma, block = 128, split = 2, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
  kernel.yield %a : tensor<4xf32>
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a gemm_mma schedule takes no 'split' (it takes block, tile, warp, stages){{$}}

// -----

func.func @k_lanes_on_wgmma() attributes {s = #kernel.schedule<gemm_wgmma, block = 128, tile = [64, 64, 64], warp = [64, 64], k_lanes = 4>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a gemm_wgmma schedule takes no 'k_lanes' (it takes block, split, tile, warp, stages){{$}}

// -----

// no family, or one that is not
func.func @no_family() attributes {s = #kernel.schedule<block = 32>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a schedule starts with its family, not 'block' (one of pointwise, row_reduce, scan, scatter, attention, gemv, gemm_simt, gemm_mma, gemm_wgmma, gemm_tma){{$}}

// -----

func.func @unknown_family() attributes {s = #kernel.schedule<gemm, block = 32, tile = [64, 64, 16]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a schedule starts with its family, not 'gemm' (one of pointwise, row_reduce, scan, scatter, attention, gemv, gemm_simt, gemm_mma, gemm_wgmma, gemm_tma){{$}}

// -----

// no `block`
func.func @no_block() attributes {s = #kernel.schedule<row_reduce, rows_per_block = 2, vector = 4>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a schedule needs 'block'{{$}}

// -----

// no field at all
kernel.func @empty_schedule(%a: tensor<4xf32>) -> (tensor<4xf32>) pointwise schedule #kernel.schedule<pointwise> {
  kernel.yield %a : tensor<4xf32>
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a schedule needs 'block'{{$}}

// -----

// nothing, not even the family
kernel.func @no_schedule_at_all(%a: tensor<4xf32>) -> (tensor<4xf32>) pointwise schedule #kernel.schedule<> {
  kernel.yield %a : tensor<4xf32>
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a schedule starts with its family (one of pointwise, row_reduce, scan, scatter, attention, gemv, gemm_simt, gemm_mma, gemm_wgmma, gemm_tma){{$}}

// -----

// a negative field is not even an integer literal there
func.func @negative_block() attributes {s = #kernel.schedule<pointwise, block = -1>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:81: error: Expected integer literal{{$}}

// -----

// a field that is not an integer
func.func @float_vector() attributes {s = #kernel.schedule<pointwise, block = 32, vector = 1.5>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:92: error: Expected integer literal{{$}}

// -----

// block = 0, on a plain attribute: reported at the op holding it
func.func @block_zero() attributes {s = #kernel.schedule<pointwise, block = 0>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<pointwise>: block must be >= 1{{$}}
// CHECK-NEXT: {{^}}func.func @block_zero() attributes {s = #kernel.schedule<pointwise, block = 0>} {{[{]$}}
// CHECK-NEXT: {{^}}^^^^^^^^^{{$}}

// -----

// block = 1000000: more threads than a CUDA block holds, caught as read
// (not after lowering)
func.func @block_too_large() attributes {s = #kernel.schedule<pointwise, block = 1000000>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<pointwise>: block = 1000000 is more threads than a CUDA block holds (1024){{$}}

// -----

// rows_per_block = 0, on kernel.func
kernel.func @rows_zero(%a: tensor<4xf32>) -> (tensor<4xf32>) row_reduce schedule #kernel.schedule<row_reduce, rows_per_block = 0, block = 8> {
  kernel.yield %a : tensor<4xf32>
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: kernel.func: #kernel.schedule<row_reduce>: rows_per_block must be >= 1{{$}}

// -----

// vector = 0, on kernel.fused
func.func @vector_zero(%x: tensor<4xf32>) {
  %0 = kernel.fused pointwise schedule <pointwise, block = 8, vector = 0> (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 7]]:3: error: kernel.fused: #kernel.schedule<pointwise>: vector must be >= 1{{$}}

// -----

// elements_per_thread = 0, in the generic form
func.func @ept_zero() {
  "kernel.fused"() <{kind = #kernel<kind pointwise>, schedule = #kernel.schedule<pointwise, block = 8, elements_per_thread = 0>}> ({
    "kernel.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 6]]:3: error: kernel.fused: #kernel.schedule<pointwise>: elements_per_thread must be >= 1{{$}}

// -----

// a tile size of 0
func.func @tile_zero() attributes {s = #kernel.schedule<gemm_simt, block = 4, tile = [64, 0, 16]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<gemm_simt>: tile sizes must be >= 1{{$}}

// -----

// a negative tile size (tile sizes parse as signed integers)
func.func @tile_negative() attributes {s = #kernel.schedule<gemm_simt, block = 4, tile = [-4]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<gemm_simt>: tile sizes must be >= 1{{$}}

// -----

// an unknown kind, on kernel.fused
func.func @unknown_kind(%x: tensor<4xf32>) {
  %0 = kernel.fused vectorized (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 7]]:21: error: Expected `pointwise`, `row_reduce`, `scan`, `scatter`, `gemm`, or `attention`.{{$}}
// CHECK-NEXT: {{^}}  %0 = kernel.fused vectorized (%x) : (tensor<4xf32>) -> tensor<4xf32> {{[{]$}}
// CHECK-NEXT: {{^}}                    ^^^^^^^^^^{{$}}

// -----

// an unknown kind, on kernel.func
kernel.func @unknown_kind_func(%a: tensor<4xf32>) -> (tensor<4xf32>) elementwise {
  kernel.yield %a : tensor<4xf32>
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:70: error: Expected `pointwise`, `row_reduce`, `scan`, `scatter`, `gemm`, or `attention`.{{$}}

// -----

// kernel.func without a kind
kernel.func @no_kind(%a: tensor<4xf32>) -> (tensor<4xf32>) {
  kernel.yield %a : tensor<4xf32>
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:60: error: Expected `pointwise`, `row_reduce`, `scan`, `scatter`, `gemm`, or `attention`.{{$}}

// -----

// a warp tile of one size
func.func @warp_one_size() attributes {s = #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<gemm_mma>: warp = [64] must give two sizes (a warp's or warpgroup's M, N){{$}}

// -----

// a tensor-core gemm without a tile of M, N and K
func.func @warp_without_tile() attributes {s = #kernel.schedule<gemm_mma, block = 128, warp = [64, 64]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<gemm_mma>: tile = [] must give three sizes (M, N, K){{$}}

// -----

// an attention tile of two sizes
func.func @attention_tile_2d() attributes {s = #kernel.schedule<attention, block = 128, tile = [64, 64], warp = [16, 64]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<attention>: tile = [64, 64] must give three sizes (query rows, keys, head dim){{$}}

// -----

// a persistent gemm of no blocks, and one of part of a cluster
func.func @persistent_zero() attributes {s = #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<gemm_tma>: persistent = 0: a persistent kernel needs its blocks (>= 1){{$}}

// -----

func.func @persistent_part_cluster() attributes {s = #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 131, cluster = 2>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<gemm_tma>: cluster = 2 needs a persistent kernel of whole clusters, not persistent = 131{{$}}

// -----

// a GEMV with a warp tile
func.func @gemv_with_warp() attributes {s = #kernel.schedule<gemv, block = 128, tile = [64, 64, 32], warp = [32, 32], k_lanes = 4>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a gemv schedule takes no 'warp' (it takes block, vector, tile, stages, k_lanes){{$}}

// -----

// no lane splitting K
func.func @k_lanes_zero() attributes {s = #kernel.schedule<gemv, block = 128, tile = [1, 64, 64], k_lanes = 0>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<gemv>: k_lanes must be >= 1{{$}}

// -----

// no stage at all
func.func @stages_zero() attributes {s = #kernel.schedule<gemm_mma, block = 128, tile = [64, 64, 32], warp = [32, 32], stages = 0>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.schedule<gemm_mma>: stages must be >= 1{{$}}

// -----

// #kernel.tiling: an unknown field
func.func @tiling_unknown_field() attributes {t = #kernel.tiling<grid = [1, 1, 1], warps = [2, 2]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: unknown tiling field 'warps' (fields: grid, block, warp, fragment, stages, k_steps, partial, lhs, rhs, split){{$}}

// -----

// #kernel.tiling: fields missing (only warp may be left out)
func.func @tiling_missing() attributes {t = #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a tiling needs 'k_steps', 'partial', 'lhs', 'rhs'{{$}}

// -----

// #kernel.tiling: a footprint pitch shorter than its rows
func.func @tiling_pitch() attributes {t = #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 1, partial = [], lhs = [64, 16, 8], rhs = [16, 64, 64]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.tiling: lhs pitch 8 is shorter than its 16 columns{{$}}

// -----

// #kernel.schedule: a persistent kernel that is not a TMA wgmma gemm
func.func @persistent_mma_sync() attributes {s = #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], persistent = 132>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error: a gemm_mma schedule takes no 'persistent' (it takes block, tile, warp, stages){{$}}

// -----

// #kernel.tiling: a split-K with an empty part (4 K steps in parts of 2)
func.func @tiling_empty_part() attributes {t = #kernel.tiling<grid = [1, 1, 3], block = [64, 64, 64], warp = [64, 64], fragment = [64, 64, 16], stages = 4, k_steps = 4, partial = [], lhs = [64, 64, 64], rhs = [64, 64, 64], split = 3>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.tiling: split = 3 leaves a part of 4 K steps in parts of 2 empty{{$}}

// -----

// #kernel.tiling: partial loops out of order
func.func @tiling_partial() attributes {t = #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 1, partial = [k, m], lhs = [64, 16, 16], rhs = [16, 64, 64]>} {
  func.return
}

// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 4]]:1: error: func.func: #kernel.tiling: partial = [k, m] must name each of m, n, k at most once, in that order{{$}}

// -----

// #kernel.schedule: a cluster on the cp.async wgmma gemm (not persistent)
func.func @cluster_not_persistent() attributes {s = #kernel.schedule<gemm_wgmma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, cluster = 2>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:{{[0-9]+}}: error: a gemm_wgmma schedule takes no 'cluster' (it takes block, split, tile, warp, stages){{$}}

// -----

// #kernel.attention_tiling: partial loops out of order, and a pitch short
// of its columns
func.func @attention_tiling_partial() attributes {t = #kernel.attention_tiling<grid = [3, 2, 1], block = [64, 64, 64], key_steps = 2, partial = [keys, queries], query = [64, 64, 72], key = [64, 64, 72], value = [64, 64, 72]>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:1: error: func.func: #kernel.attention_tiling: partial = [keys, queries] must name each of queries, keys at most once, in that order{{$}}

// -----

func.func @attention_tiling_pitch() attributes {t = #kernel.attention_tiling<grid = [0, 2, 1], block = [64, 64, 64], key_steps = 0, partial = [queries, keys], query = [64, 64, 72], key = [64, 64, 72], value = [64, 64, 32]>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:1: error: func.func: #kernel.attention_tiling: value pitch 32 is shorter than its 64 columns{{$}}

// -----

// #kernel.target: a fact missing
func.func @target_missing_fact() attributes {t = #kernel.target<"gpu", arch = "sm_90", sm_count = 132>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:{{[0-9]+}}: error: #kernel.target needs shared_per_block, shared_per_sm, static_shared_per_block, registers_per_sm, l2_bytes, copy_bytes_per_s, tensor_flops{{$}}

// -----

// #kernel.target: a feature the schedules do not know
func.func @target_feature() attributes {t = #kernel.target<"gpu", arch = "sm_90a", sm_count = 132, shared_per_block = 232448, shared_per_sm = 233472, static_shared_per_block = 49152, registers_per_sm = 65536, l2_bytes = 52428800, copy_bytes_per_s = 3000000000000, tensor_flops = 989000000000000, features = ["wgmma", "fp4"]>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:1: error: func.func: #kernel.target: unknown features fp4 (known: wgmma, tma, clusters){{$}}

// -----

// #kernel.attention_match: a field missing
func.func @attention_match_missing() attributes {t = #kernel.attention_match<query = 0, key = 1, value = 2>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:{{[0-9]+}}: error: an attention match needs 'group'{{$}}

// -----

// #kernel.attention_match: a field given twice
func.func @attention_match_twice() attributes {t = #kernel.attention_match<query = 0, query = 1, key = 1, value = 2, group = 1>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:{{[0-9]+}}: error: an attention match takes each of query, key, value, group = N and causal at most once, not 'query'{{$}}

// -----

// #kernel.attention_match: no query heads in a group
func.func @attention_match_group() attributes {t = #kernel.attention_match<query = 0, key = 1, value = 2, group = 0>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:1: error: func.func: #kernel.attention_match: group must be >= 1{{$}}

// -----

// #kernel.gemm_match: a flag it does not know
func.func @gemm_match_flag() attributes {t = #kernel.gemm_match<siblings>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:{{[0-9]+}}: error: a gemm match takes each of side_by_side, prologue at most once, not 'siblings'{{$}}

// -----

// #kernel.gemm_match: nothing recorded (a plain gemm kernel has no match)
func.func @gemm_match_empty() attributes {t = #kernel.gemm_match<>} {
  func.return
}
// CHECK:      {{^.*}}parse-errors.mlir:[[# @LINE - 3]]:1: error: func.func: #kernel.gemm_match: records side_by_side, prologue or both (a plain gemm kernel has none){{$}}
