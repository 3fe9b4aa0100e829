// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,fuse-attention | filecheck %s

// fuse-attention: softmax(f(q @ kᵀ)) @ v, f elementwise (a scale, the causal
// mask, a bias), found in the decomposed IR, becomes one `attention`
// kernel.fused reading q, k and v as stored. Each case is a spec put through the molten-level passes and this
// one; what does not fuse says why and stays as it was (gemm, row_reduce and
// gemm kernels after the other fusion passes).

// The attention composite, causal, on f16: decomposed, it is one attention
// kernel reading q, k and v as stored (the casts up to f32 go inside).
func.func @composite(%q: tensor<2x100x64xf16>, %k: tensor<2x130x64xf16>, %v: tensor<2x130x64xf16>) -> tensor<2x100x64xf16> {
  %o = molten.attention %q, %k, %v scale = 1.250000e-01 causal : (tensor<2x100x64xf16>, tensor<2x130x64xf16>, tensor<2x130x64xf16>) -> tensor<2x100x64xf16>
  func.return %o : tensor<2x100x64xf16>
}

// CHECK-LABEL: func.func @composite(
// CHECK-NEXT:    %o = kernel.fused attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1, causal>(%q, %k, %v) : (tensor<2x100x64xf16>, tensor<2x130x64xf16>, tensor<2x130x64xf16>) -> tensor<2x100x64xf16> {
// CHECK:           molten.causal_mask : tensor<100x130xf32>
// CHECK:           molten.cast %q_1 : tensor<2x100x64xf16> to tensor<2x100x64xf32>
// CHECK:           molten.matmul %q_f32, %k_f32 transpose_b
// CHECK:           molten.reduce_max
// CHECK:           molten.matmul %div, %v_f32
// CHECK:           kernel.yield %o_1 : tensor<2x100x64xf16>
// CHECK-NEXT:    }
// CHECK:         func.return %o : tensor<2x100x64xf16>

// -----

// The heads put back side by side for the output projection ([H, T, D] ->
// [T, H, D] -> [T, H * D]): the transpose and the reshape join the kernel,
// which stores its result where they send it.
func.func @merged_heads(%q: tensor<2x100x64xf16>, %k: tensor<2x100x64xf16>, %v: tensor<2x100x64xf16>) -> tensor<100x128xf16> {
  %o = molten.attention %q, %k, %v scale = 1.250000e-01 causal : (tensor<2x100x64xf16>, tensor<2x100x64xf16>, tensor<2x100x64xf16>) -> tensor<2x100x64xf16>
  %t = molten.transpose %o permutation = [1, 0, 2] : tensor<2x100x64xf16> -> tensor<100x2x64xf16>
  %merged = molten.reshape %t : tensor<100x2x64xf16> -> tensor<100x128xf16>
  func.return %merged : tensor<100x128xf16>
}

// CHECK-LABEL: func.func @merged_heads(
// CHECK-NEXT:    %merged = kernel.fused attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1, causal>(%q, %k, %v) : (tensor<2x100x64xf16>, tensor<2x100x64xf16>, tensor<2x100x64xf16>) -> tensor<100x128xf16> {
// CHECK:           molten.matmul %div, %v_f32
// CHECK:           %t = molten.transpose %o permutation = [1, 0, 2]
// CHECK-NEXT:      %merged_1 = molten.reshape %t : tensor<100x2x64xf16> -> tensor<100x128xf16>
// CHECK-NEXT:      kernel.yield %merged_1 : tensor<100x128xf16>
// CHECK-NEXT:    }
// CHECK:         func.return %merged : tensor<100x128xf16>

// -----


// Written by hand on bf16, without casts: a scale divided in, a softmax
// without the max subtraction (the kernel's online softmax subtracts it).
func.func @by_hand(%q: tensor<4x32x80xbf16>, %k: tensor<4x48x80xbf16>, %v: tensor<4x48x16xbf16>) -> tensor<4x32x16xbf16> {
  %c = molten.constant dense<8.0> : tensor<bf16>
  %s = molten.matmul %q, %k transpose_b : (tensor<4x32x80xbf16>, tensor<4x48x80xbf16>) -> tensor<4x32x48xbf16>
  %t = molten.div %s, %c : (tensor<4x32x48xbf16>, tensor<bf16>) -> tensor<4x32x48xbf16>
  %e = molten.exp %t : tensor<4x32x48xbf16>
  %l = molten.reduce_sum %e axes = [2] keepdim : tensor<4x32x48xbf16> -> tensor<4x32x1xbf16>
  %p = molten.div %e, %l : (tensor<4x32x48xbf16>, tensor<4x32x1xbf16>) -> tensor<4x32x48xbf16>
  %o = molten.matmul %p, %v : (tensor<4x32x48xbf16>, tensor<4x48x16xbf16>) -> tensor<4x32x16xbf16>
  func.return %o : tensor<4x32x16xbf16>
}

