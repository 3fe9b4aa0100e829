// RUN: molten-opt %s --split-input-file -p molten-decompose | filecheck %s
// RUN: molten-opt %s --split-input-file -p 'molten-decompose{keep=attention}' | filecheck %s --check-prefix=KEEP-ATTN
// RUN: molten-opt %s --split-input-file -p 'molten-decompose{keep=softmax}' | filecheck %s --check-prefix=KEEP-SOFTMAX
// RUN: molten-opt %s --split-input-file -p 'molten-decompose{keep=rms_norm,layer_norm,softmax,rope,attention}' | filecheck %s --check-prefix=KEEP-ALL

// Each composite decomposes into exactly the primitives listed in
// passes/decompose.py; f16/bf16 composites compute in f32 between casts.
// Intermediates are named after their op, the composite's result keeps its
// name.

// An f32 rms_norm: exactly square, reduce_mean, constant eps, add, rsqrt, mul,
// mul, and no cast.
func.func @rms_norm_f32(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @rms_norm_f32(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %square = molten.square %x : tensor<4x8xf32>
// CHECK-NEXT:    %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %cst = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:    %add = molten.add %reduce_mean, %cst : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
// CHECK-NEXT:    %mul = molten.mul %x, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y = molten.mul %mul, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// KEEP-ATTN-LABEL: func.func @rms_norm_f32(
// KEEP-ATTN-NEXT:    molten.square
// KEEP-ATTN-NOT:     molten.rms_norm

// KEEP-ALL-LABEL: func.func @rms_norm_f32(
// KEEP-ALL-NEXT:    %y = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// KEEP-ALL-NEXT:    func.return %y

// -----

// A bf16 rms_norm over the two trailing axes: upcast x and w, reduce over
// axes [1, 2], one cast down at the end.
func.func @rms_norm_bf16(%x: tensor<2x4x8xbf16>, %w: tensor<4x8xbf16>) -> tensor<2x4x8xbf16> {
  %y = molten.rms_norm %x, %w eps = 1.000000e-05 : (tensor<2x4x8xbf16>, tensor<4x8xbf16>) -> tensor<2x4x8xbf16>
  func.return %y : tensor<2x4x8xbf16>
}

// CHECK-LABEL: func.func @rms_norm_bf16(%x: tensor<2x4x8xbf16>, %w: tensor<4x8xbf16>) -> tensor<2x4x8xbf16> {
// CHECK-NEXT:    %[[X:.+]] = molten.cast %x : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK-NEXT:    %[[W:.+]] = molten.cast %w : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-NEXT:    %[[SQ:.+]] = molten.square %[[X]] : tensor<2x4x8xf32>
// CHECK-NEXT:    %[[MEAN:.+]] = molten.reduce_mean %[[SQ]] axes = [1, 2] keepdim : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[EPS:.+]] = molten.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[ADD:.+]] = molten.add %[[MEAN]], %[[EPS]] : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[INV:.+]] = molten.rsqrt %[[ADD]] : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[NORM:.+]] = molten.mul %[[X]], %[[INV]] : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %[[OUT:.+]] = molten.mul %[[NORM]], %[[W]] : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %y = molten.cast %[[OUT]] : tensor<2x4x8xf32> to tensor<2x4x8xbf16>
// CHECK-NEXT:    func.return %y : tensor<2x4x8xbf16>
// CHECK-NEXT:  }

// -----

// layer_norm, with the biased variance: reduce_mean, sub, square,
// reduce_mean, add eps, rsqrt, mul, mul weight, add bias.
func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @layer_norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %[[MEAN:.+]] = molten.reduce_mean %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[CENTERED:.+]] = molten.sub %x, %[[MEAN]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SQ:.+]] = molten.square %[[CENTERED]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[VAR:.+]] = molten.reduce_mean %[[SQ]] axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[EPS:.+]] = molten.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[ADD:.+]] = molten.add %[[VAR]], %[[EPS]] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %[[INV:.+]] = molten.rsqrt %[[ADD]] : tensor<4x1xf32>
// CHECK-NEXT:    %[[NORM:.+]] = molten.mul %[[CENTERED]], %[[INV]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[SCALED:.+]] = molten.mul %[[NORM]], %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y = molten.add %[[SCALED]], %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// An f16 layer_norm: x, weight and bias are all upcast.
func.func @layer_norm_f16(%x: tensor<2x6xf16>, %w: tensor<6xf16>, %b: tensor<6xf16>) -> tensor<2x6xf16> {
  %y = molten.layer_norm %x, %w, %b eps = 1.000000e-03 : (tensor<2x6xf16>, tensor<6xf16>, tensor<6xf16>) -> tensor<2x6xf16>
  func.return %y : tensor<2x6xf16>
}

