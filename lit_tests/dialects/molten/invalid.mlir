// RUN: molten-opt %s --split-input-file --verify-diagnostics > %t
// RUN: filecheck %s < %t
// RUN: filecheck %s --check-prefix=NOMODULE < %t

// One case per verifier rule of the molten dialect. Each CHECK line matches
// the whole located diagnostic, `file:LINE:COL: error: message`, of the op
// right after it. The NOMODULE check makes sure that every case fails: no module
// is printed.
// NOMODULE-NOT: builtin.module

// elementwise operands that do not broadcast
func.func @broadcast_mismatch(%x: tensor<4x8xf32>, %w: tensor<9xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: molten.add: lhs tensor<4x8xf32> and rhs tensor<9xf32> cannot be broadcast together (dimension -1: 8 vs 9){{$}}
// CHECK-NEXT: {{^}}  %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// a middle dimension that does not broadcast, rank 3 against rank 2
func.func @broadcast_mismatch_middle(%x: tensor<2x3x4xf16>, %y: tensor<5x4xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.mul: lhs tensor<2x3x4xf16> and rhs tensor<5x4xf16> cannot be broadcast together (dimension -2: 3 vs 5){{$}}
  %0 = molten.mul %x, %y : (tensor<2x3x4xf16>, tensor<5x4xf16>) -> tensor<2x3x4xf16>
  func.return
}

// -----

// operands of two element types
func.func @element_type_mismatch(%x: tensor<4x8xf32>, %w: tensor<8xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.sub: operands must share one element type, got lhs tensor<4x8xf32>, rhs tensor<8xf16>; insert a molten.cast{{$}}
  %0 = molten.sub %x, %w : (tensor<4x8xf32>, tensor<8xf16>) -> tensor<4x8xf32>
  func.return
}

// -----

// an integer tensor in float math
func.func @integer_element_type(%x: tensor<4xi32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.exp: operand 'input' tensor<4xi32> has element type i32; molten.exp takes float tensors (f32, f16 or bf16){{$}}
  %0 = molten.exp %x : tensor<4xi32>
  func.return
}

// -----

// f64 is not a molten element type
func.func @f64_element_type(%x: tensor<4xf64>, %y: tensor<4xf64>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.div: operand 'lhs' tensor<4xf64> has element type f64; molten tensors hold f32, f16, bf16, i64, i32, i8, ui8 or i1{{$}}
  %0 = molten.div %x, %y : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  func.return
}

// -----

// a scalar, not a tensor, in the generic form (the custom form is a parse
// error at the op: molten_opt/custom-form-constraint-error-location.mlir)
func.func @non_tensor_operand(%x: f32, %y: f32) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 2]]:3: error: operand 'lhs' at position 0 does not verify:{{$}}
// CHECK-NEXT: f32 should be of base attribute tensor{{$}}
  %0 = "molten.add"(%x, %y) : (f32, f32) -> f32
  func.return
}

// -----

// a zero-size dimension
func.func @zero_size_dim(%x: tensor<4x0xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.neg: operand 'input' tensor<4x0xf32> has a zero-size dimension{{$}}
  %0 = molten.neg %x : tensor<4x0xf32>
  func.return
}

// -----

// a dynamic dimension
func.func @dynamic_dim(%x: tensor<4x?xbf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.abs: operand 'input' tensor<4x?xbf16> has a dynamic dimension without a name: each ? is named, in order, by an identifier in the encoding (tensor<?x8xf32, ["T"]>){{$}}
  %0 = molten.abs %x : tensor<4x?xbf16>
  func.return
}

// -----

