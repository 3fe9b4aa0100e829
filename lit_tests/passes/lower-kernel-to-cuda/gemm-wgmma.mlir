// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// gemm kernels on sm_90a's warpgroup tensor cores (wgmma).
//
// lower-kernel-to-cuda on hand-written kernel-level modules (kernel.func with
// a schedule, and the graph's func.func of kernel.launch): each kernel.func
// becomes a cuda.kernel over global pointers (its inputs, then its outputs,
// named after the kernel's values), the graph a cuda.host_func (the graph's
// inputs, then its outputs, named after the graph: molten.name, else the
// value's name) that launches the kernels with the grid and block of their
// schedules and allocates the buffers between them. SSA names inside kernels
// are matched by pattern: the pass chooses them.

// A matmul with a bias epilogue (as in gemm-mma.mlir) on sm_90a's warpgroup
// tensor cores (mma_warps = 4), as its #kernel.tiling has it: a 128x256
// output in one 128x256x64 block tile, two warpgroups of 64x256 (block 256,
// one block an SM: min_blocks 1), four stages of unpadded tiles: A's 128x64
// (32 KiB of halves in all) and B's 64x256 (64 KiB). Each thread's 16-byte
// cp.async copies land in 128-byte swizzled rows: chunk c of row r at
// chunk c ^ (r % 8) (arith.xori). K = 128 is two K steps; the prologue copies both
// (each its own group, two steps ahead of the math). The loop runs every step
// but the last (one trip): it waits for its copies (all but the newest
// group), makes them visible to the tensor cores (fence.proxy.async) and to
// the block (barrier), issues the copies two steps on (none here: `wanted` is
// false), then four m64n256k16 wgmmas (one per k16 of the step, each on
// descriptors of the stage's tiles: A K-major, `leading` unused, B stored
// [K][N], MN-major: trans_b, `leading` the 8192 bytes between its 64-column
// blocks; `stride` the 1024 bytes between groups of 8 rows), commits them and
// waits for all but this group, carrying 128 f32 accumulators a thread. The
// last step (stage 1, at 16384 halves into B's buffer) is peeled after the
// loop and waits for all groups (wgmma_wait 0): no wgmma is in flight into
// the epilogue, which (once every warp is past the K loop) adds the bias to
// each accumulator and stores it into B's idle buffer, unguarded (no partial
// tile); after a barrier the block copies that tile to the output 16 bytes a
// thread, whole rows a warp. The launch takes a SIMT variant when A, W or Y
// is not 16-byte aligned.
kernel.func @wgmma_k(%a: tensor<128x128xf16>, %w: tensor<128x256xf16>, %b: tensor<256xf16>) -> (tensor<128x256xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 64], warp = [64, 256], stages = 4> tiling #kernel.tiling<grid = [1, 1, 1], block = [128, 256, 64], warp = [64, 256], fragment = [64, 256, 16], stages = 4, k_steps = 2, partial = [], lhs = [128, 64, 64], rhs = [64, 256, 256]> attributes {fused_ops = ["matmul", "add"]} {
  %mm = molten.matmul %a, %w : (tensor<128x128xf16>, tensor<128x256xf16>) -> tensor<128x256xf16>
  %y = molten.add %mm, %b : (tensor<128x256xf16>, tensor<256xf16>) -> tensor<128x256xf16>
  kernel.yield %y : tensor<128x256xf16>
}
func.func @linear_wgmma(%a: tensor<128x128xf16>, %w: tensor<128x256xf16>, %b: tensor<256xf16>) -> (tensor<128x256xf16> {molten.name = "y"}) {
  %y = kernel.launch @wgmma_k(%a, %w, %b) : (tensor<128x128xf16>, tensor<128x256xf16>, tensor<256xf16>) -> tensor<128x256xf16>
  func.return %y : tensor<128x256xf16>
}

