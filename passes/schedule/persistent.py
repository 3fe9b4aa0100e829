"""The persistent wgmma gemm fed by TMA (sm_90a): a block an SM looping over
the output tiles, a producer warpgroup loading them: its tiles, split-K
and autotuner candidates, ranked by its estimate."""

from __future__ import annotations

import math
from collections.abc import Sequence

from molten.dialects import kernel, molten
from molten.dialects.cuda import WGMMA_M, tma_reads_rows
from molten.dialects.molten import shape_of
from molten.passes.schedule.common import (
    MMA_ELEMENT_TYPES,
    SWIZZLE_K,
    named_rows,
    wgmma_tile_schedule,
)
from molten.passes.schedule.cost import (
    PERSISTENT_MAX_STAGES,
    PERSISTENT_ROWS,
    WgmmaCandidate,
    most_stages,
    persistent_seconds,
    persistent_units,
)
from molten.passes.schedule.target import Target

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


def persistent_splits(
    tile: tuple[int, int], m: int, n: int, k_steps: int, target: Target
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
        and tiles * split <= target.sm_count
    ]
    if tile[0] > WGMMA_M:
        return splits
    return [
        split for split in splits if tiles * split >= SMALL_M_BUSY * target.sm_count
    ]


SMALL_M_BUSY = 0.75
"""The share of the SMs a persistent gemm's 64-row tiles must keep busy:
on the H100 at 16 rows (2026-11-26, benchmarks/results/*-gemm-small-m.txt)
56 and 64 tiles streamed B at 2 TB/s, 16-25% slower than the cp.async
kernel, where 128 and 132 tiles ran 4-11% faster than it."""


def persistent_ranked(
    matmul: molten.MatmulOp, target: Target, widths: Sequence[int] | None = None
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
            most_stages(tile, target, PERSISTENT_MAX_STAGES),
            split,
            persistent_seconds(tile, m, tiled(tile[1]), k_steps, target, split),
        )
        for tile in persistent_tiles(matmul)
        for split in persistent_splits(tile, m, tiled(tile[1]), k_steps, target)
    ]

    def busy(c: WgmmaCandidate) -> float:
        units = persistent_units((c.rows, c.cols), m, tiled(c.cols), c.split)
        return units / (math.ceil(units / target.sm_count) * target.sm_count)

    return sorted(
        found,
        key=lambda c: (round(c.seconds * 1e8), -busy(c), -c.rows * c.cols, c.split),
    )


def persistent_schedule(
    tile: tuple[int, int], target: Target, split: int = 1, cluster: int = 1
) -> kernel.ScheduleAttr:
    """The persistent TMA kernel's schedule in `tile`s with the most stages
    that fit (most_stages), a block an SM."""
    stages = most_stages(tile, target, PERSISTENT_MAX_STAGES)
    return wgmma_tile_schedule(
        *tile, stages, split=split, persistent=target.sm_count, cluster=cluster
    )


PERSISTENT_SPLIT_MIN_STEPS = 64
"""The fewest K steps of a part of the persistent kernel's split-K: on the
H100 at 512 rows, parts of 112 and 148 steps ran 11-15% faster than the
cp.async kernel's best, parts of 28 and 32 steps 10-17% slower (the f32
parts' round trip through L2 against too little work); at 128 rows, parts
of 14 to 32 steps ran 20-45% slower than 64-row tiles unsplit
(benchmarks/results/*-gemm-small-m.txt)."""


PERSISTENT_CANDIDATES = 3
"""The persistent kernel's widths the autotuner tries, besides the widest
in clusters of two: the estimate's fastest (its widths' times lie within
13% of the estimate, so its second and third may win)."""


def persistent_candidates(
    matmul: molten.MatmulOp, target: Target
) -> list[kernel.ScheduleAttr]:
    """The persistent TMA gemm the autotuner tries: the
    PERSISTENT_CANDIDATES tiles and splits the estimate finds fastest, then
    the widest tile in clusters of two blocks multicasting B (which ran
    within 4% of one block on the H100, either way by shape:
    benchmarks/results/*-gemm-tma-schedules.txt)."""
    fastest = persistent_ranked(matmul, target)[:PERSISTENT_CANDIDATES]
    return [persistent_schedule((c.rows, c.cols), target, c.split) for c in fastest] + [
        persistent_schedule(PERSISTENT_WIDEST, target, cluster=2)
    ]


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
