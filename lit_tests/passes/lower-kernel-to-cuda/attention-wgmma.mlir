// RUN: molten-opt %s -p lower-kernel-to-cuda | filecheck %s

// An attention kernel on sm_90a's wgmma (kernel-schedule{arch="sm_90a"}):
// causal, 130 queries against 200 keys, head dimension 64, f16; two
// warpgroups of 64 query rows (256 threads) against tiles of 64 keys. Q, K
// and V tiles lie in shared memory in 128-byte swizzled rows (what cp.async
// writes is fenced for the tensor cores' reads before each barrier). Per
// tile, Q Kᵀ reads Q and K through K-major descriptors (the first wgmma
// with no accumulators in: D = A B), waited for; the softmax on the
// accumulators, as on mma.sync (exp2 on the SFU); P packed into registers
// and P V from them (cuda.wgmma_reg_a) with V MN-major (its 64-column
// blocks 64 keys of 128 bytes apart: leading 8192), waited for. A
// warpgroup past the queries (the last block's second) skips the products.
// The tiles every row of the block sees whole run in a loop of their own
// (to kv_seen), without the mask.
//
// With three stages (@attn3), each tile's P V is left running: P is carried
// into the next iteration, which issues its Q Kᵀ first and then the tile
// before's P V, waits for all but that group (the scores), and for all
// before O is rescaled; the last tile's P V follows the loops.

