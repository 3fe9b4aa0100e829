// RUN: molten-opt %s --split-input-file --verify-diagnostics > %t
// RUN: filecheck %s < %t
// RUN: filecheck %s --check-prefix=NOMODULE < %t

// One case per verifier rule of the kernel dialect's ops. Each CHECK line
// matches the whole located diagnostic, `file:LINE:COL: error: message`, of
// the op right after it. The NOMODULE check makes sure that every case fails: no
// module is printed. The #kernel.schedule attribute is verified as it is
// built, while parsing: its errors, and the dialect's parse errors, are in
// parse-errors.mlir.
// NOMODULE-NOT: builtin.module

// kernel.fused: the yielded type differs from the declared result type
func.func @fused_yield_type(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: kernel.fused: kernel.yield gives (tensor<4x8xf32>) but the op returns (tensor<4x8xf16>){{$}}
// CHECK-NEXT: {{^}}  %0 = kernel.fused pointwise (%x) : (tensor<4x8xf32>) -> tensor<4x8xf16> {{[{]$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  %0 = kernel.fused pointwise (%x) : (tensor<4x8xf32>) -> tensor<4x8xf16> {
  ^bb0(%a: tensor<4x8xf32>):
    kernel.yield %a : tensor<4x8xf32>
  }
  func.return
}

// -----

// kernel.fused: fewer values yielded than results
func.func @fused_yield_count(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: kernel.yield gives () but the op returns (tensor<4x8xf32>){{$}}
  %0 = kernel.fused row_reduce (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    kernel.yield
  }
  func.return
}

// -----

// kernel.fused: more values yielded than results, of two shapes
func.func @fused_yield_extra(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: kernel.yield gives (tensor<4x8xf32>, tensor<4x1xf32>) but the op returns (tensor<4x8xf32>){{$}}
  %0 = kernel.fused row_reduce (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %s = molten.reduce_sum %a axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    kernel.yield %a, %s : tensor<4x8xf32>, tensor<4x1xf32>
  }
  func.return
}

// -----

// kernel.fused: a block argument of another type than its input
func.func @fused_arg_type(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: block argument types must match the inputs{{$}}
  %0 = kernel.fused pointwise (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<8x4xf32>):
    %b = molten.reshape %a : tensor<8x4xf32> -> tensor<4x8xf32>
    kernel.yield %b : tensor<4x8xf32>
  }
  func.return
}

// -----

// kernel.fused: an input without a block argument
func.func @fused_arg_count(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: block argument types must match the inputs{{$}}
  %0 = kernel.fused pointwise (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    %b = molten.constant dense<1.0> : tensor<4x8xf32>
    kernel.yield %b : tensor<4x8xf32>
  }
  func.return
}

// -----

// kernel.fused: a body that does not end in kernel.yield
func.func @fused_no_yield(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: the body must end in kernel.yield{{$}}
  kernel.fused pointwise (%x) : (tensor<4x8xf32>) -> () {
  ^bb0(%a: tensor<4x8xf32>):
    %b = molten.exp %a : tensor<4x8xf32>
  }
  func.return
}

// -----

// kernel.fused: a kernel.yield that is not the last op
func.func @fused_yield_not_last(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: the body must end in kernel.yield{{$}}
  %0 = kernel.fused pointwise (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    kernel.yield %a : tensor<4x8xf32>
    %b = molten.exp %a : tensor<4x8xf32>
  }
  func.return
}

// -----

// kernel.fused is isolated from above: its body reads values through its
// inputs only
func.func @fused_not_isolated(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: Operation using value defined out of its IsolatedFromAbove parent: ExpOp(%e = molten.exp %x : tensor<4x8xf32>){{$}}
  %0 = kernel.fused pointwise () : () -> tensor<4x8xf32> {
    %e = molten.exp %x : tensor<4x8xf32>
    kernel.yield %e : tensor<4x8xf32>
  }
  func.return
}

// -----

