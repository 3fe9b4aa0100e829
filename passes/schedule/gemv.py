"""The GEMV family: a gemm of at most GEMV_MAX_M rows (decode). B stored
[K, N]: each thread sums `vector` columns over every `k_lanes`-th row of B,
B streamed once. B stored [N, K] (x @ w.T): a warp a column, its lanes on
16-byte runs of K; on a target with wgmma, from two rows, wgmma instead
where its estimate beats the GEMV's."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import Float32Type

from molten.dialects import kernel, molten
from molten.dialects.cuda import element_bytes
from molten.dialects.molten import shape_of
from molten.passes.schedule.common import (
    GEMV_MAX_M,
    WARP,
    FamilyRule,
    KernelBody,
    is_gemv,
    round_up,
    takes_tensor_cores,
    vector_width,
)
from molten.passes.schedule.cost import gemv_nk_seconds
from molten.passes.schedule.target import Target
from molten.passes.schedule.wgmma import wgmma_pick

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


def gemv_schedule(matmul: molten.MatmulOp, target: Target) -> kernel.ScheduleAttr:
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
            and math.ceil(n / (runs * width)) * batches
            >= math.ceil(target.sm_count * 7 / 8)
            and runs * sums_bytes_a_run <= target.static_shared_per_block
        )

    runs = min(WARP, max(1, GEMV_RUN_BYTES // (width * itemsize)))
    while fits(2 * runs):
        runs *= 2
    lanes = block // runs
    return kernel.ScheduleAttr(
        kernel.ScheduleFamily.GEMV,
        block,
        vector=width,
        tile=(m, runs * width, round_up(k, lanes)),
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


def gemv_nk_or_wgmma(matmul: molten.MatmulOp, target: Target) -> kernel.ScheduleAttr:
    """A gemm of few rows, B stored [N, K], on sm_90a: the GEMV where it has
    at most GEMV_NK_MAX_M rows and its estimate beats wgmma's, else wgmma
    (64-row tiles; the rows past M cost nothing where streaming B bounds
    the time)."""
    rows = shape_of(matmul.result)[-2]
    if rows == 1:
        return gemv_nk_schedule(matmul)
    wgmma, wgmma_seconds = wgmma_pick(matmul, target)
    if rows <= GEMV_NK_MAX_M and gemv_nk_seconds(matmul, target) <= wgmma_seconds:
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
        kernel.ScheduleFamily.GEMV,
        GEMV_NK_BLOCK,
        vector=width,
        tile=(m, GEMV_NK_BLOCK // WARP * columns, round_up(k, WARP * width)),
        stages=stages,
        k_lanes=WARP,
    )


class GemvRule(FamilyRule):
    """A gemm of one matmul of few rows."""

    kind = kernel.KernelKind.GEMM

    def applies(self, body: KernelBody, target: Target) -> bool:
        matmuls = body.matmuls
        return len(matmuls) == 1 and is_gemv(matmuls[0])

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        (matmul,) = body.matmuls
        if matmul.transpose_b is None:
            return gemv_schedule(matmul, target)
        if target.wgmma and takes_tensor_cores(matmul, 2):
            return gemv_nk_or_wgmma(matmul, target)
        return gemv_nk_schedule(matmul)
