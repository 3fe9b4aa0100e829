"""`scan` kernels: a scan (cumsum, cumprod, cummax, cummin) with the
elementwise work over its shape.

Rows are the lines along the cumsum's axis. Contiguous rows (the axis is
the last) take `lanes` = block / rows_per_block threads each and are walked
in steps: in a step each thread loads `elements_per_thread` elements as runs
of `vector` consecutive ones (run c of lane t at column c * lanes * vector +
t * vector, so each load is coalesced across the lanes), scans each run in
registers, and scans the runs' totals across the lanes by shuffles (a
Kogge-Stone scan on xor partners), across warps through shared memory; a
running total carries the sum of the steps before. Strided rows (axes
after the scanned one) take a thread each, consecutive threads on
consecutive rows, and are walked `elements_per_thread` elements at a time.
A reverse scan walks the steps from the row's end, the same aligned runs,
and counts the lanes and runs after an element as before it. The scan's
`Combine` (a sum, product, maximum or minimum, and its identity) is of its
scalar type (f32 for floats; an integer scan, as of a mask's positions,
in its own type); "sum" below is any of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

from xdsl.dialects import arith, scf
from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda, kernel, molten
from molten.dialects.molten import value_dims
from molten.errors import StaticShapeNeeded
from molten.passes.lowering import scalars
from molten.passes.lowering.emitter import (
    WARP,
    Emitter,
    Index,
    close_if,
    emit_carried_for,
    emit_if,
    ravel,
    unravel,
    unravel_vector,
)
from molten.passes.lowering.evaluator import Evaluator
from molten.passes.lowering.kernels import (
    KernelShell,
    Launch,
    LoweredKernel,
    checked_vector_width,
    row_loop,
    store_scalar,
)
from molten.passes.lowering.scalars import scalar_type


class Combine(NamedTuple):
    """How a scan combines two elements, and the element that changes
    nothing (what comes before the first)."""

    identity: Callable[[Emitter, Attribute], SSAValue]
    combine: Callable[[Emitter, SSAValue, SSAValue], SSAValue]

    def apply(self, e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
        """a combined with b; the other where one is the identity (the
        kernel's one constant of it): no `0 + x`, no `max(0u, x)`."""
        identity = self.identity(e, a.type)
        if a is identity:
            return b
        if b is identity:
            return a
        return self.combine(e, a, b)


COMBINES = {
    "sum": Combine(scalars.zero, scalars.add),
    "prod": Combine(scalars.one, scalars.multiply),
    "max": Combine(scalars.lowest, scalars.maximum),
    "min": Combine(scalars.highest, scalars.minimum),
}
"""Each `ScanOp.COMBINE`'s."""


def lanes_scan(
    e: Emitter,
    value: SSAValue,
    lane: Index,
    lanes: int,
    reverse: bool,
    combine: Combine = COMBINES["sum"],
) -> tuple[SSAValue, SSAValue]:
    """(the sum of `value` over the lanes before this one, the sum over all)
    within each aligned group of `lanes` (a power of two up to 32) lanes of a
    warp; "before" is below, or above where `reverse`."""
    before, total = combine.identity(e, value.type), value
    offset = 1
    while offset < lanes:
        other = e.add(cuda.ShflXorOp(total, offset))
        bit = e.add(arith.AndIOp(e.index(lane), e.index(offset)))
        partner_before = e.icmp(bit, 0, "eq" if reverse else "ne")
        before = e.select(partner_before, combine.apply(e, before, other), before)
        total = combine.apply(e, total, other)
        offset *= 2
    return before, total


class _Exchange:
    """Shared slots where the warps of a block-wide row post their totals,
    two sets (alternate steps) so that one barrier a step suffices; each
    thread then sums the slots of the warps before its own."""

    def __init__(
        self,
        e: Emitter,
        tid: SSAValue,
        warps: int,
        runs: int,
        t: Attribute,
        combine: Combine,
    ):
        self.warps, self.runs, self.t, self.combine = warps, runs, t, combine
        self.slots = e.add(cuda.SharedAllocOp(t, 2 * runs * warps))
        self.lane = e.irem(tid, WARP)
        self.warp = e.idiv(tid, WARP)

    def scan(
        self,
        e: Emitter,
        parity: Index,
        scans: list[tuple[SSAValue, SSAValue]],
        reverse: bool,
    ) -> list[tuple[SSAValue, SSAValue]]:
        """Each run's (before, total) within its warp made the block's."""
        base = e.imul(parity, self.runs * self.warps)
        first = emit_if(e, e.icmp(self.lane, 0, "eq"))
        for c, (_, total) in enumerate(scans):
            slot = first.iadd(base, first.iadd(c * self.warps, self.warp))
            first.add(cuda.StoreOp(total, self.slots, first.index(slot)))
        close_if(first)
        e.add(cuda.SyncThreadsOp())
        # Every thread reads the posted totals (the same slot across the
        # block at a time, a broadcast) and adds those of the warps before.
        combine = self.combine
        identity = combine.identity(e, self.t)
        results = []
        for c, (before, _) in enumerate(scans):
            warps_before, total = identity, identity
            for w in range(self.warps):
                slot = e.iadd(base, c * self.warps + w)
                value = e.add(cuda.LoadOp(self.slots, e.index(slot)))
                earlier = e.icmp(self.warp, w, "slt" if reverse else "sgt")
                added = combine.apply(e, warps_before, value)
                warps_before = e.select(earlier, added, warps_before)
                total = combine.apply(e, total, value)
            results.append((combine.apply(e, before, warps_before), total))
        return results


def lower_scan(kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr) -> LoweredKernel:
    """A grid-stride loop over rows, each walked in steps that carry the sum
    of the steps before (see the module docstring)."""
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    outputs, out_ptrs = shell.outputs, shell.out_ptrs
    name = f"@{kfunc.sym_name.data}"
    (scan,) = [op for op in kfunc.body.block.ops if isinstance(op, molten.ScanOp)]
    full = value_dims(scan.result)
    axis = scan.axis.value.data
    n = full[axis]
    if isinstance(n, str):
        raise StaticShapeNeeded(
            f"lower-kernel-to-cuda: {name} scans along a named dimension ({n}); "
            "rows of a size known at run time only are not lowered yet"
        )
    for value in outputs:
        if value_dims(value) != full:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: {name} writes {value.type}, not of the "
                f"scanned shape {list(full)}"
            )
    row_shape = (*full[:axis], *full[axis + 1 :])
    rows = e.count(row_shape)
    block = schedule.block.data
    rows_per_block = schedule.rows_per_block.data
    lanes = block // rows_per_block
    ept = schedule.elements_per_thread.data
    strided = axis < len(full) - 1
    if block % WARP or (lanes < block and (lanes > WARP or lanes & (lanes - 1))):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s scan schedule gives {lanes} threads "
            f"a row in blocks of {block}; a row takes a block (a multiple of 32) "
            "or a power of two of threads up to 32"
        )
    if strided and (lanes > 1 or schedule.vector.data > 1):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name} scans strided rows (axes follow the "
            "scanned one), which take a thread a row and vector = 1; its schedule "
            f"gives {lanes} threads a row, vector {schedule.vector.data}"
        )
    width = checked_vector_width(kfunc, schedule, n if not strided else full[-1])
    if ept % width:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s scan schedule has "
            f"elements_per_thread = {ept}, not a multiple of vector = {width}"
        )

    tid = e.add(cuda.ThreadIdxOp())
    bid = e.add(cuda.BlockIdxOp())
    gdim = e.add(cuda.GridDimOp())
    lane: Index = tid if rows_per_block == 1 else e.irem(tid, lanes)
    t = scalar_type(scan.result.type.element_type)  # type: ignore[attr-defined]
    combine = COMBINES[scan.COMBINE]
    exchange = None
    if lanes > WARP:
        exchange = _Exchange(e, tid, lanes // WARP, ept // width, t, combine)
    loop = row_loop(e, row_shape, rows, rows_per_block, lanes, tid, bid, gdim)
    rb, row_block, row, row_valid, grid, grid_of = loop
    row_index = unravel(rb, row, row_shape)

    def element(column: Index) -> list[Index]:
        return [*row_index[:axis], column, *row_index[axis:]]

    ev = Evaluator(rb, pointers)
    reverse = scan.reverse is not None
    exclusive = scan.exclusive is not None
    span = lanes * ept  # the columns of a step
    steps = math.ceil(n / span)
    _, sb, step_block = emit_carried_for(rb, 0, steps, [combine.identity(rb, t)])
    step, carry = step_block.args
    step.name_hint, carry.name_hint = "step", "carry"
    chunk = sb.isub(steps - 1, step) if reverse else step
    base = sb.imul(chunk, span)
    scoped = ev.scoped(sb)
    partial = n % span != 0  # the last chunk reaches past the row's end

    # Runs: the `width` columns each from `start`, in memory order.
    runs: list[tuple[list[list[Index]], SSAValue | None]] = []
    for c in range(ept // width):
        start = sb.iadd(base, sb.iadd(c * lanes * width, sb.imul(lane, width)))
        valid = sb.icmp(start, n, "slt") if partial else None
        if valid is not None:
            start = sb.imin(start, n - width)
        indices = [element(col[0]) for col in unravel_vector(sb, start, [n], width)]
        runs.append((indices, valid))
    # The runs and their columns in the order the scan takes them.
    order = [(i[::-1], v) for i, v in reversed(runs)] if reverse else runs
    identity = combine.identity(sb, t)

    # Every element of the step read first, in memory order (the loads then
    # in flight together, and vectorized), then each run scanned in
    # registers: the sums before each element.
    loaded = {
        id(index): scoped.at(scan.input, index)
        for indices, _ in runs
        for index in indices
    }
    befores: list[list[SSAValue]] = []
    scans: list[tuple[SSAValue, SSAValue]] = []
    for indices, valid in order:
        running = identity
        before = []
        for index in indices:
            x = loaded[id(index)]
            if valid is not None:
                x = sb.select(valid, x, identity)
            before.append(running)
            running = combine.apply(sb, running, x)
        befores.append(before)
        lanes_in_warp = min(lanes, WARP)
        scans.append(lanes_scan(sb, running, lane, lanes_in_warp, reverse, combine))
    if exchange is not None:
        scans = exchange.scan(sb, sb.irem(step, 2), scans, reverse)

    # The row's sums before each element: the steps', runs' and lanes' before.
    offset = carry
    for (indices, _), before, (lanes_before, total) in zip(
        order, befores, scans, strict=True
    ):
        run_offset = combine.apply(sb, offset, lanes_before)
        for index, sum_before in zip(indices, before, strict=True):
            value = combine.apply(sb, run_offset, sum_before)
            if not exclusive:
                value = combine.apply(sb, value, scoped.at(scan.input, index))
            scoped.define(scan.result, index, value)
        offset = combine.apply(sb, offset, total)
    offset.name_hint = "carry"

    stores = sb if row_valid is None else emit_if(sb, row_valid)
    stored = scoped if row_valid is None else scoped.scoped(stores)
    for indices, valid in runs:
        target = stores if valid is None else emit_if(stores, valid)
        at = stored if valid is None else stored.scoped(target)
        for index in indices:
            for value, ptr in zip(outputs, out_ptrs, strict=True):
                scalar = at.at(value, index)
                store_scalar(at, scalar, ptr, ravel(target, index, full))
        if valid is not None:
            close_if(target)
    if row_valid is not None:
        close_if(stores)
    step_block.add_op(scf.YieldOp(offset))
    if exchange is not None and steps % 2:
        # The next row's first step writes the slots this row's last read.
        rb.add(cuda.SyncThreadsOp())
    row_block.add_op(scf.YieldOp())
    return shell.finish(Launch((grid, 1, 1), block, grid_of))
