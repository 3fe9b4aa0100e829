"""`kernel-schedule`: a `#kernel.schedule` for every kernel, by heuristics.

Everything below the kernel level takes its launch and tiling parameters
from this attribute and invents none. The heuristics, for a device of
`sm_count` SMs (the H100's 132 unless told):

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
  128x128 output tiles with a K step of 16 where those give every SM a
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

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import PassFailedException

from molten.dialects import kernel, molten
from molten.dialects.cuda import (
    BARRIER_TYPE,
    MAX_SHARED_BYTES,
    STATIC_SHARED_BYTES,
    VECTOR_BYTES,
    WGMMA_M,
    element_bytes,
    tma_reads_rows,
)
from molten.dialects.molten import shape_of, value_dims
from molten.errors import StaticShapeNeeded
from molten.passes.fuse_attention import attention_in, query_group
from molten.passes.fuse_reduction import STRIDED_SHORT_ROW
from molten.passes.specialize_dims import specialize_types

H100_SMS = 132
WARP = 32
POINTWISE_BLOCK = 256
MIN_POINTWISE_BLOCK = 64
MAX_BLOCK = 1024
SHORT_ROW_BLOCK = 256
"""Threads of a block that holds several short rows."""
MIN_ROW_ELEMENTS_PER_THREAD = 8
RUNS_PER_THREAD = 2
"""Vector accesses per thread and input for a row held in registers: two
keep more bytes in flight per SM than one (a 16-bit row of 5120 elements
takes 320 threads, six blocks per SM)."""
MAX_ROW_ELEMENTS_PER_THREAD = 32
"""Registers a thread of a 1024-thread block (at most 64) gives to its row."""
SPLIT_BLOCK = 512
"""Threads of each block of a split row; the lowering makes two such blocks
fit an SM (at most 64 registers a thread), so that one block's loads
overlap another's wait for its group."""
LONG_ROW_BLOCK = 512
"""Threads per row walked again per pass: up to 128 registers each, so the
loops over the row (unrolled by nvcc) do not spill."""
SCAN_RUNS = 4
"""Runs of `vector` elements a thread of a contiguous scan loads a step, all
in flight before the scans that need them."""
SCAN_BLOCK = 256
"""Threads a block of a scan of rows longer than a warp covers in a step."""
SCAN_STRIDED_STEP = 8
"""Elements along the axis a thread of a strided scan loads a step."""
GEMM_BLOCK = 256
GEMM_TILE = (64, 64, 16)
"""A SIMT gemm's block tile: 4x4 outputs a thread."""
GEMM_LARGE_TILE = (128, 128, 8)
"""A SIMT gemm's block tile where such tiles still give every SM a block:
8x8 outputs a thread, four FMAs for each value read from shared memory
(4x4 has two). With the next K step's tiles loaded during this one's, a K
step of 8 ran 6% faster than one of 16 and 11% faster than one of 32 on
the H100 (f32, 4096 cubed, two blocks an SM): fewer registers hold the
loads in flight."""
MMA_GEMM_BLOCK = 128
"""Four warps: each holds a 64x64 warp tile's f32 accumulators (128
registers a thread)."""
MMA_GEMM_TILE = (128, 128, 32)
"""The block tile of a tensor-core gemm: 2x2 warp tiles, two k16 steps per
stage."""
MMA_GEMM_WARP = (64, 64)
"""A warp's tile: 4x8 mma.sync m16n8k16 per k16 step."""
MMA_GEMM_STAGES = 4
"""Operand tiles in flight (cp.async), to cover global memory latency."""
TF32_GEMM_TILE = (64, 128, 16)
"""The block tile of an f32 gemm on tensor cores (3xTF32, mma.sync
m16n8k8): a K step of 16, four stages of f32 tiles in 48 KiB."""
TF32_GEMM_WARP = (64, 32)
TF32_GEMM_BLOCK = 128
"""Four warps of 64x32. A 64x64 warp tile (128 accumulators a thread) with
3xTF32's split fragments and partial sums spills (up to 100 bytes, ptxas
for sm_80 and sm_90); 64x32 spills none. Measured on the H100 against
cuBLAS f32 (benchmarks/experiments/tf32_schedules.py, 2026-11-28): 64x128
block tiles of four such warps ran 1.00-1.22x of cuBLAS on KernelBench's
four f32 shapes, 128x128 tiles of eight 0.90-1.11x."""
WGMMA_ARCHS = ("sm_90a",)
"""The targets with sm_90a's warpgroup tensor cores (wgmma)."""
WGMMA_TILES = ((128, 256), (128, 128), (64, 256), (64, 128), (64, 64))
"""The output tiles (M, N) a wgmma gemm may take: 128 rows in two
warpgroups of 64 (256 threads), 64 rows in one; the K step is one
128-byte swizzled row (64 elements)."""
WGMMA_TILE_EFFICIENCY = {
    (128, 256): 0.56,
    (128, 128): 0.55,
    (64, 256): 0.45,
    (64, 128): 0.40,
    (64, 64): 0.30,
}
"""The fraction of an SM's dense tensor-core peak a block of each tile
sustains in its K loop, fitted to the gemm's times on the H100
(2026-11-26, benchmarks/results/*-gemm-schedules.txt): 128x256 at 459
TFLOP/s on 512x14336x4096, 128x128 (six stages) at 571 on 512x4096x14336;
the one-warpgroup tiles, which hide less latency, below them."""
WGMMA_STAGES = (4, 6, 8)
"""The operand tiles in shared memory a wgmma gemm may take: `stages - 2`
in flight (cp.async), one read by the wgmmas issued now and one by those
of the step before, which may still run. Four cover a compute-bound gemm's
latency; a gemm bound by streaming B (few rows) keeps more in flight."""
SM_TENSOR_FLOPS = 989e12 / H100_SMS
"""Dense 16-bit tensor-core FLOP/s of one H100 SM."""
DRAM_BYTES_PER_S = 3.0e12
"""What a copy reaches on the H100 (3.0-3.35 TB/s)."""
DRAM_LATENCY_S = 1.5e-6
"""The time a load takes under load, so that bytes in flight / latency is
the bandwidth they sustain (Little's law). Fitted on the H100 (2026-11-26):
a 16x4096x4096 gemm of 64x64 tiles with two parts of K and two stages in
flight moved 1.4 TB/s, 2 MiB of B in flight."""
BLOCK_LATENCY_S = 3e-6
"""A block's fixed cost in a wave: the pipeline filling, the epilogue."""
WGMMA_STREAM_SECONDS = 3.8e-6
"""What the cp.async wgmma kernel's time has beyond the estimate where
streaming the operands bounds it (few rows): on the H100 (2026-11-26,
benchmarks/results/*-gemm-small-m.txt), its measured time less the
estimate without this at seven shapes of 16 and 128 rows, the median
(-0.3 to 8.5 us). Added where the heuristic weighs that kernel against
the persistent one, whose estimate has its fixed costs
(PERSISTENT_SECONDS' once); where compute bounds it (1030x2048x512), the
estimate was 17% over instead."""
SM_BYTES_PER_S = 150e9
"""What one SM's loads and stores move (split-K's last block of a tile
adds the parts alone)."""
SPLIT_SECONDS = 3.5e-6
"""What split-K costs beyond moving its parts (the last block of a tile
waiting for the others' parts, then adding them before its epilogue),
fitted on the H100 (2026-11-26, benchmarks/results/*-gemm-split.txt):
against the same tile unsplit, split-K ran 2-7 us slower than the
estimate without it at 16 to 128 rows."""
SM_REGISTERS = 65536
SPLIT_MIN_STEPS = 4
"""The fewest K steps a part of split-K takes: fewer, and the pipeline
barely fills."""
MAX_SPLIT = 16
MMA_MIN_M = 64
"""Fewer rows than an mma.sync warp tile's would leave most of each block
idle: the SIMT kernel is the better fit. (On wgmma, a 64-row tile with
split-K takes any gemm that is not a GEMV: the tensor cores' spare rows
cost nothing where streaming B is the bound.)"""
MMA_ELEMENT_TYPES = (Float16Type, BFloat16Type)
GEMV_MAX_M = 8
"""Rows up to which a gemm is a GEMV: each thread holds GEMV_MAX_M x 8
accumulators at most, and B (streamed once) dominates the bytes moved."""
GEMV_ROWS_IN_FLIGHT = 4
"""Rows of B each thread of a GEMV loads before it uses them."""
GEMV_RUN_BYTES = 64
"""A GEMV block reads at least this much of each row of B: on the H100,
64-byte runs streamed B faster than 32-byte ones (two L2 sectors, what HBM
serves at a time)."""
GEMV_BLOCKS = ((16, 1024), (32, 512), (GEMV_MAX_M * 8, 256))
"""(accumulators a thread, threads a block): the most threads, and so the
most rows of B in flight an SM, whose accumulators fit the registers that
__launch_bounds__ leaves each thread (64 of them at 1024 threads)."""


