"""`vectorize`: scalar loads and stores of consecutive elements become vector
accesses of up to 16 bytes (`cuda.VECTOR_BYTES`), where the index arithmetic
proves them consecutive and aligned.

```mlir
%a = cuda.load %x[%i] : !cuda.ptr<f32> -> f32        // %i a multiple of 4
%j = arith.addi %i, %c1 : index
%b = cuda.load %x[%j] : !cuda.ptr<f32> -> f32
...                                                   // %i + 2, %i + 3
// becomes
%a, %b, %c, %d = cuda.load %x[%i] : !cuda.ptr<f32> -> f32, f32, f32, f32
```

The proof is on the indices: each `index` value is read as a linear form
`c + k1 * x1 + k2 * x2 + ...` over leaf values (what is not a constant, an
addi, a subi or a muli by a constant), each leaf with a known divisor (a
remsi by N keeps gcd(divisor, N), a min, max or select the gcd of its
operands', a loop's induction variable that of its lower bound and step, a
product of leaves the product of theirs, anything else 1). Accesses through
one pointer whose forms differ only in `c`, by 0, 1, ..., W-1, are
consecutive; the first is W-aligned when W divides `c`
and every `k * divisor(x)`. Only accesses in one block are grouped, and
none is moved across an access of the other kind through the same pointer.
Only global memory is vectorized (the gemm's shared tiles are left to its
own lowering), and not `coherent` loads.

That alignment is relative to the pointer, so a vectorized kernel needs its
pointers aligned to 16 bytes at run time: the pass keeps a copy of the
kernel as it was (`<name>_scalar`) and marks each launch of it with the
arguments it accesses by vectors and that variant, which the launcher and
the runtime take when one of those pointers is misaligned. A kernel launched
with a variant already (a tensor-core gemm with its SIMT kernel) is
vectorized in place: the pointers it newly accesses by vectors join its
launch's `aligned` list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from molten.dialects import cuda

SCALAR_SUFFIX = "_scalar"


# ---------------------------------------------------------------------------
# Index analysis.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LinearForm:
    """`constant + sum(coefficient * leaf)`."""

    terms: frozenset[tuple[SSAValue, int]]
    constant: int

    def __add__(self, other: LinearForm) -> LinearForm:
        return LinearForm.of(
            [*self.terms, *other.terms], self.constant + other.constant
        )

    def scaled(self, factor: int) -> LinearForm:
        return LinearForm.of(
            [(x, k * factor) for x, k in self.terms], self.constant * factor
        )

    @staticmethod
    def of(terms: list[tuple[SSAValue, int]], constant: int) -> LinearForm:
        merged: dict[SSAValue, int] = {}
        for x, k in terms:
            merged[x] = merged.get(x, 0) + k
        return LinearForm(frozenset((x, k) for x, k in merged.items() if k), constant)


class IndexAnalysis:
    """Linear forms and divisors of `index` values, memoized."""

    def __init__(self) -> None:
        self._forms: dict[SSAValue, LinearForm] = {}
        self._divisors: dict[SSAValue, int] = {}

    def form(self, value: SSAValue) -> LinearForm:
        if value not in self._forms:
            self._forms[value] = self._form(value)
        return self._forms[value]

    def _form(self, value: SSAValue) -> LinearForm:
        op = value.owner
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return LinearForm.of([], op.value.value.data)
        if isinstance(op, arith.AddiOp):
            return self.form(op.lhs) + self.form(op.rhs)
        if isinstance(op, arith.SubiOp):
            return self.form(op.lhs) + self.form(op.rhs).scaled(-1)
        if isinstance(op, arith.MuliOp):
            lhs, rhs = self.form(op.lhs), self.form(op.rhs)
            if not lhs.terms:
                return rhs.scaled(lhs.constant)
            if not rhs.terms:
                return lhs.scaled(rhs.constant)
        return LinearForm.of([(value, 1)], 0)

    def divisor(self, value: SSAValue) -> int:
        """The largest known d with value % d == 0 (d >= 1)."""
        if value not in self._divisors:
            self._divisors[value] = 1  # a cycle (through a loop) proves nothing
            self._divisors[value] = self._divisor(value)
        return self._divisors[value]

    def _divisor(self, value: SSAValue) -> int:
        form = self.form(value)
        if form.terms != frozenset({(value, 1)}) or form.constant:
            return self.form_divisor(form)
        op = value.owner
        if isinstance(op, arith.MuliOp):
            return self.divisor(op.lhs) * self.divisor(op.rhs)
        if isinstance(op, arith.MinSIOp | arith.MaxSIOp):
            return math.gcd(self.divisor(op.lhs), self.divisor(op.rhs)) or 1
        if isinstance(op, arith.SelectOp):
            return math.gcd(self.divisor(op.lhs), self.divisor(op.rhs)) or 1
        if isinstance(op, arith.RemSIOp):
            modulus = self.form(op.rhs)
            if not modulus.terms:
                return math.gcd(self.divisor(op.lhs), modulus.constant) or 1
        if isinstance(value, BlockArgument) and value.index == 0:
            loop = value.block.parent_op()
            if isinstance(loop, scf.ForOp):
                return math.gcd(self.divisor(loop.lb), self.divisor(loop.step)) or 1
        return 1

    def form_divisor(self, form: LinearForm) -> int:
        d = form.constant
        for x, k in form.terms:
            d = math.gcd(d, k * self.divisor(x))
        return abs(d) or 0


# ---------------------------------------------------------------------------
# Rewrites.
# ---------------------------------------------------------------------------


def _width(pointer: cuda.PointerType) -> int:
    return cuda.VECTOR_BYTES // cuda.element_bytes(pointer.element_type)


@dataclass(frozen=True)
class Run:
    """Scalar accesses to group: `members` in element order; `first` and
    `last` the earliest and latest of them in their block."""

    members: list[cuda.LoadOp | cuda.StoreOp]
    first: Operation
    last: Operation


Access = cuda.LoadOp | cuda.StoreOp


def _coherent(op: Operation) -> bool:
    return isinstance(op, cuda.LoadOp) and op.coherent is not None


def _candidate(op: Operation) -> bool:
    """A scalar global access a vector may take."""
    return (
        isinstance(op, Access)
        and len(op.values) == 1
        and isinstance(op.ptr.type, cuda.PointerType)
        and op.ptr.type.memory_space == cuda.MemorySpace.GLOBAL
        and not _coherent(op)
    )


class BlockAccesses:
    """One block's accesses, indexed once and kept up to date as runs are
    rewritten, so that finding a run costs the run, not the block: each
    op's position (a vector takes a half position beside the run it
    replaced), the scalar candidates by kind, pointer and index terms and
    then by constant offset (in block order), and the positions of every
    access by kind and pointer."""

    def __init__(self, block: Block, analysis: IndexAnalysis):
        self.positions: dict[Operation, float] = {}
        self.peers: dict[tuple, dict[int, list[Access]]] = {}
        self.accesses: dict[tuple, list[float]] = {}
        for position, op in enumerate(block.ops):
            self.positions[op] = position
            if not isinstance(op, Access):
                continue
            self.accesses.setdefault((type(op), op.ptr), []).append(position)
            if _candidate(op):
                form = analysis.form(op.index)
                key = (type(op), op.ptr, form.terms)
                self.peers.setdefault(key, {}).setdefault(form.constant, []).append(op)

    def peer(self, key: tuple, constant: int) -> Access | None:
        """The first scalar candidate of `key` at `constant` in block order."""
        found = self.peers.get(key, {}).get(constant)
        return found[0] if found else None

    def interleaved(self, run: Run) -> bool:
        """An access of the other kind through the same pointer lies among
        the run's (from its first, up to its last)."""
        first, last = self.positions[run.first], self.positions[run.last]
        other = cuda.StoreOp if isinstance(run.first, cuda.LoadOp) else cuda.LoadOp
        return any(
            first <= p < last
            for p in self.accesses.get((other, run.members[0].ptr), [])
        )

    def replaced(self, run: Run, vector: Access, analysis: IndexAnalysis) -> None:
        """`run`'s scalars gone, `vector` placed before its first (a load)
        or after its last (a store)."""
        anchor = run.first if isinstance(vector, cuda.LoadOp) else run.last
        position = self.positions[anchor] + (
            -0.5 if isinstance(vector, cuda.LoadOp) else 0.5
        )
        positions = self.accesses[(type(vector), vector.ptr)]
        # A run's members share their kind, pointer and index terms.
        first = run.members[0]
        by_offset = self.peers[
            (type(first), first.ptr, analysis.form(first.index).terms)
        ]
        for scalar in run.members:
            by_offset[analysis.form(scalar.index).constant].remove(scalar)
            positions.remove(self.positions.pop(scalar))
        self.positions[vector] = position
        positions.append(position)


