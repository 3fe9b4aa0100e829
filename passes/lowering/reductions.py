"""Reductions across threads: within aligned groups of a warp's lanes by
shuffles, and across a block through one shared slot per warp; and how a
reduction accumulates its elements (`Accumulator`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda, molten
from molten.errors import UnsupportedError
from molten.passes.lowering import scalars
from molten.passes.lowering.emitter import (
    F32,
    INDEX,
    WARP,
    Emitter,
    Index,
    close_if,
    element_of,
    emit_if,
)

IDENTITY = {
    molten.ReduceSumOp: 0.0,
    molten.ReduceMeanOp: 0.0,
    molten.ReduceMaxOp: -math.inf,
}
"""The identity of a float reduction (an f32 accumulation)."""

I32 = IntegerType(32)
I64 = IntegerType(64)
LOW_BITS = 2**32 - 1
GREATEST_I32 = 2**31 - 1


@dataclass(frozen=True)
class Accumulator:
    """How reduction `op` accumulates its elements, first in each thread
    (its `local` state), then across threads in `type`, from its identity:
    two accumulations `combine`, and the row's value is what `leave` makes
    of the total.

    A sum or max is its own local state, in its element's type (f32 for
    floats). An argmax or argmin holds the best element and its column in
    each thread (a compare and two selects an element), then combines
    across threads one int64 key: the element's order as 32 bits above its
    column's complement, so that the greatest key is the extreme element's,
    the first of equal ones, one max that shuffles as any other reduction
    does. A NaN is the extreme (torch's argmax and argmin both find the
    first NaN), and -0 equals 0. Repeating an element changes no position,
    so runs past a part's end (which repeat its last run) need no mask."""

    op: molten.ReductionOp
    type: Attribute
    element: Attribute
    """The type the input's elements are computed in (f32 for floats)."""

    @staticmethod
    def of(op: molten.ReductionOp) -> Accumulator:
        element = scalars.scalar_type(element_of(op.input))
        if not isinstance(op, molten.ArgReductionOp):
            return Accumulator(op, element, element)
        if isinstance(element, IntegerType) and element.bitwidth > 32:
            raise UnsupportedError(
                f"lower-kernel-to-cuda: {op.name} of {op.input.type}: positions "
                "of 64-bit integers are not lowered to CUDA yet (the "
                "interpreter, molten.interpret, finds them)"
            )
        return Accumulator(op, I64, element)

    @property
    def positional(self) -> bool:
        return isinstance(self.op, molten.ArgReductionOp)

    @property
    def idempotent(self) -> bool:
        """Whether an element seen twice leaves the result as it is."""
        return self.positional

    # -- in a thread -------------------------------------------------------

    @property
    def local_types(self) -> list[Attribute]:
        return [self.element, INDEX] if self.positional else [self.type]

    def local_identity(self, e: Emitter) -> list[SSAValue]:
        assert not self.positional, "a position starts from an element"
        return [self.identity(e)]

    def local_first(self, e: Emitter, value: SSAValue, column: Index) -> list[SSAValue]:
        return [value, e.index(column)] if self.positional else [value]

    def local_step(
        self, e: Emitter, state: list[SSAValue], value: SSAValue, column: Index
    ) -> list[SSAValue]:
        """The state after `value` at `column` (after every column before)."""
        if not self.positional:
            return [self.combine(e, state[0], value)]
        best, at = state
        taken = self._better(e, value, best)
        return [e.select(taken, value, best), e.select(taken, e.index(column), at)]

    def _better(self, e: Emitter, value: SSAValue, best: SSAValue) -> SSAValue:
        """Whether `value`, later in the row, replaces `best`: it is beyond
        it, or a NaN where `best` is not."""
        maximum = isinstance(self.op, molten.ArgMaxOp)
        if not scalars.is_float(value):
            return scalars.compare(e, "gt" if maximum else "lt", value, best)
        beyond = e.add(arith.CmpfOp(value, best, "ugt" if maximum else "ult"))
        settled = e.add(arith.CmpfOp(best, best, "ord"))
        return e.add(arith.AndIOp(beyond, settled))

    def finish(self, e: Emitter, state: list[SSAValue]) -> SSAValue:
        """The thread's accumulation in `type`, for the other threads."""
        if not self.positional:
            return state[0]
        best, at = state
        high = e.add(
            arith.ShLIOp(
                e.add(arith.ExtSIOp(self._order(e, best), I64)), e.constant(32, I64)
            )
        )
        column = e.add(arith.IndexCastOp(at, I64))
        low = e.add(arith.SubiOp(e.constant(LOW_BITS, I64), column))
        return e.add(arith.OrIOp(high, low))

    def _order(self, e: Emitter, value: SSAValue) -> SSAValue:
        """An i32 whose signed order is that of `value` for an argmax, the
        reverse for an argmin; a NaN's the greatest either way."""
        nan = None
        if scalars.is_float(value):
            zero = e.add(arith.CmpfOp(value, e.f32(0.0), "oeq"))
            bits = e.add(arith.BitcastOp(e.select(zero, e.f32(0.0), value), I32))
            # A float's bits order the non-negative ones; flipping all but
            # the sign of the negative ones orders those too.
            negative = e.add(arith.CmpiOp(bits, e.constant(0, I32), "slt"))
            flipped = e.add(arith.XOrIOp(bits, e.constant(GREATEST_I32, I32)))
            order = e.select(negative, flipped, bits)
            nan = e.add(arith.CmpfOp(value, value, "uno"))
        else:
            order = scalars.convert(e, value, value.type, I32)
        if isinstance(self.op, molten.ArgMinOp):
            order = e.add(arith.XOrIOp(order, e.constant(-1, I32)))
        if nan is not None:
            order = e.select(nan, e.constant(GREATEST_I32, I32), order)
        return order

    # -- across threads ----------------------------------------------------

    def identity(self, e: Emitter) -> SSAValue:
        if self.positional:
            return e.constant(-(2**63), I64)
        if self.type == F32:
            return e.f32(IDENTITY[type(self.op)])
        if isinstance(self.op, molten.ReduceMaxOp):
            return scalars.lowest(e, self.type)
        return scalars.zero(e, self.type)

    def combine(self, e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
        if self.positional or isinstance(self.op, molten.ReduceMaxOp):
            return scalars.maximum(e, a, b)
        return scalars.add(e, a, b)

    def leave(self, e: Emitter, total: SSAValue) -> SSAValue:
        if not self.positional:
            return total
        low = e.add(arith.AndIOp(total, e.constant(LOW_BITS, I64)))
        return e.add(arith.SubiOp(e.constant(LOW_BITS, I64), low))


Reduction = (
    Accumulator
    | type[molten.ReductionOp]
    | type[arith.FloatingPointLikeBinaryOperation]
)
"""How values combine: a reduction's accumulator, or a kind where there is
no op to name (attention's running sum, f32), or the arith op that combines
two values (attention's row max, arith.MaxnumfOp: a NaN score reaches the
output through the sum, so the max need not propagate it, and fmaxf has no
branch)."""


def combine(e: Emitter, op: Reduction, a: SSAValue, b: SSAValue) -> SSAValue:
    if isinstance(op, Accumulator):
        return op.combine(e, a, b)
    if issubclass(op, arith.FloatingPointLikeBinaryOperation):
        return e.add(op(a, b))
    if issubclass(op, molten.ReduceMaxOp):
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
    e: Emitter, accumulator: Accumulator, value: SSAValue, tid: SSAValue, lanes: int
) -> SSAValue:
    """The combination of `value` over each group of `lanes` threads (a power
    of two up to 32, or the whole block), held by all of them: shuffles
    within a warp, then one shared slot per warp and shuffles again."""
    value = lanes_reduce(e, accumulator, value, min(lanes, WARP))
    warps = lanes // WARP
    if warps <= 1:
        return value
    slots = e.add(cuda.SharedAllocOp(accumulator.type, warps))
    lane = e.irem(tid, WARP)
    warp = e.idiv(tid, WARP)
    inner = emit_if(e, e.icmp(lane, 0, "eq"))
    inner.add(cuda.StoreOp(value, slots, inner.index(warp)))
    close_if(inner)
    e.add(cuda.SyncThreadsOp())
    partial = e.add(cuda.LoadOp(slots, e.index(e.imin(lane, warps - 1))))
    # The slots are written again for the next row: everyone must have read.
    e.add(cuda.SyncThreadsOp())
    identity = accumulator.identity(e)
    value = e.select(e.icmp(lane, warps, "slt"), partial, identity)
    # A full butterfly again, so that every lane of every warp holds the total.
    return lanes_reduce(e, accumulator, value, WARP)
