"""Attention in one kernel on tensor cores (mma.sync m16n8k16, sm_80 and
later), flash-style: the scores and probabilities stay in registers.

A block takes a tile of query rows, each warp 16 of them. The block's Q tile
goes to shared memory once and into each warp's fragment registers; K and V
flow through shared memory in tiles of keys, `stages` in flight by cp.async.
Per KV tile each warp computes S = Q Kᵀ into accumulators, evaluates the
elementwise ops on the scores per element (a scale, masks, biases: the
shared Evaluator), takes them to log2 units for exp2 and masks keys past
the end; then the online softmax: the running row max m and sum l in f32,
the output rescaled by exp2(m_old - m_new) as each tile arrives.
P = exp2(S - m) is rounded to the operand type and packed straight into
the A fragments of P V: an m16n8k16 accumulator pair has the layout of an
A fragment, so P never leaves registers. When the scores end in the
causal mask, a block stops at the last tile of keys its rows see, and the
heaviest blocks are launched first. The output, O / l, goes through the
gemm epilogue (the cast, the staged store).

For a decode, the schedule's `pack` makes a block's rows run through the
queries of consecutive batch matrices that share K and V (grouped-query
heads), and its `split` gives each of `split` blocks a part of the keys;
the last block of a group to finish combines the parts (`_Parts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from xdsl.dialects import arith, scf
from xdsl.dialects import math as mathd
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from molten.dialects import cuda, kernel, molten
from molten.dialects.molten import value_dims
from molten.passes.fuse_attention import attention_in, stored_offset
from molten.passes.lowering.attention_wgmma import WgmmaProducts, swizzled_rows
from molten.passes.lowering.emitter import (
    F32,
    INDEX,
    MAX_GRID_X,
    WARP,
    Emitter,
    Index,
    close_if,
    element_of,
    emit_if,
    ravel,
    unravel,
)
from molten.passes.lowering.epilogue import Epilogue, RowMap, Staging, finish
from molten.passes.lowering.evaluator import Evaluator, round_to
from molten.passes.lowering.fragments import MMA_M16N8K16, AccumulatorLayout
from molten.passes.lowering.kernels import (
    GridOf,
    KernelShell,
    Launch,
    LoweredKernel,
    Scratch,
    scratch_params,
)
from molten.passes.lowering.matmul import (
    GemmShape,
    LdmatrixLanes,
    StagedOperand,
    a_fragment,
)
from molten.passes.lowering.pipeline import CopyPipeline, loop_steps
from molten.passes.lowering.reductions import lanes_reduce
from molten.passes.tile import (
    ATTENTION_FRAGMENT_ROWS,
    Gemm,
    attention_schedule_problem,
)

LOG2E = math.log2(math.e)
APPROXIMATE = arith.FastMathFlagsAttr([arith.FastMathFlag.APPROX_FUNC])
"""The softmax's exp2 runs on the SFU alone (ex2.approx.ftz): weights below
2^-126 of the row's largest flush to zero, which the sum never sees."""


def _positive_scale(found) -> tuple[SSAValue, float] | None:
    """Where the logits are the scores times a positive constant c, then
    only causal masks added (0 or -inf, which a positive factor leaves as
    they are): the product and c. The softmax then takes its max on the
    unscaled scores and folds c into exp2's factor, log2(e) c: one fused
    multiply-add an element instead of two multiplies."""
    value = found.logits
    while isinstance(add := value.owner, molten.AddOp):
        masks = [v for v in add.operands if isinstance(v.owner, molten.CausalMaskOp)]
        others = [v for v in add.operands if v not in masks]
        if len(masks) != 1 or len(others) != 1:
            return None
        value = others[0]
    product = value.owner
    scores = found.scores.result
    if not isinstance(product, molten.MulOp) or element_of(scores) != F32:
        return None
    factors = [v for v in product.operands if v is not scores]
    if len(factors) != 1 or len(product.operands) != 2:
        return None
    (factor,) = factors
    constant = factor.owner
    one_element = all(d == 1 for d in value_dims(factor))
    if not isinstance(constant, molten.ConstantOp) or not one_element:
        return None
    c = constant.splat_value()
    if c is None or not 0 < c < math.inf:
        return None
    return product.result, c


