"""The row_reduce family: rows held in registers (several short rows a
block, a block a row, or a row split across cooperating blocks), rows
walked in passes where none of those holds them, and strided rows a thread
each."""

from __future__ import annotations

import math

from molten.dialects import kernel
from molten.dialects.kernel import MAX_BLOCK, ScheduleFamily
from molten.passes.fuse_reduction import STRIDED_SHORT_ROW
from molten.passes.schedule.common import (
    WARP,
    FamilyRule,
    KernelBody,
    reduced_rows,
    round_up,
    vector_width,
)
from molten.passes.schedule.pointwise import pointwise_schedule
from molten.passes.schedule.target import Target

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


def row_reduce_schedule(
    rows: int | None, n: int, width: int, target: Target
) -> kernel.ScheduleAttr:
    """The schedule of `rows` rows of `n` elements, accessed `width` at a time.
    Where `rows` is known only at run time (None), as for many rows, and a
    row is never split across blocks (that needs scratch per row): a row
    too long for one block's registers is walked in passes."""
    most = max(MIN_ROW_ELEMENTS_PER_THREAD, RUNS_PER_THREAD * width)
    if n <= WARP * most:
        lanes = 1 << max(0, math.ceil(math.log2(math.ceil(n / most))))
        per_thread = round_up(math.ceil(n / lanes), width)
        return short_rows_schedule(
            ScheduleFamily.ROW_REDUCE, rows, lanes, width, per_thread, target
        )
    if n <= MAX_BLOCK * MAX_ROW_ELEMENTS_PER_THREAD:
        threads = math.ceil(n / most)
        block = min(MAX_BLOCK, round_up(threads, WARP))
        per_thread = round_up(math.ceil(n / block), width)
        return kernel.ScheduleAttr(
            ScheduleFamily.ROW_REDUCE,
            block,
            vector=width,
            elements_per_thread=per_thread,
        )
    if rows is None:
        per_thread = round_up(MAX_ROW_ELEMENTS_PER_THREAD, width)
        return kernel.ScheduleAttr(
            ScheduleFamily.ROW_REDUCE,
            MAX_BLOCK,
            vector=width,
            elements_per_thread=per_thread,
        )
    part = SPLIT_BLOCK * MAX_ROW_ELEMENTS_PER_THREAD
    split = math.ceil(n / part)
    resident = target.sm_count * (kernel.SPLIT_THREADS_PER_SM // SPLIT_BLOCK)
    if rows * split > resident >= rows:
        # Not every row's group fits at once (32 rows of 152,064 f32 would
        # run in two rounds): fewer blocks a row, all resident, each
        # walking its part in passes of the registers' size.
        split = resident // rows
        return kernel.ScheduleAttr(
            ScheduleFamily.ROW_REDUCE,
            SPLIT_BLOCK,
            vector=width,
            elements_per_thread=round_up(MAX_ROW_ELEMENTS_PER_THREAD, width),
            split=split,
        )
    if split <= resident:
        per_thread = round_up(math.ceil(n / (split * SPLIT_BLOCK)), width)
        return kernel.ScheduleAttr(
            ScheduleFamily.ROW_REDUCE,
            SPLIT_BLOCK,
            vector=width,
            elements_per_thread=per_thread,
            split=split,
        )
    return kernel.ScheduleAttr(
        ScheduleFamily.ROW_REDUCE,
        LONG_ROW_BLOCK,
        vector=width,
        elements_per_thread=width,
        split=resident,
    )


def strided_row_schedule(
    rows: int | None, n: int, target: Target
) -> kernel.ScheduleAttr:
    """The schedule of `rows` strided rows of `n` elements: a thread a row
    (consecutive threads on consecutive rows, so each load is coalesced
    across them), blocks sized as a pointwise kernel's; a row of at most
    `STRIDED_SHORT_ROW` (the rows fuse-reduction keeps strided whatever their
    number) held in registers, a longer one walked twice
    where it is read again, by blocks of 1024 where there are rows for a
    block an SM."""
    per_thread = n if n <= STRIDED_SHORT_ROW else 1
    if per_thread == 1 and (rows is None or rows >= MAX_BLOCK * target.sm_count):
        # Walked rows: 1024 threads a block ran the mean over dim 1 of
        # [128, 4096, 4095] 7% faster than 256 (H100, strided_rows.py).
        threads = MAX_BLOCK
    else:
        block = pointwise_schedule(math.inf if rows is None else rows, 1, target)
        threads = block.block.data
    return kernel.ScheduleAttr(
        ScheduleFamily.ROW_REDUCE,
        threads,
        rows_per_block=threads,
        vector=1,
        elements_per_thread=per_thread,
    )


def short_rows_schedule(
    family: ScheduleFamily,
    rows: int | None,
    lanes: int,
    width: int,
    per_thread: int,
    target: Target,
) -> kernel.ScheduleAttr:
    """Rows of `lanes` threads each (a power of two up to a warp), several a
    block: full warps, and more blocks than SMs where there are rows for
    them (row reductions and scans)."""
    wanted = SHORT_ROW_BLOCK if rows is None else max(1, rows // target.sm_count)
    rows_per_block = max(WARP // lanes, min(SHORT_ROW_BLOCK // lanes, wanted))
    rows_per_block = 1 << (rows_per_block.bit_length() - 1)
    return kernel.ScheduleAttr(
        family,
        lanes * rows_per_block,
        rows_per_block=rows_per_block,
        vector=width,
        elements_per_thread=per_thread,
    )


class RowReduceRule(FamilyRule):
    kind = kernel.KernelKind.ROW_REDUCE

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        rows, row, strided = reduced_rows(body.ops)
        if strided:
            return strided_row_schedule(rows, math.prod(row), target)
        width = vector_width(row[-1], body.tensors)
        return row_reduce_schedule(rows, math.prod(row), width, target)