// a declared result shape other than the broadcast shape
func.func @result_shape_mismatch(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.max: result type tensor<8x4xf32> does not match tensor<4x8xf32>, the type the operands give{{$}}
  %0 = molten.max %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// a declared result element type other than the operands'
func.func @result_element_type_mismatch(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.min: result type tensor<4x8xf16> does not match tensor<4x8xf32>, the type the operands give{{$}}
  %0 = molten.min %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf16>
  func.return
}

// -----

// a unary op's result must have the input's type (the assembly format ties them)
func.func @unary_result_mismatch(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 2]]:3: error: result 'result' at position 0 does not verify:{{$}}
// CHECK-NEXT: attribute tensor<4x8xf32> expected from variable 'T', but got tensor<8x4xf32>{{$}}
  %0 = "molten.sqrt"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// gelu has two forms only
func.func @gelu_bad_approximate(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.gelu: approximate must be "none" or "tanh", got "fast"{{$}}
  %0 = molten.gelu %x approximate = "fast" : tensor<4x8xf32>
  func.return
}

// -----

// rotate_half splits the last axis in halves
func.func @rotate_half_odd(%x: tensor<4x7xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rotate_half: input tensor<4x7xf16> needs an even last dimension to split in halves{{$}}
  %0 = molten.rotate_half %x : tensor<4x7xf16>
  func.return
}

// -----

// ... so a rank-0 input has nothing to split
func.func @rotate_half_rank0(%x: tensor<f32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rotate_half: input tensor<f32> needs an even last dimension to split in halves{{$}}
  %0 = molten.rotate_half %x : tensor<f32>
  func.return
}

// -----

// a cast keeps the shape
func.func @cast_shape_change(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.cast: input tensor<4x8xf32> and result tensor<32xf16> differ in shape; a cast changes the element type only{{$}}
  %0 = molten.cast %x : tensor<4x8xf32> to tensor<32xf16>
  func.return
}

// -----

// a cast to an integer type molten has not
func.func @cast_to_integer(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.cast: result tensor<4x8xi16> has element type i16; molten tensors hold f32, f16, bf16, i64, i32, i8, ui8 or i1{{$}}
  %0 = molten.cast %x : tensor<4x8xf32> to tensor<4x8xi16>
  func.return
}

// -----

// a constant of an unsigned type molten has not
func.func @constant_integer() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.constant: result tensor<4xui32> has element type ui32; molten tensors hold f32, f16, bf16, i64, i32, i8, ui8 or i1{{$}}
  %0 = molten.constant dense<1> : tensor<4xui32>
  func.return
}

// -----

// a constant whose value and result types differ
func.func @constant_type_mismatch() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: attribute tensor<8xf32> expected from variable 'T', but got tensor<4xf32>{{$}}
  %0 = "molten.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<8xf32>
  func.return
}

// -----

// an infinite splat constant (1.0e400 is inf even as f64)
func.func @constant_inf() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.constant: tensor<f32> holds inf or NaN; molten constants must be finite, because xDSL 0.74 prints such values as bit patterns it cannot read back (an additive -inf mask is molten.causal_mask){{$}}
  %0 = molten.constant dense<1.0e400> : tensor<f32>
  func.return
}

// -----

// a dense constant with one infinite element
func.func @constant_dense_inf() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.constant: tensor<2xf16> holds inf or NaN; molten constants must be finite, because xDSL 0.74 prints such values as bit patterns it cannot read back (an additive -inf mask is molten.causal_mask){{$}}
  %0 = molten.constant dense<[1.0, -1.0e400]> : tensor<2xf16>
  func.return
}

// -----