def _causal_add(found) -> tuple[SSAValue, SSAValue] | None:
    """Where the scores end in the causal mask: the sum that adds it, the
    last op before the softmax (casts aside), and its other operand."""
    value = found.logits
    while isinstance(value.owner, molten.CastOp):
        value = value.owner.operands[0]
    add = value.owner
    if not found.causal or not isinstance(add, molten.AddOp):
        return None
    (unmasked,) = [
        v for v in add.operands if not isinstance(v.owner, molten.CausalMaskOp)
    ]
    return add.result, unmasked


def _not_supported(what: str) -> NotImplementedError:
    return NotImplementedError(f"lower-kernel-to-cuda: an attention kernel {what}")


def _row_tile(
    e: Emitter,
    ptr: SSAValue,
    base: Index,
    element,
    stages: int,
    rows: int,
    cols: int,
    total_rows: Index,
    name: str,
) -> StagedOperand:
    """`stages` tiles of `rows` consecutive rows of a [total_rows, cols]
    matrix in shared memory, rows padded by 16 bytes (ldmatrix's eight rows
    then fall in distinct banks); a tile moves along the rows."""
    width = cuda.ASYNC_COPY_BYTES // cuda.element_bytes(element)
    shape = (stages, rows, cols, total_rows)
    return StagedOperand.of_rows(e, ptr, base, element, shape, cols + width, name)


Fragments = list[list[SSAValue]]
"""Per 16-row fragment of a warp's rows, a lane's f32 accumulators: o[i][4 f
+ r] is accumulator r of columns 8 f to 8 f + 7."""
Scores = list[list[list[SSAValue]]]
"""s[i][f][r]: accumulator r of fragment i's columns 8 f to 8 f + 7."""


class TileProducts(Protocol):
    """The two products of the flash loop, per tile of keys: S = Q Kᵀ and
    O += P V, on mma.sync (`_MmaProducts`) or wgmma (`WgmmaProducts`). The
    loop calls, per tile: `scores`, the softmax, `settled` before O is
    rescaled, then `weighted`; `finished`
    after the loop. `pending` is what one tile leaves to the next (a P for
    wgmma's overlapped P V), starting from `pending_initial`."""

    fragments: int
    tile_row: Index
    """The first row, in the block's, of the rows the unit issuing one
    product holds (a warp's, or a warpgroup's)."""
    async_proxy: bool
    """Whether the products read shared memory through the async proxy
    (wgmma): the copies are fenced for it (`CopyPipeline.async_proxy`)."""

    def pending_initial(self, e: Emitter, keys: int) -> list[SSAValue]: ...

    def scores(
        self,
        e: Emitter,
        tile: tuple[Index, Index],
        keys: int,
        o: Fragments,
        pending: list[SSAValue],
    ) -> tuple[Scores, Fragments]:
        """S for the tile of keys at `tile` = (its index, its stage)."""
        ...

    def settled(self, e: Emitter, o: Fragments) -> Fragments: ...

    def weighted(
        self, e: Emitter, stage: Index, p: Scores, o: Fragments, keys: int
    ) -> tuple[Fragments, list[SSAValue]]: ...

    def finished(
        self, e: Emitter, o: Fragments, pending: list[SSAValue], count: Index
    ) -> Fragments: ...


