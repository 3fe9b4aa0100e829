// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// gemm kernels on tensor cores through mma.sync (cp.async, ldmatrix).
//
// lower-kernel-to-cuda on hand-written kernel-level modules (kernel.func with
// a schedule, and the graph's func.func of kernel.launch): each kernel.func
// becomes a cuda.kernel over global pointers (its inputs, then its outputs,
// named after the kernel's values), the graph a cuda.host_func (the graph's
// inputs, then its outputs, named after the graph: molten.name, else the
// value's name) that launches the kernels with the grid and block of their
// schedules and allocates the buffers between them. SSA names inside kernels
// are matched by pattern: the pass chooses them.

// A matmul with a bias epilogue (as in gemm-simt.mlir) on tensor cores, as
// its #kernel.tiling has it: 32x32x16 block tiles, two warps of 32x16 (block
// 64), two stages. Per stage, A's 32x16 tile and B's 16x32 tile sit in shared
// memory with rows padded to 24 and 40 halves (the tiling's pitch). A
// prologue copies the first K step (cp.async, 16 bytes a thread and operand;
// A's rows past M = 40 zero-filled, B's copies always valid); each K step
// waits for its tile, then copies the next one into the other stage, if there
// is a next one (K = 32: two steps), and runs each warp's 2x2 mma.sync
// m16n8k16 on fragments from ldmatrix (B's transposed: it is stored [K][N]).
// The epilogue adds the bias to the accumulators in registers, guarded by the
// row alone (only M is partial), a pair of adjacent columns at a time, and stages the results in B's idle buffer
// (rows of 32 + 8 halves); the block then stores them 16 bytes a thread, rows
// past M skipped. The launch takes a SIMT variant when A, W or Y is not
// 16-byte aligned.
kernel.func @mma_k(%a: tensor<40x32xf16>, %w: tensor<32x32xf16>, %b: tensor<32xf16>) -> (tensor<40x32xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 64, tile = [32, 32, 16], warp = [32, 16], stages = 2> tiling #kernel.tiling<grid = [1, 2, 1], block = [32, 32, 16], warp = [32, 16], fragment = [16, 8, 16], stages = 2, k_steps = 2, partial = [m], lhs = [32, 16, 24], rhs = [16, 32, 40]> attributes {fused_ops = ["matmul", "add"]} {
  %mm = molten.matmul %a, %w : (tensor<40x32xf16>, tensor<32x32xf16>) -> tensor<40x32xf16>
  %y = molten.add %mm, %b : (tensor<40x32xf16>, tensor<32xf16>) -> tensor<40x32xf16>
  kernel.yield %y : tensor<40x32xf16>
}
func.func @linear_mma(%a: tensor<40x32xf16>, %w: tensor<32x32xf16>, %b: tensor<32xf16>) -> (tensor<40x32xf16> {molten.name = "y"}) {
  %y = kernel.launch @mma_k(%a, %w, %b) : (tensor<40x32xf16>, tensor<32x32xf16>, tensor<32xf16>) -> tensor<40x32xf16>
  func.return %y : tensor<40x32xf16>
}

