// RUN: molten-opt %s --split-input-file -p lower-kernel-to-cuda | filecheck %s

// The host launcher (cuda.host_func): graphs of several kernels, buffers
// between them, names the graph does not give, returned inputs and values
// returned twice.
//
// lower-kernel-to-cuda on hand-written kernel-level modules (kernel.func with
// a schedule, and the graph's func.func of kernel.launch): each kernel.func
// becomes a cuda.kernel over global pointers (its inputs, then its outputs,
// named after the kernel's values), the graph a cuda.host_func (the graph's
// inputs, then its outputs, named after the graph: molten.name, else the
// value's name) that launches the kernels with the grid and block of their
// schedules and allocates the buffers between them. SSA names inside kernels
// are matched by pattern: the pass chooses them.

// Three kernels in launch order. Parameters: the graph's input, then its two
// outputs, named by molten.name (`sum`) or else by the returned value (`c`).
// The values passed between kernels (%e, %m) get a cuda.alloc of their
// element count, placed just before the launch that writes them, and a
// cuda.free after the last launch; the output %a, also read by the third
// kernel, is passed as the output parameter, not allocated. Each launch has
// the grid and block of its kernel's schedule. In @g_cast the molten.cast to
// bf16 rounds (truncf, extf) and the store converts again.
kernel.func @g_exp(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise schedule #kernel.schedule<pointwise, block = 128> attributes {fused_ops = ["exp"]} {
  %e = molten.exp %x : tensor<4x8xf32>
  kernel.yield %e : tensor<4x8xf32>
}
kernel.func @g_mul_add(%e: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) pointwise schedule #kernel.schedule<pointwise, block = 64, elements_per_thread = 4> attributes {fused_ops = ["mul", "add"]} {
  %m = molten.mul %e, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = molten.add %m, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  kernel.yield %m, %a : tensor<4x8xf32>, tensor<4x8xf32>
}
kernel.func @g_cast(%m: tensor<4x8xf32>, %a: tensor<4x8xf32>) -> (tensor<4x8xbf16>) pointwise schedule #kernel.schedule<pointwise, block = 32> attributes {fused_ops = ["sub", "cast"]} {
  %d = molten.sub %m, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = molten.cast %d : tensor<4x8xf32> to tensor<4x8xbf16>
  kernel.yield %c : tensor<4x8xbf16>
}
func.func @g(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {molten.name = "sum"}, tensor<4x8xbf16>) {
  %e = kernel.launch @g_exp(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m, %a = kernel.launch @g_mul_add(%e, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %c = kernel.launch @g_cast(%m, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xbf16>
  func.return %a, %c : tensor<4x8xf32>, tensor<4x8xbf16>
}

// CHECK-LABEL: cuda.kernel @g_exp(%x: !cuda.ptr<f32>, %e: !cuda.ptr<f32>) block 128 attributes {fused_ops = ["exp"]} {
// CHECK:       cuda.kernel @g_mul_add(%e: !cuda.ptr<f32>, %x: !cuda.ptr<f32>, %m: !cuda.ptr<f32>, %a: !cuda.ptr<f32>) block 64 attributes {fused_ops = ["mul", "add"]} {
// CHECK:       cuda.kernel @g_cast(%m: !cuda.ptr<f32>, %a: !cuda.ptr<f32>, %c: !cuda.ptr<bf16>) block 32 attributes {fused_ops = ["sub", "cast"]} {
// CHECK:           [[D:%[^ ]+]] = arith.subf {{%[^ ]+}}, {{%[^ ]+}} : f32
// CHECK-NEXT:      [[D16:%[^ ]+]] = arith.truncf [[D]] : f32 to bf16
// CHECK-NEXT:      [[DR:%[^ ]+]] = arith.extf [[D16]] : bf16 to f32
// CHECK:           [[C:%[^ ]+]] = arith.truncf [[DR]] : f32 to bf16
// CHECK-NEXT:      cuda.store [[C]], %c{{\[}}{{%[^ ]+}}{{\]}} : bf16, !cuda.ptr<bf16>
// CHECK:       cuda.host_func @g(%x: !cuda.ptr<f32>, %sum: !cuda.ptr<f32>, %c: !cuda.ptr<bf16>) outputs 2 shapes [[4, 8], [4, 8], [4, 8]] {
// CHECK-NEXT:    %e = cuda.alloc 32 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @g_exp grid [1, 1, 1] block [128, 1, 1](%x, %e) : !cuda.ptr<f32>, !cuda.ptr<f32>
// CHECK-NEXT:    %m = cuda.alloc 32 : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @g_mul_add grid [1, 1, 1] block [64, 1, 1](%e, %x, %m, %sum) : !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<f32>
// CHECK-NEXT:    cuda.launch @g_cast grid [1, 1, 1] block [32, 1, 1](%m, %sum, %c) : !cuda.ptr<f32>, !cuda.ptr<f32>, !cuda.ptr<bf16>
// CHECK-NEXT:    cuda.free %e : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.free %m : !cuda.ptr<f32>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// Names the graph does not give: an argument without a name is `in<i>`, an
// output without molten.name whose value has no name `out<i>`; an f16
// buffer between kernels (unnamed: the printer numbers it). Grids: 70000
// elements in blocks of 256 threads of one element.
kernel.func @anon_k0(%0: tensor<70000xf16>) -> (tensor<70000xf16>) pointwise schedule #kernel.schedule<pointwise, block = 256> attributes {fused_ops = ["neg"]} {
  %1 = molten.neg %0 : tensor<70000xf16>
  kernel.yield %1 : tensor<70000xf16>
}
kernel.func @anon_k1(%0: tensor<70000xf16>, %1: tensor<70000xf16>) -> (tensor<70000xf16>) pointwise schedule #kernel.schedule<pointwise, block = 256> attributes {fused_ops = ["mul"]} {
  %2 = molten.mul %0, %1 : (tensor<70000xf16>, tensor<70000xf16>) -> tensor<70000xf16>
  kernel.yield %2 : tensor<70000xf16>
}
func.func @anon(%0: tensor<70000xf16>, %1: tensor<70000xf16>) -> tensor<70000xf16> {
  %2 = kernel.launch @anon_k0(%0) : (tensor<70000xf16>) -> tensor<70000xf16>
  %3 = kernel.launch @anon_k1(%2, %1) : (tensor<70000xf16>, tensor<70000xf16>) -> tensor<70000xf16>
  func.return %3 : tensor<70000xf16>
}

// CHECK-LABEL: cuda.kernel @anon_k0(%{{[^ ]+}}: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>) block 256 attributes {fused_ops = ["neg"]} {
// CHECK:       cuda.kernel @anon_k1(%{{[^ ]+}}: !cuda.ptr<f16>, %{{[^ ]+}}: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>) block 256 attributes {fused_ops = ["mul"]} {
// CHECK:       cuda.host_func @anon(%in0: !cuda.ptr<f16>, %in1: !cuda.ptr<f16>, %out0: !cuda.ptr<f16>) outputs 1 shapes [[70000], [70000], [70000]] {
// CHECK-NEXT:    [[T:%[^ ]+]] = cuda.alloc 70000 : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.launch @anon_k0 grid [274, 1, 1] block [256, 1, 1](%in0, [[T]]) : !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.launch @anon_k1 grid [274, 1, 1] block [256, 1, 1]([[T]], %in1, %out0) : !cuda.ptr<f16>, !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.free [[T]] : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }

// -----

// An output that is an input (`same`) and a value returned twice (`neg`,
// `neg_again`): the kernel writes the first output buffer of the value; the
// others are filled by cuda.copy of their element count after the launches.
kernel.func @ret_k(%x: tensor<4x8xf16>) -> (tensor<4x8xf16>) pointwise schedule #kernel.schedule<pointwise, block = 256> attributes {fused_ops = ["neg"]} {
  %n = molten.neg %x : tensor<4x8xf16>
  kernel.yield %n : tensor<4x8xf16>
}
func.func @ret(%x: tensor<4x8xf16>) -> (tensor<4x8xf16> {molten.name = "same"}, tensor<4x8xf16> {molten.name = "neg"}, tensor<4x8xf16> {molten.name = "neg_again"}) {
  %n = kernel.launch @ret_k(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %x, %n, %n : tensor<4x8xf16>, tensor<4x8xf16>, tensor<4x8xf16>
}

// CHECK-LABEL: cuda.host_func @ret(%x: !cuda.ptr<f16>, %same: !cuda.ptr<f16>, %neg: !cuda.ptr<f16>, %neg_again: !cuda.ptr<f16>) outputs 3 shapes [[4, 8], [4, 8], [4, 8], [4, 8]] {
// CHECK-NEXT:    cuda.launch @ret_k grid [1, 1, 1] block [256, 1, 1](%x, %neg) : !cuda.ptr<f16>, !cuda.ptr<f16>
// CHECK-NEXT:    cuda.copy %same, %x, 32 : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.copy %neg_again, %neg, 32 : !cuda.ptr<f16>
// CHECK-NEXT:    cuda.return
// CHECK-NEXT:  }
