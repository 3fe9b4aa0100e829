// RUN: molten-opt %s -p 'attach-target{target="h200"}' | filecheck %s
// RUN: molten-opt %s -p 'attach-target{target="h200"}' | molten-opt | filecheck %s
// RUN: molten-opt %s -p 'attach-target{target="a100"},kernel-schedule' | filecheck %s --check-prefix=A100
// RUN: molten-opt %s -p 'attach-target{target="h100"},kernel-schedule' | filecheck %s --check-prefix=H100
// RUN: molten-opt %s -p 'attach-target{target="a100"},kernel-schedule{sm_count=16}' | filecheck %s --check-prefix=FEW
// RUN: not molten-opt %s -p 'attach-target{target="h300"}' 2>&1 | filecheck %s --check-prefix=BAD

// attach-target: the module's device, which kernel-schedule reads (its own
// options override it). The attribute prints every fact and reads back.
// CHECK: builtin.module attributes {kernel.target = #kernel.target<"h200", arch = "sm_90a", sm_count = 132, shared_per_block = 232448, shared_per_sm = 233472, static_shared_per_block = 49152, registers_per_sm = 65536, l2_bytes = 62914560, copy_bytes_per_s = 4277000000000, tensor_flops = 989000000000000, features = ["wgmma", "tma", "clusters"]>}

// A decode's attention (32 query heads on 8 KV heads, 8192 keys): the
// query heads of a KV head share a block's rows (pack = 4), so 8 groups of
// rows, and the keys split into as many parts as two blocks an SM take:
// 2 x 108 / 8 = 27 on an A100, 2 x 132 / 8 = 33 on an H100, 2 x 16 / 8 = 4
// with 16 SMs.
kernel.func @decode(%k: tensor<8x8192x128xf16>, %v: tensor<8x8192x128xf16>, %q: tensor<32x1x128xf16>) -> (tensor<32x1x128xf16>) attention matched #kernel.attention_match<query = 2, key = 0, value = 1, group = 4> {
  %cst = molten.constant dense<8.838835e-02> : tensor<f32>
  %0 = molten.reshape %k : tensor<8x8192x128xf16> -> tensor<8x1x8192x128xf16>
  %1 = molten.broadcast_to %0 : tensor<8x1x8192x128xf16> -> tensor<8x4x8192x128xf16>
  %2 = molten.reshape %1 : tensor<8x4x8192x128xf16> -> tensor<32x8192x128xf16>
  %3 = molten.reshape %v : tensor<8x8192x128xf16> -> tensor<8x1x8192x128xf16>
  %4 = molten.broadcast_to %3 : tensor<8x1x8192x128xf16> -> tensor<8x4x8192x128xf16>
  %5 = molten.reshape %4 : tensor<8x4x8192x128xf16> -> tensor<32x8192x128xf16>
  %q_f32 = molten.cast %q : tensor<32x1x128xf16> to tensor<32x1x128xf32>
  %k_f32 = molten.cast %2 : tensor<32x8192x128xf16> to tensor<32x8192x128xf32>
  %v_f32 = molten.cast %5 : tensor<32x8192x128xf16> to tensor<32x8192x128xf32>
  %s = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<32x1x128xf32>, tensor<32x8192x128xf32>) -> tensor<32x1x8192xf32>
  %t = molten.mul %s, %cst : (tensor<32x1x8192xf32>, tensor<f32>) -> tensor<32x1x8192xf32>
  %m = molten.reduce_max %t axes = [2] keepdim : tensor<32x1x8192xf32> -> tensor<32x1x1xf32>
  %d = molten.sub %t, %m : (tensor<32x1x8192xf32>, tensor<32x1x1xf32>) -> tensor<32x1x8192xf32>
  %e = molten.exp %d : tensor<32x1x8192xf32>
  %l = molten.reduce_sum %e axes = [2] keepdim : tensor<32x1x8192xf32> -> tensor<32x1x1xf32>
  %p = molten.div %e, %l : (tensor<32x1x8192xf32>, tensor<32x1x1xf32>) -> tensor<32x1x8192xf32>
  %o = molten.matmul %p, %v_f32 : (tensor<32x1x8192xf32>, tensor<32x8192x128xf32>) -> tensor<32x1x128xf32>
  %out = molten.cast %o : tensor<32x1x128xf32> to tensor<32x1x128xf16>
  kernel.yield %out : tensor<32x1x128xf16>
}
// A100: split = 27
// H100: split = 33
// FEW: split = 4

// BAD: error: attach-target: unknown target 'h300'