// CHECK-LABEL: cuda.kernel @wgmma_k(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) block 256 min_blocks 1 attributes {fused_ops = ["matmul", "add"]} {
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[TRUE:%[^ ]+]] = arith.constant true
// CHECK-DAG:     [[C0:%[^ ]+]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%[^ ]+]] = arith.constant 1 : index
// CHECK-DAG:     [[C2:%[^ ]+]] = arith.constant 2 : index
// CHECK-DAG:     [[C4:%[^ ]+]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%[^ ]+]] = arith.constant 8 : index
// CHECK-DAG:     [[C128:%[^ ]+]] = arith.constant 128 : index
// CHECK-DAG:     [[C16384:%[^ ]+]] = arith.constant 16384 : index
// CHECK:         %tid = cuda.thread_idx x
// CHECK-NEXT:    %warpgroup = arith.divsi %tid, [[C128]] : index
// CHECK:         %a_tile = cuda.shared_alloc 32768 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %b_tile = cuda.shared_alloc 65536 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    [[ROW:%[^ ]+]] = arith.divsi %tid, [[C8]] : index
// CHECK:         [[CHUNK:%[^ ]+]] = arith.divsi {{%[^ ]+}}, [[C8]] : index
// CHECK-NEXT:    [[ROW8:%[^ ]+]] = arith.remsi [[ROW]], [[C8]] : index
// CHECK-NEXT:    [[SWIZZLED:%[^ ]+]] = arith.xori [[CHUNK]], [[ROW8]] : index
// CHECK-NEXT:    [[AT:%[^ ]+]] = arith.muli [[SWIZZLED]], [[C8]] : index
// CHECK-NEXT:    [[A_DST:%[^ ]+]] = arith.addi {{%[^ ]+}}, [[AT]] : index
// CHECK-NOT:     cuda.wgmma
// CHECK:         cuda.cp_async %a_tile{{\[}}[[A_DST]]{{\]}}, %a[{{%[^ ]+}}], [[TRUE]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-COUNT-3: cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], [[TRUE]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-COUNT-8: cuda.cp_async %b_tile[{{%[^ ]+}}], %w[{{%[^ ]+}}], [[TRUE]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.cp_async_commit
// CHECK-COUNT-4: cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], [[TRUE]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-COUNT-8: cuda.cp_async %b_tile[{{%[^ ]+}}], %w[{{%[^ ]+}}], [[TRUE]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.cp_async_commit
// CHECK-NEXT:    {{^ *}}[[ACC:%[^ ,]+]], {{.*}} = scf.for %k_tile = [[C0]] to [[C1]] step [[C1]] iter_args([[ARG:%[^ ]+]] = [[ZERO]], {{.*}}) -> (f32, {{.*}}) {
// CHECK-NEXT:      cuda.cp_async_wait 1
// CHECK-NEXT:      cuda.fence_proxy_async
// CHECK-NEXT:      cuda.sync_threads
// CHECK-NEXT:      [[UPCOMING:%[^ ]+]] = arith.addi %k_tile, [[C2]] : index
// CHECK-NEXT:      [[WANTED:%[^ ]+]] = arith.cmpi slt, [[UPCOMING]], [[C2]] : index
// CHECK-NEXT:      {{%[^ ]+}} = arith.remsi [[UPCOMING]], [[C4]] : index
// CHECK-COUNT-4:   cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], [[WANTED]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-COUNT-8:   cuda.cp_async %b_tile[{{%[^ ]+}}], %w[{{%[^ ]+}}], [[WANTED]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-NEXT:      cuda.cp_async_commit
// CHECK-NEXT:      cuda.wgmma_fence
// CHECK-NEXT:      [[STAGE:%[^ ]+]] = arith.remsi %k_tile, [[C4]] : index
// CHECK:           [[DA:%[^ ]+]] = cuda.wgmma_descriptor %a_tile[{{%[^ ]+}}] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK-NEXT:      [[B_AT:%[^ ]+]] = arith.muli [[STAGE]], [[C16384]] : index
// CHECK-NEXT:      [[DB:%[^ ]+]] = cuda.wgmma_descriptor %b_tile{{\[}}[[B_AT]]{{\]}} leading 8192 stride 1024 : !cuda.ptr<f16, shared>
// CHECK-NEXT:      {{^ *}}[[D:%[^ ,]+]], {{.*}} = cuda.wgmma f16 n 256 trans_b [[DA]], [[DB]][[[ARG]], {{.*}}] : f32, {{.*}}
// CHECK-NOT:       cuda.sync_threads
// CHECK:           cuda.wgmma_descriptor %a_tile[{{%[^ ]+}}] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK:           cuda.wgmma_descriptor %b_tile[{{%[^ ]+}}] leading 8192 stride 1024 : !cuda.ptr<f16, shared>
// CHECK-NEXT:      {{^ *%[^ ,]+}}, {{.*}} = cuda.wgmma f16 n 256 trans_b {{%[^ ]+}}, {{%[^ ]+}}{{\[}}[[D]], {{.*}}] : f32, {{.*}}
// CHECK-COUNT-2:   cuda.wgmma f16 n 256 trans_b
// CHECK-NEXT:      cuda.wgmma_commit
// CHECK-NEXT:      {{^ *}}[[WAITED:%[^ ,]+]], {{.*}} = cuda.wgmma_wait 1[{{.*}}] : f32, {{.*}}
// CHECK-NEXT:      scf.yield [[WAITED]], {{.*}} : f32, {{.*}}
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.cp_async_wait 0
// CHECK-NEXT:    cuda.fence_proxy_async
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    cuda.wgmma_fence
// CHECK-NOT:     cuda.cp_async
// CHECK:         [[LA:%[^ ]+]] = cuda.wgmma_descriptor %a_tile[{{%[^ ]+}}] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    [[LB:%[^ ]+]] = cuda.wgmma_descriptor %b_tile{{\[}}[[C16384]]{{\]}} leading 8192 stride 1024 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    {{^ *%[^ ,]+}}, {{.*}} = cuda.wgmma f16 n 256 trans_b [[LA]], [[LB]][[[ACC]], {{.*}}] : f32, {{.*}}
// CHECK-COUNT-3: cuda.wgmma f16 n 256 trans_b
// CHECK-NEXT:    cuda.wgmma_commit
// CHECK-NEXT:    {{^ *}}[[DONE:%[^ ,]+]], {{.*}} = cuda.wgmma_wait 0[{{.*}}] : f32, {{.*}}
// CHECK-NOT:     {{cuda.wgmma|scf.if}}
// CHECK:         cuda.sync_threads
// CHECK-NEXT:    [[MM:%[^ ]+]] = arith.truncf [[DONE]] : f32 to f16
// CHECK-NEXT:    [[MMF:%[^ ]+]] = arith.extf [[MM]] : f16 to f32
// CHECK:         [[BIAS:%[^ ]+]] = cuda.load %b{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:    [[BIASF:%[^ ]+]] = arith.extf [[BIAS]] : f16 to f32
// CHECK-NEXT:    [[SUM:%[^ ]+]] = arith.addf [[MMF]], [[BIASF]] : f32
// CHECK:         [[OUT:%[^ ]+]] = arith.truncf [[SUM]] : f32 to f16
// CHECK-NEXT:    cuda.store [[OUT]], %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16, shared>
// CHECK-COUNT-127: cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16, shared>
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    scf.for {{%[^ ]+}} = {{%[^ ]+}} to {{%[^ ]+}} step {{%[^ ]+}} {
// CHECK-NOT:       scf.if
// CHECK:           [[STAGED:%[^ ,]+]], {{.*}} = cuda.load %b_tile{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16, shared> -> f16, f16, f16, f16, f16, f16, f16, f16
// CHECK-NOT:       scf.if
// CHECK:           cuda.store [[STAGED]], {{.*}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, f16, f16, f16, f16, f16, f16, f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.kernel @wgmma_k_simt(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) block 256 min_blocks 2
// CHECK-NOT:     cuda.wgmma
// CHECK:       cuda.host_func @linear_wgmma(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) outputs 1 shapes [[128, 128], [128, 256], [256], [128, 256]] {
// CHECK-NEXT:    cuda.launch @wgmma_k grid [1, 1, 1] block [256, 1, 1](%a, %w, %b, %y) aligned [0, 1, 3] else @wgmma_k_simt grid [4, 2, 1] block [256, 1, 1] : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// One K step (K = 64), bf16, both operands transposed, M = 100 of a 128x128
// tile (two warpgroups of 64x128): no loop, the only step peeled. The
// prologue still commits two groups, the second empty (its copies off: a
// false flag), so that the wait counts stay the same; the step waits for
// all of them. A is stored [K][M]: MN-major (trans_a, `leading` the 8192
// bytes between its 64-column blocks), its copies off past M; B stored
// [N][K]: K-major (no trans_b, `leading` unused). The wgmmas start from
// zero accumulators; the epilogue stages each accumulator in B's buffer,
// guarded by its row (M is partial), and the copy to the output is guarded
// by the row too.
kernel.func @wgmma_one_step(%a: tensor<64x100xbf16>, %w: tensor<128x64xbf16>) -> (tensor<100x128xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 128, 64], warp = [64, 128], stages = 4> tiling #kernel.tiling<grid = [1, 1, 1], block = [128, 128, 64], warp = [64, 128], fragment = [64, 128, 16], stages = 4, k_steps = 1, partial = [m], lhs = [64, 128, 128], rhs = [128, 64, 64]> {
  %y = molten.matmul %a, %w transpose_a transpose_b : (tensor<64x100xbf16>, tensor<128x64xbf16>) -> tensor<100x128xbf16>
  kernel.yield %y : tensor<100x128xbf16>
}

