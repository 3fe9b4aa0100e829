"""`fuse-prologue`: a matmul with the elementwise work on its lhs, and the
row reductions of the same source, in one gemm kernel.

rms_norm(x, w) @ W.T decomposes to a matmul whose lhs is computed from x
element by element, except for one factor: the row scale r =
rsqrt(mean(x²) + eps), a reduction over each whole row of x. The pass
first moves r after the product (`factor_row_scale`, for every matmul of
that lhs at once), and then forms one gemm group of

* the lhs's elementwise cone, from one source X of the lhs's shape and
  type, with factors constant along M beside it (w, scalars);
* the matmul, and the siblings that `fuse-epilogue` would take;
* reductions over the last axis (keepdim) of elementwise cones of the same
  X: the gemm kernel reads each whole row of X through its K loop, so it
  accumulates them from the tiles it already holds;
* the per-row ops on them, and the epilogue.

```mlir
%x32 = molten.cast %x : tensor<512x3584xbf16> to tensor<512x3584xf32>
%ms = molten.reduce_mean %sq axes = [1] keepdim : ... -> tensor<512x1xf32>
%r = molten.rsqrt %add : tensor<512x1xf32>
%a = molten.cast %xw : tensor<512x3584xf32> to tensor<512x3584xbf16>
%p = molten.matmul %a, %wq transpose_b : ... -> tensor<512x3584xf32>
%y = molten.mul %p, %r : ...
// all of it one kernel.fused of kind gemm: x in, y out; h = rms_norm(x)
// is never written
```

Ops of the group that other groups also need (the normalized lhs of q, k
and v's projections) are copied for them first: each kernel recomputes
the norm from x, which costs a read of x, against a write and a read of h.

Only for a target whose gemm kernel takes it (`takes_prologue`: the
persistent TMA kernel of sm_90a, K whole 64-element steps, at most
PROLOGUE_MAX_ROWS rows); elsewhere the pass changes nothing, and
fuse-reduction and fuse-epilogue fuse the norm and the matmul apart as
before. Not in the default pipeline (see PROLOGUE_MAX_ROWS).
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import region_dce

from molten.dialects import kernel, molten
from molten.dialects.molten import broadcasts_to, shape_of, value_dims
from molten.passes.factor_row_scale import factor_row_scale
from molten.passes.fuse_epilogue import epilogue_admits, persistent_takes
from molten.passes.fusion import ELEMENTWISE, fuse, grow, is_fusible_root
from molten.passes.schedule.target import DEFAULT_TARGET, Target, pass_target

ROW_REDUCTIONS = (molten.ReduceSumOp, molten.ReduceMeanOp)
"""The reductions a gemm kernel accumulates from its lhs tiles."""


PROLOGUE_MAX_ROWS = 128
"""The most rows of a matmul that takes a prologue. The persistent kernel
computes the lhs in place in each stage, once per tile of columns; at few
rows the gemm streams B and that work can hide under it, beyond it adds
to the tensor cores' time. Measured on the H100
(benchmarks/experiments/prologue_profile.py, 2026-11-27, bf16, K = 3584,
N = 18944), fused against the norm and the gemm apart: 51.3 against 53.3
us at 64 rows, 55.6 against 56.5 at 128, 142.0 against 109.3 at 512 (with
w's columns then loaded beside A by cp.async.bulk, since taken out: with
w read from global memory, as now, the pass is not yet a gain, and the
compiler runs it only when asked, `ZeroCompiler(prologue=True)`)."""


def takes_prologue(matmul: molten.MatmulOp, target: Target) -> bool:
    """Whether the target's gemm kernel applies a prologue to `matmul`'s
    lhs, and that pays: on sm_90a, where the heuristic gives the matmul
    alone the persistent TMA kernel unsplit (the kernel that computes a
    prologue: the fusion takes no other schedule from it), it is not a
    GEMV, it has at most PROLOGUE_MAX_ROWS rows, and K is whole 64-element
    steps (the tiles past K would read the per-column factors out of
    bounds)."""
    from molten.passes.schedule.common import SWIZZLE_K
    from molten.passes.schedule.wgmma import wgmma_schedule

    rows = value_dims(matmul.result)[-2]
    if not (
        isinstance(rows, int)  # a named M: no prologue (the kernel takes it alone)
        and rows <= PROLOGUE_MAX_ROWS
        and shape_of(matmul.lhs)[-1] % SWIZZLE_K == 0
        and persistent_takes([matmul], target)
    ):
        return False
    alone = wgmma_schedule(matmul, target)
    return alone.family.data == kernel.ScheduleFamily.GEMM_TMA and alone.split.data == 1


def elementwise_cone(
    value: SSAValue,
    stop: Callable[[SSAValue], bool] = lambda v: False,
    level: Callable[[Operation], bool] = is_fusible_root,
) -> tuple[list[Operation], list[SSAValue]]:
    """The elementwise ops of a `level` (the graph's, by default) that
    `value` is computed by, producers first, and the values they start
    from (its leaves): values of other ops, or that `stop` says are
    leaves."""
    ops: list[Operation] = []
    leaves: list[SSAValue] = []
    seen: set[Operation] = set()
    stack: list[tuple[SSAValue, bool]] = [(value, False)]
    while stack:
        current, expanded = stack.pop()
        op = current.owner
        if not (isinstance(op, ELEMENTWISE) and level(op)) or (
            current is not value and stop(current)
        ):
            if current not in leaves:
                leaves.append(current)
            continue
        if expanded:
            ops.append(op)
            continue
        if op in seen:
            continue
        seen.add(op)
        stack.append((current, True))
        stack.extend((operand, False) for operand in reversed(op.operands))
    return ops, leaves


def _along_k(leaf: SSAValue, shape: tuple[int, ...]) -> bool:
    """Whether a leaf is the same for every row of `shape`: a per-column
    vector, a scalar or a constant."""
    leaf_shape = tuple(shape_of(leaf))
    return broadcasts_to(leaf_shape, shape) and (
        len(leaf_shape) < 2 or leaf_shape[-2] == 1
    )


def prologue_of(
    lhs: SSAValue, level: Callable[[Operation], bool] = is_fusible_root
) -> tuple[list[Operation], SSAValue, list[SSAValue]] | None:
    """The elementwise ops computing a matmul's lhs, their one source of
    the lhs's shape and type and their leaves (the source and others
    constant along M); None where the lhs is not so computed. A value of
    the lhs's type that is also read elsewhere (a residual stream) is a
    source, as written anyway."""
    ops, leaves = elementwise_cone(
        lhs, lambda v: v.type == lhs.type and v.has_more_than_one_use(), level
    )
    shape = tuple(shape_of(lhs))
    sources = [leaf for leaf in leaves if tuple(shape_of(leaf)) == shape]
    if not ops or len(sources) != 1:
        return None
    (source,) = sources
    if source.type != lhs.type or not all(  # type: ignore[attr-defined]
        _along_k(leaf, shape) for leaf in leaves if leaf is not source
    ):
        return None
    return ops, source, leaves


def prologue_source(kfunc: kernel.FuncOp, lhs: SSAValue) -> SSAValue:
    """The kernel input a gemm kernel's computed lhs is read from (the
    kernel level's view of prologue_of), or a clear error."""
    name = kfunc.sym_name.data
    args = kfunc.body.block.args
    found = prologue_of(lhs, level=lambda op: True)
    if found is None or not all(
        leaf in args or isinstance(leaf.owner, molten.ConstantOp) for leaf in found[2]
    ):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}: a gemm kernel computes its "
            "lhs only elementwise from one input of the lhs's shape and type and "
            "inputs constant along its rows"
        )
    source = found[1]
    for op in kfunc.body.block.ops:
        if isinstance(op, molten.ReductionOp) and (
            row_reduction_of(op, source, lambda o: True) is None
        ):
            raise NotImplementedError(
                f"lower-kernel-to-cuda: {name}: a gemm kernel "
                f"computes only reductions over the last axis (keepdim) of its "
                f"lhs's source, elementwise, not {op.name} of {op.input.type}"
            )
    return source


