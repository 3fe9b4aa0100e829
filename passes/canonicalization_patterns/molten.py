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
"""

import math

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import molten
from molten.errors import MoltenError


def splat_value(value: SSAValue) -> float | None:
    """The scalar a value holds everywhere, if it is a (broadcast) splat constant."""
    owner = value.owner
    while isinstance(owner, molten.BroadcastToOp):
        owner = owner.input.owner
    if isinstance(owner, molten.ConstantOp):
        return owner.splat_value()
    return None


def _scalar_constant(value: float, like: TensorType) -> molten.ConstantOp:
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
        from molten.interpreters.molten import evaluate, round_to

        scalars = [splat_value(v) for v in op.operands]
        if any(s is None for s in scalars):
            return
        arrays = [
            round_to(np.array(s), v.type.element_type)
            for s, v in zip(scalars, op.operands, strict=True)
        ]
        folded = float(evaluate(op, arrays, reference=False))
        if not math.isfinite(folded):
            return  # constants must be finite (see molten.constant)
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


def canonicalization_patterns() -> tuple[RewritePattern, ...]:
    return (
        RemoveIdentityOperand(),
        FoldDoubleNegation(),
        FoldSplatOperands(),
        SplatToScalarConstant(),
        AbsorbOperandBroadcast(),
        RemoveNoOpShapeChange(),
    )