def reduced_rows(
    body_ops: list[Operation],
) -> tuple[int | None, tuple[int, ...], bool]:
    """How many rows a row_reduce kernel reduces (None where a named
    dimension makes it known only at run time), their shape (that of its
    reduced axes), and whether they are strided (axes follow the reduced
    ones)."""
    for op in body_ops:
        if isinstance(op, molten.ReductionOp):
            dims = value_dims(op.input)
            axes = set(op.axes.get_values())
            row = tuple(dims[i] for i in sorted(axes))
            if any(isinstance(d, str) for d in row):
                raise StaticShapeNeeded(
                    "kernel-schedule: a reduction over a named dimension "
                    f"({op.input.type})"
                )
            kept = [d for i, d in enumerate(dims) if i not in axes]
            strided = max(axes) < len(dims) - 1
            if any(isinstance(d, str) for d in kept):
                return None, row, strided  # type: ignore[return-value]
            return math.prod(kept), row, strided  # type: ignore[return-value]
    raise ValueError("a row_reduce kernel without a reduction")


def scanned_rows(body_ops: list[Operation]) -> tuple[int | None, int, bool]:
    """How many rows a scan kernel scans (None where a named dimension makes
    it known only at run time), their length, and whether they are strided
    (axes follow the scanned one)."""
    (scan,) = [op for op in body_ops if isinstance(op, molten.CumsumOp)]
    dims = value_dims(scan.input)
    axis = scan.axis.value.data
    n = dims[axis]
    if isinstance(n, str):
        raise StaticShapeNeeded(
            f"kernel-schedule: a cumsum along a named dimension ({scan.input.type})"
        )
    kept = [d for i, d in enumerate(dims) if i != axis]
    rows = None if any(isinstance(d, str) for d in kept) else math.prod(kept)
    return rows, n, axis < len(dims) - 1  # type: ignore[return-value]


def vector_width(inner: int, tensors: list[SSAValue]) -> int:
    """Elements of the narrowest element type of `tensors` in one 16-byte
    access, halved until the count divides `inner`."""
    types = [t.type for t in tensors]
    assert all(isinstance(t, TensorType) for t in types)
    itemsize = min(element_bytes(t.element_type) for t in types)  # type: ignore
    width = VECTOR_BYTES // itemsize
    while inner % width:
        width //= 2
    return width


def _round_up(value: int, multiple: int) -> int:
    return multiple * math.ceil(value / multiple)