def row_reduction_of(
    op: Operation,
    source: SSAValue,
    level: Callable[[Operation], bool] = is_fusible_root,
) -> list[Operation] | None:
    """The elementwise ops of a reduction over the last axis (keepdim) of a
    cone of `source` and factors constant along M; None for another op."""
    if not isinstance(op, ROW_REDUCTIONS) or op.keepdim is None:
        return None
    shape = tuple(shape_of(op.input))
    if tuple(op.axes.get_values()) != (len(shape) - 1,) or shape != tuple(
        shape_of(source)
    ):
        return None
    ops, leaves = elementwise_cone(op.input, lambda v: v is source, level)
    if not all(leaf is source or _along_k(leaf, shape) for leaf in leaves):
        return None
    return ops


def _before_the_matmuls(seed: Operation, group: set[Operation]) -> list[Operation]:
    """The ops of `group`, in block order, that read no matmul of it
    through ops of it: the prologue's side (and what the epilogue reads
    that the products do not)."""
    block = seed.parent_block()
    assert block is not None
    after: set[Operation] = set()
    before = []
    for op in block.ops:
        if op not in group:
            continue
        if isinstance(op, molten.MatmulOp) or any(
            v.owner in after for v in op.operands
        ):
            after.add(op)
        else:
            before.append(op)
    return before


