// RUN: molten-opt %s --split-input-file -p kernel-outline | filecheck %s
// RUN: molten-opt %s --split-input-file -p molten-decompose,canonicalize,cse,dce,fuse-reduction,fuse-epilogue,fuse-elementwise,kernel-outline | filecheck %s --check-prefix=DECOMP

// kernel-outline: each kernel.fused of a graph becomes a kernel.func
// (@<graph>_<kind><index>, the next index not taken by a kernel.func of the
// module) inserted before the graph, with `fused_ops` listing its molten
// ops, and a kernel.launch in its place, so that the graph holds the host
// schedule. The input of each case is the IR before the pass (fused groups
// written out); the DECOMP lines follow a graph spec through the passes
// before it.

// One kernel: it becomes @<graph>_<kind>0, a kernel.func of the group's
// inputs and outputs whose body is the group's region (block arguments and
// all), with fused_ops naming the molten ops it computes (not the constant,
// a generator); a kernel.launch takes the group's place.
func.func @norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = kernel.fused row_reduce (%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%xa: tensor<4x8xf32>, %wa: tensor<8xf32>):
    %eps = molten.constant dense<1.000000e-06> : tensor<f32>
    %square = molten.square %xa : tensor<4x8xf32>
    %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
    %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
    %mul = molten.mul %xa, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %out = molten.mul %mul, %wa : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    kernel.yield %out : tensor<4x8xf32>
  }
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: kernel.func @norm_row_reduce0(%xa: tensor<4x8xf32>, %wa: tensor<8xf32>) -> (tensor<4x8xf32>) row_reduce attributes {fused_ops = ["square", "reduce_mean", "add", "rsqrt", "mul", "mul"]} {
// CHECK-NEXT:    %eps = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:    %square = molten.square %xa : tensor<4x8xf32>
// CHECK-NEXT:    %mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %add = molten.add %mean, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// CHECK-NEXT:    %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
// CHECK-NEXT:    %mul = molten.mul %xa, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %out = molten.mul %mul, %wa : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    kernel.yield %out : tensor<4x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @norm(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = kernel.launch @norm_row_reduce0(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
// CHECK-NEXT:  }

// -----

// Several kernels of several kinds in one graph: each kind is numbered from
// 0 in the graph's order, the kernel.funcs are inserted before the graph in
// that order and the launches keep it: the host schedule. A kernel of two
// outputs is launched with two results; a schedule already on a group moves
// to its kernel.func.
func.func @block(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %h = kernel.fused pointwise (%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%xa: tensor<4x8xf32>):
    %n = molten.neg %xa : tensor<4x8xf32>
    kernel.yield %n : tensor<4x8xf32>
  }
  %p = kernel.fused gemm schedule <gemm_simt, block = 128, tile = [32, 32, 8]> (%h, %w, %b) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%ha: tensor<4x8xf32>, %wa: tensor<8x8xf32>, %ba: tensor<8xf32>):
    %mm = molten.matmul %ha, %wa : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %add = molten.add %mm, %ba : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    kernel.yield %add : tensor<4x8xf32>
  }
  %e, %s = kernel.fused row_reduce (%p) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  ^bb0(%pa: tensor<4x8xf32>):
    %ex = molten.exp %pa : tensor<4x8xf32>
    %sum = molten.reduce_sum %ex axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    kernel.yield %ex, %sum : tensor<4x8xf32>, tensor<4x1xf32>
  }
  %y = kernel.fused pointwise (%e, %s) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32> {
  ^bb0(%ea: tensor<4x8xf32>, %sa: tensor<4x1xf32>):
    %d = molten.div %ea, %sa : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    kernel.yield %d : tensor<4x8xf32>
  }
  func.return %y, %s : tensor<4x8xf32>, tensor<4x1xf32>
}

