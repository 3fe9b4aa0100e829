"""Attention in one kernel on tensor cores, flash-style: the scores and
probabilities stay in registers. This module is the kernel's setup and
end; its stages live beside it:

* setup (here): the schedule checked, the grid (query tiles x batches x
  parts), the block's query rows (of `pack` batch matrices sharing K and
  V, for a decode), the Q, K and V tiles in shared memory and their
  copies, the block's range of keys, and the cp.async pipeline
  (`pipeline.CopyPipeline`) whose first commit group brings Q;
* the products (`attention_mma` on mma.sync m16n8k16, `attention_wgmma` on
  sm_90a's wgmma): S = Q Kᵀ and O += P V per tile of keys;
* the loop over tiles of keys (`attention_softmax`): the logits evaluated
  per element, the online softmax, the causal mask's whole tiles apart;
* the end (here): each row's sum over its quad, O / l through the gemm
  epilogue (the cast, the staged store); with a `split` of the keys
  (flash-decoding), the parts stored and combined by the last block of a
  group to finish (`attention_split`).

A lane's accumulators of S and O are mma.sync fragments on either kind
(`fragments.MMA_M16N8K16` tiled over the warp's rows and the tile's
columns: a warpgroup's wgmma accumulators are its warps' fragments), so
the softmax, the split and the epilogue read one layout.
"""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from molten.dialects import cuda, kernel, molten
from molten.dialects.molten import value_dims
from molten.passes.fuse_attention import (
    AttentionPattern,
    attention_of,
    stored_offset,
)
from molten.passes.lowering.attention_mma import MmaProducts, padded_rows
from molten.passes.lowering.attention_softmax import KeyLoop, KeyTiles, TileProducts
from molten.passes.lowering.attention_split import SplitParts
from molten.passes.lowering.attention_wgmma import WgmmaProducts, swizzled_rows
from molten.passes.lowering.emitter import (
    MAX_GRID_X,
    WARP,
    Emitter,
    Index,
    ravel,
    unravel,
)
from molten.passes.lowering.epilogue import Epilogue, RowMap, Staging, finish
from molten.passes.lowering.fragments import MMA_M16N8K16
from molten.passes.lowering.kernels import GridOf, KernelShell, Launch, LoweredKernel
from molten.passes.lowering.matmul import GemmShape
from molten.passes.lowering.pipeline import CopyPipeline
from molten.passes.lowering.reductions import lanes_reduce
from molten.passes.schedule.common import KernelBody
from molten.passes.tiling.attention import (
    ATTENTION_FRAGMENT_ROWS,
    attention_schedule_problem,
    attention_tiling,
)
from molten.passes.tiling.polyhedral import Gemm


def _not_supported(what: str) -> NotImplementedError:
    return NotImplementedError(f"lower-kernel-to-cuda: an attention kernel {what}")


def _attention_of(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr | None
) -> AttentionPattern:
    """The attention the kernel computes, where its lowering takes it."""
    where = f"@{kfunc.sym_name.data}"
    found = attention_of(KernelBody.of(kfunc))
    if schedule is None:
        raise _not_supported(f"{where} needs a schedule (run kernel-schedule)")
    if (problem := attention_schedule_problem(found, schedule)) is not None:
        raise _not_supported(f"{where} with schedule {schedule} ({problem})")
    return found


def _tiling_of(
    kfunc: kernel.FuncOp, found: AttentionPattern, schedule: kernel.ScheduleAttr
) -> kernel.AttentionTilingAttr:
    """The kernel's #kernel.attention_tiling where the `tile` pass gave it
    one for this schedule, else the one it would give."""
    tiling = kfunc.tiling_under(schedule)
    if isinstance(tiling, kernel.AttentionTilingAttr):
        return tiling
    return attention_tiling(found, schedule)


