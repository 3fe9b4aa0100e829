// RUN: molten-opt %s --split-input-file -p 'fuse-prologue{arch="sm_90a"}' | filecheck %s
// RUN: molten-opt %s --split-input-file -p fuse-prologue | filecheck %s --check-prefix=PORTABLE

// rms_norm(x, w) @ W.T as molten-decompose writes it, bf16, 70 rows: the
// row scale moves after the product (kept in f32 until then), and one gemm
// group holds the mean square of x, x * w, the matmul and the scale. Its
// inputs are x, w and W: the normalized lhs is never a tensor of the graph.
// Without the arch (no persistent TMA kernel) the pass changes nothing.
func.func @norm_linear(%x: tensor<70x2048xbf16>, %w: tensor<2048xbf16>, %weight: tensor<5000x2048xbf16>) -> tensor<70x5000xbf16> {
  %x_f32 = molten.cast %x : tensor<70x2048xbf16> to tensor<70x2048xf32>
  %w_f32 = molten.cast %w : tensor<2048xbf16> to tensor<2048xf32>
  %square = molten.square %x_f32 : tensor<70x2048xf32>
  %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<70x2048xf32> -> tensor<70x1xf32>
  %cst = molten.constant dense<1.000000e-06> : tensor<f32>
  %add = molten.add %reduce_mean, %cst : (tensor<70x1xf32>, tensor<f32>) -> tensor<70x1xf32>
  %rsqrt = molten.rsqrt %add : tensor<70x1xf32>
  %mul = molten.mul %x_f32, %rsqrt : (tensor<70x2048xf32>, tensor<70x1xf32>) -> tensor<70x2048xf32>
  %mul_1 = molten.mul %mul, %w_f32 : (tensor<70x2048xf32>, tensor<2048xf32>) -> tensor<70x2048xf32>
  %h = molten.cast %mul_1 : tensor<70x2048xf32> to tensor<70x2048xbf16>
  %y = molten.matmul %h, %weight transpose_b : (tensor<70x2048xbf16>, tensor<5000x2048xbf16>) -> tensor<70x5000xbf16>
  func.return %y : tensor<70x5000xbf16>
}

// CHECK-LABEL: func.func @norm_linear
// CHECK-NEXT:    %y = kernel.fused gemm matched #kernel.gemm_match<prologue>(%x, %w, %weight) : (tensor<70x2048xbf16>, tensor<2048xbf16>, tensor<5000x2048xbf16>) -> tensor<70x5000xbf16> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<70x2048xbf16>, %w_1: tensor<2048xbf16>, %weight_1: tensor<5000x2048xbf16>):
// CHECK-NEXT:      %cst = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %x_f32 = molten.cast %x_1 : tensor<70x2048xbf16> to tensor<70x2048xf32>
// CHECK-NEXT:      %w_f32 = molten.cast %w_1 : tensor<2048xbf16> to tensor<2048xf32>
// CHECK-NEXT:      %square = molten.square %x_f32 : tensor<70x2048xf32>
// CHECK-NEXT:      %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<70x2048xf32> -> tensor<70x1xf32>
// CHECK-NEXT:      %add = molten.add %reduce_mean, %cst : (tensor<70x1xf32>, tensor<f32>) -> tensor<70x1xf32>
// CHECK-NEXT:      %rsqrt = molten.rsqrt %add : tensor<70x1xf32>
// CHECK-NEXT:      %unscaled = molten.mul %x_f32, %w_f32 : (tensor<70x2048xf32>, tensor<2048xf32>) -> tensor<70x2048xf32>
// CHECK-NEXT:      %unscaled_1 = molten.cast %unscaled : tensor<70x2048xf32> to tensor<70x2048xbf16>
// CHECK-NEXT:      %unscaled_product = molten.matmul %unscaled_1, %weight_1 transpose_b : (tensor<70x2048xbf16>, tensor<5000x2048xbf16>) -> tensor<70x5000xf32>
// CHECK-NEXT:      %y_1 = molten.mul %unscaled_product, %rsqrt : (tensor<70x5000xf32>, tensor<70x1xf32>) -> tensor<70x5000xf32>
// CHECK-NEXT:      %y_2 = molten.cast %y_1 : tensor<70x5000xf32> to tensor<70x5000xbf16>
// CHECK-NEXT:      kernel.yield %y_2 : tensor<70x5000xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<70x5000xbf16>

// PORTABLE-LABEL: func.func @norm_linear
// PORTABLE:         %h = molten.cast %mul_1
// PORTABLE-NEXT:    %y = molten.matmul %h, %weight transpose_b
// PORTABLE-NOT:     kernel.fused

// -----

// 512 rows: the gemm is compute-bound there, and computing the lhs per
// tile of columns would cost more than the norm's own kernel
// (PROLOGUE_MAX_ROWS): unchanged.
func.func @many_rows(%x: tensor<512x2048xbf16>, %w: tensor<2048xbf16>, %weight: tensor<5000x2048xbf16>) -> tensor<512x5000xbf16> {
  %x_f32 = molten.cast %x : tensor<512x2048xbf16> to tensor<512x2048xf32>
  %w_f32 = molten.cast %w : tensor<2048xbf16> to tensor<2048xf32>
  %square = molten.square %x_f32 : tensor<512x2048xf32>
  %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<512x2048xf32> -> tensor<512x1xf32>
  %cst = molten.constant dense<1.000000e-06> : tensor<f32>
  %add = molten.add %reduce_mean, %cst : (tensor<512x1xf32>, tensor<f32>) -> tensor<512x1xf32>
  %rsqrt = molten.rsqrt %add : tensor<512x1xf32>
  %mul = molten.mul %x_f32, %rsqrt : (tensor<512x2048xf32>, tensor<512x1xf32>) -> tensor<512x2048xf32>
  %mul_1 = molten.mul %mul, %w_f32 : (tensor<512x2048xf32>, tensor<2048xf32>) -> tensor<512x2048xf32>
  %h = molten.cast %mul_1 : tensor<512x2048xf32> to tensor<512x2048xbf16>
  %y = molten.matmul %h, %weight transpose_b : (tensor<512x2048xbf16>, tensor<5000x2048xbf16>) -> tensor<512x5000xbf16>
  func.return %y : tensor<512x5000xbf16>
}

// CHECK-LABEL: func.func @many_rows
// CHECK:         %h = molten.cast %mul_1
// CHECK-NEXT:    %y = molten.matmul %h, %weight transpose_b
// CHECK-NOT:     kernel.fused
