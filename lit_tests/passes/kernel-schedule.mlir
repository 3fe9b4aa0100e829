// RUN: molten-opt %s --split-input-file -p kernel-schedule | filecheck %s
// RUN: molten-opt %s --split-input-file -p 'kernel-schedule{sm_count=16}' | filecheck %s --check-prefix=FEW
// RUN: molten-opt %s --split-input-file -p 'kernel-schedule{arch="sm_90a"}' | filecheck %s --check-prefix=WGMMA
// RUN: not molten-opt %s -p 'kernel-schedule{arch="sm90"}' 2>&1 | filecheck %s --check-prefix=BAD-ARCH
// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,dce,fuse-reduction,fuse-epilogue,fuse-elementwise,kernel-outline,kernel-schedule | filecheck %s --check-prefix=DECOMP

// kernel-schedule: every kernel (kernel.func or kernel.fused) without a
// #kernel.schedule gets one from the heuristics of its kind; one already
// there is kept. The input of each case is the IR before the pass (kernels
// written out); the DECOMP lines follow a graph spec through the passes
// before it.

// pointwise: one run of `vector` elements per thread (16 bytes of the
// narrowest element type, halved until it divides the innermost dimension:
// 4 f32, 8 f16, 1 for rows of 3); 256 threads a block, halved (down to 64)
// while the kernel has fewer blocks than the device SMs (132 unless told);
// on a kernel.func and on a kernel.fused alike.
kernel.func @pw_small(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["exp"]} {
  %e = molten.exp %x : tensor<4xf32>
  kernel.yield %e : tensor<4xf32>
}
kernel.func @pw_large(%x: tensor<64x4096xf16>, %c: tensor<4096xf16>) -> (tensor<64x4096xf16>) pointwise {
  %r = molten.rotate_half %x : tensor<64x4096xf16>
  %m = molten.mul %r, %c : (tensor<64x4096xf16>, tensor<4096xf16>) -> tensor<64x4096xf16>
  kernel.yield %m : tensor<64x4096xf16>
}
// 65536 f32: 16384 runs, 256 blocks of 64 threads (64 of 256 would leave
// SMs idle); @pw_large's 32768 runs of 8 f16: 256 blocks of 128
kernel.func @pw_spread(%x: tensor<65536xf32>) -> (tensor<65536xf32>) pointwise {
  %e = molten.exp %x : tensor<65536xf32>
  kernel.yield %e : tensor<65536xf32>
}
func.func @pw_group(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = kernel.fused pointwise (%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %n = molten.neg %a : tensor<2x3xf32>
    kernel.yield %n : tensor<2x3xf32>
  }
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: kernel.func @pw_small(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 4, elements_per_thread = 4> attributes {fused_ops = ["exp"]} {
// CHECK-NEXT:    %e = molten.exp %x : tensor<4xf32>
// CHECK-NEXT:    kernel.yield %e : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @pw_large(%x: tensor<64x4096xf16>, %c: tensor<4096xf16>) -> (tensor<64x4096xf16>) pointwise schedule #kernel.schedule<pointwise, block = 128, vector = 8, elements_per_thread = 8> {
// CHECK-NEXT:    %r = molten.rotate_half %x : tensor<64x4096xf16>
// CHECK-NEXT:    %m = molten.mul %r, %c : (tensor<64x4096xf16>, tensor<4096xf16>) -> tensor<64x4096xf16>
// CHECK-NEXT:    kernel.yield %m : tensor<64x4096xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @pw_spread(%x: tensor<65536xf32>) -> (tensor<65536xf32>) pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 4, elements_per_thread = 4> {
// CHECK-NEXT:    %e = molten.exp %x : tensor<65536xf32>
// CHECK-NEXT:    kernel.yield %e : tensor<65536xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @pw_group(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %y = kernel.fused pointwise schedule <pointwise, block = 64, vector = 1, elements_per_thread = 1>(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<2x3xf32>):
// CHECK-NEXT:      %n = molten.neg %a : tensor<2x3xf32>
// CHECK-NEXT:      kernel.yield %n : tensor<2x3xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x3xf32>
// CHECK-NEXT:  }

// -----

// row_reduce: a row is held in registers, at most max(8, 2 x vector)
// elements per thread (whole runs of `vector`) while that covers it. Rows
// across the switch points:
// 31 (odd: runs of 1): 4 threads of 8, 8 rows in a warp
kernel.func @rows_of_31(%x: tensor<2x31xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x31xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 32: 4 threads of two runs of 4, 8 rows in a warp
kernel.func @rows_of_32(%x: tensor<2x32xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x32xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 256: a warp of 8 each, the most a warp per row covers
kernel.func @rows_of_256(%x: tensor<2x256xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x256xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 512 f16: a warp of two runs of 8 each
kernel.func @rows_of_512_f16(%x: tensor<2x512xf16>) -> (tensor<2x1xf16>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x512xf16> -> tensor<2x1xf16>
  kernel.yield %s : tensor<2x1xf16>
}
// 257: a block per row, 33 threads needed, two warps; 5 elements each
kernel.func @rows_of_257(%x: tensor<2x257xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x257xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 5120 (the seed rms_norm): 640 threads of two runs of 4
kernel.func @rows_of_5120(%x: tensor<2x5120xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x5120xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 5120 f16: 320 threads of two runs of 8 (more rows per SM in flight)
kernel.func @rows_of_5120_f16(%x: tensor<2x5120xf16>) -> (tensor<2x1xf16>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x5120xf16> -> tensor<2x1xf16>
  kernel.yield %s : tensor<2x1xf16>
}
// 8192: 1024 threads of 8, the largest block
kernel.func @rows_of_8192(%x: tensor<2x8192xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x8192xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 8200: 1024 threads of 12 (three runs), up to 32 each
kernel.func @rows_of_8200(%x: tensor<2x8200xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x8200xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 32768: 1024 threads of 32, the most a block holds
kernel.func @rows_of_32768(%x: tensor<2x32768xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x32768xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 32772: split over 3 blocks of 512 threads (two fit an SM) that exchange
// partial results; 24 elements each
kernel.func @rows_of_32772(%x: tensor<2x32772xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x32772xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// 4M (layer_norm over 64x256x256): 256 blocks of 512 x 32
kernel.func @rows_of_4m(%x: tensor<2x4194304xf32>) -> (tensor<2x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x4194304xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
// many short rows: 66000 rows of 5, one thread each, 256 rows per block
kernel.func @many_rows_of_5(%x: tensor<66000x5xf32>) -> (tensor<66000x1xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<66000x5xf32> -> tensor<66000x1xf32>
  kernel.yield %s : tensor<66000x1xf32>
}
// strided rows (axes after the reduced one): a thread a row, blocks as a
// pointwise kernel's; 64 elements held in registers (105 rows: 64-thread
// blocks), 65 walked in passes (524160 rows: 1024-thread blocks, a
// block an SM or more)
kernel.func @strided_rows_of_64(%x: tensor<3x64x35xf32>) -> (tensor<3x1x35xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<3x64x35xf32> -> tensor<3x1x35xf32>
  kernel.yield %s : tensor<3x1x35xf32>
}
kernel.func @strided_rows_of_65(%x: tensor<128x65x4095xf32>) -> (tensor<128x1x4095xf32>) row_reduce {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<128x65x4095xf32> -> tensor<128x1x4095xf32>
  kernel.yield %s : tensor<128x1x4095xf32>
}

// CHECK-LABEL: kernel.func @rows_of_31(%x: tensor<2x31xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 8, vector = 1, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x31xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_32(%x: tensor<2x32xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 8, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x32xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_256(%x: tensor<2x256xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 1, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x256xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_512_f16(%x: tensor<2x512xf16>) -> (tensor<2x1xf16>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 1, vector = 8, elements_per_thread = 16> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x512xf16> -> tensor<2x1xf16>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_257(%x: tensor<2x257xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 64, rows_per_block = 1, vector = 1, elements_per_thread = 5> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x257xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_5120(%x: tensor<2x5120xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 640, rows_per_block = 1, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x5120xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_5120_f16(%x: tensor<2x5120xf16>) -> (tensor<2x1xf16>) row_reduce schedule #kernel.schedule<row_reduce, block = 320, rows_per_block = 1, vector = 8, elements_per_thread = 16> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x5120xf16> -> tensor<2x1xf16>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_8192(%x: tensor<2x8192xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 1024, rows_per_block = 1, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x8192xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_8200(%x: tensor<2x8200xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 1024, rows_per_block = 1, vector = 4, elements_per_thread = 12> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x8200xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_32768(%x: tensor<2x32768xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 1024, rows_per_block = 1, vector = 4, elements_per_thread = 32> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x32768xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_32772(%x: tensor<2x32772xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 512, rows_per_block = 1, vector = 4, elements_per_thread = 24, split = 3> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x32772xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @rows_of_4m(%x: tensor<2x4194304xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 512, rows_per_block = 1, vector = 4, elements_per_thread = 32, split = 132> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x4194304xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @many_rows_of_5(%x: tensor<66000x5xf32>) -> (tensor<66000x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 256, rows_per_block = 256, vector = 1, elements_per_thread = 5> {
// CHECK-NEXT:    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<66000x5xf32> -> tensor<66000x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<66000x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @strided_rows_of_64(%x: tensor<3x64x35xf32>) -> (tensor<3x1x35xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 64, rows_per_block = 64, vector = 1, elements_per_thread = 64> {
// CHECK:       kernel.func @strided_rows_of_65(%x: tensor<128x65x4095xf32>) -> (tensor<128x1x4095xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 1024, rows_per_block = 1024, vector = 1, elements_per_thread = 1> {

// Rows whose groups of blocks would not all be resident at once (2 rows of
// 4M need 2 x 256 blocks of 32 elements a thread; 264 are resident on 132
// SMs, 32 on 16: kernel-schedule{sm_count=16}) take as many blocks a row as
// are resident for all rows at once, 132 or 16, each walking its part in
// passes of 32 elements a thread: one round of groups, not two.
// FEW-LABEL: kernel.func @rows_of_4m(%x: tensor<2x4194304xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 512, rows_per_block = 1, vector = 4, elements_per_thread = 32, split = 16> {

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
// CHECK-NEXT:    %y = kernel.fused row_reduce schedule <row_reduce, block = 32, rows_per_block = 1, vector = 4, elements_per_thread = 8>(%x) : (tensor<16x4x8x8xf32>) -> tensor<16x4x8x8xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<16x4x8x8xf32>):
// CHECK-NEXT:      %e = molten.exp %a : tensor<16x4x8x8xf32>
// CHECK-NEXT:      %s = molten.reduce_sum %e axes = [1, 2, 3] keepdim : tensor<16x4x8x8xf32> -> tensor<16x1x1x1xf32>
// CHECK-NEXT:      %d = molten.div %e, %s : (tensor<16x4x8x8xf32>, tensor<16x1x1x1xf32>) -> tensor<16x4x8x8xf32>
// CHECK-NEXT:      kernel.yield %d : tensor<16x4x8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<16x4x8x8xf32>
// CHECK-NEXT:  }

// -----

// gemm: on tensor cores (f16 or bf16 operands; every operand's contiguous
// axis, the last of its storage, a multiple of 8 elements, i.e. of 16
// bytes; M >= 64): 128 threads, four warps of 64x64 on 128x128 output tiles
// with a K step of 32 and four stages in flight (mma.sync m16n8k16).
// Otherwise on the SIMT cores: 256 threads on 128x128 output tiles with a
// K step of 8 (8x8 outputs a thread) where those give each SM a block, else
// on 64x64 output tiles with a K step of 16.
// f32: SIMT, whatever the shape.
kernel.func @gemm_small(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}
// f32 with rows of whole 16 bytes and 64 rows or more: tensor cores (3xTF32)
kernel.func @gemm_f32(%a: tensor<256x512xf32>, %b: tensor<512x256xf32>) -> (tensor<256x256xf32>) gemm {
  %m = molten.matmul %a, %b : (tensor<256x512xf32>, tensor<512x256xf32>) -> tensor<256x256xf32>
  kernel.yield %m : tensor<256x256xf32>
}
// K = 66 (rows of A not whole 16 bytes) keeps f32 on the SIMT cores: 16 x
// 12 tiles of 128x128 (partial in N) for 132 SMs
kernel.func @gemm_f32_large(%a: tensor<2048x66xf32>, %b: tensor<66x1500xf32>) -> (tensor<2048x1500xf32>) gemm {
  %m = molten.matmul %a, %b : (tensor<2048x66xf32>, tensor<66x1500xf32>) -> tensor<2048x1500xf32>
  kernel.yield %m : tensor<2048x1500xf32>
}
// f16, K and N multiples of 8, M = 128: tensor cores
kernel.func @gemm_f16(%a: tensor<128x512xf16>, %b: tensor<512x256xf16>, %bias: tensor<256xf16>) -> (tensor<128x256xf16>) gemm {
  %m = molten.matmul %a, %b : (tensor<128x512xf16>, tensor<512x256xf16>) -> tensor<128x256xf16>
  %r = molten.add %m, %bias : (tensor<128x256xf16>, tensor<256xf16>) -> tensor<128x256xf16>
  kernel.yield %r : tensor<128x256xf16>
}
// bf16, batched, the weight broadcast over the batch: tensor cores
kernel.func @gemm_batched(%a: tensor<4x512x1024xbf16>, %b: tensor<1024x2048xbf16>, %bias: tensor<2048xbf16>) -> (tensor<4x512x2048xbf16>) gemm {
  %m = molten.matmul %a, %b : (tensor<4x512x1024xbf16>, tensor<1024x2048xbf16>) -> tensor<4x512x2048xbf16>
  %r = molten.add %m, %bias : (tensor<4x512x2048xbf16>, tensor<2048xbf16>) -> tensor<4x512x2048xbf16>
  kernel.yield %r : tensor<4x512x2048xbf16>
}
// bf16, both transposed: A stored [K, M] = 64x72 (M contiguous), B stored
// [N, K] = 40x64 (K contiguous): tensor cores (N = 40 need not be a
// multiple of 8 here, as no operand is stored along it)
kernel.func @gemm_transposed(%a: tensor<64x72xbf16>, %b: tensor<40x64xbf16>) -> (tensor<72x40xbf16>) gemm {
  %m = molten.matmul %a, %b transpose_a transpose_b : (tensor<64x72xbf16>, tensor<40x64xbf16>) -> tensor<72x40xbf16>
  kernel.yield %m : tensor<72x40xbf16>
}
// f16 with K = 100: A's rows are not whole 16-byte copies: SIMT
kernel.func @gemm_k100(%a: tensor<128x100xf16>, %b: tensor<100x256xf16>) -> (tensor<128x256xf16>) gemm {
  %m = molten.matmul %a, %b : (tensor<128x100xf16>, tensor<100x256xf16>) -> tensor<128x256xf16>
  kernel.yield %m : tensor<128x256xf16>
}
// f16 with M = 16 (fewer rows than a warp tile): SIMT
kernel.func @gemm_m16(%a: tensor<16x8192xf16>, %b: tensor<8192x256xf16>) -> (tensor<16x256xf16>) gemm {
  %m = molten.matmul %a, %b : (tensor<16x8192xf16>, tensor<8192x256xf16>) -> tensor<16x256xf16>
  kernel.yield %m : tensor<16x256xf16>
}
// bf16 x @ w.T, 2048 x 4096 x 4096 (a Llama-3-8B layer at 2048 tokens):
// 256 tiles of 128x256, more than the SMs
kernel.func @gemm_linear_2048(%x: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<2048x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<2048x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<2048x4096xbf16>
  kernel.yield %m : tensor<2048x4096xbf16>
}
// the same layer batched as [2, 1024, 4096]: the persistent kernel takes
// one matrix only
kernel.func @gemm_linear_batched(%x: tensor<2x1024x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<2x1024x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<2x1024x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<2x1024x4096xbf16>
  kernel.yield %m : tensor<2x1024x4096xbf16>
}
// Llama-3-8B's down projection at 512 tokens, 512 x 4096 x 14336: 128
// tiles of 128x128 fill one round (ran 4% faster than 64 tiles of 128x256
// with K split in two)
kernel.func @gemm_down_512(%x: tensor<512x14336xbf16>, %w: tensor<4096x14336xbf16>) -> (tensor<512x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<512x14336xbf16>, tensor<4096x14336xbf16>) -> tensor<512x4096xbf16>
  kernel.yield %m : tensor<512x4096xbf16>
}
// Qwen2.5-7B's, 512 x 3584 x 18944: 64 tiles of 128x224 and 296 K steps,
// split in two parts of 148, fill one round (128 units)
kernel.func @gemm_qwen_down_512(%x: tensor<512x18944xbf16>, %w: tensor<3584x18944xbf16>) -> (tensor<512x3584xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<512x18944xbf16>, tensor<3584x18944xbf16>) -> tensor<512x3584xbf16>
  kernel.yield %m : tensor<512x3584xbf16>
}
// Qwen2.5-7B's up projection at 16 tokens, 16 x 18944 x 3584: 64-row
// tiles 144 wide (132 tiles, one an SM) streaming the weights
kernel.func @gemm_up_16(%x: tensor<16x3584xbf16>, %w: tensor<18944x3584xbf16>) -> (tensor<16x18944xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<16x3584xbf16>, tensor<18944x3584xbf16>) -> tensor<16x18944xbf16>
  kernel.yield %m : tensor<16x18944xbf16>
}
// Llama-3-8B's O projection at 16 tokens, 16 x 4096 x 4096: 64 tiles of
// 64x64 would leave half the SMs idle: the cp.async kernel
kernel.func @gemm_o_16(%x: tensor<16x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<16x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<16x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<16x4096xbf16>
  kernel.yield %m : tensor<16x4096xbf16>
}
// Llama-3-8B's O projection at 4 tokens, 4 x 4096 x 4096: the GEMV's
// estimate beats wgmma's; its down projection, 4 x 4096 x 14336: the
// persistent kernel's 64-row tiles, K in two parts, beat the GEMV, whose
// loads and sums of A's rows slow its stream of B; at 5 rows, wgmma always
kernel.func @gemv_o_4(%x: tensor<4x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<4x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<4x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4x4096xbf16>
  kernel.yield %m : tensor<4x4096xbf16>
}
kernel.func @gemm_down_4(%x: tensor<4x14336xbf16>, %w: tensor<4096x14336xbf16>) -> (tensor<4x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<4x14336xbf16>, tensor<4096x14336xbf16>) -> tensor<4x4096xbf16>
  kernel.yield %m : tensor<4x4096xbf16>
}
kernel.func @gemm_o_5(%x: tensor<5x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<5x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<5x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<5x4096xbf16>
  kernel.yield %m : tensor<5x4096xbf16>
}
// its O projection at 64 tokens, 64 x 4096 x 4096: 128 tiles of 64x32,
// one an SM (narrow tiles only above NARROW_MIN_ROWS rows)
kernel.func @gemm_o_64(%x: tensor<64x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<64x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<64x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<64x4096xbf16>
  kernel.yield %m : tensor<64x4096xbf16>
}
// its O projection, 512 x 4096 x 4096: parts of 32 K steps are too short;
// 128 tiles of 128x128 fill one round of the SMs
kernel.func @gemm_o_512(%x: tensor<512x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<512x4096xbf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<512x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<512x4096xbf16>
  kernel.yield %m : tensor<512x4096xbf16>
}

// CHECK-LABEL: kernel.func @gemm_small(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> {
// CHECK:       kernel.func @gemm_f32(%a: tensor<256x512xf32>, %b: tensor<512x256xf32>) -> (tensor<256x256xf32>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [64, 128, 16], warp = [64, 32], stages = 4> {
// CHECK:       kernel.func @gemm_f32_large(%a: tensor<2048x66xf32>, %b: tensor<66x1500xf32>) -> (tensor<2048x1500xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [128, 128, 8]> {
// CHECK:       kernel.func @gemm_f16(%a: tensor<128x512xf16>, %b: tensor<512x256xf16>, %bias: tensor<256xf16>) -> (tensor<128x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<128x512xf16>, tensor<512x256xf16>) -> tensor<128x256xf16>
// CHECK-NEXT:    %r = molten.add %m, %bias : (tensor<128x256xf16>, tensor<256xf16>) -> tensor<128x256xf16>
// CHECK-NEXT:    kernel.yield %r : tensor<128x256xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @gemm_batched(%a: tensor<4x512x1024xbf16>, %b: tensor<1024x2048xbf16>, %bias: tensor<2048xbf16>) -> (tensor<4x512x2048xbf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
// CHECK:       kernel.func @gemm_transposed(%a: tensor<64x72xbf16>, %b: tensor<40x64xbf16>) -> (tensor<72x40xbf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> {
// CHECK:       kernel.func @gemm_k100(%a: tensor<128x100xf16>, %b: tensor<100x256xf16>) -> (tensor<128x256xf16>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> {
// CHECK:       kernel.func @gemm_m16(%a: tensor<16x8192xf16>, %b: tensor<8192x256xf16>) -> (tensor<16x256xf16>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> {

// For arch=sm_90a the tensor-core gemms run on wgmma (mma_warps = 4), in the
// tile, stages and split-K whose estimated time is least: the 64-row tile
// of one warpgroup (block 128) for a gemm whose 128x256 tiles would leave
// most SMs idle (gemm_f16: 8 K steps, too few to pay for split-K's own
// cost), and eight stages, where streaming the operands bounds it; two
// warpgroups on 128x256 tiles, four stages, for the batched gemm that fills
// the SMs; a 64x64 tile for 72x40; from 9 rows on wgmma too, K split in
// 16 parts where 4 tiles would leave the SMs idle and K is long (gemm_m16:
// 128 K steps, parts of 8). f32
// and K = 100 stay on the SIMT cores. Where the estimate picks 128x256 tiles
// without split and they fill the SMs (gemm_linear_2048: 256 tiles), the
// persistent TMA kernel of that tile: a block an SM (persistent = 132) and
// a producer warpgroup (block 384); not for a batched gemm. Its tile's
// width, and split-K (parts of at least 64 K steps, all in one round), are
// those whose rounds of tiles the estimate finds fastest (gemm_o_512 and
// gemm_down_512: 128 columns, 128 tiles in one round; 128x256 would leave
// half the SMs idle; gemm_qwen_down_512: 128x224 with K in two parts). At
// few rows it also weighs 64-row tiles (block 256), narrow enough that
// most SMs stream their own columns of B (gemm_up_16); where even 64x64
// tiles would leave a quarter of the SMs idle, the cp.async kernel
// (gemm_o_16).
// WGMMA:       kernel.func @gemm_f32(%a: tensor<256x512xf32>, %b: tensor<512x256xf32>) -> (tensor<256x256xf32>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [64, 128, 16], warp = [64, 32], stages = 4> {
// WGMMA:       kernel.func @gemm_f16(%a: tensor<128x512xf16>, %b: tensor<512x256xf16>, %bias: tensor<256xf16>) -> (tensor<128x256xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, tile = [64, 64, 64], warp = [64, 64], stages = 8> {
// WGMMA:       kernel.func @gemm_batched(%a: tensor<4x512x1024xbf16>, %b: tensor<1024x2048xbf16>, %bias: tensor<2048xbf16>) -> (tensor<4x512x2048xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 64], warp = [64, 256], stages = 4> {
// WGMMA:       kernel.func @gemm_transposed(%a: tensor<64x72xbf16>, %b: tensor<40x64xbf16>) -> (tensor<72x40xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, tile = [64, 64, 64], warp = [64, 64], stages = 8> {
// WGMMA:       kernel.func @gemm_k100(%a: tensor<128x100xf16>, %b: tensor<100x256xf16>) -> (tensor<128x256xf16>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> {
// WGMMA:       kernel.func @gemm_m16(%a: tensor<16x8192xf16>, %b: tensor<8192x256xf16>) -> (tensor<16x256xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, split = 16, tile = [64, 64, 64], warp = [64, 64], stages = 8> {
// WGMMA:       kernel.func @gemm_linear_2048(%x: tensor<2048x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<2048x4096xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 132> {
// WGMMA:       kernel.func @gemm_linear_batched(%x: tensor<2x1024x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<2x1024x4096xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 64], warp = [64, 256], stages = 4> {
// WGMMA:       kernel.func @gemm_down_512(%x: tensor<512x14336xbf16>, %w: tensor<4096x14336xbf16>) -> (tensor<512x4096xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 128, 64], warp = [64, 128], stages = 7, persistent = 132> {
// WGMMA:       kernel.func @gemm_qwen_down_512(%x: tensor<512x18944xbf16>, %w: tensor<3584x18944xbf16>) -> (tensor<512x3584xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, split = 2, tile = [128, 224, 64], warp = [64, 224], stages = 5, persistent = 132> {
// WGMMA:       kernel.func @gemm_up_16(%x: tensor<16x3584xbf16>, %w: tensor<18944x3584xbf16>) -> (tensor<16x18944xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 256, tile = [64, 144, 64], warp = [64, 144], stages = 8, persistent = 132> {
// WGMMA:       kernel.func @gemm_o_16(%x: tensor<16x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<16x4096xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, tile = [64, 64, 64], warp = [64, 64], stages = 8> {
// WGMMA:       kernel.func @gemv_o_4(%x: tensor<4x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<4x4096xbf16>) gemm schedule #kernel.schedule<gemv, block = 256, vector = 8, tile = [4, 8, 4096], stages = 2, k_lanes = 32> {
// WGMMA:       kernel.func @gemm_down_4(%x: tensor<4x14336xbf16>, %w: tensor<4096x14336xbf16>) -> (tensor<4x4096xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 256, split = 2, tile = [64, 64, 64], warp = [64, 64], stages = 14, persistent = 132> {
// WGMMA:       kernel.func @gemm_o_5(%x: tensor<5x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<5x4096xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, split = 2, tile = [64, 64, 64], warp = [64, 64], stages = 8> {
// WGMMA:       kernel.func @gemm_o_64(%x: tensor<64x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<64x4096xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 256, tile = [64, 32, 64], warp = [64, 32], stages = 16, persistent = 132> {
// WGMMA:       kernel.func @gemm_o_512(%x: tensor<512x4096xbf16>, %w: tensor<4096x4096xbf16>) -> (tensor<512x4096xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 128, 64], warp = [64, 128], stages = 7, persistent = 132> {

// BAD-ARCH: error: kernel-schedule: unknown target 'sm90': a device (h100, h200, a100, l40s, sm_80, sm_89, sm_90, sm_90a) or an arch such as sm_90 or sm_90a

// -----

// A GEMV for at most 8 rows with B stored [K, N]: each thread sums
// `vector` consecutive columns (16 bytes, halved until it divides N) of
// every row over every k_lanes-th row of B, four rows of B in flight;
// 1024 threads while a thread's accumulators (rows x vector) are at most
// 16, 512 to 32, else 256; the most column runs a block (a power of two,
// at least 64 bytes of a row) that still give 7 of every 8 SMs a block:
// 4 runs of 8 for f16 decode on 132 SMs (128 blocks), 32 on 16 SMs; the K
// step is K rounded up to k_lanes.
kernel.func @gemv_decode(%x: tensor<1x4096xf16>, %w: tensor<4096x4096xf16>) -> (tensor<1x4096xf16>) gemm {
  %m = molten.matmul %x, %w : (tensor<1x4096xf16>, tensor<4096x4096xf16>) -> tensor<1x4096xf16>
  kernel.yield %m : tensor<1x4096xf16>
}
// f32, 3 rows, N = 1001 (odd: runs of one column, sixteen of them for 64
// bytes), K = 300 (rounded up to 64 lanes: 320)
kernel.func @gemv_odd(%x: tensor<3x300xf32>, %w: tensor<300x1001xf32>) -> (tensor<3x1001xf32>) gemm {
  %m = molten.matmul %x, %w : (tensor<3x300xf32>, tensor<300x1001xf32>) -> tensor<3x1001xf32>
  kernel.yield %m : tensor<3x1001xf32>
}
// bf16, batched: the batches count towards the blocks; 3 rows of 8
// accumulators: 512 threads
kernel.func @gemv_batched(%x: tensor<4x3x512xbf16>, %w: tensor<4x512x1024xbf16>) -> (tensor<4x3x1024xbf16>) gemm {
  %m = molten.matmul %x, %w : (tensor<4x3x512xbf16>, tensor<4x512x1024xbf16>) -> tensor<4x3x1024xbf16>
  kernel.yield %m : tensor<4x3x1024xbf16>
}
// 8 rows of 8 accumulators: 256 threads
kernel.func @gemv_rows8(%x: tensor<8x2048xf16>, %w: tensor<2048x8192xf16>) -> (tensor<8x8192xf16>) gemm {
  %m = molten.matmul %x, %w : (tensor<8x2048xf16>, tensor<2048x8192xf16>) -> tensor<8x8192xf16>
  kernel.yield %m : tensor<8x8192xf16>
}
// B stored [N, K] (transposed, nn.Linear's weight): a GEMV with a warp a
// column of B (k_lanes = 32, 8 columns a block), 16-byte vectors along K.
// 9 rows: not a GEMV, SIMT.
kernel.func @gemv_transposed_b(%x: tensor<1x256xf16>, %w: tensor<512x256xf16>) -> (tensor<1x512xf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<1x256xf16>, tensor<512x256xf16>) -> tensor<1x512xf16>
  kernel.yield %m : tensor<1x512xf16>
}
// 8 rows, B stored [N, K]: two columns a warp (tile 16 wide), each load
// of A serving both
kernel.func @gemv_transposed_b_rows8(%x: tensor<8x256xf16>, %w: tensor<512x256xf16>) -> (tensor<8x512xf16>) gemm {
  %m = molten.matmul %x, %w transpose_b : (tensor<8x256xf16>, tensor<512x256xf16>) -> tensor<8x512xf16>
  kernel.yield %m : tensor<8x512xf16>
}
kernel.func @gemm_m9(%x: tensor<9x256xf32>, %w: tensor<256x512xf32>) -> (tensor<9x512xf32>) gemm {
  %m = molten.matmul %x, %w : (tensor<9x256xf32>, tensor<256x512xf32>) -> tensor<9x512xf32>
  kernel.yield %m : tensor<9x512xf32>
}

// CHECK-LABEL: kernel.func @gemv_decode(%x: tensor<1x4096xf16>, %w: tensor<4096x4096xf16>) -> (tensor<1x4096xf16>) gemm schedule #kernel.schedule<gemv, block = 1024, vector = 8, tile = [1, 32, 4096], stages = 4, k_lanes = 256> {
// CHECK:       kernel.func @gemv_odd(%x: tensor<3x300xf32>, %w: tensor<300x1001xf32>) -> (tensor<3x1001xf32>) gemm schedule #kernel.schedule<gemv, block = 1024, vector = 1, tile = [3, 16, 320], stages = 4, k_lanes = 64> {
// CHECK:       kernel.func @gemv_batched(%x: tensor<4x3x512xbf16>, %w: tensor<4x512x1024xbf16>) -> (tensor<4x3x1024xbf16>) gemm schedule #kernel.schedule<gemv, block = 512, vector = 8, tile = [3, 32, 512], stages = 4, k_lanes = 128> {
// CHECK:       kernel.func @gemv_rows8(%x: tensor<8x2048xf16>, %w: tensor<2048x8192xf16>) -> (tensor<8x8192xf16>) gemm schedule #kernel.schedule<gemv, block = 256, vector = 8, tile = [8, 64, 2048], stages = 4, k_lanes = 32> {
// CHECK:       kernel.func @gemv_transposed_b(%x: tensor<1x256xf16>, %w: tensor<512x256xf16>) -> (tensor<1x512xf16>) gemm schedule #kernel.schedule<gemv, block = 256, vector = 8, tile = [1, 8, 256], stages = 2, k_lanes = 32> {
// CHECK:       kernel.func @gemv_transposed_b_rows8(%x: tensor<8x256xf16>, %w: tensor<512x256xf16>) -> (tensor<8x512xf16>) gemm schedule #kernel.schedule<gemv, block = 256, vector = 8, tile = [8, 16, 256], stages = 2, k_lanes = 32> {
// CHECK:       kernel.func @gemm_m9(%x: tensor<9x256xf32>, %w: tensor<256x512xf32>) -> (tensor<9x512xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> {
// FEW-LABEL: kernel.func @gemv_decode(%x: tensor<1x4096xf16>, %w: tensor<4096x4096xf16>) -> (tensor<1x4096xf16>) gemm schedule #kernel.schedule<gemv, block = 1024, vector = 8, tile = [1, 256, 4096], stages = 4, k_lanes = 32> {

// -----

// A schedule already present (by hand, or by an autotuner) is kept, on a
// kernel.func and on a kernel.fused of each kind, attention included (for
// which there is no heuristic); the kernels without one get theirs.
kernel.func @kept_row(%x: tensor<2x4096xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 128, rows_per_block = 2, vector = 4, elements_per_thread = 8> {
  %s = molten.reduce_max %x axes = [1] keepdim : tensor<2x4096xf32> -> tensor<2x1xf32>
  kernel.yield %s : tensor<2x1xf32>
}
kernel.func @kept_gemm(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 128, tile = [128, 128, 32]> {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}
kernel.func @kept_attention(%q: tensor<16x64xf16>) -> (tensor<16x64xf16>) attention matched #kernel.attention_match<query = 0, key = 0, value = 0, group = 1> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 64], warp = [16, 64], stages = 2> {
  %q_f32 = molten.cast %q : tensor<16x64xf16> to tensor<16x64xf32>
  %s = molten.matmul %q_f32, %q_f32 transpose_b : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x16xf32>
  %e = molten.exp %s : tensor<16x16xf32>
  %l = molten.reduce_sum %e axes = [1] keepdim : tensor<16x16xf32> -> tensor<16x1xf32>
  %p = molten.div %e, %l : (tensor<16x16xf32>, tensor<16x1xf32>) -> tensor<16x16xf32>
  %o = molten.matmul %p, %q_f32 : (tensor<16x16xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %out = molten.cast %o : tensor<16x64xf32> to tensor<16x64xf16>
  kernel.yield %out : tensor<16x64xf16>
}
func.func @kept_groups(%x: tensor<2x300xf32>) -> tensor<2x300xf32> {
  %s = kernel.fused row_reduce schedule <row_reduce, block = 512, vector = 2> (%x) : (tensor<2x300xf32>) -> tensor<2x1xf32> {
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

// CHECK-LABEL: kernel.func @kept_row(%x: tensor<2x4096xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 128, rows_per_block = 2, vector = 4, elements_per_thread = 8> {
// CHECK-NEXT:    %s = molten.reduce_max %x axes = [1] keepdim : tensor<2x4096xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    kernel.yield %s : tensor<2x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @kept_gemm(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 128, tile = [128, 128, 32]> {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:    kernel.yield %m : tensor<16x16xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @kept_attention(%q: tensor<16x64xf16>) -> (tensor<16x64xf16>) attention matched #kernel.attention_match<query = 0, key = 0, value = 0, group = 1> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 64], warp = [16, 64], stages = 2> {
// CHECK-NEXT:    %q_f32 = molten.cast %q : tensor<16x64xf16> to tensor<16x64xf32>
// CHECK-NEXT:    %s = molten.matmul %q_f32, %q_f32 transpose_b : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:    %e = molten.exp %s : tensor<16x16xf32>
// CHECK-NEXT:    %l = molten.reduce_sum %e axes = [1] keepdim : tensor<16x16xf32> -> tensor<16x1xf32>
// CHECK-NEXT:    %p = molten.div %e, %l : (tensor<16x16xf32>, tensor<16x1xf32>) -> tensor<16x16xf32>
// CHECK-NEXT:    %o = molten.matmul %p, %q_f32 : (tensor<16x16xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:    %out = molten.cast %o : tensor<16x64xf32> to tensor<16x64xf16>
// CHECK-NEXT:    kernel.yield %out : tensor<16x64xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @kept_groups(%x: tensor<2x300xf32>) -> tensor<2x300xf32> {
// CHECK-NEXT:    %s = kernel.fused row_reduce schedule <row_reduce, block = 512, rows_per_block = 1, vector = 2, elements_per_thread = 1>(%x) : (tensor<2x300xf32>) -> tensor<2x1xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<2x300xf32>):
// CHECK-NEXT:      %r = molten.reduce_sum %a axes = [1] keepdim : tensor<2x300xf32> -> tensor<2x1xf32>
// CHECK-NEXT:      kernel.yield %r : tensor<2x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = kernel.fused pointwise schedule <pointwise, block = 64, vector = 4, elements_per_thread = 4>(%x, %s) : (tensor<2x300xf32>, tensor<2x1xf32>) -> tensor<2x300xf32> {
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

// DECOMP-LABEL: kernel.func @softmax_matmul_row_reduce0(%x: tensor<8x1000xf32>) -> (tensor<8x1000xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 128, rows_per_block = 1, vector = 4, elements_per_thread = 8> attributes {fused_ops = ["reduce_max", "sub", "exp", "reduce_sum", "div"]} {
// DECOMP-NEXT:    %reduce_max = molten.reduce_max %x axes = [1] keepdim : tensor<8x1000xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:    %sub = molten.sub %x, %reduce_max : (tensor<8x1000xf32>, tensor<8x1xf32>) -> tensor<8x1000xf32>
// DECOMP-NEXT:    %exp = molten.exp %sub : tensor<8x1000xf32>
// DECOMP-NEXT:    %reduce_sum = molten.reduce_sum %exp axes = [1] keepdim : tensor<8x1000xf32> -> tensor<8x1xf32>
// DECOMP-NEXT:    %p = molten.div %exp, %reduce_sum : (tensor<8x1000xf32>, tensor<8x1xf32>) -> tensor<8x1000xf32>
// DECOMP-NEXT:    kernel.yield %p : tensor<8x1000xf32>
// DECOMP-NEXT:  }
// DECOMP-NEXT:  kernel.func @softmax_matmul_gemm0(%p: tensor<8x1000xf32>, %w: tensor<1000x64xf32>) -> (tensor<8x64xf32>) gemm schedule #kernel.schedule<gemv, block = 512, vector = 4, tile = [8, 16, 1024], stages = 4, k_lanes = 128> attributes {fused_ops = ["matmul", "relu"]} {
// DECOMP-NEXT:    %mm = molten.matmul %p, %w : (tensor<8x1000xf32>, tensor<1000x64xf32>) -> tensor<8x64xf32>
// DECOMP-NEXT:    %y = molten.relu %mm : tensor<8x64xf32>
// DECOMP-NEXT:    kernel.yield %y : tensor<8x64xf32>
// DECOMP-NEXT:  }
// DECOMP-NEXT:  func.func @softmax_matmul(%x: tensor<8x1000xf32>, %w: tensor<1000x64xf32>) -> tensor<8x64xf32> {
// DECOMP-NEXT:    %p = kernel.launch @softmax_matmul_row_reduce0(%x) : (tensor<8x1000xf32>) -> tensor<8x1000xf32>
// DECOMP-NEXT:    %y = kernel.launch @softmax_matmul_gemm0(%p, %w) : (tensor<8x1000xf32>, tensor<1000x64xf32>) -> tensor<8x64xf32>
// DECOMP-NEXT:    func.return %y : tensor<8x64xf32>
// DECOMP-NEXT:  }

// -----

// A gemm kernel of sibling matmuls (Qwen2.5-7B's gate and up at 512 tokens,
// fused on sm_90a): the persistent TMA kernel in the tile the estimate finds
// fastest for both products side by side (128 x 192), shared out by column
// (96 each), with the stages of the whole tile; for other targets, whose
// tensor-core kernels compute one product, the SIMT kernel.
kernel.func @gate_up(%x: tensor<512x3584xbf16>, %wg: tensor<18944x3584xbf16>, %wu: tensor<18944x3584xbf16>) -> (tensor<512x18944xbf16>) gemm matched #kernel.gemm_match<side_by_side> {
  %gate = molten.matmul %x, %wg transpose_b : (tensor<512x3584xbf16>, tensor<18944x3584xbf16>) -> tensor<512x18944xbf16>
  %up = molten.matmul %x, %wu transpose_b : (tensor<512x3584xbf16>, tensor<18944x3584xbf16>) -> tensor<512x18944xbf16>
  %act = molten.silu %gate : tensor<512x18944xbf16>
  %y = molten.mul %act, %up : (tensor<512x18944xbf16>, tensor<512x18944xbf16>) -> tensor<512x18944xbf16>
  kernel.yield %y : tensor<512x18944xbf16>
}

// CHECK-LABEL: kernel.func @gate_up(
// CHECK-SAME:    gemm matched #kernel.gemm_match<side_by_side> schedule #kernel.schedule<gemm_simt, block = 256, tile = [128, 128, 8]>

// WGMMA-LABEL: kernel.func @gate_up(
// WGMMA-SAME:    gemm matched #kernel.gemm_match<side_by_side> schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 96, 64], warp = [64, 96], stages = 5, persistent = 132>

// -----

// scans: rows of 37 (vector 1) on 16 lanes, two rows a 32-thread block; rows
// of 1000 a 64-thread block each (4 runs of 4 a thread cover the row in one
// step); rows of 32768 256-thread blocks (steps of 4096); f16 rows of 1000,
// 32 lanes of 4 runs of 8; a strided scan (axis 0 of [20000, 300]): a
// thread a row, 8 elements a step, blocks as a pointwise kernel's.
kernel.func @scan_rows_of_37(%x: tensor<71x37xf32>) -> (tensor<71x37xf32>) scan {
  %c = molten.cumsum %x axis = 1 : tensor<71x37xf32>
  kernel.yield %c : tensor<71x37xf32>
}
kernel.func @scan_rows_of_1000(%x: tensor<5x1000xf32>) -> (tensor<5x1000xf32>) scan {
  %c = molten.cumsum %x axis = 1 reverse : tensor<5x1000xf32>
  kernel.yield %c : tensor<5x1000xf32>
}
kernel.func @scan_rows_of_32768(%x: tensor<32768x32768xf32>) -> (tensor<32768x32768xf32>) scan {
  %c = molten.cumsum %x axis = 1 : tensor<32768x32768xf32>
  kernel.yield %c : tensor<32768x32768xf32>
}
kernel.func @scan_rows_of_1000_f16(%x: tensor<5x1000xf16>) -> (tensor<5x1000xf16>) scan {
  %c = molten.cumsum %x axis = 1 exclusive : tensor<5x1000xf16>
  kernel.yield %c : tensor<5x1000xf16>
}
kernel.func @scan_strided(%x: tensor<20000x300xf32>) -> (tensor<20000x300xf32>) scan {
  %c = molten.cumsum %x axis = 0 : tensor<20000x300xf32>
  kernel.yield %c : tensor<20000x300xf32>
}

// CHECK-LABEL: kernel.func @scan_rows_of_37(%x: tensor<71x37xf32>) -> (tensor<71x37xf32>) scan schedule #kernel.schedule<scan, block = 32, rows_per_block = 2, vector = 1, elements_per_thread = 4> {
// CHECK:       kernel.func @scan_rows_of_1000(%x: tensor<5x1000xf32>) -> (tensor<5x1000xf32>) scan schedule #kernel.schedule<scan, block = 64, rows_per_block = 1, vector = 4, elements_per_thread = 16> {
// CHECK:       kernel.func @scan_rows_of_32768(%x: tensor<32768x32768xf32>) -> (tensor<32768x32768xf32>) scan schedule #kernel.schedule<scan, block = 256, rows_per_block = 1, vector = 4, elements_per_thread = 16> {
// CHECK:       kernel.func @scan_rows_of_1000_f16(%x: tensor<5x1000xf16>) -> (tensor<5x1000xf16>) scan schedule #kernel.schedule<scan, block = 32, rows_per_block = 1, vector = 8, elements_per_thread = 32> {
// CHECK:       kernel.func @scan_strided(%x: tensor<20000x300xf32>) -> (tensor<20000x300xf32>) scan schedule #kernel.schedule<scan, block = 64, rows_per_block = 64, vector = 1, elements_per_thread = 8> {
