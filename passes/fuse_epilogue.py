"""`fuse-epilogue`: a matmul with the elementwise work on its result.

From each matmul the group grows through elementwise users of the matmul's
result shape (bias add, activation, scale, residual add, cast) and through
the elementwise producers of those users' other operands; the matmul's own
operands stay inputs (they are the tiles a gemm kernel loads). The result is
one `gemm` kernel that applies the epilogue to its accumulators before a
single store.

For a target whose persistent TMA gemm takes matmuls sharing their lhs
(`arch` sm_90a), the group also takes a sibling: a matmul of the same lhs,
shape and transposes whose result the epilogue reads, as Llama's MLP
reads silu(x @ gate.T) * (x @ up.T). The kernel then loads each tile of
the lhs once for both products, and writes only the epilogue's result:

    %g = molten.matmul %h, %wg transpose_b : ... -> tensor<512x18944xbf16>
    %u = molten.matmul %h, %wu transpose_b : ... -> tensor<512x18944xbf16>
    %y = molten.mul %silu_g, %u ...
    // one kernel.func of kind gemm holding both matmuls, the silu and the mul

It also takes the other matmuls of the lhs that no op reads together
(horizontal fusion: q, k and v, of any widths) where the estimate finds
one kernel no slower than a kernel each (`siblings_fit`): each tile of
the kernel is then a tile of one of them, and reads the lhs's tile as
its own kernel would, with one launch for all and the SMs shared out
among all their tiles.
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.dialects.molten import size_range_of, value_dims
from molten.passes.fusion import (
    ELEMENTWISE,
    LAYOUTS,
    fuse,
    grow,
    is_fusible_root,
    recomputable_into,
)
from molten.passes.schedule.target import DEFAULT_TARGET, Target, pass_target


def sized_for_decision(
    matmuls: list[molten.MatmulOp],
) -> list[molten.MatmulOp] | None:
    """`matmuls` as the fusion decides them: themselves where their sizes
    are fixed; over a named M in a copy of the graph by size class
    (split-size-classes), detached copies with M at the class's bound (the
    size kernel-schedule schedules the class at); else None (a named M is
    decided per class only)."""
    from molten.passes.schedule.size_classes import GEMM_OPEN_ROWS
    from molten.passes.specialize_dims import specialized_type

    names = {
        d
        for mm in matmuls
        for v in (mm.lhs, mm.rhs, mm.result)
        for d in value_dims(v)
        if isinstance(d, str)
    }
    if not names:
        return matmuls
    sizes = size_range_of(matmuls[0])
    if sizes is None or names != {sizes.dim.data}:
        return None
    bound = {sizes.dim.data: sizes.most.data or GEMM_OPEN_ROWS}
    stand_ins: dict[SSAValue, SSAValue] = {}
    operands = Block()

    def stand_in(value: SSAValue) -> SSAValue:
        if value not in stand_ins:
            stand_ins[value] = operands.insert_arg(
                specialized_type(value.type, bound), len(operands.args)
            )
        return stand_ins[value]

    return [
        molten.MatmulOp.create(
            operands=[stand_in(mm.lhs), stand_in(mm.rhs)],
            result_types=[specialized_type(mm.result.type, bound)],
            properties=dict(mm.properties),
        )
        for mm in matmuls
    ]


def persistent_takes(
    matmuls: list[molten.MatmulOp], target: Target, side_by_side: bool | None = None
) -> bool:
    """Whether the persistent TMA kernel (the tensor-core kernel that
    computes several products of one lhs, and a prologue) takes a kernel
    of `matmuls`, alike: on a target with wgmma, where it takes the first,
    that is not a GEMV, and it has a tile for all of them (side by side or
    not: schedule.siblings.siblings_schedules), at the size the fusion
    decides them at (sized_for_decision)."""
    from molten.passes.schedule.common import is_gemv
    from molten.passes.schedule.persistent import takes_persistent
    from molten.passes.schedule.siblings import siblings_schedules

    sized = sized_for_decision(matmuls)
    if sized is None:
        return False
    first = sized[0]
    return (
        target.wgmma
        and takes_persistent(first)
        and not is_gemv(first)
        and bool(siblings_schedules(sized, target, side_by_side=side_by_side))
    )


def siblings_fit(group: set[Operation], target: Target) -> bool:
    """Whether the target's gemm kernel takes the matmuls of `group` (one
    lhs) as one kernel: side by side where an op reads several of them
    (then of one type), else each tile one's, where the estimate finds
    that no slower than a kernel each (siblings_pay)."""
    from molten.passes.schedule.siblings import siblings_pay

    if sum(isinstance(o, molten.MatmulOp) for o in group) < 2:
        return True
    # In block order (side_by_side follows values forward).
    ops = [o for o in next(iter(group)).parent_block().ops if o in group]  # type: ignore[union-attr]
    matmuls = [o for o in ops if isinstance(o, molten.MatmulOp)]
    if kernel.matmuls_side_by_side(ops):
        return all(mm.is_sibling_of(matmuls[0]) for mm in matmuls) and persistent_takes(
            matmuls, target, side_by_side=True
        )
    sized = sized_for_decision(matmuls)
    return (
        sized is not None
        and persistent_takes(sized, target, side_by_side=False)
        and siblings_pay(sized, target)
    )


def laid_out_in(candidate: Operation, group: set[Operation]) -> bool:
    """Whether `candidate` is a layout (reshape, transpose) of a value
    `group` computes: the group's kernel then stores that value where the
    layout sends it (the heads of a projection, [T, H * D] -> [H, T, D])."""
    return (
        is_fusible_root(candidate)
        and isinstance(candidate, LAYOUTS)
        and candidate.operands[0].owner in group
        and not any(u.operation in group for u in candidate.results[0].uses)
    )


def reads_a_layout(candidate: Operation, group: set[Operation]) -> bool:
    """Whether `candidate` reads a layout the group computes: a layout is
    only ever stored, never read back in the kernel's domain."""
    return any(
        isinstance(v.owner, LAYOUTS) and v.owner in group for v in candidate.operands
    )


