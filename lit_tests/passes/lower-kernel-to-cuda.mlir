// RUN: sed '/^\/\/ ERROR CASES$/,$d' %s | molten-opt --split-input-file -p lower-kernel-to-cuda | filecheck %s
// RUN: sed -n '/^\/\/ BEGIN NO-SCHEDULE$/,/^\/\/ END NO-SCHEDULE$/p' %s | not molten-opt -p lower-kernel-to-cuda 2>&1 | filecheck %s --check-prefix=NO-SCHEDULE
// RUN: sed -n '/^\/\/ BEGIN ATTENTION$/,/^\/\/ END ATTENTION$/p' %s | not molten-opt -p lower-kernel-to-cuda 2>&1 | filecheck %s --check-prefix=ATTENTION

// lower-kernel-to-cuda on hand-written kernel-level modules (kernel.func with
// a schedule, and the graph's func.func of kernel.launch): each kernel.func
// becomes a cuda.kernel over global pointers (its inputs, then its outputs,
// named after the kernel's values), the graph a cuda.host_func (the graph's
// inputs, then its outputs, named after the graph: molten.name, else the
// value's name) that launches the kernels with the grid and block of their
// schedules and allocates the buffers between them.
//
// The cases run in the first RUN line; the two errors at the end of the file
// (a kernel without schedule, an attention kernel) each run alone, cut out of
// this file by sed. SSA names inside kernels are matched by pattern: the pass
// chooses them.

// -- pointwise ---------------------------------------------------------------

// f16 with a broadcast row vector: a grid-stride loop over the 64x96
// elements, f16 loaded and extended to f32, the row vector read at the
// column only, the result truncated to f16 on store. The grid covers the
// elements with block * elements_per_thread = 256 elements per block.
kernel.func @bias_relu(%x: tensor<64x96xf16>, %b: tensor<96xf16>) -> (tensor<64x96xf16>) pointwise schedule #kernel.schedule<block = 128, elements_per_thread = 2> attributes {fused_ops = ["add", "relu"]} {
  %sum = molten.add %x, %b : (tensor<64x96xf16>, tensor<96xf16>) -> tensor<64x96xf16>
  %y = molten.relu %sum : tensor<64x96xf16>
  kernel.yield %y : tensor<64x96xf16>
}
func.func @pointwise(%x: tensor<64x96xf16>, %b: tensor<96xf16>) -> (tensor<64x96xf16> {molten.name = "out"}) {
  %y = kernel.launch @bias_relu(%x, %b) : (tensor<64x96xf16>, tensor<96xf16>) -> tensor<64x96xf16>
  func.return %y : tensor<64x96xf16>
}

