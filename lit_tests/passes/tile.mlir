// RUN: sed '/^\/\/ ERROR CASES$/,$d' %s | molten-opt --split-input-file -p tile | filecheck %s
// RUN: sed '/^\/\/ ERROR CASES$/,$d' %s | molten-opt -p tile | molten-opt -p tile | filecheck %s
// RUN: sed -n '/^\/\/ ERROR CASES$/,$p' %s | molten-opt --split-input-file --verify-diagnostics -p tile | filecheck %s --check-prefix=ERR
// RUN: sed -n '/^\/\/ BEGIN NO-SCHEDULE$/,/^\/\/ END NO-SCHEDULE$/p' %s | not molten-opt -p tile 2>&1 | filecheck %s --check-prefix=NO-SCHEDULE
// RUN: sed -n '/^\/\/ BEGIN NO-SCHEDULE$/,/^\/\/ END NO-SCHEDULE$/p' %s | molten-opt -p kernel-schedule,tile | filecheck %s --check-prefix=SCHEDULED

// tile: each gemm kernel.func with a schedule gets a #kernel.tiling derived
// with islpy from its iteration domain S[b, i, j, k], its access relations
// and the schedule's tile sizes: the grid (N tiles, M tiles, batches), the
// block, warp and fragment tiles, the K steps, the loops whose last tile is
// partial, and each operand's per-K-step footprint [rows, cols, pitch] in
// its storage order. An attention kernel gets a #kernel.attention_tiling
// the same way (tiles of query rows, key steps, partial loops, the Q, K
// and V boxes). Running the pass twice changes nothing (a tiling already
// there is kept), and other kernels are left as they are.

// Tensor cores, f16, 256x256x64: the 128x128x32 block tiles divide the
// matrices: a 2x2 grid, two K steps, no partial tile. A's footprint is a
// 128x32 box of its rows, B's 32x128, each padded by 8 halves (16 bytes) a
// row in shared memory.
kernel.func @tc_f16(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> attributes {fused_ops = ["matmul"]} {
  %m = molten.matmul %a, %b : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}

// Tensor cores, f16, M = 200, N = 136, K = 72: the last tile along each of
// M, N and K sticks out; K takes ceil(72 / 32) = 3 steps.
kernel.func @tc_partial(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>, %bias: tensor<136xf16>) -> (tensor<200x136xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<200x72xf16>, tensor<72x136xf16>) -> tensor<200x136xf16>
  %r = molten.add %m, %bias : (tensor<200x136xf16>, tensor<136xf16>) -> tensor<200x136xf16>
  kernel.yield %r : tensor<200x136xf16>
}

// Tensor cores, bf16, both operands transposed: A is stored [K, M] (its
// footprint is 32 rows of K by 128 columns of M), B is stored [N, K] (128
// rows of N by 32 columns of K). M = 72 and N = 40 leave partial tiles.
kernel.func @tc_transposed(%a: tensor<64x72xbf16>, %b: tensor<40x64xbf16>) -> (tensor<72x40xbf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
  %m = molten.matmul %a, %b transpose_a transpose_b : (tensor<64x72xbf16>, tensor<40x64xbf16>) -> tensor<72x40xbf16>
  kernel.yield %m : tensor<72x40xbf16>
}

// Batched: 2x3 batches (grid z = 6), A [3, M, K] broadcast over the first
// batch axis, B [2, 1, K, N] over the second; the footprints are boxes of
// one matrix each.
kernel.func @tc_batched(%a: tensor<3x128x64xf16>, %b: tensor<2x1x64x256xf16>) -> (tensor<2x3x128x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<3x128x64xf16>, tensor<2x1x64x256xf16>) -> tensor<2x3x128x256xf16>
  kernel.yield %m : tensor<2x3x128x256xf16>
}

// A lhs without batch axes, read the same for each of the 4 batches.
kernel.func @tc_shared_weight(%x: tensor<64x512xbf16>, %w: tensor<4x512x64xbf16>) -> (tensor<4x64x64xbf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
  %m = molten.matmul %x, %w : (tensor<64x512xbf16>, tensor<4x512x64xbf16>) -> tensor<4x64x64xbf16>
  kernel.yield %m : tensor<4x64x64xbf16>
}

