// RUN: MOLTEN_ROUNDTRIP
// RUN: MOLTEN_GENERIC_ROUNDTRIP
// RUN: MOLTEN_CUSTOM_ROUNDTRIP

// Every op of the kernel dialect (kernel.fused of each kind, kernel.yield,
// kernel.func, kernel.launch) and the #kernel.schedule and #kernel.tiling
// attributes, in the custom form (CHECK) and the generic form
// (CHECK-GENERIC). In the custom form of kernel.fused the schedule is
// written without its `#kernel.schedule` prefix (the property's type is
// known); kernel.func and a plain attribute spell it out. A schedule names
// its family first, then prints that family's fields in a fixed order:
// block, rows per block, vector, elements per thread and tile (warp) always,
// the others when not at their default.

// A pointwise group: three inputs (a full tensor, a row vector, a scalar),
// two outputs, no schedule.
func.func @fused_pointwise(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %y, %z = kernel.fused pointwise (%x, %b, %s) : (tensor<4x8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%xa: tensor<4x8xf32>, %ba: tensor<8xf32>, %sa: tensor<f32>):
    %0 = molten.add %xa, %ba : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    %1 = molten.mul %0, %sa : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %2 = molten.rotate_half %1 : tensor<4x8xf32>
    kernel.yield %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  func.return %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @fused_pointwise(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %y, %z = kernel.fused pointwise(%x, %b, %s) : (tensor<4x8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    ^bb0(%xa: tensor<4x8xf32>, %ba: tensor<8xf32>, %sa: tensor<f32>):
// CHECK-NEXT:      %0 = molten.add %xa, %ba : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %1 = molten.mul %0, %sa : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT:      %2 = molten.rotate_half %1 : tensor<4x8xf32>
// CHECK-NEXT:      kernel.yield %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "fused_pointwise"
// CHECK-GENERIC-NEXT:    ^bb0(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>):
// CHECK-GENERIC-NEXT:      %y, %z = "kernel.fused"(%x, %b, %s) <{kind = #kernel<kind pointwise>}> ({
// CHECK-GENERIC-NEXT:      ^bb0(%xa: tensor<4x8xf32>, %ba: tensor<8xf32>, %sa: tensor<f32>):
// CHECK-GENERIC-NEXT:        %0 = "molten.add"(%xa, %ba) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT:        %1 = "molten.mul"(%0, %sa) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT:        %2 = "molten.rotate_half"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT:        "kernel.yield"(%1, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> ()
// CHECK-GENERIC-NEXT:      }) : (tensor<4x8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-GENERIC-NEXT:      "func.return"(%y, %z) : (tensor<4x8xf32>, tensor<4x8xf32>) -> ()

// -----

// A row_reduce group (an f16 rms_norm that also writes its mean out) with a
// schedule of every integer field, written in another order than the
// printed one, and no tile; two outputs of different shapes and types.
func.func @fused_row_reduce(%x: tensor<16x64xf16>, %w: tensor<64xf16>) -> (tensor<16x64xf16>, tensor<16x1xf32>) {
  %y, %mean = kernel.fused row_reduce schedule <row_reduce, vector = 2, block = 32, elements_per_thread = 2, rows_per_block = 4> (%x, %w) : (tensor<16x64xf16>, tensor<64xf16>) -> (tensor<16x64xf16>, tensor<16x1xf32>) {
  ^bb0(%xa: tensor<16x64xf16>, %wa: tensor<64xf16>):
    %eps = molten.constant dense<1.000000e-06> : tensor<f32>
    %xf = molten.cast %xa : tensor<16x64xf16> to tensor<16x64xf32>
    %wf = molten.cast %wa : tensor<64xf16> to tensor<64xf32>
    %sq = molten.square %xf : tensor<16x64xf32>
    %m = molten.reduce_mean %sq axes = [1] keepdim : tensor<16x64xf32> -> tensor<16x1xf32>
    %a = molten.add %m, %eps : (tensor<16x1xf32>, tensor<f32>) -> tensor<16x1xf32>
    %r = molten.rsqrt %a : tensor<16x1xf32>
    %n = molten.mul %xf, %r : (tensor<16x64xf32>, tensor<16x1xf32>) -> tensor<16x64xf32>
    %o = molten.mul %n, %wf : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
    %oh = molten.cast %o : tensor<16x64xf32> to tensor<16x64xf16>
    kernel.yield %oh, %m : tensor<16x64xf16>, tensor<16x1xf32>
  }
  func.return %y, %mean : tensor<16x64xf16>, tensor<16x1xf32>
}

// CHECK-LABEL: func.func @fused_row_reduce(%x: tensor<16x64xf16>, %w: tensor<64xf16>) -> (tensor<16x64xf16>, tensor<16x1xf32>) {
// CHECK-NEXT:    %y, %mean = kernel.fused row_reduce schedule <row_reduce, block = 32, rows_per_block = 4, vector = 2, elements_per_thread = 2>(%x, %w) : (tensor<16x64xf16>, tensor<64xf16>) -> (tensor<16x64xf16>, tensor<16x1xf32>) {
// CHECK-NEXT:    ^bb0(%xa: tensor<16x64xf16>, %wa: tensor<64xf16>):
// CHECK-NEXT:      %eps = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:      %xf = molten.cast %xa : tensor<16x64xf16> to tensor<16x64xf32>
// CHECK-NEXT:      %wf = molten.cast %wa : tensor<64xf16> to tensor<64xf32>
// CHECK-NEXT:      %sq = molten.square %xf : tensor<16x64xf32>
// CHECK-NEXT:      %m = molten.reduce_mean %sq axes = [1] keepdim : tensor<16x64xf32> -> tensor<16x1xf32>
// CHECK-NEXT:      %a = molten.add %m, %eps : (tensor<16x1xf32>, tensor<f32>) -> tensor<16x1xf32>
// CHECK-NEXT:      %r = molten.rsqrt %a : tensor<16x1xf32>
// CHECK-NEXT:      %n = molten.mul %xf, %r : (tensor<16x64xf32>, tensor<16x1xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:      %o = molten.mul %n, %wf : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT:      %oh = molten.cast %o : tensor<16x64xf32> to tensor<16x64xf16>
// CHECK-NEXT:      kernel.yield %oh, %m : tensor<16x64xf16>, tensor<16x1xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y, %mean : tensor<16x64xf16>, tensor<16x1xf32>
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "fused_row_reduce"
// CHECK-GENERIC-NEXT:    ^bb0(%x: tensor<16x64xf16>, %w: tensor<64xf16>):
// CHECK-GENERIC-NEXT:      %y, %mean = "kernel.fused"(%x, %w) <{kind = #kernel<kind row_reduce>, schedule = #kernel.schedule<row_reduce, block = 32, rows_per_block = 4, vector = 2, elements_per_thread = 2>}> ({
// CHECK-GENERIC-NEXT:      ^bb0(%xa: tensor<16x64xf16>, %wa: tensor<64xf16>):
// CHECK-GENERIC-NEXT:        %eps = "molten.constant"() <{value = dense<1.000000e-06> : tensor<f32>}> : () -> tensor<f32>
// CHECK-GENERIC:             "kernel.yield"(%oh, %m) : (tensor<16x64xf16>, tensor<16x1xf32>) -> ()
// CHECK-GENERIC-NEXT:      }) : (tensor<16x64xf16>, tensor<64xf16>) -> (tensor<16x64xf16>, tensor<16x1xf32>)
// CHECK-GENERIC-NEXT:      "func.return"(%y, %mean) : (tensor<16x64xf16>, tensor<16x1xf32>) -> ()

// -----

// A gemm group (a batched matmul with its bias + gelu epilogue) whose
// schedule (gemm_simt) has a block and a tile, its only fields.
func.func @fused_gemm(%a: tensor<2x16x64xbf16>, %b: tensor<32x64xbf16>, %bias: tensor<32xbf16>) -> tensor<2x16x32xbf16> {
  %y = kernel.fused gemm schedule <gemm_simt, block = 256, tile = [64, 64, 16]> (%a, %b, %bias) : (tensor<2x16x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>) -> tensor<2x16x32xbf16> {
  ^bb0(%aa: tensor<2x16x64xbf16>, %ba: tensor<32x64xbf16>, %ca: tensor<32xbf16>):
    %mm = molten.matmul %aa, %ba transpose_b : (tensor<2x16x64xbf16>, tensor<32x64xbf16>) -> tensor<2x16x32xbf16>
    %add = molten.add %mm, %ca : (tensor<2x16x32xbf16>, tensor<32xbf16>) -> tensor<2x16x32xbf16>
    %g = molten.gelu %add approximate = "tanh" : tensor<2x16x32xbf16>
    kernel.yield %g : tensor<2x16x32xbf16>
  }
  func.return %y : tensor<2x16x32xbf16>
}

// CHECK-LABEL: func.func @fused_gemm(%a: tensor<2x16x64xbf16>, %b: tensor<32x64xbf16>, %bias: tensor<32xbf16>) -> tensor<2x16x32xbf16> {
// CHECK-NEXT:    %y = kernel.fused gemm schedule <gemm_simt, block = 256, tile = [64, 64, 16]>(%a, %b, %bias) : (tensor<2x16x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>) -> tensor<2x16x32xbf16> {
// CHECK-NEXT:    ^bb0(%aa: tensor<2x16x64xbf16>, %ba: tensor<32x64xbf16>, %ca: tensor<32xbf16>):
// CHECK-NEXT:      %mm = molten.matmul %aa, %ba transpose_b : (tensor<2x16x64xbf16>, tensor<32x64xbf16>) -> tensor<2x16x32xbf16>
// CHECK-NEXT:      %add = molten.add %mm, %ca : (tensor<2x16x32xbf16>, tensor<32xbf16>) -> tensor<2x16x32xbf16>
// CHECK-NEXT:      %g = molten.gelu %add approximate = "tanh" : tensor<2x16x32xbf16>
// CHECK-NEXT:      kernel.yield %g : tensor<2x16x32xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<2x16x32xbf16>
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "fused_gemm"
// CHECK-GENERIC-NEXT:    ^bb0(%a: tensor<2x16x64xbf16>, %b: tensor<32x64xbf16>, %bias: tensor<32xbf16>):
// CHECK-GENERIC-NEXT:      %y = "kernel.fused"(%a, %b, %bias) <{kind = #kernel<kind gemm>, schedule = #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>}> ({
// CHECK-GENERIC-NEXT:      ^bb0(%aa: tensor<2x16x64xbf16>, %ba: tensor<32x64xbf16>, %ca: tensor<32xbf16>):
// CHECK-GENERIC-NEXT:        %mm = "molten.matmul"(%aa, %ba) <{transpose_b}> : (tensor<2x16x64xbf16>, tensor<32x64xbf16>) -> tensor<2x16x32xbf16>
// CHECK-GENERIC-NEXT:        %add = "molten.add"(%mm, %ca) : (tensor<2x16x32xbf16>, tensor<32xbf16>) -> tensor<2x16x32xbf16>
// CHECK-GENERIC-NEXT:        %g = "molten.gelu"(%add) <{approximate = "tanh"}> : (tensor<2x16x32xbf16>) -> tensor<2x16x32xbf16>
// CHECK-GENERIC-NEXT:        "kernel.yield"(%g) : (tensor<2x16x32xbf16>) -> ()
// CHECK-GENERIC-NEXT:      }) : (tensor<2x16x64xbf16>, tensor<32x64xbf16>, tensor<32xbf16>) -> tensor<2x16x32xbf16>

// -----

// An attention group, with what fuse-attention matched (q, k and v by
// position, the query group, causal) and a schedule of every field of its
// family, written in another order than the printed one.
func.func @fused_attention(%q: tensor<8x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x32xf16>) -> tensor<8x32xf16> {
  %o = kernel.fused attention matched #kernel.attention_match<causal, value = 2, key = 1, query = 0, group = 1> schedule <attention, pack = 2, mma_warps = 4, stages = 3, warp = [64, 32], tile = [64, 16, 64], split = 2, block = 128> (%q, %k, %v) : (tensor<8x64xf16>, tensor<16x64xf16>, tensor<16x32xf16>) -> tensor<8x32xf16> {
  ^bb0(%qa: tensor<8x64xf16>, %ka: tensor<16x64xf16>, %va: tensor<16x32xf16>):
    %q32 = molten.cast %qa : tensor<8x64xf16> to tensor<8x64xf32>
    %k32 = molten.cast %ka : tensor<16x64xf16> to tensor<16x64xf32>
    %v32 = molten.cast %va : tensor<16x32xf16> to tensor<16x32xf32>
    %s = molten.matmul %q32, %k32 transpose_b : (tensor<8x64xf32>, tensor<16x64xf32>) -> tensor<8x16xf32>
    %e = molten.exp %s : tensor<8x16xf32>
    %l = molten.reduce_sum %e axes = [1] keepdim : tensor<8x16xf32> -> tensor<8x1xf32>
    %p = molten.div %e, %l : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    %r = molten.matmul %p, %v32 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %r16 = molten.cast %r : tensor<8x32xf32> to tensor<8x32xf16>
    kernel.yield %r16 : tensor<8x32xf16>
  }
  func.return %o : tensor<8x32xf16>
}

// CHECK-LABEL: func.func @fused_attention(%q: tensor<8x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x32xf16>) -> tensor<8x32xf16> {
// CHECK-NEXT:    %o = kernel.fused attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1, causal> schedule <attention, block = 128, split = 2, tile = [64, 16, 64], warp = [64, 32], stages = 3, mma_warps = 4, pack = 2>(%q, %k, %v) : (tensor<8x64xf16>, tensor<16x64xf16>, tensor<16x32xf16>) -> tensor<8x32xf16> {
// CHECK-NEXT:    ^bb0(%qa: tensor<8x64xf16>, %ka: tensor<16x64xf16>, %va: tensor<16x32xf16>):
// CHECK-NEXT:      %q32 = molten.cast %qa : tensor<8x64xf16> to tensor<8x64xf32>
// CHECK-NEXT:      %k32 = molten.cast %ka : tensor<16x64xf16> to tensor<16x64xf32>
// CHECK-NEXT:      %v32 = molten.cast %va : tensor<16x32xf16> to tensor<16x32xf32>
// CHECK-NEXT:      %s = molten.matmul %q32, %k32 transpose_b : (tensor<8x64xf32>, tensor<16x64xf32>) -> tensor<8x16xf32>
// CHECK-NEXT:      %e = molten.exp %s : tensor<8x16xf32>
// CHECK-NEXT:      %l = molten.reduce_sum %e axes = [1] keepdim : tensor<8x16xf32> -> tensor<8x1xf32>
// CHECK-NEXT:      %p = molten.div %e, %l : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
// CHECK-NEXT:      %r = molten.matmul %p, %v32 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT:      %r16 = molten.cast %r : tensor<8x32xf32> to tensor<8x32xf16>
// CHECK-NEXT:      kernel.yield %r16 : tensor<8x32xf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %o : tensor<8x32xf16>
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "fused_attention", function_type = (tensor<8x64xf16>, tensor<16x64xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%q: tensor<8x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x32xf16>):
// CHECK-GENERIC-NEXT:    %o = "kernel.fused"(%q, %k, %v) <{kind = #kernel<kind attention>, matched = #kernel.attention_match<query = 0, key = 1, value = 2, group = 1, causal>, schedule = #kernel.schedule<attention, block = 128, split = 2, tile = [64, 16, 64], warp = [64, 32], stages = 3, mma_warps = 4, pack = 2>}> ({
// CHECK-GENERIC-NEXT:    ^bb0(%qa: tensor<8x64xf16>, %ka: tensor<16x64xf16>, %va: tensor<16x32xf16>):
// CHECK-GENERIC-NEXT:      %q32 = "molten.cast"(%qa) : (tensor<8x64xf16>) -> tensor<8x64xf32>
// CHECK-GENERIC-NEXT:      %k32 = "molten.cast"(%ka) : (tensor<16x64xf16>) -> tensor<16x64xf32>
// CHECK-GENERIC-NEXT:      %v32 = "molten.cast"(%va) : (tensor<16x32xf16>) -> tensor<16x32xf32>
// CHECK-GENERIC-NEXT:      %s = "molten.matmul"(%q32, %k32) <{transpose_b}> : (tensor<8x64xf32>, tensor<16x64xf32>) -> tensor<8x16xf32>
// CHECK-GENERIC-NEXT:      %e = "molten.exp"(%s) : (tensor<8x16xf32>) -> tensor<8x16xf32>
// CHECK-GENERIC-NEXT:      %l = "molten.reduce_sum"(%e) <{axes = array<i64: 1>, keepdim}> : (tensor<8x16xf32>) -> tensor<8x1xf32>
// CHECK-GENERIC-NEXT:      %p = "molten.div"(%e, %l) : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
// CHECK-GENERIC-NEXT:      %r = "molten.matmul"(%p, %v32) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
// CHECK-GENERIC-NEXT:      %r16 = "molten.cast"(%r) : (tensor<8x32xf32>) -> tensor<8x32xf16>
// CHECK-GENERIC-NEXT:      "kernel.yield"(%r16) : (tensor<8x32xf16>) -> ()
// CHECK-GENERIC-NEXT:    }) : (tensor<8x64xf16>, tensor<16x64xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>

// -----

// Zero inputs: a kernel that only generates values (no block arguments, so
// no ^bb0); and a kernel with neither inputs nor outputs, its kernel.yield
// empty.
func.func @fused_no_inputs() -> tensor<8x8xf32> {
  %m = kernel.fused pointwise () : () -> tensor<8x8xf32> {
    %c = molten.causal_mask : tensor<8x8xf32>
    %s = molten.constant dense<2.000000e+00> : tensor<f32>
    %r = molten.mul %c, %s : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
    kernel.yield %r : tensor<8x8xf32>
  }
  kernel.fused pointwise schedule <pointwise, block = 1> () : () -> () {
    kernel.yield
  }
  func.return %m : tensor<8x8xf32>
}

// CHECK-LABEL: func.func @fused_no_inputs() -> tensor<8x8xf32> {
// CHECK-NEXT:    %m = kernel.fused pointwise() : () -> tensor<8x8xf32> {
// CHECK-NEXT:      %c = molten.causal_mask : tensor<8x8xf32>
// CHECK-NEXT:      %s = molten.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:      %r = molten.mul %c, %s : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
// CHECK-NEXT:      kernel.yield %r : tensor<8x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    kernel.fused pointwise schedule <pointwise, block = 1, vector = 1, elements_per_thread = 1>() : () -> () {
// CHECK-NEXT:      kernel.yield{{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %m : tensor<8x8xf32>
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "fused_no_inputs", function_type = () -> tensor<8x8xf32>}> ({
// CHECK-GENERIC-NEXT:    %m = "kernel.fused"() <{kind = #kernel<kind pointwise>}> ({
// CHECK-GENERIC-NEXT:      %c = "molten.causal_mask"() : () -> tensor<8x8xf32>
// CHECK-GENERIC-NEXT:      %s = "molten.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
// CHECK-GENERIC-NEXT:      %r = "molten.mul"(%c, %s) : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
// CHECK-GENERIC-NEXT:      "kernel.yield"(%r) : (tensor<8x8xf32>) -> ()
// CHECK-GENERIC-NEXT:    }) : () -> tensor<8x8xf32>
// CHECK-GENERIC-NEXT:    "kernel.fused"() <{kind = #kernel<kind pointwise>, schedule = #kernel.schedule<pointwise, block = 1, vector = 1, elements_per_thread = 1>}> ({
// CHECK-GENERIC-NEXT:      "kernel.yield"() : () -> ()
// CHECK-GENERIC-NEXT:    }) : () -> ()
// CHECK-GENERIC-NEXT:    "func.return"(%m) : (tensor<8x8xf32>) -> ()

// -----

// Outlined kernels: one with a schedule and fused_ops (a property, printed
// in the attribute dictionary after a discardable attribute), one with
// neither and two outputs, one with no inputs and no outputs; and the
// launches that call them, in order, one without results.
kernel.func @row_kernel(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 1, vector = 1, elements_per_thread = 1> attributes {fused_ops = ["reduce_max", "sub", "mul"], note = "hand-written"} {
  %m = molten.reduce_max %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %d = molten.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %o = molten.mul %d, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  kernel.yield %o : tensor<4x8xf32>
}
kernel.func @pair_kernel(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) pointwise {
  %e = molten.exp %x : tensor<4x8xf32>
  kernel.yield %e, %x : tensor<4x8xf32>, tensor<4x8xf32>
}
kernel.func @empty_kernel() -> () pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 1, elements_per_thread = 1> {
  kernel.yield
}
func.func @host(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = kernel.launch @row_kernel(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1, %2 = kernel.launch @pair_kernel(%0) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  kernel.launch @empty_kernel() : () -> ()
  func.return %2 : tensor<4x8xf32>
}

// CHECK-LABEL: kernel.func @row_kernel(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 1, vector = 1, elements_per_thread = 1> attributes {note = "hand-written", fused_ops = ["reduce_max", "sub", "mul"]} {
// CHECK-NEXT:    %m = molten.reduce_max %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %d = molten.sub %x, %m : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %o = molten.mul %d, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    kernel.yield %o : tensor<4x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @pair_kernel(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) pointwise {
// CHECK-NEXT:    %e = molten.exp %x : tensor<4x8xf32>
// CHECK-NEXT:    kernel.yield %e, %x : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @empty_kernel() -> () pointwise schedule #kernel.schedule<pointwise, block = 64, vector = 1, elements_per_thread = 1> {
// CHECK-NEXT:    kernel.yield{{$}}
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @host(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %0 = kernel.launch @row_kernel(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %1, %2 = kernel.launch @pair_kernel(%0) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    kernel.launch @empty_kernel() : () -> ()
// CHECK-NEXT:    func.return %2 : tensor<4x8xf32>
// CHECK-NEXT:  }

// fused_ops is a property (<{...}>), the other attribute a discardable one.
// CHECK-GENERIC-LABEL: "kernel.func"() <{sym_name = "row_kernel", function_type = (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>, kind = #kernel<kind row_reduce>, schedule = #kernel.schedule<row_reduce, block = 32, rows_per_block = 1, vector = 1, elements_per_thread = 1>, fused_ops = ["reduce_max", "sub", "mul"]}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%x: tensor<4x8xf32>, %w: tensor<8xf32>):
// CHECK-GENERIC-NEXT:    %m = "molten.reduce_max"(%x) <{axes = array<i64: 1>, keepdim}> : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-GENERIC-NEXT:    %d = "molten.sub"(%x, %m) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT:    %o = "molten.mul"(%d, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT:    "kernel.yield"(%o) : (tensor<4x8xf32>) -> ()
// CHECK-GENERIC-NEXT:  }) {note = "hand-written"} : () -> ()
// CHECK-GENERIC-NEXT:  "kernel.func"() <{sym_name = "pair_kernel", function_type = (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>), kind = #kernel<kind pointwise>}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%x: tensor<4x8xf32>):
// CHECK-GENERIC-NEXT:    %e = "molten.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT:    "kernel.yield"(%e, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> ()
// CHECK-GENERIC-NEXT:  }) : () -> ()
// CHECK-GENERIC-NEXT:  "kernel.func"() <{sym_name = "empty_kernel", function_type = () -> (), kind = #kernel<kind pointwise>, schedule = #kernel.schedule<pointwise, block = 64, vector = 1, elements_per_thread = 1>}> ({
// CHECK-GENERIC-NEXT:    "kernel.yield"() : () -> ()
// CHECK-GENERIC-NEXT:  }) : () -> ()
// CHECK-GENERIC-NEXT:  "func.func"() <{sym_name = "host", function_type = (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>}> ({
// CHECK-GENERIC-NEXT:  ^bb0(%x: tensor<4x8xf32>, %w: tensor<8xf32>):
// CHECK-GENERIC-NEXT:    %0 = "kernel.launch"(%x, %w) <{callee = @row_kernel}> : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT:    %1, %2 = "kernel.launch"(%0) <{callee = @pair_kernel}> : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-GENERIC-NEXT:    "kernel.launch"() <{callee = @empty_kernel}> : () -> ()
// CHECK-GENERIC-NEXT:    "func.return"(%2) : (tensor<4x8xf32>) -> ()

// -----

// #kernel.schedule as a plain attribute: a pointwise one of `block` only
// (its other fields print at their default, 1); a GEMV's every field; a
// row reduction's fields in another order (`split` printed when above 1);
// a scan's; the three tensor-core gemms' (wgmma's mma_warps = 4 implied by
// its family, not printed).
func.func @schedules() attributes {a = #kernel.schedule<pointwise, block = 1>, b = #kernel.schedule<gemv, block = 1024, vector = 4, tile = [4, 128, 4096], stages = 2, k_lanes = 8>, c = #kernel.schedule<row_reduce, split = 6, elements_per_thread = 5, vector = 7, rows_per_block = 11, block = 22>, d = #kernel.schedule<scan, block = 2>, e = #kernel.schedule<gemm_mma, stages = 3, warp = [64, 64], tile = [128, 128, 32], block = 128>, f = #kernel.schedule<gemm_tma, cluster = 2, persistent = 132, stages = 4, warp = [64, 256], tile = [128, 256, 64], block = 384>, g = #kernel.schedule<gemm_wgmma, block = 256, split = 4, tile = [128, 128, 64], warp = [64, 128], stages = 4>} {
  func.return
}

// CHECK-LABEL: func.func @schedules() attributes {
// CHECK-SAME:    a = #kernel.schedule<pointwise, block = 1, vector = 1, elements_per_thread = 1>,
// CHECK-SAME:    b = #kernel.schedule<gemv, block = 1024, vector = 4, tile = [4, 128, 4096], stages = 2, k_lanes = 8>,
// CHECK-SAME:    c = #kernel.schedule<row_reduce, block = 22, rows_per_block = 11, vector = 7, elements_per_thread = 5, split = 6>,
// CHECK-SAME:    d = #kernel.schedule<scan, block = 2, rows_per_block = 1, vector = 1, elements_per_thread = 1>,
// CHECK-SAME:    e = #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 3>,
// CHECK-SAME:    f = #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 132, cluster = 2>,
// CHECK-SAME:    g = #kernel.schedule<gemm_wgmma, block = 256, split = 4, tile = [128, 128, 64], warp = [64, 128], stages = 4>} {
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "schedules", function_type = () -> ()}> ({
// CHECK-GENERIC-NEXT:    "func.return"() : () -> ()
// CHECK-GENERIC-NEXT:  }) {a = #kernel.schedule<pointwise, block = 1, vector = 1, elements_per_thread = 1>, b = #kernel.schedule<gemv, block = 1024, vector = 4, tile = [4, 128, 4096], stages = 2, k_lanes = 8>, c = #kernel.schedule<row_reduce, block = 22, rows_per_block = 11, vector = 7, elements_per_thread = 5, split = 6>, d = #kernel.schedule<scan, block = 2, rows_per_block = 1, vector = 1, elements_per_thread = 1>, e = #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 3>, f = #kernel.schedule<gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], stages = 4, persistent = 132, cluster = 2>, g = #kernel.schedule<gemm_wgmma, block = 256, split = 4, tile = [128, 128, 64], warp = [64, 128], stages = 4>} : () -> ()

// -----

// A tensor-core gemm's schedule (warp tile and stages, written in another
// order: printed after the tile) and the #kernel.tiling the tile pass
// derives from it, printed after the schedule of a kernel.func and in the
// generic form as its `tiling` property; a plain tiling attribute without
// a warp tile (not printed) and with partial loops; one with split-K
// (`split`, printed last, only above 1).
kernel.func @tiled(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_mma, stages = 4, warp = [64, 64], tile = [128, 128, 32], block = 128> tiling #kernel.tiling<rhs = [32, 128, 136], lhs = [128, 32, 40], partial = [], k_steps = 2, stages = 4, fragment = [16, 8, 16], warp = [64, 64], block = [128, 128, 32], grid = [2, 2, 1]> attributes {fused_ops = ["matmul"]} {
  %m = molten.matmul %a, %b : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  kernel.yield %m : tensor<256x256xf16>
}
func.func @tilings() attributes {t = #kernel.tiling<grid = [2, 2, 3], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 2, partial = [m, n, k], lhs = [16, 64, 64], rhs = [64, 16, 16]>, split_k = #kernel.tiling<split = 3, grid = [4, 1, 3], block = [64, 64, 64], warp = [64, 64], fragment = [64, 64, 16], stages = 8, k_steps = 16, partial = [m, k], lhs = [64, 64, 64], rhs = [64, 64, 64]>} {
  func.return
}

// CHECK-LABEL: kernel.func @tiled(%a: tensor<256x64xf16>, %b: tensor<64x256xf16>) -> (tensor<256x256xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 2, partial = [], lhs = [128, 32, 40], rhs = [32, 128, 136]> attributes {fused_ops = ["matmul"]} {
// CHECK-NEXT:    %m = molten.matmul %a, %b : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
// CHECK-NEXT:    kernel.yield %m : tensor<256x256xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @tilings() attributes {t = #kernel.tiling<grid = [2, 2, 3], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 2, partial = [m, n, k], lhs = [16, 64, 64], rhs = [64, 16, 16]>, split_k = #kernel.tiling<grid = [4, 1, 3], block = [64, 64, 64], warp = [64, 64], fragment = [64, 64, 16], stages = 8, k_steps = 16, partial = [m, k], lhs = [64, 64, 64], rhs = [64, 64, 64], split = 3>} {

// CHECK-GENERIC-LABEL: "kernel.func"() <{sym_name = "tiled", function_type = (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>, kind = #kernel<kind gemm>, schedule = #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], stages = 4>, tiling = #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 32], warp = [64, 64], fragment = [16, 8, 16], stages = 4, k_steps = 2, partial = [], lhs = [128, 32, 40], rhs = [32, 128, 136]>, fused_ops = ["matmul"]}> ({

// -----

// A gemm kernel over a named M with a schedule per size class (`variants`,
// the last open-ended) instead of one schedule.
kernel.func @classes(%a: tensor<?x8xf32, ["T"]>, %b: tensor<8x16xf32>) -> (tensor<?x16xf32, ["T"]>) gemm variants [#kernel.variant<T <= 8, #kernel.schedule<gemv, block = 64, vector = 4, tile = [8, 16, 8], stages = 4, k_lanes = 16>>, #kernel.variant<T, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>] {
  %m = molten.matmul %a, %b : (tensor<?x8xf32, ["T"]>, tensor<8x16xf32>) -> tensor<?x16xf32, ["T"]>
  kernel.yield %m : tensor<?x16xf32, ["T"]>
}

// CHECK-LABEL: kernel.func @classes(%a: tensor<?x8xf32, ["T"]>, %b: tensor<8x16xf32>) -> (tensor<?x16xf32, ["T"]>) gemm variants [#kernel.variant<T <= 8, #kernel.schedule<gemv, block = 64, vector = 4, tile = [8, 16, 8], stages = 4, k_lanes = 16>>, #kernel.variant<T, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>] {
// CHECK-GENERIC-LABEL: "kernel.func"() <{sym_name = "classes", {{.*}}variants = [#kernel.variant<T <= 8, #kernel.schedule<gemv, block = 64, vector = 4, tile = [8, 16, 8], stages = 4, k_lanes = 16>>, #kernel.variant<T, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>]}> ({
