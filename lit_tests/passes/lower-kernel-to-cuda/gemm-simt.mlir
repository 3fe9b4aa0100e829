// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// gemm kernels on CUDA cores (SIMT): shared f32 tiles, micro-tiles a thread.
//
// lower-kernel-to-cuda on hand-written kernel-level modules (kernel.func with
// a schedule, and the graph's func.func of kernel.launch): each kernel.func
// becomes a cuda.kernel over global pointers (its inputs, then its outputs,
// named after the kernel's values), the graph a cuda.host_func (the graph's
// inputs, then its outputs, named after the graph: molten.name, else the
// value's name) that launches the kernels with the grid and block of their
// schedules and allocates the buffers between them. SSA names inside kernels
// are matched by pattern: the pass chooses them.

// A 20x8 @ 8x16 f16 matmul with a bias epilogue, tiles of 16x16 (K step 4)
// on 16 threads, each accumulating a 4x4 micro-tile (4 consecutive rows and
// columns): the operands pass through two stages of shared f32 tiles
// (a_tile k-major, its rows padded from 16 to 20, b_tile), converted to f32.
// A prologue loads the first K step's tiles (each thread a run of 4
// consecutive elements of A's row and of B's row) and stores them into stage
// 0; each K step loads the next step's tiles (the last step its own again,
// min(k0 + 4, 4)) before it reads this step's stage, 4 elements of A and of
// B at once for each of its 4 K elements, then stores them into the other
// stage, one barrier a step. 16 f32 accumulators are carried by the loop
// over K; the epilogue rounds each one to f16 (the matmul's type), adds the
// bias and stores it. Only M's last tile is partial (20 rows in tiles of
// 16), so A's loads and the stores are guarded by the row alone and B's
// loads not at all. Two blocks an SM (min_blocks 2).
// The grid is (n / 16, ceil(m / 16), batches) = (1, 2, 1).
kernel.func @gemm_k(%a: tensor<20x8xf16>, %w: tensor<8x16xf16>, %b: tensor<16xf16>) -> (tensor<20x16xf16>) gemm schedule #kernel.schedule<gemm_simt, block = 16, tile = [16, 16, 4]> attributes {fused_ops = ["matmul", "add"]} {
  %mm = molten.matmul %a, %w : (tensor<20x8xf16>, tensor<8x16xf16>) -> tensor<20x16xf16>
  %y = molten.add %mm, %b : (tensor<20x16xf16>, tensor<16xf16>) -> tensor<20x16xf16>
  kernel.yield %y : tensor<20x16xf16>
}
func.func @linear(%a: tensor<20x8xf16>, %w: tensor<8x16xf16>, %b: tensor<16xf16>) -> (tensor<20x16xf16> {molten.name = "y"}) {
  %y = kernel.launch @gemm_k(%a, %w, %b) : (tensor<20x8xf16>, tensor<8x16xf16>, tensor<16xf16>) -> tensor<20x16xf16>
  func.return %y : tensor<20x16xf16>
}