// CHECK-LABEL: cuda.kernel @bias_relu(%x: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) block 128 attributes {fused_ops = ["add", "relu"]} {
// CHECK-DAG:     [[ZERO:%[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     [[C96:%[^ ]+]] = arith.constant 96 : index
// CHECK-DAG:     [[N:%[^ ]+]] = arith.constant 6144 : index
// CHECK:         [[TID:%[^ ]+]] = cuda.thread_idx x
// CHECK-NEXT:    [[BID:%[^ ]+]] = cuda.block_idx x
// CHECK-NEXT:    [[BDIM:%[^ ]+]] = cuda.block_dim x
// CHECK-NEXT:    [[GDIM:%[^ ]+]] = cuda.grid_dim x
// CHECK-NEXT:    [[BASE:%[^ ]+]] = arith.muli [[BID]], [[BDIM]] : index
// CHECK-NEXT:    [[START:%[^ ]+]] = arith.addi [[BASE]], [[TID]] : index
// CHECK-NEXT:    [[STEP:%[^ ]+]] = arith.muli [[BDIM]], [[GDIM]] : index
// CHECK-NEXT:    scf.for [[I:%[^ ]+]] = [[START]] to [[N]] step [[STEP]] {
// CHECK-NEXT:      [[COL:%[^ ]+]] = arith.remsi [[I]], [[C96]] : index
// CHECK-NEXT:      [[ROW:%[^ ]+]] = arith.divsi [[I]], [[C96]] : index
// CHECK-NEXT:      [[ROWBASE:%[^ ]+]] = arith.muli [[ROW]], [[C96]] : index
// CHECK-NEXT:      [[XOFF:%[^ ]+]] = arith.addi [[ROWBASE]], [[COL]] : index
// CHECK-NEXT:      [[XH:%[^ ]+]] = cuda.load %x{{\[}}[[XOFF]]{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:      [[XF:%[^ ]+]] = arith.extf [[XH]] : f16 to f32
// CHECK-NEXT:      [[BH:%[^ ]+]] = cuda.load %b{{\[}}[[COL]]{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:      [[BF:%[^ ]+]] = arith.extf [[BH]] : f16 to f32
// CHECK-NEXT:      [[SUM:%[^ ]+]] = arith.addf [[XF]], [[BF]] : f32
// CHECK-NEXT:      [[RELU:%[^ ]+]] = arith.maximumf [[SUM]], [[ZERO]] : f32
// CHECK:           [[YOFF:%[^ ]+]] = arith.addi {{%[^ ]+}}, [[COL]] : index
// CHECK-NEXT:      [[YH:%[^ ]+]] = arith.truncf [[RELU]] : f32 to f16
// CHECK-NEXT:      cuda.store [[YH]], %y{{\[}}[[YOFF]]{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @pointwise(%x: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %out: !cuda.ptr<f16>) outputs 1 {
// CHECK-NEXT:    cuda.launch @bias_relu grid [24, 1, 1] block [128, 1, 1](%x, %b, %out) : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// -- row_reduce, the row in registers ----------------------------------------

