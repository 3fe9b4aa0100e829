// RUN: molten-opt %s -p lower-kernel-to-cuda | filecheck %s

// An attention kernel (fuse-attention, kernel-schedule) on tensor cores:
// causal, 40 queries against 50 keys, head dimension 32, f16. The Q tile
// (64 rows padded to 40 elements) and two stages of K and V tiles live in
// shared memory; Q goes into fragment registers once; the loop over KV tiles
// stops at the block's last row (kv_end), the tiles every row of the block
// sees whole (to kv_seen) in a loop of their own that evaluates no mask; per
// tile Q Kᵀ on mma.sync, the row max across each quad of lanes, exp2 on the
// SFU (fastmath afn), P packed into A fragments for P V (V read transposed
// by ldmatrix); the output through the gemm epilogue.

builtin.module {
  kernel.func @attn_attention0(%q: tensor<2x40x32xf16>, %k: tensor<2x50x32xf16>, %v: tensor<2x50x32xf16>) -> (tensor<2x40x32xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1, causal> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 32], warp = [16, 32], stages = 2> attributes {fused_ops = ["cast", "cast", "cast", "matmul", "mul", "add", "reduce_max", "sub", "exp", "reduce_sum", "div", "matmul", "cast"]} {
    %cst = molten.constant dense<0.176776692> : tensor<f32>
    %causal_mask = molten.causal_mask : tensor<40x50xf32>
    %q_f32 = molten.cast %q : tensor<2x40x32xf16> to tensor<2x40x32xf32>
    %k_f32 = molten.cast %k : tensor<2x50x32xf16> to tensor<2x50x32xf32>
    %v_f32 = molten.cast %v : tensor<2x50x32xf16> to tensor<2x50x32xf32>
    %matmul = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x40x32xf32>, tensor<2x50x32xf32>) -> tensor<2x40x50xf32>
    %mul = molten.mul %matmul, %cst : (tensor<2x40x50xf32>, tensor<f32>) -> tensor<2x40x50xf32>
    %add = molten.add %mul, %causal_mask : (tensor<2x40x50xf32>, tensor<40x50xf32>) -> tensor<2x40x50xf32>
    %reduce_max = molten.reduce_max %add axes = [2] keepdim : tensor<2x40x50xf32> -> tensor<2x40x1xf32>
    %sub = molten.sub %add, %reduce_max : (tensor<2x40x50xf32>, tensor<2x40x1xf32>) -> tensor<2x40x50xf32>
    %exp = molten.exp %sub : tensor<2x40x50xf32>
    %reduce_sum = molten.reduce_sum %exp axes = [2] keepdim : tensor<2x40x50xf32> -> tensor<2x40x1xf32>
    %div = molten.div %exp, %reduce_sum : (tensor<2x40x50xf32>, tensor<2x40x1xf32>) -> tensor<2x40x50xf32>
    %matmul_1 = molten.matmul %div, %v_f32 : (tensor<2x40x50xf32>, tensor<2x50x32xf32>) -> tensor<2x40x32xf32>
    %0 = molten.cast %matmul_1 : tensor<2x40x32xf32> to tensor<2x40x32xf16>
    kernel.yield %0 : tensor<2x40x32xf16>
  }
  func.func @attn(%q: tensor<2x40x32xf16>, %k: tensor<2x50x32xf16>, %v: tensor<2x50x32xf16>) -> (tensor<2x40x32xf16> {molten.name = "out0"}) {
    %0 = kernel.launch @attn_attention0(%q, %k, %v) : (tensor<2x40x32xf16>, tensor<2x50x32xf16>, tensor<2x50x32xf16>) -> tensor<2x40x32xf16>
    func.return %0 : tensor<2x40x32xf16>
  }
}
// CHECK-LABEL: cuda.kernel @attn_attention0(%q: !cuda.ptr<f16>, %k: !cuda.ptr<f16>, %v: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>) block 128 min_blocks 1
// CHECK:         %q_tile = cuda.shared_alloc 2560 : !cuda.ptr<f16, shared>
// CHECK:         %k_tile = cuda.shared_alloc 5120 : !cuda.ptr<f16, shared>
// CHECK:         %v_tile = cuda.shared_alloc 5120 : !cuda.ptr<f16, shared>
// CHECK:         %kv_end = arith.minsi
// CHECK:         cuda.cp_async_commit
// CHECK:         cuda.ldmatrix %q_tile
// CHECK:         %kv_seen = arith.minsi %{{.*}}, %kv_end
// CHECK:         scf.for %kv_tile = %{{.*}} to %kv_seen step %{{.*}} iter_args(
// CHECK:           cuda.ldmatrix %k_tile
// CHECK-NEXT:      cuda.mma f16 a[
// CHECK:           cuda.shfl_xor %{{.*}}, 1 : f32
// CHECK:           cuda.shfl_xor %{{.*}}, 2 : f32
// CHECK:           math.exp2 %{{.*}} fastmath<afn> : f32
// CHECK:           cuda.pack f16
// CHECK:           cuda.ldmatrix trans %v_tile
// CHECK:           cuda.mma f16 a[
// CHECK:           scf.yield
// CHECK:         scf.for %kv_tile{{.*}} = %kv_seen to %kv_end step %{{.*}} iter_args(
// CHECK:           cuda.mma f16 a[
// CHECK:           math.exp2 %{{.*}} fastmath<afn> : f32
// CHECK:           scf.yield
// CHECK:         cuda.cp_async_wait 0
// CHECK:         cuda.return
// CHECK:       cuda.host_func @attn(
// CHECK:         cuda.launch @attn_attention0 grid [1, 2, 1] block [128, 1, 1]
