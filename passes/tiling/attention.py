"""An attention kernel's tiling questions: what its lowering takes of a
schedule, and its #kernel.attention_tiling (tile counts, partial tiles and
the shared-memory footprints of the Q, K and V tiles), derived with the
polyhedral model (islpy) from the schedule.
"""

from __future__ import annotations

import math

import islpy as isl

from molten.dialects import kernel
from molten.dialects.cuda import (
    VECTOR_BYTES,
    WGMMA_M,
    element_bytes,
)
from molten.dialects.molten import Dim, value_dims
from molten.passes.fuse_attention import AttentionPattern, attention_of
from molten.passes.schedule.common import KernelBody
from molten.passes.tiling.polyhedral import footprint, tile_counts, tile_failure

ATTENTION_FRAGMENT_ROWS = 16
"""Query rows of one mma.sync's M: a warp's share of an attention block."""


def attention_schedule_problem(found, schedule: kernel.ScheduleAttr) -> str | None:
    """What an attention kernel's schedule asks that its lowering does not
    take, or None. On mma.sync: tile = [m w, 16 n, head dim], warp = [m,
    value head dim], m a multiple of 16, block = 32 w. On wgmma (mma_warps =
    4): warp = [64, value head dim], block = 128 w, head dims multiples of
    64 and at most 256 keys and value head dims. Either way two or more
    stages, tiles that the block's 16-byte copies divide, no split or pack
    of a causal attention, a pack of query heads that share K and V."""
    head = value_dims(found.query)[-1]
    value_head = value_dims(found.value)[-1]
    bm, bn, bd = (
        (t.data for t in schedule.tile) if len(schedule.tile) == 3 else (0,) * 3
    )
    wm, wn = (t.data for t in schedule.warp) if len(schedule.warp) == 2 else (0, 0)
    mma_warps = schedule.mma_warps.data
    split, pack = schedule.split.data, schedule.pack.data
    on_wgmma = mma_warps > 1
    units = bm // wm if wm else 0
    block = 32 * mma_warps * units
    width = VECTOR_BYTES // element_bytes(found.query.type.element_type)
    if (
        (bd, wn) != (head, value_head)
        or not units
        or wm % ATTENTION_FRAGMENT_ROWS
        or bm % wm
        or bn % 16
        or head % 16
        or value_head % 16
        or schedule.stages.data < 2
        or (split > 1 and found.causal)
        or (pack > 1 and (found.causal or found.group % pack))
        or schedule.block.data != block
        or any(
            (rows * cols // width) % block
            for rows, cols in ((bm, head), (bn, head), (bn, value_head))
        )
    ):
        return (
            f"it takes tile = [m w, 16 n, {head}], warp = [m, {value_head}] with m "
            "a multiple of 16, block = 32 w, or with mma_warps = 4 (wgmma) warp "
            f"= [64, {value_head}], block = 128 w; two or more stages, tiles "
            "that the block's 16-byte copies divide, no split or pack of a "
            "causal attention, and a pack of query heads that share K and V"
        )
    if on_wgmma and (
        wm != WGMMA_M or bn > 256 or head % 64 or value_head % 64 or value_head > 256
    ):
        return (
            f"on wgmma it takes warp = [{WGMMA_M}, {value_head}], at most 256 keys "
            "a tile and head dims that are multiples of 64 up to 256"
        )
    return None


ATTENTION_DOMAIN = "S[g, i, j, d, e]"
"""An attention's iteration space: batch groups (of `pack` query heads that
share a KV head), their query rows one after another, keys, head dim and
value head dim."""


def _sequence_bounds(found: AttentionPattern, pack: int) -> tuple[str, str, str, str]:
    """The isl parameters of the named sequence lengths (each name its own,
    the queries' and keys' the same where they share it), the extents of
    the packed query rows and of the keys in them, and the constraint that
    each named length is at least 1."""
    lengths = (value_dims(found.query)[-2], value_dims(found.key)[-2])
    named = sorted({d for d in lengths if isinstance(d, str)})
    params = {name: f"L{n}" for n, name in enumerate(named)}

    def extent(length: Dim) -> str:
        return str(length) if isinstance(length, int) else params[length]

    queries, keys = (extent(d) for d in lengths)
    header = f"[{', '.join(params.values())}] -> " if params else ""
    positive = "".join(f" and {p} >= 1" for p in params.values())
    packed = f"{pack} * {queries}" if pack > 1 else queries
    return header, packed, keys, positive


def attention_tiling(
    found: AttentionPattern, schedule: kernel.ScheduleAttr
) -> kernel.AttentionTilingAttr:
    """The tiling of an attention under its schedule, from the polyhedral
    model: the iteration space { S[g, i, j, d, e] } (query rows i of a
    group's `pack` heads one after another, keys j; a named length a
    parameter), tiled by S -> T[g, i / BM, j / BN] with the head dims whole.
    The tile counts are the extents of its image, a loop partial where some
    tile's full box leaves the space (for some length, where named), and
    each operand's box the image of one tile under its access relation,
    rows padded by 16 bytes on mma.sync (ldmatrix's eight rows then fall in
    distinct banks), swizzled unpadded on wgmma."""
    bm, bn, head = (t.data for t in schedule.tile)
    value_head = int(value_dims(found.value)[-1])
    pack, split = schedule.pack.data, schedule.split.data
    batch = [int(d) for d in value_dims(found.weighted.result)[:-2]]
    groups = math.prod(batch) // pack
    header, queries, keys, positive = _sequence_bounds(found, pack)
    domain = isl.Set(
        f"{header}{{ {ATTENTION_DOMAIN} : 0 <= g < {groups} and 0 <= i < {queries}"
        f" and 0 <= j < {keys} and 0 <= d < {head} and 0 <= e < {value_head}"
        f"{positive} }}"
    )
    tiling = isl.Map(
        f"{{ {ATTENTION_DOMAIN} -> T[g, floor(i / {bm}), floor(j / {bn}), "
        f"floor(d / {head}), floor(e / {value_head})] }}"
    )
    _, query_tiles, key_tiles, _, _ = tile_counts(domain, tiling)
    full_boxes = tiling.reverse().intersect_domain(domain.apply(tiling))
    outside = full_boxes.intersect_range(domain.complement())
    partial = [
        dim
        for dim, bound in zip(
            kernel.ATTENTION_DIMS,
            (f"0 <= i < {queries}", f"0 <= j < {keys}"),
            strict=True,
        )
        if not outside.intersect_range(
            isl.Set(f"{header}{{ {ATTENTION_DOMAIN} : {bound} }}").complement()
        ).is_empty()
    ]
    skew = 0
    if schedule.mma_warps.data == 1:
        skew = VECTOR_BYTES // element_bytes(found.query.type.element_type)  # type: ignore[attr-defined]

    def box(tensor: str, index: str) -> tuple[int, int, int]:
        access = isl.Map(f"{{ {ATTENTION_DOMAIN} -> {tensor}[g, {index}] }}")
        _, rows, cols = footprint(tiling, access)
        return rows, cols, cols + skew

    return kernel.AttentionTilingAttr(
        grid=(query_tiles, groups, split),
        block=(bm, bn, head),
        key_steps=key_tiles,
        partial=partial,
        query=box("Q", "i, d"),
        key=box("K", "j, d"),
        value=box("V", "j, e"),
    )


def attention_tiling_for(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
) -> kernel.AttentionTilingAttr:
    """The tiling of an attention kernel under a schedule its lowering takes
    (the `tile` pass's failure naming the kernel otherwise). A variant's
    bound does not change it: a named length's counts are the launch's."""
    found = attention_of(KernelBody.of(kfunc))
    problem = attention_schedule_problem(found, schedule)
    if problem is not None:
        raise tile_failure(kfunc, f"schedule {schedule} ({problem})")
    return attention_tiling(found, schedule)