// CHECK-LABEL: cuda.kernel @wgmma_one_step(%a: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) block 256 min_blocks 1 {
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[TRUE:%[^ ]+]] = arith.constant true
// CHECK-DAG:     [[C0:%[^ ]+]] = arith.constant 0 : index
// CHECK-DAG:     [[C100:%[^ ]+]] = arith.constant 100 : index
// CHECK:         %a_tile = cuda.shared_alloc 32768 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    %b_tile = cuda.shared_alloc 32768 : !cuda.ptr<bf16, shared>
// CHECK:         arith.xori
// CHECK:         [[A_OK:%[^ ]+]] = arith.cmpi slt, {{%[^ ]+}}, [[C100]] : index
// CHECK:         cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], [[A_OK]] : !cuda.ptr<bf16, shared>, !cuda.ptr<bf16>
// CHECK-COUNT-3: cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], {{%[^ ]+}} : !cuda.ptr<bf16, shared>, !cuda.ptr<bf16>
// CHECK-COUNT-4: cuda.cp_async %b_tile[{{%[^ ]+}}], %w[{{%[^ ]+}}], [[TRUE]] : !cuda.ptr<bf16, shared>, !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.cp_async_commit
// CHECK-NEXT:    [[FALSE:%[^ ]+]] = arith.constant false
// CHECK-NEXT:    [[A_OFF:%[^ ]+]] = arith.andi [[A_OK]], [[FALSE]] : i1
// CHECK:         cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], [[A_OFF]] : !cuda.ptr<bf16, shared>, !cuda.ptr<bf16>
// CHECK-COUNT-3: cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], {{%[^ ]+}} : !cuda.ptr<bf16, shared>, !cuda.ptr<bf16>
// CHECK-COUNT-4: cuda.cp_async %b_tile[{{%[^ ]+}}], %w[{{%[^ ]+}}], [[FALSE]] : !cuda.ptr<bf16, shared>, !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.cp_async_commit
// CHECK-NEXT:    cuda.cp_async_wait 0
// CHECK-NEXT:    cuda.fence_proxy_async
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    cuda.wgmma_fence
// CHECK:         [[DA:%[^ ]+]] = cuda.wgmma_descriptor %a_tile[{{%[^ ]+}}] leading 8192 stride 1024 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    [[DB:%[^ ]+]] = cuda.wgmma_descriptor %b_tile{{\[}}[[C0]]{{\]}} leading 16 stride 1024 : !cuda.ptr<bf16, shared>
// CHECK-NEXT:    {{^ *%[^ ,]+}}, {{.*}} = cuda.wgmma bf16 n 128 trans_a [[DA]], [[DB]][[[ZERO]], [[ZERO]], {{.*}}] : f32, {{.*}}
// CHECK-COUNT-3: cuda.wgmma bf16 n 128 trans_a
// CHECK-NEXT:    cuda.wgmma_commit
// CHECK-NEXT:    {{^ *}}[[DONE:%[^ ,]+]], {{.*}} = cuda.wgmma_wait 0[{{.*}}] : f32, {{.*}}
// CHECK-NOT:     {{scf.for|cuda.wgmma}}
// CHECK:         cuda.sync_threads
// CHECK:         [[INSIDE:%[^ ]+]] = arith.cmpi slt, {{%[^ ]+}}, [[C100]] : index
// CHECK:         {{%[^ ]+}} = arith.truncf [[DONE]] : f32 to bf16
// CHECK:         scf.if [[INSIDE]] {
// CHECK:           cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : bf16, !cuda.ptr<bf16, shared>
// CHECK-NOT:       scf.if
// CHECK:           cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : bf16, !cuda.ptr<bf16, shared>
// CHECK-NEXT:    }
// CHECK-COUNT-62: cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : bf16, !cuda.ptr<bf16, shared>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    scf.for
// CHECK:           [[STAGED:%[^ ,]+]], {{.*}} = cuda.load %b_tile{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<bf16, shared> -> bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16
// CHECK-NEXT:      [[ROW_OK:%[^ ]+]] = arith.cmpi slt, {{%[^ ]+}}, [[C100]] : index
// CHECK-NEXT:      scf.if [[ROW_OK]] {
// CHECK:             cuda.store [[STAGED]], {{.*}}, %y{{\[}}{{%[^ ]+}}{{\]}} : bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, !cuda.ptr<bf16>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.kernel @wgmma_one_step_simt(%a: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) block 256 min_blocks 2

