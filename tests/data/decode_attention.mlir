// A decode's attention: 32 query heads on 8 KV heads, one query, 8192 keys
// (tests/test_schedule_target.py).
kernel.func @decode(%k: tensor<8x8192x128xf16>, %v: tensor<8x8192x128xf16>, %q: tensor<32x1x128xf16>) -> (tensor<32x1x128xf16>) attention {
  %cst = molten.constant dense<8.838835e-02> : tensor<f32>
  %0 = molten.reshape %k : tensor<8x8192x128xf16> -> tensor<8x1x8192x128xf16>
  %1 = molten.broadcast_to %0 : tensor<8x1x8192x128xf16> -> tensor<8x4x8192x128xf16>
  %2 = molten.reshape %1 : tensor<8x4x8192x128xf16> -> tensor<32x8192x128xf16>
  %3 = molten.reshape %v : tensor<8x8192x128xf16> -> tensor<8x1x8192x128xf16>
  %4 = molten.broadcast_to %3 : tensor<8x1x8192x128xf16> -> tensor<8x4x8192x128xf16>
  %5 = molten.reshape %4 : tensor<8x4x8192x128xf16> -> tensor<32x8192x128xf16>
  %q32 = molten.cast %q : tensor<32x1x128xf16> to tensor<32x1x128xf32>
  %k32 = molten.cast %2 : tensor<32x8192x128xf16> to tensor<32x8192x128xf32>
  %v32 = molten.cast %5 : tensor<32x8192x128xf16> to tensor<32x8192x128xf32>
  %s = molten.matmul %q32, %k32 transpose_b : (tensor<32x1x128xf32>, tensor<32x8192x128xf32>) -> tensor<32x1x8192xf32>
  %t = molten.mul %s, %cst : (tensor<32x1x8192xf32>, tensor<f32>) -> tensor<32x1x8192xf32>
  %m = molten.reduce_max %t axes = [2] keepdim : tensor<32x1x8192xf32> -> tensor<32x1x1xf32>
  %d = molten.sub %t, %m : (tensor<32x1x8192xf32>, tensor<32x1x1xf32>) -> tensor<32x1x8192xf32>
  %e = molten.exp %d : tensor<32x1x8192xf32>
  %l = molten.reduce_sum %e axes = [2] keepdim : tensor<32x1x8192xf32> -> tensor<32x1x1xf32>
  %p = molten.div %e, %l : (tensor<32x1x8192xf32>, tensor<32x1x1xf32>) -> tensor<32x1x8192xf32>
  %o = molten.matmul %p, %v32 : (tensor<32x1x8192xf32>, tensor<32x8192x128xf32>) -> tensor<32x1x128xf32>
  %out = molten.cast %o : tensor<32x1x128xf32> to tensor<32x1x128xf16>
  kernel.yield %out : tensor<32x1x128xf16>
}
