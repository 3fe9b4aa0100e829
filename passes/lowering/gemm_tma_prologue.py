"""A persistent TMA gemm's prologue (fuse-prologue): the lhs computed from
the kernel's input in place in each stage of A, and the row reductions the
epilogue reads added up from the same elements.

Each consumer thread works on the rows of its own accumulators (the
wgmma layout's rows: 16 w + l / 4 and 8 more, in lane l of warp w) and on
16-byte chunks 2 (l % 4) and 2 (l % 4) + 1 of each, so that the quad's
four lanes cover a row's eight chunks of a K step; then its warpgroup's
named barrier lets the wgmmas read the stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda, molten
from molten.passes.lowering.emitter import F32, WARP, Emitter, Index, element_of
from molten.passes.lowering.epilogue import Accumulated, Defined
from molten.passes.lowering.evaluator import Evaluator
from molten.passes.lowering.fragments import AccumulatorLayout
from molten.passes.lowering.gemm_wgmma import WARPGROUP
from molten.passes.lowering.matmul import GemmShape

CHUNK = cuda.ASYNC_COPY_BYTES // 2
"""16-bit elements in a 16-byte chunk of a swizzled row."""
FIRST_NAMED_BARRIER = 2
"""0 is __syncthreads's, 1 molten_sync_among's (split-K)."""


@dataclass(frozen=True)
class ComputedLhs:
    """A consumer thread's share of the prologue: its rows of the tile
    (`own_rows`, from its warpgroup's first), its chunks of a K step and
    their places in a stage in each row, and its warpgroup's barrier."""

    gemm: GemmShape
    pointers: dict[SSAValue, SSAValue]
    a_buffer: SSAValue
    tile: tuple[int, int]
    """The block tile's rows and K step."""
    own_rows: list[Index]
    own_chunks: list[Index]
    places: list[list[Index]]
    barrier: Index

    @staticmethod
    def of(
        e: Emitter,
        gemm: GemmShape,
        layout: AccumulatorLayout,
        unit: tuple[Index, Index, Index],
        a_buffer: SSAValue,
        pointers: dict[SSAValue, SSAValue],
        tile: tuple[int, int],
    ) -> ComputedLhs | None:
        """The prologue of warpgroup `unit` = (its index, the thread's index
        in it, its first row), or None where the kernel reads A as given."""
        if not gemm.has_prologue and not gemm.row_reductions:
            return None
        group, in_group, group_m = unit
        _, bk = tile
        warp, lane = e.idiv(in_group, WARP), e.irem(in_group, WARP)
        quad, quad_lane = e.idiv(lane, layout.quad), e.irem(lane, layout.quad)
        first_row = e.iadd(group_m, e.iadd(e.imul(warp, layout.warp_rows), quad))
        own_rows = [e.iadd(first_row, row) for row in layout.rows]
        # Its two chunks, and their places in a stage in each row: row r's
        # chunk c is at c ^ (r % 8), and r % 8 is the quad for both rows.
        own_chunks = [e.imul(quad_lane, 2), e.iadd(e.imul(quad_lane, 2), 1)]
        places = [
            [
                e.iadd(e.imul(row, bk), e.imul(e.ixor(chunk, quad), CHUNK))
                for chunk in own_chunks
            ]
            for row in own_rows
        ]
        barrier = e.iadd(group, FIRST_NAMED_BARRIER)
        return ComputedLhs(
            gemm, pointers, a_buffer, tile, own_rows, own_chunks, places, barrier
        )

    def tile_rows(self, e: Emitter, m0: Index) -> list[Index]:
        """The thread's rows of the matrix in the tile from row `m0`."""
        return [e.iadd(m0, row) for row in self.own_rows]

    def step(
        self,
        e: Emitter,
        k: Index,
        stage: SSAValue,
        rows: list[Index],
        sums: list[SSAValue],
    ) -> list[SSAValue]:
        """The lhs computed in place on this thread's elements of the K step
        in `stage` (its `rows` of the matrix), and `sums` (each row's, then
        each reduction's) with them added."""
        gemm = self.gemm
        bm, bk = self.tile
        reductions = gemm.row_reductions
        computed = gemm.matmul.lhs.owner if gemm.has_prologue else None
        narrowed = (
            computed.input if isinstance(computed, molten.CastOp) else gemm.matmul.lhs
        )
        element: Attribute = element_of(gemm.matmul.lhs)
        ev = Evaluator(e, self.pointers)
        k0, base = e.imul(k, bk), e.imul(stage, bm * bk)
        sums = list(sums)
        for c, chunk in enumerate(self.own_chunks):
            k_chunk = e.iadd(k0, e.imul(chunk, CHUNK))
            # The chunk's columns, once for both rows: what is per column
            # (w) is loaded once.
            columns = [e.iadd(k_chunk, j) for j in range(CHUNK)]
            for r, row in enumerate(rows):
                at = e.index(e.iadd(base, self.places[r][c]))
                load = cuda.LoadOp(self.a_buffer, at, CHUNK)
                e.add(load)
                values = []
                for column, x in zip(columns, load.values, strict=True):
                    index = [row, column]
                    ev.define(gemm.source, index, e.add(arith.ExtFOp(x, F32)))
                    if gemm.has_prologue:
                        value = ev.at(narrowed, index)
                        values.append(e.add(arith.TruncFOp(value, element)))
                    for q, reduction in enumerate(reductions):
                        slot = r * len(reductions) + q
                        term = ev.at(reduction.input, index)
                        sums[slot] = e.add(arith.AddfOp(sums[slot], term))
                if gemm.has_prologue:
                    e.add(cuda.StoreOp(values, self.a_buffer, at))
        if gemm.has_prologue:
            e.add(cuda.FenceProxyAsyncOp())
            e.add(cuda.NamedBarrierOp(e.index(self.barrier), WARPGROUP))
        return sums


def row_reductions_done(
    e: Emitter,
    gemm: GemmShape,
    layout: AccumulatorLayout,
    accumulators: list[tuple[Index, Index, Accumulated]],
    sums: list[SSAValue],
) -> list[Defined]:
    """Each row reduction's value at this thread's rows, from its sums of
    them (per row, then per reduction) over its share of each row: the
    lanes of a quad share the rows."""
    reductions = gemm.row_reductions
    if not reductions:
        return []
    totals = []
    for total in sums:
        offset = 1
        while offset < layout.quad:
            total = e.add(arith.AddfOp(total, e.add(cuda.ShflXorOp(total, offset))))
            offset *= 2
        totals.append(total)
    rows = [
        accumulators[layout.row_registers(h)[0]][0] for h in range(len(layout.rows))
    ]
    defined: list[Defined] = []
    for r, row in enumerate(rows):
        for q, reduction in enumerate(reductions):
            value = totals[r * len(reductions) + q]
            if isinstance(reduction, molten.ReduceMeanOp):
                value = e.add(arith.DivfOp(value, e.f32(float(gemm.k))))
            defined.append((reduction.result, [row, 0], value))
    return defined
