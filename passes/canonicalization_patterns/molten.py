"""Canonicalization patterns of the molten dialect, run by xDSL's `canonicalize`.

The canonical form of a splat constant is a rank-0 `molten.constant`, made
as large as its user needs by a `molten.broadcast_to` or by the user's own
broadcasting; patterns look through such broadcasts to see the scalar.

* x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1  ->  x   (when x has the result's
  type; like PyTorch, x + 0 is taken to be x even for x = -0.0)
* neg(neg(x))  ->  x
* an elementwise op or cast of splat constants  ->  a splat constant, computed
  by the reference interpreter in the result's element type (unless the
  value is inf or NaN, which a constant cannot hold)
* a splat constant of rank > 0  ->  broadcast_to(rank-0 constant)
* an elementwise operand broadcast_to'd to no effect on the result  ->  the
  unbroadcast operand
* cast, broadcast_to, reshape to the input's own type, identity transpose  ->  x
* flip(flip(x, a), b)  ->  flip(x, a xor b), and flip over no axes  ->  x
* flip(cumsum(y, axis), axes) with axis in axes  ->  cumsum(flip(y, axes), axis,
  in the other direction) (the reverse cumsum torch writes as flips)
* pad of a splat 0  ->  a splat 0
* pad(cumsum(slice(x) without its last element), a 0 before)  ->  the exclusive
  cumsum of x (the exclusive scan torch writes as a cat), and likewise in
  reverse
"""

import math

import numpy as np
from xdsl.dialects.builtin import TensorType, UnitAttr
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import molten
from molten.errors import MoltenError
from molten.interpreters.molten import evaluate, round_to


def splat_value(value: SSAValue) -> float | int | None:
    """The scalar a value holds everywhere, if it is a (broadcast) splat constant."""
    owner = value.owner
    while isinstance(owner, molten.BroadcastToOp):
        owner = owner.input.owner
    if isinstance(owner, molten.ConstantOp):
        return owner.splat_value()
    return None


def _scalar_constant(value: float | int, like: TensorType) -> molten.ConstantOp:
    return molten.ConstantOp.from_values(value, TensorType(like.element_type, []))


class RemoveIdentityOperand(RewritePattern):
    """x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: molten.AddOp | molten.SubOp | molten.MulOp | molten.DivOp,
        rewriter: PatternRewriter,
    ):
        identity = 0.0 if isinstance(op, molten.AddOp | molten.SubOp) else 1.0
        commutes = isinstance(op, molten.AddOp | molten.MulOp)
        candidates = [(op.lhs, op.rhs)] + ([(op.rhs, op.lhs)] if commutes else [])
        for kept, other in candidates:
            if kept.type == op.result.type and splat_value(other) == identity:
                rewriter.replace(op, [], [kept])
                return


class FoldDoubleNegation(RewritePattern):
    """neg(neg(x)) -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.NegOp, rewriter: PatternRewriter):
        if isinstance(inner := op.input.owner, molten.NegOp):
            rewriter.replace(op, [], [inner.input])


class FoldSplatOperands(RewritePattern):
    """An elementwise op or cast whose operands are all splats -> a splat."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: molten.ElementwiseBinaryOp | molten.ElementwiseUnaryOp | molten.CastOp,
        rewriter: PatternRewriter,
    ):
        scalars = [splat_value(v) for v in op.operands]
        if any(s is None for s in scalars):
            return
        arrays = [
            round_to(np.array(s), v.type.element_type)
            for s, v in zip(scalars, op.operands, strict=True)
        ]
        folded = evaluate(op, arrays, reference=False).item()
        if isinstance(folded, float) and not math.isfinite(folded):
            return  # float constants must be finite (see molten.constant)
        result_type = op.result.type
        constant = _scalar_constant(folded, result_type)
        if not result_type.get_shape():
            rewriter.replace(op, [constant])
            return
        broadcast = molten.BroadcastToOp.with_inferred_type(
            [constant.result], result_type=result_type
        )
        rewriter.replace(op, [constant, broadcast])


class SplatToScalarConstant(RewritePattern):
    """A splat constant of rank > 0 -> broadcast_to(rank-0 constant)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.ConstantOp, rewriter: PatternRewriter):
        result_type = op.result.type
        value = op.splat_value()
        if value is None or not result_type.get_shape():
            return
        constant = _scalar_constant(value, result_type)
        broadcast = molten.BroadcastToOp.with_inferred_type(
            [constant.result], result_type=result_type
        )
        rewriter.replace(op, [constant, broadcast])


