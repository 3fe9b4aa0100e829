// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// row_reduce kernels: the row in registers, a long row (a loop over it),
// several rows a block, rows split across blocks (a group exchange), and
// strided rows (a thread a row).
//
// lower-kernel-to-cuda on hand-written kernel-level modules (kernel.func with
// a schedule, and the graph's func.func of kernel.launch): each kernel.func
// becomes a cuda.kernel over global pointers (its inputs, then its outputs,
// named after the kernel's values), the graph a cuda.host_func (the graph's
// inputs, then its outputs, named after the graph: molten.name, else the
// value's name) that launches the kernels with the grid and block of their
// schedules and allocates the buffers between them. SSA names inside kernels
// are matched by pattern: the pass chooses them.

// -- row_reduce, the row in registers ----------------------------------------

// An f16 rms_norm over rows of 256 with 64 threads of 4 elements: the row is
// read once into registers (no loop over it), each thread holding elements
// col, col + 64, col + 128, col + 192; the sum is combined in the warp
// (shfl_xor 16, 8, 4, 2, 1), across the two warps through a shared slot per
// warp between two barriers, and in the warp again; then scaled by 1/256.
// The normalized row is stored from the same registers: x is not read again.
kernel.func @rms_k(%x: tensor<3x256xf16>, %w: tensor<256xf16>) -> (tensor<3x256xf16>) row_reduce schedule #kernel.schedule<row_reduce, block = 64, elements_per_thread = 4> attributes {fused_ops = ["cast", "square", "reduce_mean", "add", "rsqrt", "mul", "cast", "mul", "cast"]} {
  %eps = molten.constant dense<1.000000e-06> : tensor<f32>
  %xf = molten.cast %x : tensor<3x256xf16> to tensor<3x256xf32>
  %sq = molten.square %xf : tensor<3x256xf32>
  %ms = molten.reduce_mean %sq axes = [1] keepdim : tensor<3x256xf32> -> tensor<3x1xf32>
  %a = molten.add %ms, %eps : (tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %r = molten.rsqrt %a : tensor<3x1xf32>
  %n = molten.mul %xf, %r : (tensor<3x256xf32>, tensor<3x1xf32>) -> tensor<3x256xf32>
  %wf = molten.cast %w : tensor<256xf16> to tensor<256xf32>
  %o = molten.mul %n, %wf : (tensor<3x256xf32>, tensor<256xf32>) -> tensor<3x256xf32>
  %y = molten.cast %o : tensor<3x256xf32> to tensor<3x256xf16>
  kernel.yield %y : tensor<3x256xf16>
}
func.func @rms(%x: tensor<3x256xf16>, %w: tensor<256xf16>) -> (tensor<3x256xf16> {molten.name = "norm"}) {
  %y = kernel.launch @rms_k(%x, %w) : (tensor<3x256xf16>, tensor<256xf16>) -> tensor<3x256xf16>
  func.return %y : tensor<3x256xf16>
}