// kernel.fused: a body of two blocks (the generic form can write one)
func.func @fused_two_blocks(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: Region 'body' at position 0 expected a single block, but got 2 blocks{{$}}
  %0 = "kernel.fused"(%x) <{kind = #kernel<kind pointwise>}> ({
  ^bb0(%a: tensor<4x8xf32>):
    "kernel.yield"(%a) : (tensor<4x8xf32>) -> ()
  ^bb1:
    "kernel.yield"(%a) : (tensor<4x8xf32>) -> ()
  }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// kernel.fused: no kind
func.func @fused_no_kind() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: property 'kind' expected in operation 'kernel.fused'{{$}}
  "kernel.fused"() ({
    "kernel.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// kernel.fused: a kind that is not a #kernel.kind
func.func @fused_kind_not_enum() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 1 : i64 should be of base attribute kernel.kind{{$}}
  "kernel.fused"() <{kind = 1 : i64}> ({
    "kernel.yield"() : () -> ()
  }) : () -> ()
  func.return
}

// -----

// kernel.func: block arguments other than the function type's inputs (the
// custom form takes the inputs from the arguments; the generic form can
// disagree)
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @k: block argument types must match the function type's inputs{{$}}
"kernel.func"() <{sym_name = "k", function_type = (tensor<4x8xf32>) -> tensor<4x8xf32>, kind = #kernel<kind pointwise>}> ({
^bb0(%x: tensor<8x4xf32>):
  %b = "molten.reshape"(%x) : (tensor<8x4xf32>) -> tensor<4x8xf32>
  "kernel.yield"(%b) : (tensor<4x8xf32>) -> ()
}) : () -> ()

// -----

// kernel.func: one block argument too many
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @k2: block argument types must match the function type's inputs{{$}}
"kernel.func"() <{sym_name = "k2", function_type = (tensor<4xf32>) -> tensor<4xf32>, kind = #kernel<kind gemm>}> ({
^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
  "kernel.yield"(%x) : (tensor<4xf32>) -> ()
}) : () -> ()

// -----

// kernel.func: the yielded type differs from the function type's result
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:1: error: kernel.func: kernel.yield gives (tensor<4x8xf32>) but the op returns (tensor<4x8xf16>){{$}}
// CHECK-NEXT: {{^}}kernel.func @yield_type(%x: tensor<4x8xf32>) -> (tensor<4x8xf16>) pointwise {{[{]$}}
// CHECK-NEXT: {{^}}^{{$}}
kernel.func @yield_type(%x: tensor<4x8xf32>) -> (tensor<4x8xf16>) pointwise {
  kernel.yield %x : tensor<4x8xf32>
}

// -----

// kernel.func: results declared, none yielded
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func: kernel.yield gives () but the op returns (tensor<4xf32>, tensor<4xf32>){{$}}
kernel.func @yield_count(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) row_reduce {
  kernel.yield
}

// -----

// kernel.func: a body that does not end in kernel.yield
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func: the body must end in kernel.yield{{$}}
kernel.func @no_yield(%x: tensor<4xf32>) -> () pointwise {
  %e = molten.exp %x : tensor<4xf32>
}

// -----

// kernel.func: fused_ops must name ops with strings
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: 1 : i64 should be of base attribute string{{$}}
"kernel.func"() <{sym_name = "k", function_type = () -> (), kind = #kernel<kind pointwise>, fused_ops = [1 : i64]}> ({
  "kernel.yield"() : () -> ()
}) : () -> ()

// -----

