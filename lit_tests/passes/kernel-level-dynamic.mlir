// RUN: molten-opt %s --split-input-file --verify-diagnostics -p MOLTEN_KERNEL_LEVEL_PIPELINE | filecheck %s

// Named dimensions through fusion, outlining and scheduling: row and
// pointwise kernels keep T in their types, and are scheduled as for many
// rows (no row split across blocks, which needs scratch per row).

// CHECK-LABEL: kernel.func @gated_norm_row_reduce0(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64xf32>, %g: tensor<?x64xf32, ["T"]>) -> (tensor<?x64xf32, ["T"]>) row_reduce schedule #kernel.schedule<row_reduce, block = 256, rows_per_block = 32, vector = 4, elements_per_thread = 8>
// CHECK:         %y = kernel.launch @gated_norm_row_reduce0(%x, %w, %g) : (tensor<?x64xf32, ["T"]>, tensor<64xf32>, tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]>
func.func @gated_norm(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64xf32>, %g: tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]> {
  %n = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<?x64xf32, ["T"]>, tensor<64xf32>) -> tensor<?x64xf32, ["T"]>
  %s = molten.silu %g : tensor<?x64xf32, ["T"]>
  %y = molten.mul %n, %s : (tensor<?x64xf32, ["T"]>, tensor<?x64xf32, ["T"]>) -> tensor<?x64xf32, ["T"]>
  func.return %y : tensor<?x64xf32, ["T"]>
}

// -----

// Rows too long for one block's registers are walked in passes, never split.
// CHECK-LABEL: kernel.func @long_rows_row_reduce0(%x: tensor<?x1048576xf32, ["T"]>) -> (tensor<?x1048576xf32, ["T"]>) row_reduce schedule #kernel.schedule<row_reduce, block = 1024, rows_per_block = 1, vector = 4, elements_per_thread = 32>
func.func @long_rows(%x: tensor<?x1048576xf32, ["T"]>) -> tensor<?x1048576xf32, ["T"]> {
  %p = molten.softmax %x axis = 1 : tensor<?x1048576xf32, ["T"]>
  func.return %p : tensor<?x1048576xf32, ["T"]>
}

// -----

// A pointwise kernel over T rows, scheduled as for many elements.
// CHECK-LABEL: kernel.func @affine_pointwise0(%x: tensor<?x96xbf16, ["T"]>, %a: tensor<96xbf16>) -> (tensor<?x96xbf16, ["T"]>) pointwise schedule #kernel.schedule<pointwise, block = 256, vector = 8, elements_per_thread = 8>
func.func @affine(%x: tensor<?x96xbf16, ["T"]>, %a: tensor<96xbf16>) -> tensor<?x96xbf16, ["T"]> {
  %m = molten.mul %x, %a : (tensor<?x96xbf16, ["T"]>, tensor<96xbf16>) -> tensor<?x96xbf16, ["T"]>
  %y = molten.gelu %m : tensor<?x96xbf16, ["T"]>
  func.return %y : tensor<?x96xbf16, ["T"]>
}

// -----

// A matmul over a named M: a schedule per size class, each picked at the
// class's bound (a GEMV up to 8 rows, then the tiled kernel), none tiled
// yet (each variant is tiled as it is lowered).
// CHECK-LABEL: kernel.func @linear_gemm0(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64x32xf32>) -> (tensor<?x32xf32, ["T"]>) gemm variants [
// CHECK-SAME: #kernel.variant<T <= 1, #kernel.schedule<{{.*}}tile = [1, 16, 256], stages = 4, k_lanes = 256>>,
// CHECK-SAME: #kernel.variant<T <= 4, #kernel.schedule<{{.*}}tile = [4, 16, 256], stages = 4, k_lanes = 256>>,
// CHECK-SAME: #kernel.variant<T <= 8, #kernel.schedule<{{.*}}tile = [8, 16, 128], stages = 4, k_lanes = 128>>,
// CHECK-SAME: #kernel.variant<T <= 32, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>,
// CHECK-SAME: #kernel.variant<T, #kernel.schedule<gemm_mma, block = 128, tile = [64, 128, 16], warp = [64, 32], stages = 4>>]
// CHECK-NOT: tiling
func.func @linear(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64x32xf32>) -> tensor<?x32xf32, ["T"]> {
  %y = molten.matmul %x, %w : (tensor<?x64xf32, ["T"]>, tensor<64x32xf32>) -> tensor<?x32xf32, ["T"]>
  func.return %y : tensor<?x32xf32, ["T"]>
}