// CHECK-LABEL: cuda.kernel @mma_k(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) block 64 min_blocks 1 attributes {fused_ops = ["matmul", "add"]} {
// CHECK-DAG:     [[TRUE:%[^ ]+]] = arith.constant true
// CHECK-DAG:     [[C2:%[^ ]+]] = arith.constant 2 : index
// CHECK-DAG:     [[C40:%[^ ]+]] = arith.constant 40 : index
// CHECK:         %a_tile = cuda.shared_alloc 1536 : !cuda.ptr<f16, shared>
// CHECK-NEXT:    %b_tile = cuda.shared_alloc 1280 : !cuda.ptr<f16, shared>
// CHECK:         [[A_ROW:%[^ ]+]] = arith.addi %row0, {{%[^ ]+}} : index
// CHECK-NEXT:    [[A_OK:%[^ ]+]] = arith.cmpi slt, [[A_ROW]], [[C40]] : index
// CHECK:         cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], [[A_OK]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.cp_async %b_tile[{{%[^ ]+}}], %w[{{%[^ ]+}}], [[TRUE]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.cp_async_commit
// CHECK-NEXT:    {{(%[^ ,]+, )+}}{{%[^ ]+}} = scf.for %k_tile = {{%[^ ]+}} to [[C2]] step {{%[^ ]+}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT:      cuda.cp_async_wait 0
// CHECK-NEXT:      cuda.sync_threads
// CHECK-NEXT:      [[AHEAD:%[^ ]+]] = arith.addi %k_tile, {{%[^ ]+}} : index
// CHECK-NEXT:      [[NEXT:%[^ ]+]] = arith.cmpi slt, [[AHEAD]], [[C2]] : index
// CHECK-NEXT:      scf.if [[NEXT]] {
// CHECK:             cuda.cp_async %a_tile[{{%[^ ]+}}], %a[{{%[^ ]+}}], [[A_OK]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK:             cuda.cp_async %b_tile[{{%[^ ]+}}], %w[{{%[^ ]+}}], [[TRUE]] : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
// CHECK-NEXT:      }
// CHECK-NEXT:      cuda.cp_async_commit
// CHECK:           [[A0:%[^ ]+]], [[A1:%[^ ]+]], [[A2:%[^ ]+]], [[A3:%[^ ]+]] = cuda.ldmatrix %a_tile[{{%[^ ]+}}] : !cuda.ptr<f16, shared>
// CHECK:           {{%[^ ]+}}, {{%[^ ]+}}, {{%[^ ]+}}, {{%[^ ]+}} = cuda.ldmatrix %a_tile[{{%[^ ]+}}] : !cuda.ptr<f16, shared>
// CHECK-NEXT:      [[B0:%[^ ]+]], [[B1:%[^ ]+]], {{%[^ ]+}}, {{%[^ ]+}} = cuda.ldmatrix trans %b_tile[{{%[^ ]+}}] : !cuda.ptr<f16, shared>
// CHECK-NEXT:      {{%[^ ]+}}, {{%[^ ]+}}, {{%[^ ]+}}, {{%[^ ]+}} = cuda.mma f16 a[[[A0]], [[A1]], [[A2]], [[A3]]] b[[[B0]], [[B1]]] c[{{%[^ ]+}}, {{%[^ ]+}}, {{%[^ ]+}}, {{%[^ ]+}}]
// CHECK-COUNT-3:   cuda.mma f16
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.cp_async_wait 0
// CHECK-NOT:     arith.andi
// CHECK:         cuda.sync_threads
// CHECK:         [[INSIDE:%[^ ]+]] = arith.cmpi slt, {{%[^ ]+}}, [[C40]] : index
// CHECK:         cuda.load %b
// CHECK:         scf.if [[INSIDE]] {
// CHECK:           cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16, shared>
// CHECK-NOT:       scf.if
// CHECK:           cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16, shared>
// CHECK-NEXT:    }
// CHECK-COUNT-14: cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16, shared>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    scf.for
// CHECK:           [[STAGED:%[^ ,]+]], {{.*}} = cuda.load %b_tile{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16, shared> -> f16, f16, f16, f16, f16, f16, f16, f16
// CHECK-NEXT:      [[ROW_OK:%[^ ]+]] = arith.cmpi slt, {{%[^ ]+}}, [[C40]] : index
// CHECK-NEXT:      scf.if [[ROW_OK]] {
// CHECK:             cuda.store [[STAGED]], {{.*}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, f16, f16, f16, f16, f16, f16, f16, !cuda.ptr<f16>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.kernel @mma_k_simt(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) block 256 min_blocks 2
// CHECK:         cuda.launch @mma_k grid [1, 2, 1] block [64, 1, 1](%a, %w, %b, %y) aligned [0, 1, 3] else @mma_k_simt grid [1, 1, 1] block [256, 1, 1] : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>

// -----