// -----

// Split-K (split = 3): a gemm of 20 rows (a partial 64-row tile of one
// warpgroup), x @ w.T with K = 1000 in 16 K steps, in three parts of 6, 6
// and 4 steps. The grid's z is batches x split; block z takes part z % 3,
// from K step 6 z, min(6, 16 - 6 z) steps of it (arith.minsi). The kernel
// takes two scratch buffers after its outputs: a counter per output tile
// (zeroed before the launch) and the parts, each thread's 32 accumulators
// 128 floats apart. A thread with rows in the output (the first row of
// its fragment below M = 20) stores its part; the block arrives at its
// tile's counter (cuda.last_arrival); the last of the three adds the parts
// in order of part (an scf.for over parts, coherent loads), none for a
// thread without rows, and runs the epilogue.
kernel.func @wgmma_split(%x: tensor<20x1000xbf16>, %w: tensor<256x1000xbf16>) -> (tensor<20x256xbf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, split = 3, tile = [64, 64, 64], warp = [64, 64], stages = 8> {
  %m = molten.matmul %x, %w transpose_b : (tensor<20x1000xbf16>, tensor<256x1000xbf16>) -> tensor<20x256xbf16>
  kernel.yield %m : tensor<20x256xbf16>
}
func.func @split(%x: tensor<20x1000xbf16>, %w: tensor<256x1000xbf16>) -> tensor<20x256xbf16> {
  %y = kernel.launch @wgmma_split(%x, %w) : (tensor<20x1000xbf16>, tensor<256x1000xbf16>) -> tensor<20x256xbf16>
  func.return %y : tensor<20x256xbf16>
}

// CHECK-LABEL: cuda.kernel @wgmma_split(%x: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %m: !cuda.ptr<bf16>, %split_k_counters: !cuda.ptr<i32>, %split_k_parts: !cuda.ptr<f32>) block 128 min_blocks 1 {
// CHECK-DAG:     [[C3:%[^ ]+]] = arith.constant 3 : index
// CHECK-DAG:     [[C6:%[^ ]+]] = arith.constant 6 : index
// CHECK-DAG:     [[C20:%[^ ]+]] = arith.constant 20 : index
// CHECK:         [[PART:%[^ ]+]] = arith.remsi {{%[^ ]+}}, [[C3]] : index
// CHECK-NEXT:    [[BEGIN:%[^ ]+]] = arith.muli [[PART]], [[C6]] : index
// CHECK-NEXT:    [[LEFT:%[^ ]+]] = arith.subi {{%[^ ]+}}, [[BEGIN]] : index
// CHECK-NEXT:    [[COUNT:%[^ ]+]] = arith.minsi [[C6]], [[LEFT]] : index
// CHECK:         scf.for %k_tile =
// CHECK:         [[HAS_ROWS:%[^ ]+]] = arith.cmpi slt, {{%[^ ]+}}, [[C20]] : index
// CHECK-NEXT:    scf.if [[HAS_ROWS]] {
// CHECK-COUNT-32:  cuda.store {{%[^ ]+}}, %split_k_parts[{{%[^ ]+}}] : f32, !cuda.ptr<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %last = cuda.last_arrival %split_k_counters[{{%[^ ]+}}], [[C3]] : !cuda.ptr<i32>
// CHECK-NEXT:    scf.if %last {
// CHECK-NEXT:      [[PARTS:%[^ ]+]] = arith.select [[HAS_ROWS]], [[C3]], {{%[^ ]+}} : index
// CHECK-NEXT:      {{.*}} = scf.for %part = {{%[^ ]+}} to [[PARTS]] step
// CHECK-COUNT-32:    cuda.load coherent %split_k_parts[{{%[^ ]+}}] : !cuda.ptr<f32> -> f32
// CHECK:             scf.yield
// CHECK:           cuda.store {{.*}}, %m[{{%[^ ]+}}]
// CHECK:         {{^    [}]$}}
// CHECK-NEXT:    cuda.return
// CHECK:       cuda.kernel @wgmma_split_simt(%x: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %m: !cuda.ptr<bf16>, %split_k_counters: !cuda.ptr<i32>, %split_k_parts: !cuda.ptr<f32>) block 256
// CHECK-LABEL: cuda.host_func @split(%x: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 shapes [[20, 1000], [256, 1000], [20, 256]] {
// CHECK-NEXT:    %split_k_counters = cuda.alloc 4 : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.zero %split_k_counters, 4 restored : !cuda.ptr<i32>
// CHECK-NEXT:    %split_k_parts = cuda.alloc 49152 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @wgmma_split grid [4, 1, 3] block [128, 1, 1](%x, %w, %y, %split_k_counters, %split_k_parts) aligned [0, 1, 2] else @wgmma_split_simt grid [4, 1, 1] block [256, 1, 1]
// CHECK-NEXT:    cuda.free %split_k_counters : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.free %split_k_parts : !cuda.ptr<f32>