// CHECK-LABEL: kernel.func @block_pointwise0(%xa: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise attributes {fused_ops = ["neg"]} {
// CHECK-NEXT:    %n = molten.neg %xa : tensor<4x8xf32>
// CHECK-NEXT:    kernel.yield %n : tensor<4x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @block_gemm0(%ha: tensor<4x8xf32>, %wa: tensor<8x8xf32>, %ba: tensor<8xf32>) -> (tensor<4x8xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 128, tile = [32, 32, 8]> attributes {fused_ops = ["matmul", "add"]} {
// CHECK-NEXT:    %mm = molten.matmul %ha, %wa : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %add = molten.add %mm, %ba : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    kernel.yield %add : tensor<4x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @block_row_reduce0(%pa: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) row_reduce attributes {fused_ops = ["exp", "reduce_sum"]} {
// CHECK-NEXT:    %ex = molten.exp %pa : tensor<4x8xf32>
// CHECK-NEXT:    %sum = molten.reduce_sum %ex axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    kernel.yield %ex, %sum : tensor<4x8xf32>, tensor<4x1xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @block_pointwise1(%ea: tensor<4x8xf32>, %sa: tensor<4x1xf32>) -> (tensor<4x8xf32>) pointwise attributes {fused_ops = ["div"]} {
// CHECK-NEXT:    %d = molten.div %ea, %sa : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    kernel.yield %d : tensor<4x8xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @block(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
// CHECK-NEXT:    %h = kernel.launch @block_pointwise0(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %p = kernel.launch @block_gemm0(%h, %w, %b) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %e, %s = kernel.launch @block_row_reduce0(%p) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>)
// CHECK-NEXT:    %y = kernel.launch @block_pointwise1(%e, %s) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %y, %s : tensor<4x8xf32>, tensor<4x1xf32>
// CHECK-NEXT:  }

// -----

// Two graphs: each names its kernels after itself; a kernel of generators
// only (a constant result) has no fused_ops.
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kernel.fused pointwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%xa: tensor<4xf32>):
    %e = molten.exp %xa : tensor<4xf32>
    kernel.yield %e : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
func.func @second(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %y = kernel.fused pointwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%xa: tensor<4xf32>):
    %t = molten.tanh %xa : tensor<4xf32>
    kernel.yield %t : tensor<4xf32>
  }
  %c = kernel.fused pointwise () : () -> tensor<f32> {
    %k = molten.constant dense<2.000000e+00> : tensor<f32>
    kernel.yield %k : tensor<f32>
  }
  func.return %y, %c : tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: kernel.func @first_pointwise0(%xa: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["exp"]} {
// CHECK-NEXT:    %e = molten.exp %xa : tensor<4xf32>
// CHECK-NEXT:    kernel.yield %e : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %y = kernel.launch @first_pointwise0(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %y : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @second_pointwise0(%xa: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["tanh"]} {
// CHECK-NEXT:    %t = molten.tanh %xa : tensor<4xf32>
// CHECK-NEXT:    kernel.yield %t : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @second_pointwise1() -> (tensor<f32>) pointwise {
// CHECK-NEXT:    %k = molten.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    kernel.yield %k : tensor<f32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @second(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
// CHECK-NEXT:    %y = kernel.launch @second_pointwise0(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %c = kernel.launch @second_pointwise1() : () -> tensor<f32>
// CHECK-NEXT:    func.return %y, %c : tensor<4xf32>, tensor<f32>
// CHECK-NEXT:  }

// -----

// A kernel.func of the generated name already in the module (a kernel
// outlined before): the new kernel takes the next free index; the existing
// one is left alone, and so is its launch.
kernel.func @g_pointwise0(%a: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["abs"]} {
  %r = molten.abs %a : tensor<4xf32>
  kernel.yield %r : tensor<4xf32>
}
kernel.func @g_pointwise2(%a: tensor<4xf32>) -> (tensor<4xf32>) pointwise {
  kernel.yield %a : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = kernel.launch @g_pointwise0(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = kernel.fused pointwise (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%aa: tensor<4xf32>):
    %e = molten.exp %aa : tensor<4xf32>
    kernel.yield %e : tensor<4xf32>
  }
  %c = kernel.fused pointwise (%b) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%ba: tensor<4xf32>):
    %n = molten.neg %ba : tensor<4xf32>
    kernel.yield %n : tensor<4xf32>
  }
  func.return %c : tensor<4xf32>
}

