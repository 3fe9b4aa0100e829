"""Reductions across threads: within aligned groups of a warp's lanes by
shuffles, and across a block through one shared slot per warp.
"""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from molten.dialects import cuda, molten
from molten.passes.lowering.emitter import F32, WARP, Emitter, close_if, emit_if

IDENTITY = {
    molten.ReduceSumOp: 0.0,
    molten.ReduceMeanOp: 0.0,
    molten.ReduceMaxOp: -math.inf,
}


Reduction = (
    molten.ReductionOp
    | type[molten.ReductionOp]
    | type[arith.FloatingPointLikeBinaryOperation]
)
"""A reduction op, or its kind where there is no op to name (attention's
running sum), or the arith op that combines two values (attention's row
max, arith.MaxnumfOp: a NaN score reaches the output through the sum, so
the max need not propagate it, and fmaxf has no branch)."""


def combine(e: Emitter, op: Reduction, a: SSAValue, b: SSAValue) -> SSAValue:
    kind = op if isinstance(op, type) else type(op)
    if issubclass(kind, arith.FloatingPointLikeBinaryOperation):
        return e.add(kind(a, b))
    if issubclass(kind, molten.ReduceMaxOp):
        return e.add(arith.MaximumfOp(a, b))
    return e.add(arith.AddfOp(a, b))


def lanes_reduce(e: Emitter, op: Reduction, value: SSAValue, lanes: int) -> SSAValue:
    """The combination of `value` over each aligned group of `lanes` (a power
    of two up to 32) consecutive lanes of a warp, held by all of them."""
    offset = lanes // 2
    while offset:
        value = combine(e, op, value, e.add(cuda.ShflXorOp(value, offset)))
        offset //= 2
    return value


def block_reduce(
    e: Emitter, op: molten.ReductionOp, value: SSAValue, tid: SSAValue, lanes: int
) -> SSAValue:
    """The combination of `value` over each group of `lanes` threads (a power
    of two up to 32, or the whole block), held by all of them: shuffles
    within a warp, then one shared slot per warp and shuffles again."""
    value = lanes_reduce(e, op, value, min(lanes, WARP))
    warps = lanes // WARP
    if warps <= 1:
        return value
    slots = e.add(cuda.SharedAllocOp(F32, warps))
    lane = e.irem(tid, WARP)
    warp = e.idiv(tid, WARP)
    inner = emit_if(e, e.icmp(lane, 0, "eq"))
    inner.add(cuda.StoreOp(value, slots, inner.index(warp)))
    close_if(inner)
    e.add(cuda.SyncThreadsOp())
    partial = e.add(cuda.LoadOp(slots, e.index(e.imin(lane, warps - 1))))
    # The slots are written again for the next row: everyone must have read.
    e.add(cuda.SyncThreadsOp())
    value = e.select(e.icmp(lane, warps, "slt"), partial, e.f32(IDENTITY[type(op)]))
    # A full butterfly again, so that every lane of every warp holds the total.
    return lanes_reduce(e, op, value, WARP)
