// RUN: molten-opt %s --split-input-file -p kernel-schedule | filecheck %s
// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,dce,fuse-reduction,fuse-epilogue,fuse-elementwise,kernel-outline,kernel-schedule | filecheck %s --check-prefix=DECOMP

// kernel-schedule: every kernel (kernel.func or kernel.fused) without a
// #kernel.schedule gets one from the heuristics of its kind; one already
// there is kept. The input of each case is the IR before the pass (kernels
// written out); the DECOMP lines follow a graph spec through the passes
// before it.

// pointwise: 256 threads, one run of `vector` elements per thread (16 bytes
// of the narrowest element type, halved until it divides the innermost
// dimension: 4 f32, 8 f16, 1 for rows of 3); on a kernel.func and on a
// kernel.fused alike.
kernel.func @pw_small(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["exp"]} {
  %e = molten.exp %x : tensor<4xf32>
  kernel.yield %e : tensor<4xf32>
}
kernel.func @pw_large(%x: tensor<64x4096xf16>, %c: tensor<4096xf16>) -> (tensor<64x4096xf16>) pointwise {
  %r = molten.rotate_half %x : tensor<64x4096xf16>
  %m = molten.mul %r, %c : (tensor<64x4096xf16>, tensor<4096xf16>) -> tensor<64x4096xf16>
  kernel.yield %m : tensor<64x4096xf16>
}
func.func @pw_group(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = kernel.fused pointwise (%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %n = molten.neg %a : tensor<2x3xf32>
    kernel.yield %n : tensor<2x3xf32>
  }
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: kernel.func @pw_small(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise schedule #kernel.schedule<block = 256, rows_per_block = 1, vector = 4, elements_per_thread = 4> attributes {fused_ops = ["exp"]} {
// CHECK-NEXT:    %e = molten.exp %x : tensor<4xf32>
// CHECK-NEXT:    kernel.yield %e : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @pw_large(%x: tensor<64x4096xf16>, %c: tensor<4096xf16>) -> (tensor<64x4096xf16>) pointwise schedule #kernel.schedule<block = 256, rows_per_block = 1, vector = 8, elements_per_thread = 8> {
// CHECK-NEXT:    %r = molten.rotate_half %x : tensor<64x4096xf16>
// CHECK-NEXT:    %m = molten.mul %r, %c : (tensor<64x4096xf16>, tensor<4096xf16>) -> tensor<64x4096xf16>
// CHECK-NEXT:    kernel.yield %m : tensor<64x4096xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @pw_group(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise schedule <block = 256, rows_per_block = 1, vector = 1, elements_per_thread = 1>(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<2x3xf32>):
// CHECK-NEXT:      %n = molten.neg %a : tensor<2x3xf32>
// CHECK-NEXT:      kernel.yield %n : tensor<2x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x3xf32>
// CHECK-NEXT:  }

// -----

// row_reduce: one block per row (rows_per_block = 1) of the fewest threads,
// a multiple of 32 and at most 1024, that cover the row with at most 8
// elements each; elements_per_thread = ceil(row / block) when that is at
// most 8, else 1. Rows across the switch points:
// 31: 4 threads needed, rounded up to one warp; 1 element each
kernel.func @rows_of_31(%x: tensor<2x31xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x31xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 32: one warp, one run of 4 elements each (a warp of fewer threads cannot be)
kernel.func @rows_of_32(%x: tensor<2x32xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x32xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 256: one warp of 8 elements each, the most one warp covers
kernel.func @rows_of_256(%x: tensor<2x256xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x256xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 257: 33 threads needed, two warps; 5 elements each, scalar (257 is odd)
kernel.func @rows_of_257(%x: tensor<2x257xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x257xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 5120 (the seed rms_norm): 640 threads of two runs of 4
kernel.func @rows_of_5120(%x: tensor<2x5120xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x5120xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 8192: 1024 threads of 8, the largest block
kernel.func @rows_of_8192(%x: tensor<2x8192xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x8192xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 8200: more than 1024 x 8: 512 threads, and elements_per_thread = vector (the
// row is not held in registers but read again for each pass over it)
kernel.func @rows_of_8200(%x: tensor<2x8200xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x8200xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 65536: likewise
kernel.func @rows_of_65536(%x: tensor<2x65536xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x65536xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}

// CHECK-LABEL: kernel.func @rows_of_31(%x: tensor<2x31xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 32, rows_per_block = 1, vector = 1, elements_per_thread = 1> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x31xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_32(%x: tensor<2x32xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 32, rows_per_block = 1, vector = 4, elements_per_thread = 4> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x32xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_256(%x: tensor<2x256xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 32, rows_per_block = 1, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x256xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_257(%x: tensor<2x257xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 64, rows_per_block = 1, vector = 1, elements_per_thread = 5> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x257xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_5120(%x: tensor<2x5120xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 640, rows_per_block = 1, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x5120xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_8192(%x: tensor<2x8192xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 1024, rows_per_block = 1, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x8192xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_8200(%x: tensor<2x8200xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 512, rows_per_block = 1, vector = 4, elements_per_thread = 4> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x8200xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_65536(%x: tensor<2x65536xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 512, rows_per_block = 1, vector = 4, elements_per_thread = 4> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x65536xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }

// -----

// The row is the product of the reduced axes (4 x 8 x 8 = 256), whatever the
// leading axes, and is read off the group's reduction even when other ops
// come first; on a kernel.fused.
func.func @rows_of_three_axes(%x: tensor<16x4x8x8xf32>) -> tensor<16x4x8x8xf32> {
  %y = kernel.fused row_reduce (%x) : (tensor<16x4x8x8xf32>) -> tensor<16x4x8x8xf32> {
  ^bb0(%a: tensor<16x4x8x8xf32>):
    %e = molten.exp %a : tensor<16x4x8x8xf32>
    %s = molten.reduce_sum %e axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
    %d = molten.div %e, %s : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
    kernel.yield %d : tensor<16x4x8x8xf32>
  }
  func.return %y : tensor<16x4x8x8xf32>
}

// CHECK-LABEL: func.func @rows_of_three_axes(%x: tensor<16x4x8x8xf32>) -> tensor<16x4x8x8xf32> {
// CHECK-NEXT:    %y = kernel.fused row_reduce schedule <block = 32, rows_per_block = 1, vector = 4, elements_per_thread = 8>(%x) : (tensor<16x4x8x8xf32>) -> tensor<16x4x8x8xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<16x4x8x8xf32>):
// CHECK-NEXT:      %e = molten.exp %a : tensor<16x4x8x8xf32>
// CHECK-NEXT:      %s = molten.reduce_sum %e axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
// CHECK-NEXT:      %d = molten.div %e, %s : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
// CHECK-NEXT:      kernel.yield %d : tensor<16x4x8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<16x4x8x8xf32>
// CHECK-NEXT:  }

// -----

// gemm: 256 threads on 64x64 output tiles with a K step of 16, for any
// shape.
kernel.func @gemm_small(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}
kernel.func @gemm_batched(%a: tensor<4x512x1024xbf16>, %b: tensor<1024x2048xbf16>, %bias: tensor<2048xbf16>) -> (tensor<4x512x2048xbf16>) gemm {
  %m = molten.matmul %a, %b : (tensor<4x512x1024xbf16>, tensor<1024x2048xbf16>) -> tensor<4x512x2048xbf16>
  %r = molten.add %m, %bias : (tensor<4x512x2048xbf16>, tensor<2048xbf16>) -> tensor<4x512x2048xbf16>
  kernel.yield %r : tensor<4x512x2048xbf16>
}

// CHECK-LABEL: kernel.func @gemm_small(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<block = 256, rows_per_block = 1, vector = 1, elements_per_thread = 1, tile = [64, 64, 16]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:    kernel.yield %m : tensor<16x16xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @gemm_batched(%a: tensor<4x512x1024xbf16>, %b: tensor<1024x2048xbf16>, %bias: tensor<2048xbf16>) -> (tensor<4x512x2048xbf16>) gemm schedule #kernel.schedule<block = 256, rows_per_block = 1, vector = 1, elements_per_thread = 1, tile = [64, 64, 16]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<4x512x1024xbf16>, tensor<1024x2048xbf16>) -> tensor<4x512x2048xbf16>
// CHECK-NEXT:    %r = molten.add %m, %bias : (tensor<4x512x2048xbf16>, tensor<2048xbf16>) -> tensor<4x512x2048xbf16>
// CHECK-NEXT:    kernel.yield %r : tensor<4x512x2048xbf16>
// CHECK-NEXT:  }

// -----

// A schedule already present (by hand, or by an autotuner) is kept, on a
// kernel.func and on a kernel.fused of each kind, attention included (for
// which there is no heuristic); the kernels without one get theirs.
kernel.func @kept_row(%x: tensor<2x4096xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 128, rows_per_block = 2, vector = 4, elements_per_thread = 8> {
  %s = molten.reduce_max %x axes = [1] keepdim : tensor<2x4096xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
kernel.func @kept_gemm(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<block = 128, tile = [128, 128, 32]> {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}
kernel.func @kept_attention(%q: tensor<16x64xf32>) -> (tensor<16x64xf32>) attention schedule #kernel.schedule<block = 128, tile = [64, 64]> {
  %o = molten.attention %q, %q, %q scale = 1.250000e-01 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  kernel.yield %o : tensor<16x64xf32>
}
func.func @kept_groups(%x: tensor<2x300xf32>) -> tensor<2x300xf32> {
  %s = kernel.fused row_reduce schedule <block = 512, vector = 2> (%x) : (tensor<2x300xf32>) -> tensor<2x1xf32> {
  ^bb0(%a: tensor<2x300xf32>):
    %r = molten.reduce_sum %a axes = [1] keepdim : tensor<2x300xf32> -> tensor<2x1xf32>
    kernel.yield %r : tensor<2x1xf32>
  }
  %y = kernel.fused pointwise (%x, %s) : (tensor<2x300xf32>, tensor<2x1xf32>) -> tensor<2x300xf32> {
  ^bb0(%a: tensor<2x300xf32>, %b: tensor<2x1xf32>):
    %d = molten.div %a, %b : (tensor<2x300xf32>, tensor<2x1xf32>) -> tensor<2x300xf32>
    kernel.yield %d : tensor<2x300xf32>
  }
  func.return %y : tensor<2x300xf32>
}

// CHECK-LABEL: kernel.func @kept_row(%x: tensor<2x4096xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 128, rows_per_block = 2, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_max %x axes = [1] keepdim : tensor<2x4096xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @kept_gemm(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<block = 128, rows_per_block = 1, vector = 1, elements_per_thread = 1, tile = [128, 128, 32]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:    kernel.yield %m : tensor<16x16xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @kept_attention(%q: tensor<16x64xf32>) -> (tensor<16x64xf32>) attention schedule #kernel.schedule<block = 128, rows_per_block = 1, vector = 1, elements_per_thread = 1, tile = [64, 64]> {
// CHECK-NEXT:    %o = molten.attention %q, %q, %q scale = 1.250000e-01 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:    kernel.yield %o : tensor<16x64xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @kept_groups(%x: tensor<2x300xf32>) -> tensor<2x300xf32> {
// CHECK-NEXT:    %s = kernel.fused row_reduce schedule <block = 512, rows_per_block = 1, vector = 2, elements_per_thread = 1>(%x) : (tensor<2x300xf32>) -> tensor<2x1xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<2x300xf32>):
// CHECK-NEXT:      %r = molten.reduce_sum %a axes = [1] keepdim : tensor<2x300xf32> -> tensor<2x1xf32>
// CHECK-NEXT:      kernel.yield %r : tensor<2x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = kernel.fused pointwise schedule <block = 256, rows_per_block = 1, vector = 4, elements_per_thread = 4>(%x, %s) : (tensor<2x300xf32>, tensor<2x1xf32>) -> tensor<2x300xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<2x300xf32>, %b: tensor<2x1xf32>):
// CHECK-NEXT:      %d = molten.div %a, %b : (tensor<2x300xf32>, tensor<2x1xf32>) -> tensor<2x300xf32>
// CHECK-NEXT:      kernel.yield %d : tensor<2x300xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x300xf32>
// CHECK-NEXT:  }

// -----

// A graph spec through the whole kernel-level pipeline up to this pass:
// softmax (rows of 1000: 128 threads of 8) then a matmul with a relu
// epilogue.
func.func @softmax_matmul(%x: tensor<8x1000xf32>, %w: tensor<1000x64xf32>) -> tensor<8x64xf32> {
  %p = molten.softmax %x axis = 1 : tensor<8x1000xf32>
  %mm = molten.matmul %p, %w : (tensor<8x1000xf32>, tensor<1000x64xf32>) -> tensor<8x64xf32>
  %y = molten.relu %mm : tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}

// DECOMP-LABEL: kernel.func @softmax_matmul_row_reduce0(%x: tensor<8x1000xf32>) -> (tensor<8x1000xf32>) row_reduce schedule #kernel.schedule<block = 128, rows_per_block = 1, vector = 4, elements_per_thread = 8> attributes {fused_ops = ["reduce_max", "sub", "exp", "reduce_sum", "div"]} {
// DECOMP-NEXT:    %reduce_max = molten.reduce_max %x axes = [1] keepdim : tensor<8x1000xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:    %sub = molten.sub %x, %reduce_max : (tensor<8x1000xf32>, tensor<8x1xf32>) -> tensor<8x1000xf32>
// DECOMP-NEXT:    %exp = molten.exp %sub : tensor<8x1000xf32>
// DECOMP-NEXT:    %reduce_sum = molten.reduce_sum %exp axes = [1] keepdim : tensor<8x1000xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:    %p = molten.div %exp, %reduce_sum : (tensor<8x1000xf32>, tensor<8x1xf32>) -> tensor<8x1000xf32>
// DECOMP-NEXT:    kernel.yield %p : tensor<8x1000xf32>
// DECOMP-NEXT:  }
// DECOMP-NEXT:  kernel.func @softmax_matmul_gemm0(%p: tensor<8x1000xf32>, %w: tensor<1000x64xf32>) -> (tensor<8x64xf32>) gemm schedule #kernel.schedule<block = 256, rows_per_block = 1, vector = 1, elements_per_thread = 1, tile = [64, 64, 16]> attributes {fused_ops = ["matmul", "relu"]} {
// DECOMP-NEXT:    %mm = molten.matmul %p, %w : (tensor<8x1000xf32>, tensor<1000x64xf32>) -> tensor<8x64xf32>
// DECOMP-NEXT:    %y = molten.relu %mm : tensor<8x64xf32>
// DECOMP-NEXT:    kernel.yield %y : tensor<8x64xf32>
// DECOMP-NEXT:  }
// DECOMP-NEXT:  func.func @softmax_matmul(%x: tensor<8x1000xf32>, %w: tensor<1000x64xf32>) -> tensor<8x64xf32> {
// DECOMP-NEXT:    %p = kernel.launch @softmax_matmul_row_reduce0(%x) : (tensor<8x1000xf32>) -> tensor<8x1000xf32>
// DECOMP-NEXT:    %y = kernel.launch @softmax_matmul_gemm0(%p, %w) : (tensor<8x1000xf32>, tensor<1000x64xf32>) -> tensor<8x64xf32>
// DECOMP-NEXT:    func.return %y : tensor<8x64xf32>
// DECOMP-NEXT:  }