// CHECK-LABEL: func.func @layer_norm_f16(%x: tensor<2x6xf16>, %w: tensor<6xf16>, %b: tensor<6xf16>) -> tensor<2x6xf16> {
// CHECK-NEXT:    %[[X:.+]] = molten.cast %x : tensor<2x6xf16> to tensor<2x6xf32>
// CHECK-NEXT:    %[[W:.+]] = molten.cast %w : tensor<6xf16> to tensor<6xf32>
// CHECK-NEXT:    %[[B:.+]] = molten.cast %b : tensor<6xf16> to tensor<6xf32>
// CHECK-NEXT:    %[[MEAN:.+]] = molten.reduce_mean %[[X]] axes = [1] keepdim : tensor<2x6xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %[[CENTERED:.+]] = molten.sub %[[X]], %[[MEAN]]
// CHECK-NEXT:    %[[SQ:.+]] = molten.square %[[CENTERED]]
// CHECK-NEXT:    %[[VAR:.+]] = molten.reduce_mean %[[SQ]] axes = [1] keepdim
// CHECK-NEXT:    %[[EPS:.+]] = molten.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT:    %[[ADD:.+]] = molten.add %[[VAR]], %[[EPS]]
// CHECK-NEXT:    %[[INV:.+]] = molten.rsqrt %[[ADD]]
// CHECK-NEXT:    %[[NORM:.+]] = molten.mul %[[CENTERED]], %[[INV]]
// CHECK-NEXT:    %[[SCALED:.+]] = molten.mul %[[NORM]], %[[W]]
// CHECK-NEXT:    %[[OUT:.+]] = molten.add %[[SCALED]], %[[B]] : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
// CHECK-NEXT:    %y = molten.cast %[[OUT]] : tensor<2x6xf32> to tensor<2x6xf16>
// CHECK-NEXT:    func.return %y : tensor<2x6xf16>

// -----

// Max-subtracted softmax along the given axis (here the first one).
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = molten.softmax %x axis = 0 : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %[[MAX:.+]] = molten.reduce_max %x axes = [0] keepdim : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %[[SHIFTED:.+]] = molten.sub %x, %[[MAX]] : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[EXP:.+]] = molten.exp %[[SHIFTED]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[SUM:.+]] = molten.reduce_sum %[[EXP]] axes = [0] keepdim : tensor<4x8xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    %y = molten.div %[[EXP]], %[[SUM]] : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// KEEP-SOFTMAX-LABEL: func.func @softmax(
// KEEP-SOFTMAX-NEXT:    %y = molten.softmax %x axis = 0 : tensor<4x8xf32>
// KEEP-SOFTMAX-NEXT:    func.return %y

// -----

// A bf16 softmax along the last axis, in f32 between casts.
func.func @softmax_bf16(%x: tensor<2x3x16xbf16>) -> tensor<2x3x16xbf16> {
  %y = molten.softmax %x axis = 2 : tensor<2x3x16xbf16>
  func.return %y : tensor<2x3x16xbf16>
}