// CHECK-LABEL: cuda.kernel @gemm_k(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) block 16 min_blocks 2 attributes {fused_ops = ["matmul", "add"]} {
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[C0:%[^ ]+]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%[^ ]+]] = arith.constant 1 : index
// CHECK-DAG:     [[C2:%[^ ]+]] = arith.constant 2 : index
// CHECK-DAG:     [[C4:%[^ ]+]] = arith.constant 4 : index
// CHECK-DAG:     [[C8:%[^ ]+]] = arith.constant 8 : index
// CHECK-DAG:     [[C16:%[^ ]+]] = arith.constant 16 : index
// CHECK-DAG:     [[C20:%[^ ]+]] = arith.constant 20 : index
// CHECK-DAG:     [[C64:%[^ ]+]] = arith.constant 64 : index
// CHECK-DAG:     [[C80:%[^ ]+]] = arith.constant 80 : index
// CHECK:         [[TID:%[^ ]+]] = cuda.thread_idx x
// CHECK-NEXT:    [[TILE_N:%[^ ]+]] = cuda.block_idx x
// CHECK-NEXT:    [[TILE_M:%[^ ]+]] = cuda.block_idx y
// CHECK-NEXT:    {{%[^ ]+}} = cuda.block_idx z
// CHECK-NEXT:    [[ROW0:%[^ ]+]] = arith.muli [[TILE_M]], [[C16]] : index
// CHECK-NEXT:    [[COL0:%[^ ]+]] = arith.muli [[TILE_N]], [[C16]] : index
// CHECK-NEXT:    [[THREAD_ROW:%[^ ]+]] = arith.divsi [[TID]], [[C4]] : index
// CHECK-NEXT:    [[THREAD_COL:%[^ ]+]] = arith.remsi [[TID]], [[C4]] : index
// CHECK-NEXT:    %a_tile = cuda.shared_alloc 160 : !cuda.ptr<f32, shared>
// CHECK-NEXT:    %b_tile = cuda.shared_alloc 128 : !cuda.ptr<f32, shared>
// CHECK:         {{%[^ ]+}} = cuda.load %a{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:    [[AF:%[^ ]+]] = arith.extf {{%[^ ]+}} : f16 to f32
// CHECK-NEXT:    [[AV:%[^ ]+]] = arith.select {{%[^ ]+}}, [[AF]], [[ZERO]] : f32
// CHECK-COUNT-3: cuda.load %a{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-COUNT-4: cuda.load %w{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NOT:     sync_threads
// CHECK:         cuda.store [[AV]], %a_tile{{\[}}[[TID]]{{\]}} : f32, !cuda.ptr<f32, shared>
// CHECK-COUNT-3: cuda.store {{%[^ ]+}}, %a_tile{{\[}}{{%[^ ]+}}{{\]}} : f32, !cuda.ptr<f32, shared>
// CHECK-COUNT-4: cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f32, !cuda.ptr<f32, shared>
// CHECK-NEXT:    cuda.sync_threads
// CHECK-NEXT:    {{^ *}}[[ACC0:%[^ ,]+]], {{(%[^ ,]+, )+}}[[ACC15:%[^ ]+]] = scf.for [[K0:%[^ ]+]] = [[C0]] to [[C8]] step [[C4]] iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-NEXT:      [[STEP:%[^ ]+]] = arith.divsi [[K0]], [[C4]] : index
// CHECK-NEXT:      [[STAGE:%[^ ]+]] = arith.remsi [[STEP]], [[C2]] : index
// CHECK-NEXT:      [[NEXT_K0:%[^ ]+]] = arith.addi [[K0]], [[C4]] : index
// CHECK-NEXT:      [[UPCOMING:%[^ ]+]] = arith.minsi [[NEXT_K0]], [[C4]] : index
// CHECK:           [[NEXT_A:%[^ ]+]] = cuda.load %a{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:      [[NEXT_AF:%[^ ]+]] = arith.extf [[NEXT_A]] : f16 to f32
// CHECK-NEXT:      [[NEXT_AV:%[^ ]+]] = arith.select {{%[^ ]+}}, [[NEXT_AF]], [[ZERO]] : f32
// CHECK-COUNT-3:   cuda.load %a{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-COUNT-4:   cuda.load %w{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NOT:       sync_threads
// CHECK:           [[A_AT:%[^ ]+]] = arith.muli [[STAGE]], [[C80]] : index
// CHECK-NEXT:      [[B_AT:%[^ ]+]] = arith.muli [[STAGE]], [[C64]] : index
// CHECK-NEXT:      [[A_ROWS:%[^ ]+]] = arith.muli [[THREAD_ROW]], [[C4]] : index
// CHECK-NEXT:      [[A_START:%[^ ]+]] = arith.addi [[A_AT]], [[A_ROWS]] : index
// CHECK-NEXT:      [[B_COLS:%[^ ]+]] = arith.muli [[THREAD_COL]], [[C4]] : index
// CHECK-NEXT:      [[B_START:%[^ ]+]] = arith.addi [[B_AT]], [[B_COLS]] : index
// CHECK-NEXT:      [[A0:%[^ ]+]], {{%[^ ]+}}, {{%[^ ]+}}, [[A3:%[^ ]+]] = cuda.load %a_tile{{\[}}[[A_START]]{{\]}} : !cuda.ptr<f32, shared> -> f32, f32, f32, f32
// CHECK-NEXT:      [[B0:%[^ ]+]], {{%[^ ]+}}, {{%[^ ]+}}, [[B3:%[^ ]+]] = cuda.load %b_tile{{\[}}[[B_START]]{{\]}} : !cuda.ptr<f32, shared> -> f32, f32, f32, f32
// CHECK-NEXT:      [[P00:%[^ ]+]] = arith.mulf [[A0]], [[B0]] : f32
// CHECK-NEXT:      {{%[^ ]+}} = arith.addf {{%[^ ]+}}, [[P00]] : f32
// CHECK:           [[P33:%[^ ]+]] = arith.mulf [[A3]], [[B3]] : f32
// CHECK-NEXT:      {{%[^ ]+}} = arith.addf {{%[^ ]+}}, [[P33]] : f32
// CHECK-COUNT-3:   cuda.load %a_tile{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f32, shared> -> f32, f32, f32, f32
// CHECK-NOT:       cuda.load %{{[aw]}}{{\[}}
// CHECK:           [[OTHER:%[^ ]+]] = arith.subi [[C1]], [[STAGE]] : index
// CHECK-NEXT:      [[OTHER_A:%[^ ]+]] = arith.muli [[OTHER]], [[C80]] : index
// CHECK-NEXT:      {{%[^ ]+}} = arith.muli [[OTHER]], [[C64]] : index
// CHECK-NEXT:      [[SLOT:%[^ ]+]] = arith.addi [[OTHER_A]], [[TID]] : index
// CHECK-NEXT:      cuda.store [[NEXT_AV]], %a_tile{{\[}}[[SLOT]]{{\]}} : f32, !cuda.ptr<f32, shared>
// CHECK-COUNT-3:   cuda.store {{%[^ ]+}}, %a_tile{{\[}}{{%[^ ]+}}{{\]}} : f32, !cuda.ptr<f32, shared>
// CHECK-COUNT-4:   cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f32, !cuda.ptr<f32, shared>
// CHECK-NEXT:      cuda.sync_threads
// CHECK-NEXT:      scf.yield {{(%[^ ,]+, )+}}{{%[^ ]+}} : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
// CHECK-NEXT:    }
// CHECK-NOT:     arith.andi
// Rows past M: the epilogue is evaluated on the last row, only its
// store guarded.
// CHECK:         [[INSIDE:%[^ ]+]] = arith.cmpi slt, {{%[^ ]+}}, [[C20]] : index
// CHECK:         [[MM:%[^ ]+]] = arith.truncf [[ACC0]] : f32 to f16
// CHECK-NEXT:    [[MMF:%[^ ]+]] = arith.extf [[MM]] : f16 to f32
// CHECK-NEXT:    [[BIAS:%[^ ]+]] = cuda.load %b{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:    [[BIASF:%[^ ]+]] = arith.extf [[BIAS]] : f16 to f32
// CHECK-NEXT:    [[SUM:%[^ ]+]] = arith.addf [[MMF]], [[BIASF]] : f32
// CHECK:         scf.if [[INSIDE]] {
// CHECK:           [[OUT:%[^ ]+]] = arith.truncf [[SUM]] : f32 to f16
// CHECK-NEXT:      cuda.store [[OUT]], %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-COUNT-14: cuda.store {{%[^ ]+}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK:         arith.truncf [[ACC15]] : f32 to f16
// CHECK:         scf.if {{%[^ ]+}} {
// CHECK:           cuda.store {{%[^ ]+}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @linear(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) outputs 1 shapes [[20, 8], [8, 16], [16], [20, 16]] {
// CHECK-NEXT:    cuda.launch @gemm_k grid [1, 2, 1] block [16, 1, 1](%a, %w, %b, %y) : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
