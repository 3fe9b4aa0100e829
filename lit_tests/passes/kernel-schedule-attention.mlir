// RUN: sed '/^\/\/ -----$/,$d' %s | molten-opt -p kernel-schedule | filecheck %s
// RUN: sed '1,/^\/\/ -----$/d' %s | not molten-opt -p kernel-schedule 2>&1 | filecheck %s --check-prefix=ERROR
// RUN: sed '/^\/\/ -----$/,$d' %s | molten-opt -p 'kernel-schedule{arch="sm_90a"}' | filecheck %s --check-prefix=WGMMA

// An attention kernel (from fuse-attention) gets four warps of 16 query rows
// against tiles of 64 keys, the whole head dimension, two stages.

kernel.func @attention_kernel(%q: tensor<2x100x64xf16>, %k: tensor<2x130x64xf16>, %v: tensor<2x130x64xf16>) -> (tensor<2x100x64xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1> {
  %cst = molten.constant dense<1.250000e-01> : tensor<f32>
  %q_f32 = molten.cast %q : tensor<2x100x64xf16> to tensor<2x100x64xf32>
  %k_f32 = molten.cast %k : tensor<2x130x64xf16> to tensor<2x130x64xf32>
  %v_f32 = molten.cast %v : tensor<2x130x64xf16> to tensor<2x130x64xf32>
  %s = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x100x64xf32>, tensor<2x130x64xf32>) -> tensor<2x100x130xf32>
  %t = molten.mul %s, %cst : (tensor<2x100x130xf32>, tensor<f32>) -> tensor<2x100x130xf32>
  %m = molten.reduce_max %t axes = [2] keepdim : tensor<2x100x130xf32> -> tensor<2x100x1xf32>
  %d = molten.sub %t, %m : (tensor<2x100x130xf32>, tensor<2x100x1xf32>) -> tensor<2x100x130xf32>
  %e = molten.exp %d : tensor<2x100x130xf32>
  %l = molten.reduce_sum %e axes = [2] keepdim : tensor<2x100x130xf32> -> tensor<2x100x1xf32>
  %p = molten.div %e, %l : (tensor<2x100x130xf32>, tensor<2x100x1xf32>) -> tensor<2x100x130xf32>
  %o = molten.matmul %p, %v_f32 : (tensor<2x100x130xf32>, tensor<2x130x64xf32>) -> tensor<2x100x64xf32>
  %out = molten.cast %o : tensor<2x100x64xf32> to tensor<2x100x64xf16>
  kernel.yield %out : tensor<2x100x64xf16>
}

// CHECK: kernel.func @attention_kernel({{.*}}) -> (tensor<2x100x64xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 64], warp = [16, 64], stages = 2> {

// For sm_90a (head dims multiples of 64): on wgmma, a warpgroup of 64
// query rows (128 threads; two above head dimension 64) against 64 keys at
// head dimension 64, two stages.

// WGMMA: kernel.func @attention_kernel({{.*}}) -> (tensor<2x100x64xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 64], warp = [64, 64], stages = 2, mma_warps = 4> {

// Over a named T, a schedule per size class, each the heuristic's at the
// class's bound: up to 32 tokens a block's rows pack the two query heads
// that share a KV head; the rest one head each. (Equal schedules would
// merge: a causal attention, never packed, gets one schedule.)

