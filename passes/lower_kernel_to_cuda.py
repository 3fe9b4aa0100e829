"""`lower-kernel-to-cuda`: kernel.func bodies to cuda kernels, graphs to launchers.

A kernel's tensors become global pointers: its inputs (read only) then its
outputs. Its body, a DAG of molten ops, is evaluated per element: the value
of a tensor at an index is computed from its operands at the indices its op
maps to (broadcasting drops or zeroes axes; reshape, transpose and
rotate_half remap them), loading inputs and reusing what was already
computed. Arithmetic is f32: f16/bf16 are converted on load, rounded at a
molten.cast to them and on store. Every size is static; `index` values are
64-bit.

* pointwise: a grid-stride loop over the elements of the kernel's shape.
* row_reduce: a grid-stride loop over rows, as the schedule says: several
  rows per block, a block per row, or a row split across a group of blocks
  that exchange partial results through global memory (a cooperative
  launch). Each reduction accumulates in f32 over the thread's part, then
  combines across the row's threads: warp shuffles, one shared-memory slot
  per warp, shuffles again, so every thread holds the total. When the
  schedule holds the row in registers the input is read once; otherwise
  the row is walked again for each reduction and for the store.
* gemm, as its #kernel.tiling says: output tiles of the block tile per
  block; on tensor cores (mma.sync m16n8k16 on fragments read by ldmatrix
  from shared memory that `stages` operand tiles flow into by cp.async),
  with a SIMT variant launched for operands not 16-byte aligned; on the
  SIMT cores, each thread accumulating a micro-tile (4x4, 8x8) while f32
  operand tiles pass through two stages of shared memory; or, for a few
  rows (`k_lanes`), as a GEMV that streams B once with K split across the
  block's threads. The
  epilogue (bias, activation, residual, cast) is evaluated on the f32
  accumulators before a single guarded store. Batch axes run along
  blockIdx.z, broadcast like numpy; transposed operands are read through
  their strides.
* attention kernels are not lowered yet (NotImplementedError).

The graph's `func.func` becomes a `cuda.host_func` launching the kernels in
order, with `cuda.alloc`/`cuda.free` buffers for values passed between them
and a `cuda.copy` for an output that is an input or a value returned twice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from molten.dialects import cuda, kernel, molten
from molten.dialects.molten import shape_of
from molten.ir import output_name, sanitize_name
from molten.passes.kernel_schedule import simt_gemm_schedule
from molten.passes.tile import Gemm, tiling_for

F32 = Float32Type()
INDEX = IndexType()
MAX_GRID_X = 2**31 - 1
WARP = 32

Index = int | SSAValue
"""An index component: a value known at compile time, or computed."""
Request = tuple[SSAValue, Sequence[Index]]
"""A tensor and an index of it whose scalar a rule needs."""
Rule = Generator[Request, SSAValue, SSAValue]
"""How an op's scalar is computed: yields the requests for its operands'
scalars, is sent each, and returns its own."""


def element_of(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.element_type


def strides(shape: Sequence[int]) -> list[int]:
    result, step = [], 1
    for d in reversed(shape):
        result.append(step)
        step *= d
    return list(reversed(result))


class Emitter:
    """Appends ops to a block; folds index arithmetic on compile-time values."""

    def __init__(self, block: Block, constants: dict[tuple, SSAValue], entry: Block):
        self.block = block
        self.constants = constants
        self.entry = entry

    def nested(self, block: Block) -> Emitter:
        return Emitter(block, self.constants, self.entry)

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

    def index(self, value: Index) -> SSAValue:
        if isinstance(value, SSAValue):
            return value
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

    def idiv(self, a: Index, b: int) -> Index:
        if isinstance(a, int):
            return a // b
        if b == 1:
            return a
        return self.add(arith.DivSIOp(a, self.index(b)))

    def irem(self, a: Index, b: int) -> Index:
        if isinstance(a, int):
            return a % b
        if b == 1:
            return 0
        return self.add(arith.RemSIOp(a, self.index(b)))

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


def unravel(e: Emitter, linear: Index, shape: Sequence[int]) -> list[Index]:
    """The row-major multi-index of `linear` (< the size of `shape`) in `shape`."""
    index: list[Index] = []
    for axis in range(len(shape) - 1, -1, -1):
        d = shape[axis]
        if axis == 0:
            index.append(linear if d != 1 else 0)
            break
        index.append(e.irem(linear, d) if d != 1 else 0)
        linear = e.idiv(linear, d)
    return list(reversed(index))


def unravel_vector(
    e: Emitter, base: Index, shape: Sequence[int], width: int
) -> list[list[Index]]:
    """The multi-indices of elements `base` ... `base + width - 1` of `shape`,
    where `width` divides the innermost dimension and `base` is a multiple
    of `width`, so that they share all but the innermost component."""
    first = unravel(e, base, shape)
    return [[*first[:-1], e.iadd(first[-1], i)] for i in range(width)]


def ravel(e: Emitter, index: Sequence[Index], shape: Sequence[int]) -> Index:
    linear: Index = 0
    for i, s, d in zip(index, strides(shape), shape, strict=True):
        if d != 1:
            linear = e.iadd(linear, e.imul(i, s))
    return linear


def broadcast_index(
    index: Sequence[Index], from_shape: Sequence[int], to_shape: Sequence[int]
) -> list[Index]:
    """The index of `from_shape` that numpy broadcasting reads for `index`
    of `to_shape` (leading axes dropped, size-1 axes read at 0)."""
    trailing = list(index[len(to_shape) - len(from_shape) :])
    return [0 if d == 1 else i for i, d in zip(trailing, from_shape, strict=True)]


def _key(index: Sequence[Index]) -> tuple:
    return tuple(i if isinstance(i, int) else id(i) for i in index)


def _round(e: Emitter, value: SSAValue, element: Attribute) -> SSAValue:
    """An f32 value rounded to `element`'s precision, still as f32."""
    if isinstance(element, Float32Type):
        return value
    narrow = e.add(arith.TruncFOp(value, element))
    return e.add(arith.ExtFOp(narrow, F32))


class Evaluator:
    """Values of a kernel body's tensors at indices, as f32 scalars."""

    def __init__(
        self,
        e: Emitter,
        pointers: dict[SSAValue, SSAValue],
        known: dict[tuple, SSAValue] | None = None,
    ):
        self.e = e
        self.pointers = pointers
        self.known: dict[tuple, SSAValue] = dict(known or {})

    def scoped(self, e: Emitter) -> Evaluator:
        """An evaluator for a nested region: it sees, but does not leak, values."""
        return Evaluator(e, self.pointers, self.known)

    @staticmethod
    def _canonical(value: SSAValue, index: Sequence[Index]) -> list[Index]:
        # An axis of size 1 is only ever read at 0, whatever index reached it.
        return [0 if d == 1 else i for i, d in zip(index, shape_of(value), strict=True)]

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
        if isinstance(ptr.type.element_type, Float32Type):
            return loaded
        return self.e.add(arith.ExtFOp(loaded, F32))

    @staticmethod
    def operand(op: Operation, i: int, index: list[Index]) -> Request:
        """The request for operand `i` of `op` where its result is at `index`."""
        operand = op.operands[i]
        return operand, broadcast_index(
            index, shape_of(operand), shape_of(op.results[0])
        )

    def _compute(self, value: SSAValue, index: list[Index]) -> Rule:
        if value in self.pointers:
            return self._load_input(value, index)
        op = value.owner
        assert isinstance(op, Operation)
        rule = _RULES.get(type(op))
        if rule is None:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: {op.name} cannot be computed per element"
            )
        return rule(self, op, index)

    def _load_input(self, value: SSAValue, index: list[Index]) -> Rule:
        offset = ravel(self.e, index, shape_of(value))
        if isinstance(offset, SSAValue) and offset.name_hint is None:
            offset.name_hint = f"{value.name_hint or 'input'}_offset"
        return self.load(self.pointers[value], offset)
        yield  # a rule that needs no operand


def _binary(make: Callable[[SSAValue, SSAValue], Operation]):
    def rule(ev: Evaluator, op: Operation, index: list[Index]) -> Rule:
        a = yield ev.operand(op, 0, index)
        b = yield ev.operand(op, 1, index)
        return ev.e.add(make(a, b))

    return rule


def _unary(make: Callable[[Evaluator, SSAValue], SSAValue]):
    def rule(ev: Evaluator, op: Operation, index: list[Index]) -> Rule:
        return make(ev, (yield ev.operand(op, 0, index)))

    return rule


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


def _constant(ev: Evaluator, op: molten.ConstantOp, index: list[Index]) -> Rule:
    value = op.splat_value()
    if value is None:
        raise NotImplementedError(
            "lower-kernel-to-cuda: constants with more than one distinct value "
            f"({op.result.type}) are not supported in kernels yet"
        )
    return ev.e.f32(value)
    yield  # a rule that needs no operand


def _cast(ev: Evaluator, op: molten.CastOp, index: list[Index]) -> Rule:
    return _round(ev.e, (yield ev.operand(op, 0, index)), element_of(op.result))


def _broadcast_to(ev: Evaluator, op: molten.BroadcastToOp, index: list[Index]):
    return (yield ev.operand(op, 0, index))


def _reshape(ev: Evaluator, op: molten.ReshapeOp, index: list[Index]) -> Rule:
    linear = ravel(ev.e, index, shape_of(op.result))
    return (yield op.input, unravel(ev.e, linear, shape_of(op.input)))


def _transpose(ev: Evaluator, op: molten.TransposeOp, index: list[Index]) -> Rule:
    perm = list(op.permutation.get_values())
    source: list[Index] = [0] * len(perm)
    for result_axis, input_axis in enumerate(perm):
        source[input_axis] = index[result_axis]
    return (yield op.input, source)


def _rotate_half(ev: Evaluator, op: molten.RotateHalfOp, index: list[Index]) -> Rule:
    e = ev.e
    half = shape_of(op.result)[-1] // 2
    j = index[-1]
    if isinstance(j, int):
        source = j + half if j < half else j - half
        value = yield op.input, [*index[:-1], source]
        return e.add(arith.NegfOp(value)) if j < half else value
    first = e.icmp(j, half, "slt")
    source = e.select(first, e.index(e.iadd(j, half)), e.index(e.isub(j, half)))
    value = yield op.input, [*index[:-1], source]
    return e.select(first, e.add(arith.NegfOp(value)), value)


def _causal_mask(ev: Evaluator, op: molten.CausalMaskOp, index: list[Index]) -> Rule:
    e = ev.e
    visible = e.icmp(index[-1], index[-2], "sle")
    return e.select(visible, e.f32(0.0), e.f32(-math.inf))
    yield  # a rule that needs no operand


_RULES: dict[type[Operation], Callable[[Evaluator, Operation, list[Index]], Rule]] = {
    molten.AddOp: _binary(arith.AddfOp),
    molten.SubOp: _binary(arith.SubfOp),
    molten.MulOp: _binary(arith.MulfOp),
    molten.DivOp: _binary(arith.DivfOp),
    molten.MaxOp: _binary(arith.MaximumfOp),
    molten.MinOp: _binary(arith.MinimumfOp),
    molten.PowOp: _binary(mathd.PowFOp),
    molten.NegOp: _unary(lambda ev, x: ev.e.add(arith.NegfOp(x))),
    molten.AbsOp: _unary(lambda ev, x: ev.e.add(mathd.AbsFOp(x))),
    molten.ExpOp: _unary(lambda ev, x: ev.e.add(mathd.ExpOp(x))),
    molten.LogOp: _unary(lambda ev, x: ev.e.add(mathd.LogOp(x))),
    molten.SqrtOp: _unary(lambda ev, x: ev.e.add(mathd.SqrtOp(x))),
    molten.RsqrtOp: _unary(lambda ev, x: ev.e.add(mathd.RsqrtOp(x))),
    molten.ReciprocalOp: _unary(lambda ev, x: ev.e.add(arith.DivfOp(ev.e.f32(1.0), x))),
    molten.SquareOp: _unary(lambda ev, x: ev.e.add(arith.MulfOp(x, x))),
    molten.TanhOp: _unary(lambda ev, x: ev.e.add(mathd.TanhOp(x))),
    molten.SigmoidOp: _unary(_sigmoid),
    molten.ReluOp: _unary(lambda ev, x: ev.e.add(arith.MaximumfOp(x, ev.e.f32(0.0)))),
    molten.SiluOp: _unary(lambda ev, x: ev.e.add(arith.MulfOp(x, _sigmoid(ev, x)))),
    molten.GeluOp: _gelu,
    molten.CastOp: _cast,
    molten.ConstantOp: _constant,
    molten.BroadcastToOp: _broadcast_to,
    molten.ReshapeOp: _reshape,
    molten.TransposeOp: _transpose,
    molten.RotateHalfOp: _rotate_half,
    molten.CausalMaskOp: _causal_mask,
}


