// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// Kernels over a named dimension T take its size at run time: an `index`
// parameter after their pointers, bounding their grid-stride loops; the
// launcher takes it after its pointers (`dims`), passes it to the kernels,
// sizes the buffers between them by it and launches a grid computed from it
// (`grid_of`: the argument positions of the sizes, `scale`: [scale, divisor]).

// Several rows a block (rows_per_block = 4, 8 lanes each): the last block's
// rows past T are guarded by `row < T` (the rows' count is known at run time
// only), the grid is ceil(T / 4) blocks. The rows' sums reach the pointwise
// kernel through a buffer of T x 1 elements.
kernel.func @norm(%x: tensor<?x32xf32, ["T"]>) -> (tensor<?x1xf32, ["T"]>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 4, elements_per_thread = 4> {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<?x32xf32, ["T"]> -> tensor<?x1xf32, ["T"]>
  kernel.yield %s : tensor<?x1xf32, ["T"]>
}
kernel.func @scale(%x: tensor<?x32xf32, ["T"]>, %s: tensor<?x1xf32, ["T"]>) -> (tensor<?x32xf32, ["T"]>) pointwise schedule #kernel.schedule<pointwise, block = 64, elements_per_thread = 2> {
  %y = molten.div %x, %s : (tensor<?x32xf32, ["T"]>, tensor<?x1xf32, ["T"]>) -> tensor<?x32xf32, ["T"]>
  kernel.yield %y : tensor<?x32xf32, ["T"]>
}
func.func @normalize(%x: tensor<?x32xf32, ["T"]>) -> (tensor<?x32xf32, ["T"]> {molten.name = "y"}) {
  %s = kernel.launch @norm(%x) : (tensor<?x32xf32, ["T"]>) -> tensor<?x1xf32, ["T"]>
  %y = kernel.launch @scale(%x, %s) : (tensor<?x32xf32, ["T"]>, tensor<?x1xf32, ["T"]>) -> tensor<?x32xf32, ["T"]>
  func.return %y : tensor<?x32xf32, ["T"]>
}

// CHECK-LABEL: cuda.kernel @norm(%x: !cuda.ptr<f32>, %s: !cuda.ptr<f32>, %T: index) block 32 {
// CHECK:         [[BLOCKS:%[^ ]+]] = arith.divsi {{%[^ ]+}}, %{{[^ ]+}} : index
// CHECK:         scf.for [[I:%[^ ]+]] = %{{[^ ]+}} to [[BLOCKS]] step %{{[^ ]+}} {
// CHECK:           [[ROW:%[^ ]+]] = arith.addi
// CHECK:           [[VALID:%[^ ]+]] = arith.cmpi slt, [[ROW]], %T : index
// CHECK:           [[LAST:%[^ ]+]] = arith.subi %T, %{{[^ ]+}} : index
// CHECK:           %{{[^ ]+}} = arith.minsi [[ROW]], [[LAST]] : index
// CHECK:           scf.if [[VALID]] {

// The pointwise kernel loops over T x 32 elements (the count a product with T).
// CHECK-LABEL: cuda.kernel @scale(%x: !cuda.ptr<f32>, %s: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) block 64 {
// CHECK:         [[COUNT:%[^ ]+]] = arith.muli %T, %{{[^ ]+}} : index
// CHECK:         scf.for %{{[^ ]+}} = %{{[^ ]+}} to [[COUNT]] step

// CHECK-LABEL: cuda.host_func @normalize(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"] shapes {{\[\[}}T, 32], [T, 32]] {
// CHECK-NEXT:    %s = cuda.alloc 1 x %T : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @norm grid [2147483647, 1, 1] block [32, 1, 1](%x, %s, %T) grid_of [2] scale [1, 4] : !cuda.ptr<f32>, !cuda.ptr<f32>, index
// CHECK-NEXT:    cuda.launch @scale grid [2147483647, 1, 1] block [64, 1, 1](%x, %s, %y, %T) grid_of [3] scale [32, 128] : !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<f32>, index
// CHECK-NEXT:    cuda.free %s : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return

// -----

// An input that is also the output is copied into it: T x 8 elements.
kernel.func @double(%x: tensor<?x8xf32, ["T"]>) -> (tensor<?x8xf32, ["T"]>) pointwise schedule #kernel.schedule<pointwise, block = 32, elements_per_thread = 1> {
  %y = molten.add %x, %x : (tensor<?x8xf32, ["T"]>, tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]>
  kernel.yield %y : tensor<?x8xf32, ["T"]>
}
func.func @both(%x: tensor<?x8xf32, ["T"]>) -> (tensor<?x8xf32, ["T"]>, tensor<?x8xf32, ["T"]>) {
  %y = kernel.launch @double(%x) : (tensor<?x8xf32, ["T"]>) -> tensor<?x8xf32, ["T"]>
  func.return %y, %x : tensor<?x8xf32, ["T"]>, tensor<?x8xf32, ["T"]>
}

