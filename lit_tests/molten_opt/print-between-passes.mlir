// RUN: molten-opt %s -p molten-decompose,canonicalize,cse,dce --print-between-passes | filecheck %s

// --print-between-passes prints the IR after each pass but the last, whose
// result is the output proper. Here each pass has something to do:
// molten-decompose expands rms_norm and attention (three casts of %s, one per
// attention operand), canonicalize drops the `* 1`, cse merges the casts.

func.func @block(%x: tensor<8x64xf16>, %w: tensor<64xf16>) -> tensor<8x64xf16> {
  %one = molten.constant dense<1.0> : tensor<f16>
  %n = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<8x64xf16>, tensor<64xf16>) -> tensor<8x64xf16>
  %s = molten.mul %n, %one : (tensor<8x64xf16>, tensor<f16>) -> tensor<8x64xf16>
  %o = molten.attention %s, %s, %s scale = 1.250000e-01 causal : (tensor<8x64xf16>, tensor<8x64xf16>, tensor<8x64xf16>) -> tensor<8x64xf16>
  func.return %o : tensor<8x64xf16>
}

// CHECK:       {{^}}IR after molten-decompose:{{$}}
// CHECK-NEXT:  builtin.module {
// CHECK-NEXT:    func.func @block(
// CHECK-NEXT:      %one = molten.constant dense<1.000000e+00> : tensor<f16>
// CHECK-NEXT:      %x_f32 = molten.cast %x : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NOT:       molten.rms_norm
// CHECK:           %n = molten.cast %{{.+}} : tensor<8x64xf32> to tensor<8x64xf16>
// CHECK-NEXT:      %s = molten.mul %n, %one : (tensor<8x64xf16>, tensor<f16>) -> tensor<8x64xf16>
// CHECK-COUNT-3:   = molten.cast %s : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NOT:       molten.attention
// CHECK:           %causal_mask = molten.causal_mask : tensor<8x8xf32>
// CHECK:           func.return %o : tensor<8x64xf16>

// CHECK:       {{^}}IR after canonicalize:{{$}}
// CHECK-NOT:       molten.mul %n
// CHECK:           %n = molten.cast
// CHECK-NEXT:      = molten.cast %n : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NEXT:      = molten.cast %n : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NEXT:      = molten.cast %n : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NEXT:      = molten.matmul

// CHECK:       {{^}}IR after cse:{{$}}
// CHECK:           %n = molten.cast
// CHECK-NEXT:      %[[S:.+]] = molten.cast %n : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NEXT:      = molten.matmul %[[S]], %[[S]] transpose_b
// CHECK:           = molten.matmul %{{.+}}, %[[S]] : (tensor<8x8xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>

// No "IR after dce": dce's result is the output.
// CHECK-NOT:   IR after
// CHECK:       {{^}}builtin.module {
// CHECK-NEXT:    func.func @block(
// CHECK-NOT:   IR after