class Accesses:
    """Each block's `BlockAccesses`, made when first asked for."""

    def __init__(self, analysis: IndexAnalysis):
        self.analysis = analysis
        self.blocks: dict[Block, BlockAccesses] = {}

    def of(self, block: Block) -> BlockAccesses:
        if block not in self.blocks:
            self.blocks[block] = BlockAccesses(block, self.analysis)
        return self.blocks[block]


def _run(op: Access, accesses: Accesses) -> Run | None:
    """The widest aligned run of consecutive scalar accesses of `op`'s kind
    and pointer, in its block, that holds `op` and that no access of the
    other kind through that pointer interleaves; None if there is none."""
    block = op.parent_block()
    if block is None or not _candidate(op):
        return None  # shared memory (the gemm's tiles, left to its own
        # lowering), another block's partials (coherent), or a vector
    analysis = accesses.analysis
    index = accesses.of(block)
    form = analysis.form(op.index)
    key = (type(op), op.ptr, form.terms)
    pointer = op.ptr.type
    assert isinstance(pointer, cuda.PointerType)
    width = _width(pointer)
    while width > 1:
        if all((k * analysis.divisor(x)) % width == 0 for x, k in form.terms):
            start = form.constant - form.constant % width
            members = [index.peer(key, start + i) for i in range(width)]
            if all(members):
                ordered = sorted(members, key=index.positions.__getitem__)  # type: ignore[arg-type]
                run = Run(members, ordered[0], ordered[-1])  # type: ignore[arg-type]
                if not index.interleaved(run):
                    return run
        width //= 2
    return None


