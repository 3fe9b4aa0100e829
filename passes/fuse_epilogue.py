"""`fuse-epilogue`: a matmul with the elementwise work on its result.

From each matmul the group grows through elementwise users of the matmul's
result shape (bias add, activation, scale, residual add, cast) and through
the elementwise producers of those users' other operands; the matmul's own
operands stay inputs (they are the tiles a gemm kernel loads). The result is
one `gemm` kernel that applies the epilogue to its accumulators before a
single store.
"""

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
    fuse,
    grow,
    is_fusible_root,
    recomputable_into,
)


class FuseMatmulEpilogue(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.MatmulOp, rewriter: PatternRewriter):
        if not is_fusible_root(op):
            return
        domain = shape_of(op.result)

        def admits(candidate: Operation, group: set[Operation]) -> bool:
            return (
                is_fusible_root(candidate)
                and isinstance(candidate, ELEMENTWISE)
                and (
                    shape_of(candidate.results[0]) == domain
                    or recomputable_into(candidate, domain)
                )
            )

        group = grow([op], admits, grow_producers_of=lambda o, g: o is not op)
        fuse(rewriter, group, kernel.KernelKind.GEMM)


@dataclass(frozen=True)
class FuseEpilogue(ModulePass):
    """Fuses each matmul with its elementwise epilogue into one gemm kernel."""

    name = "fuse-epilogue"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            FuseMatmulEpilogue(), apply_recursively=False
        ).rewrite_module(op)
