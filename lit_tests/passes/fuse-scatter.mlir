// RUN: molten-opt %s --split-input-file -p fuse-scatter | filecheck %s

// fuse-scatter: each scatter becomes one `scatter` kernel.fused over its
// source's shape, with the elementwise and index-map producers of its source
// and indices; what it writes into (its first operand) stays outside, and a
// generator there gets a kernel of its own first. The CHECK lines show the
// IR after this pass alone.

// A KV cache update: the scaled keys and the position spread over them join
// the scatter; the cache is an input of the kernel, updated in place.
func.func @cache_update(%cache: tensor<2x16x8xf16>, %k: tensor<2x1x8xf16>, %pos: tensor<1xi64>) -> (tensor<2x16x8xf16> {molten.updates = 0 : i64}) {
  %two = molten.constant dense<2.000000e+00> : tensor<f16>
  %scaled = molten.mul %k, %two : (tensor<2x1x8xf16>, tensor<f16>) -> tensor<2x1x8xf16>
  %at = molten.reshape %pos : tensor<1xi64> -> tensor<1x1x1xi64>
  %index = molten.broadcast_to %at : tensor<1x1x1xi64> -> tensor<2x1x8xi64>
  %new = molten.scatter %cache, %index, %scaled axis = 1 : (tensor<2x16x8xf16>, tensor<2x1x8xi64>, tensor<2x1x8xf16>) -> tensor<2x16x8xf16>
  func.return %new : tensor<2x16x8xf16>
}

// CHECK-LABEL: func.func @cache_update
// CHECK:         %new = kernel.fused scatter(%k, %pos, %cache) : (tensor<2x1x8xf16>, tensor<1xi64>, tensor<2x16x8xf16>) -> tensor<2x16x8xf16> {
// CHECK-NEXT:    ^bb0(%k_1: tensor<2x1x8xf16>, %pos_1: tensor<1xi64>, %cache_1: tensor<2x16x8xf16>):
// CHECK-NEXT:      %two_1 = molten.constant dense<2.000000e+00> : tensor<f16>
// CHECK-NEXT:      %scaled = molten.mul %k_1, %two_1
// CHECK-NEXT:      %at = molten.reshape %pos_1
// CHECK-NEXT:      %index = molten.broadcast_to %at
// CHECK-NEXT:      %new_1 = molten.scatter %cache_1, %index, %scaled axis = 1
// CHECK-NEXT:      kernel.yield %new_1 : tensor<2x16x8xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %new : tensor<2x16x8xf16>

// -----

// Into zeros (a histogram): the zeros are made by a pointwise kernel, so that
// the scatter has memory to add into.
func.func @histogram(%ids: tensor<100xi64>, %w: tensor<100xf32>) -> tensor<16xf32> {
  %zero = molten.constant dense<0.000000e+00> : tensor<16xf32>
  %h = molten.scatter %zero, %ids, %w axis = 0 accumulate : (tensor<16xf32>, tensor<100xi64>, tensor<100xf32>) -> tensor<16xf32>
  func.return %h : tensor<16xf32>
}

// CHECK-LABEL: func.func @histogram
// CHECK:         %zero_1 = kernel.fused pointwise() : () -> tensor<16xf32> {
// CHECK-NEXT:      %zero_2 = molten.constant dense<0.000000e+00> : tensor<16xf32>
// CHECK-NEXT:      kernel.yield %zero_2 : tensor<16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %h = kernel.fused scatter(%zero_1, %ids, %w)
// CHECK:           %h_1 = molten.scatter %zero_2, %ids_1, %w_1 axis = 0 accumulate
// CHECK-NEXT:      kernel.yield %h_1 : tensor<16xf32>

// -----

// The destination's producer stays outside even where its value is the
// source too (the kernel then reads it), and so does a user of the result.
func.func @destination_stays_out(%x: tensor<4x8xf32>, %ids: tensor<4x8xi64>) -> tensor<4x8xf32> {
  %e = molten.exp %x : tensor<4x8xf32>
  %s = molten.scatter %e, %ids, %e axis = 1 : (tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = molten.neg %s : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @destination_stays_out
// CHECK-NEXT:    %e = molten.exp %x : tensor<4x8xf32>
// CHECK-NEXT:    %s = kernel.fused scatter(%e, %ids) : (tensor<4x8xf32>, tensor<4x8xi64>) -> tensor<4x8xf32> {
// CHECK-NEXT:    ^bb0(%e_1: tensor<4x8xf32>, %ids_1: tensor<4x8xi64>):
// CHECK-NEXT:      %s_1 = molten.scatter %e_1, %ids_1, %e_1 axis = 1
// CHECK-NEXT:      kernel.yield %s_1 : tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = molten.neg %s : tensor<4x8xf32>
