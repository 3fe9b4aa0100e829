// RUN: molten-opt %s --split-input-file -p transpose-matvec | filecheck %s

// A matrix times a column vector: the row times the matrix read as a
// weight stored [N, K], a GEMV. The vector and the result are reshaped.

// CHECK-LABEL: func.func @matvec
// CHECK-NEXT:    %b_row = molten.reshape %b : tensor<4096x1xf32> -> tensor<1x4096xf32>
// CHECK-NEXT:    %y_t = molten.matmul %b_row, %a transpose_b : (tensor<1x4096xf32>, tensor<2048x4096xf32>) -> tensor<1x2048xf32>
// CHECK-NEXT:    %y = molten.reshape %y_t : tensor<1x2048xf32> -> tensor<2048x1xf32>
// CHECK-NEXT:    func.return %y : tensor<2048x1xf32>
func.func @matvec(%a: tensor<2048x4096xf32>, %b: tensor<4096x1xf32>) -> tensor<2048x1xf32> {
  %y = molten.matmul %a, %b : (tensor<2048x4096xf32>, tensor<4096x1xf32>) -> tensor<2048x1xf32>
  func.return %y : tensor<2048x1xf32>
}

// -----

// A stored [K, M] and the vector stored [1, K]: the vector is already the
// row, A the weight stored [K, N]. bf16 operands give an f32 product.

// CHECK-LABEL: func.func @matvec_transposed
// CHECK-NEXT:    %y_t = molten.matmul %b, %a : (tensor<1x64xbf16>, tensor<64x100xbf16>) -> tensor<1x100xf32>
// CHECK-NEXT:    %y = molten.reshape %y_t : tensor<1x100xf32> -> tensor<100x1xf32>
func.func @matvec_transposed(%a: tensor<64x100xbf16>, %b: tensor<1x64xbf16>) -> tensor<100x1xf32> {
  %y = molten.matmul %a, %b transpose_a transpose_b : (tensor<64x100xbf16>, tensor<1x64xbf16>) -> tensor<100x1xf32>
  func.return %y : tensor<100x1xf32>
}

// -----

// Left alone: as few rows as a GEMV takes anyway, more than one column, a
// batched product.

// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    molten.matmul %a, %b : (tensor<8x64xf32>, tensor<64x1xf32>) -> tensor<8x1xf32>
// CHECK-NEXT:    molten.matmul %c, %d : (tensor<100x64xf32>, tensor<64x2xf32>) -> tensor<100x2xf32>
// CHECK-NEXT:    molten.matmul %e, %f : (tensor<3x100x64xf32>, tensor<64x1xf32>) -> tensor<3x100x1xf32>
func.func @kept(%a: tensor<8x64xf32>, %b: tensor<64x1xf32>, %c: tensor<100x64xf32>, %d: tensor<64x2xf32>, %e: tensor<3x100x64xf32>, %f: tensor<64x1xf32>) -> (tensor<8x1xf32>, tensor<100x2xf32>, tensor<3x100x1xf32>) {
  %0 = molten.matmul %a, %b : (tensor<8x64xf32>, tensor<64x1xf32>) -> tensor<8x1xf32>
  %1 = molten.matmul %c, %d : (tensor<100x64xf32>, tensor<64x2xf32>) -> tensor<100x2xf32>
  %2 = molten.matmul %e, %f : (tensor<3x100x64xf32>, tensor<64x1xf32>) -> tensor<3x100x1xf32>
  func.return %0, %1, %2 : tensor<8x1xf32>, tensor<100x2xf32>, tensor<3x100x1xf32>
}
