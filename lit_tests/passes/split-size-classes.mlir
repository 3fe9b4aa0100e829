// RUN: molten-opt %s --split-input-file -p split-size-classes | filecheck %s
// RUN: sed '/^\/\/ -----$/,$d' %s | molten-opt -p 'split-size-classes,fuse-epilogue{arch="sm_90a"},fuse-elementwise,merge-size-classes,kernel-outline,kernel-schedule{arch="sm_90a"}' | filecheck %s --check-prefix=FUSED
// RUN: sed '/^\/\/ -----$/,$d' %s | molten-opt -p 'split-size-classes,fuse-epilogue,fuse-elementwise,merge-size-classes' | filecheck %s --check-prefix=SM90

// Gate and up over a named M: a copy per gemm size class, each marked
// with its range of T.

// CHECK:      func.func @mlp_T1({{.*}}) -> tensor<?x4096xbf16, ["T"]> attributes {molten.sizes = #molten.sizes<@mlp, 1 <= T <= 1>} {
// CHECK-NEXT:   %g = molten.matmul %x, %wg transpose_b
// CHECK:      func.func @mlp_T2({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 2 <= T <= 4>} {
// CHECK:      func.func @mlp_T5({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 5 <= T <= 8>} {
// CHECK:      func.func @mlp_T9({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 9 <= T <= 32>} {
// CHECK:      func.func @mlp_T33({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 33 <= T <= 128>} {
// CHECK:      func.func @mlp_T129({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 129 <= T <= 512>} {
// CHECK:      func.func @mlp_T513({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 513 <= T <= 2048>} {
// CHECK:      func.func @mlp_T2049({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 2049 <= T>} {
// CHECK-NOT:  func.func @mlp(

// On sm_90a a GEMV computes each product alone up to 8 rows; from 9, one
// persistent kernel computes both: two copies, and each kernel's variants
// are the classes of the copies that launch it, the last bounded by them.
// FUSED:      kernel.func @mlp_gemm0({{.*}} gemm variants [#kernel.variant<T <= 1, {{.*}}>>, #kernel.variant<T <= 4, {{.*}}>>, #kernel.variant<T <= 8, {{.*}}>>] attributes {fused_ops = ["matmul"]}
// FUSED:      kernel.func @mlp_gemm1({{.*}} attributes {fused_ops = ["matmul", "silu", "mul"]}
// FUSED:      func.func @mlp_T1({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 1 <= T <= 8>} {
// FUSED-NEXT:   kernel.launch @mlp_gemm0
// FUSED-NEXT:   kernel.launch @mlp_gemm1
// FUSED:      kernel.func @mlp_gemm2({{.*}} gemm matched #kernel.gemm_match<side_by_side> variants [#kernel.variant<T <= 32, {{.*}}>>, {{.*}}#kernel.variant<T, {{.*}} attributes {fused_ops = ["matmul", "matmul", "silu", "mul"]}
// FUSED:      func.func @mlp_T9({{.*}} attributes {molten.sizes = #molten.sizes<@mlp, 9 <= T>} {
// FUSED-NEXT:   kernel.launch @mlp_gemm2
// FUSED-NOT:  func.func

// On sm_90 every copy fuses alike: the graph is one again, as written.
// SM90:       func.func @mlp(%x: tensor<?x512xbf16, ["T"]>, {{.*}}) -> tensor<?x4096xbf16, ["T"]> {
// SM90-NOT:   molten.sizes
// SM90-NOT:   func.func

func.func @mlp(%x: tensor<?x512xbf16, ["T"]>, %wg: tensor<4096x512xbf16>, %wu: tensor<4096x512xbf16>) -> tensor<?x4096xbf16, ["T"]> {
  %g = molten.matmul %x, %wg transpose_b : (tensor<?x512xbf16, ["T"]>, tensor<4096x512xbf16>) -> tensor<?x4096xbf16, ["T"]>
  %u = molten.matmul %x, %wu transpose_b : (tensor<?x512xbf16, ["T"]>, tensor<4096x512xbf16>) -> tensor<?x4096xbf16, ["T"]>
  %s = molten.silu %g : tensor<?x4096xbf16, ["T"]>
  %y = molten.mul %s, %u : (tensor<?x4096xbf16, ["T"]>, tensor<?x4096xbf16, ["T"]>) -> tensor<?x4096xbf16, ["T"]>
  func.return %y : tensor<?x4096xbf16, ["T"]>
}

// -----

// One matmul over T, and siblings of a fixed M: nothing depends on the
// size, no copies.

// CHECK-LABEL: func.func @one_gemm(
// CHECK-NOT:   molten.sizes
// CHECK-LABEL: func.func @fixed_siblings(
// CHECK-NOT:   molten.sizes

func.func @one_gemm(%x: tensor<?x512xbf16, ["T"]>, %w: tensor<4096x512xbf16>) -> tensor<?x4096xbf16, ["T"]> {
  %y = molten.matmul %x, %w transpose_b : (tensor<?x512xbf16, ["T"]>, tensor<4096x512xbf16>) -> tensor<?x4096xbf16, ["T"]>
  func.return %y : tensor<?x4096xbf16, ["T"]>
}

func.func @fixed_siblings(%x: tensor<64x512xbf16>, %wg: tensor<4096x512xbf16>, %wu: tensor<4096x512xbf16>) -> (tensor<64x4096xbf16>, tensor<64x4096xbf16>) {
  %g = molten.matmul %x, %wg transpose_b : (tensor<64x512xbf16>, tensor<4096x512xbf16>) -> tensor<64x4096xbf16>
  %u = molten.matmul %x, %wu transpose_b : (tensor<64x512xbf16>, tensor<4096x512xbf16>) -> tensor<64x4096xbf16>
  func.return %g, %u : tensor<64x4096xbf16>, tensor<64x4096xbf16>
}