// CHECK-LABEL: func.func @softmax_bf16(%x: tensor<2x3x16xbf16>) -> tensor<2x3x16xbf16> {
// CHECK-NEXT:    %[[X:.+]] = molten.cast %x : tensor<2x3x16xbf16> to tensor<2x3x16xf32>
// CHECK-NEXT:    %[[MAX:.+]] = molten.reduce_max %[[X]] axes = [2] keepdim : tensor<2x3x16xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.+]] = molten.sub %[[X]], %[[MAX]] : (tensor<2x3x16xf32>, tensor<2x3x1xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:    %[[EXP:.+]] = molten.exp %[[SHIFTED]] : tensor<2x3x16xf32>
// CHECK-NEXT:    %[[SUM:.+]] = molten.reduce_sum %[[EXP]] axes = [2] keepdim : tensor<2x3x16xf32> -> tensor<2x3x1xf32>
// CHECK-NEXT:    %[[DIV:.+]] = molten.div %[[EXP]], %[[SUM]] : (tensor<2x3x16xf32>, tensor<2x3x1xf32>) -> tensor<2x3x16xf32>
// CHECK-NEXT:    %y = molten.cast %[[DIV]] : tensor<2x3x16xf32> to tensor<2x3x16xbf16>
// CHECK-NEXT:    func.return %y : tensor<2x3x16xbf16>

// -----

// x * cos + rotate_half(x) * sin, cos and sin broadcast by the muls.
func.func @rope(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
  %y = molten.rope %x, %cos, %sin : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  func.return %y : tensor<2x16x64xf32>
}

// CHECK-LABEL: func.func @rope(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>) -> tensor<2x16x64xf32> {
// CHECK-NEXT:    %[[ROT:.+]] = molten.rotate_half %x : tensor<2x16x64xf32>
// CHECK-NEXT:    %[[XCOS:.+]] = molten.mul %x, %cos : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:    %[[RSIN:.+]] = molten.mul %[[ROT]], %sin : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:    %y = molten.add %[[XCOS]], %[[RSIN]] : (tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT:    func.return %y : tensor<2x16x64xf32>
// CHECK-NEXT:  }

// -----

// An f16 rope: x, cos and sin are upcast.
func.func @rope_f16(%x: tensor<4x8xf16>, %cos: tensor<8xf16>, %sin: tensor<8xf16>) -> tensor<4x8xf16> {
  %y = molten.rope %x, %cos, %sin : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}

// CHECK-LABEL: func.func @rope_f16(%x: tensor<4x8xf16>, %cos: tensor<8xf16>, %sin: tensor<8xf16>) -> tensor<4x8xf16> {
// CHECK-NEXT:    %[[X:.+]] = molten.cast %x : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK-NEXT:    %[[COS:.+]] = molten.cast %cos : tensor<8xf16> to tensor<8xf32>
// CHECK-NEXT:    %[[SIN:.+]] = molten.cast %sin : tensor<8xf16> to tensor<8xf32>
// CHECK-NEXT:    %[[ROT:.+]] = molten.rotate_half %[[X]] : tensor<4x8xf32>
// CHECK-NEXT:    %[[XCOS:.+]] = molten.mul %[[X]], %[[COS]]
// CHECK-NEXT:    %[[RSIN:.+]] = molten.mul %[[ROT]], %[[SIN]]
// CHECK-NEXT:    %[[SUM:.+]] = molten.add %[[XCOS]], %[[RSIN]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %y = molten.cast %[[SUM]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT:    func.return %y : tensor<4x8xf16>

// -----

// Non-causal attention with Sq != Sk and Dv != D: q @ k^T (transpose_b),
// scale, softmax over the key axis, @ v.
func.func @attention(%q: tensor<2x16x64xf32>, %k: tensor<2x32x64xf32>, %v: tensor<2x32x48xf32>) -> tensor<2x16x48xf32> {
  %o = molten.attention %q, %k, %v scale = 1.250000e-01 : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x48xf32>) -> tensor<2x16x48xf32>
  func.return %o : tensor<2x16x48xf32>
}

