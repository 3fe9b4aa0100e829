"""A kernel body's tensors evaluated per element: `Evaluator.at(value,
index)` is the scalar of `value` at `index`, computed from its operands at
the indices its op maps to (broadcasting drops or zeroes axes; reshape,
transpose, flip, slice, pad and rotate_half remap them), loading inputs and
reusing what was already computed. Floats are f32 scalars (f16/bf16
converted on load and rounded at a cast); integers and bools are scalars
of their own type (`scalars`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Generator, Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import BFloat16Type, Float16Type, FloatAttr, IntegerType
from xdsl.ir import Operation, SSAValue

from molten.dialects import cuda, molten
from molten.dialects.molten import Dim, value_dims
from molten.errors import StaticShapeNeeded, UnsupportedError
from molten.passes.lowering import scalars
from molten.passes.lowering.emitter import (
    F32,
    INDEX,
    Emitter,
    Index,
    broadcast_index,
    element_of,
    emit_carried_for,
    ravel,
    unravel,
)
from molten.passes.lowering.reductions import Accumulator
from molten.passes.lowering.scalars import round_to, scalar_type

__all__ = ["Evaluator", "round_to"]

Request = tuple[SSAValue, Sequence[Index]]
"""A tensor and an index of it whose scalar a rule needs."""
Rule = Generator[Request, SSAValue, SSAValue]
"""How an op's scalar is computed: yields the requests for its operands'
scalars, is sent each, and returns its own."""


def _key(index: Sequence[Index]) -> tuple:
    return tuple(i if isinstance(i, int) else id(i) for i in index)


class Evaluator:
    """Values of a kernel body's tensors at indices, as scalars (f32 for
    floats)."""

    def __init__(
        self,
        e: Emitter,
        pointers: dict[SSAValue, SSAValue],
        known: dict[tuple, SSAValue] | None = None,
        offsets: dict[tuple, Index] | None = None,
    ):
        self.e = e
        self.pointers = pointers
        self.known: dict[tuple, SSAValue] = dict(known or {})
        # (index, dims) -> the offset a reshape unravelled that index from
        self.offsets: dict[tuple, Index] = dict(offsets or {})

    def scoped(self, e: Emitter) -> Evaluator:
        """An evaluator for a nested region: it sees, but does not leak, values."""
        return Evaluator(e, self.pointers, self.known, self.offsets)

    @staticmethod
    def _canonical(value: SSAValue, index: Sequence[Index]) -> list[Index]:
        # An axis of size 1 is only ever read at 0, whatever index reached it.
        return [
            0 if d == 1 else i for i, d in zip(index, value_dims(value), strict=True)
        ]

    def linear(self, index: Sequence[Index], dims: Sequence[Dim]) -> Index:
        """The offset of `index` in a tensor of `dims` stored in order: the
        offset it was unravelled from by a reshape, else computed."""
        found = self.offsets.get((_key(index), tuple(dims)))
        return ravel(self.e, index, dims) if found is None else found

    def define(self, value: SSAValue, index: Sequence[Index], scalar: SSAValue):
        self.known[(value, _key(self._canonical(value, index)))] = scalar

    def at(self, value: SSAValue, index: Sequence[Index]) -> SSAValue:
        """The scalar of `value` at `index`, computed once.

        A rule is a generator that yields the (operand, index) pairs it
        needs and receives their scalars, so that a chain of thousands of
        ops is walked with an explicit stack, not Python's, in the order
        a recursive walk would emit its ops."""
        found = self._lookup(value, index)
        if not isinstance(found, tuple):
            return found
        pending: list[tuple[tuple, SSAValue, Generator]] = []
        key, value, index = found
        rule = self._compute(value, index)
        sent: SSAValue | None = None
        while True:
            try:
                request = rule.send(sent)
            except StopIteration as done:
                scalar = done.value
                # The generated variable is named after the graph's value.
                if scalar.name_hint is None and not isinstance(
                    scalar.owner, arith.ConstantOp
                ):
                    scalar.name_hint = value.name_hint
                self.known[key] = scalar
                if not pending:
                    return scalar
                key, value, rule = pending.pop()
                sent = scalar
                continue
            found = self._lookup(*request)
            if not isinstance(found, tuple):
                sent = found
                continue
            pending.append((key, value, rule))
            key, value, index = found
            rule = self._compute(value, index)
            sent = None

    def _lookup(
        self, value: SSAValue, index: Sequence[Index]
    ) -> SSAValue | tuple[tuple, SSAValue, list[Index]]:
        """The known scalar of `value` at `index`, or what computing it needs."""
        index = self._canonical(value, index)
        key = (value, _key(index))
        if key in self.known:
            return self.known[key]
        return key, value, list(index)

    def load(self, ptr: SSAValue, offset: Index) -> SSAValue:
        assert isinstance(ptr.type, cuda.PointerType)
        loaded = self.e.add(cuda.LoadOp(ptr, self.e.index(offset)))
        if not isinstance(ptr.type.element_type, (Float16Type, BFloat16Type)):
            return loaded
        return self.e.add(arith.ExtFOp(loaded, F32))

    @staticmethod
    def operand(op: Operation, i: int, index: list[Index]) -> Request:
        """The request for operand `i` of `op` where its result is at `index`."""
        operand = op.operands[i]
        return operand, broadcast_index(
            index, value_dims(operand), value_dims(op.results[0])
        )

    def _compute(self, value: SSAValue, index: list[Index]) -> Rule:
        if value in self.pointers:
            return self._load_input(value, index)
        op = value.owner
        assert isinstance(op, Operation)
        rule = _RULES.get(type(op))
        if rule is None:
            raise UnsupportedError(
                f"lower-kernel-to-cuda: {op.name} is not lowered to CUDA yet "
                "(the interpreter runs it)"
            )
        return rule(self, op, index)

    def _load_input(self, value: SSAValue, index: list[Index]) -> Rule:
        offset = self.linear(index, value_dims(value))
        if isinstance(offset, SSAValue) and offset.name_hint is None:
            offset.name_hint = f"{value.name_hint or 'input'}_offset"
        return self.load(self.pointers[value], offset)
        yield  # a rule that needs no operand


def _binary(make: Callable[[Emitter, SSAValue, SSAValue], SSAValue]):
    def rule(ev: Evaluator, op: Operation, index: list[Index]) -> Rule:
        a = yield ev.operand(op, 0, index)
        b = yield ev.operand(op, 1, index)
        return make(ev.e, a, b)

    return rule


def _float_binary(make: Callable[[SSAValue, SSAValue], Operation]):
    return _binary(lambda e, a, b: e.add(make(a, b)))


def _unary(make: Callable[[Evaluator, SSAValue], SSAValue]):
    def rule(ev: Evaluator, op: Operation, index: list[Index]) -> Rule:
        return make(ev, (yield ev.operand(op, 0, index)))

    return rule


def _float_unary(make: Callable[[SSAValue], Operation]):
    return _unary(lambda ev, x: ev.e.add(make(x)))


def _pow(ev: Evaluator, op: molten.PowOp, index: list[Index]) -> Rule:
    base = yield ev.operand(op, 0, index)
    exponent = yield ev.operand(op, 1, index)
    owner = exponent.owner
    if isinstance(owner, arith.ConstantOp) and owner.value == FloatAttr(2.0, F32):
        # x ** 2 (a mean square) as one multiply: powf's general path costs
        # tens of instructions an element.
        return ev.e.add(arith.MulfOp(base, base))
    return ev.e.add(mathd.PowFOp(base, exponent))


def _sigmoid(ev: Evaluator, x: SSAValue) -> SSAValue:
    e = ev.e
    exp = e.add(mathd.ExpOp(e.add(arith.NegfOp(x))))
    return e.add(arith.DivfOp(e.f32(1.0), e.add(arith.AddfOp(e.f32(1.0), exp))))


def _gelu(ev: Evaluator, op: molten.GeluOp, index: list[Index]) -> Rule:
    e = ev.e
    x = yield ev.operand(op, 0, index)
    half_x = e.add(arith.MulfOp(e.f32(0.5), x))
    if op.approximate.data == "tanh":
        cube = e.add(arith.MulfOp(e.add(arith.MulfOp(x, x)), x))
        inner = e.add(arith.AddfOp(x, e.add(arith.MulfOp(e.f32(0.044715), cube))))
        scaled = e.add(arith.MulfOp(e.f32(math.sqrt(2 / math.pi)), inner))
        t = e.add(mathd.TanhOp(scaled))
    else:
        t = e.add(mathd.ErfOp(e.add(arith.MulfOp(x, e.f32(math.sqrt(0.5))))))
    return e.add(arith.MulfOp(half_x, e.add(arith.AddfOp(e.f32(1.0), t))))


def _compare(relation: str):
    return _binary(lambda e, a, b: scalars.compare(e, relation, a, b))


def _logical(make: Callable[[SSAValue, SSAValue], Operation]):
    return _binary(
        lambda e, a, b: e.add(make(scalars.to_bool(e, a), scalars.to_bool(e, b)))
    )


def _where(ev: Evaluator, op: molten.WhereOp, index: list[Index]) -> Rule:
    condition = yield ev.operand(op, 0, index)
    on_true = yield ev.operand(op, 1, index)
    on_false = yield ev.operand(op, 2, index)
    return ev.e.select(condition, on_true, on_false)


def _iota(ev: Evaluator, op: molten.IotaOp, index: list[Index]) -> Rule:
    e = ev.e
    position = index[op.axis.value.data]
    element = element_of(op.result)
    if isinstance(position, int):
        return e.constant(position, scalar_type(element))
    wide = e.add(arith.IndexCastOp(position, IntegerType(64)))
    return scalars.convert(e, wide, IntegerType(64), element)
    yield  # a rule that needs no operand


CHECK_INDICES = "MOLTEN_CHECK_INDICES"
"""Set to 1 when compiling: kernels stop at the first index out of range,
printing it; otherwise they read the nearest row (never out of bounds)."""


def checked_position(
    ev: Evaluator,
    op: molten.TakeOp | molten.GatherOp | molten.ScatterOp,
    raw: SSAValue,
    at: list[Index],
) -> tuple[SSAValue, int]:
    """The index `raw` (read from `op`'s indices at `at`) as an `index`
    along the indexed axis, and that axis's size: where
    MOLTEN_CHECK_INDICES=1 was set, the kernel stops at one out of range."""
    e = ev.e
    size = value_dims(op.input)[op.axis.value.data]
    assert isinstance(size, int)  # the verifier's rule
    if os.environ.get(CHECK_INDICES) == "1":
        where = e.index(ev.linear(at, value_dims(op.indices)))
        e.add(cuda.CheckIndexOp(raw, where, size, f"{op.name} indices"))
    return e.add(arith.IndexCastOp(raw, INDEX)), size


def _position(
    ev: Evaluator, op: molten.TakeOp | molten.GatherOp, raw: SSAValue, at: list[Index]
) -> SSAValue:
    """`checked_position`, clamped into [0, size) (a lookup reads the
    nearest row, never out of bounds)."""
    e = ev.e
    position, size = checked_position(ev, op, raw, at)
    clamped = e.add(arith.MaxSIOp(position, e.index(0)))
    return e.add(arith.MinSIOp(clamped, e.index(size - 1)))


def _take(ev: Evaluator, op: molten.TakeOp, index: list[Index]) -> Rule:
    axis = op.axis.value.data
    rank = len(value_dims(op.indices))
    at = index[axis : axis + rank]
    raw = yield op.indices, at
    position = _position(ev, op, raw, at)
    return (yield op.input, [*index[:axis], position, *index[axis + rank :]])


def _gather(ev: Evaluator, op: molten.GatherOp, index: list[Index]) -> Rule:
    axis = op.axis.value.data
    raw = yield op.indices, index
    source = list(index)
    source[axis] = _position(ev, op, raw, index)
    return (yield op.input, source)


def _constant(ev: Evaluator, op: molten.ConstantOp, index: list[Index]) -> Rule:
    value = op.splat_value()
    if value is None:
        raise UnsupportedError(
            "lower-kernel-to-cuda: constants with more than one distinct value "
            f"({op.result.type}) are not supported in kernels yet; pass the "
            "values as a graph input instead (g.add_input)"
        )
    return ev.e.constant(value, scalar_type(element_of(op.result)))
    yield  # a rule that needs no operand


def _cast(ev: Evaluator, op: molten.CastOp, index: list[Index]) -> Rule:
    x = yield ev.operand(op, 0, index)
    return scalars.convert(ev.e, x, element_of(op.input), element_of(op.result))


def _broadcast_to(ev: Evaluator, op: molten.BroadcastToOp, index: list[Index]):
    return (yield ev.operand(op, 0, index))


def _reshape(ev: Evaluator, op: molten.ReshapeOp, index: list[Index]) -> Rule:
    linear = ev.linear(index, value_dims(op.result))
    if op.input in ev.pointers:
        # A kernel input holds its elements in the reshape's order: read at
        # the linear offset (no division into the input's index, and runs
        # stay provably consecutive for `vectorize`).
        return ev.load(ev.pointers[op.input], linear)
    dims = value_dims(op.input)
    source = Evaluator._canonical(op.input, unravel(ev.e, linear, dims))
    # Whatever reads the input at this index in order reads `linear`.
    ev.offsets[(_key(source), tuple(dims))] = linear
    return (yield op.input, source)


def _transpose(ev: Evaluator, op: molten.TransposeOp, index: list[Index]) -> Rule:
    perm = list(op.permutation.get_values())
    source: list[Index] = [0] * len(perm)
    for result_axis, input_axis in enumerate(perm):
        source[input_axis] = index[result_axis]
    return (yield op.input, source)


def _flip(ev: Evaluator, op: molten.FlipOp, index: list[Index]) -> Rule:
    e = ev.e
    dims = value_dims(op.input)
    source = list(index)
    for axis in op.axes.get_values():
        source[axis] = e.isub(e.isub(e.extent(dims[axis]), 1), index[axis])
    return (yield op.input, source)


def _slice(ev: Evaluator, op: molten.SliceOp, index: list[Index]) -> Rule:
    axis = op.axis.value.data
    source = list(index)
    source[axis] = ev.e.iadd(index[axis], op.start.value.data)
    return (yield op.input, source)


def _zero_of(ev: Evaluator, value: SSAValue) -> SSAValue:
    return scalars.zero(ev.e, scalar_type(element_of(value)))


def _pad(ev: Evaluator, op: molten.PadOp, index: list[Index]) -> Rule:
    """The input where the index falls in it, else 0: read at an index
    clamped into the input (a load never leaves it), then selected."""
    e = ev.e
    axis = op.axis.value.data
    size = value_dims(op.input)[axis]
    assert isinstance(size, int)  # the verifier's rule
    j = e.isub(index[axis], op.before.value.data)
    source = list(index)
    if isinstance(j, int):
        if not 0 <= j < size:
            return _zero_of(ev, op.result)
        source[axis] = j
        return (yield op.input, source)
    inside = e.add(arith.AndIOp(e.icmp(j, 0, "sge"), e.icmp(j, size, "slt")))
    source[axis] = e.select(inside, e.index(j), e.index(0))
    value = yield op.input, source
    return e.select(inside, value, _zero_of(ev, op.result))


def _triangle(ev: Evaluator, op: molten.TriangleOp, index: list[Index]) -> Rule:
    """The input where the index is on the kept side of the diagonal, else 0
    (a select: an inf off the triangle is 0, as in torch)."""
    e = ev.e
    offset = e.isub(index[-1], index[-2])
    if isinstance(offset, int):
        if not op.keeps(offset):
            return _zero_of(ev, op.result)
        return (yield op.input, index)
    k = op.diagonal.value.data
    kept = e.icmp(offset, k, "sge" if op.UPPER else "sle")
    value = yield op.input, index
    return e.select(kept, value, _zero_of(ev, op.result))


def _rotate_half(ev: Evaluator, op: molten.RotateHalfOp, index: list[Index]) -> Rule:
    e = ev.e
    last = value_dims(op.result)[-1]
    if isinstance(last, str):
        raise StaticShapeNeeded(
            f"lower-kernel-to-cuda: {op.name} along a dimension named {last} "
            "(its size known at run time only)"
        )
    half = last // 2
    j = index[-1]
    if isinstance(j, int):
        source = j + half if j < half else j - half
        value = yield op.input, [*index[:-1], source]
        return scalars.negate(e, value) if j < half else value
    first = e.icmp(j, half, "slt")
    source = e.select(first, e.index(e.iadd(j, half)), e.index(e.isub(j, half)))
    value = yield op.input, [*index[:-1], source]
    return e.select(first, scalars.negate(e, value), value)


def _reduction(ev: Evaluator, op: molten.ReductionOp, index: list[Index]) -> Rule:
    """A reduction over one axis, at an index of its result: a loop over
    that axis, its input evaluated at each step (in a scope of its own).
    A kernel that holds the input's elements reduces them better; this is
    for one that does not (a fallback's epilogue)."""
    axes = op.axes.get_values()
    if len(axes) != 1:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {op.name} over axes {list(axes)} cannot be "
            "computed per element (one axis can)"
        )
    (axis,) = axes
    extent = value_dims(op.input)[axis]
    if isinstance(extent, str):
        raise StaticShapeNeeded(
            f"lower-kernel-to-cuda: {op.name} over a dimension named {extent} "
            "(its size known at run time only)"
        )
    outer = list(index)
    if op.keepdim is None:
        outer.insert(axis, 0)
    e = ev.e
    accumulator = Accumulator.of(op)
    # A thread's accumulation (Accumulator): a position starts from the
    # first element, any other from its identity.
    first = 0
    if accumulator.positional:
        at = [0 if i == axis else v for i, v in enumerate(outer)]
        state = accumulator.local_first(e, ev.scoped(e).at(op.input, at), 0)
        first = 1
    else:
        state = accumulator.local_identity(e)
    loop, body_e, body = emit_carried_for(e, first, extent, state)
    at = [body.args[0] if i == axis else v for i, v in enumerate(outer)]
    value = ev.scoped(body_e).at(op.input, at)
    stepped = accumulator.local_step(body_e, list(body.args[1:]), value, body.args[0])
    body.add_op(scf.YieldOp(*stepped))
    result = accumulator.leave(e, accumulator.finish(e, list(loop.results)))
    if isinstance(op, molten.ReduceMeanOp):
        result = e.add(arith.DivfOp(result, e.f32(float(extent))))
    return result
    yield  # its input is evaluated in the loop's scope, not requested


def _causal_mask(ev: Evaluator, op: molten.CausalMaskOp, index: list[Index]) -> Rule:
    e = ev.e
    visible = e.icmp(index[-1], index[-2], "sle")
    return e.select(visible, e.f32(0.0), e.f32(-math.inf))
    yield  # a rule that needs no operand


_RULES: dict[type[Operation], Callable[[Evaluator, Operation, list[Index]], Rule]] = {
    molten.AddOp: _binary(scalars.add),
    molten.SubOp: _binary(scalars.subtract),
    molten.MulOp: _binary(scalars.multiply),
    molten.DivOp: _float_binary(arith.DivfOp),
    molten.MaxOp: _binary(scalars.maximum),
    molten.MinOp: _binary(scalars.minimum),
    molten.PowOp: _pow,
    molten.FloorDivideOp: _binary(scalars.floor_divide),
    molten.RemainderOp: _binary(scalars.remainder),
    molten.FmodOp: _binary(scalars.fmod),
    molten.Atan2Op: _float_binary(mathd.Atan2Op),
    molten.BitwiseAndOp: _binary(lambda e, a, b: e.add(arith.AndIOp(a, b))),
    molten.BitwiseOrOp: _binary(lambda e, a, b: e.add(arith.OrIOp(a, b))),
    molten.BitwiseXorOp: _binary(lambda e, a, b: e.add(arith.XOrIOp(a, b))),
    molten.ShiftLeftOp: _binary(lambda e, a, b: scalars.shift(e, True, a, b)),
    molten.ShiftRightOp: _binary(lambda e, a, b: scalars.shift(e, False, a, b)),
    molten.LogicalAndOp: _logical(arith.AndIOp),
    molten.LogicalOrOp: _logical(arith.OrIOp),
    molten.LogicalXorOp: _logical(arith.XOrIOp),
    molten.EqOp: _compare("eq"),
    molten.NeOp: _compare("ne"),
    molten.LtOp: _compare("lt"),
    molten.LeOp: _compare("le"),
    molten.GtOp: _compare("gt"),
    molten.GeOp: _compare("ge"),
    molten.NegOp: _unary(lambda ev, x: scalars.negate(ev.e, x)),
    molten.AbsOp: _unary(lambda ev, x: scalars.absolute(ev.e, x)),
    molten.SignOp: _unary(lambda ev, x: scalars.sign(ev.e, x)),
    molten.BitwiseNotOp: _unary(lambda ev, x: scalars.bitwise_not(ev.e, x)),
    molten.LogicalNotOp: _unary(
        lambda ev, x: ev.e.add(arith.XOrIOp(scalars.to_bool(ev.e, x), ev.e.true()))
    ),
    molten.IsNanOp: _unary(lambda ev, x: scalars.is_nan(ev.e, x)),
    molten.IsInfOp: _unary(lambda ev, x: scalars.is_inf(ev.e, x)),
    molten.ExpOp: _float_unary(mathd.ExpOp),
    molten.LogOp: _float_unary(mathd.LogOp),
    molten.SqrtOp: _float_unary(mathd.SqrtOp),
    molten.RsqrtOp: _float_unary(mathd.RsqrtOp),
    molten.ReciprocalOp: _unary(lambda ev, x: ev.e.add(arith.DivfOp(ev.e.f32(1.0), x))),
    molten.SquareOp: _unary(lambda ev, x: scalars.multiply(ev.e, x, x)),
    molten.TanhOp: _float_unary(mathd.TanhOp),
    molten.SinOp: _float_unary(mathd.SinOp),
    molten.CosOp: _float_unary(mathd.CosOp),
    molten.TanOp: _float_unary(mathd.TanOp),
    molten.AsinOp: _float_unary(mathd.AsinOp),
    molten.AcosOp: _float_unary(mathd.AcosOp),
    molten.AtanOp: _float_unary(mathd.AtanOp),
    molten.SinhOp: _float_unary(mathd.SinhOp),
    molten.CoshOp: _float_unary(mathd.CoshOp),
    molten.ErfOp: _float_unary(mathd.ErfOp),
    molten.Log1pOp: _float_unary(mathd.Log1pOp),
    molten.Expm1Op: _float_unary(mathd.ExpM1Op),
    molten.Log2Op: _float_unary(mathd.Log2Op),
    molten.Log10Op: _float_unary(mathd.Log10Op),
    molten.Exp2Op: _float_unary(mathd.Exp2Op),
    molten.FloorOp: _float_unary(mathd.FloorOp),
    molten.CeilOp: _float_unary(mathd.CeilOp),
    molten.RoundOp: _float_unary(mathd.RoundEvenOp),
    molten.TruncOp: _float_unary(mathd.TruncOp),
    molten.SigmoidOp: _unary(_sigmoid),
    molten.ReluOp: _unary(
        lambda ev, x: scalars.maximum(ev.e, x, scalars.zero(ev.e, x.type))
    ),
    molten.SiluOp: _unary(lambda ev, x: ev.e.add(arith.MulfOp(x, _sigmoid(ev, x)))),
    molten.GeluOp: _gelu,
    molten.WhereOp: _where,
    molten.IotaOp: _iota,
    molten.TakeOp: _take,
    molten.GatherOp: _gather,
    molten.CastOp: _cast,
    molten.ConstantOp: _constant,
    molten.BroadcastToOp: _broadcast_to,
    molten.ReshapeOp: _reshape,
    molten.TransposeOp: _transpose,
    molten.FlipOp: _flip,
    molten.SliceOp: _slice,
    molten.PadOp: _pad,
    molten.RotateHalfOp: _rotate_half,
    molten.TriuOp: _triangle,
    molten.TrilOp: _triangle,
    molten.CausalMaskOp: _causal_mask,
    molten.ReduceSumOp: _reduction,
    molten.ReduceMaxOp: _reduction,
    molten.ReduceMeanOp: _reduction,
    molten.ArgMaxOp: _reduction,
    molten.ArgMinOp: _reduction,
}