// wgmma (mma_warps = 4), f16, 256x512x128: two warpgroups of 64x256 on
// 128x256x64 block tiles (256 threads), a 2x2 grid, two K steps of one
// 128-byte row (64 halves), no partial tile. The fragment is one
// m64n256k16, a warpgroup's whole warp tile; the footprints are unpadded
// (pitch = cols): wgmma's tiles are swizzled, not skewed.
kernel.func @wgmma_f16(%a: tensor<256x128xf16>, %b: tensor<128x512xf16>) -> (tensor<256x512xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 64], warp = [64, 256], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x128xf16>, tensor<128x512xf16>) -> tensor<256x512xf16>
  kernel.yield %m : tensor<256x512xf16>
}

// wgmma, f16, M = 200, N = 300, K = 100 with a bias: the last tile along
// each of M, N and K sticks out; K takes ceil(100 / 64) = 2 steps.
kernel.func @wgmma_partial(%a: tensor<200x100xf16>, %b: tensor<100x300xf16>, %bias: tensor<300xf16>) -> (tensor<200x300xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 64], warp = [64, 256], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<200x100xf16>, tensor<100x300xf16>) -> tensor<200x300xf16>
  %r = molten.add %m, %bias : (tensor<200x300xf16>, tensor<300xf16>) -> tensor<200x300xf16>
  kernel.yield %r : tensor<200x300xf16>
}

// wgmma, bf16, A transposed (stored [K, M]: its footprint is 64 rows of K
// by 128 columns of M, unpadded), on the 128x128 tiles of two 64x128
// warpgroups: the fragment is m64n128k16. M = 72 leaves a partial tile.
kernel.func @wgmma_transposed_a(%a: tensor<192x72xbf16>, %b: tensor<192x128xbf16>) -> (tensor<72x128xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 128, 64], warp = [64, 128], stages = 4> {
  %m = molten.matmul %a, %b transpose_a : (tensor<192x72xbf16>, tensor<192x128xbf16>) -> tensor<72x128xbf16>
  kernel.yield %m : tensor<72x128xbf16>
}