// CHECK-LABEL: cuda.kernel @rms_k(%x: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) block 64 attributes {fused_ops = ["cast", "square", "reduce_mean", "add", "rsqrt", "mul", "cast", "mul", "cast"]} {
// CHECK-DAG:     [[EPS:%[^ ]+]] = arith.constant 1.000000e-06 : f32
// CHECK-DAG:     [[INV_N:%[^ ]+]] = arith.constant 3.906250e-03 : f32
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[C0:%[^ ]+]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%[^ ]+]] = arith.constant 1 : index
// CHECK-DAG:     [[C2:%[^ ]+]] = arith.constant 2 : index
// CHECK-DAG:     [[C3:%[^ ]+]] = arith.constant 3 : index
// CHECK-DAG:     [[C32:%[^ ]+]] = arith.constant 32 : index
// CHECK-DAG:     [[C64:%[^ ]+]] = arith.constant 64 : index
// CHECK-DAG:     [[C128:%[^ ]+]] = arith.constant 128 : index
// CHECK-DAG:     [[C192:%[^ ]+]] = arith.constant 192 : index
// CHECK:         [[TID:%[^ ]+]] = cuda.thread_idx x
// CHECK-NEXT:    [[BID:%[^ ]+]] = cuda.block_idx x
// CHECK-NEXT:    [[GDIM:%[^ ]+]] = cuda.grid_dim x
// CHECK-NEXT:    scf.for [[ROW:%[^ ]+]] = [[BID]] to [[C3]] step [[GDIM]] {
// CHECK-NEXT:      [[J1:%[^ ]+]] = arith.addi [[TID]], [[C64]] : index
// CHECK-NEXT:      [[J2:%[^ ]+]] = arith.addi [[TID]], [[C128]] : index
// CHECK-NEXT:      [[J3:%[^ ]+]] = arith.addi [[TID]], [[C192]] : index
// CHECK-NOT:       scf.for
// CHECK:           [[X0:%[^ ]+]] = cuda.load %x{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NOT:       scf.for
// CHECK:           [[X1:%[^ ]+]] = cuda.load %x{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NOT:       scf.for
// CHECK:           [[X2:%[^ ]+]] = cuda.load %x{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NOT:       scf.for
// CHECK:           [[X3:%[^ ]+]] = cuda.load %x{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NOT:       scf.for
// CHECK:           [[ACC:%[^ ]+]] = arith.addf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      [[S16:%[^ ]+]] = cuda.shfl_xor [[ACC]], 16 : f32
// CHECK-NEXT:      [[A16:%[^ ]+]] = arith.addf [[ACC]], [[S16]] : f32
// CHECK-NEXT:      [[S8:%[^ ]+]] = cuda.shfl_xor [[A16]], 8 : f32
// CHECK-NEXT:      [[A8:%[^ ]+]] = arith.addf [[A16]], [[S8]] : f32
// CHECK-NEXT:      [[S4:%[^ ]+]] = cuda.shfl_xor [[A8]], 4 : f32
// CHECK-NEXT:      [[A4:%[^ ]+]] = arith.addf [[A8]], [[S4]] : f32
// CHECK-NEXT:      [[S2:%[^ ]+]] = cuda.shfl_xor [[A4]], 2 : f32
// CHECK-NEXT:      [[A2:%[^ ]+]] = arith.addf [[A4]], [[S2]] : f32
// CHECK-NEXT:      [[S1:%[^ ]+]] = cuda.shfl_xor [[A2]], 1 : f32
// CHECK-NEXT:      [[WARP_SUM:%[^ ]+]] = arith.addf [[A2]], [[S1]] : f32
// CHECK-NEXT:      [[SLOTS:%[^ ]+]] = cuda.shared_alloc 2 : !cuda.ptr<f32, shared>
// CHECK-NEXT:      [[LANE:%[^ ]+]] = arith.remsi [[TID]], [[C32]] : index
// CHECK-NEXT:      [[WARP:%[^ ]+]] = arith.divsi [[TID]], [[C32]] : index
// CHECK-NEXT:      [[LEADER:%[^ ]+]] = arith.cmpi eq, [[LANE]], [[C0]] : index
// CHECK-NEXT:      scf.if [[LEADER]] {
// CHECK-NEXT:        cuda.store [[WARP_SUM]], [[SLOTS]]{{\[}}[[WARP]]{{\]}} : f32, !cuda.ptr<f32, shared>
// CHECK-NEXT:      }
// CHECK-NEXT:      cuda.sync_threads
// CHECK-NEXT:      [[SLOT:%[^ ]+]] = arith.minsi [[LANE]], [[C1]] : index
// CHECK-NEXT:      [[PARTIAL:%[^ ]+]] = cuda.load [[SLOTS]]{{\[}}[[SLOT]]{{\]}} : !cuda.ptr<f32, shared> -> f32
// CHECK-NEXT:      cuda.sync_threads
// CHECK-NEXT:      [[IS_WARP:%[^ ]+]] = arith.cmpi slt, [[LANE]], [[C2]] : index
// CHECK-NEXT:      [[V:%[^ ]+]] = arith.select [[IS_WARP]], [[PARTIAL]], [[ZERO]] : f32
// CHECK-NEXT:      [[T16:%[^ ]+]] = cuda.shfl_xor [[V]], 16 : f32
// CHECK-NEXT:      [[B16:%[^ ]+]] = arith.addf [[V]], [[T16]] : f32
// CHECK-NEXT:      [[T8:%[^ ]+]] = cuda.shfl_xor [[B16]], 8 : f32
// CHECK-NEXT:      [[B8:%[^ ]+]] = arith.addf [[B16]], [[T8]] : f32
// CHECK-NEXT:      [[T4:%[^ ]+]] = cuda.shfl_xor [[B8]], 4 : f32
// CHECK-NEXT:      [[B4:%[^ ]+]] = arith.addf [[B8]], [[T4]] : f32
// CHECK-NEXT:      [[T2:%[^ ]+]] = cuda.shfl_xor [[B4]], 2 : f32
// CHECK-NEXT:      [[B2:%[^ ]+]] = arith.addf [[B4]], [[T2]] : f32
// CHECK-NEXT:      [[T1:%[^ ]+]] = cuda.shfl_xor [[B2]], 1 : f32
// CHECK-NEXT:      [[TOTAL:%[^ ]+]] = arith.addf [[B2]], [[T1]] : f32
// CHECK-NEXT:      [[MEAN:%[^ ]+]] = arith.mulf [[TOTAL]], [[INV_N]] : f32
// CHECK-NEXT:      [[SHIFTED:%[^ ]+]] = arith.addf [[MEAN]], [[EPS]] : f32
// CHECK-NEXT:      [[RSTD:%[^ ]+]] = math.rsqrt [[SHIFTED]] : f32
// CHECK-NOT:       cuda.load %x
// CHECK-NOT:       scf.for
// CHECK:           cuda.store {{%[^ ]+}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NOT:       cuda.load %x
// CHECK-NOT:       scf.for
// CHECK:           cuda.store {{%[^ ]+}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NOT:       cuda.load %x
// CHECK-NOT:       scf.for
// CHECK:           cuda.store {{%[^ ]+}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NOT:       cuda.load %x
// CHECK-NOT:       scf.for
// CHECK:           cuda.load %w{{\[}}[[J3]]{{\]}} : !cuda.ptr<f16> -> f16
// CHECK:           cuda.store {{%[^ ]+}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @rms(%x: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %norm: !cuda.ptr<f16>) outputs 1 shapes [[3, 256], [256], [3, 256]] {
// CHECK-NEXT:    cuda.launch @rms_k grid [3, 1, 1] block [64, 1, 1](%x, %w, %norm) : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// -- row_reduce, a long row --------------------------------------------------