@dataclass(frozen=True)
class _MmaProducts:
    """Q Kᵀ and P V on mma.sync m16n8k16, each warp its `fragments` of 16
    query rows: Q read into fragment registers once, K and V fragments by
    ldmatrix from tiles whose rows are padded (`_row_tile`)."""

    element: object
    q: StagedOperand
    k: StagedOperand
    v: StagedOperand
    fragments: int
    q_frags: list[list[tuple[SSAValue, ...]]]
    k_lane: Index
    v_lane: Index
    value_head: int
    tile_row: Index
    """The warp's first row in the block's."""

    async_proxy = False
    """ldmatrix reads what a barrier made visible."""

    @staticmethod
    def of(
        e: Emitter,
        lane: Index,
        warp_row: Index,
        tiles: tuple[StagedOperand, StagedOperand, StagedOperand],
        element,
        fragments: int,
        dims: tuple[int, int],
    ) -> _MmaProducts:
        """The warp's Q fragments read from the Q tile (which has arrived)
        and its lanes' ldmatrix addresses in the K and V tiles."""
        q, k, v = tiles
        head, value_head = dims
        # Each lane's row address for ldmatrix: Q [m][k] as A; K [n][k] as
        # B (two n8 fragments per load); V [k][n] as B, read transposed.
        lanes = LdmatrixLanes.of(e, lane)
        m_of, k_of = lanes.a(e, False)
        q_lane = e.iadd(e.imul(e.iadd(warp_row, m_of), q.pitch), k_of)
        n_of, k_of = lanes.b(e, False)
        k_lane = e.iadd(e.imul(n_of, k.pitch), k_of)
        n_of, k_of = lanes.b(e, True)
        v_lane = e.iadd(e.imul(k_of, v.pitch), n_of)
        q_frags = [
            [
                e.add(
                    cuda.LdMatrixOp(
                        q.buffer, e.index(e.iadd(q_lane, i * 16 * q.pitch + kk * 16))
                    )
                ).owner.results
                for kk in range(head // 16)
            ]
            for i in range(fragments)
        ]
        return _MmaProducts(
            element,
            q,
            k,
            v,
            fragments,
            q_frags,
            k_lane,
            v_lane,
            value_head,
            warp_row,
        )

    @staticmethod
    def tiles_ahead(stages: int) -> int:
        """Tiles of K and V copied ahead of the one computed on: all stages
        but the current one's."""
        return stages - 1

    def pending_initial(self, e: Emitter, keys: int) -> list[SSAValue]:
        """Nothing is carried from one tile's products to the next's."""
        return []

    def settled(self, e: Emitter, o: Fragments) -> Fragments:
        """O: each mma.sync is done when its results are used."""
        return o

    def finished(
        self, e: Emitter, o: Fragments, pending: list[SSAValue], count: Index
    ) -> Fragments:
        """O after the loop: complete."""
        return o

    def scores(
        self,
        e: Emitter,
        tile: tuple[Index, Index],
        keys: int,
        o: Fragments,
        pending: list[SSAValue],
    ) -> tuple[Scores, Fragments]:
        """S = Q Kᵀ against the keys of `tile` = (index, stage), as
        s[i][f][r]: the lane's accumulator r of row fragment i and columns
        8 f to 8 f + 7; and O."""
        _, stage = tile
        k_stage = e.iadd(e.imul(stage, self.k.rows * self.k.pitch), self.k_lane)
        zero = e.f32(0.0)
        s_frags = keys // 8
        s = [[[zero] * 4 for _ in range(s_frags)] for _ in range(self.fragments)]
        for kk in range(len(self.q_frags[0])):
            for pair in range(s_frags // 2):
                at = e.iadd(k_stage, pair * 16 * self.k.pitch + kk * 16)
                b = e.add(cuda.LdMatrixOp(self.k.buffer, e.index(at))).owner.results
                for i in range(self.fragments):  # each K fragment serves every row's
                    for half in range(2):
                        f = 2 * pair + half
                        mma = cuda.MmaOp(
                            self.element,
                            self.q_frags[i][kk],
                            b[2 * half : 2 * half + 2],
                            s[i][f],
                        )
                        e.add(mma)
                        s[i][f] = list(mma.results)
        return s, o

    def weighted(
        self, e: Emitter, stage: Index, p: Scores, o: Fragments, keys: int
    ) -> tuple[Fragments, list[SSAValue]]:
        """O += P V for the tile in `stage`, P (in f32, the layout of
        `scores`) packed from the accumulators into A fragments; nothing
        carried."""
        v_stage = e.iadd(e.imul(stage, self.v.rows * self.v.pitch), self.v_lane)
        o = [list(frag) for frag in o]
        for kk in range(keys // 16):
            a = [
                a_fragment(e, self.element, p[i][2 * kk], p[i][2 * kk + 1])
                for i in range(self.fragments)
            ]
            for pair in range(self.value_head // 16):
                at = e.iadd(v_stage, kk * 16 * self.v.pitch + pair * 16)
                b = e.add(
                    cuda.LdMatrixOp(self.v.buffer, e.index(at), trans=True)
                ).owner.results
                for i in range(self.fragments):
                    for half in range(2):
                        f = 2 * pair + half
                        mma = cuda.MmaOp(
                            self.element,
                            a[i],
                            b[2 * half : 2 * half + 2],
                            o[i][4 * f : 4 * f + 4],
                        )
                        e.add(mma)
                        o[i][4 * f : 4 * f + 4] = mma.results
        return o, []


@dataclass(frozen=True)
class _Parts:
    """The parts of a split attention (flash-decoding) in global scratch:
    per group (a tile of query rows of one batch) and part, the
    unnormalized output rows in f32 and each row's max and sum; and a
    counter per group, at which the part's block arrives once its part is
    stored. The last block to arrive combines the parts in order of part,
    so the result does not depend on which block finished when."""

    counters: SSAValue
    outputs: SSAValue
    stats: SSAValue
    split: int
    depth: int
    """Rows of a part: the block's query rows, or all of them if fewer."""
    width: int
    """The value head dimension."""
    queries: int
    block_rows: int
    scratch: tuple[Scratch, ...]

    @staticmethod
    def of(
        region: Region,
        grid: tuple[int, int, int],
        rows: tuple[int, int, int],
    ) -> _Parts:
        bm, sq, width = rows
        groups, split = grid[0] * grid[1], grid[2]
        depth = min(bm, sq)
        scratch = (
            Scratch("attention_counters", cuda.COUNTER_TYPE, groups, True, True),
            Scratch("attention_parts", F32, groups * split * depth * width, False),
            Scratch("attention_part_stats", F32, groups * split * depth * 2, False),
        )
        params = scratch_params(region, scratch)
        return _Parts(*params, split, depth, width, sq, bm, scratch)

    @property
    def rows_past_queries(self) -> bool:
        """Whether some block's rows run past the queries (its last tile's)."""
        return self.queries % self.block_rows != 0

    def _row(self, e: Emitter, group: Index, part: Index, row: Index) -> Index:
        """Where row `row` of part `part` of `group` is in the scratch."""
        return e.iadd(e.imul(e.iadd(e.imul(group, self.split), part), self.depth), row)

    def store(
        self,
        e: Emitter,
        at: tuple[Index, Index, Index, Index],
        lane: Index,
        lane_col: Index,
        maxima: list[SSAValue],
        sums: list[SSAValue],
        outputs: list[SSAValue],
        layout: AccumulatorLayout,
    ) -> None:
        """The lane's rows of the block's part (its `outputs` in `layout`), at
        = (group, part, the block's first query row, the lane's first row in
        the block); rows past the queries are not stored. Each row's max
        and sum are stored by the first lane of its quad, which holds them
        as the others do."""
        group, part, row0, local_row = at
        leader = e.icmp(e.irem(lane, layout.quad), 0, "eq")
        for h, (m, total) in enumerate(zip(maxima, sums, strict=True)):
            row = e.iadd(local_row, layout.rows[h])
            inside = None
            if self.rows_past_queries:
                inside = e.icmp(e.iadd(row0, row), self.queries, "slt")
            inner = e if inside is None else emit_if(e, inside)
            slot = self._row(inner, group, part, row)
            first = inner.iadd(inner.imul(slot, self.width), lane_col)
            # Columns c and c + 1 of the row are neighbours: one 8-byte store.
            pairs = [
                (layout.registers[j][1], outputs[j]) for j in layout.row_registers(h)
            ]
            for (col, value), (_, after) in zip(pairs[::2], pairs[1::2], strict=True):
                inner.add(
                    cuda.StoreOp(
                        [value, after],
                        self.outputs,
                        inner.index(inner.iadd(first, col)),
                    )
                )
            stats = emit_if(inner, leader)
            pair = stats.imul(slot, 2)
            stats.add(cuda.StoreOp([m, total], self.stats, stats.index(pair)))
            close_if(stats)
            if inside is not None:
                close_if(inner)

    def combined(
        self,
        e: Emitter,
        at: tuple[Index, Index, Index],
        lane_col: Index,
        layout: AccumulatorLayout,
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """The lane's rows (its accumulators in `layout`) over the whole of the
        keys, combined from the parts in order, at = (group, the block's
        first query row, the lane's first row in the block): each part's
        weight is exp2(m_part - m) for
        the rows' max m over the parts. Rows past the queries read the last
        query row's parts, and a lane whose rows are all past them reads
        none (their results are not stored): a decode's few query rows
        leave most lanes idle."""
        group, row0, local_row = at
        parts: Index = self.split
        if self.rows_past_queries:
            inside = e.icmp(e.iadd(row0, local_row), self.queries, "slt")
            parts = e.select(inside, e.index(self.split), e.index(0))
        rows = len(layout.rows)
        slots = []
        for offset in layout.rows:
            row = e.iadd(local_row, offset)
            if self.depth < self.block_rows:
                row = e.imin(row, self.depth - 1)
            slots.append(row)

        def stat(em: Emitter, part: SSAValue, h: int, which: int) -> SSAValue:
            """Row h's max (which = 0) or sum (1) in part `part`."""
            at = em.iadd(em.imul(self._row(em, group, part, slots[h]), 2), which)
            return em.add(cuda.LoadOp(self.stats, em.index(at), coherent=True))

        minus_inf = e.f32(-math.inf)
        maxima = _for_parts(
            e,
            parts,
            [minus_inf] * rows,
            lambda em, part, carried: [
                em.add(arith.MaximumfOp(m, stat(em, part, h, 0)))
                for h, m in enumerate(carried)
            ],
        )
        # A row no part saw (masked whole) subtracts 0: its weights stay 0.
        shifts = [
            e.select(e.add(arith.CmpfOp(m, minus_inf, "oeq")), e.f32(0.0), m)
            for m in maxima
        ]

        def add_part(em: Emitter, part: SSAValue, carried: list[SSAValue]):
            weights, sums = [], []
            for h in range(rows):
                m, total = stat(em, part, h, 0), stat(em, part, h, 1)
                weights.append(em.add(mathd.Exp2Op(em.add(arith.SubfOp(m, shifts[h])))))
                sums.append(
                    em.add(
                        arith.AddfOp(
                            carried[h], em.add(arith.MulfOp(total, weights[h]))
                        )
                    )
                )
            outputs = []
            for j, value in enumerate(carried[rows:]):
                h, col = layout.row_slot(j), layout.registers[j][1]
                slot = self._row(em, group, part, slots[h])
                at = em.iadd(em.iadd(em.imul(slot, self.width), lane_col), col)
                part_value = em.add(
                    cuda.LoadOp(self.outputs, em.index(at), coherent=True)
                )
                weighted = em.add(arith.MulfOp(part_value, weights[h]))
                outputs.append(em.add(arith.AddfOp(value, weighted)))
            return sums + outputs

        zero = e.f32(0.0)
        count = rows + len(layout.registers)
        totals = _for_parts(e, parts, [zero] * count, add_part)
        return totals[:rows], totals[rows:]


def _for_parts(
    e: Emitter,
    count: Index,
    initial: list[SSAValue],
    body: Callable[[Emitter, SSAValue, list[SSAValue]], list[SSAValue]],
) -> list[SSAValue]:
    """The values `body` carries through parts 0 ... count - 1, in order."""
    block = Block(arg_types=[INDEX, *[F32] * len(initial)])
    loop = scf.ForOp(e.index(0), e.index(count), e.index(1), initial, Region(block))
    e.block.add_op(loop)
    block.args[0].name_hint = "part"
    inner = e.nested(block)
    block.add_op(scf.YieldOp(*body(inner, block.args[0], list(block.args[1:]))))
    return list(loop.results)


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
    found = attention_in(kfunc.body.block.ops, "lower-kernel-to-cuda")
    if schedule is None:
        raise _not_supported(f"{where} needs a schedule (run kernel-schedule)")
    for tensor in (found.query, found.key, found.value):
        if not isinstance(tensor, BlockArgument):
            raise _not_supported(f"{where} computing q, k or v inside it")
    if (problem := attention_schedule_problem(found, schedule)) is not None:
        raise _not_supported(f"{where} with schedule {schedule} ({problem})")
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
    q_tiles = e.ceil_div(query_rows, bm)
    # Whether the last tile of query rows (of keys) sticks out: always,
    # for all the kernel knows, where the sequence is named.
    rows_partial = not isinstance(query_rows, int) or query_rows % bm != 0
    keys_partial = not isinstance(sk, int) or sk % bn != 0
    if batches // pack > 65535:
        raise _not_supported(f"{where} over {batches} batches (grid y holds 65535)")
    kv_tiles = e.ceil_div(sk, bn)
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

    # (operand as the matmul reads it, stored tensor, stages, rows of a
    # tile, rows in all, name)
    tile_of = swizzled_rows if on_wgmma else _row_tile
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
            rows,
            int(value_dims(stored)[-1]),
            total,
            name,
        )
        for operand, stored, tiles, rows, total, name in (
            (found.scores.lhs, found.query, 1, bm, query_rows, "q_tile"),
            (found.scores.rhs, found.key, stages, bn, sk, "k_tile"),
            (found.weighted.rhs, found.value, stages, bn, sk, "v_tile"),
        )
    )
    q_copies = q.copies(e, tid, block, width)
    k_copies = k.copies(e, tid, block, width)
    v_copies = v.copies(e, tid, block, width)

    # The block's tiles of keys: from kv_begin, `count` of them. A split
    # attention (flash-decoding) gives each of `split` blocks a part.
    kv_begin: Index = 0
    count: Index = kv_tiles
    if found.causal:  # the keys up to the block's last row
        count = e.add(
            arith.MinSIOp(
                e.index(kv_tiles), e.index(e.idiv(e.iadd(row0, bm + bn - 1), bn))
            )
        )
        count.name_hint = "kv_end"
    part: Index = 0
    if split > 1:
        per_part = -(-kv_tiles // split)
        part = e.add(cuda.BlockIdxOp(cuda.Dim.Z))
        part.name_hint = "part"
        kv_begin = e.imul(part, per_part)
        kv_begin.name_hint = "kv_begin"
        # Below 0 for a part past the keys: it loops over none.
        count = e.imin(per_part, e.isub(kv_tiles, kv_begin))
        count.name_hint = "kv_count"

    def first_key(em: Emitter, j: Index) -> Index:
        return em.imul(em.iadd(kv_begin, j), bn)

    def fill(em: Emitter, j: Index) -> None:
        """The K and V tiles of the block's j-th tile of keys, into its stage."""
        stage = pipeline.stage(em, j)
        k.issue(em, k_copies, stage, first_key(em, j), pipeline.wanted(em, j))
        v.issue(em, v_copies, stage, first_key(em, j), pipeline.wanted(em, j))

    product_kind = WgmmaProducts if on_wgmma else _MmaProducts
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

    warp_row = e.imul(warp, rows_per_warp)
    products: TileProducts
    if on_wgmma:
        products = WgmmaProducts.of(e, tid, (q, k, v), element, head, wm, stages)
    else:
        products = _MmaProducts.of(
            e,
            lane,
            warp_row,
            (q, k, v),
            element,
            fragments,
            (head, value_head),
        )
    # A lane's accumulators of S and of O: mma.sync fragments, a warp's rows'
    # (on wgmma too: a warpgroup's accumulators are its warps' fragments).
    s_frags, o_frags = bn // 8, value_head // 8
    out_layout = MMA_M16N8K16.tiled(fragments, o_frags)
    lane_row, lane_col = out_layout.thread_origin(e, lane, (row0, warp_row), (0, 0))
    # The batch index and row of each of the lane's rows, kept inside the
    # queries (rows past the end are not stored).
    lane_rows = []
    for offset in out_layout.rows:
        row = e.iadd(lane_row, offset)
        lane_rows.append(
            row_prefix(e, e.imin(row, e.isub(query_rows, 1)) if rows_partial else row)
        )
    rows = len(out_layout.rows)
    carried = 2 * rows + 4 * o_frags * fragments  # m, l per row; O
    # And what one tile's products leave to the next's (a P to multiply).
    pending_initial = products.pending_initial(e, bn)
    carried_types = [F32] * carried + [v.type for v in pending_initial]

    causal_add = _causal_add(found)
    # The logits' units: the scale folded into exp2's factor where it can be.
    given, log2_factor = found.scores.result, LOG2E
    if (scaled := _positive_scale(found)) is not None:
        given, log2_factor = scaled[0], LOG2E * scaled[1]

    def tile_loop(
        begin: Index, end: Index, initial: list[SSAValue], masked: bool
    ) -> list[SSAValue]:
        """The loop over tiles `begin` to `end` of the block's keys, carrying
        each row's max and sum, O and what the products leave pending;
        without the causal mask unless `masked` (tiles whose keys every
        row of the block sees)."""
        return loop_steps(
            e,
            begin,
            end,
            initial,
            lambda lb, j, values: tile_step(lb, j, values, masked),
            "kv_tile",
        )

    def tile_step(
        lb: Emitter, j: SSAValue, values: list[SSAValue], masked: bool
    ) -> list[SSAValue]:
        """The block's j-th tile of keys on the carried `values`: their
        values after it."""
        kv = lb.iadd(kv_begin, j)
        m_old = values[:rows]
        l_old = values[rows : 2 * rows]
        o_flat = values[2 * rows : carried]
        pending = values[carried:]
        # o[i][4 f + r]: fragment i's accumulators; row h of the lane = 2 i + r // 2.
        o = [o_flat[i * 4 * o_frags : (i + 1) * 4 * o_frags] for i in range(fragments)]
        # Every product that read the stage copied into next is done (each
        # waited for in its warp tile before this barrier), and the tile
        # `ahead` on goes into the stage read last (or, with a P V left
        # running, the one before).
        pipeline.begin(lb, j)
        stage = pipeline.stage(lb, j)
        # A warp tile whose rows are all past the queries (most warps of a
        # decode's block) skips the products and the softmax; it only copies.
        # (A warpgroup's warps decide together: a wgmma is the warpgroup's.)
        busy_if = None
        if units > 1 and rows_partial:
            busy = lb.icmp(lb.iadd(row0, products.tile_row), query_rows, "slt")
            busy_if = scf.IfOp(busy, carried_types, Region(Block()), Region(Block()))
            lb.block.add_op(busy_if)
            busy_if.false_region.block.add_op(scf.YieldOp(*values))
            lb = lb.nested(busy_if.true_region.block)

        s, o = products.scores(lb, (j, stage), bn, o, pending)

        # The logits: the ops on the scores (scale, masks, biases) evaluated per
        # element, at an index kept inside the tensors (rows and keys past the
        # end are not stored or are masked); keys past the end are masked.
        ev = Evaluator(lb, pointers)
        # A causal self-attention's tiles before the block's rows hold no
        # key past the end (they end at its first row, inside the keys).
        keys_clipped = keys_partial and (masked or q_shape[-2] != k_shape[-2])
        log2e = lb.f32(log2_factor)
        minus_inf = lb.f32(-math.inf)
        key_col = lb.iadd(lb.imul(kv, bn), lane_col)
        scores_type = element_of(found.scores.result)
        for i in range(fragments):
            for f in range(s_frags):
                for r in range(4):
                    col = lb.iadd(key_col, f * 8 + r % 2)
                    index = [
                        *lane_rows[2 * i + r // 2],
                        lb.imin(col, lb.isub(sk, 1)) if keys_clipped else col,
                    ]
                    ev.define(given, index, round_to(lb, s[i][f][r], scores_type))
                    if not masked and causal_add is not None:  # the mask adds 0
                        sum_, unmasked = causal_add
                        ev.define(sum_, index, ev.at(unmasked, index))
                    value = ev.at(found.logits, index)
                    if keys_clipped:
                        value = lb.select(lb.icmp(col, sk, "sge"), minus_inf, value)
                    s[i][f][r] = value

        # The online softmax, per row of the lane's: h = 2 i + r // 2, its max
        # and sum in log2 units for exp2: the max of the logits is taken to them
        # once a row (log2(e) > 0 keeps the max the same), and each weight is
        # exp2(logit log2(e) - m), one fused multiply-add before the exp2.
        m_new, m_use, l_new, alpha = [], [], [], []
        for h in range(rows):
            i, half = divmod(h, 2)
            values = [
                s[i][f][r] for f in range(s_frags) for r in (2 * half, 2 * half + 1)
            ]
            # fmaxf (arith.maxnumf): a NaN score reaches the output through the
            # row's sum; NaN-propagating maxima would branch on each.
            row_max = values[0]
            for value in values[1:]:
                row_max = lb.add(arith.MaxnumfOp(row_max, value))
            # A row's values are spread over the four lanes of a quad.
            row_max = lanes_reduce(lb, arith.MaxnumfOp, row_max, out_layout.quad)
            row_max = lb.add(arith.MulfOp(row_max, log2e))
            m_new.append(lb.add(arith.MaxnumfOp(m_old[h], row_max)))
            # A row masked whole so far subtracts 0, not -inf (exp2(-inf - -inf)
            # would be NaN): its weights and rescaling stay 0.
            empty = lb.add(arith.CmpfOp(m_new[h], minus_inf, "oeq"))
            m_use.append(lb.select(empty, lb.f32(0.0), m_new[h]))
            shift = lb.add(arith.SubfOp(m_old[h], m_use[h]))
            alpha.append(lb.add(mathd.Exp2Op(shift, APPROXIMATE)))
        p = [
            [
                [
                    lb.add(
                        mathd.Exp2Op(
                            lb.add(
                                arith.SubfOp(
                                    lb.add(arith.MulfOp(s[i][f][r], log2e)),
                                    m_use[2 * i + r // 2],
                                )
                            ),
                            APPROXIMATE,
                        )
                    )
                    for r in range(4)
                ]
                for f in range(s_frags)
            ]
            for i in range(fragments)
        ]
        for h in range(rows):
            i, half = divmod(h, 2)
            total = lb.add(arith.MulfOp(l_old[h], alpha[h]))
            for f in range(s_frags):
                for r in (2 * half, 2 * half + 1):
                    total = lb.add(arith.AddfOp(total, p[i][f][r]))
            l_new.append(total)
        o = [
            [
                lb.add(arith.MulfOp(value, alpha[2 * i + (n % 4) // 2]))
                for n, value in enumerate(frag)
            ]
            for i, frag in enumerate(products.settled(lb, o))
        ]

        o, pending = products.weighted(lb, stage, p, o, bn)
        carried_next = [*m_new, *l_new, *(v for frag in o for v in frag), *pending]
        if busy_if is not None:
            lb.block.add_op(scf.YieldOp(*carried_next))
            carried_next = list(busy_if.results)
        return carried_next

    initial = [e.f32(-math.inf)] * rows + [e.f32(0.0)] * (carried - rows)
    initial += pending_initial
    if found.causal:
        # Tiles of keys up to the block's first row are seen whole.
        seen = e.imin(e.idiv(e.iadd(row0, 1), bn), count)
        seen.name_hint = "kv_seen"
        results = tile_loop(0, seen, initial, False)
        results = tile_loop(seen, count, results, True)
    else:
        results = tile_loop(0, count, initial, True)
    pipeline.drain(e)

    # Each lane summed its own columns: the row's sum is its quad's.
    m_final = results[:rows]
    quad = out_layout.quad
    sums = [
        lanes_reduce(e, molten.ReduceSumOp, results[rows + h], quad)
        for h in range(rows)
    ]
    # O, once the last tile's P V is done.
    (o_final,) = products.finished(
        e, [results[2 * rows : carried]], results[carried:], count
    )
    last: Emitter | None = None
    scratch = ()
    if split > 1:
        parts = _Parts.of(shell.region, grid, (bm, query_rows, value_head))
        scratch = parts.scratch
        group = e.iadd(e.imul(batch, q_tiles), tile_x)
        local_row = e.iadd(warp_row, e.idiv(lane, out_layout.quad))
        at = (group, part, row0, local_row)
        parts.store(e, at, lane, lane_col, m_final, sums, o_final, out_layout)
        arrival = cuda.LastArrivalOp(parts.counters, e.index(group), e.index(split))
        arrived = e.add(arrival)
        arrived.name_hint = "last"
        last = emit_if(e, arrived)
        at = (group, row0, local_row)
        sums, o_final = parts.combined(last, at, lane_col, out_layout)
    end_e = last or e
    inverse = [end_e.add(arith.DivfOp(end_e.f32(1.0), total)) for total in sums]

    def normalized(j: int) -> SSAValue:
        """O / l at the lane's accumulator j."""
        return end_e.add(arith.MulfOp(o_final[j], inverse[out_layout.row_slot(j)]))

    accumulators = out_layout.places(end_e, (lane_row, lane_col), normalized)
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
        accumulators,
        guard_rows=rows_partial,
        staging=staging,
    )
    launch = Launch(grid, block, grid_of, min_blocks=1, scratch=scratch)
    return finish(shell, end, launch, last)