// CHECK-LABEL: func.func @by_hand(
// CHECK:         %o = kernel.fused attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1>(%q, %k, %v) : (tensor<4x32x80xbf16>, tensor<4x48x80xbf16>, tensor<4x48x16xbf16>) -> tensor<4x32x16xbf16> {
// CHECK:           kernel.yield %o_1 : tensor<4x32x16xbf16>
// CHECK-NEXT:    }
// CHECK:         func.return %o : tensor<4x32x16xbf16>

// -----


// Not fused: f32 operands (the kernel multiplies on tensor cores, which take
// f16 and bf16; an f32 attention keeps its precision in the gemm kernels).
func.func @f32_operands(%q: tensor<16x64xf32>, %k: tensor<16x64xf32>, %v: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %o = molten.attention %q, %k, %v scale = 1.250000e-01 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  func.return %o : tensor<16x64xf32>
}

// CHECK-LABEL: func.func @f32_operands(
// CHECK-NOT:     kernel.fused
// CHECK:         func.return

// -----


// Not fused: a head dimension of 24, not a multiple of 16 (one mma's K).
func.func @head_dim_24(%q: tensor<16x24xf16>, %k: tensor<16x24xf16>, %v: tensor<16x24xf16>) -> tensor<16x24xf16> {
  %o = molten.attention %q, %k, %v scale = 1.250000e-01 : (tensor<16x24xf16>, tensor<16x24xf16>, tensor<16x24xf16>) -> tensor<16x24xf16>
  func.return %o : tensor<16x24xf16>
}

// CHECK-LABEL: func.func @head_dim_24(
// CHECK-NOT:     kernel.fused
// CHECK:         func.return

// -----


// An additive bias given as a tensor (ALiBi written as math, a padding
// mask): the kernel reads it per element of the scores, an input like q, k, v.
func.func @bias(%q: tensor<16x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x64xf16>, %bias: tensor<16x16xf16>) -> tensor<16x64xf16> {
  %s = molten.matmul %q, %k transpose_b : (tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<16x16xf16>
  %b = molten.add %s, %bias : (tensor<16x16xf16>, tensor<16x16xf16>) -> tensor<16x16xf16>
  %p = molten.softmax %b axis = 1 : tensor<16x16xf16>
  %o = molten.matmul %p, %v : (tensor<16x16xf16>, tensor<16x64xf16>) -> tensor<16x64xf16>
  func.return %o : tensor<16x64xf16>
}

// CHECK-LABEL: func.func @bias(
// CHECK:         %o = kernel.fused attention matched #kernel.attention_match<query = 0, key = 1, value = 3, group = 1>(%q, %k, %bias, %v) : (tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x16xf16>, tensor<16x64xf16>) -> tensor<16x64xf16> {
// CHECK:         func.return %o

// -----


// Not fused: the probabilities are a graph result too (the kernel never
// writes them out).
func.func @probabilities_returned(%q: tensor<16x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x64xf16>) -> (tensor<16x64xf16>, tensor<16x16xf16>) {
  %s = molten.matmul %q, %k transpose_b : (tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<16x16xf16>
  %e = molten.exp %s : tensor<16x16xf16>
  %l = molten.reduce_sum %e axes = [1] keepdim : tensor<16x16xf16> -> tensor<16x1xf16>
  %p = molten.div %e, %l : (tensor<16x16xf16>, tensor<16x1xf16>) -> tensor<16x16xf16>
  %o = molten.matmul %p, %v : (tensor<16x16xf16>, tensor<16x64xf16>) -> tensor<16x64xf16>
  func.return %o, %p : tensor<16x64xf16>, tensor<16x16xf16>
}

// CHECK-LABEL: func.func @probabilities_returned(
// CHECK-NOT:     kernel.fused
// CHECK:         func.return

// -----


// Keys and values shared across the batch (multi-query attention; grouped
// KV heads likewise): the kernel reads the one KV matrix for every query
// matrix.
func.func @shared_kv(%q: tensor<4x16x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x64xf16>) -> tensor<4x16x64xf16> {
  %o = molten.attention %q, %k, %v scale = 1.250000e-01 : (tensor<4x16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<4x16x64xf16>
  func.return %o : tensor<4x16x64xf16>
}

// CHECK-LABEL: func.func @shared_kv(
// CHECK:         %o = kernel.fused attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 4>(%q, %k, %v) : (tensor<4x16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<4x16x64xf16> {
// CHECK:         func.return %o