def _key_range(
    e: Emitter,
    found: AttentionPattern,
    row0: Index,
    kv_tiles: Index,
    split: int,
    tile: tuple[int, int],
) -> tuple[Index, Index, Index]:
    """The block's tiles of keys: from `kv_begin`, `count` of them; and its
    part of them, where a split attention (flash-decoding) gives each of
    `split` blocks a part. A causal attention's block stops at the keys of
    its last row."""
    bm, bn = tile
    kv_begin: Index = 0
    count: Index = kv_tiles
    if found.causal:
        count = e.add(
            arith.MinSIOp(
                e.index(kv_tiles), e.index(e.idiv(e.iadd(row0, bm + bn - 1), bn))
            )
        )
        count.name_hint = "kv_end"
    part: Index = 0
    if split > 1:
        assert isinstance(kv_tiles, int)
        per_part = -(-kv_tiles // split)
        part = e.add(cuda.BlockIdxOp(cuda.Dim.Z))
        part.name_hint = "part"
        kv_begin = e.imul(part, per_part)
        kv_begin.name_hint = "kv_begin"
        # Below 0 for a part past the keys: it loops over none.
        count = e.imin(per_part, e.isub(kv_tiles, kv_begin))
        count.name_hint = "kv_count"
    return kv_begin, count, part


def lower_attention(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr | None, rows_most: int = 0
) -> LoweredKernel:
    """An attention kernel as its schedule has it: tile = [query rows, keys,
    head dim], `stages` K and V tiles in flight; on mma.sync (`mma_warps` =
    1), warp = [16 m, value head dim], each warp m fragments of 16 rows; on
    wgmma (`mma_warps` = 4, sm_90a), warp = [64, value head dim], a
    warpgroup's (see the module docstring). The sequences may be named
    (their lengths parameters of the kernel, the grid counted at launch),
    a variant's at most `rows_most` long (0: any)."""
    where = f"@{kfunc.sym_name.data}"
    found = _attention_of(kfunc, schedule)
    assert schedule is not None
    tiling = _tiling_of(kfunc, found, schedule)
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    element = found.query.type.element_type  # type: ignore[attr-defined]
    q_shape, k_shape, v_shape = (
        value_dims(t) for t in (found.query, found.key, found.value)
    )
    # fuse-attention names no batch axis nor head dimension.
    batch_shape = [int(d) for d in value_dims(found.weighted.result)[:-2]]
    head, value_head = int(q_shape[-1]), int(v_shape[-1])
    # The sequences' lengths: sizes, or the kernel's parameters where named.
    sq, sk = e.extent(q_shape[-2]), e.extent(k_shape[-2])
    bm, bn, _ = (t.data for t in schedule.tile)
    wm, _ = (t.data for t in schedule.warp)
    stages = schedule.stages.data
    split = schedule.split.data
    pack = schedule.pack.data
    mma_warps = schedule.mma_warps.data
    on_wgmma = mma_warps > 1
    # A warp tile is a warp's (mma.sync) or a warpgroup's (wgmma): the unit
    # that issues one product. Each of its warps holds `fragments` of 16 rows.
    units = bm // wm if wm else 0
    rows_per_warp = WgmmaProducts.rows_per_warp(wm) if on_wgmma else wm
    fragments = rows_per_warp // ATTENTION_FRAGMENT_ROWS
    block = WARP * mma_warps * units
    width = cuda.ASYNC_COPY_BYTES // cuda.element_bytes(element)
    batches = math.prod(batch_shape)
    # The query rows a block's tiles run through: those of `pack`
    # consecutive batch matrices (query heads sharing K and V), one after
    # another in memory.
    query_rows = e.imul(pack, sq)
    # The tiles of query rows and of keys: the tiling's, else (a named
    # length) counted at run time.
    q_tiles = tiling.grid.data[0].data or e.ceil_div(query_rows, bm)
    # Whether the last tile of query rows (of keys) sticks out, for some
    # length where one is named.
    rows_partial = tiling.partial_along("queries")
    keys_partial = tiling.partial_along("keys")
    if batches // pack > 65535:
        raise _not_supported(f"{where} over {batches} batches (grid y holds 65535)")
    kv_tiles = tiling.key_steps.data or e.ceil_div(sk, bn)
    if split > 1 and not isinstance(kv_tiles, int):
        raise _not_supported(
            f"{where} split {split} ways over keys of a named length (its parts' "
            "scratch is sized by the grid)"
        )
    if isinstance(kv_tiles, int) and split > kv_tiles:
        raise _not_supported(
            f"{where} split {split} ways over {kv_tiles} tiles of keys"
        )
    grid_of = None
    if isinstance(q_tiles, int):
        grid = (q_tiles, batches // pack, split)
    else:  # ceil(pack T / bm) blocks along x, counted at launch
        most = -(-pack * rows_most // bm) if rows_most else MAX_GRID_X
        grid = (most, batches // pack, split)
        grid_of = GridOf((str(q_shape[-2]),), pack, bm)

    tid = shell.thread_index()
    lane, warp = e.irem(tid, WARP), e.idiv(tid, WARP)
    lane.name_hint, warp.name_hint = "lane", "warp"
    tile_x = e.add(cuda.BlockIdxOp(cuda.Dim.X))
    # Causal blocks further down see more keys: those are launched first.
    tile_m = e.isub(e.isub(q_tiles, 1), tile_x) if found.causal else tile_x
    batch = e.add(cuda.BlockIdxOp(cuda.Dim.Y))
    first = e.imul(batch, pack)  # the block's first batch matrix
    batch_index = unravel(e, first, batch_shape) if batch_shape else []
    row0 = e.imul(tile_m, bm)
    row0.name_hint = "row0"

    def row_prefix(em: Emitter, row: Index) -> list[Index]:
        """The batch index and row of query row `row` of the block's."""
        if pack == 1:
            return [*batch_index, row]
        matrix = em.iadd(first, em.idiv(row, sq))
        return [*unravel(em, matrix, batch_shape), em.irem(row, sq)]

    # (operand as the matmul reads it, stored tensor, stages, the tiling's
    # box of a tile, rows in all, name)
    tile_of = swizzled_rows if on_wgmma else padded_rows
    q, k, v = (
        tile_of(
            e,
            pointers[stored],
            stored_offset(
                operand,
                stored,
                batch_index,
                batch_shape,
                lambda index, shape: ravel(e, index, shape),
                lambda linear, shape: unravel(e, linear, shape),
            ),
            element,
            tiles,
            tuple(v.data for v in box),
            total,
            name,
        )
        for operand, stored, tiles, box, total, name in (
            (found.scores.lhs, found.query, 1, tiling.query, query_rows, "q_tile"),
            (found.scores.rhs, found.key, stages, tiling.key, sk, "k_tile"),
            (found.weighted.rhs, found.value, stages, tiling.value, sk, "v_tile"),
        )
    )
    q_copies = q.copies(e, tid, block, width)
    k_copies = k.copies(e, tid, block, width)
    v_copies = v.copies(e, tid, block, width)

    kv_begin, count, part = _key_range(e, found, row0, kv_tiles, split, (bm, bn))

    def first_key(em: Emitter, j: Index) -> Index:
        return em.imul(em.iadd(kv_begin, j), bn)

    def fill(em: Emitter, j: Index) -> None:
        """The K and V tiles of the block's j-th tile of keys, into its stage."""
        stage = pipeline.stage(em, j)
        k.issue(em, k_copies, stage, first_key(em, j), pipeline.wanted(em, j))
        v.issue(em, v_copies, stage, first_key(em, j), pipeline.wanted(em, j))

    product_kind = WgmmaProducts if on_wgmma else MmaProducts
    pipeline = CopyPipeline(
        stages,
        product_kind.tiles_ahead(stages),
        count,
        count if isinstance(count, int) else 0,
        fill,
        async_proxy=product_kind.async_proxy,
    )
    # Q joins the first commit group: it has landed with the first K, V tiles.
    q.issue(e, q_copies, 0, row0)
    pipeline.prologue(e)
    pipeline.landed(e)

    # A lane's accumulators of S and of O: mma.sync fragments, a warp's rows'
    # (on wgmma too: a warpgroup's accumulators are its warps' fragments).
    layouts = (
        MMA_M16N8K16.tiled(fragments, bn // 8),
        MMA_M16N8K16.tiled(fragments, value_head // 8),
    )
    out_layout = layouts[1]
    warp_row = e.imul(warp, rows_per_warp)
    products: TileProducts
    if on_wgmma:
        products = WgmmaProducts.of(
            e, tid, (q, k, v), element, head, wm, stages, layouts
        )
    else:
        products = MmaProducts.of(e, lane, warp_row, (q, k, v), element, head, layouts)
    lane_row, lane_col = out_layout.thread_origin(e, lane, (row0, warp_row), (0, 0))
    # The batch index and row of each of the lane's rows, kept inside the
    # queries (rows past the end are not stored).
    lane_rows = []
    for offset in out_layout.rows:
        row = e.iadd(lane_row, offset)
        lane_rows.append(
            row_prefix(e, e.imin(row, e.isub(query_rows, 1)) if rows_partial else row)
        )
    keys = KeyTiles(bn, kv_begin, sk, keys_partial, q_shape[-2] != k_shape[-2])
    busy = (row0, query_rows) if units > 1 and rows_partial else None
    loop = KeyLoop(found, pointers, products, pipeline, keys, lane_rows, lane_col, busy)
    results = loop.run(e, row0, count, loop.initial(e))
    pipeline.drain(e)

    # Each lane summed its own columns: the row's sum is its quad's.
    rows = loop.rows
    carried = 2 * rows + len(out_layout.registers)
    m_final = results[:rows]
    sums = [
        lanes_reduce(e, molten.ReduceSumOp, results[rows + h], out_layout.quad)
        for h in range(rows)
    ]
    # O, once the last tile's P V is done.
    o_final = products.finished(
        e, results[2 * rows : carried], results[carried:], count
    )
    last: Emitter | None = None
    scratch = ()
    if split > 1:
        parts = SplitParts.of(shell.region, grid, (bm, query_rows, value_head))
        scratch = parts.scratch
        group = e.iadd(e.imul(batch, q_tiles), tile_x)
        local_row = e.iadd(warp_row, e.idiv(lane, out_layout.quad))
        last, sums, o_final = parts.gathered(
            e,
            (group, part, row0, local_row),
            (lane, lane_col),
            out_layout,
            (m_final, sums, o_final),
        )
    end_e = last or e
    inverse = [end_e.add(arith.DivfOp(end_e.f32(1.0), total)) for total in sums]

    def normalized(j: int) -> SSAValue:
        """O / l at the lane's accumulator j."""
        return end_e.add(arith.MulfOp(o_final[j], inverse[out_layout.row_slot(j)]))

    gemm = GemmShape(
        **vars(Gemm.of(found.weighted, result_only=True)),
        matmuls=(found.weighted,),
        source=found.weighted.lhs,
    )
    staging = Staging(
        (q.buffer, k.buffer, v.buffer), (bm, value_head), (row0, 0), tid, block
    )
    end = Epilogue(
        gemm,
        RowMap(query_rows, row_prefix),
        out_layout.places(end_e, (lane_row, lane_col), normalized),
        guard_rows=rows_partial,
        staging=staging,
    )
    launch = Launch(grid, block, grid_of, min_blocks=1, scratch=scratch)
    return finish(shell, end, launch, last)
