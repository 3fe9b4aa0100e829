"""The lowering of kernel.func bodies to cuda kernels, one module per kernel
kind, and of graphs to host launchers; `lower-kernel-to-cuda`
(`molten.passes.lower_kernel_to_cuda`) is the pass that runs them.

Shared building blocks:

* `emitter`: index arithmetic folded on compile-time values, multi-index
  <-> offset, `scf.if` / `scf.for` bodies;
* `evaluator`: a kernel body's tensors evaluated per element as f32;
* `kernels`: a kernel's pointer parameters, stores, the kernel op and
  `LoweredKernel`;
* `reductions`: warp shuffles and block reductions;
* `matmul`: a gemm's shape, block origin, operand offsets, cp.async copies;
* `epilogue`: a gemm's epilogue, stored directly or staged through shared
  memory;
* `launcher`: the graph's host function.

Kernel kinds: `pointwise`; `row_reduce` (with `split_row` for rows split
across blocks); `gemm`, which picks `gemv`, `gemm_wgmma`, `gemm_mma` or
`gemm_simt`.
"""
