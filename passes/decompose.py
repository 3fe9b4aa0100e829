"""`molten-decompose`: composite molten ops into primitives.

After it, fusion derives each kernel from the math:

    rms_norm(x, w) -> square, reduce_mean, add eps, rsqrt, mul, mul
    layer_norm     -> reduce_mean, sub, square, reduce_mean, add eps, rsqrt, mul,
                      mul, add
    softmax        -> reduce_max, sub, exp, reduce_sum, div   (max-subtracted)
    rope           -> mul, rotate_half, mul, add
    attention      -> matmul, mul scale, [add causal_mask], softmax, matmul

A composite on f16 or bf16 tensors is computed in f32 between a cast up and
one cast down at the end, as PyTorch upcasts these ops, so that no
intermediate (x^2, exp) overflows or loses precision in a narrow type.
`keep` names composites to leave alone (e.g. `molten-decompose{keep=attention}`
for a pipeline that fuses attention whole).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    Float32Type,
    IntegerAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException

from molten.dialects import molten

COMPUTE_TYPE = Float32Type()
"""The element type composites are computed in."""


class OpSequence:
    """Builds the primitive ops that replace one composite, types inferred."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def __call__(
        self,
        op_type: type[molten.MoltenOp],
        *operands: SSAValue,
        result_type: TensorType | None = None,
        **properties: Attribute,
    ) -> SSAValue:
        op = op_type.with_inferred_type(operands, properties, result_type)
        self.ops.append(op)
        return op.results[0]

    def scalar(self, value: float) -> SSAValue:
        """A rank-0 f32 constant."""
        op = molten.ConstantOp.from_values(value, TensorType(COMPUTE_TYPE, []))
        self.ops.append(op)
        return op.result

    def cast(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        """`value` as `element_type`, with no op when it already is."""
        assert isinstance(value.type, TensorType)
        if value.type.element_type == element_type:
            return value
        target = molten.tensor_type(molten.dims_of(value.type), element_type)
        return self(molten.CastOp, value, result_type=target)

    def upcast(self, *values: SSAValue) -> list[SSAValue]:
        return [self.cast(v, COMPUTE_TYPE) for v in values]


def _hint(op: Operation) -> str:
    if isinstance(op, molten.ConstantOp):
        return "cst"
    if isinstance(op, molten.CastOp):
        return f"{op.input.name_hint or 'x'}_f32"
    return op.name.removeprefix("molten.")


def _trailing_axes(x: SSAValue, param: SSAValue) -> Attribute:
    rank = len(x.type.get_shape())
    k = len(param.type.get_shape())
    return molten._int_array(range(rank - k, rank))


def _replace(
    rewriter: PatternRewriter, op: molten.MoltenOp, seq: OpSequence, out: SSAValue
):
    element = op.results[0].type.element_type
    result = seq.cast(out, element)
    # Intermediates are named after their op (xDSL would give them all the
    # composite's name); the composite's own name stays on the final value.
    for new_op in seq.ops:
        for value in new_op.results:
            if value is not result and value.name_hint is None:
                value.name_hint = _hint(new_op)
    rewriter.replace(op, seq.ops, [result])


class DecomposeRmsNorm(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.RmsNormOp, rewriter: PatternRewriter):
        seq = OpSequence()
        x, w = seq.upcast(op.input, op.weight)
        axes = _trailing_axes(op.input, op.weight)
        mean_square = seq(
            molten.ReduceMeanOp, seq(molten.SquareOp, x), axes=axes, keepdim=UnitAttr()
        )
        eps = seq.scalar(op.epsilon.value.data)
        inv_rms = seq(molten.RsqrtOp, seq(molten.AddOp, mean_square, eps))
        out = seq(molten.MulOp, seq(molten.MulOp, x, inv_rms), w)
        _replace(rewriter, op, seq, out)


class DecomposeLayerNorm(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.LayerNormOp, rewriter: PatternRewriter):
        seq = OpSequence()
        x, w, b = seq.upcast(op.input, op.weight, op.bias)
        axes = _trailing_axes(op.input, op.weight)
        mean = seq(molten.ReduceMeanOp, x, axes=axes, keepdim=UnitAttr())
        centered = seq(molten.SubOp, x, mean)
        variance = seq(
            molten.ReduceMeanOp,
            seq(molten.SquareOp, centered),
            axes=axes,
            keepdim=UnitAttr(),
        )
        eps = seq.scalar(op.epsilon.value.data)
        inv_std = seq(molten.RsqrtOp, seq(molten.AddOp, variance, eps))
        normalized = seq(molten.MulOp, centered, inv_std)
        out = seq(molten.AddOp, seq(molten.MulOp, normalized, w), b)
        _replace(rewriter, op, seq, out)


def _softmax(seq: OpSequence, x: SSAValue, axis: int) -> SSAValue:
    axes = molten._int_array([axis])
    row_max = seq(molten.ReduceMaxOp, x, axes=axes, keepdim=UnitAttr())
    exps = seq(molten.ExpOp, seq(molten.SubOp, x, row_max))
    total = seq(molten.ReduceSumOp, exps, axes=axes, keepdim=UnitAttr())
    return seq(molten.DivOp, exps, total)


class DecomposeSoftmax(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.SoftmaxOp, rewriter: PatternRewriter):
        seq = OpSequence()
        (x,) = seq.upcast(op.input)
        _replace(rewriter, op, seq, _softmax(seq, x, op.axis.value.data))


class DecomposeRope(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.RopeOp, rewriter: PatternRewriter):
        seq = OpSequence()
        x, cos, sin = seq.upcast(op.input, op.cos, op.sin)
        rotated = seq(molten.RotateHalfOp, x)
        out = seq(
            molten.AddOp,
            seq(molten.MulOp, x, cos),
            seq(molten.MulOp, rotated, sin),
        )
        _replace(rewriter, op, seq, out)


class DecomposeAttention(RewritePattern):
    """Into matmuls and a softmax, itself decomposed (unless kept)."""

    keep_softmax: bool

    def __init__(self, keep_softmax: bool = False):
        self.keep_softmax = keep_softmax

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.AttentionOp, rewriter: PatternRewriter):
        seq = OpSequence()
        q, k, v = seq.upcast(op.query, op.key, op.value)
        scores = seq(molten.MatmulOp, q, k, transpose_b=UnitAttr())
        scores = seq(molten.MulOp, scores, seq.scalar(op.scale.value.data))
        shape = molten.dims_of(scores.type)
        if op.causal is not None:
            mask_type = molten.tensor_type(shape[-2:], COMPUTE_TYPE)
            mask = seq(molten.CausalMaskOp, result_type=mask_type)
            scores = seq(molten.AddOp, scores, mask)
        last = len(shape) - 1
        if self.keep_softmax:
            probs = seq(molten.SoftmaxOp, scores, axis=IntegerAttr(last, i64))
        else:
            probs = _softmax(seq, scores, last)
        _replace(rewriter, op, seq, seq(molten.MatmulOp, probs, v))