// kernel.launch: no symbol of that name
func.func @launch_unknown(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: kernel.launch: @nope is not a kernel.func in this module{{$}}
// CHECK-NEXT: {{^}}  %0 = kernel.launch @nope(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  %0 = kernel.launch @nope(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// kernel.launch: the symbol is a func.func, not a kernel.func
func.func @graph(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  func.return %x : tensor<4x8xf32>
}
func.func @launch_func(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.launch: @graph is not a kernel.func in this module{{$}}
  %0 = kernel.launch @graph(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// kernel.launch: an input of another type than the kernel's
kernel.func @k(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise {
  kernel.yield %x : tensor<4x8xf32>
}
func.func @launch_input_type(%x: tensor<4x8xf16>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.launch: the types do not match @k: (tensor<4x8xf32>) -> tensor<4x8xf32>{{$}}
  %0 = kernel.launch @k(%x) : (tensor<4x8xf16>) -> tensor<4x8xf32>
  func.return
}

// -----

// kernel.launch: one input too many
kernel.func @k(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise {
  kernel.yield %x : tensor<4x8xf32>
}
func.func @launch_input_count(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.launch: the types do not match @k: (tensor<4x8xf32>) -> tensor<4x8xf32>{{$}}
  %0 = kernel.launch @k(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// kernel.launch: a result type other than the kernel's
kernel.func @k(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise {
  kernel.yield %x : tensor<4x8xf32>
}
func.func @launch_result_type(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.launch: the types do not match @k: (tensor<4x8xf32>) -> tensor<4x8xf32>{{$}}
  %0 = kernel.launch @k(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  func.return
}

// -----

// kernel.launch: one result too many
kernel.func @k(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise {
  kernel.yield %x : tensor<4x8xf32>
}
func.func @launch_result_count(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.launch: the types do not match @k: (tensor<4x8xf32>) -> tensor<4x8xf32>{{$}}
  %0, %1 = kernel.launch @k(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  func.return
}

// -----

// kernel.launch: a callee that is a string, not a symbol reference
func.func @launch_callee_string(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: "k" should be of base attribute symbol_ref{{$}}
  %0 = "kernel.launch"(%x) <{callee = "k"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// kernel.yield outside a kernel: in a func.func
func.func @yield_in_func(%x: tensor<4x8xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: 'kernel.yield' expects parent op to be one of 'kernel.fused', 'kernel.func'{{$}}
// CHECK-NEXT: {{^}}  kernel.yield %x : tensor<4x8xf32>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  kernel.yield %x : tensor<4x8xf32>
}

// -----

// kernel.yield at the top level of the module
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: 'kernel.yield' expects parent op to be one of 'kernel.fused', 'kernel.func'{{$}}
kernel.yield

// -----

// kernel.func: a tiling on a kernel that is not a gemm
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @tiled_pointwise: only gemm and attention kernels are tiled, not pointwise{{$}}
kernel.func @tiled_pointwise(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise schedule #kernel.schedule<pointwise, block = 256, vector = 1, elements_per_thread = 1> tiling #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 1, partial = [m, n, k], lhs = [64, 16, 16], rhs = [16, 64, 64]> {
  kernel.yield %x : tensor<4xf32>
}

// -----

// kernel.func: a schedule of another kind's family (a row reduction's on a
// gemm kernel)
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @gemm_row_schedule: a row_reduce schedule does not schedule a gemm kernel (its families: gemv, gemm_simt, gemm_mma, gemm_wgmma, gemm_tma){{$}}
kernel.func @gemm_row_schedule(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<row_reduce, block = 256, rows_per_block = 1, vector = 1, elements_per_thread = 1> {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}

// -----

// kernel.fused: a gemm family's schedule on a pointwise group
func.func @fused_gemm_schedule(%x: tensor<4xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: a gemm_simt schedule does not schedule a pointwise kernel (its families: pointwise){{$}}
  %0 = kernel.fused pointwise schedule <gemm_simt, block = 256, tile = [64, 64, 16]> (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    kernel.yield %a : tensor<4xf32>
  }
  func.return
}

// -----

// kernel.func: a gemm's tiling on an attention kernel
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @attention_gemm_tiling: an attention kernel's tiling is a #kernel.attention_tiling{{$}}
kernel.func @attention_gemm_tiling(%q: tensor<16x64xf16>) -> (tensor<16x64xf16>) attention matched #kernel.attention_match<query = 0, key = 0, value = 0, group = 1> schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 64], warp = [16, 64], stages = 2> tiling #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 64], fragment = [4, 4, 1], stages = 2, k_steps = 1, partial = [], lhs = [64, 64, 64], rhs = [64, 64, 64]> {
  %q32 = molten.cast %q : tensor<16x64xf16> to tensor<16x64xf32>
  %s = molten.matmul %q32, %q32 transpose_b : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x16xf32>
  %e = molten.exp %s : tensor<16x16xf32>
  %l = molten.reduce_sum %e axes = [1] keepdim : tensor<16x16xf32> -> tensor<16x1xf32>
  %p = molten.div %e, %l : (tensor<16x16xf32>, tensor<16x1xf32>) -> tensor<16x16xf32>
  %o = molten.matmul %p, %q32 : (tensor<16x16xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %out = molten.cast %o : tensor<16x64xf32> to tensor<16x64xf16>
  kernel.yield %out : tensor<16x64xf16>
}

// -----

// kernel.func: a tiling without a schedule
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @tiled_unscheduled: a tiling needs a schedule{{$}}
kernel.func @tiled_unscheduled(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm tiling #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 1, partial = [m, n, k], lhs = [64, 16, 16], rhs = [16, 64, 64]> {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}

// -----

// kernel.func: a tiling of another split-K than the schedule's
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @tiled_other_split: the tiling's split = 1 is not the schedule's split = 2{{$}}
kernel.func @tiled_other_split(%a: tensor<64x512xf16>, %b: tensor<512x64xf16>) -> (tensor<64x64xf16>) gemm schedule #kernel.schedule<gemm_wgmma, block = 128, split = 2, tile = [64, 64, 64], warp = [64, 64], stages = 4> tiling #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 64], warp = [64, 64], fragment = [64, 64, 16], stages = 4, k_steps = 8, partial = [], lhs = [64, 64, 64], rhs = [64, 64, 64]> {
  %m = molten.matmul %a, %b : (tensor<64x512xf16>, tensor<512x64xf16>) -> tensor<64x64xf16>
  kernel.yield %m : tensor<64x64xf16>
}

// -----

// kernel.func: a tiling of other tile sizes than the schedule's
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @tiled_other: the tiling's block = [64, 64, 16] is not the schedule's tile = [64, 64, 32]{{$}}
kernel.func @tiled_other(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 32]> tiling #kernel.tiling<grid = [1, 1, 1], block = [64, 64, 16], fragment = [4, 4, 1], stages = 1, k_steps = 1, partial = [m, n, k], lhs = [64, 16, 16], rhs = [16, 64, 64]> {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}

// -----

// kernel.func: variants whose bounds do not increase
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @variants_unordered: variants' bounds must increase, the last open-ended (no bound) or the most of its graph copy's sizes, not [8, 4, 0]{{$}}
kernel.func @variants_unordered(%a: tensor<?x8xf32, ["T"]>, %b: tensor<8x16xf32>) -> (tensor<?x16xf32, ["T"]>) gemm variants [#kernel.variant<T <= 8, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>, #kernel.variant<T <= 4, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>, #kernel.variant<T, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>] {
  %m = molten.matmul %a, %b : (tensor<?x8xf32, ["T"]>, tensor<8x16xf32>) -> tensor<?x16xf32, ["T"]>
  kernel.yield %m : tensor<?x16xf32, ["T"]>
}

// -----

// kernel.func: variants by a name none of its types has
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @variants_by_other: variants choose by one named dimension of the kernel's types (T), not S{{$}}
kernel.func @variants_by_other(%a: tensor<?x8xf32, ["T"]>, %b: tensor<8x16xf32>) -> (tensor<?x16xf32, ["T"]>) gemm variants [#kernel.variant<S, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>] {
  %m = molten.matmul %a, %b : (tensor<?x8xf32, ["T"]>, tensor<8x16xf32>) -> tensor<?x16xf32, ["T"]>
  kernel.yield %m : tensor<?x16xf32, ["T"]>
}

// -----

// kernel.func: variants and a schedule
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @variants_and_schedule: a kernel has a schedule (and tiling) or variants, not both{{$}}
kernel.func @variants_and_schedule(%a: tensor<?x8xf32, ["T"]>, %b: tensor<8x16xf32>) -> (tensor<?x16xf32, ["T"]>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> variants [#kernel.variant<T, #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>>] {
  %m = molten.matmul %a, %b : (tensor<?x8xf32, ["T"]>, tensor<8x16xf32>) -> tensor<?x16xf32, ["T"]>
  kernel.yield %m : tensor<?x16xf32, ["T"]>
}

// -----

// kernel.func: an attention kernel without what fuse-attention matched
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @attention_unmatched: an attention kernel needs its #kernel.attention_match<query = ..., key = ..., value = ..., group = ...> (fuse-attention records it){{$}}
kernel.func @attention_unmatched(%q: tensor<16x64xf16>) -> (tensor<16x64xf16>) attention {
  %q32 = molten.cast %q : tensor<16x64xf16> to tensor<16x64xf32>
  %s = molten.matmul %q32, %q32 transpose_b : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x16xf32>
  %e = molten.exp %s : tensor<16x16xf32>
  %l = molten.reduce_sum %e axes = [1] keepdim : tensor<16x16xf32> -> tensor<16x1xf32>
  %p = molten.div %e, %l : (tensor<16x16xf32>, tensor<16x1xf32>) -> tensor<16x16xf32>
  %o = molten.matmul %p, %q32 : (tensor<16x16xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %out = molten.cast %o : tensor<16x64xf32> to tensor<16x64xf16>
  kernel.yield %out : tensor<16x64xf16>
}

// -----

// kernel.func: an attention's value an input the kernel does not have
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @attention_value_missing: the attention's value is input 3, but the kernel has 1 inputs{{$}}
kernel.func @attention_value_missing(%q: tensor<16x64xf16>) -> (tensor<16x64xf16>) attention matched #kernel.attention_match<query = 0, key = 0, value = 3, group = 1> {
  %q32 = molten.cast %q : tensor<16x64xf16> to tensor<16x64xf32>
  %s = molten.matmul %q32, %q32 transpose_b : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x16xf32>
  %e = molten.exp %s : tensor<16x16xf32>
  %l = molten.reduce_sum %e axes = [1] keepdim : tensor<16x16xf32> -> tensor<16x1xf32>
  %p = molten.div %e, %l : (tensor<16x16xf32>, tensor<16x1xf32>) -> tensor<16x16xf32>
  %o = molten.matmul %p, %q32 : (tensor<16x16xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %out = molten.cast %o : tensor<16x64xf32> to tensor<16x64xf16>
  kernel.yield %out : tensor<16x64xf16>
}

// -----

// kernel.fused: an attention's query an f32 tensor
func.func @attention_f32_query(%q: tensor<16x64xf32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: the attention's query (input 0) is tensor<16x64xf32>, not an f16 or bf16 tensor of matrices{{$}}
  %0 = kernel.fused attention matched #kernel.attention_match<query = 0, key = 0, value = 0, group = 1> (%q) : (tensor<16x64xf32>) -> tensor<16x64xf32> {
  ^bb0(%a: tensor<16x64xf32>):
    %s = molten.matmul %a, %a transpose_b : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x16xf32>
    %o = molten.matmul %s, %a : (tensor<16x16xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
    kernel.yield %o : tensor<16x64xf32>
  }
  func.return
}

// -----

// kernel.func: an attention kernel of one matmul
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @attention_one_matmul: an attention kernel's body has two matmuls, q @ kᵀ and p @ v{{$}}
kernel.func @attention_one_matmul(%q: tensor<16x64xf16>) -> (tensor<16x16xf16>) attention matched #kernel.attention_match<query = 0, key = 0, value = 0, group = 1> {
  %s = molten.matmul %q, %q transpose_b : (tensor<16x64xf16>, tensor<16x64xf16>) -> tensor<16x16xf16>
  kernel.yield %s : tensor<16x16xf16>
}

// -----

// kernel.func: a gemm kernel whose op reads two matmuls, not recorded
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @gate_up_unrecorded: the gemm kernel's match is none, but its body's is #kernel.gemm_match<side_by_side>{{$}}
kernel.func @gate_up_unrecorded(%x: tensor<16x8xf32>, %wg: tensor<8x16xf32>, %wu: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm {
  %g = molten.matmul %x, %wg : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  %u = molten.matmul %x, %wu : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  %y = molten.mul %g, %u : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  kernel.yield %y : tensor<16x16xf32>
}

// -----

// kernel.func: a gemm kernel recorded as computing its lhs, which it reads
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @gemm_not_prologue: the gemm kernel's match is #kernel.gemm_match<prologue>, but its body's is none (one matmul or siblings one after another){{$}}
kernel.func @gemm_not_prologue(%a: tensor<16x8xf32>, %b: tensor<8x16xf32>) -> (tensor<16x16xf32>) gemm matched #kernel.gemm_match<prologue> {
  %m = molten.matmul %a, %b : (tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<16x16xf32>
  kernel.yield %m : tensor<16x16xf32>
}

// -----

// kernel.func: a match on a kernel that is neither gemm nor attention
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @pointwise_matched: only gemm and attention kernels record a match, not a pointwise kernel{{$}}
kernel.func @pointwise_matched(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise matched #kernel.gemm_match<side_by_side> {
  %n = molten.neg %x : tensor<4xf32>
  kernel.yield %n : tensor<4xf32>
}

// -----

// kernel.func: a row_reduce kernel that reduces nothing
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @row_reduce_without_reduction: a row_reduce kernel computes a reduction; its body has none{{$}}
kernel.func @row_reduce_without_reduction(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32> {
  %y = molten.neg %x : tensor<4x8xf32>
  kernel.yield %y : tensor<4x8xf32>
}

// -----

// kernel.fused: a scan kernel of two cumsums
func.func @two_scans(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: kernel.fused: a scan kernel computes one scan; its body has 2{{$}}
  %y = kernel.fused scan (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %c = molten.cumsum %a axis = 1 : tensor<4x8xf32>
    %d = molten.cumsum %c axis = 1 : tensor<4x8xf32>
    kernel.yield %d : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}

// -----

// kernel.func: a gemm kernel without a matmul
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: kernel.func @gemm_without_matmul: a gemm kernel computes a matmul; its body has none{{$}}
kernel.func @gemm_without_matmul(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) gemm {
  %y = molten.neg %x : tensor<4x8xf32>
  kernel.yield %y : tensor<4x8xf32>
}