// f32 on tensor cores, 3xTF32 (fragment 16x8x8). A stored [M, K] is read by
// ldmatrix as 8x4 f32 matrices; B stored [K, N] (ldmatrix does not transpose
// 32-bit elements) an element a lane, B's fragments first, then A's a row of
// fragments at a time (fewer registers live). Each register is split into big and
// small tf32 terms; per k8 step and fragment three mmas (small x big, big x
// small, big x big) start from zero and their sum is added to the
// accumulators in f32. Two k8 steps of a 32x16 warp tile: 2 x 2 x 2 x 3 mmas.
kernel.func @tf32_k(%a: tensor<40x32xf32>, %w: tensor<32x32xf32>) -> (tensor<40x32xf32>) gemm schedule #kernel.schedule<gemm_mma, block = 64, tile = [32, 32, 16], warp = [32, 16], stages = 2> tiling #kernel.tiling<grid = [1, 2, 1], block = [32, 32, 16], warp = [32, 16], fragment = [16, 8, 8], stages = 2, k_steps = 2, partial = [m], lhs = [32, 16, 20], rhs = [16, 32, 40]> attributes {fused_ops = ["matmul"]} {
  %mm = molten.matmul %a, %w : (tensor<40x32xf32>, tensor<32x32xf32>) -> tensor<40x32xf32>
  kernel.yield %mm : tensor<40x32xf32>
}
func.func @linear_tf32(%a: tensor<40x32xf32>, %w: tensor<32x32xf32>) -> (tensor<40x32xf32> {molten.name = "y"}) {
  %y = kernel.launch @tf32_k(%a, %w) : (tensor<40x32xf32>, tensor<32x32xf32>) -> tensor<40x32xf32>
  func.return %y : tensor<40x32xf32>
}

// CHECK-LABEL: cuda.kernel @tf32_k(%a: !cuda.ptr<f32>, %w: !cuda.ptr<f32>, %mm: !cuda.ptr<f32>) block 64 min_blocks 1 attributes {fused_ops = ["matmul"]} {
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %a_tile = cuda.shared_alloc 1280 : !cuda.ptr<f32, shared>
// CHECK-NEXT:    %b_tile = cuda.shared_alloc 1280 : !cuda.ptr<f32, shared>
// CHECK:         scf.for %k_tile
// CHECK:           [[B0:%[^ ]+]] = cuda.load %b_tile[{{%[^ ]+}}] : !cuda.ptr<f32, shared> -> f32
// CHECK:           [[B1:%[^ ]+]] = cuda.load %b_tile[{{%[^ ]+}}] : !cuda.ptr<f32, shared> -> f32
// CHECK:           [[B0B:%[^ ]+]], [[B0S:%[^ ]+]] = cuda.split_tf32 [[B0]] : f32
// CHECK-NEXT:      [[B1B:%[^ ]+]], [[B1S:%[^ ]+]] = cuda.split_tf32 [[B1]] : f32
// CHECK:           [[A0:%[^ ]+]], [[A1:%[^ ]+]], [[A2:%[^ ]+]], [[A3:%[^ ]+]] = cuda.ldmatrix %a_tile[{{%[^ ]+}}] : !cuda.ptr<f32, shared>
// CHECK-NEXT:      [[A0B:%[^ ]+]], [[A0S:%[^ ]+]] = cuda.split_tf32 [[A0]] : i32
// CHECK-NEXT:      [[A1B:%[^ ]+]], [[A1S:%[^ ]+]] = cuda.split_tf32 [[A1]] : i32
// CHECK-NEXT:      [[A2B:%[^ ]+]], [[A2S:%[^ ]+]] = cuda.split_tf32 [[A2]] : i32
// CHECK-NEXT:      [[A3B:%[^ ]+]], [[A3S:%[^ ]+]] = cuda.split_tf32 [[A3]] : i32
// CHECK:           [[P0:%[^ ]+]], [[P1:%[^ ]+]], [[P2:%[^ ]+]], [[P3:%[^ ]+]] = cuda.mma f32 a[[[A0S]], [[A1S]], [[A2S]], [[A3S]]] b[[[B0B]], [[B1B]]] c[[[ZERO]], [[ZERO]], [[ZERO]], [[ZERO]]]
// CHECK-NEXT:      [[Q0:%[^ ]+]], [[Q1:%[^ ]+]], [[Q2:%[^ ]+]], [[Q3:%[^ ]+]] = cuda.mma f32 a[[[A0B]], [[A1B]], [[A2B]], [[A3B]]] b[[[B0S]], [[B1S]]] c[[[P0]], [[P1]], [[P2]], [[P3]]]
// CHECK-NEXT:      [[R0:%[^ ]+]], {{%[^ ]+}}, {{%[^ ]+}}, {{%[^ ]+}} = cuda.mma f32 a[[[A0B]], [[A1B]], [[A2B]], [[A3B]]] b[[[B0B]], [[B1B]]] c[[[Q0]], [[Q1]], [[Q2]], [[Q3]]]
// CHECK-NEXT:      {{%[^ ]+}} = arith.addf %{{[^ ]+}}, [[R0]] : f32
// CHECK-COUNT-21:  cuda.mma f32
// CHECK:           scf.yield