def decompose_patterns(keep: Sequence[str] = ()) -> list[RewritePattern]:
    """The decomposition patterns for every composite not named in `keep`."""
    patterns: dict[str, RewritePattern] = {
        "rms_norm": DecomposeRmsNorm(),
        "layer_norm": DecomposeLayerNorm(),
        "softmax": DecomposeSoftmax(),
        "rope": DecomposeRope(),
        "attention": DecomposeAttention(keep_softmax="softmax" in keep),
    }
    return [p for name, p in patterns.items() if name not in keep]


@dataclass(frozen=True)
class MoltenDecompose(ModulePass):
    """Rewrites composite molten ops (rms_norm, layer_norm, softmax, rope,
    attention) into primitive molten ops."""

    name = "molten-decompose"

    keep: tuple[str, ...] = ()
    """Composites to leave as they are, by name without the dialect prefix."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        known = {c.name.removeprefix("molten.") for c in molten.COMPOSITE_OPS}
        unknown = sorted(set(self.keep) - known)
        if unknown:
            raise PassFailedException(
                f"molten-decompose: keep={','.join(unknown)} names no composite op "
                f"(composites: {', '.join(sorted(known))})"
            )
        PatternRewriteWalker(
            GreedyRewritePatternApplier(decompose_patterns(self.keep)),
            apply_recursively=True,
        ).rewrite_module(op)