def privatize(
    rewriter: PatternRewriter, group: set[Operation], ops: list[Operation]
) -> None:
    """Copies each of `ops` (of `group`, in block order) that ops outside
    the group also read, for them: afterwards the group's own are read only
    inside it. Users first, so that a copy's producers are copied too."""
    for op in reversed(ops):
        if not any(u.operation not in group for r in op.results for u in r.uses):
            continue
        copy = op.clone()
        rewriter.insert(copy, InsertPoint.before(op))
        for old, new in zip(op.results, copy.results, strict=True):
            new.name_hint = old.name_hint
            rewriter.replace_uses_with_if(
                old, new, lambda use: use.operation not in group
            )


@dataclass(frozen=True)
class FuseMatmulPrologue(RewritePattern):
    target: Target = DEFAULT_TARGET

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.MatmulOp, rewriter: PatternRewriter):
        producer = op.lhs.owner
        if not (
            is_fusible_root(op)
            and isinstance(producer, ELEMENTWISE)
            and is_fusible_root(producer)
        ):
            return  # no lhs computed elementwise: nothing to fuse (cheap first)
        if not all(
            isinstance(use.operation, molten.MatmulOp)
            and takes_prologue(use.operation, self.target)
            for use in op.lhs.uses
        ):
            return
        op = factor_row_scale(op, rewriter).get(op, op)
        found = prologue_of(op.lhs)
        if found is None:
            return
        lhs_ops, source, _ = found
        prologue: set[Operation] = set(lhs_ops)
        reductions: set[Operation] = set()
        epilogue = epilogue_admits(op, self.target)

        def admits(candidate: Operation, group: set[Operation]) -> bool:
            if candidate in prologue:
                return True
            if isinstance(candidate, molten.MatmulOp):
                return epilogue(candidate, group)
            if not is_fusible_root(candidate) or any(
                isinstance(u.operation, molten.MatmulOp) and u.index == 1
                for r in candidate.results
                for u in r.uses
            ):  # no prologue for the rhs
                return False
            if isinstance(candidate, molten.ReductionOp):
                cone = row_reduction_of(candidate, source)
                if cone is None:
                    return False
                prologue.update(cone)
                reductions.add(candidate)
                return True
            reads_prologue = any(
                v.owner in prologue or v.owner in reductions for v in candidate.operands
            )
            if reads_prologue and not _per_row(candidate):
                return False
            return epilogue(candidate, group)

        group = grow([op], admits, grow_producers_of=_producers_of(op))
        privatize(rewriter, group, _before_the_matmuls(op, group))
        # The epilogue reads the row reductions: it is not recomputed
        # outside (that would need them again).
        fuse(rewriter, group, kernel.KernelKind.GEMM, recompute=False)


def _per_row(op: Operation) -> bool:
    """An op with one value per row (shape [..., M, 1])."""
    shape = shape_of(op.results[0])
    return len(shape) >= 2 and shape[-1] == 1


def _producers_of(
    seed: molten.MatmulOp,
) -> Callable[[Operation, set[Operation]], bool]:
    """The ops whose operands' producers may join: all but the matmuls
    other than `seed` (a sibling's lhs is the seed's; its rhs stays out)."""
    return lambda o, g: o is seed or not isinstance(o, molten.MatmulOp)


@dataclass(frozen=True)
class FusePrologue(ModulePass):
    """Fuses a matmul with the elementwise work on its lhs, the row
    reductions of that lhs's source and its epilogue into one gemm kernel,
    for a target whose gemm takes it (sm_90a's: the module's, unless
    `target` or `arch` names one); see the module docstring."""

    name = "fuse-prologue"

    target: str | None = None
    arch: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = pass_target(self.name, op, self.target, self.arch)
        PatternRewriteWalker(
            # Recursively: factor_row_scale replaces the other matmuls of a
            # lhs, which are then matched anew.
            FuseMatmulPrologue(target),
            apply_recursively=True,
        ).rewrite_module(op)
        # The normalized lhs the new kernels no longer read.
        for region in op.regions:
            region_dce(region)