// CHECK-LABEL: cuda.host_func @both(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %x_1: !cuda.ptr<f32>, %T: index) outputs 2 dims ["T"] shapes {{\[\[}}T, 8], [T, 8], [T, 8]] {
// CHECK-NEXT:    cuda.launch @double grid [2147483647, 1, 1] block [32, 1, 1](%x, %y, %T) grid_of [2] scale [8, 32] : !cuda.ptr<f32>, !cuda.ptr<f32>, index
// CHECK-NEXT:    cuda.copy %x_1, %x, 8 x %T : !cuda.ptr<f32>

// -----

// A gemm over a named M with a schedule per size class: a kernel per
// variant, each taking T, launched where T is in its class (`when`), its
// grid along y (the M tiles) computed from T, at most the tiles of its
// class's bound (the open-ended class: the most a grid holds).
kernel.func @linear_gemm0(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64x32xf32>) -> (tensor<?x32xf32, ["T"]>) gemm variants [#kernel.variant<T <= 1, #kernel.schedule<gemv, block = 1024, vector = 4, tile = [1, 16, 256], stages = 4, k_lanes = 256>>, #kernel.variant<T <= 4, #kernel.schedule<gemv, block = 1024, vector = 4, tile = [4, 16, 256], stages = 4, k_lanes = 256>>, #kernel.variant<T <= 8, #kernel.schedule<gemv, block = 512, vector = 4, tile = [8, 16, 128], stages = 4, k_lanes = 128>>, #kernel.variant<T, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>] attributes {fused_ops = ["matmul"]} {
  %y = molten.matmul %x, %w : (tensor<?x64xf32, ["T"]>, tensor<64x32xf32>) -> tensor<?x32xf32, ["T"]>
  kernel.yield %y : tensor<?x32xf32, ["T"]>
}
func.func @linear(%x: tensor<?x64xf32, ["T"]>, %w: tensor<64x32xf32>) -> tensor<?x32xf32, ["T"]> {
  %y = kernel.launch @linear_gemm0(%x, %w) : (tensor<?x64xf32, ["T"]>, tensor<64x32xf32>) -> tensor<?x32xf32, ["T"]>
  func.return %y : tensor<?x32xf32, ["T"]>
}


// CHECK-LABEL: cuda.kernel @linear_gemm0_upto1(%x: !cuda.ptr<f32>, %w: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) block 1024
// CHECK:       cuda.kernel @linear_gemm0_upto4(
// CHECK:       cuda.kernel @linear_gemm0_upto8(
// CHECK:       cuda.kernel @linear_gemm0_rest(%x: !cuda.ptr<f32>, %w: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) block 256 min_blocks 2
// CHECK:       arith.cmpi slt, %{{.*}}, %T : index
// CHECK:       cuda.host_func @linear(%x: !cuda.ptr<f32>, %w: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"]
// CHECK-NEXT:    cuda.launch @linear_gemm0_upto1 grid [2, 1, 1] block [1024, 1, 1](%x, %w, %y, %T) when [3, 1, 1] grid_of [3] scale [1, 1, 1, 1]
// CHECK-NEXT:    cuda.launch @linear_gemm0_upto4 grid [2, 1, 1] block [1024, 1, 1](%x, %w, %y, %T) when [3, 2, 4] grid_of [3] scale [1, 4, 1, 1]
// CHECK-NEXT:    cuda.launch @linear_gemm0_upto8 grid [2, 1, 1] block [512, 1, 1](%x, %w, %y, %T) when [3, 5, 8] grid_of [3] scale [1, 8, 1, 1]
// CHECK-NEXT:    cuda.launch @linear_gemm0_rest grid [1, 65535, 1] block [256, 1, 1](%x, %w, %y, %T) when [3, 9, 0] grid_of [3] scale [1, 64, 1, 1]

// -----

// A causal attention over T: the kernel takes T, counts its tiles of query
// rows and keys from it (ceil(T / 64)), the causal block stops at its last
// row's tile of keys, and the grid along x is ceil(T / 64) blocks.