// CHECK-LABEL: func.func @attention(%q: tensor<2x16x64xf32>, %k: tensor<2x32x64xf32>, %v: tensor<2x32x48xf32>) -> tensor<2x16x48xf32> {
// CHECK-NEXT:    %[[QK:.+]] = molten.matmul %q, %k transpose_b : (tensor<2x16x64xf32>, tensor<2x32x64xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT:    %[[SCALE:.+]] = molten.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[SCORES:.+]] = molten.mul %[[QK]], %[[SCALE]] : (tensor<2x16x32xf32>, tensor<f32>) -> tensor<2x16x32xf32>
// CHECK-NEXT:    %[[MAX:.+]] = molten.reduce_max %[[SCORES]] axes = [2] keepdim : tensor<2x16x32xf32> -> tensor<2x16x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.+]] = molten.sub %[[SCORES]], %[[MAX]] : (tensor<2x16x32xf32>, tensor<2x16x1xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT:    %[[EXP:.+]] = molten.exp %[[SHIFTED]] : tensor<2x16x32xf32>
// CHECK-NEXT:    %[[SUM:.+]] = molten.reduce_sum %[[EXP]] axes = [2] keepdim : tensor<2x16x32xf32> -> tensor<2x16x1xf32>
// CHECK-NEXT:    %[[PROBS:.+]] = molten.div %[[EXP]], %[[SUM]] : (tensor<2x16x32xf32>, tensor<2x16x1xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT:    %o = molten.matmul %[[PROBS]], %v : (tensor<2x16x32xf32>, tensor<2x32x48xf32>) -> tensor<2x16x48xf32>
// CHECK-NEXT:    func.return %o : tensor<2x16x48xf32>
// CHECK-NEXT:  }

// KEEP-ATTN-LABEL: func.func @attention(
// KEEP-ATTN-NEXT:    %o = molten.attention %q, %k, %v scale = 1.250000e-01 : (tensor<2x16x64xf32>, tensor<2x32x64xf32>, tensor<2x32x48xf32>) -> tensor<2x16x48xf32>
// KEEP-ATTN-NEXT:    func.return %o

// With keep=softmax, attention still decomposes, into a molten.softmax.
// KEEP-SOFTMAX-LABEL: func.func @attention(
// KEEP-SOFTMAX-NEXT:    %[[QK:.+]] = molten.matmul %q, %k transpose_b
// KEEP-SOFTMAX-NEXT:    %[[SCALE:.+]] = molten.constant dense<1.250000e-01> : tensor<f32>
// KEEP-SOFTMAX-NEXT:    %[[SCORES:.+]] = molten.mul %[[QK]], %[[SCALE]]
// KEEP-SOFTMAX-NEXT:    %[[PROBS:.+]] = molten.softmax %[[SCORES]] axis = 2 : tensor<2x16x32xf32>
// KEEP-SOFTMAX-NEXT:    %o = molten.matmul %[[PROBS]], %v
// KEEP-SOFTMAX-NEXT:    func.return %o

// KEEP-ALL-LABEL: func.func @attention(
// KEEP-ALL-NEXT:    %o = molten.attention

// -----

// Causal f16 self-attention: each of q, k, v is cast (three casts of the same
// value, for cse to merge), the [Sq, Sk] mask is added after scaling.
func.func @attention_causal(%q: tensor<8x64xf16>) -> tensor<8x64xf16> {
  %o = molten.attention %q, %q, %q scale = 1.250000e-01 causal : (tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>) -> tensor<8x64xf16>
  func.return %o : tensor<8x64xf16>
}

// CHECK-LABEL: func.func @attention_causal(%q: tensor<8x64xf16>) -> tensor<8x64xf16> {
// CHECK-NEXT:    %[[Q:.+]] = molten.cast %q : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NEXT:    %[[K:.+]] = molten.cast %q : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NEXT:    %[[V:.+]] = molten.cast %q : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NEXT:    %[[QK:.+]] = molten.matmul %[[Q]], %[[K]] transpose_b : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[SCALE:.+]] = molten.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[SCALED:.+]] = molten.mul %[[QK]], %[[SCALE]] : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[MASK:.+]] = molten.causal_mask : tensor<8x8xf32>
// CHECK-NEXT:    %[[SCORES:.+]] = molten.add %[[SCALED]], %[[MASK]] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[MAX:.+]] = molten.reduce_max %[[SCORES]] axes = [1] keepdim : tensor<8x8xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %[[SHIFTED:.+]] = molten.sub %[[SCORES]], %[[MAX]] : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[EXP:.+]] = molten.exp %[[SHIFTED]] : tensor<8x8xf32>
// CHECK-NEXT:    %[[SUM:.+]] = molten.reduce_sum %[[EXP]] axes = [1] keepdim : tensor<8x8xf32> -> tensor<8x1xf32>
// CHECK-NEXT:    %[[PROBS:.+]] = molten.div %[[EXP]], %[[SUM]] : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
// CHECK-NEXT:    %[[OUT:.+]] = molten.matmul %[[PROBS]], %[[V]] : (tensor<8x8xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT:    %o = molten.cast %[[OUT]] : tensor<8x64xf32> to tensor<8x64xf16>
// CHECK-NEXT:    func.return %o : tensor<8x64xf16>
// CHECK-NEXT:  }