@dataclass
class VectorizeLoads(RewritePattern):
    """W consecutive, aligned scalar loads: one load of W elements, where the
    first of them was."""

    accesses: Accesses

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cuda.LoadOp, rewriter: PatternRewriter):
        run = _run(op, self.accesses)
        if run is None:
            return
        index = run.members[0].index
        owner = index.owner
        block = self.accesses.of(op.parent_block())  # type: ignore[arg-type]
        if (
            isinstance(owner, Operation)
            and owner in block.positions
            and block.positions[owner] > block.positions[run.first]
        ):
            return  # the first element's index is computed after a load
        vector = cuda.LoadOp(op.ptr, index, len(run.members))
        rewriter.insert(vector, InsertPoint.before(run.first))
        block.replaced(run, vector, self.accesses.analysis)
        for scalar, value in zip(run.members, vector.values, strict=True):
            value.name_hint = scalar.values[0].name_hint
            rewriter.replace(scalar, [], [value])


@dataclass
class VectorizeStores(RewritePattern):
    """W consecutive, aligned scalar stores: one store of W elements, where
    the last of them was."""

    accesses: Accesses

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cuda.StoreOp, rewriter: PatternRewriter):
        run = _run(op, self.accesses)
        if run is None:
            return
        values = [s.values[0] for s in run.members]
        vector = cuda.StoreOp(values, op.ptr, run.members[0].index)
        rewriter.insert(vector, InsertPoint.after(run.last))
        block = self.accesses.of(op.parent_block())  # type: ignore[arg-type]
        block.replaced(run, vector, self.accesses.analysis)
        for scalar in run.members:
            rewriter.erase(scalar)


# ---------------------------------------------------------------------------
# The pass.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Vectorize(ModulePass):
    """Vector loads and stores where proven consecutive and aligned; each
    vectorized kernel keeps its scalar variant for misaligned pointers."""

    name = "vectorize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = [k for k in op.ops if isinstance(k, cuda.KernelOp)]
        launches = [o for o in op.walk() if isinstance(o, cuda.LaunchOp)]
        # A launch with a variant already has its alignment contract (a
        # tensor-core gemm and its SIMT kernel): its kernel is vectorized in
        # place, the pointers it then accesses by vectors join that
        # contract, and the variant is left as it is.
        variants = {
            launch.callee.string_value(): launch.fallback.string_value()
            for launch in launches
            if launch.fallback is not None
        }
        for kernel in kernels:
            name = kernel.sym_name.data
            if name.endswith(SCALAR_SUFFIX) or name in variants.values():
                continue
            if name not in variants and cuda.vector_params(kernel):
                continue  # vectorized already
            scalar = None if name in variants else kernel.clone()
            accesses = Accesses(IndexAnalysis())
            PatternRewriteWalker(
                GreedyRewritePatternApplier(
                    [VectorizeLoads(accesses), VectorizeStores(accesses)]
                ),
                apply_recursively=False,
            ).rewrite_region(kernel.body)
            positions = cuda.vector_params(kernel)
            if not positions:
                continue
            if scalar is not None:
                scalar.sym_name = StringAttr(name + SCALAR_SUFFIX)
                op.body.block.insert_op_after(scalar, kernel)
                variants[name] = scalar.sym_name.data
            for launch in launches:
                if launch.callee.string_value() != name:
                    continue
                before = () if launch.aligned is None else launch.aligned.get_values()
                aligned = sorted({*before, *positions})
                launch.aligned = DenseArrayBase.from_list(i64, aligned)
                launch.fallback = SymbolRefAttr(variants[name])
