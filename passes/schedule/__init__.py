"""Schedules: a `#kernel.schedule` for every kernel, by its family's rule, on a
`Target` (the device's facts: `target.py`).

The package: `target.py` (the devices), `cost.py` (the estimates the gemm
rules compare), a module per kernel family with its rule (`applies`,
`schedule`, `candidates`: `rows`, `scan`, `pointwise`, `attention`,
`gemv`, `wgmma` (and `persistent`, the TMA kernel it may pick),
`siblings`, `gemm_mma`, `gemm_simt`; `rules.FAMILY_RULES` gives each
family its rule, in the order tried), `gemm.py` (a fusion's question: what
a gemm would get), `size_classes.py` (kernels over a named dimension) and the pass,
`kernel_schedule.py`.

Everything below the kernel level takes its launch and tiling parameters
from this attribute and invents none. The rules, for a target of
`sm_count` SMs (an H100's 132 for sm_90 and sm_90a):

* `vector`: the elements of the kernel's narrowest element type in one
  16-byte access (4 f32, 8 f16 or bf16), halved until it divides the
  innermost dimension that runs of consecutive elements lie along (the
  row's for row_reduce, the output's for pointwise); `vectorize` later
  turns each run's accesses into one where it proves them aligned;
* pointwise: one run of `vector` elements per thread and iteration of a
  grid-stride loop, 256 threads a block, fewer (down to 64) when that
  spreads a small kernel over more SMs;
* row_reduce, rows held in registers, `elements_per_thread` (whole runs)
  up to two vector accesses per thread (at least 8):
  - a row of up to 32 threads' worth: a power of two of threads per row,
    several rows per block (`rows_per_block`), reduced by warp shuffles;
  - a row of up to 1024 threads' worth: a block per row, the fewest
    threads (a multiple of 32) that cover it;
  - longer, up to 32 elements per thread of a 1024-thread block;
  - longer still: `split` blocks per row (512 threads, up to 32 elements
    each), which combine their partial results through global memory and
    wait for each other (a cooperative launch: the lowering makes two such
    blocks fit an SM, so at most 2 x `sm_count` blocks per row); a row too
    long even for that is walked again for each pass over it;
  - strided rows (axes follow the reduced ones: fuse-reduction keeps
    them where a warp's worth are consecutive): a thread a row, blocks as
    a pointwise kernel's, a row of up to 64 elements held in registers;
* gemm of at most GEMV_MAX_M rows (decode) whose B is stored [N, K]
  (x @ w.T, nn.Linear's layout): a GEMV with a warp per column of B (two
  columns above GEMV_NK_COLUMN_ROWS rows), each lane summing `vector`
  consecutive elements of K (16 bytes where K allows) at a time, two in
  flight, 256 threads a block. For `arch=sm_90a`, from two rows wgmma
  (below) instead where its estimate beats the GEMV's (GEMV_SECONDS), and
  always above GEMV_NK_MAX_M rows;
* gemm of at most GEMV_MAX_M rows (decode) whose B is stored [K, N]: a
  GEMV that streams B once, 16 bytes a load: each thread sums `vector`
  consecutive columns of every row over every `k_lanes`-th row of B, four
  rows of B in flight (`stages`); 1024 threads a block where its
  accumulators fit the registers (M x vector up to 16), else 512 or 256;
  the most columns a block (runs of at least 64 bytes of a row) that
  still give 7 of every 8 SMs a block, the other threads splitting K;
* gemm: on tensor cores where they take the product (f16 or bf16
  operands, each operand's contiguous axis a whole number of 16-byte
  copies, M >= 64): 128 threads, four warps of 64x64 on 128x128 output
  tiles with a K step of 32, four stages of operand tiles in flight
  (mma.sync m16n8k16); otherwise on the SIMT cores, 256 threads on
  128x128 output tiles with a K step of 8 where those give every SM a
  block, else on 64x64 tiles with a K step of 16. For the target
  `arch=sm_90a` the tensor-core gemm runs on wgmma instead, from
  GEMV_MAX_M + 1 rows: a K step of 64 (one 128-byte swizzled row), a
  warpgroup per 64 rows of a 128- or 64-row output tile of 64 to 256
  columns, 4, 6 or 8 stages, and K split into parts (split-K, the last
  block of a tile adding them) where the tiles leave SMs idle: whichever
  of these the estimate (`WgmmaCandidate.estimate`: tensor-core rate per
  tile, bytes in flight against DRAM latency, waves, the parts' traffic)
  finds fastest. Where that is a 128x256 tile without split and the
  tiles fill every SM, the persistent kernel fed by TMA instead: one block
  an SM looping over the tiles, a producer warpgroup loading them; where
  they leave SMs idle but K is long, that kernel with split-K.
* attention: four warps of 16 query rows each against tiles of 64 keys
  (32 above head dimension 128), two stages of K and V tiles. Fewer queries
  than a block's rows (a decode): the query heads that share a KV head
  packed into the block's rows (`pack`); groups of rows that leave SMs
  idle: the keys split into parts (`split`, flash-decoding). For
  `arch=sm_90a`, where the head dims are multiples of 64 (up to 256) and
  no pack is wanted, on wgmma instead: two warpgroups of 64 query rows
  (`mma_warps` = 4; one at head dimension 64) against tiles of 128 keys
  at head dimension 128 (64 at 64 and above 128), two stages.

A schedule already present (written by hand or by an autotuner) is kept.
"""