def row_reduce_schedule(
    rows: int | None, n: int, width: int, sm_count: int
) -> kernel.ScheduleAttr:
    """The schedule of `rows` rows of `n` elements, accessed `width` at a time.
    Where `rows` is known only at run time (None), as for many rows, and a
    row is never split across blocks (that needs scratch per row): a row
    too long for one block's registers is walked in passes."""
    most = max(MIN_ROW_ELEMENTS_PER_THREAD, RUNS_PER_THREAD * width)
    if n <= WARP * most:
        lanes = 1 << max(0, math.ceil(math.log2(math.ceil(n / most))))
        per_thread = _round_up(math.ceil(n / lanes), width)
        return short_rows_schedule(rows, lanes, width, per_thread, sm_count)
    if n <= MAX_BLOCK * MAX_ROW_ELEMENTS_PER_THREAD:
        threads = math.ceil(n / most)
        block = min(MAX_BLOCK, _round_up(threads, WARP))
        per_thread = _round_up(math.ceil(n / block), width)
        return kernel.ScheduleAttr(block, vector=width, elements_per_thread=per_thread)
    if rows is None:
        per_thread = _round_up(MAX_ROW_ELEMENTS_PER_THREAD, width)
        return kernel.ScheduleAttr(
            MAX_BLOCK, vector=width, elements_per_thread=per_thread
        )
    part = SPLIT_BLOCK * MAX_ROW_ELEMENTS_PER_THREAD
    split = math.ceil(n / part)
    resident = sm_count * (kernel.SPLIT_THREADS_PER_SM // SPLIT_BLOCK)
    if split <= resident:
        per_thread = _round_up(math.ceil(n / (split * SPLIT_BLOCK)), width)
        return kernel.ScheduleAttr(
            SPLIT_BLOCK, vector=width, elements_per_thread=per_thread, split=split
        )
    return kernel.ScheduleAttr(
        LONG_ROW_BLOCK, vector=width, elements_per_thread=width, split=resident
    )


def strided_row_schedule(rows: int | None, n: int, sm_count: int):
    """The schedule of `rows` strided rows of `n` elements: a thread a row
    (consecutive threads on consecutive rows, so each load is coalesced
    across them), blocks sized as a pointwise kernel's; a row of at most
    `STRIDED_SHORT_ROW` (the rows fuse-reduction keeps strided whatever their
    number) held in registers, a longer one walked twice
    where it is read again, by blocks of 1024 where there are rows for a
    block an SM."""
    per_thread = n if n <= STRIDED_SHORT_ROW else 1
    if per_thread == 1 and (rows is None or rows >= MAX_BLOCK * sm_count):
        # Walked rows: 1024 threads a block ran the mean over dim 1 of
        # [128, 4096, 4095] 7% faster than 256 (H100, strided_rows.py).
        threads = MAX_BLOCK
    else:
        block = pointwise_schedule(math.inf if rows is None else rows, 1, sm_count)
        threads = block.block.data
    return kernel.ScheduleAttr(
        threads, rows_per_block=threads, vector=1, elements_per_thread=per_thread
    )


def scan_schedule(
    rows: int | None, n: int, strided: bool, width: int, sm_count: int
) -> kernel.ScheduleAttr:
    """The schedule of a scan of `rows` rows of `n` elements. Strided rows: a
    thread a row, `SCAN_STRIDED_STEP` elements a step, blocks sized as a
    pointwise kernel's. Contiguous rows: `SCAN_RUNS` runs of `width` a
    thread a step, on as few lanes as cover a row in one step, a power of
    two up to a warp (several rows a block, as for row reductions), or a
    block of up to `SCAN_BLOCK` for longer rows."""
    if strided:
        threads = pointwise_schedule(math.inf if rows is None else rows, 1, sm_count)
        block = threads.block.data
        return kernel.ScheduleAttr(
            block,
            rows_per_block=block,
            vector=1,
            elements_per_thread=min(n, SCAN_STRIDED_STEP),
        )
    per_thread = width * min(SCAN_RUNS, math.ceil(n / width))
    lanes = 1 << max(0, math.ceil(math.log2(math.ceil(n / per_thread))))
    if lanes > WARP:
        return kernel.ScheduleAttr(
            min(SCAN_BLOCK, lanes), vector=width, elements_per_thread=per_thread
        )
    return short_rows_schedule(rows, lanes, width, per_thread, sm_count)


def short_rows_schedule(
    rows: int | None, lanes: int, width: int, per_thread: int, sm_count: int
) -> kernel.ScheduleAttr:
    """Rows of `lanes` threads each (a power of two up to a warp), several a
    block: full warps, and more blocks than SMs where there are rows for
    them (row reductions and scans)."""
    wanted = SHORT_ROW_BLOCK if rows is None else max(1, rows // sm_count)
    rows_per_block = max(WARP // lanes, min(SHORT_ROW_BLOCK // lanes, wanted))
    rows_per_block = 1 << (rows_per_block.bit_length() - 1)
    return kernel.ScheduleAttr(
        lanes * rows_per_block,
        rows_per_block=rows_per_block,
        vector=width,
        elements_per_thread=per_thread,
    )


def pointwise_schedule(elements: float, width: int, sm_count: int):
    """The schedule of a pointwise kernel over `elements`, `width` at a time
    (infinite where a named dimension makes the count known at run time
    only: scheduled as for many)."""
    runs = math.ceil(min(elements, 2**62) / width)
    block = POINTWISE_BLOCK
    while block > MIN_POINTWISE_BLOCK and math.ceil(runs / block) < sm_count:
        block //= 2
    return kernel.ScheduleAttr(block, vector=width, elements_per_thread=width)


def simt_gemm_schedule(
    matmul: molten.MatmulOp | None = None, sm_count: int = H100_SMS
) -> kernel.ScheduleAttr:
    """The schedule of a gemm on the SIMT cores (f32, shapes tensor cores do
    not take, and, without a matmul, a tensor-core gemm's variant for
    misaligned operands): large tiles where they fill the SMs."""
    if matmul is not None:
        result = shape_of(matmul.result)
        bm, bn, _ = GEMM_LARGE_TILE
        tiles = math.ceil(result[-2] / bm) * math.ceil(result[-1] / bn)
        if tiles * math.prod(result[:-2]) >= sm_count:
            return kernel.ScheduleAttr(GEMM_BLOCK, tile=GEMM_LARGE_TILE)
    return kernel.ScheduleAttr(GEMM_BLOCK, tile=GEMM_TILE)


def _copies_whole_rows(matmul: molten.MatmulOp, min_rows: int) -> bool:
    """Whether each operand's rows (along its contiguous axis) are whole
    16-byte copies (cp.async) and the product has at least `min_rows`
    rows."""
    element = matmul.lhs.type.element_type  # type: ignore[attr-defined]
    a, b = shape_of(matmul.lhs), shape_of(matmul.rhs)
    copy = VECTOR_BYTES // element_bytes(element)
    # Row-major storage: the last axis is the contiguous one, whatever the
    # transposes (A^T is stored [K, M], B^T [N, K]).
    if a[-1] % copy or b[-1] % copy:
        return False
    return shape_of(matmul.result)[-2] >= min_rows


def takes_tensor_cores(matmul: molten.MatmulOp, min_rows: int = MMA_MIN_M) -> bool:
    """Whether tensor cores take this matmul: f16 or bf16 operands whose
    rows (along each operand's contiguous axis) are whole 16-byte copies,
    and at least `min_rows` rows of output."""
    element = matmul.lhs.type.element_type  # type: ignore[attr-defined]
    return isinstance(element, MMA_ELEMENT_TYPES) and _copies_whole_rows(
        matmul, min_rows
    )


def takes_tf32(matmul: molten.MatmulOp) -> bool:
    """Whether tensor cores take this f32 matmul as 3xTF32 (mma.sync): rows
    of whole 16-byte copies and at least MMA_MIN_M rows of output, as
    `takes_tensor_cores` asks of 16-bit operands."""
    element = matmul.lhs.type.element_type  # type: ignore[attr-defined]
    return element == Float32Type() and _copies_whole_rows(matmul, MMA_MIN_M)


def gemv_schedule(matmul: molten.MatmulOp, sm_count: int) -> kernel.ScheduleAttr:
    """The schedule of a gemm of few rows: as many threads as the registers
    allow; the most column runs a block (a power of two, each run `vector`
    columns, together at least GEMV_RUN_BYTES of each row of B) that still
    give 7 of every 8 SMs a block and whose partial sums fit static shared
    memory; the block's other threads split K."""
    result = shape_of(matmul.result)
    m, n = result[-2], result[-1]
    batches = math.prod(result[:-2])
    k = shape_of(matmul.rhs)[-2]
    width = vector_width(n, [matmul.rhs])
    itemsize = element_bytes(matmul.rhs.type.element_type)  # type: ignore
    block = next(threads for most, threads in GEMV_BLOCKS if m * width <= most)
    # Each warp leaves the partial sums of its runs in shared memory, in f32.
    sums_bytes_a_run = block // WARP * m * width * element_bytes(Float32Type())

    def fits(runs: int) -> bool:
        return (
            runs <= WARP
            and math.ceil(n / (runs * width)) * batches >= math.ceil(sm_count * 7 / 8)
            and runs * sums_bytes_a_run <= STATIC_SHARED_BYTES
        )

    runs = min(WARP, max(1, GEMV_RUN_BYTES // (width * itemsize)))
    while fits(2 * runs):
        runs *= 2
    lanes = block // runs
    return kernel.ScheduleAttr(
        block,
        vector=width,
        tile=(m, runs * width, _round_up(k, lanes)),
        stages=GEMV_ROWS_IN_FLIGHT,
        k_lanes=lanes,
    )


GEMV_NK_BLOCK = 256
"""Threads of a GEMV block whose B is stored [N, K]: a warp a column (or
two, GEMV_NK_COLUMN_ROWS)."""
GEMV_NK_ROWS_IN_FLIGHT = 2
"""Rounds of K each thread of a GEMV of B stored [N, K] loads before it
uses them: on the H100 (2026-11-26, benchmarks/results/*-gemv-columns.txt)
2 was as fast as 4 and 8 at one row, and 1-10% faster from two rows (fewer
registers, more blocks an SM)."""
GEMV_NK_COLUMN_ROWS = 4
"""Above this many rows a warp of a GEMV of B stored [N, K] takes two
columns, so that each vector of A it loads serves both: at 8 rows on the
H100 that was 1.1-1.6x faster than one column (the loads and conversions
of A, not B's stream, had bound it); at 1 to 4 rows, 1-8% slower."""
GEMV_NK_MAX_M = 4
"""Rows up to which the GEMV of B stored [N, K] is weighed against wgmma
(sm_90a) by estimate; above it, wgmma takes the gemm: at 8 rows on the
H100 its 64-row tiles (rows past M wasted) were 1.15-1.9x faster."""
GEMV_SECONDS = (4.3e-6, 2.97e12, 0.075)
"""The GEMV of B stored [N, K]: (fixed seconds, bytes of B a second at one
row, the share each further row slows B's stream): on the H100
(2026-11-26, *-gemv-columns.txt, *-gemv-vs-wgmma.txt), one row's time at
six weights of 26 to 136 MB fits 4.3 us + B / 2.97 TB/s within 3%; each
row more slows the stream by 7-8% (the conversions and FMAs of A's rows
per byte of B)."""


def gemv_nk_seconds(matmul: molten.MatmulOp) -> float:
    """The GEMV's estimated time (GEMV_SECONDS) for a gemm of B stored
    [N, K]."""
    result = shape_of(matmul.result)
    rows = result[-2]
    b_bytes = math.prod(shape_of(matmul.rhs)) * element_bytes(
        matmul.rhs.type.element_type  # type: ignore[attr-defined]
    )
    fixed, rate, slowdown = GEMV_SECONDS
    return fixed + b_bytes * (1 + slowdown * (rows - 1)) / rate


def gemv_nk_or_wgmma(matmul: molten.MatmulOp, sm_count: int) -> kernel.ScheduleAttr:
    """A gemm of few rows, B stored [N, K], on sm_90a: the GEMV where it has
    at most GEMV_NK_MAX_M rows and its estimate beats wgmma's, else wgmma
    (64-row tiles; the rows past M cost nothing where streaming B bounds
    the time)."""
    rows = shape_of(matmul.result)[-2]
    if rows == 1:
        return gemv_nk_schedule(matmul)
    wgmma, wgmma_seconds = wgmma_pick(matmul, sm_count)
    if rows <= GEMV_NK_MAX_M and gemv_nk_seconds(matmul) <= wgmma_seconds:
        return gemv_nk_schedule(matmul)
    return wgmma


def gemv_nk_schedule(
    matmul: molten.MatmulOp,
    columns: int | None = None,
    stages: int = GEMV_NK_ROWS_IN_FLIGHT,
) -> kernel.ScheduleAttr:
    """The schedule of a gemm of few rows whose B is stored [N, K] (x @ w.T,
    nn.Linear's weight): a warp per `columns` columns of B, its lanes taking
    `vector` consecutive elements of K each (16 bytes where K allows), so
    that a warp reads 32 vectors of a row of B at once, `stages` of them in
    flight, and each vector of A it loads serves every column; the lanes'
    sums added by shuffles. By default one column a warp, two above
    GEMV_NK_COLUMN_ROWS rows."""
    result = shape_of(matmul.result)
    m = result[-2]
    if columns is None:
        columns = 1 if m <= GEMV_NK_COLUMN_ROWS else 2
    k = shape_of(matmul.rhs)[-1]
    width = vector_width(k, [matmul.lhs, matmul.rhs])
    return kernel.ScheduleAttr(
        GEMV_NK_BLOCK,
        vector=width,
        tile=(m, GEMV_NK_BLOCK // WARP * columns, _round_up(k, WARP * width)),
        stages=stages,
        k_lanes=WARP,
    )


def is_gemv(matmul: molten.MatmulOp) -> bool:
    """Whether a gemm is a GEMV: at most GEMV_MAX_M rows (B stored [K, N], or
    [N, K] as x @ w.T)."""
    return shape_of(matmul.result)[-2] <= GEMV_MAX_M


@dataclass(frozen=True)
class WgmmaCandidate:
    """A wgmma gemm's output tile, stages and split-K parts, with its
    estimated time, and whether streaming the operands bounds it."""

    rows: int
    cols: int
    stages: int
    split: int
    seconds: float
    streamed: bool = False

    @staticmethod
    def shared_bytes(tile: tuple[int, int], stages: int) -> int:
        return stages * (tile[0] + tile[1]) * SWIZZLE_K * 2

    @staticmethod
    def estimate(
        shape: tuple[int, int, int, int],
        tile: tuple[int, int],
        stages: int,
        split: int,
        sms: int,
    ) -> WgmmaCandidate:
        """The time of a gemm (batches, M, N, K) of 16-bit operands in
        `tile`s with `stages` and K split `split` ways on `sms` SMs: the
        busiest SM's tiles at their sustained rate, or the operands, output
        and parts moved at the bandwidth the blocks' loads in flight
        sustain, whichever is longer, plus each wave's fixed cost."""
        batches, m, n, k = shape
        bm, bn = tile
        threads = kernel.WARPGROUP_WARPS * WARP * (bm // WGMMA_M)
        tiles = batches * math.ceil(m / bm) * math.ceil(n / bn)
        blocks = tiles * split
        # Blocks an SM holds: its shared memory, and its registers (a
        # thread's accumulators and about 40 more).
        resident = max(
            1,
            min(
                MAX_SHARED_BYTES // WgmmaCandidate.shared_bytes(tile, stages),
                SM_REGISTERS // (threads * (bn // 2 + 40)),
            ),
        )
        waves = math.ceil(blocks / (sms * resident))
        k_part = math.ceil(math.ceil(k / SWIZZLE_K) / split) * SWIZZLE_K
        flops = 2 * bm * bn * k_part
        efficiency = WGMMA_TILE_EFFICIENCY[tile]
        compute = math.ceil(blocks / sms) * flops / (SM_TENSOR_FLOPS * efficiency)
        moved = 2 * batches * (m * k + k * n + m * n)
        # Rows of A past M are zeros that no load fetches.
        step_bytes = (min(bm, m) + bn) * SWIZZLE_K * 2
        in_flight = min(blocks, sms * resident) * (stages - 2) * step_bytes
        bandwidth = min(DRAM_BYTES_PER_S, in_flight / DRAM_LATENCY_S)
        streaming = moved / bandwidth
        seconds = max(compute, streaming) + waves * BLOCK_LATENCY_S
        if split > 1:
            # After the K loops: every part stored and read back, the last
            # block of each tile reading them all.
            part_bytes = min(m, bm) * bn * 4
            parts = 2 * split * tiles * part_bytes
            seconds += (
                parts / DRAM_BYTES_PER_S
                + split * part_bytes / SM_BYTES_PER_S
                + SPLIT_SECONDS
            )
        return WgmmaCandidate(bm, bn, stages, split, seconds, streaming > compute)


SWIZZLE_K = 64
"""A wgmma gemm's K step: one 128-byte swizzled row of 16-bit elements."""
MAX_SPLIT = 16


def wgmma_candidates(matmul: molten.MatmulOp, sm_count: int) -> list[WgmmaCandidate]:
    """Every tile, stage count and split-K the wgmma gemm may take, fastest
    first by the estimate (ties: larger tiles, more stages, fewer parts:
    six stages ran 4-12% faster than four on the H100 where both fit).
    A split gives each part at least SPLIT_MIN_STEPS K steps and is tried
    only while the tiles leave SMs idle."""
    result = shape_of(matmul.result)
    m, n = result[-2], result[-1]
    k = shape_of(matmul.lhs)[-2 if matmul.transpose_a is not None else -1]
    shape = (math.prod(result[:-2]), m, n, k)
    k_steps = math.ceil(k / SWIZZLE_K)
    found = []
    for tile in WGMMA_TILES:
        tiles = shape[0] * math.ceil(m / tile[0]) * math.ceil(n / tile[1])
        for stages in WGMMA_STAGES:
            if WgmmaCandidate.shared_bytes(tile, stages) > MAX_SHARED_BYTES:
                continue
            for split in range(1, MAX_SPLIT + 1):
                if split > 1 and (
                    tiles * (split - 1) >= sm_count
                    or kernel.part_steps(k_steps, split) < SPLIT_MIN_STEPS
                    or kernel.leaves_empty_part(k_steps, split)
                ):
                    continue
                found.append(
                    WgmmaCandidate.estimate(shape, tile, stages, split, sm_count)
                )
    return sorted(
        found,
        key=lambda c: (round(c.seconds * 1e8), -c.rows * c.cols, -c.stages, c.split),
    )


def wgmma_schedule(matmul: molten.MatmulOp, sm_count: int) -> kernel.ScheduleAttr:
    """The schedule of a gemm on sm_90a's warpgroup tensor cores: the tile
    stages and split-K the estimate finds fastest (wgmma_candidates); a
    warpgroup per 64 rows of the tile, a K step of 64. Where the persistent
    TMA kernel takes the gemm: that kernel (one block an SM, its next
    tile's loads overlapping this one's epilogue) in the tile and split-K
    its estimate finds fastest (persistent_ranked), where that beats the
    cp.async kernel's estimate (with WGMMA_STREAM_SECONDS where streaming
    the operands bounds that)."""
    return wgmma_pick(matmul, sm_count)[0]


def wgmma_pick(
    matmul: molten.MatmulOp, sm_count: int
) -> tuple[kernel.ScheduleAttr, float]:
    """wgmma_schedule's schedule and its estimated seconds."""
    best = wgmma_candidates(matmul, sm_count)[0]
    cp_async = best.seconds + (WGMMA_STREAM_SECONDS if best.streamed else 0.0)
    if not takes_persistent(matmul):
        return wgmma_schedule_of(best), cp_async
    ranked = persistent_ranked(matmul, sm_count)
    if not ranked or ranked[0].seconds > cp_async:
        return wgmma_schedule_of(best), cp_async
    fastest = ranked[0]
    schedule = persistent_schedule(
        (fastest.rows, fastest.cols), sm_count, fastest.split
    )
    return schedule, fastest.seconds


PERSISTENT_ROWS = 128
"""The rows of the persistent kernel's tiles: two consumer warpgroups."""
PERSISTENT_COLS = tuple(range(128, 257, 16))
"""The widths the heuristic weighs for the persistent kernel's 128-row
tiles where B is stored [N, K] (any multiple of 16 from 128 to 256, so
that the tiles of a shape fill the SMs' rounds: cuBLAS picks 144, 112 or
80 as well); where B is stored [K, N], the whole 64-column blocks among
them."""
SMALL_M = 128
"""Rows up to which the persistent kernel also weighs tiles of 64 rows
(one consumer warpgroup): at 128 rows, twice as many tiles to share the
weights' stream among the SMs; at fewer than 64, no rows of 128-row tiles
wasted."""
SMALL_M_COLS = tuple(range(64, 257, 8))
"""The widths the heuristic weighs for 64-row tiles (SMALL_M) where B is
stored [N, K]: narrow ones too (wgmma takes any multiple of 8), since at
few rows the tile count, not the tile's efficiency, sets the time."""
NARROW_COLS = (32, 40, 48, 56)
"""Widths under 64 that the heuristic also weighs for 64-row tiles where B
is stored [N, K] and the gemm has more than NARROW_MIN_ROWS rows: on the
H100 (2026-11-26, benchmarks/results/*-gemm-narrow-tiles.txt) 64x32 tiles
took 64x3584x3584 and 64x4096x4096 in 15.3 and 17.4 us, against 17.0 and
18.8 for the cp.async kernel (112 and 128 tiles streaming B, one an SM)."""
NARROW_MIN_ROWS = 32
"""Rows up to which NARROW_COLS are not weighed: at 16 rows the same tiles
ran 3-6 us over their estimate and lost to the cp.async kernel by 3-10%
(the persistent kernel's time at few rows is not yet understood)."""
PERSISTENT_WIDEST = (PERSISTENT_ROWS, max(PERSISTENT_COLS))
"""The autotuner's tile in clusters of two."""
PERSISTENT_SECONDS = (5.4e-6, 3.35e-6, 0.033e-6, 0.00256e-6)
"""The persistent kernel's time in 128-row tiles of N columns: once (its
start and its last epilogue), a round of tiles on the SMs, and a K step
(of 64) of a round, a + b N (half of b N for 64-row tiles). Fitted on the
H100 (2026-11-26, benchmarks/results/*-gemm-persistent-widths.txt) to 36
times of six shapes (512 to 8192 rows, 8 to 64 K steps) in widths 128 to
256 by 16: within 13% of each, and it picks the fastest width of each
shape but 512x14336x4096 (256 for 160, 3% slower)."""
SM_STREAM_BYTES_PER_S = 100e9
"""The most a persistent block's TMA loads stream into one SM (from L2
or DRAM). Fitted on the H100 (2026-11-26,
benchmarks/results/*-gemm-small-m.txt): where few rows leave the kernel
bound by streaming B, a tile the SM takes alone in a round of its own
costs its bytes at this rate (16x18944x3584 in 148 tiles of 64x128: 56.8
us; in 132 tiles of 64x144: 50.8)."""


def persistent_tiles(matmul: molten.MatmulOp) -> list[tuple[int, int]]:
    """The tiles the heuristic weighs for the persistent kernel: 128 rows by
    PERSISTENT_COLS where the gemm has more than 64 rows, 64 rows by
    SMALL_M_COLS where it has at most SMALL_M (and by NARROW_COLS too
    above NARROW_MIN_ROWS); of each, the widths B's layout takes (whole
    64-column blocks of a B stored [K, N])."""
    m = shape_of(matmul.result)[-2]
    whole_blocks = matmul.transpose_b is None  # B stored [K, N]
    shapes = [(PERSISTENT_ROWS, PERSISTENT_COLS)] if m > WGMMA_M else []
    if m <= SMALL_M:
        narrow = NARROW_COLS if m > NARROW_MIN_ROWS else ()
        shapes.append((WGMMA_M, narrow + SMALL_M_COLS))
    return [
        (rows, cols)
        for rows, widths in shapes
        for cols in widths
        if not whole_blocks or cols % SWIZZLE_K == 0
    ]


def persistent_units(tile: tuple[int, int], m: int, n: int, split: int = 1) -> int:
    """The persistent kernel's units of work in an M x N gemm: a tile's
    part of K."""
    return math.ceil(m / tile[0]) * math.ceil(n / tile[1]) * split


def persistent_splits(
    tile: tuple[int, int], m: int, n: int, k_steps: int, sm_count: int
) -> list[int]:
    """The split-K the persistent kernel weighs for `tile`s: none, and
    equal parts (2 to 4) of at least PERSISTENT_SPLIT_MIN_STEPS steps
    whose units of work (a tile's part) all fit in one round of the SMs.
    In 64-row tiles, only those whose units keep SMALL_M_BUSY of the SMs
    busy."""
    tiles = persistent_units(tile, m, n)
    splits = [1] + [
        split
        for split in (2, 3, 4)
        if k_steps % split == 0
        and k_steps // split >= PERSISTENT_SPLIT_MIN_STEPS
        and tiles * split <= sm_count
    ]
    if tile[0] > WGMMA_M:
        return splits
    return [split for split in splits if tiles * split >= SMALL_M_BUSY * sm_count]


SMALL_M_BUSY = 0.75
"""The share of the SMs a persistent gemm's 64-row tiles must keep busy:
on the H100 at 16 rows (2026-11-26, benchmarks/results/*-gemm-small-m.txt)
56 and 64 tiles streamed B at 2 TB/s, 16-25% slower than the cp.async
kernel, where 128 and 132 tiles ran 4-11% faster than it."""


def persistent_ranked(
    matmul: molten.MatmulOp, sm_count: int, widths: Sequence[int] | None = None
) -> list[WgmmaCandidate]:
    """The persistent kernel's tiles and splits for this matmul
    (persistent_tiles, persistent_splits), each with the most stages that
    fit and its estimated time (persistent_seconds), the fastest first; on
    a tie (bound by DRAM alike), the one whose units keep more of the SMs'
    rounds busy, then the larger tile, then fewer parts. `widths`: the
    matmul's columns are those of siblings tiled one after another (each
    padded to whole tiles)."""
    result = shape_of(matmul.result)
    m, n = result[-2:]
    k_steps = math.ceil(shape_of(matmul.lhs)[-1] / SWIZZLE_K)

    def tiled(cols: int) -> int:
        """The columns the tiles of `cols` cover."""
        if widths is None:
            return n
        return cols * sum(math.ceil(w / cols) for w in widths)

    found = [
        WgmmaCandidate(
            *tile,
            most_stages(tile, PERSISTENT_MAX_STAGES),
            split,
            persistent_seconds(tile, m, tiled(tile[1]), k_steps, sm_count, split),
        )
        for tile in persistent_tiles(matmul)
        for split in persistent_splits(tile, m, tiled(tile[1]), k_steps, sm_count)
    ]

    def busy(c: WgmmaCandidate) -> float:
        units = persistent_units((c.rows, c.cols), m, tiled(c.cols), c.split)
        return units / (math.ceil(units / sm_count) * sm_count)

    return sorted(
        found,
        key=lambda c: (round(c.seconds * 1e8), -busy(c), -c.rows * c.cols, c.split),
    )


def persistent_schedule(
    tile: tuple[int, int], sm_count: int, split: int = 1, cluster: int = 1
) -> kernel.ScheduleAttr:
    """The persistent TMA kernel's schedule in `tile`s with the most stages
    that fit (most_stages), a block an SM."""
    stages = most_stages(tile, PERSISTENT_MAX_STAGES)
    return wgmma_tile_schedule(
        *tile, stages, split=split, persistent=sm_count, cluster=cluster
    )


def persistent_seconds(
    tile: tuple[int, int],
    m: int,
    n: int,
    k_steps: int,
    sm_count: int,
    split: int = 1,
) -> float:
    """The estimated time of an M x N gemm of `k_steps` K steps in the
    persistent TMA kernel's `tile`s, K split in `split` parts
    (PERSISTENT_SECONDS): once, plus the rounds of units (a tile's part)
    the busiest SM takes, or, where longer, the rounds' loads streamed (a
    round's share of the operands and output at DRAM's bandwidth, or a
    unit's operand tiles at one SM's: SM_STREAM_BYTES_PER_S, or what its
    stages in flight sustain); split-K adds the last block's sum of the
    parts."""
    rows, cols = tile
    units = persistent_units(tile, m, n, split)
    rounds, last = divmod(units, sm_count)
    steps = k_steps // split
    once, per_round, step, per_column = PERSISTENT_SECONDS
    k = k_steps * SWIZZLE_K
    moved = 2 * (m * k + n * k + m * n)
    # Rows of A past M are zeros that no load fetches.
    step_bytes = 2 * (min(rows, m) + cols) * SWIZZLE_K
    in_flight = (most_stages(tile, PERSISTENT_MAX_STAGES) - 1) * step_bytes
    stream = min(SM_STREAM_BYTES_PER_S, in_flight / DRAM_LATENCY_S)

    def streamed(units_in_round: int) -> float:
        return max(
            moved * units_in_round / units / DRAM_BYTES_PER_S,
            steps * step_bytes / stream,
        )

    loads = rounds * streamed(sm_count) + (streamed(last) if last else 0.0)
    work = math.ceil(units / sm_count) * (
        per_round + steps * (step + per_column * cols * rows / PERSISTENT_ROWS)
    )
    seconds = once + max(work, loads)
    if split > 1:
        # The last block of a tile reads and adds every part's f32 tile.
        part_bytes = min(m, rows) * cols * 4
        seconds += SPLIT_SECONDS + split * part_bytes / SM_BYTES_PER_S
    return seconds


def most_stages(tile: tuple[int, int], limit: int = max(WGMMA_STAGES)) -> int:
    """The most stages of a wgmma gemm's tile that fit in shared memory
    beside their two mbarriers each (which the persistent kernel has), at
    most `limit`."""
    per_stage = WgmmaCandidate.shared_bytes(tile, 1) + 2 * element_bytes(BARRIER_TYPE)
    return min(MAX_SHARED_BYTES // per_stage, limit)


PERSISTENT_MAX_STAGES = 16
"""The persistent kernel's stages at most: as many as fit, so that narrow
tiles (64 rows, few columns) keep enough bytes in flight to stream B."""


PERSISTENT_SPLIT_MIN_STEPS = 64
"""The fewest K steps of a part of the persistent kernel's split-K: on the
H100 at 512 rows, parts of 112 and 148 steps ran 11-15% faster than the
cp.async kernel's best, parts of 28 and 32 steps 10-17% slower (the f32
parts' round trip through L2 against too little work); at 128 rows, parts
of 14 to 32 steps ran 20-45% slower than 64-row tiles unsplit
(benchmarks/results/*-gemm-small-m.txt)."""


def wgmma_schedule_of(candidate: WgmmaCandidate) -> kernel.ScheduleAttr:
    """The schedule of a wgmma gemm of the candidate's tile and split."""
    return wgmma_tile_schedule(
        candidate.rows, candidate.cols, candidate.stages, split=candidate.split
    )


def wgmma_tile_schedule(
    rows: int,
    cols: int,
    stages: int,
    split: int = 1,
    persistent: int = 0,
    cluster: int = 1,
) -> kernel.ScheduleAttr:
    """The schedule of a wgmma gemm of rows x cols tiles: a warpgroup per 64
    rows of a tile, one warpgroup tile as wide as the block's, a K step of
    one swizzled row; `persistent` blocks add a producer warpgroup, in
    clusters of `cluster` blocks."""
    warpgroups = rows // WGMMA_M + (1 if persistent else 0)
    return kernel.ScheduleAttr(
        kernel.WARPGROUP_WARPS * WARP * warpgroups,
        tile=(rows, cols, SWIZZLE_K),
        warp=(WGMMA_M, cols),
        stages=stages,
        mma_warps=kernel.WARPGROUP_WARPS,
        split=split,
        persistent=persistent,
        cluster=cluster,
    )


WGMMA_N_STEP = 8
"""wgmma's N (a warpgroup tile's width) is a multiple of this."""


def siblings_as_one(matmuls: list[molten.MatmulOp]) -> molten.MatmulOp:
    """The matmul a kernel of sibling matmuls (sharing their lhs) is
    estimated as: their lhs times a rhs of all their columns, detached
    from the IR. Its tiles are the kernel's tiles of every sibling side
    by side, or one after another: the same loads, tensor-core work and
    accumulators."""
    first = matmuls[0]
    *batch, m, _ = shape_of(first.result)
    *rhs_batch, rows, cols = shape_of(first.rhs)
    wide = sum(shape_of(mm.result)[-1] for mm in matmuls)
    rhs_shape = (
        [*rhs_batch, wide, cols] if first.transpose_b else [*rhs_batch, rows, wide]
    )
    rhs_type = TensorType(first.rhs.type.element_type, rhs_shape)  # type: ignore
    operands = Block(arg_types=[first.lhs.type, rhs_type]).args
    result = TensorType(first.result.type.element_type, [*batch, m, wide])  # type: ignore
    return molten.MatmulOp.create(
        operands=list(operands),
        result_types=[result],
        properties=dict(first.properties),
    )


def siblings_schedules(
    matmuls: list[molten.MatmulOp],
    sm_count: int,
    count: int = 1,
    side_by_side: bool | None = None,
) -> list[kernel.ScheduleAttr]:
    """The schedules of a gemm kernel of sibling matmuls (or of one with a
    prologue, which these take alike), at most `count`,
    the estimate's fastest first: the persistent TMA kernel's (the kernel
    that computes siblings on tensor cores) in the tiles persistent_ranked
    finds fastest for them as one (siblings_as_one); B stored [N, K], K
    unsplit. Side by side (`side_by_side`; by default where their types
    agree), each tile is shared out by column among the siblings
    (so a width each sibling's wgmma takes), the stages of the whole
    tile; else each tile is one sibling's, the tiles of each one after
    another."""
    found = []
    for c, cols in _siblings_ranked(matmuls, sm_count, side_by_side):
        found.append(wgmma_tile_schedule(c.rows, cols, c.stages, persistent=sm_count))
        if len(found) == count:
            break
    return found


def _siblings_ranked(
    matmuls: list[molten.MatmulOp], sm_count: int, side_by_side: bool | None
) -> list[tuple[WgmmaCandidate, int]]:
    """siblings_schedules' candidates, the fastest first, each with the
    columns of each sibling's tile (a share of the candidate's tile side
    by side, else all of it)."""
    # Split-K and B stored [K, N] left ptxas serializing the siblings'
    # wgmmas (C7520): not taken until that is understood.
    if matmuls[0].transpose_b is None:
        return []
    if side_by_side is None:
        side_by_side = all(mm.is_sibling_of(matmuls[0]) for mm in matmuls)
    products = len(matmuls) if side_by_side else 1
    widths = None if side_by_side else [shape_of(mm.result)[-1] for mm in matmuls]
    found = []
    for c in persistent_ranked(siblings_as_one(matmuls), sm_count, widths):
        cols, rest = divmod(c.cols, products)
        if not (rest or cols % WGMMA_N_STEP or c.split > 1):
            found.append((c, cols))
    return found


def siblings_pay(matmuls: list[molten.MatmulOp], sm_count: int) -> bool:
    """Whether matmuls of one lhs that no op reads together (q, k and v)
    are estimated to take no longer in one persistent kernel, each tile
    one's, than each in its own kernel (wgmma_pick)."""
    ranked = _siblings_ranked(matmuls, sm_count, side_by_side=False)
    if not ranked:
        return False
    fastest = ranked[0][0].seconds
    return fastest <= sum(wgmma_pick(mm, sm_count)[1] for mm in matmuls)


def side_by_side(body_ops: Sequence[Operation]) -> bool:
    """Whether a gemm kernel's body reads several of its matmuls in one op
    (silu(gate) * up): its tiles then hold each matmul's tile of the same
    place, side by side."""
    reads: dict[SSAValue, frozenset[Operation]] = {}
    for op in body_ops:
        if op.has_trait(IsTerminator):
            continue  # the kernel's yield of its outputs
        found = frozenset().union(*(reads.get(v, frozenset()) for v in op.operands))
        if isinstance(op, molten.MatmulOp):
            found = found | {op}
        if len(found) > 1:
            return True
        for result in op.results:
            reads[result] = found
    return False


def has_prologue(body_ops: list[Operation]) -> bool:
    """Whether a gemm kernel computes its matmuls' lhs (fuse-prologue): then
    only the persistent TMA kernel, K unsplit, and the SIMT kernel take it."""
    return any(
        isinstance(op, molten.MatmulOp) and op.lhs.owner in body_ops for op in body_ops
    )


def gemm_schedule(
    body_ops: list[Operation], sm_count: int = H100_SMS, arch: str = "sm_90"
) -> kernel.ScheduleAttr:
    """The schedule of a gemm kernel: a GEMV for few rows, on tensor cores
    where they take its matmul (wgmma on sm_90a, else mma.sync), else on
    the SIMT cores. A kernel of sibling matmuls, or with a prologue: the
    persistent TMA kernel's (siblings_schedules), else (where its tiles
    do not take them) the SIMT kernel's."""
    matmuls = [op for op in body_ops if isinstance(op, molten.MatmulOp)]
    if len(matmuls) > 1 or has_prologue(body_ops):
        found = arch in WGMMA_ARCHS and siblings_schedules(
            matmuls, sm_count, side_by_side=side_by_side(body_ops)
        )
        return found[0] if found else simt_gemm_schedule(matmuls[0], sm_count)
    (matmul,) = matmuls
    if is_gemv(matmul):
        if matmul.transpose_b is None:
            return gemv_schedule(matmul, sm_count)
        if arch in WGMMA_ARCHS and takes_tensor_cores(matmul, 2):
            return gemv_nk_or_wgmma(matmul, sm_count)
        return gemv_nk_schedule(matmul)
    if arch in WGMMA_ARCHS and takes_tensor_cores(matmul, GEMV_MAX_M + 1):
        return wgmma_schedule(matmul, sm_count)
    tf32 = takes_tf32(matmul)
    if not (tf32 or takes_tensor_cores(matmul)):
        return simt_gemm_schedule(matmul, sm_count)
    if tf32:
        return kernel.ScheduleAttr(
            TF32_GEMM_BLOCK,
            tile=TF32_GEMM_TILE,
            warp=TF32_GEMM_WARP,
            stages=MMA_GEMM_STAGES,
        )
    return kernel.ScheduleAttr(
        MMA_GEMM_BLOCK,
        tile=MMA_GEMM_TILE,
        warp=MMA_GEMM_WARP,
        stages=MMA_GEMM_STAGES,
    )


ATTENTION_WARPS = 4
"""Warps of an attention block."""
ATTENTION_WARP_ROWS = 16
"""Query rows of each warp of an attention block (one mma's M)."""
ATTENTION_BLOCKS_PER_SM = 2
"""Blocks per SM a split attention aims at (two fit in shared memory at head
dimension 128): each keeps a tile of K and V in flight, and a decode reads
little else, so its speed is the bytes in flight per SM."""
ATTENTION_TILES_PER_PART = 2
"""The fewest tiles of keys a part of a split attention takes: fewer, and
the copy pipeline barely fills before the part is done."""


def attention_split(
    groups: int, key_tiles: int, causal: bool, sm_count: int, may_split: bool = True
) -> int:
    """The parts the keys of each of `groups` blocks of query rows split
    into (flash-decoding): none while the groups fill the SMs, else as many
    as `ATTENTION_BLOCKS_PER_SM` blocks an SM take in one wave, each part
    at least `ATTENTION_TILES_PER_PART` tiles. A causal attention is not
    split (its groups see different numbers of keys), nor any unless
    `may_split`."""
    if causal or not may_split or groups >= sm_count:
        return 1
    wanted = ATTENTION_BLOCKS_PER_SM * sm_count // groups
    return max(1, min(wanted, key_tiles // ATTENTION_TILES_PER_PART))


ATTENTION_WARPGROUPS = 2
"""Warpgroups of a wgmma attention block (sm_90a), 64 query rows each, above
head dimension 64; one at 64, where two blocks of one fit an SM and run
out of step with each other (each waits at its own barrier per tile of
keys). Measured on the H100 (benchmarks/experiments/attention_wgmma.py,
2026-11-26, f16): at head dimension 64 one warpgroup ran 2% faster without
the causal mask and 12% with it; at 128, two ran 4-9% faster at 8K keys
and level at 2K."""
ATTENTION_WGMMA_KEYS = 128
"""Keys of a wgmma attention's K and V tiles at head dimension 128 (a thread
holds keys / 2 f32 scores and value head / 2 outputs); 64 at head dimension
64 and above 128. Measured on an H200 (benchmarks/experiments/
attention_wgmma.py, 2026-11-26, f16): at head dimension 128, 128 keys ran
5-14% faster than 64; at head dimension 64, 64 keys ran 4-14% faster
without the causal mask and level with it."""
ATTENTION_WGMMA_STAGES = 2
"""K and V tiles in shared memory for a wgmma attention: one copied while
the other is computed on. Three (where they fit) leave each tile's P V
running beside the next tile's Q Kᵀ and softmax (FlashAttention-3's
intra-warpgroup overlap); on an H200 that ran 4-9% slower at head dimension
128 (benchmarks/experiments/attention_wgmma.py, 2026-11-26, f16): the two
warpgroups of a block already overlap each other's softmax and products,
and the kernel issues more instructions than the tensor cores wait for."""


def attention_schedule(
    body_ops: list[Operation],
    sm_count: int = H100_SMS,
    arch: str = "sm_90",
    may_split: bool = True,
) -> kernel.ScheduleAttr:
    """An attention kernel's: a block of four warps takes 64 query rows
    (tile M) against K and V tiles of 64 keys (tile N; 32 above head
    dimension 128, where each warp's output accumulators are larger, when
    the head dims are multiples of 32), the
    whole head dimension (tile K) at once, two tiles of K and V in flight;
    each warp's tile is 16 rows by the value head dimension. The keys
    split (attention_split) where `may_split`."""
    found = attention_in(body_ops, "kernel-schedule")
    head = shape_of(found.query)[-1]
    value_head = shape_of(found.value)[-1]
    # 32 keys a tile where the accumulators are large, if the block's
    # 16-byte copies divide such a tile (head dims that are multiples of 32).
    narrow = max(head, value_head) > 128 and not (head % 32 or value_head % 32)
    keys = 32 if narrow else 64
    rows = ATTENTION_WARP_ROWS * ATTENTION_WARPS
    *batch, queries, _ = shape_of(found.weighted.result)
    # Few queries (a decode) leave a block's rows idle: the query heads
    # that share a KV head fill them, and each K and V tile is read once
    # for all of them. (Not causal: its tiles of keys follow the rows.)
    pack = query_group(found) if queries < rows and not found.causal else 1
    if pack == 1 and arch in WGMMA_ARCHS and takes_wgmma_attention(head, value_head):
        return wgmma_attention_schedule(found, sm_count, may_split)
    groups = math.prod(batch) // pack * -(-pack * queries // rows)
    key_tiles = -(-shape_of(found.key)[-2] // keys)
    return kernel.ScheduleAttr(
        WARP * ATTENTION_WARPS,
        tile=[rows, keys, head],
        split=attention_split(groups, key_tiles, found.causal, sm_count, may_split),
        warp=[ATTENTION_WARP_ROWS, value_head],
        stages=2,
        pack=pack,
    )


def takes_wgmma_attention(head: int, value_head: int) -> bool:
    """Whether wgmma takes an attention's products: head dims that are whole
    128-byte swizzled rows (multiples of 64), at most 256 (wgmma's N)."""
    return all(d % 64 == 0 and d <= 256 for d in (head, value_head))


def stages_bytes(rows: int, keys: int, head: int, value_head: int, stages: int) -> int:
    """Shared memory of an attention's 16-bit Q tile and `stages` K and V tiles."""
    return 2 * (rows * head + stages * keys * (head + value_head))


def wgmma_attention_schedule(
    found, sm_count: int, may_split: bool = True
) -> kernel.ScheduleAttr:
    """An attention on sm_90a's wgmma: `ATTENTION_WARPGROUPS` warpgroups of 64
    query rows (one at head dimension 64) against tiles of
    `ATTENTION_WGMMA_KEYS` keys (64 at head dimension 64 and above 128),
    `ATTENTION_WGMMA_STAGES` stages where they fit the shared memory, else
    two; keys split as on mma.sync."""
    head = shape_of(found.query)[-1]
    value_head = shape_of(found.value)[-1]
    keys = ATTENTION_WGMMA_KEYS if 64 < max(head, value_head) <= 128 else 64
    groups_of_rows = ATTENTION_WARPGROUPS if max(head, value_head) > 64 else 1
    rows = WGMMA_M * groups_of_rows
    # Three stages (P V left running) where they fit the shared memory.
    stages = ATTENTION_WGMMA_STAGES
    if stages_bytes(rows, keys, head, value_head, stages) > MAX_SHARED_BYTES:
        stages = 2
    *batch, queries, _ = shape_of(found.weighted.result)
    groups = math.prod(batch) * -(-queries // rows)
    key_tiles = -(-shape_of(found.key)[-2] // keys)
    return kernel.ScheduleAttr(
        WARP * kernel.WARPGROUP_WARPS * groups_of_rows,
        tile=[rows, keys, head],
        split=attention_split(groups, key_tiles, found.causal, sm_count, may_split),
        warp=[WGMMA_M, value_head],
        stages=stages,
        mma_warps=kernel.WARPGROUP_WARPS,
    )


def schedule_for(
    kind: kernel.KernelKind,
    body_ops: list[Operation],
    inputs: list[SSAValue],
    outputs: list[SSAValue],
    sm_count: int = H100_SMS,
    arch: str = "sm_90",
) -> kernel.ScheduleAttr:
    """The schedule of a kernel of `kind` with these body ops, inputs and
    outputs (tensors), for a device of `sm_count` SMs and target `arch`."""
    tensors = [*inputs, *outputs]
    if kind == kernel.KernelKind.ROW_REDUCE:
        rows, row, strided = reduced_rows(body_ops)
        if strided:
            return strided_row_schedule(rows, math.prod(row), sm_count)
        width = vector_width(row[-1], tensors)
        return row_reduce_schedule(rows, math.prod(row), width, sm_count)
    if kind == kernel.KernelKind.SCAN:
        rows, n, strided = scanned_rows(body_ops)
        width = 1 if strided else vector_width(n, tensors)
        return scan_schedule(rows, n, strided, width, sm_count)
    if kind == kernel.KernelKind.GEMM:
        return gemm_schedule(body_ops, sm_count, arch)
    if kind == kernel.KernelKind.POINTWISE:
        domain = kernel.iteration_domain(outputs)
        inner = domain[-1] if domain else 1
        if isinstance(inner, str):
            raise StaticShapeNeeded(
                f"kernel-schedule: a pointwise kernel whose innermost dimension is "
                f"named ({inner})"
            )
        width = vector_width(inner, tensors)
        return pointwise_schedule(molten.element_count(domain), width, sm_count)
    if kind == kernel.KernelKind.ATTENTION:
        return attention_schedule(body_ops, sm_count, arch)
    raise NotImplementedError(f"kernel-schedule: no heuristic for {kind.value} kernels")


def schedule_candidates(
    kfunc: kernel.FuncOp, count: int, sm_count: int = H100_SMS, arch: str = "sm_90"
) -> list[kernel.ScheduleAttr]:
    """The schedules an autotuner times for a kernel, at most `count`: the
    heuristic's first; for a wgmma gemm then the estimate's next fastest
    tiles and splits, each with the stages the estimate likes best for it,
    and, where `count` leaves room (6 or more) and the persistent TMA
    kernel takes the gemm (takes_persistent), that kernel
    (persistent_candidates) where the heuristic did not pick it. Other
    kernels have the heuristic's alone."""
    body = kfunc.body.block
    results = body.last_op
    assert isinstance(results, kernel.YieldOp)
    kind, ops = kfunc.kind.data, list(body.ops)
    picked = schedule_for(
        kind, ops, list(body.args), list(results.values), sm_count, arch
    )
    if kind != kernel.KernelKind.GEMM or arch not in WGMMA_ARCHS:
        return [picked]
    matmuls = [op for op in ops if isinstance(op, molten.MatmulOp)]
    if len(matmuls) > 1 or has_prologue(ops):
        together = side_by_side(ops)
        return siblings_schedules(matmuls, sm_count, count, together) or [picked]
    (matmul,) = matmuls
    if is_gemv(matmul) or not takes_tensor_cores(matmul, GEMV_MAX_M + 1):
        return [picked]
    persistent = []
    if count >= 6 and takes_persistent(matmul):
        persistent = [s for s in persistent_candidates(matmul, sm_count) if s != picked]
    found = [picked]
    shapes = {(picked.tile.data[0].data, picked.tile.data[1].data, picked.split.data)}
    for candidate in wgmma_candidates(matmul, sm_count):
        shape = (candidate.rows, candidate.cols, candidate.split)
        if len(found) == count - len(persistent):
            break
        if shape not in shapes:
            shapes.add(shape)
            found.append(wgmma_schedule_of(candidate))
    return found + persistent


PERSISTENT_CANDIDATES = 3
"""The persistent kernel's widths the autotuner tries, besides the widest
in clusters of two: the estimate's fastest (its widths' times lie within
13% of the estimate, so its second and third may win)."""


def persistent_candidates(
    matmul: molten.MatmulOp, sm_count: int
) -> list[kernel.ScheduleAttr]:
    """The persistent TMA gemm the autotuner tries: the
    PERSISTENT_CANDIDATES tiles and splits the estimate finds fastest, then
    the widest tile in clusters of two blocks multicasting B (which ran
    within 4% of one block on the H100, either way by shape:
    benchmarks/results/*-gemm-tma-schedules.txt)."""
    fastest = persistent_ranked(matmul, sm_count)[:PERSISTENT_CANDIDATES]
    return [
        persistent_schedule((c.rows, c.cols), sm_count, c.split) for c in fastest
    ] + [persistent_schedule(PERSISTENT_WIDEST, sm_count, cluster=2)]


def takes_persistent(matmul: molten.MatmulOp) -> bool:
    """Whether the persistent TMA gemm takes this matmul: one matrix (no
    batch axes) of f16 or bf16 operands, A stored [M, K], more than one
    row, at least 128 columns, and each operand's stored rows
    whole 16-byte units (TMA's rule)."""
    if named_rows([matmul]) is not None:
        return False  # its size classes are scheduled as matmuls of their own
    result = shape_of(matmul.result)
    element = matmul.lhs.type.element_type  # type: ignore
    return (
        isinstance(element, MMA_ELEMENT_TYPES)
        and len(result) == 2
        and matmul.transpose_a is None
        and result[0] > 1
        and result[1] >= 128
        and tma_reads_rows(shape_of(matmul.lhs)[-1], element)
        and tma_reads_rows(shape_of(matmul.rhs)[-1], element)
    )


GEMM_SIZE_CLASSES = (1, 4, 8, 32, 128, 512, 2048)
"""The bounds of the size classes of a gemm over a named M (its rows known
at run time only): a schedule each, picked at the class's bound (the
kernel of a class serves every M up to it); the kind of kernel changes
across them (a GEMV up to GEMV_MAX_M, split-K while few row tiles leave
SMs idle), and within a class the heuristic's pick at the bound holds."""
GEMM_OPEN_ROWS = 8192
"""The rows the schedule of a gemm's open-ended class (above the last of
GEMM_SIZE_CLASSES) is picked at: a long prefill's. (With 4096 here and no
class at 2048, Qwen2.5-7B's up projection at 2048 tokens ran 12% slower
than its schedule at 2048 on an H100.)"""


def named_rows(body_ops: Sequence[Operation]) -> str | None:
    """The name of a gemm kernel's M where it is named, else None."""
    matmuls = [op for op in body_ops if isinstance(op, molten.MatmulOp)]
    rows = value_dims(matmuls[0].result)[-2] if matmuls else None
    return rows if isinstance(rows, str) else None


ATTENTION_SIZE_CLASSES = (32, 128, 512, 2048)
"""The bounds of the size classes of an attention over a named sequence:
a block's 64 query rows pack the query heads that share K and V below
them (not causal), and the keys split while the blocks leave SMs idle."""
ATTENTION_OPEN_ROWS = 8192
"""The sequence an attention's open-ended class is scheduled at."""


def named_sequence(body_ops: Sequence[Operation]) -> str | None:
    """The name of an attention kernel's sequence axes (its queries' and
    keys') where one is named, else None; two names are refused."""
    found = attention_in(body_ops, "kernel-schedule")
    names = {
        d
        for t in (found.query, found.key)
        for d in value_dims(t)[-2:]
        if isinstance(d, str)
    }
    if len(names) > 1:
        raise StaticShapeNeeded(
            f"an attention whose queries and keys are named apart "
            f"({', '.join(sorted(names))}) is scheduled at one of them known "
            "only: give the sizes of all but one"
        )
    return names.pop() if names else None


def size_class_variants(
    kfunc: kernel.FuncOp,
    dim: str,
    classes: Sequence[int],
    open_size: int,
    pick: Callable[[list[Operation]], kernel.ScheduleAttr],
    sizes: molten.SizeRangeAttr | None = None,
) -> list[kernel.VariantAttr]:
    """The schedules of a kernel over the named `dim`, one per size class
    (`classes`' bounds, then the rest, picked at `open_size`): each `pick`'s
    on the kernel's ops with `dim` at the class's bound; a class whose
    schedule is the one before's joins it. In a copy of its graph for a
    range of `dim` (`sizes`), only the classes in it, the last up to its
    most."""
    bounds = [*classes, 0]
    if sizes is not None and sizes.dim.data == dim:
        least, most = sizes.least.data, sizes.most.data
        bounds = [b for b in classes if b >= least and (not most or b < most)]
        bounds.append(most)
    variants: list[kernel.VariantAttr] = []
    for most in bounds:
        at = kfunc.clone()
        specialize_types(at, {dim: most or open_size})
        schedule = pick(list(at.body.block.ops))
        if variants and variants[-1].schedule == schedule:
            variants.pop()
        variants.append(kernel.VariantAttr(dim, most, schedule))
    return variants


def gemm_variants(
    kfunc: kernel.FuncOp,
    sm_count: int = H100_SMS,
    arch: str = "sm_90",
    sizes: molten.SizeRangeAttr | None = None,
) -> list[kernel.VariantAttr]:
    """The schedules of a gemm kernel over a named M, one per size class
    (GEMM_SIZE_CLASSES, then the rest; those in `sizes`, the range of the
    graph copy that launches it): each the heuristic's at the class's
    bound."""
    dim = named_rows(list(kfunc.body.block.ops))
    assert dim is not None
    return size_class_variants(
        kfunc,
        dim,
        GEMM_SIZE_CLASSES,
        GEMM_OPEN_ROWS,
        lambda ops: gemm_schedule(ops, sm_count, arch),
        sizes,
    )


def attention_variants(
    kfunc: kernel.FuncOp,
    dim: str,
    sm_count: int = H100_SMS,
    arch: str = "sm_90",
    sizes: molten.SizeRangeAttr | None = None,
) -> list[kernel.VariantAttr]:
    """The schedules of an attention over a named sequence, one per size
    class (ATTENTION_SIZE_CLASSES, then the rest; those in `sizes`): each
    the heuristic's at the class's bound, its keys unsplit (a split's
    parts in scratch are sized by its grid, not yet by a class's bound; a
    self-attention over few tokens has few keys, and a causal one is never
    split)."""
    return size_class_variants(
        kfunc,
        dim,
        ATTENTION_SIZE_CLASSES,
        ATTENTION_OPEN_ROWS,
        lambda ops: attention_schedule(ops, sm_count, arch, may_split=False),
        sizes,
    )


@dataclass
class ScheduleKernel(RewritePattern):
    sm_count: int
    arch: str
    sizes: dict[str, molten.SizeRangeAttr] = field(default_factory=dict)
    """The range of sizes of the graph copy that launches a kernel, by its
    name (split-size-classes)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: kernel.FuncOp | kernel.FusedOp, rewriter: PatternRewriter
    ):
        if op.schedule is not None or getattr(op, "variants", None) is not None:
            return
        body = op.body.block
        if (
            isinstance(op, kernel.FuncOp)
            and op.kind.data == kernel.KernelKind.GEMM
            and named_rows(list(body.ops)) is not None
        ):
            sizes = self.sizes.get(op.sym_name.data)
            op.variants = ArrayAttr(gemm_variants(op, self.sm_count, self.arch, sizes))
            rewriter.notify_op_modified(op)
            return
        if (
            isinstance(op, kernel.FuncOp)
            and op.kind.data == kernel.KernelKind.ATTENTION
            and (dim := named_sequence(list(body.ops))) is not None
        ):
            sizes = self.sizes.get(op.sym_name.data)
            variants = attention_variants(op, dim, self.sm_count, self.arch, sizes)
            if len(variants) == 1:  # one schedule serves every size
                op.schedule = variants[0].schedule
            else:
                op.variants = ArrayAttr(variants)
            rewriter.notify_op_modified(op)
            return
        results = body.last_op
        assert isinstance(results, kernel.YieldOp)
        op.schedule = schedule_for(
            op.kind.data,
            list(body.ops),
            list(body.args),
            list(results.values),
            self.sm_count,
            self.arch,
        )
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class KernelSchedule(ModulePass):
    """Attaches a heuristic #kernel.schedule to each kernel that has none, for
    a device of `sm_count` SMs and the target `arch` (sm_90a: gemms on
    wgmma)."""

    name = "kernel-schedule"

    sm_count: int = H100_SMS
    arch: str = "sm_90"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.sm_count < 1:
            raise PassFailedException("kernel-schedule: sm_count must be >= 1")
        if not re.fullmatch(r"sm_\d+a?", self.arch):
            raise PassFailedException(
                f"kernel-schedule: arch is a target such as sm_90 or sm_90a, not "
                f"{self.arch!r}"
            )
        PatternRewriteWalker(
            ScheduleKernel(self.sm_count, self.arch, launched_in_ranges(op)),
            apply_recursively=False,
        ).rewrite_module(op)


def launched_in_ranges(module: ModuleOp) -> dict[str, molten.SizeRangeAttr]:
    """The range of sizes of the graph copies (split-size-classes) that
    launch each kernel launched by one: the least range that holds them
    all (the launcher runs each launch in its own copy's only)."""
    found: dict[str, molten.SizeRangeAttr] = {}
    for graph in module.ops:
        sizes = molten.size_range_of(graph)
        if sizes is None:
            continue
        for launch in graph.walk():
            if not isinstance(launch, kernel.LaunchOp):
                continue
            name = launch.callee.string_value()
            found[name] = sizes.joined(found.get(name, sizes))
    return found
