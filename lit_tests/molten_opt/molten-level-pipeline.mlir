// RUN: molten-opt %s --split-input-file -p MOLTEN_LEVEL_PIPELINE | filecheck %s
// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,dce | filecheck %s
// RUN: molten-opt %S/../../examples/fused_rmsnorm.mlir -p MOLTEN_LEVEL_PIPELINE | filecheck %s --check-prefix=SEED

// The molten-level part of the default pipeline (MOLTEN_PIPELINE in
// molten/pipeline.py; the second run spells it out), end to end on the seed
// spec (a copy of examples/fused_rmsnorm.mlir; the SEED run reads the example
// itself). The kernel-level rest is tested in default-pipeline.mlir.

// SEED:      func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> (tensor<2048x5120xf32> {molten.name = "norm"}) {
// SEED-NEXT:   %square = molten.square %x : tensor<2048x5120xf32>
// SEED-NEXT:   %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<2048x5120xf32> -> tensor<2048x1xf32>
// SEED-NEXT:   %cst = molten.constant dense<1.000000e-06> : tensor<f32>
// SEED-NEXT:   %add = molten.add %reduce_mean, %cst : (tensor<2048x1xf32>, tensor<f32>) -> tensor<2048x1xf32>
// SEED-NEXT:   %rsqrt = molten.rsqrt %add : tensor<2048x1xf32>
// SEED-NEXT:   %mul = molten.mul %x, %rsqrt : (tensor<2048x5120xf32>, tensor<2048x1xf32>) -> tensor<2048x5120xf32>
// SEED-NEXT:   %norm = molten.mul %mul, %w : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
// SEED-NEXT:   func.return %norm : tensor<2048x5120xf32>
// SEED-NEXT: }

func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> tensor<2048x5120xf32> {
  %norm = molten.rms_norm %x, %w eps = 1.000000e-06
      : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
  func.return %norm : tensor<2048x5120xf32>
}

// CHECK:       builtin.module {
// CHECK-NEXT:    func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> tensor<2048x5120xf32> {
// CHECK-NEXT:      %square = molten.square %x : tensor<2048x5120xf32>
// CHECK-NEXT:      %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<2048x5120xf32> -> tensor<2048x1xf32>
// CHECK-NEXT:      %cst = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %add = molten.add %reduce_mean, %cst : (tensor<2048x1xf32>, tensor<f32>) -> tensor<2048x1xf32>
// CHECK-NEXT:      %rsqrt = molten.rsqrt %add : tensor<2048x1xf32>
// CHECK-NEXT:      %mul = molten.mul %x, %rsqrt : (tensor<2048x5120xf32>, tensor<2048x1xf32>) -> tensor<2048x5120xf32>
// CHECK-NEXT:      %norm = molten.mul %mul, %w : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
// CHECK-NEXT:      func.return %norm : tensor<2048x5120xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// -----

// The same spec in f16, with a weight that is one everywhere and a dead
// branch: canonicalize removes the `* 1` (the weight's upcast becomes a splat
// broadcast, then an identity), cse and dce leave one op per value.

func.func @fused_rmsnorm_f16(%x: tensor<16x64xf16>) -> tensor<16x64xf16> {
  %w = molten.constant dense<1.0> : tensor<64xf16>
  %norm = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<16x64xf16>, tensor<64xf16>) -> tensor<16x64xf16>
  %dead = molten.rms_norm %x, %w eps = 1.000000e-05 : (tensor<16x64xf16>, tensor<64xf16>) -> tensor<16x64xf16>
  func.return %norm : tensor<16x64xf16>
}

// CHECK-LABEL: func.func @fused_rmsnorm_f16(%x: tensor<16x64xf16>) -> tensor<16x64xf16> {
// CHECK-NEXT:      %[[X:.+]] = molten.cast %x : tensor<16x64xf16> to tensor<16x64xf32>
// CHECK-NEXT:      %[[SQ:.+]] = molten.square %[[X]] : tensor<16x64xf32>
// CHECK-NEXT:      %[[MEAN:.+]] = molten.reduce_mean %[[SQ]] axes = [1] keepdim : tensor<16x64xf32> -> tensor<16x1xf32>
// CHECK-NEXT:      %[[EPS:.+]] = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %[[ADD:.+]] = molten.add %[[MEAN]], %[[EPS]]
// CHECK-NEXT:      %[[INV:.+]] = molten.rsqrt %[[ADD]] : tensor<16x1xf32>
// CHECK-NEXT:      %[[MUL:.+]] = molten.mul %[[X]], %[[INV]] : (tensor<16x64xf32>, tensor<16x1xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:      %norm = molten.cast %[[MUL]] : tensor<16x64xf32> to tensor<16x64xf16>
// CHECK-NEXT:      func.return %norm : tensor<16x64xf16>
// CHECK-NEXT:    }

// -----

// The same spec in bf16, with a weight that is one everywhere and a dead
// branch: canonicalize removes the `* 1` (the weight's upcast becomes a splat
// broadcast, then an identity), cse and dce leave one op per value.

func.func @fused_rmsnorm_bf16(%x: tensor<16x64xbf16>) -> tensor<16x64xbf16> {
  %w = molten.constant dense<1.0> : tensor<64xbf16>
  %norm = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<16x64xbf16>, tensor<64xbf16>) -> tensor<16x64xbf16>
  %dead = molten.rms_norm %x, %w eps = 1.000000e-05 : (tensor<16x64xbf16>, tensor<64xbf16>) -> tensor<16x64xbf16>
  func.return %norm : tensor<16x64xbf16>
}

// CHECK-LABEL: func.func @fused_rmsnorm_bf16(%x: tensor<16x64xbf16>) -> tensor<16x64xbf16> {
// CHECK-NEXT:      %[[X:.+]] = molten.cast %x : tensor<16x64xbf16> to tensor<16x64xf32>
// CHECK-NEXT:      %[[SQ:.+]] = molten.square %[[X]] : tensor<16x64xf32>
// CHECK-NEXT:      %[[MEAN:.+]] = molten.reduce_mean %[[SQ]] axes = [1] keepdim : tensor<16x64xf32> -> tensor<16x1xf32>
// CHECK-NEXT:      %[[EPS:.+]] = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %[[ADD:.+]] = molten.add %[[MEAN]], %[[EPS]]
// CHECK-NEXT:      %[[INV:.+]] = molten.rsqrt %[[ADD]] : tensor<16x1xf32>
// CHECK-NEXT:      %[[MUL:.+]] = molten.mul %[[X]], %[[INV]] : (tensor<16x64xf32>, tensor<16x1xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:      %norm = molten.cast %[[MUL]] : tensor<16x64xf32> to tensor<16x64xbf16>
// CHECK-NEXT:      func.return %norm : tensor<16x64xbf16>
// CHECK-NEXT:    }