// a reduction over no axis
func.func @reduce_empty_axes(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.reduce_sum: axes must name at least one axis{{$}}
  %0 = molten.reduce_sum %x axes = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// an axis named twice
func.func @reduce_repeated_axis(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.reduce_sum: axes [1, 1] repeat an axis{{$}}
  %0 = molten.reduce_sum %x axes = [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

// an axis past the rank
func.func @reduce_axis_out_of_range(%x: tensor<4x8xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.reduce_max: axis 2 is out of range for input tensor<4x8xf16> (axes are in [0, 2)){{$}}
  %0 = molten.reduce_max %x axes = [2] : tensor<4x8xf16> -> tensor<4xf16>
  func.return
}

// -----

// negative axes are not accepted
func.func @reduce_negative_axis(%x: tensor<4x8xbf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.reduce_mean: axis -1 is out of range for input tensor<4x8xbf16> (axes are in [0, 2)){{$}}
  %0 = molten.reduce_mean %x axes = [-1] : tensor<4x8xbf16> -> tensor<4xbf16>
  func.return
}

// -----

// without keepdim the reduced axis goes
func.func @reduce_missing_keepdim(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.reduce_mean: result type tensor<4x1xf32> does not match tensor<4xf32>, the type the operands give{{$}}
  %0 = molten.reduce_mean %x axes = [1] : tensor<4x8xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// with keepdim the reduced axis stays as a 1
func.func @reduce_wrong_keepdim(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.reduce_max: result type tensor<8xf32> does not match tensor<1x8xf32>, the type the operands give{{$}}
  %0 = molten.reduce_max %x axes = [0] keepdim : tensor<4x8xf32> -> tensor<8xf32>
  func.return
}

// -----

// broadcast_to: a dimension that is neither 1 nor the target's
func.func @broadcast_to_incompatible(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.broadcast_to: input tensor<4x8xf32> cannot be broadcast to tensor<4x9xf32> (each input dimension must be 1 or equal the trailing result dimension){{$}}
  %0 = molten.broadcast_to %x : tensor<4x8xf32> -> tensor<4x9xf32>
  func.return
}

// -----

// broadcast_to cannot drop axes
func.func @broadcast_to_lower_rank(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.broadcast_to: input tensor<4x8xf32> cannot be broadcast to tensor<8xf32> (each input dimension must be 1 or equal the trailing result dimension){{$}}
  %0 = molten.broadcast_to %x : tensor<4x8xf32> -> tensor<8xf32>
  func.return
}

// -----

// broadcast_to keeps the element type
func.func @broadcast_to_element_type(%x: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.broadcast_to: input tensor<8xf32> and result tensor<4x8xf16> differ in element type{{$}}
  %0 = molten.broadcast_to %x : tensor<8xf32> -> tensor<4x8xf16>
  func.return
}

// -----

// reshape keeps the element count
func.func @reshape_count_mismatch(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.reshape: input tensor<4x8xf32> has 32 elements but result tensor<30xf32> has 30{{$}}
  %0 = molten.reshape %x : tensor<4x8xf32> -> tensor<30xf32>
  func.return
}

// -----

// reshape keeps the element type
func.func @reshape_element_type(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.reshape: input tensor<4x8xf32> and result tensor<32xbf16> differ in element type{{$}}
  %0 = molten.reshape %x : tensor<4x8xf32> -> tensor<32xbf16>
  func.return
}

// -----

// a permutation with a repeated axis
func.func @transpose_repeated_axis(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.transpose: permutation [0, 0] is not a permutation of the 2 axes of input tensor<4x8xf32>{{$}}
  %0 = molten.transpose %x permutation = [0, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// a permutation of the wrong length
func.func @transpose_wrong_length(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.transpose: permutation [1, 0, 2] is not a permutation of the 2 axes of input tensor<4x8xf32>{{$}}
  %0 = molten.transpose %x permutation = [1, 0, 2] : tensor<4x8xf32> -> tensor<8x4xf32>
  func.return
}

// -----

// a result that is not the permuted input
func.func @transpose_result_mismatch(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.transpose: result type tensor<4x8xf32> does not match tensor<8x4xf32>, the type the operands give{{$}}
  %0 = molten.transpose %x permutation = [1, 0] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return
}

// -----

// matmul: a vector lhs
func.func @matmul_rank1_lhs(%x: tensor<8xf32>, %y: tensor<8x4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: lhs tensor<8xf32> has rank 1; matmul takes rank >= 2 operands (reshape a vector to 1xK or Kx1){{$}}
  %0 = molten.matmul %x, %y : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// matmul: a vector rhs
func.func @matmul_rank1_rhs(%x: tensor<4x8xf32>, %y: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: rhs tensor<8xf32> has rank 1; matmul takes rank >= 2 operands (reshape a vector to 1xK or Kx1){{$}}
  %0 = molten.matmul %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// matmul: an f16 result of bf16 operands (f32 is the only wider result)
func.func @matmul_result_type(%x: tensor<4x8xbf16>, %y: tensor<8x4xbf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: result type tensor<4x4xf16> does not match tensor<4x4xbf16>, the type the operands give{{$}}
  %0 = molten.matmul %x, %y : (tensor<4x8xbf16>, tensor<8x4xbf16>) -> tensor<4x4xf16>
  func.return
}

// -----

// matmul: contraction sizes differ
func.func @matmul_k_mismatch(%x: tensor<4x8xf32>, %y: tensor<9x4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: contraction sizes differ: lhs tensor<4x8xf32> has K = 8, rhs tensor<9x4xf32> has K = 9{{$}}
  %0 = molten.matmul %x, %y : (tensor<4x8xf32>, tensor<9x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// matmul: contraction sizes differ once transposed
func.func @matmul_k_mismatch_transposed(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: contraction sizes differ: lhs tensor<4x8xf32> has K = 4, rhs tensor<4x8xf32> has K = 8 (transpose_a) (transpose_b){{$}}
  %0 = molten.matmul %x, %y transpose_a transpose_b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// matmul: batch axes that do not broadcast
func.func @matmul_batch_mismatch(%x: tensor<2x4x8xbf16>, %y: tensor<3x8x4xbf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: lhs batch of tensor<2xbf16> and rhs batch of tensor<3xbf16> cannot be broadcast together (dimension -1: 2 vs 3){{$}}
  %0 = molten.matmul %x, %y : (tensor<2x4x8xbf16>, tensor<3x8x4xbf16>) -> tensor<2x4x4xbf16>
  func.return
}

// -----

// matmul: operands of two element types
func.func @matmul_element_type_mismatch(%x: tensor<4x8xf32>, %y: tensor<8x4xbf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: operands must share one element type, got lhs tensor<4x8xf32>, rhs tensor<8x4xbf16>; insert a molten.cast{{$}}
  %0 = molten.matmul %x, %y : (tensor<4x8xf32>, tensor<8x4xbf16>) -> tensor<4x4xf32>
  func.return
}

// -----

// rms_norm: a weight that is not the trailing shape of the input
func.func @rms_norm_weight_shape(%x: tensor<4x8xf32>, %w: tensor<4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rms_norm: weight tensor<4xf32> must have the shape of the trailing axes of input tensor<4x8xf32> (the normalized shape){{$}}
  %0 = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// rms_norm: a rank-0 weight normalizes nothing
func.func @rms_norm_weight_rank0(%x: tensor<4x8xf32>, %w: tensor<f32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rms_norm: weight tensor<f32> must have the shape of the trailing axes of input tensor<4x8xf32> (the normalized shape){{$}}
  %0 = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return
}

// -----

// rms_norm: a weight of higher rank than the input
func.func @rms_norm_weight_rank_too_high(%x: tensor<4x8xf16>, %w: tensor<2x4x8xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rms_norm: weight tensor<2x4x8xf16> must have the shape of the trailing axes of input tensor<4x8xf16> (the normalized shape){{$}}
  %0 = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<4x8xf16>, tensor<2x4x8xf16>) -> tensor<4x8xf16>
  func.return
}

// -----

// rms_norm: a negative eps
func.func @rms_norm_negative_eps(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rms_norm: eps must be finite and >= 0, got -1e-06{{$}}
  %0 = molten.rms_norm %x, %w eps = -1.000000e-06 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// a tensor larger than any one GPU (its offsets would also overflow 64 bits)
func.func @tensor_beyond_a_gpu(%x: tensor<99999999999999999999xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.exp: operand 'input' tensor<99999999999999999999xf32> holds 99999999999999999999 elements (3.725e+11 GiB), more than one GPU holds (Molten's bound is 256 GiB a tensor){{$}}
  %0 = molten.exp %x : tensor<99999999999999999999xf32>
  func.return
}

// -----

// rms_norm: an eps beyond float32's range (the kernels compute in f32)
func.func @rms_norm_eps_beyond_f32(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rms_norm: eps 1e+308 is beyond float32's range (+-3.402823e+38), in which the kernels compute{{$}}
  %0 = molten.rms_norm %x, %w eps = 1.000000e+308 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// rms_norm: a NaN eps (generic form: the custom form takes a decimal literal)
func.func @rms_norm_nan_eps(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rms_norm: eps must be finite and >= 0, got nan{{$}}
  %0 = "molten.rms_norm"(%x, %w) <{epsilon = 0x7FF8000000000000 : f64}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// rms_norm: eps is an f64 attribute
func.func @rms_norm_f32_eps(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: f32 should be of base attribute f64{{$}}
  %0 = "molten.rms_norm"(%x, %w) <{epsilon = 1.0e-06 : f32}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// layer_norm: a weight that is not the trailing shape of the input
func.func @layer_norm_weight_shape(%x: tensor<4x8xf32>, %w: tensor<4xf32>, %b: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.layer_norm: weight tensor<4xf32> must have the shape of the trailing axes of input tensor<4x8xf32> (the normalized shape){{$}}
  %0 = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<4x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// layer_norm: a bias that is not the trailing shape of the input
func.func @layer_norm_bias_shape(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.layer_norm: bias tensor<4xf32> must have the shape of weight tensor<8xf32> (both span the normalized axes){{$}}
  %0 = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// layer_norm: a bias spanning more axes than the weight (torch needs both to
// have the normalized shape)
func.func @layer_norm_bias_wider_than_weight(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %b: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.layer_norm: bias tensor<4x8xf32> must have the shape of weight tensor<8xf32> (both span the normalized axes){{$}}
  %0 = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// layer_norm: a negative eps
func.func @layer_norm_negative_eps(%x: tensor<4x8xbf16>, %w: tensor<8xbf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.layer_norm: eps must be finite and >= 0, got -1.0{{$}}
  %0 = molten.layer_norm %x, %w, %w eps = -1.0 : (tensor<4x8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  func.return
}

// -----

// layer_norm: an infinite eps
func.func @layer_norm_inf_eps(%x: tensor<4x8xf32>, %w: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.layer_norm: eps must be finite and >= 0, got inf{{$}}
  %0 = "molten.layer_norm"(%x, %w, %w) <{epsilon = 0x7FF0000000000000 : f64}> : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// softmax: an axis past the rank
func.func @softmax_axis_out_of_range(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.softmax: axis 2 is out of range for input tensor<4x8xf32> (axis is in [0, 2)){{$}}
  %0 = molten.softmax %x axis = 2 : tensor<4x8xf32>
  func.return
}

// -----

// softmax: negative axes are not accepted
func.func @softmax_negative_axis(%x: tensor<4x8xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.softmax: axis -1 is out of range for input tensor<4x8xf16> (axis is in [0, 2)){{$}}
  %0 = molten.softmax %x axis = -1 : tensor<4x8xf16>
  func.return
}

// -----

// rope: an odd head dimension (named as an error of molten.rope, the op written)
func.func @rope_odd_dim(%x: tensor<4x7xf32>, %c: tensor<4x7xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rope: input tensor<4x7xf32> needs an even last dimension to rotate its halves{{$}}
  %0 = molten.rope %x, %c, %c : (tensor<4x7xf32>, tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
  func.return
}

// -----

// rope: cos does not broadcast to the input
func.func @rope_cos_not_broadcastable(%x: tensor<4x8xf32>, %c: tensor<6xf32>, %s: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rope: input tensor<4x8xf32> and cos tensor<6xf32> cannot be broadcast together (dimension -1: 8 vs 6){{$}}
  %0 = molten.rope %x, %c, %s : (tensor<4x8xf32>, tensor<6xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// rope: sin would enlarge the input
func.func @rope_sin_enlarges(%x: tensor<4x8xf32>, %c: tensor<8xf32>, %s: tensor<2x4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.rope: sin tensor<2x4x8xf32> must broadcast to input tensor<4x8xf32> without enlarging it{{$}}
  %0 = molten.rope %x, %c, %s : (tensor<4x8xf32>, tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// attention: query and key head dimensions differ
func.func @attention_head_dim_mismatch(%q: tensor<2x16x64xf16>, %k: tensor<2x16x32xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.attention: query tensor<2x16x64xf16> and key tensor<2x16x32xf16> differ in head dimension (64 vs 32){{$}}
  %0 = molten.attention %q, %k, %k scale = 1.250000e-01 : (tensor<2x16x64xf16>, tensor<2x16x32xf16>, tensor<2x16x32xf16>) -> tensor<2x16x32xf16>
  func.return
}

// -----

// attention: key and value sequence lengths differ
func.func @attention_seq_mismatch(%q: tensor<2x16x64xf16>, %v: tensor<2x8x64xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.attention: key tensor<2x16x64xf16> and value tensor<2x8x64xf16> differ in sequence length (16 vs 8){{$}}
  %0 = molten.attention %q, %q, %v scale = 1.250000e-01 causal : (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x8x64xf16>) -> tensor<2x16x64xf16>
  func.return
}

// -----

// attention: a rank-1 query
func.func @attention_rank1(%q: tensor<64xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.attention: query tensor<64xf32> must have rank >= 2 ([..., seq, dim]){{$}}
  %0 = molten.attention %q, %q, %q scale = 1.250000e-01 : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return
}

// -----

// attention: batch axes that do not broadcast
func.func @attention_batch_mismatch(%q: tensor<2x16x64xf16>, %k: tensor<3x16x64xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.attention: query batch of tensor<2xf16> and key batch of tensor<3xf16> and value batch of tensor<3xf16> cannot be broadcast together (dimension -1: 2 vs 3){{$}}
  %0 = molten.attention %q, %k, %k scale = 1.250000e-01 : (tensor<2x16x64xf16>, tensor<3x16x64xf16>, tensor<3x16x64xf16>) -> tensor<2x16x64xf16>
  func.return
}

// -----

// attention: an infinite scale
func.func @attention_inf_scale(%q: tensor<16x64xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.attention: scale must be finite, got inf{{$}}
  %0 = "molten.attention"(%q, %q, %q) <{scale = 0x7FF0000000000000 : f64}> : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  func.return
}

// -----

// attention: a declared result with the key's head dimension instead of the value's
func.func @attention_result_mismatch(%q: tensor<16x64xf32>, %v: tensor<16x32xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.attention: result type tensor<16x64xf32> does not match tensor<16x32xf32>, the type the operands give{{$}}
  %0 = molten.attention %q, %q, %v scale = 1.250000e-01 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x32xf32>) -> tensor<16x64xf32>
  func.return
}

// -----

// attention: operands of two element types
func.func @attention_element_type_mismatch(%q: tensor<16x64xf16>, %k: tensor<16x64xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.attention: operands must share one element type, got query tensor<16x64xf16>, key tensor<16x64xf32>, value tensor<16x64xf32>; insert a molten.cast{{$}}
  %0 = molten.attention %q, %k, %k scale = 1.250000e-01 : (tensor<16x64xf16>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf16>
  func.return
}

// -----

// causal_mask: rank 1
func.func @causal_mask_rank1() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.causal_mask: result tensor<128xf32> must have rank >= 2{{$}}
  %0 = molten.causal_mask : tensor<128xf32>
  func.return
}

// -----

// causal_mask: the additive mask is float (a bool mask is a comparison of iotas)
func.func @causal_mask_i1() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.causal_mask: result tensor<4x4xi1> has element type i1; molten.causal_mask takes float tensors (f32, f16 or bf16){{$}}
  %0 = molten.causal_mask : tensor<4x4xi1>
  func.return
}

// -----

// cumsum along an axis the input does not have
func.func @cumsum_axis_out_of_range(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.cumsum: axis 2 is out of range for input tensor<4x8xf32> (axis is in [0, 2)){{$}}
  %0 = molten.cumsum %x axis = 2 : tensor<4x8xf32>
  func.return
}

// -----

// flip naming an axis twice
func.func @flip_repeated_axis(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.flip: axes [1, 1] repeat an axis{{$}}
  %0 = molten.flip %x axes = [1, 1] : tensor<4x8xf32>
  func.return
}

// -----

// slice past the input's end
func.func @slice_past_the_end(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.slice: elements 5 to 9 along axis 1 are not all in input tensor<4x8xf32> (size 8){{$}}
  %0 = molten.slice %x axis = 1 start = 5 : tensor<4x8xf32> -> tensor<4x5xf32>
  func.return
}

// -----

// slice changing another dimension
func.func @slice_other_axis(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.slice: input tensor<4x8xf32> and result tensor<3x5xf32> differ in dimensions other than axis 1{{$}}
  %0 = molten.slice %x axis = 1 start = 0 : tensor<4x8xf32> -> tensor<3x5xf32>
  func.return
}

// -----

// pad whose zeros and input do not fit the result
func.func @pad_too_small(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.pad: 2 zeros and input tensor<4x8xf32> (size 8 along axis 1) do not fit in result tensor<4x9xf32>{{$}}
  %0 = molten.pad %x axis = 1 before = 2 : tensor<4x8xf32> -> tensor<4x9xf32>
  func.return
}

// -----

// triu of a vector: there is no diagonal
func.func @triu_of_a_vector(%x: tensor<8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.triu: input tensor<8xf32> has rank 1; a triangle needs rank >= 2 (its last two axes){{$}}
  %0 = molten.triu %x diagonal = 0 : tensor<8xf32>
  func.return
}

// -----

// a float index where a bool condition goes
func.func @where_float_condition(%c: tensor<4xf32>, %a: tensor<4xi64>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.where: operand 'condition' tensor<4xf32> must be a bool (i1) tensor; compare with 0 first (molten.ne){{$}}
  %0 = molten.where %c, %a, %a : (tensor<4xf32>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// where's two branches of different types
func.func @where_mixed_branches(%c: tensor<4xi1>, %a: tensor<4xi64>, %b: tensor<4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.where: on_true tensor<4xi64> and on_false tensor<4xf32> must share one element type; insert a molten.cast{{$}}
  %0 = molten.where %c, %a, %b : (tensor<4xi1>, tensor<4xi64>, tensor<4xf32>) -> tensor<4xi64>
  func.return
}

// -----

// a bool in a matmul
func.func @bool_matmul(%a: tensor<4x4xi1>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: operand 'lhs' tensor<4x4xi1> has element type i1; molten.matmul takes float tensors (f32, f16 or bf16){{$}}
  %0 = molten.matmul %a, %a : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  func.return
}

// -----

// logic on integers: compare with 0 first
func.func @logical_and_integers(%a: tensor<4xi64>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.logical_and: operand 'lhs' tensor<4xi64> has element type i64; molten.logical_and takes bool (i1) tensors{{$}}
  %0 = molten.logical_and %a, %a : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// bitwise ops on floats
func.func @bitwise_float(%a: tensor<4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.bitwise_not: operand 'input' tensor<4xf32> has element type f32; molten.bitwise_not takes integer or bool tensors{{$}}
  %0 = molten.bitwise_not %a : tensor<4xf32>
  func.return
}

// -----

// a comparison declared with a non-bool result
func.func @compare_result(%a: tensor<4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.lt: result type tensor<4xf32> does not match tensor<4xi1>, the type the operands give{{$}}
  %0 = molten.lt %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

// iota along an axis the result has not
func.func @iota_axis() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.iota: axis 2 is out of range for result tensor<4x8xi64> (axes are in [0, 2)){{$}}
  %0 = molten.iota axis = 2 : tensor<4x8xi64>
  func.return
}

// -----

// a float index tensor
func.func @take_float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.take: operand 'indices' tensor<3xf32> has element type f32; indices are i64 or i32{{$}}
  %0 = molten.take %t, %i axis = 0 : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// a constant index out of the table's range
func.func @take_constant_out_of_range(%t: tensor<10x4xf32>) {
  %i = molten.constant dense<[1, 12, -1]> : tensor<3xi64>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.take: the constant indices tensor<3xi64> hold [12, -1], out of range for axis 0 of input tensor<10x4xf32> (size 10){{$}}
  %0 = molten.take %t, %i axis = 0 : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// a lookup along an axis the input has not
func.func @take_axis(%t: tensor<10x4xf32>, %i: tensor<3xi64>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.take: axis 2 is out of range for input tensor<10x4xf32> (axes are in [0, 2)){{$}}
  %0 = molten.take %t, %i axis = 2 : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// a take declared with the wrong result shape
func.func @take_result(%t: tensor<10x4xf32>, %i: tensor<2x3xi64>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.take: result type tensor<3x4xf32> does not match tensor<2x3x4xf32>, the type the operands give{{$}}
  %0 = molten.take %t, %i axis = 0 : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

// gather indices of another rank
func.func @gather_rank(%x: tensor<4x8xf32>, %i: tensor<4xi64>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.gather: indices tensor<4xi64> must have the rank of input tensor<4x8xf32>{{$}}
  %0 = molten.gather %x, %i axis = 1 : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4xf32>
  func.return
}

// -----

// gather indices larger than the input along another axis
func.func @gather_extent(%x: tensor<4x8xf32>, %i: tensor<5x2xi64>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.gather: indices tensor<5x2xi64> along axis 0 (5) exceed input tensor<4x8xf32> (4){{$}}
  %0 = molten.gather %x, %i axis = 1 : (tensor<4x8xf32>, tensor<5x2xi64>) -> tensor<5x2xf32>
  func.return
}

// -----

// argmax along two axes: a position is along one
func.func @argmax_two_axes(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.argmax: axes [0, 1] name several axes; a position is along one (reshape to join axes){{$}}
  %0 = molten.argmax %x axes = [0, 1] : tensor<4x8xf32> -> tensor<i64>
  func.return
}

// -----

// argmin's result is int64 positions
func.func @argmin_result_type(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.argmin: result type tensor<4xf32> does not match tensor<4xi64>, the type the operands give{{$}}
  %0 = molten.argmin %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return
}

// -----

// argmax of bools
func.func @argmax_of_bools(%x: tensor<4x8xi1>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.argmax: operand 'input' tensor<4x8xi1> has element type i1; molten.argmax takes float or integer tensors{{$}}
  %0 = molten.argmax %x axes = [1] : tensor<4x8xi1> -> tensor<4xi64>
  func.return
}

// -----

// scatter's source of another shape than its indices
func.func @scatter_source_shape(%x: tensor<4x8xf32>, %i: tensor<4x3xi64>, %v: tensor<4x4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.scatter: source tensor<4x4xf32> must have the shape of indices tensor<4x3xi64>{{$}}
  %0 = molten.scatter %x, %i, %v axis = 1 : (tensor<4x8xf32>, tensor<4x3xi64>, tensor<4x4xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// scatter's constant indices out of range
func.func @scatter_constant_out_of_range(%x: tensor<4x8xf32>, %v: tensor<1x2xf32>) {
  %i = molten.constant dense<[[3, 8]]> : tensor<1x2xi64>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: molten.scatter: the constant indices tensor<1x2xi64> hold [8], out of range for axis 1 of input tensor<4x8xf32> (size 8){{$}}
  %0 = molten.scatter %x, %i, %v axis = 1 : (tensor<4x8xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<4x8xf32>
  func.return
}