# --------------------------------------------------------------------------
# Kernels.
# --------------------------------------------------------------------------


@dataclass
class LoweredKernel:
    op: cuda.KernelOp
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cooperative: int | None = None
    """Blocks per group of a cooperative launch (`grid` is then the most)."""
    scratch: tuple[tuple[str, Attribute, int, bool], ...] = ()
    """Buffers (name, element type, size, zeroed) the launcher allocates and
    passes after the outputs."""
    fallback: LoweredKernel | None = None
    """The kernel launched instead when a pointer at a position in `aligned`
    is not aligned to `cuda.VECTOR_BYTES` (it has the same parameters)."""
    aligned: tuple[int, ...] = ()


def _pointer_type(value: SSAValue) -> cuda.PointerType:
    return cuda.PointerType(element_of(value))


def _store(ev: Evaluator, scalar: SSAValue, ptr: SSAValue, offset: Index):
    e = ev.e
    assert isinstance(ptr.type, cuda.PointerType)
    element = ptr.type.element_type
    stored = (
        scalar
        if isinstance(element, Float32Type)
        else e.add(arith.TruncFOp(scalar, element))
    )
    e.add(cuda.StoreOp(stored, ptr, e.index(offset)))


def _if(e: Emitter, cond: SSAValue) -> Emitter:
    """Emits `scf.if cond` and returns an emitter for its body; `_close` ends it."""
    body = Block()
    e.block.add_op(scf.IfOp(cond, [], Region(body)))
    return e.nested(body)


def _close(inner: Emitter) -> None:
    inner.block.add_op(scf.YieldOp())


def _for(e: Emitter, lb: Index, ub: Index, step: Index) -> tuple[Emitter, Block]:
    """Emits `scf.for` (no loop-carried values); returns its body's emitter and
    block, whose first argument is the induction variable."""
    body = Block(arg_types=[INDEX])
    e.block.add_op(scf.ForOp(e.index(lb), e.index(ub), e.index(step), [], Region(body)))
    return e.nested(body), body


def _kernel_shell(
    kfunc: kernel.FuncOp,
) -> tuple[Region, Emitter, dict[SSAValue, SSAValue], list[SSAValue], list[SSAValue]]:
    """The cuda.kernel's region and emitter, the pointer of each input tensor,
    the kernel's output tensors and their pointers."""
    body_block = kfunc.body.block
    yield_op = body_block.last_op
    assert isinstance(yield_op, kernel.YieldOp)
    outputs = list(yield_op.values)
    param_types = [_pointer_type(a) for a in body_block.args] + [
        _pointer_type(v) for v in outputs
    ]
    entry = Block(arg_types=param_types)
    names = [a.name_hint for a in body_block.args] + [
        f"out{i}" if v.name_hint is None else v.name_hint for i, v in enumerate(outputs)
    ]
    for arg, name in zip(entry.args, names, strict=True):
        arg.name_hint = sanitize_name(name) if name else None
    pointers = dict(zip(body_block.args, entry.args, strict=False))
    out_pointers = list(entry.args[len(body_block.args) :])
    return Region(entry), Emitter(entry, {}, entry), pointers, outputs, out_pointers


def _store_output(
    ev: Evaluator, value: SSAValue, ptr: SSAValue, index: list[Index], domain
):
    """Stores `value` at `index` of `domain`; an output smaller than the domain
    (broadcast into it) is stored once, by the indices where it is read at 0."""
    e = ev.e
    shape = shape_of(value)
    source = broadcast_index(index, shape, domain)
    scalar = ev.at(value, source)
    offset = ravel(e, source, shape)
    guards = [
        i
        for i, (d, full) in enumerate(
            zip((1,) * (len(domain) - len(shape)) + shape, domain, strict=True)
        )
        if d == 1 and full != 1 and not isinstance(index[i], int)
    ]
    if not guards:
        _store(ev, scalar, ptr, offset)
        return
    cond = e.icmp(index[guards[0]], 0, "eq")
    for i in guards[1:]:
        cond = e.add(arith.AndIOp(cond, e.icmp(index[i], 0, "eq")))
    inner = _if(e, cond)
    _store(ev.scoped(inner), scalar, ptr, offset)
    _close(inner)


def _checked_vector_width(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, inner: int
):
    """The schedule's vector width, which must divide the innermost dimension
    `inner` that each run of consecutive elements lies along."""
    width = schedule.vector.data
    if inner % width:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: @{kfunc.sym_name.data}'s schedule has vector = "
            f"{width}, which does not divide its innermost dimension {inner}"
        )
    return width


def lower_pointwise(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr
) -> LoweredKernel:
    """A grid-stride loop over runs of `vector` consecutive elements, on a
    grid that gives each thread about `elements_per_thread` elements."""
    region, e, pointers, outputs, out_ptrs = _kernel_shell(kfunc)
    domain = kernel.iteration_domain(outputs)
    n = math.prod(domain)
    block = schedule.block.data
    width = _checked_vector_width(kfunc, schedule, domain[-1])
    # The grid gives each thread about elements_per_thread elements in all.
    runs = n // width
    runs_per_thread = max(1, schedule.elements_per_thread.data // width)
    grid = min(math.ceil(runs / (block * runs_per_thread)), MAX_GRID_X)

    tid = e.add(cuda.ThreadIdxOp())
    bid = e.add(cuda.BlockIdxOp())
    bdim = e.add(cuda.BlockDimOp())
    gdim = e.add(cuda.GridDimOp())
    start = e.iadd(e.imul(bid, bdim), tid)
    step = e.imul(bdim, gdim)
    body, loop_block = _for(e, start, runs, step)
    ev = Evaluator(body, pointers)
    base = body.imul(loop_block.args[0], width)
    for index in unravel_vector(body, base, domain, width):
        for value, ptr in zip(outputs, out_ptrs, strict=True):
            _store_output(ev, value, ptr, index, domain)
    loop_block.add_op(scf.YieldOp())
    e.add(cuda.ReturnOp())
    return LoweredKernel(_kernel_op(kfunc, region, block), (grid, 1, 1), (block, 1, 1))


def _kernel_op(
    kfunc: kernel.FuncOp, region: Region, block: int, min_blocks: int | None = None
) -> cuda.KernelOp:
    fused = [s.data for s in kfunc.fused_ops] if kfunc.fused_ops is not None else []
    params = [a.type for a in region.block.args]
    return cuda.KernelOp(kfunc.sym_name.data, params, block, region, fused, min_blocks)


_IDENTITY = {
    molten.ReduceSumOp: 0.0,
    molten.ReduceMeanOp: 0.0,
    molten.ReduceMaxOp: -math.inf,
}


def _combine(e: Emitter, op: molten.ReductionOp, a: SSAValue, b: SSAValue) -> SSAValue:
    if isinstance(op, molten.ReduceMaxOp):
        return e.add(arith.MaximumfOp(a, b))
    return e.add(arith.AddfOp(a, b))


def _lanes_reduce(
    e: Emitter, op: molten.ReductionOp, value: SSAValue, lanes: int
) -> SSAValue:
    """The combination of `value` over each aligned group of `lanes` (a power
    of two up to 32) consecutive lanes of a warp, held by all of them."""
    offset = lanes // 2
    while offset:
        value = _combine(e, op, value, e.add(cuda.ShflXorOp(value, offset)))
        offset //= 2
    return value


def _block_reduce(
    e: Emitter, op: molten.ReductionOp, value: SSAValue, tid: SSAValue, lanes: int
) -> SSAValue:
    """The combination of `value` over each group of `lanes` threads (a power
    of two up to 32, or the whole block), held by all of them: shuffles
    within a warp, then one shared slot per warp and shuffles again."""
    value = _lanes_reduce(e, op, value, min(lanes, WARP))
    warps = lanes // WARP
    if warps <= 1:
        return value
    slots = e.add(cuda.SharedAllocOp(F32, warps))
    lane = e.irem(tid, WARP)
    warp = e.idiv(tid, WARP)
    inner = _if(e, e.icmp(lane, 0, "eq"))
    inner.add(cuda.StoreOp(value, slots, inner.index(warp)))
    _close(inner)
    e.add(cuda.SyncThreadsOp())
    partial = e.add(cuda.LoadOp(slots, e.index(e.imin(lane, warps - 1))))
    # The slots are written again for the next row: everyone must have read.
    e.add(cuda.SyncThreadsOp())
    value = e.select(e.icmp(lane, warps, "slt"), partial, e.f32(_IDENTITY[type(op)]))
    # A full butterfly again, so that every lane of every warp holds the total.
    return _lanes_reduce(e, op, value, WARP)


@dataclass(frozen=True)
class _Staged:
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


def _depends(value: SSAValue, targets: set[SSAValue]) -> bool:
    """Whether `value` is computed from any of `targets` in the kernel body."""
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if current in targets:
            return True
        if current in seen or not isinstance(current.owner, Operation):
            continue
        seen.add(current)
        stack.extend(current.owner.operands)
    return False


def _rebase_rule(op: molten.ReductionOp, stage: list[_Staged]) -> _Staged | None:
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
    if _depends(sub.lhs, {staged.op.results[0] for staged in stage}):
        return None
    if isinstance(producer, molten.ExpOp) and isinstance(shift, molten.ReduceMaxOp):
        return _Staged(op, "exp", shift)
    if isinstance(producer, molten.SquareOp) and isinstance(shift, molten.ReduceMeanOp):
        return _Staged(op, "square", shift)
    return None


def _exchange_stages(reductions: list[molten.ReductionOp]) -> list[list[_Staged]]:
    """The reductions of a split row grouped into exchanges, in order: a
    reduction joins the current exchange when it does not depend on its
    reductions, or depends on one only through a rescaling rule."""
    stages: list[list[_Staged]] = []
    for op in reductions:
        if stages:
            stage = stages[-1]
            if not _depends(op.input, {staged.op.results[0] for staged in stage}):
                stage.append(_Staged(op))
                continue
            rebased = _rebase_rule(op, stage)
            if rebased is not None:
                stage.append(rebased)
                continue
        stages.append([_Staged(op)])
    return stages


def _row_value(
    e: Emitter,
    op: molten.ReductionOp,
    total: SSAValue,
    inverse_count: Callable[[], SSAValue],
) -> SSAValue:
    """The value of reduction `op` from the combined `total` of its elements."""
    if isinstance(op, molten.ReduceMeanOp):
        total = e.add(arith.MulfOp(total, inverse_count()))
    return _round(e, total, element_of(op.results[0]))


@dataclass(frozen=True)
class _SplitRow:
    """Where a block's part of a split row lies and what the group shares."""

    counters: SSAValue
    partials: SSAValue
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
    staged: _Staged,
    total: SSAValue,
    shift_total: SSAValue,
    shift_value: SSAValue,
    row: _SplitRow,
    part: Index,
) -> SSAValue:
    """A part's block total of a rebased reduction as its share of the row's
    total, given the part's block total of the shift and the row's value."""
    assert staged.shift is not None
    local = _row_value(e, staged.shift, shift_total, lambda: row.inverse_count(e, part))
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