def epilogue_admits(
    op: molten.MatmulOp, target: Target, horizontal: bool = False
) -> Callable[[Operation, set[Operation]], bool]:
    """Whether a candidate joins `op`'s gemm group as its epilogue: an
    elementwise op over the result (or recomputed into it), a layout that
    the result is stored through, or a sibling of `op` where the target's
    kernel takes it: of `op`'s type, or (`horizontal`) any matmul of its
    lhs."""

    def admits(candidate: Operation, group: set[Operation]) -> bool:
        if isinstance(candidate, molten.MatmulOp):
            related = (
                candidate.shares_lhs_with(op)
                if horizontal
                else candidate.is_sibling_of(op)
            )
            return (
                related
                and is_fusible_root(candidate)
                and persistent_takes([op, candidate], target)
            )
        if laid_out_in(candidate, group):
            return True
        if not (
            is_fusible_root(candidate)
            and isinstance(candidate, ELEMENTWISE)
            and not reads_a_layout(candidate, group)
        ):
            return False
        # Over the result of a matmul of the group (each sibling's own).
        shape = value_dims(candidate.results[0])
        domains = {
            value_dims(o.result) for o in group if isinstance(o, molten.MatmulOp)
        }
        return tuple(shape) in domains or any(
            recomputable_into(candidate, list(d)) for d in domains
        )

    return admits


@dataclass(frozen=True)
class FuseMatmulEpilogue(RewritePattern):
    target: Target = DEFAULT_TARGET

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.MatmulOp, rewriter: PatternRewriter):
        if not is_fusible_root(op):
            return
        producers_of = lambda o, g: not isinstance(o, molten.MatmulOp)  # noqa: E731
        # First with every matmul of op's lhs beside it (q, k and v), then,
        # where the kernel does not take them all, with the siblings its
        # epilogue reads alone.
        group = grow(
            [op],
            epilogue_admits(op, self.target, horizontal=True),
            grow_producers_of=producers_of,
            neighbours=lambda o: (
                [u.operation for u in o.lhs.uses]
                if isinstance(o, molten.MatmulOp)
                else []
            ),
        )
        if not siblings_fit(group, self.target):
            group = grow(
                [op], epilogue_admits(op, self.target), grow_producers_of=producers_of
            )
        fuse(rewriter, group, kernel.KernelKind.GEMM)


@dataclass(frozen=True)
class FuseEpilogue(ModulePass):
    """Fuses each matmul with its elementwise epilogue into one gemm kernel
    (with the siblings its epilogue reads, for a target that takes them:
    sm_90a's). The module's target, unless `target` or `arch` names one."""

    name = "fuse-epilogue"

    target: str | None = None
    arch: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = pass_target(self.name, op, self.target, self.arch)
        PatternRewriteWalker(
            FuseMatmulEpilogue(target), apply_recursively=False
        ).rewrite_module(op)