// Rows of 1000 with 128 threads of one element (block * elements_per_thread
// < 1000): each reduction is a strided scf.for over the row carrying its f32
// accumulator (iter_args), then the block combination (4 warps: 4 shared
// slots); the full-row output is stored by another loop over the row, the
// per-row output (keepdim) by thread 0 at the row.
kernel.func @sum_max(%x: tensor<2x1000xf32>) -> (tensor<2x1000xf32>, tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 128, elements_per_thread = 1> attributes {fused_ops = ["reduce_sum", "reduce_max", "sub"]} {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<2x1000xf32> -> tensor<2x1xf32>
  %m = molten.reduce_max %x axes = [1] keepdim : tensor<2x1000xf32> -> tensor<2x1xf32>
  %y = molten.sub %x, %m : (tensor<2x1000xf32>, tensor<2x1xf32>) -> tensor<2x1000xf32>
  kernel.yield %y, %s : tensor<2x1000xf32>, tensor<2x1xf32>
}
func.func @long_rows(%x: tensor<2x1000xf32>) -> (tensor<2x1000xf32> {molten.name = "shifted"}, tensor<2x1xf32> {molten.name = "total"}) {
  %y, %s = kernel.launch @sum_max(%x) : (tensor<2x1000xf32>) -> (tensor<2x1000xf32>, tensor<2x1xf32>)
  func.return %y, %s : tensor<2x1000xf32>, tensor<2x1xf32>
}

// CHECK-LABEL: cuda.kernel @sum_max(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %s: !cuda.ptr<f32>) block 128 attributes {fused_ops = ["reduce_sum", "reduce_max", "sub"]} {
// CHECK-DAG:     [[NINF:%[^ ]+]] = arith.constant 0xff800000 : f32
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[C0:%[^ ]+]] = arith.constant 0 : index
// CHECK-DAG:     [[C2:%[^ ]+]] = arith.constant 2 : index
// CHECK-DAG:     [[C128:%[^ ]+]] = arith.constant 128 : index
// CHECK-DAG:     [[C1000:%[^ ]+]] = arith.constant 1000 : index
// CHECK:         [[TID:%[^ ]+]] = cuda.thread_idx x
// CHECK-NEXT:    [[BID:%[^ ]+]] = cuda.block_idx x
// CHECK-NEXT:    [[GDIM:%[^ ]+]] = cuda.grid_dim x
// CHECK-NEXT:    scf.for [[ROW:%[^ ]+]] = [[BID]] to [[C2]] step [[GDIM]] {
// CHECK-NEXT:      [[SUM:%[^ ]+]] = scf.for [[J:%[^ ]+]] = [[TID]] to [[C1000]] step [[C128]] iter_args([[ACC:%[^ ]+]] = [[ZERO]]) -> (f32) {
// CHECK:             [[XV:%[^ ]+]] = cuda.load %x{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f32> -> f32
// CHECK-NEXT:        [[NEXT:%[^ ]+]] = arith.addf [[ACC]], [[XV]] : f32
// CHECK-NEXT:        scf.yield [[NEXT]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      {{%[^ ]+}} = cuda.shfl_xor [[SUM]], 16 : f32
// CHECK:           cuda.shared_alloc 4 : !cuda.ptr<f32, shared>
// CHECK:           cuda.sync_threads
// CHECK:           cuda.sync_threads
// CHECK:           {{%[^ ]+}} = cuda.shfl_xor {{%[^ ]+}}, 1 : f32
// CHECK-NEXT:      [[TOTAL:%[^ ]+]] = arith.addf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      [[MAX:%[^ ]+]] = scf.for [[J2:%[^ ]+]] = [[TID]] to [[C1000]] step [[C128]] iter_args([[M:%[^ ]+]] = [[NINF]]) -> (f32) {
// CHECK:             [[XV2:%[^ ]+]] = cuda.load %x{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f32> -> f32
// CHECK-NEXT:        [[NEXT2:%[^ ]+]] = arith.maximumf [[M]], [[XV2]] : f32
// CHECK-NEXT:        scf.yield [[NEXT2]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      {{%[^ ]+}} = cuda.shfl_xor [[MAX]], 16 : f32
// CHECK:           cuda.shared_alloc 4 : !cuda.ptr<f32, shared>
// CHECK:           {{%[^ ]+}} = cuda.shfl_xor {{%[^ ]+}}, 1 : f32
// CHECK-NEXT:      [[ROWMAX:%[^ ]+]] = arith.maximumf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      scf.for [[J3:%[^ ]+]] = [[TID]] to [[C1000]] step [[C128]] {
// CHECK:             [[XV3:%[^ ]+]] = cuda.load %x{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f32> -> f32
// CHECK-NEXT:        [[D:%[^ ]+]] = arith.subf [[XV3]], [[ROWMAX]] : f32
// CHECK:             cuda.store [[D]], %y{{\[}}{{%[^ ]+}}{{\]}} : f32, !cuda.ptr<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      [[FIRST:%[^ ]+]] = arith.cmpi eq, [[TID]], [[C0]] : index
// CHECK-NEXT:      scf.if [[FIRST]] {
// CHECK-NEXT:        cuda.store [[TOTAL]], %s{{\[}}[[ROW]]{{\]}} : f32, !cuda.ptr<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @long_rows(%x: !cuda.ptr<f32>, %shifted: !cuda.ptr<f32>, %total: !cuda.ptr<f32>) outputs 2 shapes [[2, 1000], [2, 1000], [2, 1]] {
// CHECK-NEXT:    cuda.launch @sum_max grid [2, 1, 1] block [128, 1, 1](%x, %shifted, %total) : !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// -- row_reduce, several rows per block --------------------------------------