// KEEP-ATTN-LABEL: func.func @attention_causal(
// KEEP-ATTN-NEXT:    %o = molten.attention %q, %q, %q scale = 1.250000e-01 causal : (tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>) -> tensor<8x64xf16>
// KEEP-ATTN-NEXT:    func.return %o

// -----

// Causal attention with Sq != Sk and broadcast batch axes: the mask is
// [Sq, Sk] and broadcast by the add.
func.func @attention_causal_batched(%q: tensor<2x1x4x16xf32>, %k: tensor<3x6x16xf32>, %v: tensor<3x6x8xf32>) -> tensor<2x3x4x8xf32> {
  %o = molten.attention %q, %k, %v scale = 2.500000e-01 causal : (tensor<2x1x4x16xf32>, tensor<3x6x16xf32>, tensor<3x6x8xf32>) -> tensor<2x3x4x8xf32>
  func.return %o : tensor<2x3x4x8xf32>
}

// CHECK-LABEL: func.func @attention_causal_batched(%q: tensor<2x1x4x16xf32>, %k: tensor<3x6x16xf32>, %v: tensor<3x6x8xf32>) -> tensor<2x3x4x8xf32> {
// CHECK-NEXT:    %[[QK:.+]] = molten.matmul %q, %k transpose_b : (tensor<2x1x4x16xf32>, tensor<3x6x16xf32>) -> tensor<2x3x4x6xf32>
// CHECK-NEXT:    %[[SCALE:.+]] = molten.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %[[SCALED:.+]] = molten.mul %[[QK]], %[[SCALE]]
// CHECK-NEXT:    %[[MASK:.+]] = molten.causal_mask : tensor<4x6xf32>
// CHECK-NEXT:    %[[SCORES:.+]] = molten.add %[[SCALED]], %[[MASK]] : (tensor<2x3x4x6xf32>, tensor<4x6xf32>) -> tensor<2x3x4x6xf32>
// CHECK-NEXT:    %[[MAX:.+]] = molten.reduce_max %[[SCORES]] axes = [3] keepdim
// CHECK-NEXT:    %[[SHIFTED:.+]] = molten.sub %[[SCORES]], %[[MAX]]
// CHECK-NEXT:    %[[EXP:.+]] = molten.exp %[[SHIFTED]]
// CHECK-NEXT:    %[[SUM:.+]] = molten.reduce_sum %[[EXP]] axes = [3] keepdim
// CHECK-NEXT:    %[[PROBS:.+]] = molten.div %[[EXP]], %[[SUM]]
// CHECK-NEXT:    %o = molten.matmul %[[PROBS]], %v : (tensor<2x3x4x6xf32>, tensor<3x6x8xf32>) -> tensor<2x3x4x8xf32>
// CHECK-NEXT:    func.return %o : tensor<2x3x4x8xf32>

// -----

// Primitives are left alone.
func.func @primitives(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.exp %x : tensor<4x8xf32>
  %1 = molten.rotate_half %0 : tensor<4x8xf32>
  func.return %1 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @primitives(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %0 = molten.exp %x : tensor<4x8xf32>
// CHECK-NEXT:    %1 = molten.rotate_half %0 : tensor<4x8xf32>
// CHECK-NEXT:    func.return %1 : tensor<4x8xf32>
