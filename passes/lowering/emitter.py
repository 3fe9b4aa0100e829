"""Index arithmetic and structured control flow for the lowering: an `Emitter`
appends ops to a block, folding arithmetic on compile-time indices; the
helpers turn multi-indices into offsets and back, and open `scf.if` and
`scf.for` bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from molten.dialects.molten import Dim

F32 = Float32Type()
INDEX = IndexType()
MAX_GRID_X = 2**31 - 1
WARP = 32

Index = int | SSAValue
"""An index component: a value known at compile time, or computed."""


def element_of(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.element_type


def extent_strides(e: Emitter, shape: Sequence[Dim]) -> list[Index]:
    """The row-major strides of `shape`, named sizes among them (an
    outermost name enters none)."""
    if not shape:
        return []
    result: list[Index] = [1]
    for d in reversed(shape[1:]):
        result.append(e.imul(result[-1], e.extent(d)))
    return list(reversed(result))


class Emitter:
    """Appends ops to a block; folds index arithmetic on compile-time values."""

    def __init__(
        self,
        block: Block,
        constants: dict[tuple, SSAValue],
        entry: Block,
        sizes: dict[str, SSAValue] | None = None,
    ):
        self.block = block
        self.constants = constants
        self.entry = entry
        self.sizes = {} if sizes is None else sizes
        """The kernel's `index` parameters of named dimensions, by name."""

    def nested(self, block: Block) -> Emitter:
        return Emitter(block, self.constants, self.entry, self.sizes)

    def extent(self, d: Dim) -> Index:
        """A dimension's size: `d` itself, or the kernel's parameter of its
        name."""
        if isinstance(d, int):
            return d
        if d not in self.sizes:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: the size of dimension {d} is not a "
                "parameter of this kernel"
            )
        return self.sizes[d]

    def count(self, shape: Sequence[Dim]) -> Index:
        """How many elements `shape` holds (a value where a size is named)."""
        total: Index = 1
        for d in shape:
            total = self.imul(total, self.extent(d))
        return total

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def _constant(self, key: tuple, make: Callable[[], Operation]) -> SSAValue:
        # Constants live at the top of the kernel so every nested region sees them.
        if key not in self.constants:
            op = make()
            first = self.entry.first_op
            if first is None:
                self.entry.add_op(op)
            else:
                self.entry.insert_op_before(op, first)
            self.constants[key] = op.results[0]
        return self.constants[key]

    def index(self, value: Index | str) -> SSAValue:
        """`value` as an index value; a name is its size's parameter (so a
        named dimension serves wherever a size does)."""
        if isinstance(value, SSAValue):
            return value
        if isinstance(value, str):
            return self.index(self.extent(value))
        return self._constant(
            ("index", value), lambda: arith.ConstantOp(IntegerAttr(value, INDEX))
        )

    def true(self) -> SSAValue:
        return self._constant(
            ("i1", True), lambda: arith.ConstantOp(IntegerAttr(1, IntegerType(1)))
        )

    def f32(self, value: float) -> SSAValue:
        key = ("f32", repr(value))
        return self._constant(key, lambda: arith.ConstantOp(FloatAttr(value, F32)))

    def constant(self, value: float, t: Attribute) -> SSAValue:
        """`value` as a scalar of type `t` (f32, an integer type or i1). An
        unsigned one is a signless constant of its bits, bitcast (arith's
        constants are signless)."""
        if isinstance(t, Float32Type):
            return self.f32(value)
        assert isinstance(t, IntegerType)
        key = (str(t), int(value))
        if t.signedness.data != Signedness.UNSIGNED:
            return self._constant(
                key, lambda: arith.ConstantOp(IntegerAttr(int(value), t))
            )
        if key not in self.constants:
            width = t.width.data
            bits = int(value) % 2**width
            signed = bits - 2**width if bits >= 2 ** (width - 1) else bits
            signless = self._constant(
                (f"i{width}", signed),
                lambda: arith.ConstantOp(IntegerAttr(signed, IntegerType(width))),
            )
            cast = arith.BitcastOp(signless, t)
            self.entry.insert_op_after(cast, signless.owner)
            self.constants[key] = cast.result
        return self.constants[key]

    # Index arithmetic, folded when both sides are known.
    def iadd(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if a == 0:
            return b
        if b == 0:
            return a
        return self.add(arith.AddiOp(self.index(a), self.index(b)))

    def isub(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if b == 0:
            return a
        return self.add(arith.SubiOp(self.index(a), self.index(b)))

    def imul(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 0 or b == 0:
            return 0
        if a == 1:
            return b
        if b == 1:
            return a
        return self.add(arith.MuliOp(self.index(a), self.index(b)))

    def idiv(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a // b
        if b == 1:
            return a
        return self.add(arith.DivSIOp(self.index(a), self.index(b)))

    def irem(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a % b
        if b == 1:
            return 0
        return self.add(arith.RemSIOp(self.index(a), self.index(b)))

    def ceil_div(self, a: Index, b: int) -> Index:
        """ceil(a / b) of non-negative a and positive b."""
        if isinstance(a, int):
            return -(-a // b)
        return self.idiv(self.iadd(a, b - 1), b)

    def ixor(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return a ^ b
        if b == 0:
            return a
        return self.add(arith.XOrIOp(self.index(a), self.index(b)))

    def imin(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        return self.add(arith.MinSIOp(self.index(a), self.index(b)))

    def icmp(self, a: Index, b: Index, predicate: str) -> SSAValue:
        return self.add(arith.CmpiOp(self.index(a), self.index(b), predicate))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        if a is b:
            return a
        return self.add(arith.SelectOp(cond, a, b))


def unravel(e: Emitter, linear: Index, shape: Sequence[Dim]) -> list[Index]:
    """The row-major multi-index of `linear` (< the size of `shape`) in `shape`."""
    index: list[Index] = []
    for axis in range(len(shape) - 1, -1, -1):
        d = shape[axis]
        if axis == 0:
            index.append(linear if d != 1 else 0)
            break
        index.append(e.irem(linear, e.extent(d)) if d != 1 else 0)
        linear = e.idiv(linear, e.extent(d))
    return list(reversed(index))


def unravel_vector(
    e: Emitter, base: Index, shape: Sequence[Dim], width: int
) -> list[list[Index]]:
    """The multi-indices of elements `base` ... `base + width - 1` of `shape`,
    where `width` divides the innermost dimension and `base` is a multiple
    of `width`, so that they share all but the innermost component."""
    if not shape:  # a rank-0 tensor: its one element has the empty index
        return [[]]
    first = unravel(e, base, shape)
    return [[*first[:-1], e.iadd(first[-1], i)] for i in range(width)]


def ravel(e: Emitter, index: Sequence[Index], shape: Sequence[Dim]) -> Index:
    linear: Index = 0
    for i, s, d in zip(index, extent_strides(e, shape), shape, strict=True):
        if d != 1:
            linear = e.iadd(linear, e.imul(i, s))
    return linear


def broadcast_index(
    index: Sequence[Index], from_shape: Sequence[Dim], to_shape: Sequence[Dim]
) -> list[Index]:
    """The index of `from_shape` that numpy broadcasting reads for `index`
    of `to_shape` (leading axes dropped, size-1 axes read at 0)."""
    trailing = list(index[len(to_shape) - len(from_shape) :])
    return [0 if d == 1 else i for i, d in zip(trailing, from_shape, strict=True)]


def emit_if(e: Emitter, cond: SSAValue) -> Emitter:
    """Emits `scf.if cond` and returns an emitter for its body; `close_if` ends it."""
    body = Block()
    e.block.add_op(scf.IfOp(cond, [], Region(body)))
    return e.nested(body)


def close_if(inner: Emitter) -> None:
    inner.block.add_op(scf.YieldOp())


def emit_for(e: Emitter, lb: Index, ub: Index, step: Index) -> tuple[Emitter, Block]:
    """Emits `scf.for` (no loop-carried values); returns its body's emitter and
    block, whose first argument is the induction variable."""
    body = Block(arg_types=[INDEX])
    e.block.add_op(scf.ForOp(e.index(lb), e.index(ub), e.index(step), [], Region(body)))
    return e.nested(body), body


def emit_carried_for(
    e: Emitter, lb: Index, ub: Index, carried: Sequence[SSAValue]
) -> tuple[scf.ForOp, Emitter, Block]:
    """Emits `scf.for` from `lb` to `ub` by 1 carrying `carried`; returns the
    loop (its results the carried values after it), its body's emitter and
    block (the induction variable, then the carried values). The caller
    ends the body with `scf.yield` of the next carried values."""
    body = Block(arg_types=[INDEX, *(v.type for v in carried)])
    loop = scf.ForOp(e.index(lb), e.index(ub), e.index(1), list(carried), Region(body))
    e.block.add_op(loop)
    return loop, e.nested(body), body


def both(e: Emitter, a: SSAValue | None, b: SSAValue | None) -> SSAValue | None:
    """a && b, where None stands for a condition known to hold."""
    if a is None or b is None:
        return b if a is None else a
    return e.add(arith.AndIOp(a, b))
