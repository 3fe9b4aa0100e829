"""`fuse-reduction`: reductions with the elementwise work over the same rows.

Rows are the leading axes of a reduction's input, the reduced axes its
trailing ones (all kept as 1s). From each such reduction the group grows
through elementwise producers and users over the full shape or the per-row
shape, and through other reductions of the same rows, so that rms_norm,
layer_norm (mean and variance), softmax (max and sum), log_softmax and
rms_norm * silu(gate) each become one `row_reduce` kernel that reads its
input once. Smaller elementwise producers that broadcast in (a weight cast to
f32) are recomputed inside.

A reduction over other axes, or without keepdim, is first rewritten to that
form: a transpose puts the reduced axes last and a reshape restores the
result's shape (both become pointwise kernels).
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.dialects.molten import Dim, value_dims
from molten.passes.fusion import (
    ELEMENTWISE,
    fuse,
    grow,
    is_fusible_root,
    recomputable_into,
)


def row_domain(op: molten.ReductionOp) -> tuple[tuple[Dim, ...], int] | None:
    """(input shape, number of reduced trailing axes) of a row reduction, else None."""
    shape = value_dims(op.input)
    axes = tuple(sorted(op.axes.get_values()))
    k = len(axes)
    if op.keepdim is None or axes != tuple(range(len(shape) - k, len(shape))):
        return None
    return shape, k


class NormalizeReduction(RewritePattern):
    """reduce(x, axes) -> reshape(reduce(transpose(x), trailing axes, keepdim))."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.ReductionOp, rewriter: PatternRewriter):
        if not is_fusible_root(op) or row_domain(op) is not None:
            return
        shape = value_dims(op.input)
        axes = tuple(sorted(op.axes.get_values()))
        kept = [i for i in range(len(shape)) if i not in axes]
        new_ops: list[Operation] = []
        source = op.input
        if axes != tuple(range(len(shape) - len(axes), len(shape))):
            transpose = molten.TransposeOp.with_inferred_type(
                [source], {"permutation": molten._int_array([*kept, *axes])}
            )
            new_ops.append(transpose)
            source = transpose.result
        rank = len(shape)
        reduce = type(op).with_inferred_type(
            [source],
            {
                "axes": molten._int_array(range(rank - len(axes), rank)),
                "keepdim": UnitAttr(),
            },
        )
        new_ops.append(reduce)
        result = reduce.results[0]
        if result.type != op.result.type:
            assert isinstance(op.result.type, TensorType)
            reshape = molten.ReshapeOp.with_inferred_type(
                [result], result_type=op.result.type
            )
            new_ops.append(reshape)
            result = reshape.result
        rewriter.replace(op, new_ops, [result])


class FuseRowReduction(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.ReductionOp, rewriter: PatternRewriter):
        if not is_fusible_root(op) or (domain := row_domain(op)) is None:
            return
        full, k = domain
        rows = (*full[: len(full) - k], *(1,) * k)

        def admits(candidate: Operation, group: set[Operation]) -> bool:
            if not is_fusible_root(candidate):
                return False
            if isinstance(candidate, molten.ReductionOp):
                return row_domain(candidate) == domain
            if not isinstance(candidate, ELEMENTWISE):
                return False
            return value_dims(candidate.results[0]) in (
                full,
                rows,
            ) or recomputable_into(candidate, full)

        fuse(rewriter, grow([op], admits), kernel.KernelKind.ROW_REDUCE)


@dataclass(frozen=True)
class FuseReduction(ModulePass):
    """Fuses each row reduction with the elementwise ops over its rows."""

    name = "fuse-reduction"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            NormalizeReduction(), apply_recursively=False
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FuseRowReduction()]),
            apply_recursively=False,
        ).rewrite_module(op)