def _exchange(
    e: Emitter,
    stage: list[_Staged],
    totals: list[SSAValue],
    row: _SplitRow,
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
    writer = _if(e, e.icmp(tid, 0, "eq"))
    for r, total in enumerate(totals):
        slot = writer.iadd(base, writer.iadd(row.part, r * split))
        writer.add(cuda.StoreOp(total, row.partials, writer.index(slot)))
    _close(writer)
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
                    row.partials,
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
        value = e.f32(_IDENTITY[type(staged.op)])
        for clamped, valid, loads in parts:
            share = loads[r]
            if staged.shift is not None:
                s = members.index(staged.shift)
                share = _rebased_share(
                    e, staged, share, loads[s], row_values[s], row, clamped
                )
            total = _combine(e, staged.op, value, share)
            value = total if valid is None else e.select(valid, total, value)
        total = _lanes_reduce(e, staged.op, value, WARP)
        row_values.append(_row_value(e, staged.op, total, lambda: e.f32(1.0 / n)))
    return row_values


def lower_row_reduce(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr
) -> LoweredKernel:
    """Rows of the reduced axes: `lanes` = block / rows_per_block threads per
    row (a power of two up to a warp when a block has several rows), or
    `split` blocks per row, each with a part of it. A thread holds its
    elements of the row in registers when lanes * elements_per_thread
    covers its part, and walks the part once per pass otherwise."""
    region, e, pointers, outputs, out_ptrs = _kernel_shell(kfunc)
    name = f"@{kfunc.sym_name.data}"
    body_ops = list(kfunc.body.block.ops)
    reductions = [op for op in body_ops if isinstance(op, molten.ReductionOp)]
    full = shape_of(reductions[0].input)
    k = len(reductions[0].axes.get_values())
    row_shape, col_shape = full[: len(full) - k], full[len(full) - k :]
    rows, n = math.prod(row_shape), math.prod(col_shape)
    block = schedule.block.data
    rows_per_block = schedule.rows_per_block.data
    split = schedule.split.data
    lanes = block // rows_per_block
    if block % WARP:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s row_reduce block of {block} threads is "
            "not a multiple of 32"
        )
    if rows_per_block > 1 and (lanes > WARP or lanes & (lanes - 1)):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s schedule gives {lanes} threads to each "
            f"of {rows_per_block} rows per block; several rows per block take a "
            "power of two of threads each, at most 32"
        )
    if split > 1 and rows_per_block > 1:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s schedule splits rows across blocks "
            "and puts several rows in a block"
        )
    width = _checked_vector_width(kfunc, schedule, col_shape[-1])
    ept = schedule.elements_per_thread.data
    chunk = width * math.ceil(n / (split * width))  # columns of a part
    if (split - 1) * chunk >= n:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s schedule splits rows of {n} elements "
            f"into {split} parts, which leaves a part empty"
        )
    shortest = n - (split - 1) * chunk  # the last part's columns
    span = lanes * width  # columns covered by one run of `width` per thread
    cached = lanes * ept >= chunk

    tid = e.add(cuda.ThreadIdxOp())
    bid = e.add(cuda.BlockIdxOp())
    gdim = e.add(cuda.GridDimOp())
    lane: Index = tid if rows_per_block == 1 else e.irem(tid, lanes)
    split_row: _SplitRow | None = None
    stages = [[_Staged(op)] for op in reductions]
    group: Index = bid
    part: Index = 0
    row_valid: SSAValue | None = None
    if split > 1:
        # Blocks come in groups of `split`, one group per row at a time.
        if rows * split > MAX_GRID_X:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: {name}: {rows} rows of {split} blocks each"
            )
        counters = region.block.insert_arg(
            cuda.PointerType(cuda.COUNTER_TYPE), len(region.block.args)
        )
        partials = region.block.insert_arg(
            cuda.PointerType(F32), len(region.block.args)
        )
        counters.name_hint, partials.name_hint = "group_counters", "group_partials"
        group, part = e.idiv(bid, split), e.irem(bid, split)
        group.name_hint, part.name_hint = "group", "part"
        stages = _exchange_stages(reductions)
        split_row = _SplitRow(
            counters,
            partials,
            group,
            part,
            split,
            chunk,
            shortest,
            max(len(stage) for stage in stages),
        )
        groups = e.add(arith.DivSIOp(gdim, e.index(split)))
        grid = rows * split
        rb, row_block = _for(e, group, rows, groups)
        row = row_block.args[0]
        iteration = rb.add(arith.DivSIOp(rb.index(rb.isub(row, group)), groups))
    elif rows_per_block > 1:
        row_blocks = math.ceil(rows / rows_per_block)
        grid = min(row_blocks, MAX_GRID_X)
        rb, row_block = _for(e, bid, row_blocks, gdim)
        row = rb.iadd(rb.imul(row_block.args[0], rows_per_block), rb.idiv(tid, lanes))
        if rows % rows_per_block:
            # The block's last rows may lie past the end: their threads work on
            # the last row (so that every lane takes part in the shuffles)
            # and store nothing.
            row_valid = rb.icmp(row, rows, "slt")
            row = rb.imin(row, rows - 1)
    else:
        grid = min(rows, MAX_GRID_X)
        rb, row_block = _for(e, bid, rows, gdim)
        row = row_block.args[0]
    if isinstance(row, SSAValue):
        row.name_hint = "row"
    row_index = unravel(rb, row, row_shape)
    per_row = [*row_index, *(0,) * k]
    ev = Evaluator(rb, pointers)
    first = rb.imul(part, chunk)
    end: Index = n if split == 1 else rb.imin(rb.iadd(first, chunk), n)
    start = rb.iadd(first, rb.imul(lane, width))  # the thread's first column

    def run(em: Emitter, j: Index) -> list[list[Index]]:
        """The indices of the `width` elements from column `j` of the row."""
        return [[*row_index, *col] for col in unravel_vector(em, j, col_shape, width)]

    # Runs of a cached part: thread t holds columns first + t * width + c *
    # span, ... (width of them each). Where a run may pass the part's end,
    # the threads past it read the part's last run instead (width divides
    # the part) and discard it. Each run's indices are built once, so that
    # its values are loaded once.
    runs: list[tuple[list[list[Index]], SSAValue | None]] = []
    if cached:
        for c in range(math.ceil(chunk / span)):
            j = rb.iadd(start, c * span)
            if isinstance(j, SSAValue):
                j.name_hint = "col"
            if (c + 1) * span <= shortest:
                runs.append((run(rb, j), None))
            else:
                valid = rb.icmp(j, end, "slt")
                runs.append((run(rb, rb.imin(j, rb.isub(end, width))), valid))

    def block_total(evaluator: Evaluator, op: molten.ReductionOp) -> SSAValue:
        """The block's total of `op` over its lanes' elements of the part."""
        identity = rb.f32(_IDENTITY[type(op)])
        name = f"{op.results[0].name_hint or 'reduction'}_acc"
        if cached:
            acc = identity
            for indices, valid in runs:
                for index in indices:
                    combined = _combine(rb, op, acc, evaluator.at(op.input, index))
                    acc = combined if valid is None else rb.select(valid, combined, acc)
                    acc.name_hint = name
        else:
            loop_body = Block(arg_types=[INDEX, F32])
            loop = scf.ForOp(
                rb.index(start),
                rb.index(end),
                rb.index(span),
                [identity],
                Region(loop_body),
            )
            rb.block.add_op(loop)
            inner = rb.nested(loop_body)
            scoped = evaluator.scoped(inner)
            partial = loop_body.args[1]
            for index in run(inner, loop_body.args[0]):
                partial = _combine(inner, op, partial, scoped.at(op.input, index))
            loop_body.add_op(scf.YieldOp(partial))
            acc = loop.results[0]
            acc.name_hint = name
        return _block_reduce(rb, op, acc, tid, lanes)

    for s, stage in enumerate(stages):
        rebased = any(staged.rule is not None for staged in stage)
        # A rebased reduction is taken with its block's own value of its
        # shift; the row's values are defined after the exchange.
        local = ev.scoped(rb) if rebased else ev
        totals = []
        local_values: dict[molten.ReductionOp, SSAValue] = {}
        for staged in stage:
            totals.append(block_total(local, staged.op))
            if local is not ev:
                assert split_row is not None
                value = _row_value(
                    rb,
                    staged.op,
                    totals[-1],
                    lambda: split_row.inverse_count(rb, part),
                )
                local.define(staged.op.results[0], per_row, value)
                local_values[staged.op] = value
        if split_row is not None:
            exchange = rb.iadd(rb.imul(iteration, len(stages)), s)
            values = _exchange(rb, stage, totals, split_row, tid, exchange, n)
        else:
            values = [
                _row_value(rb, staged.op, total, lambda: rb.f32(1.0 / n))
                for staged, total in zip(stage, totals, strict=True)
            ]
        row_values = {}
        for staged, value in zip(stage, values, strict=True):
            row_values[staged.op] = value
            ev.define(staged.op.results[0], per_row, value)
        if local is ev:
            continue
        # The inputs' loads are kept: the outputs read them again. So are the
        # exponentials of the online softmax, rescaled to the row's maximum:
        # exp(x - c_b) * exp(c_b - C) (none where the part is all -inf).
        rescaled = {}
        for staged in stage:
            if staged.rule != "exp":
                continue
            assert staged.shift is not None
            shift_local = local_values[staged.shift]
            delta = rb.add(arith.SubfOp(shift_local, row_values[staged.shift]))
            empty = rb.add(arith.CmpfOp(shift_local, rb.f32(-math.inf), "oeq"))
            rescaled[staged.op.input] = (rb.add(mathd.ExpOp(delta)), empty)
        for key, scalar in local.known.items():
            if key in ev.known:
                continue
            if key[0] in pointers:
                ev.known[key] = scalar
            elif key[0] in rescaled:
                factor, empty = rescaled[key[0]]
                scaled = rb.add(arith.MulfOp(scalar, factor))
                ev.known[key] = rb.select(empty, rb.f32(0.0), scaled)

    sb = rb if row_valid is None else _if(rb, row_valid)
    stores = ev if row_valid is None else ev.scoped(sb)
    for value, ptr in zip(outputs, out_ptrs, strict=True):
        shape = shape_of(value)
        if shape == full:
            if cached:
                for indices, valid in runs:
                    target = sb if valid is None else _if(sb, valid)
                    scoped = stores if valid is None else stores.scoped(target)
                    for index in indices:
                        scalar = scoped.at(value, index)
                        _store(scoped, scalar, ptr, ravel(target, index, full))
                    if valid is not None:
                        _close(target)
            else:
                lb, loop_block = _for(sb, start, end, span)
                scoped = stores.scoped(lb)
                for index in run(lb, loop_block.args[0]):
                    scalar = scoped.at(value, index)
                    _store(scoped, scalar, ptr, ravel(lb, index, full))
                loop_block.add_op(scf.YieldOp())
        elif shape == (*row_shape, *(1,) * k):
            scalar = stores.at(value, per_row)
            offset = ravel(sb, per_row, shape)
            leader = sb.icmp(lane, 0, "eq")
            if split > 1:
                first_part = sb.icmp(part, 0, "eq")
                leader = sb.add(arith.AndIOp(leader, first_part))
            inner = _if(sb, leader)
            _store(stores.scoped(inner), scalar, ptr, offset)
            _close(inner)
        else:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: a row_reduce output of shape {shape} "
                f"(neither the row shape {full} nor one value per row)"
            )
    if row_valid is not None:
        _close(sb)
    row_block.add_op(scf.YieldOp())
    e.add(cuda.ReturnOp())
    # The blocks of a split row must be resident together, as many as
    # kernel-schedule counts on.
    resident = kernel.SPLIT_THREADS_PER_SM // block
    min_blocks = resident if split > 1 and resident > 1 else None
    lowered = LoweredKernel(
        _kernel_op(kfunc, region, block, min_blocks), (grid, 1, 1), (block, 1, 1)
    )
    if split_row is not None:
        lowered.cooperative = split
        # A counter per group, and two sets of `width` x `split` partial
        # results per group (one exchange's and the next's); there are at
        # most `rows` groups. Only the counters must start at zero.
        lowered.scratch = (
            ("group_counters", cuda.COUNTER_TYPE, rows, True),
            ("group_partials", F32, 2 * rows * split * split_row.width, False),
        )
    return lowered


