"""`fuse-reduction`: reductions with the elementwise work over the same rows.

A row is what one reduction reduces: its reduced axes, one run of
consecutive axes kept as 1s; the other axes number the rows. Where the run
is trailing, a row is contiguous; where axes follow it (the inner axes:
mean over the channels of [N, C, H, W]) a row is strided, and consecutive
rows are consecutive in memory, so the kernel gives each thread a row and
its loads are coalesced across threads. From each such reduction the group
grows through elementwise producers and users over the full shape or the
per-row shape, and through other reductions of the same rows, so that rms_norm,
layer_norm (mean and variance), softmax (max and sum), log_softmax and
rms_norm * silu(gate) each become one `row_reduce` kernel that reads its
input once. Smaller elementwise producers that broadcast in (a weight cast to
f32) are recomputed inside.

A reduction without keepdim is first rewritten to keep its axes, and a
reshape restores the result's shape. Axes that are several runs are
reduced a run at a time, the last first (BatchNorm's [0, 2, 3]: the rows
of H x W, then the batch axis of their partial results). A strided run
that a thread a row would not serve (`keeps_strided`: fewer than a warp
of consecutive rows, or long rows with too few of them to fill the GPU)
is rewritten to reduce trailing axes: a transpose puts the reduced axes
last (both become pointwise kernels). A reshape to the full shape joins
the group: the kernel reads through it (GroupNorm's rows).
"""

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.dialects.molten import Dim, tensor_type, value_dims
from molten.passes.fusion import (
    ELEMENTWISE,
    fuse,
    grow,
    is_fusible_root,
    recomputable_into,
)

STRIDED_MIN_INNER = 32
"""Consecutive rows a strided reduction needs: a warp's loads of one column
then fill whole 128-byte lines (in f32)."""
STRIDED_MIN_ROWS = 16384
"""Rows a strided reduction needs when they are long: a thread walks its row
alone, so the GPU is busy only with this many threads or more."""
STRIDED_SHORT_ROW = 64
"""Rows of at most this many elements are strided whatever their number:
each thread holds its whole row in registers, all its loads in flight at
once (kernel-schedule's strided schedule)."""


def row_axes(op: molten.ReductionOp) -> tuple[int, ...] | None:
    """The reduced axes, where they are one run of consecutive axes."""
    runs = runs_of(tuple(sorted(op.axes.get_values())))
    return runs[0] if len(runs) == 1 else None


def keeps_strided(shape: tuple[Dim, ...], axes: tuple[int, ...]) -> bool:
    """Whether a reduction of `shape` over the run `axes` with axes after it
    is lowered in place, a thread a row, rather than transposed."""
    inner, reduced = shape[axes[-1] + 1 :], [shape[i] for i in axes]
    if any(isinstance(d, str) for d in (*inner, *reduced)):
        return False
    if math.prod(inner) < STRIDED_MIN_INNER:  # type: ignore[arg-type]
        return False
    if math.prod(reduced) <= STRIDED_SHORT_ROW:  # type: ignore[arg-type]
        return True
    kept = [d for i, d in enumerate(shape) if i not in axes]
    return any(isinstance(d, str) for d in kept) or (
        math.prod(kept) >= STRIDED_MIN_ROWS  # type: ignore[arg-type]
    )


def row_domain(
    op: molten.ReductionOp,
) -> tuple[tuple[Dim, ...], tuple[int, ...]] | None:
    """(input shape, reduced axes) of a row reduction (keepdim, over trailing
    axes or a strided run that `keeps_strided`), else None."""
    shape = value_dims(op.input)
    axes = row_axes(op)
    if op.keepdim is None or axes is None:
        return None
    if axes[-1] == len(shape) - 1 or keeps_strided(shape, axes):
        return shape, axes
    return None