builtin.module {
  kernel.func @attn_attention0(%q: tensor<2x130x64xf16>, %k: tensor<2x200x64xf16>, %v: tensor<2x200x64xf16>) -> (tensor<2x130x64xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1, causal> schedule #kernel.schedule<attention, block = 256, tile = [128, 64, 64], warp = [64, 64], stages = 2, mma_warps = 4> attributes {fused_ops = ["cast", "cast", "cast", "matmul", "mul", "add", "reduce_max", "sub", "exp", "reduce_sum", "div", "matmul", "cast"]} {
    %cst = molten.constant dense<1.250000e-01> : tensor<f32>
    %causal_mask = molten.causal_mask : tensor<130x200xf32>
    %q_f32 = molten.cast %q : tensor<2x130x64xf16> to tensor<2x130x64xf32>
    %k_f32 = molten.cast %k : tensor<2x200x64xf16> to tensor<2x200x64xf32>
    %v_f32 = molten.cast %v : tensor<2x200x64xf16> to tensor<2x200x64xf32>
    %matmul = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x130x64xf32>, tensor<2x200x64xf32>) -> tensor<2x130x200xf32>
    %mul = molten.mul %matmul, %cst : (tensor<2x130x200xf32>, tensor<f32>) -> tensor<2x130x200xf32>
    %add = molten.add %mul, %causal_mask : (tensor<2x130x200xf32>, tensor<130x200xf32>) -> tensor<2x130x200xf32>
    %reduce_max = molten.reduce_max %add axes = [2] keepdim : tensor<2x130x200xf32> -> tensor<2x130x1xf32>
    %sub = molten.sub %add, %reduce_max : (tensor<2x130x200xf32>, tensor<2x130x1xf32>) -> tensor<2x130x200xf32>
    %exp = molten.exp %sub : tensor<2x130x200xf32>
    %reduce_sum = molten.reduce_sum %exp axes = [2] keepdim : tensor<2x130x200xf32> -> tensor<2x130x1xf32>
    %div = molten.div %exp, %reduce_sum : (tensor<2x130x200xf32>, tensor<2x130x1xf32>) -> tensor<2x130x200xf32>
    %matmul_1 = molten.matmul %div, %v_f32 : (tensor<2x130x200xf32>, tensor<2x200x64xf32>) -> tensor<2x130x64xf32>
    %0 = molten.cast %matmul_1 : tensor<2x130x64xf32> to tensor<2x130x64xf16>
    kernel.yield %0 : tensor<2x130x64xf16>
  }
  func.func @attn(%q: tensor<2x130x64xf16>, %k: tensor<2x200x64xf16>, %v: tensor<2x200x64xf16>) -> (tensor<2x130x64xf16> {molten.name = "out0"}) {
    %0 = kernel.launch @attn_attention0(%q, %k, %v) : (tensor<2x130x64xf16>, tensor<2x200x64xf16>, tensor<2x200x64xf16>) -> tensor<2x130x64xf16>
    func.return %0 : tensor<2x130x64xf16>
  }

  kernel.func @attn3_attention0(%q: tensor<2x130x64xf16>, %k: tensor<2x200x64xf16>, %v: tensor<2x200x64xf16>) -> (tensor<2x130x64xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1, causal> schedule #kernel.schedule<attention, block = 256, tile = [128, 64, 64], warp = [64, 64], stages = 3, mma_warps = 4> attributes {fused_ops = ["cast", "cast", "cast", "matmul", "mul", "add", "reduce_max", "sub", "exp", "reduce_sum", "div", "matmul", "cast"]} {
    %cst = molten.constant dense<1.250000e-01> : tensor<f32>
    %causal_mask = molten.causal_mask : tensor<130x200xf32>
    %q_f32 = molten.cast %q : tensor<2x130x64xf16> to tensor<2x130x64xf32>
    %k_f32 = molten.cast %k : tensor<2x200x64xf16> to tensor<2x200x64xf32>
    %v_f32 = molten.cast %v : tensor<2x200x64xf16> to tensor<2x200x64xf32>
    %matmul = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x130x64xf32>, tensor<2x200x64xf32>) -> tensor<2x130x200xf32>
    %mul = molten.mul %matmul, %cst : (tensor<2x130x200xf32>, tensor<f32>) -> tensor<2x130x200xf32>
    %add = molten.add %mul, %causal_mask : (tensor<2x130x200xf32>, tensor<130x200xf32>) -> tensor<2x130x200xf32>
    %reduce_max = molten.reduce_max %add axes = [2] keepdim : tensor<2x130x200xf32> -> tensor<2x130x1xf32>
    %sub = molten.sub %add, %reduce_max : (tensor<2x130x200xf32>, tensor<2x130x1xf32>) -> tensor<2x130x200xf32>
    %exp = molten.exp %sub : tensor<2x130x200xf32>
    %reduce_sum = molten.reduce_sum %exp axes = [2] keepdim : tensor<2x130x200xf32> -> tensor<2x130x1xf32>
    %div = molten.div %exp, %reduce_sum : (tensor<2x130x200xf32>, tensor<2x130x1xf32>) -> tensor<2x130x200xf32>
    %matmul_1 = molten.matmul %div, %v_f32 : (tensor<2x130x200xf32>, tensor<2x200x64xf32>) -> tensor<2x130x64xf32>
    %0 = molten.cast %matmul_1 : tensor<2x130x64xf32> to tensor<2x130x64xf16>
    kernel.yield %0 : tensor<2x130x64xf16>
  }
  func.func @attn3(%q: tensor<2x130x64xf16>, %k: tensor<2x200x64xf16>, %v: tensor<2x200x64xf16>) -> (tensor<2x130x64xf16> {molten.name = "out0"}) {
    %0 = kernel.launch @attn3_attention0(%q, %k, %v) : (tensor<2x130x64xf16>, tensor<2x200x64xf16>, tensor<2x200x64xf16>) -> tensor<2x130x64xf16>
    func.return %0 : tensor<2x130x64xf16>
  }
}

