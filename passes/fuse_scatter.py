"""`fuse-scatter`: each scatter with the elementwise work that makes what
it writes.

A scatter (torch.scatter, scatter_add, index_copy, index_put) becomes one
`scatter` kernel over its source's shape: a thread computes a source
element and its index and writes it where the index says (adds it, with
`accumulate`). The group grows through the producers of the source and
the indices over that shape (rope(k) before a KV cache takes it, a
broadcast position), and smaller ones recomputed per element. The
scatter's input, what it writes into, stays outside: the launcher starts
the kernel's output as a copy of it, or as that very memory where the
input is updated in place (`molten.updates`). An input computed by a
generator (`zeros(...).scatter_add(...)`) is made by a kernel of its own
first, so there is memory to start from.
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
from xdsl.rewriter import InsertPoint

from molten.dialects import kernel, molten
from molten.dialects.molten import value_dims
from molten.passes.fusion import GENERATORS, fuse, grow, is_fusible_root, joins_domain


class FuseScatterOp(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.ScatterOp, rewriter: PatternRewriter):
        if not is_fusible_root(op):
            return
        if isinstance(op.input.owner, GENERATORS):
            # Its own copy, materialized: the generator's other users still
            # recompute theirs.
            made = op.input.owner.clone()
            rewriter.insert_op(made, InsertPoint.before(op))
            op.operands[0] = made.results[0]
            fuse(rewriter, [made], kernel.KernelKind.POINTWISE, recompute=False)
        domain = value_dims(op.source)
        destination = op.input.owner

        def admits(candidate: Operation, group: set[Operation]) -> bool:
            if candidate is destination or op.result in candidate.operands:
                return False
            return joins_domain(candidate, group, domain)

        fuse(rewriter, grow([op], admits), kernel.KernelKind.SCATTER)


@dataclass(frozen=True)
class FuseScatter(ModulePass):
    """Fuses each scatter with the elementwise ops that compute its source
    and indices."""

    name = "fuse-scatter"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FuseScatterOp(), apply_recursively=False).rewrite_module(
            op
        )
