// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// scatter kernels (fuse-scatter's groups) and what the launcher does around
// them: a grid-stride loop over the source's elements, each written (or added
// atomically, with accumulate) where its index says, an index out of range
// skipped; the output starts as the scatter's input: a cuda.copy before the
// launch, or no copy at all where the input is updated in place
// (molten.updates) and nothing reads its old values after.

// The KV cache update: the host function has no output pointer for the
// cache, which it writes (updates [0]); the kernel stores into the cache's
// own memory, and nothing is copied.
// CHECK-LABEL: cuda.kernel @cache_update_scatter0(%pos: !cuda.ptr<i64>, %cache: !cuda.ptr<f16>, %k: !cuda.ptr<f16>, %new: !cuda.ptr<f16>) block 64
// CHECK:         scf.for
// CHECK:           %at = cuda.load %pos[{{.*}}] : !cuda.ptr<i64> -> i64
// CHECK:           [[POS:%.*]] = arith.index_cast %at : i64 to index
// CHECK-NEXT:      [[LOW:%.*]] = arith.cmpi sge, [[POS]], %{{.*}} : index
// CHECK-NEXT:      [[HIGH:%.*]] = arith.cmpi slt, [[POS]], %{{.*}} : index
// CHECK-NEXT:      [[IN:%.*]] = arith.andi [[LOW]], [[HIGH]] : i1
// CHECK-NEXT:      scf.if [[IN]] {
// CHECK:             cuda.store %{{.*}}, %new[%{{.*}}] : f16, !cuda.ptr<f16>
// CHECK-LABEL: cuda.host_func @cache_update(%cache: !cuda.ptr<f16>, %k: !cuda.ptr<f16>, %pos: !cuda.ptr<i64>) outputs 0 updates [0] shapes [[2, 16, 8], [2, 1, 8], [1]] {
// CHECK-NEXT:    cuda.launch @cache_update_scatter0 grid [1, 1, 1] block [64, 1, 1](%pos, %cache, %k, %cache)
// CHECK-NEXT:    cuda.return

kernel.func @cache_update_scatter0(%pos: tensor<1xi64>, %cache: tensor<2x16x8xf16>, %k: tensor<2x1x8xf16>) -> (tensor<2x16x8xf16>) scatter schedule #kernel.schedule<scatter, block = 64> attributes {fused_ops = ["reshape", "broadcast_to", "scatter"]} {
  %at = molten.reshape %pos : tensor<1xi64> -> tensor<1x1x1xi64>
  %index = molten.broadcast_to %at : tensor<1x1x1xi64> -> tensor<2x1x8xi64>
  %new = molten.scatter %cache, %index, %k axis = 1 : (tensor<2x16x8xf16>, tensor<2x1x8xi64>, tensor<2x1x8xf16>) -> tensor<2x16x8xf16>
  kernel.yield %new : tensor<2x16x8xf16>
}
func.func @cache_update(%cache: tensor<2x16x8xf16>, %k: tensor<2x1x8xf16>, %pos: tensor<1xi64>) -> (tensor<2x16x8xf16> {molten.updates = 0 : i64}) {
  %new = kernel.launch @cache_update_scatter0(%pos, %cache, %k) : (tensor<1xi64>, tensor<2x16x8xf16>, tensor<2x1x8xf16>) -> tensor<2x16x8xf16>
  func.return %new : tensor<2x16x8xf16>
}

// -----

// scatter_add into an input that is not updated: its output starts as a copy
// of it, and the kernel adds atomically (bf16 adds).
// CHECK-LABEL: cuda.kernel @scatter_add_scatter0
// CHECK:           cuda.atomic_add %{{.*}}, %s[%{{.*}}] : bf16, !cuda.ptr<bf16>
// CHECK-LABEL: cuda.host_func @scatter_add(%x: !cuda.ptr<bf16>, %ids: !cuda.ptr<i32>, %src: !cuda.ptr<bf16>, %s: !cuda.ptr<bf16>) outputs 1
// CHECK-NEXT:    cuda.copy %s, %x, 32 : !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.launch @scatter_add_scatter0

