// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// scan kernels: contiguous rows on a power of two of lanes (shuffles only)
// and on a block (shuffles, then the warps' totals through shared memory),
// and strided rows (a thread a row). Each row is walked in steps that carry
// the sum of the steps before. SSA names inside kernels are matched by
// pattern: the pass chooses them.

// Rows of 8 on 2 lanes of 4 (one run of 4 a lane), 16 rows a block: one
// step; the lane's run is summed in registers, then a Kogge-Stone scan on
// the xor partner (shfl_xor 1) adds the partner's total where the partner is
// an earlier lane (lane & 1 != 0); the row's sums are stored under the row's
// guard (the last block's rows past the end store nothing).
kernel.func @running_k(%x: tensor<20x8xf32>) -> (tensor<20x8xf32>) scan schedule #kernel.schedule<scan, block = 32, rows_per_block = 16, vector = 4, elements_per_thread = 4> {
  %c = molten.cumsum %x axis = 1 : tensor<20x8xf32>
  kernel.yield %c : tensor<20x8xf32>
}
func.func @running(%x: tensor<20x8xf32>) -> tensor<20x8xf32> {
  %c = kernel.launch @running_k(%x) : (tensor<20x8xf32>) -> tensor<20x8xf32>
  func.return %c : tensor<20x8xf32>
}

// CHECK-LABEL: cuda.kernel @running_k(%x: !cuda.ptr<f32>, %c: !cuda.ptr<f32>) block 32 {
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           %{{.*}} = scf.for %step = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%carry = %{{.*}}) -> (f32) {
// CHECK-COUNT-4:     cuda.load %x[
// CHECK:             %[[OTHER:.*]] = cuda.shfl_xor %{{.*}}, 1 : f32
// CHECK-NEXT:        %[[BIT:.*]] = arith.andi %{{.*}}, %{{.*}} : index
// CHECK-NEXT:        %[[EARLIER:.*]] = arith.cmpi ne, %[[BIT]], %{{.*}} : index
// CHECK-NOT:         cuda.shfl_xor
// CHECK-NOT:         cuda.sync_threads
// CHECK:             scf.if %{{.*}} {
// CHECK-COUNT-4:       cuda.store %{{.*}}, %c[
// CHECK:             scf.yield %{{.*}} : f32

// -----

// A reverse exclusive scan of rows of 3000 on blocks of 64 lanes of 2 runs of
// 4: 6 steps of 512 columns from the row's end (chunk = 5 - step), the last
// one partial (runs past the end read the last run and count 0); an earlier
// lane is a higher one (lane & d == 0); each warp posts its runs' totals to
// shared slots (two sets, by the step's parity), one barrier a step; the row
// ends with no barrier (an even number of steps).
kernel.func @after_k(%x: tensor<3x3000xf32>) -> (tensor<3x3000xf32>) scan schedule #kernel.schedule<scan, block = 64, vector = 4, elements_per_thread = 8> {
  %c = molten.cumsum %x axis = 1 reverse exclusive : tensor<3x3000xf32>
  kernel.yield %c : tensor<3x3000xf32>
}
func.func @after(%x: tensor<3x3000xf32>) -> tensor<3x3000xf32> {
  %c = kernel.launch @after_k(%x) : (tensor<3x3000xf32>) -> tensor<3x3000xf32>
  func.return %c : tensor<3x3000xf32>
}

// CHECK-LABEL: cuda.kernel @after_k(%x: !cuda.ptr<f32>, %c: !cuda.ptr<f32>) block 64 {
// CHECK:         %[[SLOTS:.*]] = cuda.shared_alloc 8 : !cuda.ptr<f32, shared>
// CHECK:         scf.for %row = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %step = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%carry = %{{.*}}) -> (f32) {
// CHECK-NEXT:        %[[CHUNK:.*]] = arith.subi %{{.*}}, %step : index
// CHECK:             arith.cmpi slt, %{{.*}}, %{{.*}} : index
// CHECK:             arith.minsi
// CHECK:             cuda.shfl_xor %{{.*}}, 1 : f32
// CHECK-NEXT:        arith.andi
// CHECK-NEXT:        arith.cmpi eq
// CHECK:             cuda.shfl_xor %{{.*}}, 16 : f32
// CHECK:             cuda.store %{{.*}}, %[[SLOTS]][
// CHECK:             cuda.sync_threads
// CHECK-NOT:         cuda.sync_threads
// CHECK:             cuda.load %[[SLOTS]][
// CHECK:             scf.yield %carry_1 : f32
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.return

// -----

// A scan along axis 0 of [50, 40]: strided rows, a thread a row (the 40
// columns), 8 elements a step down the column (7 steps, the last partial),
// no shuffle; consecutive threads read consecutive elements of a row.
kernel.func @down_k(%x: tensor<50x40xf32>) -> (tensor<50x40xf32>) scan schedule #kernel.schedule<scan, block = 64, rows_per_block = 64, vector = 1, elements_per_thread = 8> {
  %c = molten.cumsum %x axis = 0 : tensor<50x40xf32>
  kernel.yield %c : tensor<50x40xf32>
}
func.func @down(%x: tensor<50x40xf32>) -> tensor<50x40xf32> {
  %c = kernel.launch @down_k(%x) : (tensor<50x40xf32>) -> tensor<50x40xf32>
  func.return %c : tensor<50x40xf32>
}

// CHECK-LABEL: cuda.kernel @down_k(%x: !cuda.ptr<f32>, %c: !cuda.ptr<f32>) block 64 {
// CHECK-NOT:     cuda.shfl_xor
// CHECK:         scf.for %step = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%carry = %{{.*}}) -> (f32) {
// CHECK-COUNT-8:   cuda.load %x[
// CHECK-NOT:       cuda.shfl_xor
// CHECK-NOT:       cuda.sync_threads
// CHECK:           scf.yield %{{.*}} : f32

// -----

// The other scans share the walk: a running maximum combines by maximumf (a
// NaN stays) from -inf, with no combination of the identity itself (the
// first element of a run is taken as it is); a running product by mulf.
kernel.func @peaks_k(%x: tensor<20x8xf32>) -> (tensor<20x8xf32>, tensor<20x8xf32>) scan schedule #kernel.schedule<scan, block = 32, rows_per_block = 16, vector = 4, elements_per_thread = 4> {
  %m = molten.cummax %x axis = 1 : tensor<20x8xf32>
  %p = molten.exp %m : tensor<20x8xf32>
  kernel.yield %m, %p : tensor<20x8xf32>, tensor<20x8xf32>
}
func.func @peaks(%x: tensor<20x8xf32>) -> (tensor<20x8xf32>, tensor<20x8xf32>) {
  %m, %p = kernel.launch @peaks_k(%x) : (tensor<20x8xf32>) -> (tensor<20x8xf32>, tensor<20x8xf32>)
  func.return %m, %p : tensor<20x8xf32>, tensor<20x8xf32>
}

// CHECK-LABEL: cuda.kernel @peaks_k(%x: !cuda.ptr<f32>, %m: !cuda.ptr<f32>, %p: !cuda.ptr<f32>) block 32 {
// CHECK:         %[[LOWEST:.*]] = arith.constant 0xff800000 : f32
// CHECK:           %{{.*}} = scf.for %step = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%carry = %[[LOWEST]]) -> (f32) {
// CHECK-COUNT-4:     cuda.load %x[
// CHECK-NOT:         arith.maximumf %[[LOWEST]]
// CHECK:             arith.maximumf
// CHECK:             cuda.shfl_xor %{{.*}}, 1 : f32
// CHECK:             arith.maximumf
// CHECK:             math.exp
