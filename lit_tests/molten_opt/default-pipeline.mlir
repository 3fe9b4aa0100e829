// RUN: molten-opt %S/../../examples/fused_rmsnorm.mlir -p MOLTEN_KERNEL_LEVEL_PIPELINE | filecheck %s
// RUN: molten-opt %S/../../examples/fused_rmsnorm.mlir -p MOLTEN_DEFAULT_PIPELINE -t cuda | filecheck %s --check-prefix=CUDA
// RUN: env COLUMNS=1000 molten-opt --help | filecheck %s --check-prefix=HELP

// The default pipeline of molten/pipeline.py takes the seed spec (one
// composite as written, six primitives once decomposed) to one row_reduce
// kernel, outlined and scheduled, launched once by the graph (the kernel-level
// prefix), then to one CUDA kernel with 128-bit accesses, its scalar variant
// and the launcher that picks one by the pointers' alignment (-t cuda).
// --help names the same pipeline.

// HELP: Default pipeline: molten-decompose,transpose-matvec,canonicalize,cse,dce,split-size-classes,fuse-attention,fuse-reduction,fuse-scan,fuse-scatter,fuse-epilogue,fuse-elementwise,merge-size-classes,kernel-outline,kernel-schedule,tile,dce,lower-kernel-to-cuda,cse,vectorize,dce

// CUDA:      // fused_rmsnorm_row_reduce0: fuses square, reduce_mean, add, rsqrt, mul, mul
// CUDA-NEXT: __global__ void __launch_bounds__(640) fused_rmsnorm_row_reduce0(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ norm) {
// CUDA:      molten_vec<float, 4> x_vec = *reinterpret_cast<const molten_vec<float, 4>*>(&x[
// CUDA:      *reinterpret_cast<molten_vec<float, 4>*>(&norm[
// CUDA:      __global__ void __launch_bounds__(640) fused_rmsnorm_row_reduce0_scalar(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ norm) {
// CUDA-NOT:  molten_vec<
// CUDA-NOT:  __global__
// CUDA:      extern "C" cudaError_t fused_rmsnorm(const float* x, const float* w, float* norm, cudaStream_t stream) {
// CUDA-NEXT:   cudaError_t err = cudaSuccess;
// CUDA-NEXT:   if ((((uintptr_t)x | (uintptr_t)w | (uintptr_t)norm) % 16) == 0) {
// CUDA-NEXT:     fused_rmsnorm_row_reduce0<<<dim3(2048, 1, 1), dim3(640, 1, 1), 0, stream>>>(x, w, norm);
// CUDA-NEXT:   } else {  // a pointer too misaligned for the vector accesses
// CUDA-NEXT:     fused_rmsnorm_row_reduce0_scalar<<<dim3(2048, 1, 1), dim3(640, 1, 1), 0, stream>>>(x, w, norm);
// CUDA-NEXT:   }
// CUDA-NEXT:   err = cudaGetLastError();

// CHECK:      kernel.func @fused_rmsnorm_row_reduce0(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> (tensor<2048x5120xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 640, rows_per_block = 1, vector = 4, elements_per_thread = 8> attributes {fused_ops = ["square", "reduce_mean", "add", "rsqrt", "mul", "mul"]} {
// CHECK-NEXT:   %cst = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:   %square = molten.square %x : tensor<2048x5120xf32>
// CHECK-NEXT:   %reduce_mean = molten.reduce_mean %square axes = [1] keepdim : tensor<2048x5120xf32> -> tensor<2048x1xf32>
// CHECK-NEXT:   %add = molten.add %reduce_mean, %cst : (tensor<2048x1xf32>, tensor<f32>) -> tensor<2048x1xf32>
// CHECK-NEXT:   %rsqrt = molten.rsqrt %add : tensor<2048x1xf32>
// CHECK-NEXT:   %mul = molten.mul %x, %rsqrt : (tensor<2048x5120xf32>, tensor<2048x1xf32>) -> tensor<2048x5120xf32>
// CHECK-NEXT:   %norm = molten.mul %mul, %w : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
// CHECK-NEXT:   kernel.yield %norm : tensor<2048x5120xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> (tensor<2048x5120xf32> {molten.name = "norm"}) {
// CHECK-NEXT:   %norm = kernel.launch @fused_rmsnorm_row_reduce0(%x, %w) : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
// CHECK-NEXT:   func.return %norm : tensor<2048x5120xf32>
// CHECK-NEXT: }