// Rows of 12 with 4 threads each (rows_per_block = 8 in a warp): a thread's
// row is the block's row (block index times 8) plus its thread index / 4,
// its lane the thread index % 4; the last rows of the block lie past the 5
// rows, so the row is clamped to the last one for the loads (every lane
// takes part in the shuffles) and the store is guarded. One run of 4 per
// thread covers 16 >= 12 columns: the run past the row's end reads the last
// run and is discarded (select). The sum is combined over the row's 4 lanes
// only (shfl_xor 2, 1): no shared memory, no barrier.
kernel.func @short_k(%x: tensor<5x12xf32>) -> (tensor<5x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 8, vector = 4, elements_per_thread = 4> attributes {fused_ops = ["reduce_sum"]} {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<5x12xf32> -> tensor<5x1xf32>
  kernel.yield %s : tensor<5x1xf32>
}
func.func @short(%x: tensor<5x12xf32>) -> (tensor<5x1xf32> {molten.name = "sum"}) {
  %s = kernel.launch @short_k(%x) : (tensor<5x12xf32>) -> tensor<5x1xf32>
  func.return %s : tensor<5x1xf32>
}

// CHECK-LABEL: cuda.kernel @short_k(%x: !cuda.ptr<f32>, %s: !cuda.ptr<f32>) block 32 attributes {fused_ops = ["reduce_sum"]} {
// CHECK-DAG:     [[C0:%[^ ]+]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%[^ ]+]] = arith.constant 1 : index
// CHECK-DAG:     [[C4:%[^ ]+]] = arith.constant 4 : index
// CHECK-DAG:     [[C5:%[^ ]+]] = arith.constant 5 : index
// CHECK-DAG:     [[C8:%[^ ]+]] = arith.constant 8 : index
// CHECK-DAG:     [[C12:%[^ ]+]] = arith.constant 12 : index
// CHECK:         [[TID:%[^ ]+]] = cuda.thread_idx x
// CHECK-NEXT:    [[BID:%[^ ]+]] = cuda.block_idx x
// CHECK-NEXT:    [[GDIM:%[^ ]+]] = cuda.grid_dim x
// CHECK-NEXT:    [[LANE:%[^ ]+]] = arith.remsi [[TID]], [[C4]] : index
// CHECK-NEXT:    scf.for [[RB:%[^ ]+]] = [[BID]] to [[C1]] step [[GDIM]] {
// CHECK-NEXT:      [[FIRST:%[^ ]+]] = arith.muli [[RB]], [[C8]] : index
// CHECK-NEXT:      [[SLOT:%[^ ]+]] = arith.divsi [[TID]], [[C4]] : index
// CHECK-NEXT:      [[R:%[^ ]+]] = arith.addi [[FIRST]], [[SLOT]] : index
// CHECK-NEXT:      [[VALID_ROW:%[^ ]+]] = arith.cmpi slt, [[R]], [[C5]] : index
// CHECK-NEXT:      %row = arith.minsi [[R]], [[C4]] : index
// CHECK-NEXT:      %col = arith.muli [[LANE]], [[C4]] : index
// CHECK-NEXT:      [[VALID:%[^ ]+]] = arith.cmpi slt, %col, [[C12]] : index
// CHECK-NEXT:      [[J:%[^ ]+]] = arith.minsi %col, [[C8]] : index
// CHECK-COUNT-4:   cuda.load %x
// CHECK:           %s_acc_3 = arith.select [[VALID]], {{%[^ ]+}}, %s_acc_2 : f32
// CHECK-NEXT:      [[S2:%[^ ]+]] = cuda.shfl_xor %s_acc_3, 2 : f32
// CHECK-NEXT:      [[A2:%[^ ]+]] = arith.addf %s_acc_3, [[S2]] : f32
// CHECK-NEXT:      [[S1:%[^ ]+]] = cuda.shfl_xor [[A2]], 1 : f32
// CHECK-NEXT:      [[SUM:%[^ ]+]] = arith.addf [[A2]], [[S1]] : f32
// CHECK-NEXT:      scf.if [[VALID_ROW]] {
// CHECK-NEXT:        [[LEADER:%[^ ]+]] = arith.cmpi eq, [[LANE]], [[C0]] : index
// CHECK-NEXT:        scf.if [[LEADER]] {
// CHECK-NEXT:          cuda.store [[SUM]], %s[%row] : f32, !cuda.ptr<f32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @short(%x: !cuda.ptr<f32>, %sum: !cuda.ptr<f32>) outputs 1 shapes [[5, 12], [5, 1]] {
// CHECK-NEXT:    cuda.launch @short_k grid [1, 1, 1] block [32, 1, 1](%x, %sum) : !cuda.ptr<f32>, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// -- row_reduce, a row split across blocks -----------------------------------

// Rows of 256 split over 2 blocks (split = 2) of 32 threads x 4: block b is
// part b % 2 of group b / 2; the groups take turns over the 3 rows (a
// grid-stride loop by gridDim / 2, the number of groups). Each block
// reduces its 128 columns, thread 0 writes the block's maximum to the
// group's slots for this exchange (two sets alternate by the exchange's
// parity), the group waits at its counter for 2 arrivals per exchange, and
// every warp reads the 2 slots through L2 (coherent loads) and combines them
// in the same order. Thread 0 of part 0 stores the row's maximum. The
// launcher allocates a counter per row (zeroed) and two sets of 2 slots per
// row, and launches the 6 blocks cooperatively, in groups of 2. The kernel
// is made to fit 1024 threads per SM (min_blocks 32 of 32 threads), which
// kernel-schedule counts on.
kernel.func @split_k(%x: tensor<3x256xf32>) -> (tensor<3x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, vector = 4, elements_per_thread = 4, split = 2> attributes {fused_ops = ["reduce_max"]} {
  %m = molten.reduce_max %x axes = [1] keepdim : tensor<3x256xf32> -> tensor<3x1xf32>
  kernel.yield %m : tensor<3x1xf32>
}
func.func @split(%x: tensor<3x256xf32>) -> (tensor<3x1xf32> {molten.name = "peak"}) {
  %m = kernel.launch @split_k(%x) : (tensor<3x256xf32>) -> tensor<3x1xf32>
  func.return %m : tensor<3x1xf32>
}

// CHECK-LABEL: cuda.kernel @split_k(%x: !cuda.ptr<f32>, %m: !cuda.ptr<f32>, %group_counters: !cuda.ptr<i32>, %group_partials: !cuda.ptr<f32>) block 32 min_blocks 32 attributes {fused_ops = ["reduce_max"]} {
// CHECK-DAG:     [[C0:%[^ ]+]] = arith.constant 0 : index
// CHECK-DAG:     [[C1:%[^ ]+]] = arith.constant 1 : index
// CHECK-DAG:     [[C2:%[^ ]+]] = arith.constant 2 : index
// CHECK-DAG:     [[C3:%[^ ]+]] = arith.constant 3 : index
// CHECK-DAG:     [[C32:%[^ ]+]] = arith.constant 32 : index
// CHECK-DAG:     [[C128:%[^ ]+]] = arith.constant 128 : index
// CHECK:         [[TID:%[^ ]+]] = cuda.thread_idx x
// CHECK-NEXT:    [[BID:%[^ ]+]] = cuda.block_idx x
// CHECK-NEXT:    [[GDIM:%[^ ]+]] = cuda.grid_dim x
// CHECK-NEXT:    %group = arith.divsi [[BID]], [[C2]] : index
// CHECK-NEXT:    %part = arith.remsi [[BID]], [[C2]] : index
// CHECK-NEXT:    [[GROUPS:%[^ ]+]] = arith.divsi [[GDIM]], [[C2]] : index
// CHECK-NEXT:    scf.for %row = %group to [[C3]] step [[GROUPS]] {
// CHECK-NEXT:      [[TURN:%[^ ]+]] = arith.subi %row, %group : index
// CHECK-NEXT:      [[ITERATION:%[^ ]+]] = arith.divsi [[TURN]], [[GROUPS]] : index
// CHECK-NEXT:      [[FIRST:%[^ ]+]] = arith.muli %part, [[C128]] : index
// CHECK:           %col = arith.addi [[FIRST]], {{%[^ ]+}} : index
// CHECK-COUNT-4:   cuda.load %x
// CHECK-COUNT-5:   cuda.shfl_xor
// CHECK-NEXT:      [[BLOCK_MAX:%[^ ]+]] = arith.maximumf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      [[PARITY:%[^ ]+]] = arith.remsi [[ITERATION]], [[C2]] : index
// CHECK-NEXT:      [[G2:%[^ ]+]] = arith.muli %group, [[C2]] : index
// CHECK-NEXT:      [[SET:%[^ ]+]] = arith.addi [[G2]], [[PARITY]] : index
// CHECK-NEXT:      [[SLOTS:%[^ ]+]] = arith.muli [[SET]], [[C2]] : index
// CHECK-NEXT:      [[WRITER:%[^ ]+]] = arith.cmpi eq, [[TID]], [[C0]] : index
// CHECK-NEXT:      scf.if [[WRITER]] {
// CHECK-NEXT:        [[MINE:%[^ ]+]] = arith.addi [[SLOTS]], %part : index
// CHECK-NEXT:        cuda.store [[BLOCK_MAX]], %group_partials{{\[}}[[MINE]]{{\]}} : f32, !cuda.ptr<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      [[EXCHANGES:%[^ ]+]] = arith.addi [[ITERATION]], [[C1]] : index
// CHECK-NEXT:      [[TARGET:%[^ ]+]] = arith.muli [[EXCHANGES]], [[C2]] : index
// CHECK-NEXT:      cuda.group_barrier %group_counters[%group], [[TARGET]] : !cuda.ptr<i32>
// CHECK-NEXT:      [[LANE:%[^ ]+]] = arith.remsi [[TID]], [[C32]] : index
// CHECK-NEXT:      [[IS_SLOT:%[^ ]+]] = arith.cmpi slt, [[LANE]], [[C2]] : index
// CHECK-NEXT:      [[I:%[^ ]+]] = arith.minsi [[LANE]], [[C1]] : index
// CHECK-NEXT:      [[SLOT:%[^ ]+]] = arith.addi [[SLOTS]], [[I]] : index
// CHECK-NEXT:      [[THEIRS:%[^ ]+]] = cuda.load coherent %group_partials{{\[}}[[SLOT]]{{\]}} : !cuda.ptr<f32> -> f32
// CHECK-NEXT:      [[COMBINED:%[^ ]+]] = arith.maximumf {{%[^ ]+}}, [[THEIRS]] : f32
// CHECK-NEXT:      {{%[^ ]+}} = arith.select [[IS_SLOT]], [[COMBINED]], {{%[^ ]+}} : f32
// CHECK-COUNT-5:   cuda.shfl_xor
// CHECK-NEXT:      [[ROW_MAX:%[^ ]+]] = arith.maximumf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      [[T0:%[^ ]+]] = arith.cmpi eq, [[TID]], [[C0]] : index
// CHECK-NEXT:      [[P0:%[^ ]+]] = arith.cmpi eq, %part, [[C0]] : index
// CHECK-NEXT:      [[LEADER:%[^ ]+]] = arith.andi [[T0]], [[P0]] : i1
// CHECK-NEXT:      scf.if [[LEADER]] {
// CHECK-NEXT:        cuda.store [[ROW_MAX]], %m[%row] : f32, !cuda.ptr<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @split(%x: !cuda.ptr<f32>, %peak: !cuda.ptr<f32>) outputs 1 shapes [[3, 256], [3, 1]] {
// CHECK-NEXT:    %group_counters = cuda.alloc 3 : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.zero %group_counters, 3 : !cuda.ptr<i32>
// CHECK-NEXT:    %group_partials = cuda.alloc 12 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @split_k grid [6, 1, 1] block [32, 1, 1](%x, %peak, %group_counters, %group_partials) cooperative [2] : !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<i32>, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.free %group_counters : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.free %group_partials : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// -- row_reduce, a split row's dependent reductions in one exchange -----------

// softmax over rows split in 2: each block takes its part's maximum c_b and
// its sum s_b of exp(x - c_b) (online softmax), writes both to the group's
// slots (2 per part) and waits once. Each warp combines the maxima to the
// row's C, then the sums rescaled by exp(c_b - C) (nothing where a part is
// all -inf). The outputs reuse the block's exponentials, rescaled the same
// way, rather than computing them again.
kernel.func @online_k(%x: tensor<2x256xf32>) -> (tensor<2x256xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, vector = 4, elements_per_thread = 4, split = 2> attributes {fused_ops = ["reduce_max", "sub", "exp", "reduce_sum", "div"]} {
  %m = molten.reduce_max %x axes = [1] keepdim : tensor<2x256xf32> -> tensor<2x1xf32>
  %d = molten.sub %x, %m : (tensor<2x256xf32>, tensor<2x1xf32>) -> tensor<2x256xf32>
  %e = molten.exp %d : tensor<2x256xf32>
  %s = molten.reduce_sum %e axes = [1] keepdim : tensor<2x256xf32> -> tensor<2x1xf32>
  %p = molten.div %e, %s : (tensor<2x256xf32>, tensor<2x1xf32>) -> tensor<2x256xf32>
  kernel.yield %p : tensor<2x256xf32>
}
func.func @online(%x: tensor<2x256xf32>) -> (tensor<2x256xf32> {molten.name = "p"}) {
  %p = kernel.launch @online_k(%x) : (tensor<2x256xf32>) -> tensor<2x256xf32>
  func.return %p : tensor<2x256xf32>
}

// CHECK-LABEL: cuda.kernel @online_k(
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[NEG_INF:%[^ ]+]] = arith.constant 0xff800000 : f32
// CHECK:         %e = math.exp %d : f32
// CHECK:         %s_acc_2 = arith.addf %s_acc_1, %e_3 : f32
// CHECK-COUNT-5:   cuda.shfl_xor
// CHECK-NEXT:      [[BLOCK_SUM:%[^ ]+]] = arith.addf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK:           scf.if
// CHECK-NEXT:        [[MAX_SLOT:%[^ ]+]] = arith.addi [[SLOTS:%[^ ]+]], %part : index
// CHECK-NEXT:        cuda.store [[BLOCK_MAX:%[^ ]+]], %group_partials{{\[}}[[MAX_SLOT]]{{\]}}
// CHECK-NEXT:        [[SUM_PART:%[^ ]+]] = arith.addi %part, {{%[^ ]+}} : index
// CHECK-NEXT:        [[SUM_SLOT:%[^ ]+]] = arith.addi [[SLOTS]], [[SUM_PART]] : index
// CHECK-NEXT:        cuda.store [[BLOCK_SUM]], %group_partials{{\[}}[[SUM_SLOT]]{{\]}}
// CHECK-NEXT:      }
// CHECK:           cuda.group_barrier
// CHECK-NOT:       cuda.group_barrier
// CHECK:           [[THEIR_MAX:%[^ ]+]] = cuda.load coherent %group_partials
// CHECK:           [[THEIR_SUM:%[^ ]+]] = cuda.load coherent %group_partials
// CHECK-COUNT-5:   cuda.shfl_xor
// CHECK-NEXT:      [[ROW_MAX:%[^ ]+]] = arith.maximumf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      [[DELTA:%[^ ]+]] = arith.subf [[THEIR_MAX]], [[ROW_MAX]] : f32
// CHECK-NEXT:      [[SCALE:%[^ ]+]] = math.exp [[DELTA]] : f32
// CHECK-NEXT:      [[SCALED:%[^ ]+]] = arith.mulf [[THEIR_SUM]], [[SCALE]] : f32
// CHECK-NEXT:      [[EMPTY:%[^ ]+]] = arith.cmpf oeq, [[THEIR_MAX]], [[NEG_INF]] : f32
// CHECK-NEXT:      [[SHARE:%[^ ]+]] = arith.select [[EMPTY]], [[ZERO]], [[SCALED]] : f32
// CHECK:           cuda.shfl_xor
// CHECK-COUNT-4:   cuda.shfl_xor
// CHECK-NEXT:      [[ROW_SUM:%[^ ]+]] = arith.addf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      [[MINE:%[^ ]+]] = arith.subf [[BLOCK_MAX]], [[ROW_MAX]] : f32
// CHECK-NEXT:      [[MINE_EMPTY:%[^ ]+]] = arith.cmpf oeq, [[BLOCK_MAX]], [[NEG_INF]] : f32
// CHECK-NEXT:      [[FACTOR:%[^ ]+]] = math.exp [[MINE]] : f32
// CHECK-NEXT:      [[E:%[^ ]+]] = arith.mulf %e, [[FACTOR]] : f32
// CHECK-NEXT:      [[E_ROW:%[^ ]+]] = arith.select [[MINE_EMPTY]], [[ZERO]], [[E]] : f32
// CHECK-NOT:       math.exp
// CHECK:           %p_1 = arith.divf [[E_ROW]], [[ROW_SUM]] : f32
// CHECK:         cuda.host_func @online(
// CHECK-NEXT:    cuda.alloc 2 : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.zero
// CHECK-NEXT:    %group_partials = cuda.alloc 16 : !cuda.ptr<f32>

// -----

// layer_norm's moments over rows split in 2 (100 columns a part): each
// block takes its part's sum and its sum of squares about the part's own
// mean c_b, and the group exchanges both once. The squares are combined as
// S2_b + (c_b - C) (2 S1_b + n_b (c_b - C)), S1_b = sum_b - n_b c_b.
kernel.func @moments_k(%x: tensor<2x200xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, vector = 4, elements_per_thread = 4, split = 2> attributes {fused_ops = ["reduce_mean", "sub", "square", "reduce_mean"]} {
  %mean = molten.reduce_mean %x axes = [1] keepdim : tensor<2x200xf32> -> tensor<2x1xf32>
  %d = molten.sub %x, %mean : (tensor<2x200xf32>, tensor<2x1xf32>) -> tensor<2x200xf32>
  %sq = molten.square %d : tensor<2x200xf32>
  %var = molten.reduce_mean %sq axes = [1] keepdim : tensor<2x200xf32> -> tensor<2x1xf32>
  kernel.yield %var : tensor<2x1xf32>
}
func.func @moments(%x: tensor<2x200xf32>) -> (tensor<2x1xf32> {molten.name = "var"}) {
  %v = kernel.launch @moments_k(%x) : (tensor<2x200xf32>) -> tensor<2x1xf32>
  func.return %v : tensor<2x1xf32>
}

// CHECK-LABEL: cuda.kernel @moments_k(
// CHECK-DAG:     [[TWO:%[^ ]+]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG:     [[N_PART:%[^ ]+]] = arith.constant 1.000000e+02 : f32
// CHECK-DAG:     [[INV_PART:%[^ ]+]] = arith.constant 1.000000e-02 : f32
// CHECK-DAG:     [[INV_ROW:%[^ ]+]] = arith.constant 5.000000e-03 : f32
// CHECK:         [[PART_MEAN:%[^ ]+]] = arith.mulf [[BLOCK_SUM:%[^ ]+]], [[INV_PART]] : f32
// CHECK-NEXT:    %d = arith.subf %x_1, [[PART_MEAN]] : f32
// CHECK:         cuda.group_barrier
// CHECK-NOT:     cuda.group_barrier
// CHECK:         [[THEIR_SUM:%[^ ]+]] = cuda.load coherent %group_partials
// CHECK:         [[THEIR_SQUARES:%[^ ]+]] = cuda.load coherent %group_partials
// CHECK:         [[ROW_MEAN:%[^ ]+]] = arith.mulf {{%[^ ]+}}, [[INV_ROW]] : f32
// CHECK-NEXT:    [[THEIR_MEAN:%[^ ]+]] = arith.mulf [[THEIR_SUM]], [[INV_PART]] : f32
// CHECK-NEXT:    [[DELTA:%[^ ]+]] = arith.subf [[THEIR_MEAN]], [[ROW_MEAN]] : f32
// CHECK-NEXT:    [[N_MEAN:%[^ ]+]] = arith.mulf [[N_PART]], [[THEIR_MEAN]] : f32
// CHECK-NEXT:    [[S1:%[^ ]+]] = arith.subf [[THEIR_SUM]], [[N_MEAN]] : f32
// CHECK-NEXT:    [[TWICE:%[^ ]+]] = arith.mulf [[S1]], [[TWO]] : f32
// CHECK-NEXT:    [[N_DELTA:%[^ ]+]] = arith.mulf [[N_PART]], [[DELTA]] : f32
// CHECK-NEXT:    [[INNER:%[^ ]+]] = arith.addf [[TWICE]], [[N_DELTA]] : f32
// CHECK-NEXT:    [[CORRECTION:%[^ ]+]] = arith.mulf [[DELTA]], [[INNER]] : f32
// CHECK-NEXT:    {{%[^ ]+}} = arith.addf [[THEIR_SQUARES]], [[CORRECTION]] : f32

// -----

// -- row_reduce, strided rows ------------------------------------------------

// The max over axis 1 of [2, 3, 40] (40 consecutive rows after it): a thread
// a row (rows_per_block = block), the rows numbered with the inner axis
// fastest, so thread t of a block reads column c of row t at
// (row / 40) * 120 + c * 40 + row % 40: consecutive threads, consecutive
// elements. No shuffle, no shared memory; the thread stores its own row's
// value and its column's differences.
kernel.func @strided_k(%x: tensor<2x3x40xf32>) -> (tensor<2x3x40xf32>, tensor<2x1x40xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 64, rows_per_block = 64, elements_per_thread = 3> attributes {fused_ops = ["reduce_max", "sub"]} {
  %m = molten.reduce_max %x axes = [1] keepdim : tensor<2x3x40xf32> -> tensor<2x1x40xf32>
  %d = molten.sub %x, %m : (tensor<2x3x40xf32>, tensor<2x1x40xf32>) -> tensor<2x3x40xf32>
  kernel.yield %d, %m : tensor<2x3x40xf32>, tensor<2x1x40xf32>
}
func.func @strided(%x: tensor<2x3x40xf32>) -> (tensor<2x3x40xf32> {molten.name = "shifted"}, tensor<2x1x40xf32> {molten.name = "peak"}) {
  %d, %m = kernel.launch @strided_k(%x) : (tensor<2x3x40xf32>) -> (tensor<2x3x40xf32>, tensor<2x1x40xf32>)
  func.return %d, %m : tensor<2x3x40xf32>, tensor<2x1x40xf32>
}

// CHECK-LABEL: cuda.kernel @strided_k(%x: !cuda.ptr<f32>, %d: !cuda.ptr<f32>, %m: !cuda.ptr<f32>) block 64
// CHECK-DAG:     [[C120:%[^ ]+]] = arith.constant 120 : index
// CHECK-DAG:     [[C40:%[^ ]+]] = arith.constant 40 : index
// CHECK-DAG:     [[C80:%[^ ]+]] = arith.constant 80 : index
// CHECK:         [[TID:%[^ ]+]] = cuda.thread_idx x
// CHECK:         scf.for [[RB:%[^ ]+]] =
// CHECK-NEXT:      [[FIRST:%[^ ]+]] = arith.muli [[RB]], {{%[^ ]+}} : index
// CHECK-NEXT:      [[R:%[^ ]+]] = arith.addi [[FIRST]], [[TID]] : index
// CHECK-NEXT:      [[VALID_ROW:%[^ ]+]] = arith.cmpi slt, [[R]], [[C80]] : index
// CHECK-NEXT:      %row = arith.minsi [[R]], {{%[^ ]+}} : index
// CHECK-NEXT:      [[INNER:%[^ ]+]] = arith.remsi %row, [[C40]] : index
// CHECK-NEXT:      [[OUTER:%[^ ]+]] = arith.divsi %row, [[C40]] : index
// CHECK-NEXT:      [[BASE:%[^ ]+]] = arith.muli [[OUTER]], [[C120]] : index
// CHECK-NEXT:      %x_offset = arith.addi [[BASE]], [[INNER]] : index
// CHECK-NEXT:      %x_1 = cuda.load %x[%x_offset]
// CHECK:           arith.addi {{%[^ ]+}}, [[C40]] : index
// CHECK:           %x_2 = cuda.load %x[%x_offset_1]
// CHECK:           arith.addi {{%[^ ]+}}, [[C80]] : index
// CHECK:           %x_3 = cuda.load %x[%x_offset_2]
// CHECK-NEXT:      %m_acc_1 = arith.maximumf %m_acc, %x_3 : f32
// CHECK-NOT:       cuda.shfl_xor
// CHECK-NEXT:      scf.if [[VALID_ROW]] {
// CHECK-COUNT-3:     cuda.store {{%[^ ]+}}, %d[
// CHECK:             [[ROW_BASE:%[^ ]+]] = arith.muli [[OUTER]], [[C40]] : index
// CHECK-NEXT:        [[AT:%[^ ]+]] = arith.addi [[ROW_BASE]], [[INNER]] : index
// CHECK-NEXT:        cuda.store %m_acc_1, %m[[[AT]]] : f32, !cuda.ptr<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return

// -----

// -- row_reduce, positions -------------------------------------------------

// An argmax: each thread keeps its best element and column (a NaN beats
// all but an earlier NaN: `ugt` and `ord`; a later equal element does not
// replace it); then one int64 key each, its order (the float's bits,
// negative ones flipped below the sign, -0 as 0, a NaN the greatest) above
// its column's complement, reduced by a signed max like any other total
// (shuffles of i64); the row's position is the complement of the low 32
// bits. The reshape without keepdim is stored as the row values (out[row]).
kernel.func @argmax_k(%x: tensor<3x64xf32>) -> (tensor<3xi64>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 1, elements_per_thread = 2> attributes {fused_ops = ["argmax", "reshape"]} {
  %i = molten.argmax %x axes = [1] keepdim : tensor<3x64xf32> -> tensor<3x1xi64>
  %r = molten.reshape %i : tensor<3x1xi64> -> tensor<3xi64>
  kernel.yield %r : tensor<3xi64>
}
func.func @positions(%x: tensor<3x64xf32>) -> (tensor<3xi64> {molten.name = "top"}) {
  %r = kernel.launch @argmax_k(%x) : (tensor<3x64xf32>) -> tensor<3xi64>
  func.return %r : tensor<3xi64>
}

// CHECK-LABEL: cuda.kernel @argmax_k(%x: !cuda.ptr<f32>, %r: !cuda.ptr<i64>) block 32
// CHECK-DAG:     [[LOW:%[^ ]+]] = arith.constant 4294967295 : i64
// CHECK-DAG:     [[C32:%[^ ]+]] = arith.constant 32 : i64
// CHECK-DAG:     [[GREATEST:%[^ ]+]] = arith.constant 2147483647 : i32
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK:         %col_1 = arith.addi %col, {{%[^ ]+}} : index
// CHECK:         %x_1 = cuda.load %x[%x_offset] : !cuda.ptr<f32> -> f32
// CHECK:         %x_2 = cuda.load %x[%x_offset_1] : !cuda.ptr<f32> -> f32
// CHECK-NEXT:    [[BEYOND:%[^ ]+]] = arith.cmpf ugt, %x_2, %x_1 : f32
// CHECK-NEXT:    [[SETTLED:%[^ ]+]] = arith.cmpf ord, %x_1, %x_1 : f32
// CHECK-NEXT:    [[TAKEN:%[^ ]+]] = arith.andi [[BEYOND]], [[SETTLED]] : i1
// CHECK-NEXT:    %i_acc = arith.select [[TAKEN]], %x_2, %x_1 : f32
// CHECK-NEXT:    [[AT:%[^ ]+]] = arith.select [[TAKEN]], %col_1, %col : index
// CHECK-NEXT:    [[IS_ZERO:%[^ ]+]] = arith.cmpf oeq, %i_acc, [[ZERO]] : f32
// CHECK-NEXT:    [[ZEROED:%[^ ]+]] = arith.select [[IS_ZERO]], [[ZERO]], %i_acc : f32
// CHECK-NEXT:    [[BITS:%[^ ]+]] = arith.bitcast [[ZEROED]] : f32 to i32
// CHECK-NEXT:    [[NEGATIVE:%[^ ]+]] = arith.cmpi slt, [[BITS]], {{%[^ ]+}} : i32
// CHECK-NEXT:    [[FLIPPED:%[^ ]+]] = arith.xori [[BITS]], [[GREATEST]] : i32
// CHECK-NEXT:    [[ORDER:%[^ ]+]] = arith.select [[NEGATIVE]], [[FLIPPED]], [[BITS]] : i32
// CHECK-NEXT:    [[NAN:%[^ ]+]] = arith.cmpf uno, %i_acc, %i_acc : f32
// CHECK-NEXT:    [[ORDER_NAN:%[^ ]+]] = arith.select [[NAN]], [[GREATEST]], [[ORDER]] : i32
// CHECK-NEXT:    [[WIDE:%[^ ]+]] = arith.extsi [[ORDER_NAN]] : i32 to i64
// CHECK-NEXT:    [[HIGH:%[^ ]+]] = arith.shli [[WIDE]], [[C32]] : i64
// CHECK-NEXT:    [[COL:%[^ ]+]] = arith.index_cast [[AT]] : index to i64
// CHECK-NEXT:    [[COMPLEMENT:%[^ ]+]] = arith.subi [[LOW]], [[COL]] : i64
// CHECK-NEXT:    [[KEY:%[^ ]+]] = arith.ori [[HIGH]], [[COMPLEMENT]] : i64
// CHECK-NEXT:    [[S16:%[^ ]+]] = cuda.shfl_xor [[KEY]], 16 : i64
// CHECK-NEXT:    {{%[^ ]+}} = arith.maxsi [[KEY]], [[S16]] : i64
// CHECK-COUNT-4: cuda.shfl_xor
// CHECK-NEXT:    [[TOTAL:%[^ ]+]] = arith.maxsi {{%[^ ]+}}, {{%[^ ]+}} : i64
// CHECK-NEXT:    [[LOW_BITS:%[^ ]+]] = arith.andi [[TOTAL]], [[LOW]] : i64
// CHECK-NEXT:    [[POSITION:%[^ ]+]] = arith.subi [[LOW]], [[LOW_BITS]] : i64
// CHECK:         cuda.store [[POSITION]], %r[%row] : i64, !cuda.ptr<i64>
