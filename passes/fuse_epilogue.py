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
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.dialects.molten import shape_of
from molten.passes.fusion import (
    ELEMENTWISE,
    LAYOUTS,
    fuse,
    grow,
    is_fusible_root,
    recomputable_into,
)


def persistent_takes(matmuls: list[molten.MatmulOp], arch: str) -> bool:
    """Whether the persistent TMA kernel (the tensor-core kernel that
    computes several products of one lhs, and a prologue) takes a kernel
    of `matmuls`, alike: on sm_90a, where it takes the first, that is not
    a GEMV, and it has a tile for all of them."""
    from molten.passes.kernel_schedule import (
        H100_SMS,
        WGMMA_ARCHS,
        is_gemv,
        siblings_schedules,
        takes_persistent,
    )

    first = matmuls[0]
    return (
        arch in WGMMA_ARCHS
        and takes_persistent(first)
        and not is_gemv(first)
        and bool(siblings_schedules(matmuls, H100_SMS))
    )


def takes_siblings(matmul: molten.MatmulOp, arch: str) -> bool:
    """Whether the target's gemm kernels take siblings of `matmul` (the
    persistent TMA kernel, with a tile for two of it)."""
    return persistent_takes([matmul, matmul], arch)


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
    op: molten.MatmulOp, arch: str
) -> Callable[[Operation, set[Operation]], bool]:
    """Whether a candidate joins `op`'s gemm group as its epilogue: an
    elementwise op over the result (or recomputed into it), a layout that
    the result is stored through, or a sibling of `op` where the target's
    kernel takes it."""
    domain = shape_of(op.result)

    def admits(candidate: Operation, group: set[Operation]) -> bool:
        if isinstance(candidate, molten.MatmulOp):
            return (
                candidate.is_sibling_of(op)
                and is_fusible_root(candidate)
                and takes_siblings(op, arch)
            )
        if laid_out_in(candidate, group):
            return True
        return (
            is_fusible_root(candidate)
            and isinstance(candidate, ELEMENTWISE)
            and not reads_a_layout(candidate, group)
            and (
                shape_of(candidate.results[0]) == domain
                or recomputable_into(candidate, domain)
            )
        )

    return admits


@dataclass(frozen=True)
class FuseMatmulEpilogue(RewritePattern):
    arch: str = "sm_90"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.MatmulOp, rewriter: PatternRewriter):
        if not is_fusible_root(op):
            return
        group = grow(
            [op],
            epilogue_admits(op, self.arch),
            grow_producers_of=lambda o, g: not isinstance(o, molten.MatmulOp),
        )
        fuse(rewriter, group, kernel.KernelKind.GEMM)


@dataclass(frozen=True)
class FuseEpilogue(ModulePass):
    """Fuses each matmul with its elementwise epilogue into one gemm kernel
    (with the siblings its epilogue reads, for a target `arch` that takes
    them: sm_90a)."""

    name = "fuse-epilogue"

    arch: str = "sm_90"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            FuseMatmulEpilogue(self.arch), apply_recursively=False
        ).rewrite_module(op)