// CHECK-LABEL: cuda.kernel @attn_attention0(%q: !cuda.ptr<f16>, %k: !cuda.ptr<f16>, %v: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>) block 256
// CHECK:         %q_tile = cuda.shared_alloc 8192 : !cuda.ptr<f16, shared>
// CHECK:         %k_tile = cuda.shared_alloc 8192 : !cuda.ptr<f16, shared>
// CHECK:         %v_tile = cuda.shared_alloc 8192 : !cuda.ptr<f16, shared>
// CHECK:         cuda.fence_proxy_async
// CHECK-NEXT:    cuda.sync_threads
// CHECK:         %kv_seen = arith.minsi %{{.*}}, %kv_end : index
// CHECK:         scf.for %kv_tile = %{{.*}} to %kv_seen step
// CHECK:           cuda.fence_proxy_async
// CHECK-NEXT:      cuda.sync_threads
// CHECK:           scf.if
// CHECK-NEXT:        cuda.wgmma_fence
// CHECK:             cuda.wgmma_descriptor %q_tile[%{{.*}}] leading 16 stride 1024
// CHECK:             cuda.wgmma_descriptor %k_tile[%{{.*}}] leading 16 stride 1024
// CHECK-NEXT:        cuda.wgmma f16 n 64 %{{.*}}, %{{.*}}[] : f32
// CHECK-COUNT-3:     cuda.wgmma f16 n 64 %{{.*}}, %{{.*}}[%{{.*}}] : f32
// CHECK-NEXT:        cuda.wgmma_commit
// CHECK-NEXT:        cuda.wgmma_wait 0[
// CHECK:             math.exp2 %{{.*}} fastmath<afn> : f32
// CHECK:             cuda.pack f16
// CHECK:             cuda.wgmma_fence
// CHECK:             cuda.wgmma_descriptor %v_tile[%{{.*}}] leading 8192 stride 1024
// CHECK-NEXT:        cuda.wgmma_reg_a f16 n 64 trans_b[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}], %{{.*}}[
// CHECK-COUNT-3:     cuda.wgmma_reg_a f16 n 64 trans_b[
// CHECK-NEXT:        cuda.wgmma_commit
// CHECK-NEXT:        cuda.wgmma_wait 0[
// CHECK:         scf.for %kv_tile{{.*}} = %kv_seen to %kv_end step
// CHECK:             cuda.wgmma f16 n 64 %{{.*}}, %{{.*}}[] : f32
// CHECK:             cuda.wgmma_reg_a f16 n 64 trans_b[
// CHECK:         cuda.cp_async_wait 0
// CHECK-NOT:     cuda.wgmma
// CHECK:         cuda.return

// CHECK-LABEL: cuda.kernel @attn3_attention0(
// CHECK:         %k_tile = cuda.shared_alloc 12288 : !cuda.ptr<f16, shared>
// CHECK:         %v_tile = cuda.shared_alloc 12288 : !cuda.ptr<f16, shared>
// CHECK:         scf.for %kv_tile = %{{.*}} to %kv_seen step %{{.*}} iter_args(
// CHECK:           scf.if
// CHECK-COUNT-4:     cuda.wgmma f16 n 64
// CHECK-NEXT:        cuda.wgmma_commit
// CHECK:             cuda.wgmma_fence
// CHECK-COUNT-4:     cuda.wgmma_reg_a f16 n 64 trans_b[
// CHECK-NEXT:        cuda.wgmma_commit
// CHECK-NEXT:        cuda.wgmma_wait 1[
// CHECK:             math.exp2
// CHECK:             cuda.wgmma_wait 0[
// CHECK:             cuda.pack f16
// CHECK-NOT:         cuda.wgmma
// CHECK:             scf.yield
// CHECK:         scf.for %kv_tile{{.*}} = %kv_seen to %kv_end step
// CHECK:             cuda.wgmma_wait 1[
// CHECK:           } else {
// CHECK:           }
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    cuda.cp_async_wait 0
// CHECK:         %[[LAST:.*]] = arith.subi %kv_end, %{{.*}} : index
// CHECK:         cuda.wgmma_fence
// CHECK-COUNT-4: cuda.wgmma_reg_a f16 n 64 trans_b[
// CHECK-NEXT:    cuda.wgmma_commit
// CHECK-NEXT:    cuda.wgmma_wait 0[
// CHECK:         cuda.return