kernel.func @scatter_add_scatter0(%x: tensor<4x8xbf16>, %ids: tensor<4x3xi32>, %src: tensor<4x3xbf16>) -> (tensor<4x8xbf16>) scatter schedule #kernel.schedule<scatter, block = 64> attributes {fused_ops = ["scatter"]} {
  %s = molten.scatter %x, %ids, %src axis = 1 accumulate : (tensor<4x8xbf16>, tensor<4x3xi32>, tensor<4x3xbf16>) -> tensor<4x8xbf16>
  kernel.yield %s : tensor<4x8xbf16>
}
func.func @scatter_add(%x: tensor<4x8xbf16>, %ids: tensor<4x3xi32>, %src: tensor<4x3xbf16>) -> tensor<4x8xbf16> {
  %s = kernel.launch @scatter_add_scatter0(%x, %ids, %src) : (tensor<4x8xbf16>, tensor<4x3xi32>, tensor<4x3xbf16>) -> tensor<4x8xbf16>
  func.return %s : tensor<4x8xbf16>
}

// -----

// A scatter that also reads what it writes into (its source is its input)
// never writes that memory while reading it: the output is a buffer of its
// own, copied into the input at the end.
// CHECK-LABEL: cuda.host_func @reads_its_destination(%x: !cuda.ptr<i64>, %ids: !cuda.ptr<i64>) outputs 0 updates [0]
// CHECK-NEXT:    %s = cuda.alloc 8 : !cuda.ptr<i64>
// CHECK-NEXT:    cuda.copy %s, %x, 8 : !cuda.ptr<i64>
// CHECK-NEXT:    cuda.launch @reads_its_destination_scatter0 grid [1, 1, 1] block [64, 1, 1](%x, %ids, %s)
// CHECK-NEXT:    cuda.copy %x, %s, 8 : !cuda.ptr<i64>
// CHECK-NEXT:    cuda.free %s : !cuda.ptr<i64>

kernel.func @reads_its_destination_scatter0(%x: tensor<8xi64>, %ids: tensor<8xi64>) -> (tensor<8xi64>) scatter schedule #kernel.schedule<scatter, block = 64> attributes {fused_ops = ["scatter"]} {
  %s = molten.scatter %x, %ids, %x axis = 0 : (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>
  kernel.yield %s : tensor<8xi64>
}
func.func @reads_its_destination(%x: tensor<8xi64>, %ids: tensor<8xi64>) -> (tensor<8xi64> {molten.updates = 0 : i64}) {
  %s = kernel.launch @reads_its_destination_scatter0(%x, %ids) : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>
  func.return %s : tensor<8xi64>
}

// -----

// An input updated by a value no scatter computes (a step counter) takes
// it at the end, after every kernel; the other output keeps its pointer,
// and the updated input is not const.
// CHECK-LABEL: cuda.host_func @counter(%step: !cuda.ptr<i64>, %h: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 updates [0] shapes [[1], [3], [3]] {
// CHECK-NEXT:    %next = cuda.alloc 1 : !cuda.ptr<i64>
// CHECK-NEXT:    cuda.launch @counter_pointwise0 grid [1, 1, 1] block [64, 1, 1](%step, %next)
// CHECK-NEXT:    cuda.launch @counter_pointwise1 grid [1, 1, 1] block [64, 1, 1](%h, %y)
// CHECK-NEXT:    cuda.copy %step, %next, 1 : !cuda.ptr<i64>
// CHECK-NEXT:    cuda.free %next : !cuda.ptr<i64>
// CHECK-NEXT:    cuda.return

kernel.func @counter_pointwise0(%step: tensor<1xi64>) -> (tensor<1xi64>) pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 1, elements_per_thread = 1> attributes {fused_ops = ["add"]} {
  %one = molten.constant dense<1> : tensor<i64>
  %next = molten.add %step, %one : (tensor<1xi64>, tensor<i64>) -> tensor<1xi64>
  kernel.yield %next : tensor<1xi64>
}
kernel.func @counter_pointwise1(%h: tensor<3xf32>) -> (tensor<3xf32>) pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 1, elements_per_thread = 1> attributes {fused_ops = ["exp"]} {
  %y = molten.exp %h : tensor<3xf32>
  kernel.yield %y : tensor<3xf32>
}
func.func @counter(%step: tensor<1xi64>, %h: tensor<3xf32>) -> (tensor<3xf32>, tensor<1xi64> {molten.updates = 0 : i64}) {
  %next = kernel.launch @counter_pointwise0(%step) : (tensor<1xi64>) -> tensor<1xi64>
  %y = kernel.launch @counter_pointwise1(%h) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y, %next : tensor<3xf32>, tensor<1xi64>
}
