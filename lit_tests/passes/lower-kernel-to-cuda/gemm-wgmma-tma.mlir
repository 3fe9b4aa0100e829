// RUN: molten-opt %s -p lower-kernel-to-cuda | filecheck %s

// A persistent wgmma gemm fed by TMA (the schedule's `persistent = 7`):
// x @ w.T, 300x1000x520 in 128x256 tiles: 3 x 4 = 12 output tiles for 7
// blocks, each looping over its own (block b takes tiles b, b + 7, ...).
// The kernel takes a tensor map per operand after its outputs; the
// launcher makes them (x in boxes of 128 rows by 64 elements of K, w in
// boxes of 256 rows) and launches 7 blocks of three warpgroups. Thread 0
// initializes a full barrier (one arrival: the producer's, with the
// stage's bytes) and an empty one (the 8 consumer warps) per stage.
// The last warpgroup is the producer: it gives up registers (setmaxnreg
// 40) and one of its threads, for each K step of each tile, waits for the
// stage to be empty (the parity before this use of it), expects the
// stage's 49152 bytes on its full barrier and issues both TMA loads at
// (K, row). The two consumer warpgroups take registers (232) and, per K
// step, wait on the stage's full barrier, issue four m64n256k16 wgmmas,
// wait for all but this step's, and release the previous step's stage
// (the first lane of each warp arrives);
// after a tile's steps they wait for all, release its last stage and run
// the epilogue, guarded at the partial tiles' rows and columns. The SIMT
// variant for misaligned pointers takes the maps too, unused.
kernel.func @wgmma_tma(%x: tensor<300x520xbf16>, %w: tensor<1000x520xbf16>) -> (tensor<300x1000xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 7> {
  %m = molten.matmul %x, %w transpose_b : (tensor<300x520xbf16>, tensor<1000x520xbf16>) -> tensor<300x1000xbf16>
  kernel.yield %m : tensor<300x1000xbf16>
}
func.func @tma(%x: tensor<300x520xbf16>, %w: tensor<1000x520xbf16>) -> tensor<300x1000xbf16> {
  %y = kernel.launch @wgmma_tma(%x, %w) : (tensor<300x520xbf16>, tensor<1000x520xbf16>) -> tensor<300x1000xbf16>
  func.return %y : tensor<300x1000xbf16>
}

// The same gemm in clusters of two blocks (`cluster = 2`, 8 blocks): cluster
// tiles of 256 rows, block `rank` (its index % 2) taking rows 128 rank of
// each; each block loads its 128 rows of the 256 of w's tile, multicast
// into both blocks (mask 3), so w's box is 128 rows; a stage's empty
// barrier counts the 8 consumer warps of both blocks, each warp arriving
// at it in both; the cluster waits for all its blocks once the barriers
// are made and before any block leaves. The kernel runs in clusters of 2.
kernel.func @wgmma_tma_cluster(%x: tensor<300x520xbf16>, %w: tensor<1000x520xbf16>) -> (tensor<300x1000xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 8, cluster = 2> {
  %m = molten.matmul %x, %w transpose_b : (tensor<300x520xbf16>, tensor<1000x520xbf16>) -> tensor<300x1000xbf16>
  kernel.yield %m : tensor<300x1000xbf16>
}
func.func @tma_cluster(%x: tensor<300x520xbf16>, %w: tensor<1000x520xbf16>) -> tensor<300x1000xbf16> {
  %y = kernel.launch @wgmma_tma_cluster(%x, %w) : (tensor<300x520xbf16>, tensor<1000x520xbf16>) -> tensor<300x1000xbf16>
  func.return %y : tensor<300x1000xbf16>
}

// CHECK-LABEL: cuda.kernel @wgmma_tma(%x: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %m: !cuda.ptr<bf16>, %a_map: !cuda.tensor_map<bf16>, %b_map: !cuda.tensor_map<bf16>) block 384 min_blocks 1 {
// CHECK:         %stage_barriers = cuda.shared_alloc 8 : !cuda.ptr<ui64, shared>
// CHECK:         scf.if {{%[^ ]+}} {
// CHECK-COUNT-4:   cuda.mbarrier_init %stage_barriers[{{%[^ ]+}}], {{1|8}} : !cuda.ptr<ui64, shared>
// CHECK-COUNT-4:   cuda.mbarrier_init %stage_barriers[{{%[^ ]+}}], {{1|8}} : !cuda.ptr<ui64, shared>
// CHECK-NEXT:      cuda.fence_mbarrier_init
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.sync_threads
// CHECK:         scf.if {{%[^ ]+}} {
// CHECK-NEXT:      cuda.set_max_registers "dec" 40
// CHECK:           scf.if {{%[^ ]+}} {
// CHECK-NEXT:        scf.for
// CHECK:               scf.for
// CHECK:                 cuda.mbarrier_wait %stage_barriers[{{%[^ ]+}}], {{%[^ ]+}} : !cuda.ptr<ui64, shared>
// CHECK-NEXT:            cuda.mbarrier_arrive %stage_barriers[[[FULL:%[^ ]+]]] expect_tx 49152 : !cuda.ptr<ui64, shared>
// CHECK:                 cuda.tma_load %a_map, %a_tile[{{%[^ ]+}}], %stage_barriers[[[FULL]]], [{{%[^ ]+}}, {{%[^ ]+}}] : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
// CHECK:                 cuda.tma_load %b_map, %b_tile[{{%[^ ]+}}], %stage_barriers[[[FULL]]], [{{%[^ ]+}}, {{%[^ ]+}}] : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
// CHECK:         scf.if {{%[^ ]+}} {
// CHECK-NEXT:      cuda.set_max_registers "inc" 232
// CHECK:           scf.for
// CHECK:             scf.for %k_tile =
// CHECK:               cuda.mbarrier_wait %stage_barriers[{{%[^ ]+}}], {{%[^ ]+}} : !cuda.ptr<ui64, shared>
// CHECK-NEXT:          cuda.wgmma_fence
// CHECK-COUNT-4:       cuda.wgmma bf16 n 256
// CHECK:               cuda.wgmma_commit
// CHECK-NEXT:          {{.*}} = cuda.wgmma_wait 1
// CHECK:               scf.if {{%[^ ]+}} {
// CHECK:                 cuda.mbarrier_arrive %stage_barriers[{{%[^ ]+}}] : !cuda.ptr<ui64, shared>
// CHECK:             {{.*}} = cuda.wgmma_wait 0
// CHECK:             cuda.mbarrier_arrive %stage_barriers[{{%[^ ]+}}] : !cuda.ptr<ui64, shared>
// CHECK:             cuda.store {{.*}}, %m[{{%[^ ]+}}] : bf16, !cuda.ptr<bf16>
// CHECK:       cuda.kernel @wgmma_tma_simt(%x: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %m: !cuda.ptr<bf16>, %{{[^ ]+}}: !cuda.tensor_map<bf16>, %{{[^ ]+}}: !cuda.tensor_map<bf16>) block 256
// CHECK-LABEL: cuda.host_func @tma(%x: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 shapes [[300, 520], [1000, 520], [300, 1000]] {
// CHECK-NEXT:    %tensor_map = cuda.make_tensor_map %x [300, 520] box [128, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
// CHECK-NEXT:    %tensor_map_1 = cuda.make_tensor_map %w [1000, 520] box [256, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
// CHECK-NEXT:    cuda.launch @wgmma_tma grid [7, 1, 1] block [384, 1, 1](%x, %w, %y, %tensor_map, %tensor_map_1) aligned [0, 1] else @wgmma_tma_simt grid [16, 5, 1] block [256, 1, 1]

// CHECK-LABEL: cuda.kernel @wgmma_tma_cluster(%x: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %m: !cuda.ptr<bf16>, %a_map: !cuda.tensor_map<bf16>, %b_map: !cuda.tensor_map<bf16>) block 384 min_blocks 1 cluster 2 {
// CHECK-COUNT-4:   cuda.mbarrier_init %stage_barriers[{{%[^ ]+}}], {{1|16}} : !cuda.ptr<ui64, shared>
// CHECK-COUNT-4:   cuda.mbarrier_init %stage_barriers[{{%[^ ]+}}], {{1|16}} : !cuda.ptr<ui64, shared>
// CHECK-NEXT:      cuda.fence_mbarrier_init
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.cluster_sync
// CHECK:                 cuda.tma_load %a_map, %a_tile[{{%[^ ]+}}], %stage_barriers[[[FULL:%[^ ]+]]], [{{%[^ ]+}}, {{%[^ ]+}}] : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
// CHECK:                 cuda.tma_load %b_map, %b_tile[{{%[^ ]+}}], %stage_barriers[[[FULL]]], [{{%[^ ]+}}, {{%[^ ]+}}] multicast 3 : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
// CHECK:               scf.if {{%[^ ]+}} {
// CHECK:                 cuda.mbarrier_arrive %stage_barriers[[[EMPTY:%[^ ]+]]] cta {{%[^ ]+}} : !cuda.ptr<ui64, shared>
// CHECK-NEXT:            cuda.mbarrier_arrive %stage_barriers[[[EMPTY]]] cta {{%[^ ]+}} : !cuda.ptr<ui64, shared>
// CHECK:         cuda.cluster_sync
// CHECK-NEXT:    cuda.return
// CHECK-LABEL: cuda.host_func @tma_cluster(
// CHECK:         %{{[^ ]+}} = cuda.make_tensor_map %w [1000, 520] box [128, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
// CHECK-NEXT:    cuda.launch @wgmma_tma_cluster grid [8, 1, 1] block [384, 1, 1]

// Split-K in the persistent kernel (`split = 3`): 300x1000x520's 9 K steps
// in 3 parts of 3, 3 x 4 tiles x 3 parts = 36 units for 5 blocks (block b
// takes units b, b + 5, ...; the parts of a tile are consecutive units).
// After a unit's steps the consumers store their accumulators to the
// parts' scratch and arrive at the tile's counter among their 256 threads
// alone (a named barrier: the producer warpgroup runs on); the last to
// arrive adds the 3 parts in order and runs the epilogue. The launcher
// zeroes the 12 counters and passes both scratch buffers after the maps.
kernel.func @wgmma_tma_split(%x: tensor<300x520xbf16>, %w: tensor<1000x520xbf16>) -> (tensor<300x1000xbf16>) gemm schedule #kernel.schedule<gemm_tma, block = 384, split = 3, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 5> {
  %m = molten.matmul %x, %w transpose_b : (tensor<300x520xbf16>, tensor<1000x520xbf16>) -> tensor<300x1000xbf16>
  kernel.yield %m : tensor<300x1000xbf16>
}
func.func @tma_split(%x: tensor<300x520xbf16>, %w: tensor<1000x520xbf16>) -> tensor<300x1000xbf16> {
  %y = kernel.launch @wgmma_tma_split(%x, %w) : (tensor<300x520xbf16>, tensor<1000x520xbf16>) -> tensor<300x1000xbf16>
  func.return %y : tensor<300x1000xbf16>
}

// CHECK-LABEL: cuda.kernel @wgmma_tma_split(%x: !cuda.ptr<bf16>, %w: !cuda.ptr<bf16>, %m: !cuda.ptr<bf16>, %a_map: !cuda.tensor_map<bf16>, %b_map: !cuda.tensor_map<bf16>, %split_k_counters: !cuda.ptr<i32>, %split_k_parts: !cuda.ptr<f32>) block 384 min_blocks 1 {
// CHECK:             scf.for %k_tile = {{%[^ ]+}} to {{%[^ ]+}} step {{%[^ ]+}}
// CHECK-COUNT-4:       cuda.wgmma bf16 n 256
// CHECK:             {{.*}} = cuda.wgmma_wait 0
// CHECK-COUNT-128:   cuda.store {{%[^ ]+}}, %split_k_parts[{{%[^ ]+}}] : f32, !cuda.ptr<f32>
// CHECK:             %last = cuda.last_arrival %split_k_counters[{{%[^ ]+}}], {{%[^ ]+}} among 256 : !cuda.ptr<i32>
// CHECK-NEXT:        scf.if %last {
// CHECK:               scf.for %part =
// CHECK-COUNT-128:       cuda.load coherent %split_k_parts[{{%[^ ]+}}] : !cuda.ptr<f32> -> f32
// CHECK:               cuda.store {{.*}}, %m[{{%[^ ]+}}] : bf16, !cuda.ptr<bf16>
// CHECK-LABEL: cuda.host_func @tma_split(
// CHECK:         %split_k_counters = cuda.alloc 12 : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.zero %split_k_counters, 12 restored : !cuda.ptr<i32>
// CHECK-NEXT:    %split_k_parts = cuda.alloc 1179648 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @wgmma_tma_split grid [5, 1, 1] block [384, 1, 1](%x, %w, %y, %tensor_map, %tensor_map_1, %split_k_counters, %split_k_parts)