// CHECK-LABEL: kernel.func @g_pointwise0(%a: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["abs"]} {
// CHECK-NEXT:    %r = molten.abs %a : tensor<4xf32>
// CHECK-NEXT:    kernel.yield %r : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @g_pointwise2(%a: tensor<4xf32>) -> (tensor<4xf32>) pointwise {
// CHECK-NEXT:    kernel.yield %a : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @g_pointwise1(%aa: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["exp"]} {
// CHECK-NEXT:    %e = molten.exp %aa : tensor<4xf32>
// CHECK-NEXT:    kernel.yield %e : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  kernel.func @g_pointwise3(%ba: tensor<4xf32>) -> (tensor<4xf32>) pointwise attributes {fused_ops = ["neg"]} {
// CHECK-NEXT:    %n = molten.neg %ba : tensor<4xf32>
// CHECK-NEXT:    kernel.yield %n : tensor<4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %a = kernel.launch @g_pointwise0(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %b = kernel.launch @g_pointwise1(%a) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %c = kernel.launch @g_pointwise3(%b) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %c : tensor<4xf32>
// CHECK-NEXT:  }

// -----

// A graph spec through every fusion pass, then outlined: rms_norm feeding a
// matmul with a gelu epilogue; one row_reduce and one gemm kernel, launched
// in order.
func.func @mlp(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %n = molten.rms_norm %x, %g eps = 1.000000e-06 : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %mm = molten.matmul %n, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y = molten.gelu %mm : tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// DECOMP-LABEL: kernel.func @mlp_row_reduce0(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>) row_reduce attributes {fused_ops = ["square", "reduce_mean", "add", "rsqrt", "mul", "mul"]} {
// DECOMP-NEXT:    %cst = molten.constant dense<1.000000e-06> : tensor<f32>
// DECOMP-NEXT:    %square = molten.square %x : tensor<4x8xf32>
// DECOMP-NEXT:    %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
// DECOMP-NEXT:    %add = molten.add %reduce_mean, %cst : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
// DECOMP-NEXT:    %rsqrt = molten.rsqrt %add : tensor<4x1xf32>
// DECOMP-NEXT:    %mul = molten.mul %x, %rsqrt : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// DECOMP-NEXT:    %n = molten.mul %mul, %g : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// DECOMP-NEXT:    kernel.yield %n : tensor<4x8xf32>
// DECOMP-NEXT:  }
// DECOMP-NEXT:  kernel.func @mlp_gemm0(%n: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>) gemm attributes {fused_ops = ["matmul", "gelu"]} {
// DECOMP-NEXT:    %mm = molten.matmul %n, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// DECOMP-NEXT:    %y = molten.gelu %mm : tensor<4x16xf32>
// DECOMP-NEXT:    kernel.yield %y : tensor<4x16xf32>
// DECOMP-NEXT:  }
// DECOMP-NEXT:  func.func @mlp(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
// DECOMP-NEXT:    %n = kernel.launch @mlp_row_reduce0(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// DECOMP-NEXT:    %y = kernel.launch @mlp_gemm0(%n, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// DECOMP-NEXT:    func.return %y : tensor<4x16xf32>
// DECOMP-NEXT:  }

// -----

// What a fusion pass matched travels with the kernel: the outlined
// attention kernel.func carries the group's `matched` record (q, k and v by
// input position, the query group, causal), which the schedule, tiling and
// lowering read instead of matching the body again.
func.func @attend(%q: tensor<8x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x32xf16>) -> tensor<8x32xf16> {
  %o = kernel.fused attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1> (%q, %k, %v) : (tensor<8x64xf16>, tensor<16x64xf16>, tensor<16x32xf16>) -> tensor<8x32xf16> {
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

// CHECK-LABEL: kernel.func @attend_attention0(%qa: tensor<8x64xf16>, %ka: tensor<16x64xf16>, %va: tensor<16x32xf16>) -> (tensor<8x32xf16>) attention matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1> attributes {fused_ops = ["cast", "cast", "cast", "matmul", "exp", "reduce_sum", "div", "matmul", "cast"]} {
// CHECK:         kernel.yield %r16 : tensor<8x32xf16>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.func @attend(%q: tensor<8x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x32xf16>) -> tensor<8x32xf16> {
// CHECK-NEXT:    %o = kernel.launch @attend_attention0(%q, %k, %v) : (tensor<8x64xf16>, tensor<16x64xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>
// CHECK-NEXT:    func.return %o : tensor<8x32xf16>
// CHECK-NEXT:  }
