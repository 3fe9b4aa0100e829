"""`fuse-elementwise`: DAGs of elementwise ops into pointwise kernels.

From each elementwise (or index-remapping: rotate_half, broadcast_to,
reshape, transpose) op at the graph level, the group grows through producers
and users with the same result shape, plus smaller elementwise producers that
broadcast in (a row vector, a scalar), which the kernel recomputes per
element, and producers of any shape used only inside the group (behind a
reshape or transpose), which it recomputes at the indices read. Values
used outside the group are yielded. An op that only feeds larger
elementwise users, or ops that remap indices, waits for them to pull it
in. A constant that is itself a graph result becomes a kernel too.
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
)
from xdsl.traits import IsTerminator

from molten.dialects import kernel
from molten.dialects.molten import broadcasts_to, value_dims
from molten.passes.fusion import (
    GENERATORS,
    INDEX_MAPS,
    POINTWISE,
    fuse,
    grow,
    is_fusible_root,
    joins_domain,
)


def _pulled_in_later(op: Operation) -> bool:
    """Whether every user is a pointwise op that will pull `op` in: a larger
    one it broadcasts into, or one that remaps indices (reshape, transpose,
    rotate_half, broadcast_to), whose group recomputes `op` at the indices
    it reads."""
    shape = value_dims(op.results[0])
    users = [u.operation for u in op.results[0].uses]
    return bool(users) and all(
        isinstance(u, POINTWISE)
        and is_fusible_root(u)
        and (
            isinstance(u, INDEX_MAPS)
            or (
                value_dims(u.results[0]) != shape
                and broadcasts_to(shape, value_dims(u.results[0]))
            )
        )
        for u in users
    )


class FusePointwise(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not is_fusible_root(op):
            return
        if isinstance(op, GENERATORS):
            # A generator is cloned into the kernels that use it; only one that
            # is itself a graph result needs a kernel of its own.
            if any(u.operation.has_trait(IsTerminator) for u in op.results[0].uses):
                fuse(rewriter, [op], kernel.KernelKind.POINTWISE)
            return
        if not isinstance(op, POINTWISE) or _pulled_in_later(op):
            return
        domain = value_dims(op.results[0])

        def admits(candidate: Operation, group: set[Operation]) -> bool:
            return joins_domain(candidate, group, domain)

        fuse(rewriter, grow([op], admits), kernel.KernelKind.POINTWISE)


@dataclass(frozen=True)
class FuseElementwise(ModulePass):
    """Fuses DAGs of elementwise ops into pointwise kernels."""

    name = "fuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # An op left in place for a later group that could not take it (the
        # group was not convex with it) gets a kernel on a further sweep.
        while PatternRewriteWalker(
            FusePointwise(), apply_recursively=False
        ).rewrite_module(op):
            pass
