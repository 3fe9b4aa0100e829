"""The lowering of kernel.func bodies to cuda kernels, one module per kernel
kind, and of graphs to host launchers; `lower-kernel-to-cuda`
(`molten.passes.lower_kernel_to_cuda`) is the pass that runs them.

Shared building blocks:

* `emitter`: index arithmetic folded on compile-time values, multi-index
  <-> offset, `scf.if` / `scf.for` bodies;
* `evaluator`: a kernel body's tensors evaluated per element as f32;
* `kernels`: the kernel being built (`KernelShell`), its pointer
  parameters, stores, and the `LoweredKernel` its `finish` returns;
* `reductions`: warp shuffles and block reductions;
* `matmul`: a gemm's shape, block origin, operand offsets, cp.async copies;
* `fragments`: tensor-core accumulator layouts as data;
* `pipeline`: the cp.async software pipeline of a main loop;
* `epilogue`: a gemm's epilogue, stored directly or staged through shared
  memory, and the tiled kernels' `finish`;
* `tiled_gemm`: the skeleton of the cp.async tensor-core gemms;
* `launcher`: the graph's host function.

Kernel kinds: `pointwise`; `row_reduce` (with `split_row` for rows split
across blocks); `scan`; `gemm`, which picks `gemv`, `gemm_wgmma_tma` (with
`gemm_tma_prologue`), `gemm_wgmma`, `gemm_mma` or `gemm_simt` (with
`split_k`); `attention` (with `attention_mma`, `attention_wgmma`,
`attention_softmax` and `attention_split`).
"""
