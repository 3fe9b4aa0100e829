// RUN: molten-opt %s --split-input-file -p cse | filecheck %s --check-prefix=CSE
// RUN: molten-opt %s --split-input-file -p dce | filecheck %s --check-prefix=DCE
// RUN: molten-opt %s --split-input-file -p cse,dce | filecheck %s --check-prefix=BOTH

// molten ops are Pure: xDSL's cse merges identical ones (same operands in the
// same order, same properties, same result type) and dce erases unused ones.

// Duplicates merge; a different operand order, a different property value or
// a different constant does not.
func.func @cse(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = molten.add %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = molten.add %w, %x : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %c0 = molten.constant dense<2.0> : tensor<f32>
  %c1 = molten.constant dense<2.0> : tensor<f32>
  %c2 = molten.constant dense<3.0> : tensor<f32>
  %3 = molten.mul %0, %c0 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = molten.mul %1, %c1 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %5 = molten.mul %1, %c2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %6 = molten.gelu %3 : tensor<4x8xf32>
  %7 = molten.gelu %4 approximate = "none" : tensor<4x8xf32>
  %8 = molten.gelu %4 approximate = "tanh" : tensor<4x8xf32>
  func.return %2, %5, %6, %7, %8, %4 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CSE-LABEL: func.func @cse(
// CSE-NEXT:    %[[ADD:.+]] = molten.add %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CSE-NEXT:    %[[ADD_SWAPPED:.+]] = molten.add %w, %x : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CSE-NEXT:    %[[TWO:.+]] = molten.constant dense<2.000000e+00> : tensor<f32>
// CSE-NEXT:    %[[THREE:.+]] = molten.constant dense<3.000000e+00> : tensor<f32>
// CSE-NEXT:    %[[MUL2:.+]] = molten.mul %[[ADD]], %[[TWO]]
// CSE-NEXT:    %[[MUL3:.+]] = molten.mul %[[ADD]], %[[THREE]]
// CSE-NEXT:    %[[GELU:.+]] = molten.gelu %[[MUL2]] : tensor<4x8xf32>
// CSE-NEXT:    %[[GELU_TANH:.+]] = molten.gelu %[[MUL2]] approximate = "tanh" : tensor<4x8xf32>
// CSE-NEXT:    func.return %[[ADD_SWAPPED]], %[[MUL3]], %[[GELU]], %[[GELU]], %[[GELU_TANH]], %[[MUL2]] :

// -----

// Composites merge too, and their results are then one value.
func.func @cse_composites(%x: tensor<4x8xf16>, %w: tensor<8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>) {
  %0 = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %1 = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %2 = molten.rms_norm %x, %w eps = 1.000000e-05 : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  func.return %0, %1, %2 : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}

// CSE-LABEL: func.func @cse_composites(
// CSE-NEXT:    %[[N6:.+]] = molten.rms_norm %x, %w eps = 1.000000e-06
// CSE-NEXT:    %[[N5:.+]] = molten.rms_norm %x, %w eps = 1.000000e-05
// CSE-NEXT:    func.return %[[N6]], %[[N6]], %[[N5]] :

// -----

// The chain feeding only an unused reduction goes, as does an unused
// causal_mask; what the return uses stays.
func.func @dce(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %0 = molten.exp %x : tensor<4x8xbf16>
  %1 = molten.log %0 : tensor<4x8xbf16>
  %2 = molten.reduce_sum %1 axes = [1] : tensor<4x8xbf16> -> tensor<4xbf16>
  %3 = molten.tanh %x : tensor<4x8xbf16>
  %4 = molten.causal_mask : tensor<8x8xbf16>
  func.return %3 : tensor<4x8xbf16>
}

// DCE-LABEL: func.func @dce(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
// DCE-NEXT:    %0 = molten.tanh %x : tensor<4x8xbf16>
// DCE-NEXT:    func.return %0 : tensor<4x8xbf16>
// DCE-NEXT:  }

// BOTH-LABEL: func.func @dce(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
// BOTH-NEXT:    %0 = molten.tanh %x : tensor<4x8xbf16>
// BOTH-NEXT:    func.return %0 : tensor<4x8xbf16>
// BOTH-NEXT:  }

// -----

// The two together: the duplicate cast and exp merge and the unused sqrt
// goes; one cast and one exp remain.
func.func @cse_then_dce(%x: tensor<16xf16>) -> tensor<16xf32> {
  %0 = molten.cast %x : tensor<16xf16> to tensor<16xf32>
  %1 = molten.cast %x : tensor<16xf16> to tensor<16xf32>
  %2 = molten.exp %0 : tensor<16xf32>
  %3 = molten.exp %1 : tensor<16xf32>
  %4 = molten.sqrt %2 : tensor<16xf32>
  func.return %3 : tensor<16xf32>
}

// BOTH-LABEL: func.func @cse_then_dce(%x: tensor<16xf16>) -> tensor<16xf32> {
// BOTH-NEXT:    %0 = molten.cast %x : tensor<16xf16> to tensor<16xf32>
// BOTH-NEXT:    %1 = molten.exp %0 : tensor<16xf32>
// BOTH-NEXT:    func.return %1 : tensor<16xf32>
// BOTH-NEXT:  }
