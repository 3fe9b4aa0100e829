// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// gemm kernels scheduled as a GEMV (k_lanes): K split over lanes.
//
// lower-kernel-to-cuda on hand-written kernel-level modules (kernel.func with
// a schedule, and the graph's func.func of kernel.launch): each kernel.func
// becomes a cuda.kernel over global pointers (its inputs, then its outputs,
// named after the kernel's values), the graph a cuda.host_func (the graph's
// inputs, then its outputs, named after the graph: molten.name, else the
// value's name) that launches the kernels with the grid and block of their
// schedules and allocates the buffers between them. SSA names inside kernels
// are matched by pattern: the pass chooses them.

// A GEMV (k_lanes = 8): 2 rows, N = 20 in runs of 4 columns, 4 runs a block
// (the last block's run past N reads the last run of B, %[[BCOL]], and
// stores nothing), K = 37 split 8 ways: thread t sums rows k_lane, k_lane +
// 8, ... of B (k_lane = t / 4); three rows in flight per loop trip (one
// trip), one more row after it, then the last, partial round (rows 32 to
// 36) guarded, its values zeroed past K. The 8 lanes of a run add their
// sums by shuffles (lanes 4, 8, 16 apart), the warps theirs through shared
// memory; the first 8 threads (a row and run each) add the bias and store.
kernel.func @gemv_k(%x: tensor<2x37xf32>, %w: tensor<37x20xf32>, %b: tensor<20xf32>) -> (tensor<2x20xf32>) gemm schedule #kernel.schedule<gemv, block = 32, vector = 4, tile = [2, 16, 40], stages = 3, k_lanes = 8> attributes {fused_ops = ["matmul", "add"]} {
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
