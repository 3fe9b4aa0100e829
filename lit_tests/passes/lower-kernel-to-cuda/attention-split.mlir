// RUN: molten-opt %s -p lower-kernel-to-cuda | filecheck %s

// A split attention (flash-decoding): 5 queries against 300 keys (5 tiles of
// 64), split 3 ways in the schedule. Each block of grid z takes a part of
// the tiles (2, 2 and 1) from kv_begin, stores its unnormalized rows and
// each row's max and sum in scratch, and arrives at its group's counter; the
// last block to arrive combines the parts in order of part (the coherent
// loads) and stores the output through the gemm epilogue. The launcher
// allocates the scratch and zeroes the counters.

builtin.module {
  kernel.func @decode_attention0(%q: tensor<2x5x32xf16>, %k: tensor<2x300x32xf16>, %v: tensor<2x300x32xf16>) -> (tensor<2x5x32xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1> schedule #kernel.schedule<attention, block = 128, split = 3, tile = [64, 64, 32], warp = [16, 32], stages = 2> attributes {fused_ops = ["cast", "cast", "cast", "matmul", "mul", "reduce_max", "sub", "exp", "reduce_sum", "div", "matmul", "cast"]} {
    %cst = molten.constant dense<0.176776692> : tensor<f32>
    %q_f32 = molten.cast %q : tensor<2x5x32xf16> to tensor<2x5x32xf32>
    %k_f32 = molten.cast %k : tensor<2x300x32xf16> to tensor<2x300x32xf32>
    %v_f32 = molten.cast %v : tensor<2x300x32xf16> to tensor<2x300x32xf32>
    %matmul = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x5x32xf32>, tensor<2x300x32xf32>) -> tensor<2x5x300xf32>
    %mul = molten.mul %matmul, %cst : (tensor<2x5x300xf32>, tensor<f32>) -> tensor<2x5x300xf32>
    %reduce_max = molten.reduce_max %mul axes = [2] keepdim : tensor<2x5x300xf32> -> tensor<2x5x1xf32>
    %sub = molten.sub %mul, %reduce_max : (tensor<2x5x300xf32>, tensor<2x5x1xf32>) -> tensor<2x5x300xf32>
    %exp = molten.exp %sub : tensor<2x5x300xf32>
    %reduce_sum = molten.reduce_sum %exp axes = [2] keepdim : tensor<2x5x300xf32> -> tensor<2x5x1xf32>
    %div = molten.div %exp, %reduce_sum : (tensor<2x5x300xf32>, tensor<2x5x1xf32>) -> tensor<2x5x300xf32>
    %matmul_1 = molten.matmul %div, %v_f32 : (tensor<2x5x300xf32>, tensor<2x300x32xf32>) -> tensor<2x5x32xf32>
    %0 = molten.cast %matmul_1 : tensor<2x5x32xf32> to tensor<2x5x32xf16>
    kernel.yield %0 : tensor<2x5x32xf16>
  }
  func.func @decode(%q: tensor<2x5x32xf16>, %k: tensor<2x300x32xf16>, %v: tensor<2x300x32xf16>) -> (tensor<2x5x32xf16> {molten.name = "out0"}) {
    %0 = kernel.launch @decode_attention0(%q, %k, %v) : (tensor<2x5x32xf16>, tensor<2x300x32xf16>, tensor<2x300x32xf16>) -> tensor<2x5x32xf16>
    func.return %0 : tensor<2x5x32xf16>
  }
}
// CHECK-LABEL: cuda.kernel @decode_attention0(%q: !cuda.ptr<f16>, %k: !cuda.ptr<f16>, %v: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>, %attention_counters: !cuda.ptr<i32>, %attention_parts: !cuda.ptr<f32>, %attention_part_stats: !cuda.ptr<f32>)
// CHECK:         %part = cuda.block_idx z
// CHECK:         %kv_begin = arith.muli %part, %[[PER_PART:.*]] : index
// CHECK:         %kv_count = arith.minsi %[[PER_PART]], %{{.*}} : index
// CHECK:         scf.for %kv_tile = %{{.*}} to %kv_count step %{{.*}} iter_args(
// CHECK:           arith.addi %kv_begin, %kv_tile : index
// CHECK:           cuda.mma f16 a[
// CHECK:           scf.yield
// CHECK:         cuda.store %{{.*}}, %{{.*}}, %attention_parts[%{{.*}}] : f32, f32, !cuda.ptr<f32>
// CHECK:         cuda.store %{{.*}}, %{{.*}}, %attention_part_stats[%{{.*}}] : f32, f32, !cuda.ptr<f32>
// CHECK:         %last = cuda.last_arrival %attention_counters[%{{.*}}], %{{.*}} : !cuda.ptr<i32>
// CHECK-NEXT:    scf.if %last {
// CHECK:           scf.for %part_1 = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:             cuda.load coherent %attention_part_stats[
// CHECK:             arith.maximumf
// CHECK:           scf.for %part_2 = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK:             math.exp2
// CHECK:             cuda.load coherent %attention_parts[
// CHECK:           cuda.store %{{.*}}, %q_tile[
// CHECK:           cuda.store {{.*}}, %out0[
// CHECK:         cuda.return
// CHECK:       cuda.host_func @decode(
// CHECK-NEXT:    %attention_counters = cuda.alloc 2 : !cuda.ptr<i32>
// CHECK-NEXT:    cuda.zero %attention_counters, 2 restored : !cuda.ptr<i32>
// CHECK-NEXT:    %attention_parts = cuda.alloc 960 : !cuda.ptr<f32>
// CHECK-NEXT:    %attention_part_stats = cuda.alloc 60 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @decode_attention0 grid [1, 2, 3] block [128, 1, 1](%q, %k, %v, %out0, %attention_counters, %attention_parts, %attention_part_stats)
