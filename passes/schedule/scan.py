"""The scan family (cumsum): contiguous rows on lanes or a block, each lane
`SCAN_RUNS` runs of a 16-byte vector a step; strided rows a thread each."""

from __future__ import annotations

import math

from molten.dialects import kernel, molten
from molten.passes.schedule.common import (
    WARP,
    FamilyRule,
    KernelBody,
    scanned_rows,
    vector_width,
)
from molten.passes.schedule.pointwise import pointwise_schedule
from molten.passes.schedule.rows import short_rows_schedule
from molten.passes.schedule.target import Target

SCAN_RUNS = 4
"""Runs of `vector` elements a thread of a contiguous scan loads a step, all
in flight before the scans that need them."""

EXTREME_SCAN_RUNS = 2
"""The same for a running maximum or minimum, whose NaN-propagating
combination holds more registers an element (at 4 runs of 4 a block-wide
row spills)."""


SCAN_BLOCK = 256
"""Threads a block of a scan of rows longer than a warp covers in a step."""


SCAN_STRIDED_STEP = 8
"""Elements along the axis a thread of a strided scan loads a step."""


def scan_schedule(
    rows: int | None,
    n: int,
    strided: bool,
    width: int,
    target: Target,
    runs: int = SCAN_RUNS,
) -> kernel.ScheduleAttr:
    """The schedule of a scan of `rows` rows of `n` elements. Strided rows: a
    thread a row, `SCAN_STRIDED_STEP` elements a step, blocks sized as a
    pointwise kernel's. Contiguous rows: `runs` runs of `width` a
    thread a step, on as few lanes as cover a row in one step, a power of
    two up to a warp (several rows a block, as for row reductions), or a
    block of up to `SCAN_BLOCK` for longer rows."""
    if strided:
        threads = pointwise_schedule(math.inf if rows is None else rows, 1, target)
        block = threads.block.data
        return kernel.ScheduleAttr(
            kernel.ScheduleFamily.SCAN,
            block,
            rows_per_block=block,
            vector=1,
            elements_per_thread=min(n, SCAN_STRIDED_STEP),
        )
    per_thread = width * min(runs, math.ceil(n / width))
    lanes = 1 << max(0, math.ceil(math.log2(math.ceil(n / per_thread))))
    if lanes > WARP:
        return kernel.ScheduleAttr(
            kernel.ScheduleFamily.SCAN,
            min(SCAN_BLOCK, lanes),
            vector=width,
            elements_per_thread=per_thread,
        )
    return short_rows_schedule(
        kernel.ScheduleFamily.SCAN, rows, lanes, width, per_thread, target
    )


class ScanRule(FamilyRule):
    kind = kernel.KernelKind.SCAN

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        rows, n, strided = scanned_rows(body.ops)
        width = 1 if strided else vector_width(n, body.tensors)
        (scan,) = [op for op in body.ops if isinstance(op, molten.ScanOp)]
        runs = EXTREME_SCAN_RUNS if scan.COMBINE in ("max", "min") else SCAN_RUNS
        return scan_schedule(rows, n, strided, width, target, runs)