// wgmma, bf16, B transposed (stored [N, K]: 96 rows of N by 64 of K), one
// warpgroup (128 threads) on a 64x96 tile: N = 96, a multiple of 8 that is
// not a power of two, is the fragment's N.
kernel.func @wgmma_transposed_b(%a: tensor<128x64xbf16>, %b: tensor<96x64xbf16>) -> (tensor<128x96xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, tile = [64, 96, 64], warp = [64, 96], stages = 3> {
  %m = molten.matmul %a, %b transpose_b : (tensor<128x64xbf16>, tensor<96x64xbf16>) -> tensor<128x96xbf16>
  kernel.yield %m : tensor<128x96xbf16>
}

// wgmma with split-K (split = 3), bf16, B stored [N, K]: 20 rows (a
// partial 64-row tile of one warpgroup), K = 1000 in ceil(1000 / 64) = 16
// steps, three parts of 6, 6 and 4 steps, one block each: the grid's z is
// batches x split = 3, and the tiling says split = 3.
kernel.func @wgmma_split(%a: tensor<20x1000xbf16>, %b: tensor<256x1000xbf16>) -> (tensor<20x256xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, split = 3, tile = [64, 64, 64], warp = [64, 64], stages = 8> {
  %m = molten.matmul %a, %b transpose_b : (tensor<20x1000xbf16>, tensor<256x1000xbf16>) -> tensor<20x256xbf16>
  kernel.yield %m : tensor<20x256xbf16>
}

// A persistent wgmma gemm fed by TMA (persistent = 7 blocks): two consumer
// warpgroups of 64x256 and a producer warpgroup, 384 threads; the tiling
// is the wgmma one's.
kernel.func @wgmma_persistent(%a: tensor<300x520xbf16>, %b: tensor<1000x520xbf16>) -> (tensor<300x1000xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 7> {
  %m = molten.matmul %a, %b transpose_b : (tensor<300x520xbf16>, tensor<1000x520xbf16>) -> tensor<300x1000xbf16>
  kernel.yield %m : tensor<300x1000xbf16>
}

// SIMT, f32: 64x64x16 block tiles, no warp tile, 4x4x1 fragments (a
// thread's micro-tile), one stage, unpadded rows.
kernel.func @simt_f32(%a: tensor<100x30xf32>, %b: tensor<30x70xf32>) -> (tensor<100x70xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> {
  %m = molten.matmul %a, %b : (tensor<100x30xf32>, tensor<30x70xf32>) -> tensor<100x70xf32>
  kernel.yield %m : tensor<100x70xf32>
}

// SIMT, 128x128x8 tiles on 256 threads: 8x8 micro-tiles.
kernel.func @simt_large(%a: tensor<256x40xf32>, %b: tensor<40x200xf32>) -> (tensor<256x200xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [128, 128, 8]> {
  %m = molten.matmul %a, %b : (tensor<256x40xf32>, tensor<40x200xf32>) -> tensor<256x200xf32>
  kernel.yield %m : tensor<256x200xf32>
}

// A GEMV (k_lanes = 32): 3 rows, runs of 4 f32 columns, 8 runs (32 columns)
// a block, K split 32 ways: the fragment is a thread's share, 3 rows by 4
// columns by 320 / 32 = 10 elements of K, in one K step of 320; K = 300
// and N = 72 leave partial tiles.
// f32 on tensor cores (3xTF32): k8 fragments; A stored [M, K] padded by 16
// bytes (ldmatrix), B stored [K, N] by 32 (read an element a lane).
kernel.func @tf32(%a: tensor<200x72xf32>, %b: tensor<72x136xf32>) -> (tensor<200x136xf32>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 16], warp = [64, 64], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<200x72xf32>, tensor<72x136xf32>) -> tensor<200x136xf32>
  kernel.yield %m : tensor<200x136xf32>
}
kernel.func @gemv_f32(%a: tensor<3x300xf32>, %b: tensor<300x72xf32>) -> (tensor<3x72xf32>) gemm schedule #kernel.schedule<gemv, block = 256, vector = 4, tile = [3, 32, 320], stages = 4, k_lanes = 32> {
  %m = molten.matmul %a, %b : (tensor<3x300xf32>, tensor<300x72xf32>) -> tensor<3x72xf32>
  kernel.yield %m : tensor<3x72xf32>
}

// Left as they are: a pointwise kernel, and a gemm kernel already tiled (its
// lhs pitch of 20 is not what the pass derives: it is kept as written).
kernel.func @pointwise(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 4, elements_per_thread = 4> {
  %e = molten.exp %x : tensor<4x8xf32>
  kernel.yield %e : tensor<4x8xf32>
}
kernel.func @tiled(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> tiling #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 1, partial = [m, n, k], lhs = [64, 16, 20], rhs = [16, 64, 64]> {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}

// CHECK-LABEL: kernel.func @tc_f16(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 2, partial = [], lhs = [128, 32, 40], rhs = [32, 128, 136]> attributes {fused_ops = ["matmul"]} {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
// CHECK-NEXT:    kernel.yield %m : tensor<256x256xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @tc_partial(%a: tensor<200x72xf16>, %b: tensor<72x136xf16>, %bias: tensor<136xf16>) -> (tensor<200x136xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 3, partial = [m, n, k], lhs = [128, 32, 40], rhs = [32, 128, 136]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<200x72xf16>, tensor<72x136xf16>) -> tensor<200x136xf16>
// CHECK-NEXT:    %r = molten.add %m, %bias : (tensor<200x136xf16>, tensor<136xf16>) -> tensor<200x136xf16>
// CHECK-NEXT:    kernel.yield %r : tensor<200x136xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @tc_transposed(%a: tensor<64x72xbf16>, %b: tensor<40x64xbf16>) -> (tensor<72x40xbf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [1, 1, 1], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 2, partial = [m, n], lhs = [32, 128, 136], rhs = [128, 32, 40]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b transpose_a transpose_b : (tensor<64x72xbf16>, tensor<40x64xbf16>) -> tensor<72x40xbf16>
// CHECK-NEXT:    kernel.yield %m : tensor<72x40xbf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @tc_batched(%a: tensor<3x128x64xf16>, %b: tensor<2x1x64x256xf16>) -> (tensor<2x3x128x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [2, 1, 6], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 2, partial = [], lhs = [128, 32, 40], rhs = [32, 128, 136]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<3x128x64xf16>, tensor<2x1x64x256xf16>) -> tensor<2x3x128x256xf16>
// CHECK-NEXT:    kernel.yield %m : tensor<2x3x128x256xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @tc_shared_weight(%x: tensor<64x512xbf16>, %w: tensor<4x512x64xbf16>) -> (tensor<4x64x64xbf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [1, 1, 4], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 16, partial = [m, n], lhs = [128, 32, 40], rhs = [32, 128, 136]> {
// CHECK-NEXT:    %m = molten.matmul %x, %w : (tensor<64x512xbf16>, tensor<4x512x64xbf16>) -> tensor<4x64x64xbf16>
// CHECK-NEXT:    kernel.yield %m : tensor<4x64x64xbf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @wgmma_f16(%a: tensor<256x128xf16>, %b: tensor<128x512xf16>) -> (tensor<256x512xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 64], warp = [64, 256], stages = 4> tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 256, 64], warp = [64, 256], fragment = [64, 256, 16], stages = 4, k_steps = 2, partial = [], lhs = [128, 64, 64], rhs = [64, 256, 256]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<256x128xf16>, tensor<128x512xf16>) -> tensor<256x512xf16>
// CHECK-NEXT:    kernel.yield %m : tensor<256x512xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @wgmma_partial(%a: tensor<200x100xf16>, %b: tensor<100x300xf16>, %bias: tensor<300xf16>) -> (tensor<200x300xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 64], warp = [64, 256], stages = 4> tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 256, 64], warp = [64, 256], fragment = [64, 256, 16], stages = 4, k_steps = 2, partial = [m, n, k], lhs = [128, 64, 64], rhs = [64, 256, 256]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<200x100xf16>, tensor<100x300xf16>) -> tensor<200x300xf16>
// CHECK-NEXT:    %r = molten.add %m, %bias : (tensor<200x300xf16>, tensor<300xf16>) -> tensor<200x300xf16>
// CHECK-NEXT:    kernel.yield %r : tensor<200x300xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @wgmma_transposed_a(%a: tensor<192x72xbf16>, %b: tensor<192x128xbf16>) -> (tensor<72x128xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 128, 64], warp = [64, 128], stages = 4> tiling #kernel.tiling<grid = [1, 1, 1], block = [128, 128, 64], warp = [64, 128], fragment = [64, 128, 16], stages = 4, k_steps = 3, partial = [m], lhs = [64, 128, 128], rhs = [64, 128, 128]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b transpose_a : (tensor<192x72xbf16>, tensor<192x128xbf16>) -> tensor<72x128xbf16>
// CHECK-NEXT:    kernel.yield %m : tensor<72x128xbf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @wgmma_transposed_b(%a: tensor<128x64xbf16>, %b: tensor<96x64xbf16>) -> (tensor<128x96xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, tile = [64, 96, 64], warp = [64, 96], stages = 3> tiling #kernel.tiling<grid = [1, 2, 1], block = [64, 96, 64], warp = [64, 96], fragment = [64, 96, 16], stages = 3, k_steps = 1, partial = [], lhs = [64, 64, 64], rhs = [96, 64, 64]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b transpose_b : (tensor<128x64xbf16>, tensor<96x64xbf16>) -> tensor<128x96xbf16>
// CHECK-NEXT:    kernel.yield %m : tensor<128x96xbf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @wgmma_split(%a: tensor<20x1000xbf16>, %b: tensor<256x1000xbf16>) -> (tensor<20x256xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, split = 3, tile = [64, 64, 64], warp = [64, 64], stages = 8> tiling #kernel.tiling<grid = [4, 1, 3], block = [64, 64, 64], warp = [64, 64], fragment = [64, 64, 16], stages = 8, k_steps = 16, partial = [m, k], lhs = [64, 64, 64], rhs = [64, 64, 64], split = 3> {
// CHECK-NEXT:    %m = molten.matmul %a, %b transpose_b : (tensor<20x1000xbf16>, tensor<256x1000xbf16>) -> tensor<20x256xbf16>
// CHECK-NEXT:    kernel.yield %m : tensor<20x256xbf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @wgmma_persistent(%a: tensor<300x520xbf16>, %b: tensor<1000x520xbf16>) -> (tensor<300x1000xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 7> tiling #kernel.tiling<grid = [4, 3, 1], block = [128, 256, 64], warp = [64, 256], fragment = [64, 256, 16], stages = 4, k_steps = 9, partial = [m, n, k], lhs = [128, 64, 64], rhs = [256, 64, 64]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b transpose_b : (tensor<300x520xbf16>, tensor<1000x520xbf16>) -> tensor<300x1000xbf16>
// CHECK-NEXT:    kernel.yield %m : tensor<300x1000xbf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @simt_f32(%a: tensor<100x30xf32>, %b: tensor<30x70xf32>) -> (tensor<100x70xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> tiling #kernel.tiling<grid = [2, 2, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 2, partial = [m, n, k], lhs = [64, 16, 16], rhs = [16, 64, 64]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<100x30xf32>, tensor<30x70xf32>) -> tensor<100x70xf32>
// CHECK-NEXT:    kernel.yield %m : tensor<100x70xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @simt_large(%a: tensor<256x40xf32>, %b: tensor<40x200xf32>) -> (tensor<256x200xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [128, 128, 8]> tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 8], fragment = [8, 8, 1], stages = 1, k_steps = 5, partial = [n], lhs = [128, 8, 8], rhs = [8, 128, 128]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<256x40xf32>, tensor<40x200xf32>) -> tensor<256x200xf32>
// CHECK-NEXT:    kernel.yield %m : tensor<256x200xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @tf32(%a: tensor<200x72xf32>, %b: tensor<72x136xf32>) -> (tensor<200x136xf32>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 16], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 16], warp = [64, 64], fragment = [16, 8, 8], stages = 4, k_steps = 5, partial = [m, n, k], lhs = [128, 16, 20], rhs = [16, 128, 136]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<200x72xf32>, tensor<72x136xf32>) -> tensor<200x136xf32>
// CHECK-NEXT:    kernel.yield %m : tensor<200x136xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @gemv_f32(%a: tensor<3x300xf32>, %b: tensor<300x72xf32>) -> (tensor<3x72xf32>) gemm schedule #kernel.schedule<gemv, block = 256, vector = 4, tile = [3, 32, 320], stages = 4, k_lanes = 32> tiling #kernel.tiling<grid = [3, 1, 1], block = [3, 32, 320], fragment = [3, 4, 10], stages = 4, k_steps = 1, partial = [n, k], lhs = [3, 320, 320], rhs = [320, 32, 32]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<3x300xf32>, tensor<300x72xf32>) -> tensor<3x72xf32>
// CHECK-NEXT:    kernel.yield %m : tensor<3x72xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @pointwise(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 4, elements_per_thread = 4> {
// CHECK-NEXT:    %e = molten.exp %x : tensor<4x8xf32>
// CHECK-NEXT:    kernel.yield %e : tensor<4x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @tiled(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> tiling #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 1, partial = [m, n, k], lhs = [64, 16, 20], rhs = [16, 64, 64]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:    kernel.yield %m : tensor<16x16xf32>
// CHECK-NEXT:  }

// -----

// Attention: its #kernel.attention_tiling over S[g, i, j, d, e] (groups,
// query rows, keys, head dims). 150 query rows and 70 keys in tiles of 64:
// 3 tiles of rows, 2 key steps, both partial; on mma.sync each tile's rows
// padded by 8 halves (16 bytes).
kernel.func @attention_mma(%q: tensor<2x150x64xf16>, %k: tensor<2x70x64xf16>, %v: tensor<2x70x64xf16>) -> (tensor<2x150x64xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 64], warp = [16, 64], stages = 2> {
  %cst = molten.constant dense<1.250000e-01> : tensor<f32>
  %q_f32 = molten.cast %q : tensor<2x150x64xf16> to tensor<2x150x64xf32>
  %k_f32 = molten.cast %k : tensor<2x70x64xf16> to tensor<2x70x64xf32>
  %v_f32 = molten.cast %v : tensor<2x70x64xf16> to tensor<2x70x64xf32>
  %matmul = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x150x64xf32>, tensor<2x70x64xf32>) -> tensor<2x150x70xf32>
  %mul = molten.mul %matmul, %cst : (tensor<2x150x70xf32>, tensor<f32>) -> tensor<2x150x70xf32>
  %reduce_max = molten.reduce_max %mul axes = [2] keepdim : tensor<2x150x70xf32> -> tensor<2x150x1xf32>
  %sub = molten.sub %mul, %reduce_max : (tensor<2x150x70xf32>, tensor<2x150x1xf32>) -> tensor<2x150x70xf32>
  %exp = molten.exp %sub : tensor<2x150x70xf32>
  %reduce_sum = molten.reduce_sum %exp axes = [2] keepdim : tensor<2x150x70xf32> -> tensor<2x150x1xf32>
  %div = molten.div %exp, %reduce_sum : (tensor<2x150x70xf32>, tensor<2x150x1xf32>) -> tensor<2x150x70xf32>
  %matmul_1 = molten.matmul %div, %v_f32 : (tensor<2x150x70xf32>, tensor<2x70x64xf32>) -> tensor<2x150x64xf32>
  %0 = molten.cast %matmul_1 : tensor<2x150x64xf32> to tensor<2x150x64xf16>
  kernel.yield %0 : tensor<2x150x64xf16>
}

// CHECK-LABEL: kernel.func @attention_mma(
// CHECK-SAME:    tiling #kernel.attention_tiling<grid = [3, 2, 1], block = [64, 64, 64], key_steps = 2, partial = [queries, keys], query = [64, 64, 72], key = [64, 64, 72], value = [64, 64, 72]> {{[{]$}}

// -----

// 128 query rows and keys in tiles of 64 on wgmma: nothing partial, the
// tiles swizzled, unpadded.
kernel.func @attention_wgmma(%q: tensor<2x128x64xf16>, %k: tensor<2x128x64xf16>, %v: tensor<2x128x64xf16>) -> (tensor<2x128x64xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 64], warp = [64, 64], stages = 2, mma_warps = 4> {
  %cst = molten.constant dense<1.250000e-01> : tensor<f32>
  %q_f32 = molten.cast %q : tensor<2x128x64xf16> to tensor<2x128x64xf32>
  %k_f32 = molten.cast %k : tensor<2x128x64xf16> to tensor<2x128x64xf32>
  %v_f32 = molten.cast %v : tensor<2x128x64xf16> to tensor<2x128x64xf32>
  %matmul = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x128x64xf32>, tensor<2x128x64xf32>) -> tensor<2x128x128xf32>
  %mul = molten.mul %matmul, %cst : (tensor<2x128x128xf32>, tensor<f32>) -> tensor<2x128x128xf32>
  %reduce_max = molten.reduce_max %mul axes = [2] keepdim : tensor<2x128x128xf32> -> tensor<2x128x1xf32>
  %sub = molten.sub %mul, %reduce_max : (tensor<2x128x128xf32>, tensor<2x128x1xf32>) -> tensor<2x128x128xf32>
  %exp = molten.exp %sub : tensor<2x128x128xf32>
  %reduce_sum = molten.reduce_sum %exp axes = [2] keepdim : tensor<2x128x128xf32> -> tensor<2x128x1xf32>
  %div = molten.div %exp, %reduce_sum : (tensor<2x128x128xf32>, tensor<2x128x1xf32>) -> tensor<2x128x128xf32>
  %matmul_1 = molten.matmul %div, %v_f32 : (tensor<2x128x128xf32>, tensor<2x128x64xf32>) -> tensor<2x128x64xf32>
  %0 = molten.cast %matmul_1 : tensor<2x128x64xf32> to tensor<2x128x64xf16>
  kernel.yield %0 : tensor<2x128x64xf16>
}

// CHECK-LABEL: kernel.func @attention_wgmma(
// CHECK-SAME:    tiling #kernel.attention_tiling<grid = [2, 2, 1], block = [64, 64, 64], key_steps = 2, partial = [], query = [64, 64, 64], key = [64, 64, 64], value = [64, 64, 64]> {{[{]$}}

// ERROR CASES

// Everything below is cut out of the first RUN lines; the ERR run takes each
// case (split at the separators) on its own. Each error names the kernel and
// the sizes at fault.

// BEGIN NO-SCHEDULE
// A gemm kernel without a schedule: kernel-schedule has not run.
kernel.func @no_schedule(%a: tensor<128x64xf16>, %b: tensor<64x256xf16>) -> (tensor<128x256xf16>) gemm {
  %m = molten.matmul %a, %b : (tensor<128x64xf16>, tensor<64x256xf16>) -> tensor<128x256xf16>
  kernel.yield %m : tensor<128x256xf16>
}
// END NO-SCHEDULE

// ERR:         {{^.*}}: error: tile: @no_schedule has no schedule; run kernel-schedule first{{$}}
// NO-SCHEDULE-NOT: builtin.module
// NO-SCHEDULE:     {{^.*}}: error: tile: @no_schedule has no schedule; run kernel-schedule first{{$}}
// NO-SCHEDULE-NOT: {{Traceback|internal error|builtin.module}}
// SCHEDULED:       kernel.func @no_schedule(%a: tensor<128x64xf16>, %b: tensor<64x256xf16>) -> (tensor<128x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [2, 1, 1], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 2, partial = [], lhs = [128, 32, 40], rhs = [32, 128, 136]> {

// -----

// The warp tile does not divide the block tile.
kernel.func @warp_48(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [48, 64], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @warp_48: block tile 128x128x32 is not a whole number of warp tiles 48x64{{$}}

// -----

// The warp tile's M (40) is not a whole number of m16 fragments.
kernel.func @warp_40(%a: tensor<240x64xf16>, %b: tensor<64x256xf16>) -> (tensor<240x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 192, tile = [120, 128, 32], warp = [40, 64], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<240x64xf16>, tensor<64x256xf16>) -> tensor<240x256xf16>
  kernel.yield %m : tensor<240x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @warp_40: warp tile 40x64 (K step 32) is not a whole number of fragments 16x8x16{{$}}

// -----

// The K step (24) is not a whole number of k16 fragments.
kernel.func @k_step_24(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 24], warp = [64, 64], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @k_step_24: warp tile 64x64 (K step 24) is not a whole number of fragments 16x8x16{{$}}

// -----

// Four warp tiles take 128 threads, not 256.
kernel.func @threads_256(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 256, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @threads_256: block tile 128x128x32 in warp tiles of 64x64 takes 128 threads, not block = 256{{$}}

// -----

// A persistent TMA gemm of a batched matmul.
kernel.func @persistent_batched(%a: tensor<2x256x512xf16>, %b: tensor<512x256xf16>) -> (tensor<2x256x256xf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 132> {
  %m = molten.matmul %a, %b : (tensor<2x256x512xf16>, tensor<512x256xf16>) -> tensor<2x256x256xf16>
  kernel.yield %m : tensor<2x256x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @persistent_batched: a persistent TMA gemm (persistent = 132) takes one matrix (no batch), A stored [M, K], rows of A and B of whole 16-byte units, its K steps in equal parts under split-K and warpgroup tiles of the block's width, not 2 batches of M x N x K = 256 x 256 x 512 in warp tiles 64x256 of 128x256x64 (K steps 8, split = 1){{$}}

// -----

// A persistent TMA gemm whose 9 K steps do not split into 2 equal parts.
kernel.func @persistent_uneven_split(%a: tensor<256x520xf16>, %b: tensor<520x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, split = 2, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 132> {
  %m = molten.matmul %a, %b : (tensor<256x520xf16>, tensor<520x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @persistent_uneven_split: a persistent TMA gemm (persistent = 132) takes one matrix (no batch), A stored [M, K], rows of A and B of whole 16-byte units, its K steps in equal parts under split-K and warpgroup tiles of the block's width, not M x N x K = 256 x 256 x 520 in warp tiles 64x256 of 128x256x64 (K steps 9, split = 2){{$}}


// -----

// Four K steps in three parts of two leave the third empty.
kernel.func @split_empty(%a: tensor<64x256xf16>, %b: tensor<256x64xf16>) -> (tensor<64x64xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, split = 3, tile = [64, 64, 64], warp = [64, 64], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<64x256xf16>, tensor<256x64xf16>) -> tensor<64x64xf16>
  kernel.yield %m : tensor<64x64xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @split_empty: split = 3 parts of M x N x K = 64 x 64 x 256's 4 K steps of 64 leave a part empty{{$}}

// -----

// SIMT: 64x64 outputs do not split evenly among 96 threads.
kernel.func @simt_threads(%a: tensor<100x30xf32>, %b: tensor<30x70xf32>) -> (tensor<100x70xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 96, tile = [64, 64, 16]> {
  %m = molten.matmul %a, %b : (tensor<100x30xf32>, tensor<30x70xf32>) -> tensor<100x70xf32>
  kernel.yield %m : tensor<100x70xf32>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @simt_threads: block tile 64x64x16 does not split into equal micro-tiles, one for each of block = 96 threads{{$}}

// -----

// A GEMV whose K step does not split 32 ways, and one whose runs and K
// split do not make its block.
kernel.func @gemv_k_split(%a: tensor<1x300xf32>, %b: tensor<300x64xf32>) -> (tensor<1x64xf32>) gemm schedule #kernel.schedule<gemv, block = 256, vector = 4, tile = [1, 32, 300], k_lanes = 32> {
  %m = molten.matmul %a, %b : (tensor<1x300xf32>, tensor<300x64xf32>) -> tensor<1x64xf32>
  kernel.yield %m : tensor<1x64xf32>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @gemv_k_split: block tile 1x32x300 is not a whole number of runs of vector = 4 columns and k_lanes = 32 shares of K{{$}}

// -----

kernel.func @gemv_threads(%a: tensor<1x320xf32>, %b: tensor<320x64xf32>) -> (tensor<1x64xf32>) gemm schedule #kernel.schedule<gemv, block = 128, vector = 4, tile = [1, 32, 320], k_lanes = 32> {
  %m = molten.matmul %a, %b : (tensor<1x320xf32>, tensor<320x64xf32>) -> tensor<1x64xf32>
  kernel.yield %m : tensor<1x64xf32>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @gemv_threads: block tile 1x32x320 in runs of 4 columns, K split 32 ways, takes 256 threads, not block = 128{{$}}

// -----

// wgmma: a warpgroup tile of 32 rows (a wgmma is 64 rows by N).
kernel.func @wgmma_rows_32(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 512, tile = [128, 256, 64], warp = [32, 256], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x128xf16>, tensor<128x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @wgmma_rows_32: a wgmma warpgroup tile is 64 rows by a multiple of 8 columns up to 256, not 32x256{{$}}

// -----

// wgmma: a warpgroup tile of 264 columns (N is at most 256).
kernel.func @wgmma_cols_264(%a: tensor<256x128xf16>, %b: tensor<128x264xf16>) -> (tensor<256x264xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 264, 64], warp = [64, 264], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x128xf16>, tensor<128x264xf16>) -> tensor<256x264xf16>
  kernel.yield %m : tensor<256x264xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @wgmma_cols_264: a wgmma warpgroup tile is 64 rows by a multiple of 8 columns up to 256, not 64x264{{$}}

// -----

// wgmma: a K step of 32, half a 128-byte swizzled row.
kernel.func @wgmma_k_step_32(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 32], warp = [64, 256], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x128xf16>, tensor<128x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @wgmma_k_step_32: a wgmma block tile's K step is 64 (one 128-byte swizzled row), not 32 in 128x256x32{{$}}

// -----

// wgmma: two warpgroup tiles take 2 x 128 = 256 threads, not 128.
kernel.func @wgmma_threads_128(%a: tensor<256x128xf16>, %b: tensor<128x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, tile = [128, 256, 64], warp = [64, 256], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x128xf16>, tensor<128x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @wgmma_threads_128: block tile 128x256x64 in warp tiles of 64x256 takes 256 threads, not block = 128{{$}}

// -----

// A wgmma schedule on f32 operands (3xTF32 runs on mma.sync only).
kernel.func @tc_f32(%a: tensor<256x64xf32>, %b: tensor<64x256xf32>) -> (tensor<256x256xf32>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 128, 64], warp = [64, 128], stages = 4> {
  %m = molten.matmul %a, %b : (tensor<256x64xf32>, tensor<64x256xf32>) -> tensor<256x256xf32>
  kernel.yield %m : tensor<256x256xf32>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @tc_f32: a tensor-core schedule (warp = [64, 128]) needs f16 or bf16 operands (f32 on mma.sync, mma_warps = 1), not f32{{$}}


// -----

// A gemm kernel of two matmuls that are not siblings (the second's lhs is
// the first's result).
kernel.func @two_matmuls(%a: tensor<16x16xf32>) -> (tensor<16x16xf32>) gemm matched #kernel.gemm_match<side_by_side, prologue> schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> {
  %m = molten.matmul %a, %a : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %n = molten.matmul %m, %a : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  kernel.yield %n : tensor<16x16xf32>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @two_matmuls: a gemm kernel's 2 matmuls must share their lhs, transposes and element types{{$}}

// -----

// Two matmuls of one lhs that an op reads together (side by side: each
// tile holds both products at the same places) must be of one shape.
kernel.func @mixed_widths(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x1xf32>) -> (tensor<16x16xf32>) gemm matched #kernel.gemm_match<side_by_side> schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> {
  %m = molten.matmul %a, %b : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %n = molten.matmul %a, %c : (tensor<16x16xf32>, tensor<16x1xf32>) -> tensor<16x1xf32>
  %p = molten.mul %m, %n : (tensor<16x16xf32>, tensor<16x1xf32>) -> tensor<16x16xf32>
  kernel.yield %p : tensor<16x16xf32>
}

// ERR-NEXT:    {{^// -{5}$}}
// ERR-NEXT:    {{^.*}}: error: tile: @mixed_widths: a gemm kernel's 2 matmuls that an op reads together must share their operand and result types{{$}}
// ERR-NOT:     {{Traceback|internal error|builtin.module}}