// An f16 rms_norm over rows of 256 with 64 threads of 4 elements: the row is
// read once into registers (no loop over it), each thread holding elements
// col, col + 64, col + 128, col + 192; the sum is combined in the warp
// (shfl_xor 16, 8, 4, 2, 1), across the two warps through a shared slot per
// warp between two barriers, and in the warp again; then scaled by 1/256.
// The normalized row is stored from the same registers: x is not read again.
kernel.func @rms_k(%x: tensor<3x256xf16>, %w: tensor<256xf16>) -> (tensor<3x256xf16>) row_reduce schedule #kernel.schedule<block = 64, elements_per_thread = 4> attributes {fused_ops = ["cast", "square", "reduce_mean", "add", "rsqrt", "mul", "cast", "mul", "cast"]} {
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
// CHECK-NEXT:  cuda.host_func @rms(%x: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %norm: !cuda.ptr<f16>) outputs 1 {
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
kernel.func @sum_max(%x: tensor<2x1000xf32>) -> (tensor<2x1000xf32>, tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 128, elements_per_thread = 1> attributes {fused_ops = ["reduce_sum", "reduce_max", "sub"]} {
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
// CHECK-NEXT:  cuda.host_func @long_rows(%x: !cuda.ptr<f32>, %shifted: !cuda.ptr<f32>, %total: !cuda.ptr<f32>) outputs 2 {
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
kernel.func @short_k(%x: tensor<5x12xf32>) -> (tensor<5x1xf32>) row_reduce schedule #kernel.schedule<block = 32, rows_per_block = 8, vector = 4, elements_per_thread = 4> attributes {fused_ops = ["reduce_sum"]} {
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
// CHECK-NEXT:  cuda.host_func @short(%x: !cuda.ptr<f32>, %sum: !cuda.ptr<f32>) outputs 1 {
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
kernel.func @split_k(%x: tensor<3x256xf32>) -> (tensor<3x1xf32>) row_reduce schedule #kernel.schedule<block = 32, vector = 4, elements_per_thread = 4, split = 2> attributes {fused_ops = ["reduce_max"]} {
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
// CHECK-NEXT:  cuda.host_func @split(%x: !cuda.ptr<f32>, %peak: !cuda.ptr<f32>) outputs 1 {
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
kernel.func @online_k(%x: tensor<2x256xf32>) -> (tensor<2x256xf32>) row_reduce schedule #kernel.schedule<block = 32, vector = 4, elements_per_thread = 4, split = 2> attributes {fused_ops = ["reduce_max", "sub", "exp", "reduce_sum", "div"]} {
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
// CHECK:         %s_acc_3 = arith.addf %s_acc_2, %e_3 : f32
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
kernel.func @moments_k(%x: tensor<2x200xf32>) -> (tensor<2x1xf32>) row_reduce schedule #kernel.schedule<block = 32, vector = 4, elements_per_thread = 4, split = 2> attributes {fused_ops = ["reduce_mean", "sub", "square", "reduce_mean"]} {
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

// -- gemm --------------------------------------------------------------------

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
kernel.func @gemm_k(%a: tensor<20x8xf16>, %w: tensor<8x16xf16>, %b: tensor<16xf16>) -> (tensor<20x16xf16>) gemm schedule #kernel.schedule<block = 16, tile = [16, 16, 4]> attributes {fused_ops = ["matmul", "add"]} {
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
// CHECK:         [[INSIDE:%[^ ]+]] = arith.cmpi slt, {{%[^ ]+}}, [[C20]] : index
// CHECK-NEXT:    scf.if [[INSIDE]] {
// CHECK-NEXT:      [[MM:%[^ ]+]] = arith.truncf [[ACC0]] : f32 to f16
// CHECK-NEXT:      [[MMF:%[^ ]+]] = arith.extf [[MM]] : f16 to f32
// CHECK-NEXT:      [[BIAS:%[^ ]+]] = cuda.load %b{{\[}}{{%[^ ]+}}{{\]}} : !cuda.ptr<f16> -> f16
// CHECK-NEXT:      [[BIASF:%[^ ]+]] = arith.extf [[BIAS]] : f16 to f32
// CHECK-NEXT:      [[SUM:%[^ ]+]] = arith.addf [[MMF]], [[BIASF]] : f32
// CHECK:           [[OUT:%[^ ]+]] = arith.truncf [[SUM]] : f32 to f16
// CHECK-NEXT:      cuda.store [[OUT]], %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-COUNT-14: cuda.store {{%[^ ]+}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK:         scf.if {{%[^ ]+}} {
// CHECK-NEXT:      {{%[^ ]+}} = arith.truncf [[ACC15]] : f32 to f16
// CHECK:           cuda.store {{%[^ ]+}}, %y{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16>
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
// CHECK-NEXT:  cuda.host_func @linear(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) outputs 1 {
// CHECK-NEXT:    cuda.launch @gemm_k grid [1, 2, 1] block [16, 1, 1](%a, %w, %b, %y) : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// The same matmul on tensor cores, as its #kernel.tiling has it: 32x32x16
// block tiles, two warps of 32x16 (block 64), two stages. Per stage, A's
// 32x16 tile and B's 16x32 tile sit in shared memory with rows padded to 24
// and 40 halves (the tiling's pitch). A prologue copies the first K step
// (cp.async, 16 bytes a thread and operand; A's rows past M = 40 zero-filled,
// B's copies always valid); each K step waits for its tile, then copies the
// next one into the other stage, if there is a next one (K = 32: two steps),
// and runs each warp's 2x2 mma.sync m16n8k16 on fragments from ldmatrix (B's
// transposed: it is stored [K][N]). The epilogue adds the bias to the
// accumulators in registers, guarded by the row alone (only M is partial),
// and stages the results in B's idle buffer (rows of 32 + 8 halves); the
// block then stores them 16 bytes a thread, rows past M skipped. The
// launch takes a SIMT variant when A, W or Y is not 16-byte aligned.
kernel.func @mma_k(%a: tensor<40x32xf16>, %w: tensor<32x32xf16>, %b: tensor<32xf16>) -> (tensor<40x32xf16>) gemm schedule #kernel.schedule<block = 64, tile = [32, 32, 16], warp = [32, 16], stages = 2> tiling #kernel.tiling<grid = [1, 2, 1], block = [32, 32, 16], warp = [32, 16], fragment = [16, 8, 16], stages = 2, k_steps = 2, partial = [m], lhs = [32, 16, 24], rhs = [16, 32, 40]> attributes {fused_ops = ["matmul", "add"]} {
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
// CHECK-NEXT:    scf.if [[INSIDE]] {
// CHECK:           cuda.load %b
// CHECK:           cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16, shared>
// CHECK-NEXT:    }
// CHECK-COUNT-15: cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : f16, !cuda.ptr<f16, shared>
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

// The same on sm_90a's warpgroup tensor cores (mma_warps = 4), as its
// #kernel.tiling has it: a 128x256 output in one 128x256x64 block tile, two
// warpgroups of 64x256 (block 256, one block an SM: min_blocks 1), four
// stages of unpadded tiles: A's 128x64 (32 KiB of halves in all) and B's
// 64x256 (64 KiB). Each thread's 16-byte cp.async copies land in 128-byte
// swizzled rows: chunk c of row r at chunk c ^ (r % 8) (arith.xori). K =
// 128 is two K steps; the prologue copies both (each its own group, two
// steps ahead of the math). The loop runs every step but the last (one
// trip): it waits for its copies (all but the newest group), makes them
// visible to the tensor cores (fence.proxy.async) and to the block
// (barrier), issues the copies two steps on (none here: `wanted` is
// false), then four m64n256k16 wgmmas (one per k16 of the step, each on
// descriptors of the stage's tiles: A K-major, `leading` unused, B stored
// [K][N], MN-major: trans_b, `leading` the 8192 bytes between its 64-column
// blocks; `stride` the 1024 bytes between groups of 8 rows), commits them
// and waits for all but this group, carrying 128 f32 accumulators a
// thread. The last step (stage 1, at 16384 halves into B's buffer) is
// peeled after the loop and waits for all groups (wgmma_wait 0): no wgmma
// is in flight into the epilogue, which (once every warp is past the K
// loop) adds the bias to each accumulator and stores it into B's idle
// buffer, unguarded (no partial tile); after a barrier the block copies
// that tile to the output 16 bytes a thread, whole rows a warp. The launch
// takes a SIMT variant when A, W or Y is not 16-byte aligned.
kernel.func @wgmma_k(%a: tensor<128x128xf16>, %w: tensor<128x256xf16>, %b: tensor<256xf16>) -> (tensor<128x256xf16>) gemm schedule #kernel.schedule<block = 256, tile = [128, 256, 64], warp = [64, 256], stages = 4, mma_warps = 4> tiling #kernel.tiling<grid = [1, 1, 1], block = [128, 256, 64], warp = [64, 256], fragment = [64, 256, 16], stages = 4, k_steps = 2, partial = [], lhs = [128, 64, 64], rhs = [64, 256, 256]> attributes {fused_ops = ["matmul", "add"]} {
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
// CHECK:       cuda.host_func @linear_wgmma(%a: !cuda.ptr<f16>, %w: !cuda.ptr<f16>, %b: !cuda.ptr<f16>, %y: !cuda.ptr<f16>) outputs 1 {
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
kernel.func @wgmma_one_step(%a: tensor<64x100xbf16>, %w: tensor<128x64xbf16>) -> (tensor<100x128xbf16>) gemm schedule #kernel.schedule<block = 256, tile = [128, 128, 64], warp = [64, 128], stages = 4, mma_warps = 4> tiling #kernel.tiling<grid = [1, 1, 1], block = [128, 128, 64], warp = [64, 128], fragment = [64, 128, 16], stages = 4, k_steps = 1, partial = [m], lhs = [64, 128, 128], rhs = [128, 64, 64]> {
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
// CHECK-NEXT:    scf.if [[INSIDE]] {
// CHECK-NEXT:      {{%[^ ]+}} = arith.truncf [[DONE]] : f32 to bf16
// CHECK:           cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : bf16, !cuda.ptr<bf16, shared>
// CHECK-NEXT:    }
// CHECK-COUNT-63: cuda.store {{%[^ ]+}}, %b_tile{{\[}}{{%[^ ]+}}{{\]}} : bf16, !cuda.ptr<bf16, shared>
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

// A GEMV (k_lanes = 8): 2 rows, N = 20 in runs of 4 columns, 4 runs a block
// (the last block's run past N reads the last run of B, %[[BCOL]], and
// stores nothing), K = 37 split 8 ways: thread t sums rows k_lane, k_lane +
// 8, ... of B (k_lane = t / 4); three rows in flight per loop trip (one
// trip), one more row after it, then the last, partial round (rows 32 to
// 36) guarded, its values zeroed past K. The 8 lanes of a run add their
// sums by shuffles (lanes 4, 8, 16 apart), the warps theirs through shared
// memory; the first 8 threads (a row and run each) add the bias and store.
kernel.func @gemv_k(%x: tensor<2x37xf32>, %w: tensor<37x20xf32>, %b: tensor<20xf32>) -> (tensor<2x20xf32>) gemm schedule #kernel.schedule<block = 32, vector = 4, tile = [2, 16, 40], stages = 3, k_lanes = 8> attributes {fused_ops = ["matmul", "add"]} {
  %mm = molten.matmul %x, %w : (tensor<2x37xf32>, tensor<37x20xf32>) -> tensor<2x20xf32>
  %y = molten.add %mm, %b : (tensor<2x20xf32>, tensor<20xf32>) -> tensor<2x20xf32>
  kernel.yield %y : tensor<2x20xf32>
}

// CHECK-LABEL: cuda.kernel @gemv_k(%x: !cuda.ptr<f32>, %w: !cuda.ptr<f32>, %b: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 32 attributes {fused_ops = ["matmul", "add"]} {
// CHECK:         %run = arith.remsi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:    %k_lane = arith.divsi %{{.*}}, %{{.*}} : index
// CHECK:         %col = arith.addi %col0, %{{.*}} : index
// CHECK-NEXT:    %[[BCOL:.*]] = arith.minsi %col, %{{.*}} : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-3: arith.addi %{{.*}}, %k_lane : index
// CHECK-COUNT-12: cuda.load %w
// CHECK:         scf.yield
// CHECK-NEXT:    }
// CHECK:         arith.addi %{{.*}}, %k_lane : index
// CHECK-COUNT-4: cuda.load %w
// CHECK:         %[[LAST:.*]] = arith.cmpi slt, %k_lane, %{{.*}} : index
// CHECK:         arith.minsi
// CHECK-COUNT-6: arith.select %[[LAST]], %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-8: cuda.shfl_xor %{{.*}}, 4 : f32
// CHECK-COUNT-8: cuda.shfl_xor %{{.*}}, 8 : f32
// CHECK-COUNT-8: cuda.shfl_xor %{{.*}}, 16 : f32
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    %warp_sums = cuda.shared_alloc 32 : !cuda.ptr<f32, shared>
// CHECK:         scf.if %{{.*}} {
// CHECK-COUNT-8: cuda.store %{{.*}}, %warp_sums[%{{.*}}] : f32, !cuda.ptr<f32, shared>
// CHECK:         cuda.sync_threads
// CHECK:         arith.cmpi slt, %col, %{{.*}} : index
// CHECK-COUNT-4: cuda.load %warp_sums
// CHECK-COUNT-4: cuda.store %y_{{[0-9]}}, %y[%{{.*}}] : f32, !cuda.ptr<f32>
// CHECK:         cuda.return

// -----

// -- the launcher ------------------------------------------------------------

// Three kernels in launch order. Parameters: the graph's input, then its two
// outputs, named by molten.name (`sum`) or else by the returned value (`c`).
// The values passed between kernels (%e, %m) get a cuda.alloc of their
// element count, placed just before the launch that writes them, and a
// cuda.free after the last launch; the output %a, also read by the third
// kernel, is passed as the output parameter, not allocated. Each launch has
// the grid and block of its kernel's schedule. In @g_cast the molten.cast to
// bf16 rounds (truncf, extf) and the store converts again.
kernel.func @g_exp(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise schedule #kernel.schedule<block = 128> attributes {fused_ops = ["exp"]} {
  %e = molten.exp %x : tensor<4x8xf32>
  kernel.yield %e : tensor<4x8xf32>
}
kernel.func @g_mul_add(%e: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) pointwise schedule #kernel.schedule<block = 64, elements_per_thread = 4> attributes {fused_ops = ["mul", "add"]} {
  %m = molten.mul %e, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = molten.add %m, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  kernel.yield %m, %a : tensor<4x8xf32>, tensor<4x8xf32>
}
kernel.func @g_cast(%m: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> (tensor<4x8xbf16>) pointwise schedule #kernel.schedule<block = 32> attributes {fused_ops = ["sub", "cast"]} {
  %d = molten.sub %m, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = molten.cast %d : tensor<4x8xf32> to tensor<4x8xbf16>
  kernel.yield %c : tensor<4x8xbf16>
}
func.func @g(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {molten.name = "sum"}, tensor<4x8xbf16>) {
  %e = kernel.launch @g_exp(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m, %a = kernel.launch @g_mul_add(%e, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %c = kernel.launch @g_cast(%m, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xbf16>
  func.return %a, %c : tensor<4x8xf32>, tensor<4x8xbf16>
}

// CHECK-LABEL: cuda.kernel @g_exp(%x: !cuda.ptr<f32>, %e: !cuda.ptr<f32>) block 128 attributes {fused_ops = ["exp"]} {
// CHECK:       cuda.kernel @g_mul_add(%e: !cuda.ptr<f32>, %x: !cuda.ptr<f32>, %m: !cuda.ptr<f32>, %a: !cuda.ptr<f32>) block 64 attributes {fused_ops = ["mul", "add"]} {
// CHECK:       cuda.kernel @g_cast(%m: !cuda.ptr<f32>, %a: !cuda.ptr<f32>, %c: !cuda.ptr<bf16>) block 32 attributes {fused_ops = ["sub", "cast"]} {
// CHECK:           [[D:%[^ ]+]] = arith.subf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      [[D16:%[^ ]+]] = arith.truncf [[D]] : f32 to bf16
// CHECK-NEXT:      [[DR:%[^ ]+]] = arith.extf [[D16]] : bf16 to f32
// CHECK:           [[C:%[^ ]+]] = arith.truncf [[DR]] : f32 to bf16
// CHECK-NEXT:      cuda.store [[C]], %c{{\[}}{{%[^ ]+}}{{\]}} : bf16, !cuda.ptr<bf16>
// CHECK:       cuda.host_func @g(%x: !cuda.ptr<f32>, %sum: !cuda.ptr<f32>, %c: !cuda.ptr<bf16>) outputs 2 {
// CHECK-NEXT:    %e = cuda.alloc 32 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @g_exp grid [1, 1, 1] block [128, 1, 1](%x, %e) : !cuda.ptr<f32>, !cuda.ptr<f32>
// CHECK-NEXT:    %m = cuda.alloc 32 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @g_mul_add grid [1, 1, 1] block [64, 1, 1](%e, %x, %m, %sum) : !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @g_cast grid [1, 1, 1] block [32, 1, 1](%m, %sum, %c) : !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.free %e : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.free %m : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// Names the graph does not give: an argument without a name is `in<i>`, an
// output without molten.name whose value has no name `out<i>`; an f16
// buffer between kernels (unnamed: the printer numbers it). Grids: 70000
// elements in blocks of 256 threads of one element.
kernel.func @anon_k0(%0: tensor<70000xf16>) -> (tensor<70000xf16>) pointwise schedule #kernel.schedule<block = 256> attributes {fused_ops = ["neg"]} {
  %1 = molten.neg %0 : tensor<70000xf16>
  kernel.yield %1 : tensor<70000xf16>
}
kernel.func @anon_k1(%0: tensor<70000xf16>, %1: tensor<70000xf16>) -> (tensor<70000xf16>) pointwise schedule #kernel.schedule<block = 256> attributes {fused_ops = ["mul"]} {
  %2 = molten.mul %0, %1 : (tensor<70000xf16>, tensor<70000xf16>) -> tensor<70000xf16>
  kernel.yield %2 : tensor<70000xf16>
}
func.func @anon(%0: tensor<70000xf16>, %1: tensor<70000xf16>) -> tensor<70000xf16> {
  %2 = kernel.launch @anon_k0(%0) : (tensor<70000xf16>) -> tensor<70000xf16>
  %3 = kernel.launch @anon_k1(%2, %1) : (tensor<70000xf16>, tensor<70000xf16>) -> tensor<70000xf16>
  func.return %3 : tensor<70000xf16>
}

// CHECK-LABEL: cuda.kernel @anon_k0(%{{[^ ]+}}: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>) block 256 attributes {fused_ops = ["neg"]} {
// CHECK:       cuda.kernel @anon_k1(%{{[^ ]+}}: !cuda.ptr<f16>, %{{[^ ]+}}: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>) block 256 attributes {fused_ops = ["mul"]} {
// CHECK:       cuda.host_func @anon(%in0: !cuda.ptr<f16>, %in1: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>) outputs 1 {
// CHECK-NEXT:    [[T:%[^ ]+]] = cuda.alloc 70000 : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.launch @anon_k0 grid [274, 1, 1] block [256, 1, 1](%in0, [[T]]) : !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.launch @anon_k1 grid [274, 1, 1] block [256, 1, 1]([[T]], %in1, %out0) : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.free [[T]] : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// An output that is an input (`same`) and a value returned twice (`neg`,
// `neg_again`): the kernel writes the first output buffer of the value; the
// others are filled by cuda.copy of their element count after the launches.
kernel.func @ret_k(%x: tensor<4x8xf16>) -> (tensor<4x8xf16>) pointwise schedule #kernel.schedule<block = 256> attributes {fused_ops = ["neg"]} {
  %n = molten.neg %x : tensor<4x8xf16>
  kernel.yield %n : tensor<4x8xf16>
}
func.func @ret(%x: tensor<4x8xf16>) -> (tensor<4x8xf16> {molten.name = "same"}, tensor<4x8xf16> {molten.name = "neg"}, tensor<4x8xf16> {molten.name = "neg_again"}) {
  %n = kernel.launch @ret_k(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %x, %n, %n : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}

// CHECK-LABEL: cuda.host_func @ret(%x: !cuda.ptr<f16>, %same: !cuda.ptr<f16>, %neg: !cuda.ptr<f16>, %neg_again: !cuda.ptr<f16>) outputs 3 {
// CHECK-NEXT:    cuda.launch @ret_k grid [1, 1, 1] block [256, 1, 1](%x, %neg) : !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.copy %same, %x, 32 : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.copy %neg_again, %neg, 32 : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// ERROR CASES

// Everything below is cut out by the RUN lines above, one case per run.

// BEGIN NO-SCHEDULE
// A kernel.func without a schedule: kernel-schedule has not run.
kernel.func @no_schedule(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise {
  %y = molten.neg %x : tensor<4xf32>
  kernel.yield %y : tensor<4xf32>
}
// END NO-SCHEDULE

// NO-SCHEDULE-NOT: builtin.module
// NO-SCHEDULE:     {{^.*}}: error: lower-kernel-to-cuda: @no_schedule has no schedule; run kernel-schedule first{{$}}
// NO-SCHEDULE-NOT: {{Traceback|internal error|builtin.module}}

// BEGIN ATTENTION
// An attention kernel (with a schedule) is not lowered yet.
kernel.func @attention_kernel(%q: tensor<16x64xf32>) -> (tensor<16x64xf32>) attention schedule #kernel.schedule<block = 128> {
  %o = molten.attention %q, %q, %q scale = 1.250000e-01 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  kernel.yield %o : tensor<16x64xf32>
}
// END ATTENTION

// ATTENTION-NOT: builtin.module
// ATTENTION:     {{^}}molten-opt: error: not implemented yet: lower-kernel-to-cuda: attention kernels (@attention_kernel) are not lowered yet{{$}}
// ATTENTION-NOT: {{Traceback|internal error|builtin.module}}
