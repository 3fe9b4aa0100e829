"""Rows split across a group of blocks (a cooperative launch): the
reductions grouped into exchanges, and each exchange's block totals
combined through global memory into the row's values, the same in every
block of the group (online softmax rescaling; layer_norm's moments
combined exactly).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda, molten
from molten.dialects.molten import FLOAT, element_kind
from molten.passes.fusion import depends_on
from molten.passes.lowering.emitter import (
    WARP,
    Emitter,
    Index,
    close_if,
    element_of,
    emit_if,
)
from molten.passes.lowering.evaluator import round_to
from molten.passes.lowering.reductions import (
    Accumulator,
    lanes_reduce,
)


@dataclass(frozen=True)
class Staged:
    """A reduction of a split row and, when its input depends on an earlier
    reduction `shift` of the same exchange, the `rule` that turns its block
    total (taken with the block's own value c_b of `shift`) into its share of
    the row's total (under the row's value C of `shift`):

    - "exp", sum(exp(x - max(x))): the share is s_b * exp(c_b - C), the
      online softmax rescaling;
    - "square", sum((x - mean(x))^2): the share is
      s_b + 2 (c_b - C) S1_b + n_b (c_b - C)^2, with S1_b = sum_b(x) - n_b c_b
      (exact for any c_b; the block's mean keeps it well conditioned).
    """

    op: molten.ReductionOp
    rule: str | None = None
    shift: molten.ReductionOp | None = None


def _rebase_rule(op: molten.ReductionOp, stage: list[Staged]) -> Staged | None:
    """`op` staged with a rescaling rule against a reduction of `stage`, when
    its input is exp(x - max(x)) or (x - mean(x))^2 for such a reduction of
    the same x, and x itself does not depend on the stage."""
    if not isinstance(op, molten.ReduceSumOp | molten.ReduceMeanOp):
        return None
    producer = op.input.owner
    if not isinstance(producer, molten.ExpOp | molten.SquareOp):
        return None
    sub = producer.operands[0].owner
    if not isinstance(sub, molten.SubOp):
        return None
    shift = sub.rhs.owner
    members = {staged.op: staged for staged in stage}
    if shift not in members or members[shift].rule is not None:
        return None
    if shift.input is not sub.lhs or shift.axes != op.axes:
        return None
    if depends_on(sub.lhs, {staged.op.results[0] for staged in stage}):
        return None
    if isinstance(producer, molten.ExpOp) and isinstance(shift, molten.ReduceMaxOp):
        return Staged(op, "exp", shift)
    if isinstance(producer, molten.SquareOp) and isinstance(shift, molten.ReduceMeanOp):
        return Staged(op, "square", shift)
    return None


def exchange_stages(reductions: list[molten.ReductionOp]) -> list[list[Staged]]:
    """The reductions of a split row grouped into exchanges, in order: a
    reduction joins the current exchange when it does not depend on its
    reductions, or depends on one only through a rescaling rule."""
    stages: list[list[Staged]] = []
    for op in reductions:
        if stages:
            stage = stages[-1]
            if not depends_on(op.input, {staged.op.results[0] for staged in stage}):
                stage.append(Staged(op))
                continue
            rebased = _rebase_rule(op, stage)
            if rebased is not None:
                stage.append(rebased)
                continue
        stages.append([Staged(op)])
    return stages


def row_value(
    e: Emitter,
    op: molten.ReductionOp,
    total: SSAValue,
    inverse_count: Callable[[], SSAValue],
) -> SSAValue:
    """The value of reduction `op` from the combined `total` of its elements."""
    total = Accumulator.of(op).leave(e, total)
    if isinstance(op, molten.ReduceMeanOp):
        total = e.add(arith.MulfOp(total, inverse_count()))
    if element_kind(element_of(op.results[0])) != FLOAT:
        return total
    return round_to(e, total, element_of(op.results[0]))


@dataclass(frozen=True)
class SplitRow:
    """Where a block's part of a split row lies and what the group shares."""

    counters: SSAValue
    partials: dict[Attribute, SSAValue]
    """The partial totals' buffer of each accumulation type."""
    group: Index
    part: Index
    split: int
    chunk: int  # columns of every part but the last
    shortest: int  # columns of the last part
    width: int  # slots per part and exchange: the largest exchange's reductions

    def _per_part(self, e: Emitter, part: Index, f: Callable[[int], float]) -> SSAValue:
        if self.shortest == self.chunk:
            return e.f32(f(self.chunk))
        last = e.icmp(part, self.split - 1, "eq")
        return e.select(last, e.f32(f(self.shortest)), e.f32(f(self.chunk)))

    def count(self, e: Emitter, part: Index) -> SSAValue:
        """The number of columns of `part`, as f32."""
        return self._per_part(e, part, float)

    def inverse_count(self, e: Emitter, part: Index) -> SSAValue:
        return self._per_part(e, part, lambda count: 1.0 / count)


def _rebased_share(
    e: Emitter,
    staged: Staged,
    total: SSAValue,
    shift_total: SSAValue,
    shift_value: SSAValue,
    row: SplitRow,
    part: Index,
) -> SSAValue:
    """A part's block total of a rebased reduction as its share of the row's
    total, given the part's block total of the shift and the row's value."""
    assert staged.shift is not None
    local = row_value(e, staged.shift, shift_total, lambda: row.inverse_count(e, part))
    delta = e.add(arith.SubfOp(local, shift_value))
    if staged.rule == "exp":
        scaled = e.add(arith.MulfOp(total, e.add(mathd.ExpOp(delta))))
        # A part of -inf only has no share (and no NaN from -inf - -inf).
        empty = e.add(arith.CmpfOp(local, e.f32(-math.inf), "oeq"))
        return e.select(empty, e.f32(0.0), scaled)
    count = row.count(e, part)
    first_moment = e.add(arith.SubfOp(shift_total, e.add(arith.MulfOp(count, local))))
    twice = e.add(arith.MulfOp(first_moment, e.f32(2.0)))
    inner = e.add(arith.AddfOp(twice, e.add(arith.MulfOp(count, delta))))
    return e.add(arith.AddfOp(total, e.add(arith.MulfOp(delta, inner))))


def exchange_row_values(
    e: Emitter,
    stage: list[Staged],
    totals: list[SSAValue],
    row: SplitRow,
    tid: SSAValue,
    exchange: Index,
    n: int,
) -> list[SSAValue]:
    """The row's values of `stage`'s reductions (of its `n` elements) from
    the block totals of the `split` blocks of the group, the same in all of
    them: each block writes
    its totals to the group's slots for this `exchange` (its number among the
    group's exchanges, from 0; two sets of slots alternate), the group waits
    for all once, and every warp combines the slots in the same order,
    rescaling rebased reductions by the row's value of their shift."""
    split = row.split
    parity = e.irem(exchange, 2)
    base = e.imul(e.iadd(e.imul(row.group, 2), parity), row.width * split)
    accumulators = [Accumulator.of(staged.op) for staged in stage]
    buffers = [row.partials[a.type] for a in accumulators]
    writer = emit_if(e, e.icmp(tid, 0, "eq"))
    for r, total in enumerate(totals):
        slot = writer.iadd(base, writer.iadd(row.part, r * split))
        writer.add(cuda.StoreOp(total, buffers[r], writer.index(slot)))
    close_if(writer)
    e.add(
        cuda.GroupBarrierOp(
            row.counters,
            e.index(row.group),
            e.index(e.imul(e.iadd(exchange, 1), split)),
        )
    )
    lane = e.irem(tid, WARP)
    # Lane l combines parts l, l + 32, ...: their slots, loaded once.
    parts: list[tuple[Index, SSAValue | None, list[SSAValue]]] = []
    for c in range(math.ceil(split / WARP)):
        i = e.iadd(lane, c * WARP)
        valid = None if (c + 1) * WARP <= split else e.icmp(i, split, "slt")
        clamped = e.imin(i, split - 1)
        loads = [
            e.add(
                cuda.LoadOp(
                    buffers[r],
                    e.index(e.iadd(base, e.iadd(clamped, r * split))),
                    coherent=True,
                )
            )
            for r in range(len(stage))
        ]
        parts.append((clamped, valid, loads))
    members = [staged.op for staged in stage]
    row_values: list[SSAValue] = []
    for r, staged in enumerate(stage):
        accumulator = accumulators[r]
        value = accumulator.identity(e)
        for clamped, valid, loads in parts:
            share = loads[r]
            if staged.shift is not None:
                s = members.index(staged.shift)
                share = _rebased_share(
                    e, staged, share, loads[s], row_values[s], row, clamped
                )
            total = accumulator.combine(e, value, share)
            value = total if valid is None else e.select(valid, total, value)
        total = lanes_reduce(e, accumulator, value, WARP)
        row_values.append(row_value(e, staged.op, total, lambda: e.f32(1.0 / n)))
    return row_values