class AbsorbOperandBroadcast(RewritePattern):
    """op(broadcast_to(x), y) -> op(x, y) when the op's broadcasting gives the
    same result anyway."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: molten.ElementwiseBinaryOp, rewriter: PatternRewriter
    ):
        for index, operand in enumerate(op.operands):
            if not isinstance(broadcast := operand.owner, molten.BroadcastToOp):
                continue
            operands = list(op.operands)
            operands[index] = broadcast.input
            lhs, rhs = (v.type for v in operands)
            try:
                inferred = type(op).infer_result_type([lhs, rhs], {}, None)
            except MoltenError:
                continue
            if inferred == op.result.type:
                rewriter.replace(op, type(op).with_inferred_type(operands))
                return


class RemoveNoOpShapeChange(RewritePattern):
    """cast / broadcast_to / reshape to the input's type, identity transpose -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: molten.CastOp
        | molten.BroadcastToOp
        | molten.ReshapeOp
        | molten.TransposeOp,
        rewriter: PatternRewriter,
    ):
        if isinstance(op, molten.TransposeOp):
            perm = tuple(op.permutation.get_values())
            if perm != tuple(range(len(perm))):
                return
        if op.input.type == op.result.type:
            rewriter.replace(op, [], [op.input])


class FoldFlipPair(RewritePattern):
    """flip(flip(x, a), b) -> flip(x, a xor b); a flip over no axes -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.FlipOp, rewriter: PatternRewriter):
        axes = set(op.axes.get_values())
        if not axes:
            rewriter.replace(op, [], [op.input])
            return
        inner = op.input.owner
        if not isinstance(inner, molten.FlipOp):
            return
        both = sorted(axes ^ set(inner.axes.get_values()))
        flip = molten.FlipOp.with_inferred_type(
            [inner.input], {"axes": molten._int_array(both)}
        )
        rewriter.replace(op, [flip])


class FlipThroughCumsum(RewritePattern):
    """flip(cumsum(y, axis), axes) with axis in axes -> cumsum(flip(y, axes),
    axis) in the other direction, where the flip is the cumsum's only user
    (any scan: cumprod, cummax, cummin alike): torch writes a reverse
    cumsum as flip(cumsum(flip(x))), which then folds to one scan."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.FlipOp, rewriter: PatternRewriter):
        scan = op.input.owner
        if not isinstance(scan, molten.ScanOp) or not scan.result.has_one_use():
            return
        if scan.axis.value.data not in set(op.axes.get_values()):
            return
        flip = molten.FlipOp.with_inferred_type([scan.input], {"axes": op.axes})
        properties = dict(scan.properties)
        if scan.reverse is None:
            properties["reverse"] = UnitAttr()
        else:
            del properties["reverse"]
        turned = type(scan).with_inferred_type([flip.result], properties)
        rewriter.replace(op, [flip, turned])


class PadOfZero(RewritePattern):
    """pad of a splat 0 -> a splat 0 of the padded shape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.PadOp, rewriter: PatternRewriter):
        if splat_value(op.input) != 0.0:
            return
        zero = _scalar_constant(0.0, op.result.type)
        whole = molten.BroadcastToOp.with_inferred_type(
            [zero.result], result_type=op.result.type
        )
        rewriter.replace(op, [zero, whole])


class ExclusiveScanOfShiftedCumsum(RewritePattern):
    """pad(cumsum(slice(x, 0, n - 1)), 1 zero before) -> cumsum(x, exclusive):
    each element the sum of those before it; in reverse, the slice from 1
    and the zero after. torch writes the exclusive scan as
    cat([zeros, cumsum(x.narrow(d, 0, n - 1))])."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.PadOp, rewriter: PatternRewriter):
        scan = op.input.owner
        if not isinstance(scan, molten.CumsumOp) or not scan.result.has_one_use():
            return
        window = scan.input.owner
        if not isinstance(window, molten.SliceOp) or scan.exclusive is not None:
            return
        axis = op.axis.value.data
        if scan.axis.value.data != axis or window.axis.value.data != axis:
            return
        x = window.input
        if x.type != op.result.type:
            return
        n = x.type.get_shape()[axis]
        reverse = scan.reverse is not None
        # Forward: x[0 : n - 1] after one zero; reverse: x[1 : n] before one.
        start, before = (1, 0) if reverse else (0, 1)
        if scan.input.type.get_shape()[axis] != n - 1:
            return
        if window.start.value.data != start or op.before.value.data != before:
            return
        properties = dict(scan.properties)
        properties["exclusive"] = UnitAttr()
        rewriter.replace(op, [molten.CumsumOp.with_inferred_type([x], properties)])


def canonicalization_patterns() -> tuple[RewritePattern, ...]:
    return (
        RemoveIdentityOperand(),
        FoldDoubleNegation(),
        FoldSplatOperands(),
        SplatToScalarConstant(),
        AbsorbOperandBroadcast(),
        RemoveNoOpShapeChange(),
        FoldFlipPair(),
        FlipThroughCumsum(),
        PadOfZero(),
        ExclusiveScanOfShiftedCumsum(),
    )