@dataclass(frozen=True)
class _GemmShape(Gemm):
    """A gemm kernel's matmul, with its sizes, transposes and batch axes."""

    matmul: molten.MatmulOp

    @staticmethod
    def of(kfunc: kernel.FuncOp) -> _GemmShape:
        (mm,) = [op for op in kfunc.body.block.ops if isinstance(op, molten.MatmulOp)]
        for operand in (mm.lhs, mm.rhs):
            if not isinstance(operand, BlockArgument):
                raise NotImplementedError(
                    "lower-kernel-to-cuda: a matmul operand computed inside the "
                    "kernel (prologue fusion) is not supported"
                )
        return _GemmShape(**vars(Gemm.of(mm)), matmul=mm)

    @staticmethod
    def grid(tiling: kernel.TilingAttr) -> tuple[int, int, int]:
        grid = tuple(g.data for g in tiling.grid)
        if grid[1] > 65535 or grid[2] > 65535:
            raise NotImplementedError(f"lower-kernel-to-cuda: a gemm grid of {grid}")
        return grid  # type: ignore[return-value]

    def block_origin(self, e: Emitter, bm: int, bn: int):
        """The first row and column of the block's output tile, the offsets of
        its batch's A and B matrices, and its batch index."""
        tile_n = e.add(cuda.BlockIdxOp(cuda.Dim.X))
        tile_m = e.add(cuda.BlockIdxOp(cuda.Dim.Y))
        batch = e.add(cuda.BlockIdxOp(cuda.Dim.Z))
        batch_index = unravel(e, batch, self.batch_shape) if self.batch_shape else []

        def matrix_base(shape: Sequence[int]) -> Index:
            index = broadcast_index(batch_index, shape[:-2], self.batch_shape)
            return e.imul(ravel(e, index, shape[:-2]), math.prod(shape[-2:]))

        row0, col0 = e.imul(tile_m, bm), e.imul(tile_n, bn)
        row0.name_hint, col0.name_hint = "row0", "col0"
        return (
            row0,
            col0,
            matrix_base(self.a_shape),
            matrix_base(self.b_shape),
            batch_index,
        )

    @property
    def result_shape(self) -> list[int]:
        """The matmul's result: the batch axes, then M and N."""
        return [*self.batch_shape, self.m, self.n]

    def staging_tiles(
        self, outputs: list[SSAValue], out_ptrs: list[SSAValue], staging: _Staging
    ) -> list[_StagingTile]:
        """The outputs the epilogue stores through shared memory, each in one
        of the `staging` buffers (the operand tiles, idle once the K loop is
        done): an output of the matmul's shape, of a free buffer's element
        type, with rows of whole vectors and the block's tile of it fitting
        the buffer (rows padded by one vector, so that the threads writing
        a column spread over the banks). The others are stored directly."""
        bm, bn = staging.tile_shape
        free = list(staging.buffers)
        tiles = []
        for output, ptr in zip(outputs, out_ptrs, strict=True):
            element = element_of(output)
            width = cuda.VECTOR_BYTES // cuda.element_bytes(element)
            if list(shape_of(output)) != self.result_shape or self.n % width:
                continue
            pitch = bn + width
            for buffer in free:
                alloc = buffer.owner
                assert isinstance(alloc, cuda.SharedAllocOp)
                assert isinstance(buffer.type, cuda.PointerType)
                if (
                    buffer.type.element_type == element
                    and alloc.size.value.data >= bm * pitch
                ):
                    free.remove(buffer)
                    tiles.append(_StagingTile(output, ptr, buffer, pitch, width))
                    break
        return tiles

    def epilogue(
        self,
        e: Emitter,
        pointers: dict[SSAValue, SSAValue],
        outputs: list[SSAValue],
        out_ptrs: list[SSAValue],
        batch_index: list[Index],
        accumulators: list[tuple[Index, Index, SSAValue]],
        guard_rows: bool,
        guard_cols: bool,
        staged: Sequence[_StagingTile] = (),
        origin: tuple[Index, Index] = (0, 0),
    ) -> None:
        """The kernel's outputs from each (row, column, f32 accumulator) of this
        thread: the matmul's result rounded to its type, the ops after it
        evaluated on it, each output stored once; rows and columns past the
        matrix skipped where the tiles do not divide it. A `staged` output
        goes to its tile in shared memory instead, at its place relative to
        the block tile's `origin`."""
        mm = self.matmul
        ev = Evaluator(e, pointers)
        tiles = {tile.output: tile for tile in staged}
        for row, col, accumulated in accumulators:
            inside = None
            if guard_rows:
                inside = e.icmp(row, self.m, "slt")
            if guard_cols:
                inside = _and(e, inside, e.icmp(col, self.n, "slt"))
            inner = e if inside is None else _if(e, inside)
            scoped = ev.scoped(inner)
            index = [*batch_index, row, col]
            value = _round(inner, accumulated, element_of(mm.result))
            scoped.define(mm.result, index, value)
            for output, ptr in zip(outputs, out_ptrs, strict=True):
                tile = tiles.get(output)
                if tile is None:
                    _store_output(scoped, output, ptr, index, self.result_shape)
                    continue
                place = inner.iadd(
                    inner.imul(inner.isub(row, origin[0]), tile.pitch),
                    inner.isub(col, origin[1]),
                )
                _store(scoped, scoped.at(output, index), tile.buffer, place)
            if inside is not None:
                _close(inner)

    def store_staged(
        self,
        e: Emitter,
        staged: Sequence[_StagingTile],
        staging: _Staging,
        block: int,
        batch_index: list[Index],
        guard_rows: bool,
        guard_cols: bool,
    ) -> None:
        """Each staged output's block tile from shared memory to the output,
        a vector a thread at a time, consecutive threads along a row: a
        warp writes whole rows at once (the accumulators' own layout would
        write a few bytes of each of eight rows)."""
        bm, bn = staging.tile_shape
        origin = staging.origin
        for tile in staged:
            per_row = bn // tile.width
            vectors = bm * per_row
            # A loop, not unrolled here: its indices would be shared with
            # the copies' (by cse), whose registers then live to the end.
            loop, body = _for(e, 0, -(-vectors // block), 1)
            flat = loop.iadd(staging.tid, loop.imul(body.args[0], block))
            inside = loop.icmp(flat, vectors, "slt") if vectors % block else None
            inner = loop if inside is None else _if(loop, inside)
            r = inner.idiv(flat, per_row)
            c = inner.imul(inner.irem(flat, per_row), tile.width)
            row, col = inner.iadd(origin[0], r), inner.iadd(origin[1], c)
            load = cuda.LoadOp(
                tile.buffer,
                inner.index(inner.iadd(inner.imul(r, tile.pitch), c)),
                tile.width,
            )
            inner.add(load)
            # Rows of whole vectors: a vector starting inside the matrix
            # lies inside it.
            guard = inner.icmp(row, self.m, "slt") if guard_rows else None
            if guard_cols:
                guard = _and(inner, guard, inner.icmp(col, self.n, "slt"))
            stores = inner if guard is None else _if(inner, guard)
            offset = ravel(stores, [*batch_index, row, col], self.result_shape)
            stores.add(cuda.StoreOp(list(load.values), tile.ptr, stores.index(offset)))
            if guard is not None:
                _close(stores)
            if inside is not None:
                _close(inner)
            body.add_op(scf.YieldOp())

    def finish(
        self,
        kfunc: kernel.FuncOp,
        region: Region,
        e: Emitter,
        pointers: dict[SSAValue, SSAValue],
        outputs: list[SSAValue],
        out_ptrs: list[SSAValue],
        batch_index: list[Index],
        accumulators: list[tuple[Index, Index, SSAValue]],
        partial: set[str],
        block: int,
        grid: tuple[int, int, int],
        min_blocks: int = 1,
        staging: _Staging | None = None,
    ) -> LoweredKernel:
        """A tiled gemm kernel's end: the epilogue on this thread's
        accumulators (rows and columns guarded along the partial loops), the
        return, and the kernel, bounded to `min_blocks` blocks per SM: left
        to its heuristics, ptxas caps a gemm's registers for occupancy and
        spills its accumulators. With `staging`, the outputs that fit its
        buffers are stored through them."""
        guard_rows, guard_cols = "m" in partial, "n" in partial
        staged = (
            [] if staging is None else self.staging_tiles(outputs, out_ptrs, staging)
        )
        if staged:
            # Every warp is done with the operand tiles (its copies landed,
            # its tensor-core reads retired) before they are overwritten.
            e.add(cuda.SyncThreadsOp())
        self.epilogue(
            e,
            pointers,
            outputs,
            out_ptrs,
            batch_index,
            accumulators,
            guard_rows,
            guard_cols,
            staged,
            staging.origin if staging is not None else (0, 0),
        )
        if staging is not None and staged:
            e.add(cuda.SyncThreadsOp())
            self.store_staged(
                e, staged, staging, block, batch_index, guard_rows, guard_cols
            )
        e.add(cuda.ReturnOp())
        kernel_op = _kernel_op(kfunc, region, block, min_blocks)
        return LoweredKernel(kernel_op, grid, (block, 1, 1))


@dataclass(frozen=True)
class _StagingTile:
    """A block's tile of one output in shared memory, `pitch` elements a
    row, between the epilogue and the store of `width`-element vectors to
    the output `ptr`."""

    output: SSAValue
    ptr: SSAValue
    buffer: SSAValue
    pitch: int
    width: int


@dataclass(frozen=True)
class _Staging:
    """Shared buffers free for a gemm's epilogue: the block tile's shape and
    first row and column, and the thread's index in the block."""

    buffers: tuple[SSAValue, ...]
    tile_shape: tuple[int, int]
    origin: tuple[Index, Index]
    tid: Index


def _and(e: Emitter, a: SSAValue | None, b: SSAValue | None) -> SSAValue | None:
    """a && b, where None stands for a condition known to hold."""
    if a is None or b is None:
        return b if a is None else a
    return e.add(arith.AndIOp(a, b))


SIMT_SUFFIX = "_simt"
"""The name of a tensor-core gemm's SIMT variant ends so."""
SIMT_A_SKEW = 4
"""Floats a SIMT gemm's A tile pads each of its K rows with, so that the
threads storing it transposed spread over the banks (a multiple of
SIMT_VECTOR, so the rows stay aligned for vector reads)."""
SIMT_VECTOR = 4
"""Elements a SIMT gemm thread reads from a shared tile at once (16 bytes of
f32), and loads of a global run at most."""
SIMT_MIN_BLOCKS = 2
"""Blocks of a SIMT gemm an SM holds at least: ptxas caps its registers (at
128 for 256 threads) so that one block's barrier overlaps another's math;
on the H100 this ran 6% faster than one block an SM (f32, 4096 cubed)."""


def _micro_tile_step(i: int, at_once: int, threads: int) -> int:
    """How far row (or column) i of a SIMT thread's micro-tile lies past its
    first in the block tile: in groups of `at_once` consecutive ones, group
    g starting at at_once * (thread + g * threads)."""
    group, within = divmod(i, at_once)
    return group * threads * at_once + within


def _gemm_offset(
    e: Emitter, row: Index, col: Index, shape: Sequence[int], transposed: bool
) -> Index:
    """Offset of logical element (row, col) of a matrix stored as `shape`'s last
    two axes, read transposed or not."""
    rows, cols = shape[-2:]
    if transposed:
        return e.iadd(e.imul(col, cols), row)
    return e.iadd(e.imul(row, cols), col)


def gemm_tiling(kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr):
    """The kernel's #kernel.tiling where the `tile` pass gave it one for this
    schedule, else the one it would give."""
    if kfunc.tiling is not None and kfunc.schedule == schedule:
        return kfunc.tiling
    return tiling_for(kfunc, schedule)


def lower_gemm(kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr) -> LoweredKernel:
    """A gemm kernel, tiled as its #kernel.tiling says: a GEMV where K is
    split across threads (`k_lanes`), on tensor cores where it gives warp
    tiles, else on the SIMT cores, each thread a fragment of outputs."""
    tiling = gemm_tiling(kfunc, schedule)
    if schedule.k_lanes.data > 1:
        return lower_gemv(kfunc, schedule, tiling)
    if tiling.warp.data:
        if schedule.mma_warps.data > 1:
            lowered = lower_gemm_wgmma(kfunc, tiling)
        else:
            lowered = lower_gemm_mma(kfunc, tiling)
        # cp.async copies 16 aligned bytes, and a staged epilogue stores
        # vectors: for pointers at a lesser alignment the launcher takes the
        # SIMT kernel instead.
        simt = lower_gemm(kfunc, simt_gemm_schedule())
        simt.op.sym_name = StringAttr(kfunc.sym_name.data + SIMT_SUFFIX)
        mm = _GemmShape.of(kfunc).matmul
        args = list(kfunc.body.block.args)
        lowered.fallback = simt
        operands = {args.index(mm.lhs), args.index(mm.rhs)}
        lowered.aligned = tuple(sorted(operands | set(cuda.vector_params(lowered.op))))
        return lowered
    region, e, pointers, outputs, out_ptrs = _kernel_shell(kfunc)
    gemm = _GemmShape.of(kfunc)
    mm = gemm.matmul
    m, n, k = gemm.m, gemm.n, gemm.k
    a_shape, b_shape = gemm.a_shape, gemm.b_shape
    trans_a, trans_b = gemm.transpose_a, gemm.transpose_b
    block = schedule.block.data
    bm, bn, bk = (t.data for t in tiling.block)
    partial = {d.data for d in tiling.partial}
    fm, fn = (f.data for f in tiling.fragment.data[:2])
    # Thread (r, c) holds groups of `rows_at_once` consecutive rows, group g
    # starting at row rows_at_once * (r + g * threads_m) of the tile, and
    # likewise of columns: one vector read of shared memory a group (a
    # warp's reads of a K row of B consecutive, of A broadcast).
    threads_m, threads_n = bm // fm, bn // fn
    rows_at_once, cols_at_once = math.gcd(fm, SIMT_VECTOR), math.gcd(fn, SIMT_VECTOR)
    if (
        threads_m * threads_n != block
        or bm % fm
        or bn % fn
        or (bm * bk) % block
        or (bk * bn) % block
    ):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: gemm tile {bm}x{bn}x{bk} with {block} threads "
            f"(each thread computes {fm}x{fn} outputs)"
        )
    grid = gemm.grid(tiling)
    a_pitch = bm + SIMT_A_SKEW
    a_stage, b_stage = bk * a_pitch, bk * bn
    last_k0 = (math.ceil(k / bk) - 1) * bk

    tid = e.add(cuda.ThreadIdxOp())
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn)
    thread_row = e.idiv(tid, threads_n)
    thread_col = e.irem(tid, threads_n)
    # Two stages: the next K step's tiles are loaded while this one's are used.
    a_tile = e.add(cuda.SharedAllocOp(F32, 2 * a_stage))  # [2][bk][a_pitch]
    b_tile = e.add(cuda.SharedAllocOp(F32, 2 * b_stage))  # [2][bk][bn]
    a_tile.name_hint, b_tile.name_hint = "a_tile", "b_tile"
    zero = e.f32(0.0)

    def load_tile(
        em: Emitter,
        ptr,
        base,
        tile_rows,
        tile_cols,
        shape,
        transposed,
        rows,
        cols,
        dims,
        origin,
    ):
        # The tile_rows x tile_cols tile at `origin`, walked in its storage
        # order: consecutive threads on consecutive runs of the contiguous
        # axis (coalesced), each a run of up to SIMT_VECTOR elements (which
        # `vectorize` can make one load); rows and columns past the matrix
        # (only along the tiling's partial loops) read as zeros.
        loads = Evaluator(em, pointers)
        guard_rows, guard_cols = (d in partial for d in dims)
        outer, inner = (tile_cols, tile_rows) if transposed else (tile_rows, tile_cols)
        run = next(
            w
            for w in (SIMT_VECTOR, 2, 1)
            if inner % w == 0 and (outer * inner // w) % block == 0
        )
        staged = []
        for chunk in range(outer * inner // (run * block)):
            flat = em.iadd(tid, chunk * block)
            o, i0 = (
                em.idiv(flat, inner // run),
                em.imul(em.irem(flat, inner // run), run),
            )
            for j in range(run):
                i = em.iadd(i0, j)
                r, c = (i, o) if transposed else (o, i)
                grow, gcol = em.iadd(origin[0], r), em.iadd(origin[1], c)
                valid = _and(
                    em,
                    em.icmp(grow, rows, "slt") if guard_rows else None,
                    em.icmp(gcol, cols, "slt") if guard_cols else None,
                )
                if guard_rows:
                    grow = em.imin(grow, rows - 1)
                if guard_cols:
                    gcol = em.imin(gcol, cols - 1)
                offset = em.iadd(base, _gemm_offset(em, grow, gcol, shape, transposed))
                value = loads.load(ptr, offset)
                if valid is not None:
                    value = em.select(valid, value, zero)
                staged.append((r, c, value))
        return staged

    def load_tiles(em: Emitter, k0: Index):
        # A's tile: rows m (bm), columns k (bk); B's: rows k (bk), columns n.
        a = load_tile(
            em,
            pointers[mm.lhs],
            a_base,
            bm,
            bk,
            a_shape,
            trans_a,
            m,
            k,
            "mk",
            (row0, k0),
        )
        b = load_tile(
            em,
            pointers[mm.rhs],
            b_base,
            bk,
            bn,
            b_shape,
            trans_b,
            k,
            n,
            "kn",
            (k0, col0),
        )
        return a, b

    def store_tiles(em: Emitter, stage: Index, tiles) -> None:
        a, b = tiles
        a_at, b_at = em.imul(stage, a_stage), em.imul(stage, b_stage)
        for r, c, value in a:  # stored k-major
            slot = em.iadd(a_at, em.iadd(em.imul(c, a_pitch), r))
            em.add(cuda.StoreOp(value, a_tile, em.index(slot)))
        for r, c, value in b:
            slot = em.iadd(b_at, em.iadd(em.imul(r, bn), c))
            em.add(cuda.StoreOp(value, b_tile, em.index(slot)))

    store_tiles(e, 0, load_tiles(e, 0))
    e.add(cuda.SyncThreadsOp())

    count = fm * fn
    loop_body = Block(arg_types=[INDEX, *[F32] * count])
    loop = scf.ForOp(
        e.index(0), e.index(k), e.index(bk), [zero] * count, Region(loop_body)
    )
    e.block.add_op(loop)
    lb = e.nested(loop_body)
    k0 = loop_body.args[0]
    stage = lb.irem(lb.idiv(k0, bk), 2)
    # The last step loads its own tiles again (into the stage no one reads),
    # which keeps the loop free of branches.
    upcoming = load_tiles(lb, lb.imin(lb.iadd(k0, bk), last_k0))
    a_at, b_at = lb.imul(stage, a_stage), lb.imul(stage, b_stage)

    def group_starts(at: Index, thread: Index, size: int, at_once: int, threads: int):
        # Where each group of `at_once` rows (or columns) of this thread's
        # micro-tile starts in a K row of the stage at `at`.
        return [
            lb.iadd(
                at,
                lb.iadd(
                    lb.imul(thread, at_once), _micro_tile_step(i, at_once, threads)
                ),
            )
            for i in range(0, size, at_once)
        ]

    a_rows = group_starts(a_at, thread_row, fm, rows_at_once, threads_m)
    b_cols = group_starts(b_at, thread_col, fn, cols_at_once, threads_n)

    def read(tile: SSAValue, at: Index, width: int) -> Sequence[SSAValue]:
        load = cuda.LoadOp(tile, lb.index(at), width)
        lb.add(load)
        return load.values

    acc = list(loop_body.args[1:])
    for kk in range(bk):
        a = [
            v
            for start in a_rows
            for v in read(a_tile, lb.iadd(start, kk * a_pitch), rows_at_once)
        ]
        b = [
            v
            for start in b_cols
            for v in read(b_tile, lb.iadd(start, kk * bn), cols_at_once)
        ]
        acc = [
            lb.add(arith.AddfOp(acc[i * fn + j], lb.add(arith.MulfOp(a[i], b[j]))))
            for i in range(fm)
            for j in range(fn)
        ]
    store_tiles(lb, lb.isub(1, stage), upcoming)
    lb.add(cuda.SyncThreadsOp())
    loop_body.add_op(scf.YieldOp(*acc))

    first_row = e.iadd(row0, e.imul(thread_row, rows_at_once))
    first_col = e.iadd(col0, e.imul(thread_col, cols_at_once))
    accumulators = [
        (
            e.iadd(first_row, _micro_tile_step(i, rows_at_once, threads_m)),
            e.iadd(first_col, _micro_tile_step(j, cols_at_once, threads_n)),
            loop.results[i * fn + j],
        )
        for i in range(fm)
        for j in range(fn)
    ]
    return gemm.finish(
        kfunc,
        region,
        e,
        pointers,
        outputs,
        out_ptrs,
        batch_index,
        accumulators,
        partial,
        block,
        grid,
        SIMT_MIN_BLOCKS,
    )


def lower_gemv(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, tiling: kernel.TilingAttr
) -> LoweredKernel:
    """A gemm of few rows (a GEMV), B stored [K, N] and read once: thread t of
    a block sums run t % runs (`vector` consecutive columns) of every row of
    the tile over rows k_lane, k_lane + k_lanes, ... of B (k_lane = t /
    runs), `stages` rows of B loaded before they are used; the k_lanes
    partial sums of each output are added by shuffles within a warp, then in
    one fixed order across warps through shared memory, and one thread per
    row and run applies the epilogue and stores the run."""
    region, e, pointers, outputs, out_ptrs = _kernel_shell(kfunc)
    gemm = _GemmShape.of(kfunc)
    mm = gemm.matmul
    name = kfunc.sym_name.data
    m, n, k = gemm.m, gemm.n, gemm.k
    a_shape, trans_a = gemm.a_shape, gemm.transpose_a
    block = schedule.block.data
    lanes, in_flight = schedule.k_lanes.data, schedule.stages.data
    bm, bn, _ = (t.data for t in tiling.block)
    width = tiling.fragment.data[1].data
    runs = bn // width
    warps = block // WARP
    if gemm.transpose_b:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: @{name}: a GEMV schedule with B transposed "
            "(stored [N, K])"
        )
    if n % width:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: @{name}'s schedule has vector = {width}, "
            f"which does not divide N = {n}"
        )
    if WARP % runs or block % WARP or bm * runs > block:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: @{name}: a GEMV of {runs} runs of columns a "
            f"block, {bm} rows and {block} threads (the runs must divide a warp, "
            "the block be whole warps and have a thread per row and run)"
        )
    partial = {d.data for d in tiling.partial}
    grid = gemm.grid(tiling)

    tid = e.add(cuda.ThreadIdxOp())
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn)
    run = e.irem(tid, runs)
    k_lane = e.idiv(tid, runs)
    col = e.iadd(col0, e.imul(run, width))
    # A run past N (the last block's) reads the last run of B, stores nothing.
    b_col = e.imin(col, n - width) if "n" in partial else col
    # Where each row of A starts (row k of it, for A stored transposed);
    # offset(row, kk) = offset(row, 0) + offset(0, kk).
    a_starts = []
    for r in range(bm):
        row = e.iadd(row0, r)
        if "m" in partial:
            row = e.imin(row, m - 1)
        a_starts.append(e.iadd(a_base, _gemm_offset(e, row, 0, a_shape, trans_a)))
    for value, hint in ((run, "run"), (k_lane, "k_lane"), (col, "col")):
        if isinstance(value, SSAValue):
            value.name_hint = hint
    zero = e.f32(0.0)

    def accumulate(em: Emitter, rows_of_b: list[Index], acc, valid=None):
        # All loads first, so that `in_flight` rows of B are in flight at once.
        ev = Evaluator(em, pointers)
        loaded = []
        for kk in rows_of_b:
            b_offset = em.iadd(b_base, em.iadd(em.imul(kk, n), b_col))
            b = [ev.load(pointers[mm.rhs], em.iadd(b_offset, j)) for j in range(width)]
            a_step = _gemm_offset(em, 0, kk, a_shape, trans_a)
            a = [ev.load(pointers[mm.lhs], em.iadd(s, a_step)) for s in a_starts]
            if valid is not None:
                b = [em.select(valid, v, zero) for v in b]
                a = [em.select(valid, v, zero) for v in a]
            loaded.append((a, b))
        for a, b in loaded:
            acc = [
                em.add(
                    arith.AddfOp(acc[r * width + j], em.add(arith.MulfOp(a[r], b[j])))
                )
                for r in range(bm)
                for j in range(width)
            ]
        return acc

    # Rows k_lane + i * lanes of B for i < k // lanes are inside for every
    # thread: a loop over groups of `in_flight`, then the groups' remainder;
    # the last, partial round of K guarded.
    trips = k // lanes
    looped = trips - trips % in_flight
    acc = [zero] * (bm * width)
    if looped:
        body = Block(arg_types=[INDEX, *[F32] * len(acc)])
        loop = scf.ForOp(
            e.index(0), e.index(looped), e.index(in_flight), acc, Region(body)
        )
        e.block.add_op(loop)
        lb = e.nested(body)
        rows_of_b = [
            lb.iadd(lb.imul(lb.iadd(body.args[0], i), lanes), k_lane)
            for i in range(in_flight)
        ]
        body.add_op(scf.YieldOp(*accumulate(lb, rows_of_b, list(body.args[1:]))))
        acc = list(loop.results)
    tail = [e.iadd(i * lanes, k_lane) for i in range(looped, trips)]
    if tail:
        acc = accumulate(e, tail, acc)
    if k % lanes:
        valid = e.icmp(k_lane, k % lanes, "slt")
        last_row = e.imin(e.iadd(trips * lanes, k_lane), k - 1)
        acc = accumulate(e, [last_row], acc, valid)

    # Within a warp: the k_lanes of a run are the lanes that differ in the
    # bits above the run's.
    offset = runs
    while offset < WARP:
        acc = [e.add(arith.AddfOp(v, e.add(cuda.ShflXorOp(v, offset)))) for v in acc]
        offset *= 2
    # Across warps: each warp's sums in its slots, added in warp order.
    outputs_per_warp = bm * bn
    sums = e.add(cuda.SharedAllocOp(F32, warps * outputs_per_warp))
    sums.name_hint = "warp_sums"
    lane = e.irem(tid, WARP)
    warp = e.idiv(tid, WARP)
    writer = _if(e, e.icmp(lane, runs, "slt"))
    slot0 = writer.iadd(writer.imul(warp, outputs_per_warp), writer.imul(lane, width))
    for r in range(bm):
        for j in range(width):
            slot = writer.index(writer.iadd(slot0, r * bn + j))
            writer.add(cuda.StoreOp(acc[r * width + j], sums, slot))
    _close(writer)
    e.add(cuda.SyncThreadsOp())

    reader = _if(e, e.icmp(tid, bm * runs, "slt"))
    row_in_tile = reader.idiv(tid, runs)
    row = reader.iadd(row0, row_in_tile)
    inside = _and(
        reader,
        reader.icmp(row, m, "slt") if "m" in partial else None,
        reader.icmp(col, n, "slt") if "n" in partial else None,
    )
    final = reader if inside is None else _if(reader, inside)
    first = final.iadd(final.imul(row_in_tile, bn), final.imul(run, width))
    accumulators = []
    for j in range(width):
        total = None
        for w in range(warps):
            slot = final.index(final.iadd(first, w * outputs_per_warp + j))
            value = final.add(cuda.LoadOp(sums, slot))
            total = value if total is None else final.add(arith.AddfOp(total, value))
        accumulators.append((row, final.iadd(col, j), total))
    gemm.epilogue(
        final, pointers, outputs, out_ptrs, batch_index, accumulators, False, False
    )
    if inside is not None:
        _close(final)
    _close(reader)
    e.add(cuda.ReturnOp())
    return LoweredKernel(_kernel_op(kfunc, region, block), grid, (block, 1, 1))


MMA_SHAPE = (16, 8, 16)
"""The tensor-core instruction the warps run: mma.sync m16n8k16."""


@dataclass
class _StagedOperand:
    """One matmul operand passing through shared memory: per stage a tile of
    `rows` x `cols` elements in the operand's storage order (cols along its
    contiguous axis), `pitch` elements a row. `k_rows`: the rows are the K
    axis (A transposed, B not), else the columns are."""

    ptr: SSAValue
    base: Index
    buffer: SSAValue
    rows: int
    cols: int
    pitch: int
    k_rows: bool
    outer0: Index
    """The first row (of M or N) of the block's tile."""
    outer_total: int
    k_total: int
    outer_partial: bool
    """Whether the last tile along M (or N) sticks out of the operand."""
    k_partial: bool

    @property
    def row_length(self) -> int:
        """Elements a row of the operand's storage (its contiguous axis)."""
        return self.k_total if not self.k_rows else self.outer_total

    def copies(self, e: Emitter, tid: Index, threads: int, width: int):
        """Per 16-byte copy of this thread: where it goes in a stage, its global
        offset at K = 0, its row or column along K, and whether it lies inside
        the operand along M or N (None: always, the tiles divide it)."""
        per_row = self.cols // width
        result = []
        for copy in range(self.rows * per_row // threads):
            flat = e.iadd(tid, copy * threads)
            row, col = e.idiv(flat, per_row), e.imul(e.irem(flat, per_row), width)
            target = e.iadd(e.imul(row, self.pitch), col)
            outer, k = (col, row) if self.k_rows else (row, col)
            outer = e.iadd(self.outer0, outer)
            inside = None
            if self.outer_partial:
                inside = e.icmp(outer, self.outer_total, "slt")
            if self.k_rows:
                offset = e.iadd(e.imul(k, self.row_length), outer)
            else:
                offset = e.iadd(e.imul(outer, self.row_length), k)
            result.append((target, e.iadd(self.base, offset), k, inside))
        return result

    def issue(self, e: Emitter, copies, stage: Index, k0: Index) -> None:
        """cp.async of the tile at K offset `k0` into `stage` (zeros where it
        lies outside the operand)."""
        _issue_copies(
            e,
            self.buffer,
            self.ptr,
            copies,
            e.imul(stage, self.rows * self.pitch),
            k0,
            self.row_length if self.k_rows else 1,
            self.k_total if self.k_partial else None,
        )


def _issue_copies(
    e: Emitter,
    buffer: SSAValue,
    ptr: SSAValue,
    copies,
    stage_base: Index,
    k0: Index,
    k_step: int,
    k_total: int | None,
    wanted: SSAValue | None = None,
) -> None:
    """cp.async of each (target, offset at K = 0, K, inside) copy at K offset
    `k0` (`k_step` elements a K) to `stage_base` + target of `buffer`; a copy
    past `k_total` (None: K divides), outside the operand or not `wanted`
    writes zeros and reads nothing."""
    for target, offset, k, inside in copies:
        k_inside = None
        if k_total is not None:
            k_inside = e.icmp(e.iadd(k0, k), k_total, "slt")
        valid = _and(e, _and(e, inside, k_inside), wanted)
        source = e.index(e.iadd(offset, e.imul(k0, k_step)))
        if valid is None:
            valid = e.true()
        else:
            source = e.select(valid, source, e.index(0))
        e.add(
            cuda.CpAsyncOp(
                buffer, e.index(e.iadd(stage_base, target)), ptr, source, valid
            )
        )


def lower_gemm_mma(kfunc: kernel.FuncOp, tiling: kernel.TilingAttr) -> LoweredKernel:
    """A gemm on tensor cores (f16 or bf16 operands, f32 accumulators), as
    `tiling` has it: each warp computes a warp tile of the block's tile with
    mma.sync m16n8k16, its fragments read by ldmatrix from shared memory
    (rows padded to the tiling's pitch) that `stages` tiles of each operand
    flow into by cp.async, `stages - 1` ahead of the math."""
    region, e, pointers, outputs, out_ptrs = _kernel_shell(kfunc)
    gemm = _GemmShape.of(kfunc)
    mm = gemm.matmul
    element = element_of(mm.lhs)
    bm, bn, bk = (t.data for t in tiling.block)
    wm, wn = (t.data for t in tiling.warp)
    stages = tiling.stages.data
    partial = {d.data for d in tiling.partial}
    fm, fn, fk = MMA_SHAPE
    warps_n = bn // wn
    block = WARP * (bm // wm) * warps_n
    width = cuda.ASYNC_COPY_BYTES // cuda.element_bytes(element)
    if (
        tuple(f.data for f in tiling.fragment) != MMA_SHAPE
        or wn % (2 * fn)
        or stages < 2
    ):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: a tensor-core gemm tile {bm}x{bn}x{bk} with warp "
            f"tiles {wm}x{wn} (ldmatrix x4 reads two n8 fragments of B) and "
            f"{stages} stages (cp.async needs two or more)"
        )
    grid = gemm.grid(tiling)
    tid = e.add(cuda.ThreadIdxOp())
    tid.name_hint = "tid"
    lane, warp = e.irem(tid, WARP), e.idiv(tid, WARP)
    lane.name_hint, warp.name_hint = "lane", "warp"
    warp_m = e.imul(e.idiv(warp, warps_n), wm)
    warp_n = e.imul(e.irem(warp, warps_n), wn)
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn)

    def staged(ptr, base, footprint, k_rows, outer0, outer_total, outer_dim, name):
        rows, cols, pitch = (f.data for f in footprint)
        if cols % width:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: a tensor-core operand tile of {cols} columns "
                f"(cp.async copies {width} elements)"
            )
        buffer = e.add(cuda.SharedAllocOp(element, stages * rows * pitch))
        buffer.name_hint = name
        return _StagedOperand(
            ptr,
            base,
            buffer,
            rows,
            cols,
            pitch,
            k_rows,
            outer0,
            outer_total,
            gemm.k,
            outer_dim in partial,
            "k" in partial,
        )

    a = staged(
        pointers[mm.lhs],
        a_base,
        tiling.lhs,
        gemm.transpose_a,
        row0,
        gemm.m,
        "m",
        "a_tile",
    )
    b = staged(
        pointers[mm.rhs],
        b_base,
        tiling.rhs,
        not gemm.transpose_b,
        col0,
        gemm.n,
        "n",
        "b_tile",
    )
    a_copies = a.copies(e, tid, block, width)
    b_copies = b.copies(e, tid, block, width)
    k_steps = tiling.k_steps.data

    # Each lane's row address for ldmatrix (x4: lane l reads row l % 8 of
    # matrix l / 8), relative to its warp tile's first fragment.
    quad, eighth = e.idiv(lane, 8), e.irem(lane, 8)
    if a.k_rows:  # [k][m]: transposed into A's row-major fragments
        k_of, m_of = (
            e.iadd(eighth, e.imul(e.idiv(quad, 2), 8)),
            e.imul(e.irem(quad, 2), 8),
        )
    else:  # [m][k]
        m_of, k_of = e.irem(lane, 16), e.imul(e.idiv(lane, 16), 8)
    if b.k_rows:  # [k][n]: transposed into B's column-major fragments
        k_of_b, n_of = (
            e.iadd(eighth, e.imul(e.irem(quad, 2), 8)),
            e.imul(e.idiv(quad, 2), 8),
        )
    else:  # [n][k]
        n_of, k_of_b = (
            e.iadd(eighth, e.imul(e.idiv(quad, 2), 8)),
            e.imul(e.irem(quad, 2), 8),
        )

    def fragment_offset(operand: _StagedOperand, outer: Index, k: Index) -> Index:
        if operand.k_rows:
            return e.iadd(e.imul(k, operand.pitch), outer)
        return e.iadd(e.imul(outer, operand.pitch), k)

    a_lane = fragment_offset(a, e.iadd(warp_m, m_of), k_of)
    b_lane = fragment_offset(b, e.iadd(warp_n, n_of), k_of_b)

    # One commit group per stage, empty for stages past the last K step, so
    # the wait below always counts `stages - 2` groups still in flight.
    for stage in range(stages - 1):
        if stage < k_steps:
            a.issue(e, a_copies, stage, stage * bk)
            b.issue(e, b_copies, stage, stage * bk)
        e.add(cuda.CpAsyncCommitOp())

    m_frags, n_frags = wm // fm, wn // fn
    count = m_frags * n_frags * 4
    loop_body = Block(arg_types=[INDEX, *[F32] * count])
    loop = scf.ForOp(
        e.index(0),
        e.index(k_steps),
        e.index(1),
        [e.f32(0.0)] * count,
        Region(loop_body),
    )
    e.block.add_op(loop)
    lb = e.nested(loop_body)
    kt = loop_body.args[0]
    kt.name_hint = "k_tile"
    lb.add(cuda.CpAsyncWaitOp(stages - 2))
    lb.add(cuda.SyncThreadsOp())
    # The tile `stages - 1` ahead goes into the stage read last iteration,
    # which every thread has finished with (the barrier above).
    ahead = lb.iadd(kt, stages - 1)
    fetch = _if(lb, lb.icmp(ahead, k_steps, "slt"))
    a.issue(fetch, a_copies, fetch.irem(ahead, stages), fetch.imul(ahead, bk))
    b.issue(fetch, b_copies, fetch.irem(ahead, stages), fetch.imul(ahead, bk))
    _close(fetch)
    lb.add(cuda.CpAsyncCommitOp())
    stage = lb.irem(kt, stages)
    a_stage = lb.iadd(lb.imul(stage, a.rows * a.pitch), a_lane)
    b_stage = lb.iadd(lb.imul(stage, b.rows * b.pitch), b_lane)
    acc = list(loop_body.args[1:])
    for kk in range(0, bk, fk):
        a_frags = [
            lb.add(
                cuda.LdMatrixOp(
                    a.buffer,
                    lb.index(lb.iadd(a_stage, fragment_offset_const(a, i * fm, kk))),
                    trans=a.k_rows,
                )
            )
            for i in range(m_frags)
        ]
        b_frags = [
            lb.add(
                cuda.LdMatrixOp(
                    b.buffer,
                    lb.index(
                        lb.iadd(b_stage, fragment_offset_const(b, j * 2 * fn, kk))
                    ),
                    trans=b.k_rows,
                )
            )
            for j in range(n_frags // 2)
        ]
        for i in range(m_frags):
            for j in range(n_frags):
                pair = b_frags[j // 2].owner.results
                first = 2 * (j % 2)
                at = (i * n_frags + j) * 4
                mma = cuda.MmaOp(
                    element,
                    a_frags[i].owner.results,
                    pair[first : first + 2],
                    acc[at : at + 4],
                )
                lb.add(mma)
                acc[at : at + 4] = mma.results
    loop_body.add_op(scf.YieldOp(*acc))
    e.add(cuda.CpAsyncWaitOp(0))

    # Lane l holds rows l / 4 and l / 4 + 8 of each fragment, at columns
    # 2 (l % 4) and 2 (l % 4) + 1.
    lane_row = e.iadd(e.iadd(row0, warp_m), e.idiv(lane, 4))
    lane_col = e.iadd(e.iadd(col0, warp_n), e.imul(e.irem(lane, 4), 2))
    accumulators = [
        (
            e.iadd(lane_row, i * fm + (r // 2) * 8),
            e.iadd(lane_col, j * fn + r % 2),
            loop.results[(i * n_frags + j) * 4 + r],
        )
        for i in range(m_frags)
        for j in range(n_frags)
        for r in range(4)
    ]
    return gemm.finish(
        kfunc,
        region,
        e,
        pointers,
        outputs,
        out_ptrs,
        batch_index,
        accumulators,
        partial,
        block,
        grid,
        staging=_Staging((b.buffer, a.buffer), (bm, bn), (row0, col0), tid),
    )


@dataclass
class _SwizzledOperand:
    """One matmul operand passing through shared memory for wgmma: per stage
    a tile of `outer` rows (of M or N) by SWIZZLE_ELEMENTS of K, in 128-byte
    swizzled rows. K-major (`k_rows` false: the operand stored [outer][K]):
    a row per row of the tile. MN-major (stored [K][outer]): blocks of 64
    columns, each a row per K."""

    ptr: SSAValue
    base: Index
    buffer: SSAValue
    outer: int
    k_rows: bool
    outer0: Index
    outer_total: int
    k_total: int
    outer_partial: bool
    k_partial: bool

    @property
    def tile(self) -> int:
        """Elements of one stage's tile."""
        return self.outer * SWIZZLE_ELEMENTS

    def _row_start(self, e: Emitter, outer: Index, k: Index) -> Index:
        """Where in a stage the swizzled row holding (outer, k) starts: row
        `outer` of a K-major tile; row k of the 64-column block of `outer`
        of an MN-major one."""
        if not self.k_rows:
            return e.imul(outer, SWIZZLE_ELEMENTS)
        return _block_row_start(e, e.idiv(outer, SWIZZLE_ELEMENTS), k)

    def _place(self, e: Emitter, outer: Index, k: Index) -> Index:
        """Where the 16-byte chunk at (outer, k) of the tile lies in a stage:
        chunk c of a swizzled row r at c ^ (r % 8)."""
        chunk = CHUNK_ELEMENTS
        if self.k_rows:
            block, column = (
                e.idiv(outer, SWIZZLE_ELEMENTS),
                e.irem(outer, SWIZZLE_ELEMENTS),
            )
            row_start = _block_row_start(e, block, k)
            row, c = k, e.idiv(column, chunk)
        else:
            row_start = self._row_start(e, outer, k)
            row, c = outer, e.idiv(k, chunk)
        swizzled = e.ixor(c, e.irem(row, SWIZZLE_ROWS))
        return e.iadd(row_start, e.imul(swizzled, chunk))

    def copies(self, e: Emitter, tid: Index, threads: int):
        """Per 16-byte copy of this thread: where it goes in a stage, its global
        offset at K = 0, its K within the tile, and whether it lies inside the
        operand along M or N (None: always)."""
        per_row = (self.outer if self.k_rows else SWIZZLE_ELEMENTS) // CHUNK_ELEMENTS
        rows = SWIZZLE_ELEMENTS if self.k_rows else self.outer
        result = []
        for copy in range(rows * per_row // threads):
            flat = e.iadd(tid, copy * threads)
            row, col = (
                e.idiv(flat, per_row),
                e.imul(e.irem(flat, per_row), CHUNK_ELEMENTS),
            )
            outer, k = (col, row) if self.k_rows else (row, col)
            target = self._place(e, outer, k)
            outer = e.iadd(self.outer0, outer)
            inside = None
            if self.outer_partial:
                inside = e.icmp(outer, self.outer_total, "slt")
            if self.k_rows:
                offset = e.iadd(e.imul(k, self.outer_total), outer)
            else:
                offset = e.iadd(e.imul(outer, self.k_total), k)
            result.append((target, e.iadd(self.base, offset), k, inside))
        return result

    def issue(
        self, e: Emitter, copies, stage: Index, k0: Index, wanted: SSAValue | None
    ) -> None:
        """cp.async of the tile at K offset `k0` into `stage`: zeros where it
        lies outside the operand or where `wanted` (None: true) is false.
        No branch: the copies of a step past the last are issued, empty."""
        _issue_copies(
            e,
            self.buffer,
            self.ptr,
            copies,
            e.imul(stage, self.tile),
            k0,
            self.outer_total if self.k_rows else 1,
            self.k_total if self.k_partial else None,
            wanted,
        )

    def descriptor(self, e: Emitter, stage: Index, outer: Index, k: int) -> SSAValue:
        """The wgmma descriptor of the sub-tile from row (or column) `outer`
        (a multiple of 8, of 64 when MN-major) and K offset `k` (a multiple
        of 16) of a stage."""
        if self.k_rows:
            start = self._row_start(e, outer, k)
            leading = SWIZZLE_ELEMENTS * SWIZZLE_ELEMENTS * 2
        else:
            start = e.iadd(self._row_start(e, outer, 0), k)
            leading = cuda.ASYNC_COPY_BYTES  # unused by K-major tiles
        index = e.index(e.iadd(e.imul(stage, self.tile), start))
        return e.add(
            cuda.WgmmaDescriptorOp(
                self.buffer, index, leading, SWIZZLE_ROWS * cuda.SWIZZLE_BYTES
            )
        )


SWIZZLE_ELEMENTS = cuda.SWIZZLE_BYTES // 2
"""16-bit elements in one swizzled row: a wgmma gemm's K step."""
SWIZZLE_ROWS = cuda.SWIZZLE_ALIGNMENT // cuda.SWIZZLE_BYTES
"""Rows of a swizzle atom (eight)."""
CHUNK_ELEMENTS = cuda.ASYNC_COPY_BYTES // 2
"""16-bit elements in one 16-byte chunk, the unit the swizzle permutes."""
WARPGROUP = 4 * WARP


def _block_row_start(e: Emitter, block: Index, k: Index) -> Index:
    """Where row k of 64-column block `block` of an MN-major swizzled tile
    starts in a stage (each block 64 rows of K by 64 elements)."""
    return e.iadd(
        e.imul(block, SWIZZLE_ELEMENTS * SWIZZLE_ELEMENTS),
        e.imul(k, SWIZZLE_ELEMENTS),
    )


def lower_gemm_wgmma(kfunc: kernel.FuncOp, tiling: kernel.TilingAttr) -> LoweredKernel:
    """A gemm on sm_90a's warpgroup tensor cores (f16 or bf16 operands, f32
    accumulators), as `tiling` has it: each warpgroup computes a 64 x N warp
    tile with wgmma.mma_async m64nNk16 on operand tiles in 128-byte swizzled
    shared memory, which `stages` tiles of each operand flow into by
    cp.async, `stages - 2` ahead of the math: one stage is read by the
    wgmmas issued now and one by the previous step's, which may still run.
    The K loop has no branch (ptxas serializes wgmmas across one)."""
    region, e, pointers, outputs, out_ptrs = _kernel_shell(kfunc)
    gemm = _GemmShape.of(kfunc)
    mm = gemm.matmul
    element = element_of(mm.lhs)
    bm, bn, bk = (t.data for t in tiling.block)
    wm, wn = (t.data for t in tiling.warp)
    stages = tiling.stages.data
    partial = {d.data for d in tiling.partial}
    groups_n = bn // wn
    block = WARPGROUP * (bm // wm) * groups_n
    ahead = stages - 2
    a_k_rows, b_k_rows = gemm.transpose_a, not gemm.transpose_b
    if (
        tuple(f.data for f in tiling.fragment) != (cuda.WGMMA_M, wn, cuda.WGMMA_K)
        or bk != SWIZZLE_ELEMENTS
        or ahead < 1
        or (a_k_rows and (wm % SWIZZLE_ELEMENTS or bm % SWIZZLE_ELEMENTS))
        or (b_k_rows and (wn % SWIZZLE_ELEMENTS or bn % SWIZZLE_ELEMENTS))
        or (bm * bk // CHUNK_ELEMENTS) % block
        or (bn * bk // CHUNK_ELEMENTS) % block
    ):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: a wgmma gemm tile {bm}x{bn}x{bk} with warpgroup "
            f"tiles {wm}x{wn} and {stages} stages (the K step is one swizzled row "
            f"of {SWIZZLE_ELEMENTS}, an MN-major operand's tiles whole 64-column "
            "blocks, three or more stages, copies shared evenly by the threads)"
        )
    grid = gemm.grid(tiling)
    tid = e.add(cuda.ThreadIdxOp())
    tid.name_hint = "tid"
    group, in_group = e.idiv(tid, WARPGROUP), e.irem(tid, WARPGROUP)
    group.name_hint = "warpgroup"
    group_m = e.imul(e.idiv(group, groups_n), wm)
    group_n = e.imul(e.irem(group, groups_n), wn)
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn)

    def swizzled(ptr, base, outer, k_rows, outer0, outer_total, dim, name):
        buffer = e.add(cuda.SharedAllocOp(element, stages * outer * bk))
        buffer.name_hint = name
        return _SwizzledOperand(
            ptr,
            base,
            buffer,
            outer,
            k_rows,
            outer0,
            outer_total,
            gemm.k,
            dim in partial,
            "k" in partial,
        )

    a = swizzled(pointers[mm.lhs], a_base, bm, a_k_rows, row0, gemm.m, "m", "a_tile")
    b = swizzled(pointers[mm.rhs], b_base, bn, b_k_rows, col0, gemm.n, "n", "b_tile")
    a_copies = a.copies(e, tid, block)
    b_copies = b.copies(e, tid, block)
    k_steps = tiling.k_steps.data

    # One commit group per step, empty past the last K step, so the wait
    # below always leaves `ahead - 1` groups in flight.
    for step in range(ahead):
        wanted = (
            None
            if step < k_steps
            else e.add(arith.ConstantOp(IntegerAttr(0, IntegerType(1))))
        )
        a.issue(e, a_copies, step, step * bk, wanted)
        b.issue(e, b_copies, step, step * bk, wanted)
        e.add(cuda.CpAsyncCommitOp())

    def step(em: Emitter, kt: Index, acc: list[SSAValue], last: bool):
        """One K step: wait for its tiles, fetch the tiles `ahead` steps on
        into the stage read two steps ago, issue its wgmmas; the accumulators
        after a wait for all but this step's group (for all, `last`)."""
        em.add(cuda.CpAsyncWaitOp(0 if last else ahead - 1))
        # Every thread's copies of this step are in shared memory, and
        # visible to the tensor cores' reads; every warpgroup is past the
        # wait of the step before, so the stage read two steps ago is free.
        em.add(cuda.FenceProxyAsyncOp())
        em.add(cuda.SyncThreadsOp())
        if not last:
            upcoming = em.iadd(kt, ahead)
            wanted = em.icmp(upcoming, k_steps, "slt")
            stage_ahead, k0 = em.irem(upcoming, stages), em.imul(upcoming, bk)
            a.issue(em, a_copies, stage_ahead, k0, wanted)
            b.issue(em, b_copies, stage_ahead, k0, wanted)
            em.add(cuda.CpAsyncCommitOp())
        em.add(cuda.WgmmaFenceOp())
        stage = em.irem(kt, stages)
        for kk in range(0, bk, cuda.WGMMA_K):
            da = a.descriptor(em, stage, group_m, kk)
            db = b.descriptor(em, stage, group_n, kk)
            mma = cuda.WgmmaOp(element, da, db, acc, trans_a=a.k_rows, trans_b=b.k_rows)
            em.add(mma)
            acc = list(mma.results)
        em.add(cuda.WgmmaCommitOp())
        wait = cuda.WgmmaWaitOp(0 if last else 1, acc)
        em.add(wait)
        return list(wait.results)

    # All K steps but the last in a loop, one wgmma group left in flight
    # across its back edge; the last step after it, waiting for all. (With
    # the loop's group still in flight into the epilogue, ptxas serializes
    # the wgmmas where the epilogue converts accumulators.)
    count = wn // 2
    acc = [e.f32(0.0)] * count
    if k_steps > 1:
        loop_body = Block(arg_types=[INDEX, *[F32] * count])
        loop = scf.ForOp(
            e.index(0), e.index(k_steps - 1), e.index(1), acc, Region(loop_body)
        )
        e.block.add_op(loop)
        kt = loop_body.args[0]
        kt.name_hint = "k_tile"
        carried = step(e.nested(loop_body), kt, list(loop_body.args[1:]), False)
        loop_body.add_op(scf.YieldOp(*carried))
        acc = list(loop.results)
    done = step(e, k_steps - 1, acc, True)

    # Accumulator j of thread t of a warpgroup: row 16 (t / 32) + (t % 32) / 4
    # + 8 ((j / 2) % 2), column 8 (j / 4) + 2 (t % 4) + j % 2.
    warp, lane = e.idiv(in_group, WARP), e.irem(in_group, WARP)
    lane_row = e.iadd(e.iadd(row0, group_m), e.iadd(e.imul(warp, 16), e.idiv(lane, 4)))
    lane_col = e.iadd(e.iadd(col0, group_n), e.imul(e.irem(lane, 4), 2))
    accumulators = [
        (
            e.iadd(lane_row, 8 * ((j // 2) % 2)),
            e.iadd(lane_col, 8 * (j // 4) + j % 2),
            done[j],
        )
        for j in range(count)
    ]
    return gemm.finish(
        kfunc,
        region,
        e,
        pointers,
        outputs,
        out_ptrs,
        batch_index,
        accumulators,
        partial,
        block,
        grid,
        staging=_Staging((b.buffer, a.buffer), (bm, bn), (row0, col0), tid),
    )


def fragment_offset_const(operand: _StagedOperand, outer: int, k: int) -> int:
    """The offset in a stage of the fragment at (outer, k) from a lane's own."""
    if operand.k_rows:
        return k * operand.pitch + outer
    return outer * operand.pitch + k


LOWERINGS = {
    kernel.KernelKind.POINTWISE: lower_pointwise,
    kernel.KernelKind.ROW_REDUCE: lower_row_reduce,
    kernel.KernelKind.GEMM: lower_gemm,
}


def lower_kernel(kfunc: kernel.FuncOp) -> LoweredKernel:
    kind = kfunc.kind.data
    if kfunc.schedule is None:
        raise PassFailedException(
            f"lower-kernel-to-cuda: @{kfunc.sym_name.data} has no schedule; run "
            "kernel-schedule first"
        )
    if kind not in LOWERINGS:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {kind.value} kernels (@{kfunc.sym_name.data}) "
            "are not lowered yet"
        )
    return LOWERINGS[kind](kfunc, kfunc.schedule)


# --------------------------------------------------------------------------
# Host launchers.
# --------------------------------------------------------------------------


def lower_graph(
    graph: func.FuncOp, kernels: dict[str, LoweredKernel]
) -> cuda.HostFuncOp:
    block = graph.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    returned = list(ret.arguments)
    names = [a.name_hint or f"in{i}" for i, a in enumerate(block.args)]
    out_names = [
        output_name(graph, i) or value.name_hint or f"out{i}"
        for i, value in enumerate(returned)
    ]
    params = [_pointer_type(a) for a in block.args] + [
        _pointer_type(v) for v in returned
    ]
    entry = Block(arg_types=params)
    for arg, name in zip(entry.args, names + out_names, strict=True):
        arg.name_hint = sanitize_name(name)
    buffers: dict[SSAValue, SSAValue] = dict(zip(block.args, entry.args, strict=False))
    # An output that is an input, or a value returned again, is copied into
    # its output buffer after the kernels.
    copies: list[tuple[SSAValue, SSAValue]] = []
    for value, arg in zip(returned, entry.args[len(block.args) :], strict=True):
        if value in buffers:
            copies.append((arg, value))
        else:
            buffers[value] = arg
    temporaries: list[SSAValue] = []
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            break
        if not isinstance(op, kernel.LaunchOp):
            raise NotImplementedError(
                f"lower-kernel-to-cuda: {op.name} at the graph level; run the "
                "fusion passes and kernel-outline first"
            )
        for result in op.results:
            if result not in buffers:
                alloc = cuda.AllocOp(element_of(result), math.prod(shape_of(result)))
                alloc.result.name_hint = result.name_hint
                entry.add_op(alloc)
                buffers[result] = alloc.result
                temporaries.append(alloc.result)
        lowered = kernels[op.callee.string_value()]
        args = [buffers[v] for v in (*op.inputs, *op.results)]
        for name, element, size, zeroed in lowered.scratch:
            alloc = cuda.AllocOp(element, size)
            alloc.result.name_hint = name
            entry.add_op(alloc)
            if zeroed:
                entry.add_op(cuda.ZeroOp(alloc.result, size))
            args.append(alloc.result)
            temporaries.append(alloc.result)
        launch = cuda.LaunchOp(
            op.callee.string_value(), lowered.grid, lowered.block, args
        )
        if lowered.cooperative is not None:
            launch.cooperative = DenseArrayBase.from_list(i64, [lowered.cooperative])
        if lowered.fallback is not None:
            fallback = lowered.fallback
            launch.aligned = DenseArrayBase.from_list(i64, list(lowered.aligned))
            launch.fallback = SymbolRefAttr(fallback.op.sym_name.data)
            if (fallback.grid, fallback.block) != (lowered.grid, lowered.block):
                launch.fallback_grid = DenseArrayBase.from_list(i64, fallback.grid)
                launch.fallback_block = DenseArrayBase.from_list(i64, fallback.block)
        entry.add_op(launch)
    for target, value in copies:
        entry.add_op(cuda.CopyOp(target, buffers[value], math.prod(shape_of(value))))
    for buffer in temporaries:
        entry.add_op(cuda.FreeOp(buffer))
    entry.add_op(cuda.ReturnOp())
    return cuda.HostFuncOp(graph.sym_name.data, params, len(returned), Region(entry))


@dataclass(frozen=True)
class LowerKernelToCuda(ModulePass):
    """Lowers kernel.func bodies to cuda kernels and graphs to cuda launchers."""

    name = "lower-kernel-to-cuda"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = {
            k.sym_name.data: lower_kernel(k)
            for k in op.ops
            if isinstance(k, kernel.FuncOp)
        }
        for graph in [g for g in op.ops if isinstance(g, func.FuncOp)]:
            Rewriter.replace_op(graph, lower_graph(graph, kernels))
        for k in [k for k in op.ops if isinstance(k, kernel.FuncOp)]:
            lowered = kernels[k.sym_name.data]
            Rewriter.replace_op(k, lowered.op)
            if lowered.fallback is not None:
                op.body.block.insert_op_after(lowered.fallback.op, lowered.op)