kernel.func @attention_over_t(%k: tensor<1x?x16xbf16, ["T"]>, %v: tensor<1x?x16xbf16, ["T"]>, %q: tensor<2x?x16xbf16, ["T"]>) -> (tensor<2x?x16xbf16, ["T"]>) attention matched #kernel.attention_match<query = 2, key = 0, value = 1, group = 2> {
  %cst = molten.constant dense<2.500000e-01> : tensor<f32>
  %0 = molten.reshape %k : tensor<1x?x16xbf16, ["T"]> -> tensor<1x1x?x16xbf16, ["T"]>
  %1 = molten.broadcast_to %0 : tensor<1x1x?x16xbf16, ["T"]> -> tensor<1x2x?x16xbf16, ["T"]>
  %2 = molten.reshape %1 : tensor<1x2x?x16xbf16, ["T"]> -> tensor<2x?x16xbf16, ["T"]>
  %3 = molten.reshape %v : tensor<1x?x16xbf16, ["T"]> -> tensor<1x1x?x16xbf16, ["T"]>
  %4 = molten.broadcast_to %3 : tensor<1x1x?x16xbf16, ["T"]> -> tensor<1x2x?x16xbf16, ["T"]>
  %5 = molten.reshape %4 : tensor<1x2x?x16xbf16, ["T"]> -> tensor<2x?x16xbf16, ["T"]>
  %q_f32 = molten.cast %q : tensor<2x?x16xbf16, ["T"]> to tensor<2x?x16xf32, ["T"]>
  %k_f32 = molten.cast %2 : tensor<2x?x16xbf16, ["T"]> to tensor<2x?x16xf32, ["T"]>
  %v_f32 = molten.cast %5 : tensor<2x?x16xbf16, ["T"]> to tensor<2x?x16xf32, ["T"]>
  %s = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x?x16xf32, ["T"]>, tensor<2x?x16xf32, ["T"]>) -> tensor<2x?x?xf32, ["T", "T"]>
  %t = molten.mul %s, %cst : (tensor<2x?x?xf32, ["T", "T"]>, tensor<f32>) -> tensor<2x?x?xf32, ["T", "T"]>
  %m = molten.reduce_max %t axes = [2] keepdim : tensor<2x?x?xf32, ["T", "T"]> -> tensor<2x?x1xf32, ["T"]>
  %d = molten.sub %t, %m : (tensor<2x?x?xf32, ["T", "T"]>, tensor<2x?x1xf32, ["T"]>) -> tensor<2x?x?xf32, ["T", "T"]>
  %e = molten.exp %d : tensor<2x?x?xf32, ["T", "T"]>
  %l = molten.reduce_sum %e axes = [2] keepdim : tensor<2x?x?xf32, ["T", "T"]> -> tensor<2x?x1xf32, ["T"]>
  %p = molten.div %e, %l : (tensor<2x?x?xf32, ["T", "T"]>, tensor<2x?x1xf32, ["T"]>) -> tensor<2x?x?xf32, ["T", "T"]>
  %o = molten.matmul %p, %v_f32 : (tensor<2x?x?xf32, ["T", "T"]>, tensor<2x?x16xf32, ["T"]>) -> tensor<2x?x16xf32, ["T"]>
  %out = molten.cast %o : tensor<2x?x16xf32, ["T"]> to tensor<2x?x16xbf16, ["T"]>
  kernel.yield %out : tensor<2x?x16xbf16, ["T"]>
}

// CHECK: kernel.func @attention_over_t({{.*}}) -> (tensor<2x?x16xbf16, ["T"]>) attention matched #kernel.attention_match<query = 2, key = 0, value = 1, group = 2> variants [#kernel.variant<T <= 32, #kernel.schedule<attention, block = 128, tile = [64, 64, 16], warp = [16, 16], stages = 2, pack = 2>>, #kernel.variant<T, #kernel.schedule<attention, block = 128, tile = [64, 64, 16], warp = [16, 16], stages = 2>>] {
// WGMMA: kernel.func @attention_over_t({{.*}}) attention matched {{.*}} variants [#kernel.variant<T <= 32, {{.*}} pack = 2>>, #kernel.variant<T, #kernel.schedule<{{.*}} stages = 2>>] {

// -----

// An attention kernel without what fuse-attention matched in it (here the
// composite itself, on f32) is refused by the verifier at the kernel: a
// located error, no module, no internal error.

kernel.func @composite(%q: tensor<16x64xf32>) -> (tensor<16x64xf32>) attention {
  %o = molten.attention %q, %q, %q scale = 1.250000e-01 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  kernel.yield %o : tensor<16x64xf32>
}

// ERROR:     {{^}}stdin:6:1: error: kernel.func @composite: an attention kernel needs its #kernel.attention_match<query = ..., key = ..., value = ..., group = ...> (fuse-attention records it){{$}}
// ERROR-NOT: {{Traceback|internal error}}