kernel.func @attention_over_t(%q: tensor<2x?x16xbf16, ["T"]>, %k: tensor<2x?x16xbf16, ["T"]>, %v: tensor<2x?x16xbf16, ["T"]>) -> (tensor<2x?x16xbf16, ["T"]>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1, causal> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 16], warp = [16, 16], stages = 2> {
  %cst = molten.constant dense<2.500000e-01> : tensor<f32>
  %q_f32 = molten.cast %q : tensor<2x?x16xbf16, ["T"]> to tensor<2x?x16xf32, ["T"]>
  %k_f32 = molten.cast %k : tensor<2x?x16xbf16, ["T"]> to tensor<2x?x16xf32, ["T"]>
  %v_f32 = molten.cast %v : tensor<2x?x16xbf16, ["T"]> to tensor<2x?x16xf32, ["T"]>
  %s = molten.matmul %q_f32, %k_f32 transpose_b : (tensor<2x?x16xf32, ["T"]>, tensor<2x?x16xf32, ["T"]>) -> tensor<2x?x?xf32, ["T", "T"]>
  %t = molten.mul %s, %cst : (tensor<2x?x?xf32, ["T", "T"]>, tensor<f32>) -> tensor<2x?x?xf32, ["T", "T"]>
  %mask = molten.causal_mask : tensor<?x?xf32, ["T", "T"]>
  %u = molten.add %t, %mask : (tensor<2x?x?xf32, ["T", "T"]>, tensor<?x?xf32, ["T", "T"]>) -> tensor<2x?x?xf32, ["T", "T"]>
  %m = molten.reduce_max %u axes = [2] keepdim : tensor<2x?x?xf32, ["T", "T"]> -> tensor<2x?x1xf32, ["T"]>
  %d = molten.sub %u, %m : (tensor<2x?x?xf32, ["T", "T"]>, tensor<2x?x1xf32, ["T"]>) -> tensor<2x?x?xf32, ["T", "T"]>
  %e = molten.exp %d : tensor<2x?x?xf32, ["T", "T"]>
  %l = molten.reduce_sum %e axes = [2] keepdim : tensor<2x?x?xf32, ["T", "T"]> -> tensor<2x?x1xf32, ["T"]>
  %p = molten.div %e, %l : (tensor<2x?x?xf32, ["T", "T"]>, tensor<2x?x1xf32, ["T"]>) -> tensor<2x?x?xf32, ["T", "T"]>
  %o = molten.matmul %p, %v_f32 : (tensor<2x?x?xf32, ["T", "T"]>, tensor<2x?x16xf32, ["T"]>) -> tensor<2x?x16xf32, ["T"]>
  %out = molten.cast %o : tensor<2x?x16xf32, ["T"]> to tensor<2x?x16xbf16, ["T"]>
  kernel.yield %out : tensor<2x?x16xbf16, ["T"]>
}
func.func @attention(%q: tensor<2x?x16xbf16, ["T"]>, %k: tensor<2x?x16xbf16, ["T"]>, %v: tensor<2x?x16xbf16, ["T"]>) -> (tensor<2x?x16xbf16, ["T"]> {molten.name = "o"}) {
  %o = kernel.launch @attention_over_t(%q, %k, %v) : (tensor<2x?x16xbf16, ["T"]>, tensor<2x?x16xbf16, ["T"]>, tensor<2x?x16xbf16, ["T"]>) -> tensor<2x?x16xbf16, ["T"]>
  func.return %o : tensor<2x?x16xbf16, ["T"]>
}

// CHECK-LABEL: cuda.kernel @attention_over_t(%q: !cuda.ptr<bf16>, %k: !cuda.ptr<bf16>, %v: !cuda.ptr<bf16>, %out: !cuda.ptr<bf16>, %T: index) block 128 min_blocks 1 {
// CHECK:         [[ROUNDED:%[^ ]+]] = arith.addi %T, {{%[^ ]+}} : index
// CHECK-NEXT:    [[Q_TILES:%[^ ]+]] = arith.divsi [[ROUNDED]], {{%[^ ]+}} : index
// CHECK:         %kv_end = arith.minsi {{%[^ ]+}}, {{%[^ ]+}} : index
// CHECK-LABEL: cuda.host_func @attention({{.*}}, %T: index) outputs 1 dims ["T"] shapes {{\[}}[2, T, 16], [2, T, 16], [2, T, 16], [2, T, 16]] {
// CHECK-NEXT:    cuda.launch @attention_over_t grid [2147483647, 2, 1] block [128, 1, 1](%q, %k, %v, %o, %T) grid_of [4] scale [1, 64]
