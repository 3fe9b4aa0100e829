"""`fuse-scan`: each cumsum with the elementwise work over its shape.

A cumsum becomes one `scan` kernel. Its rows are the lines along its axis:
contiguous where the axis is the last, strided otherwise (consecutive rows
then consecutive in memory, a thread a row). From the cumsum the group grows
through elementwise producers and users of its shape (a masked or scaled
input, an epilogue), so that `cumsum(x * m) / n` reads x and m once and
writes once; smaller elementwise producers that broadcast in are recomputed
inside.
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
from molten.dialects.molten import value_dims
from molten.passes.fusion import (
    ELEMENTWISE,
    fuse,
    grow,
    is_fusible_root,
    recomputable_into,
)


class FuseCumsum(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.ScanOp, rewriter: PatternRewriter):
        if not is_fusible_root(op):
            return
        full = value_dims(op.result)

        def admits(candidate: Operation, group: set[Operation]) -> bool:
            if not is_fusible_root(candidate) or not isinstance(candidate, ELEMENTWISE):
                return False
            return value_dims(candidate.results[0]) == full or recomputable_into(
                candidate, full
            )

        fuse(rewriter, grow([op], admits), kernel.KernelKind.SCAN)


@dataclass(frozen=True)
class FuseScan(ModulePass):
    """Fuses each cumsum with the elementwise ops over its shape."""

    name = "fuse-scan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseCumsum(), apply_recursively=False).rewrite_module(op)
