// RUN: sed -n '/^\/\/ BEGIN NO-SCHEDULE$/,/^\/\/ END NO-SCHEDULE$/p' %s | not molten-opt -p lower-kernel-to-cuda 2>&1 | filecheck %s --check-prefix=NO-SCHEDULE
// RUN: sed -n '/^\/\/ BEGIN ATTENTION$/,/^\/\/ END ATTENTION$/p' %s | not molten-opt -p lower-kernel-to-cuda 2>&1 | filecheck %s --check-prefix=ATTENTION

// lower-kernel-to-cuda's errors, each case cut out of this file by sed and
// run alone (the pass exits non-zero: the CHECK lines read its stderr):
// a kernel without schedule, an attention kernel.

// BEGIN NO-SCHEDULE
// A kernel.func without a schedule: kernel-schedule has not run.
kernel.func @no_schedule(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise {
  %y = molten.neg %x : tensor<4xf32>
  kernel.yield %y : tensor<4xf32>
}
// END NO-SCHEDULE

// NO-SCHEDULE-NOT: builtin.module
// NO-SCHEDULE:     {{^.*}}: error: lower-kernel-to-cuda: @no_schedule has no schedule; run kernel-schedule first{{$}}
// NO-SCHEDULE-NOT: {{Traceback|internal error|builtin.module}}

// BEGIN ATTENTION
// An attention kernel without what fuse-attention matched in it (here the
// composite itself, on f32) is refused by the verifier, at the kernel.
kernel.func @attention_kernel(%q: tensor<16x64xf32>) -> (tensor<16x64xf32>) attention schedule #kernel.schedule<attention, block = 128, tile = [64, 64, 64], warp = [16, 64], stages = 2> {
  %o = molten.attention %q, %q, %q scale = 1.250000e-01 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  kernel.yield %o : tensor<16x64xf32>
}
// END ATTENTION

// ATTENTION-NOT: builtin.module
// ATTENTION:     {{^}}stdin:4:1: error: kernel.func @attention_kernel: an attention kernel needs its #kernel.attention_match<query = ..., key = ..., value = ..., group = ...> (fuse-attention records it){{$}}
// ATTENTION-NOT: {{Traceback|internal error|builtin.module}}
