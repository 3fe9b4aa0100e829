"""Flash-decoding: an attention's keys split into parts, one block a part
(a schedule's `split`). Each block stores its unnormalized output rows,
and each row's max and sum, in f32 scratch the launcher allocates, then
arrives at its group's counter; the last block of a group to arrive
combines the parts in order of part (weights exp2(m_part - m), coherent
loads), so the result does not depend on which block finished first.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects import math as mathd
from xdsl.ir import Block, Region, SSAValue

from molten.dialects import cuda
from molten.passes.lowering.emitter import (
    F32,
    INDEX,
    Emitter,
    Index,
    close_if,
    emit_if,
)
from molten.passes.lowering.fragments import AccumulatorLayout
from molten.passes.lowering.kernels import Scratch, scratch_params


@dataclass(frozen=True)
class SplitParts:
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
    ) -> SplitParts:
        bm, sq, width = rows
        groups, split = grid[0] * grid[1], grid[2]
        depth = min(bm, sq)
        scratch = (
            Scratch("attention_counters", cuda.COUNTER_TYPE, groups, True, True),
            Scratch("attention_parts", F32, groups * split * depth * width, False),
            Scratch("attention_part_stats", F32, groups * split * depth * 2, False),
        )
        params = scratch_params(region, scratch)
        return SplitParts(*params, split, depth, width, sq, bm, scratch)

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

    def gathered(
        self,
        e: Emitter,
        at: tuple[Index, Index, Index, Index],
        lanes: tuple[Index, Index],
        layout: AccumulatorLayout,
        rows: tuple[list[SSAValue], list[SSAValue], list[SSAValue]],
    ) -> tuple[Emitter, list[SSAValue], list[SSAValue]]:
        """The block's part stored (`store`: at = (group, part, the block's
        first query row, the lane's first row in the block), `lanes` = (the
        lane, its first column), `rows` = its rows' maxima, sums and
        outputs), then its arrival at the group's counter (a fenced atomic
        add, no waiting, so no co-residency is needed); in the last block
        to arrive (the emitter returned, an `scf.if` the caller closes),
        each row's sum and outputs over the whole of the keys."""
        group, part, row0, local_row = at
        lane, lane_col = lanes
        maxima, sums, outputs = rows
        self.store(e, at, lane, lane_col, maxima, sums, outputs, layout)
        arrival = cuda.LastArrivalOp(self.counters, e.index(group), e.index(self.split))
        arrived = e.add(arrival)
        arrived.name_hint = "last"
        last = emit_if(e, arrived)
        sums, outputs = self.combined(last, (group, row0, local_row), lane_col, layout)
        return last, sums, outputs

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
        maxima = for_parts(
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
        totals = for_parts(e, parts, [zero] * count, add_part)
        return totals[:rows], totals[rows:]


def for_parts(
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