def runs_of(axes: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Sorted axes as their maximal runs of consecutive axes, in order."""
    runs: list[list[int]] = []
    for axis in axes:
        if runs and runs[-1][-1] == axis - 1:
            runs[-1].append(axis)
        else:
            runs.append([axis])
    return [tuple(run) for run in runs]


def reduce_run(
    kind: type[molten.ReductionOp],
    source: SSAValue,
    run: tuple[int, ...],
    new_ops: list[Operation],
) -> SSAValue:
    """`source` reduced over the run `axes` (keepdim), as a row reduction:
    in place where the run is trailing or `keeps_strided`, else of a
    transpose that puts it last (the result then in that order, [kept...,
    1...]). Appends the ops to `new_ops`."""
    shape = value_dims(source)
    if run[-1] != len(shape) - 1 and not keeps_strided(shape, run):
        kept = [i for i in range(len(shape)) if i not in run]
        transpose = molten.TransposeOp.with_inferred_type(
            [source], {"permutation": molten._int_array([*kept, *run])}
        )
        new_ops.append(transpose)
        source = transpose.result
        run = tuple(range(len(shape) - len(run), len(shape)))
    reduce = kind.with_inferred_type(
        [source], {"axes": molten._int_array(run), "keepdim": UnitAttr()}
    )
    new_ops.append(reduce)
    return reduce.results[0]


def reshaped(
    value: SSAValue, result_type: Attribute, new_ops: list[Operation]
) -> SSAValue:
    if value.type == result_type:
        return value
    assert isinstance(result_type, TensorType)
    reshape = molten.ReshapeOp.with_inferred_type([value], result_type=result_type)
    new_ops.append(reshape)
    return reshape.result


class NormalizeReduction(RewritePattern):
    """reduce(x, axes) -> reshape(reduce(x, axes, keepdim)) where the axes
    are a row, else reshape(reduce(transpose(x), trailing axes, keepdim));
    axes that are several runs are reduced a run at a time, the last first
    (each run a row: sum, max and mean over a product of axes are those over
    each in turn), so no transpose copies more than what is left."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.ReductionOp, rewriter: PatternRewriter):
        if not is_fusible_root(op) or row_domain(op) is not None:
            return
        new_ops: list[Operation] = []
        source = op.input
        runs = runs_of(tuple(sorted(op.axes.get_values())))
        for n, run in enumerate(reversed(runs)):
            shape = value_dims(source)
            source = reduce_run(type(op), source, run, new_ops)
            if n < len(runs) - 1:  # the next run reads it in the input's order
                keep = tuple(1 if i in run else d for i, d in enumerate(shape))
                assert isinstance(source.type, TensorType)
                element = source.type.element_type
                source = reshaped(source, tensor_type(keep, element), new_ops)
        rewriter.replace(op, new_ops, [reshaped(source, op.result.type, new_ops)])


class FuseRowReduction(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.ReductionOp, rewriter: PatternRewriter):
        if not is_fusible_root(op) or (domain := row_domain(op)) is None:
            return
        full, axes = domain
        rows = tuple(1 if i in axes else d for i, d in enumerate(full))

        def admits(candidate: Operation, group: set[Operation]) -> bool:
            if not is_fusible_root(candidate):
                return False
            if isinstance(candidate, molten.ReductionOp):
                return row_domain(candidate) == domain
            if isinstance(candidate, molten.ReshapeOp):
                # A view of the full shape (layer and group norms' rows):
                # read through, never copied; or of the per-row values (a
                # reduction without keepdim): stored as such.
                return value_dims(candidate.result) == full or (
                    value_dims(candidate.input) == rows
                )
            if not isinstance(candidate, ELEMENTWISE):
                return False
            return value_dims(candidate.results[0]) in (
                full,
                rows,
            ) or recomputable_into(candidate, full)

        def siblings(candidate: Operation) -> list[Operation]:
            # Reductions of the same input (max and argmax, sum and max) read
            # it once together; no value links them.
            if not isinstance(candidate, molten.ReductionOp):
                return []
            return [
                use.operation
                for use in candidate.input.uses
                if isinstance(use.operation, molten.ReductionOp)
            ]

        group = grow([op], admits, neighbours=siblings)
        fuse(rewriter, group, kernel.KernelKind.ROW_REDUCE)


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
