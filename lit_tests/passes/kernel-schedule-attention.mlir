// RUN: not molten-opt %s -p kernel-schedule 2>&1 | filecheck %s

// kernel-schedule has no heuristic for attention kernels (the pipeline makes
// none: attention is decomposed, kernel-schedule.mlir keeps a given one). An
// attention kernel without a schedule is reported as not implemented yet:
// a one-line error, a non-zero exit, no module and no internal error.

kernel.func @attention_kernel(%q: tensor<16x64xf32>) -> (tensor<16x64xf32>) attention {
  %o = molten.attention %q, %q, %q scale = 1.250000e-01 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  kernel.yield %o : tensor<16x64xf32>
}

// CHECK-NOT: builtin.module
// CHECK:     {{^}}molten-opt: error: not implemented yet: kernel-schedule: no heuristic for attention kernels{{$}}
// CHECK-NOT: {{Traceback|internal error|builtin.module}}
