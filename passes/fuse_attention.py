"""`fuse-attention`: softmax(q @ kᵀ * scale [+ causal mask]) @ v as one kernel.

The pattern is found in the decomposed IR, the math a user writes or that
`molten-decompose` makes of `molten.attention`:

    s = matmul(q, k, transpose_b)        q [..., Sq, D], k [..., Sk, D]
    s = mul(s, c) | div(s, c)            any number of scalar factors
    s = add(s, causal_mask)              optional, top-left aligned
    p = softmax(s) over the last axis    max-subtracted or not, in f32
                                         between casts or not
    o = matmul(p, v)                     v [..., Sk, Dv]
    o = cast(o)                          optional

where q, k and v are f16 or bf16 tensors, read as they are or through a cast
up to f32 (the decomposition's own). The whole chain becomes one
`kernel.fused` of kind `attention`: the scores and probabilities never
leave the kernel. Each intermediate must have no other user.

What does not fuse (and stays the gemm, row_reduce, gemm kernels it was):
f32 operands (the kernel multiplies on tensor cores), head dimensions that
are not a multiple of 16, batch axes that differ between q, k and v
(broadcast KV heads), and masks or biases other than the causal mask.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    ModuleOp,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.dialects.molten import shape_of
from molten.passes.fusion import fuse, is_convex, is_fusible_root

HEAD_DIM_MULTIPLE = 16
"""Head dimensions the kernel takes: multiples of one mma's K (and of the
16 columns one ldmatrix.x4 gives P V)."""


@dataclass(frozen=True)
class AttentionPattern:
    """One attention found in the IR: the tensors q, k and v as stored (f16
    or bf16), the product of the scalar factors, whether the causal mask is
    added, and its ops from the casts to the output."""

    query: SSAValue
    key: SSAValue
    value: SSAValue
    scale: float
    causal: bool
    scores: molten.MatmulOp
    """q @ kᵀ."""
    weighted: molten.MatmulOp
    """p @ v."""
    output: SSAValue
    """The attention's result: p @ v, or its cast."""
    ops: tuple[Operation, ...]


def _only_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _owner(value: SSAValue, kind: type[Operation]) -> Operation | None:
    return value.owner if isinstance(value.owner, kind) else None


def _splat(value: SSAValue) -> float | None:
    op = _owner(value, molten.ConstantOp)
    if op is None or shape_of(value):
        return None
    return op.splat_value()


def _last_axis_keepdim(op: Operation | None, x: SSAValue) -> bool:
    return (
        isinstance(op, molten.ReductionOp)
        and op.operands[0] is x
        and list(op.axes.get_values()) == [len(shape_of(x)) - 1]
        and op.keepdim is not None
    )


def _softmax_of(probs: SSAValue) -> tuple[SSAValue, list[Operation]] | None:
    """The scores `probs` is the last-axis softmax of, and its ops:
    div(e, reduce_sum(e)) with e = exp(x - reduce_max(x)) or e = exp(x)."""
    div = _owner(probs, molten.DivOp)
    if div is None:
        return None
    exp, total = div.lhs, div.rhs
    exp_op, sum_op = _owner(exp, molten.ExpOp), total.owner
    if exp_op is None or not isinstance(sum_op, molten.ReduceSumOp):
        return None
    if not _last_axis_keepdim(sum_op, exp) or len(list(exp.uses)) != 2:
        return None
    ops: list[Operation] = [exp_op, sum_op, div]
    shifted = exp_op.operands[0]
    sub = _owner(shifted, molten.SubOp)
    if sub is not None and _last_axis_keepdim(sub.rhs.owner, sub.lhs):
        if _only_user(shifted) is not exp_op or _only_user(sub.rhs) is not sub:
            return None
        x = sub.lhs
        if len(list(x.uses)) != 2:  # the max and the subtraction
            return None
        return x, [sub.rhs.owner, sub, *ops]  # type: ignore[list-item]
    if _only_user(shifted) is not exp_op:
        return None
    return shifted, ops


def _scaled_scores(
    x: SSAValue,
) -> tuple[molten.MatmulOp, float, bool, list[Operation]] | None:
    """Back from the softmax's input through scalar factors and the causal
    mask to q @ kᵀ."""
    scale, causal, ops = 1.0, False, []
    while not isinstance(x.owner, molten.MatmulOp):
        op = x.owner
        if not isinstance(
            op, molten.MulOp | molten.DivOp | molten.AddOp | molten.CastOp
        ):
            return None
        if isinstance(op, molten.CastOp):  # the softmax's own upcast
            x = op.input
        elif isinstance(op, molten.AddOp):
            lhs_mask = isinstance(op.lhs.owner, molten.CausalMaskOp)
            mask, rest = (op.lhs, op.rhs) if lhs_mask else (op.rhs, op.lhs)
            if causal or not isinstance(mask.owner, molten.CausalMaskOp):
                return None
            if shape_of(mask)[-2:] != shape_of(rest)[-2:]:
                return None
            causal, x = True, rest
        else:
            factor = _splat(op.rhs)
            rest = op.lhs
            if factor is None and isinstance(op, molten.MulOp):
                factor, rest = _splat(op.lhs), op.rhs
            if factor is None or factor == 0.0:
                return None
            scale = scale * factor if isinstance(op, molten.MulOp) else scale / factor
            x = rest
        if _only_user(x) is not op:
            return None
        ops.append(op)
    mm = x.owner
    if mm.transpose_a is not None or mm.transpose_b is None:
        return None
    return mm, scale, causal, [mm, *reversed(ops)]


def _stored(
    operand: SSAValue, matmuls: tuple[Operation, ...]
) -> tuple[SSAValue, list[Operation]]:
    """The tensor a matmul operand reads: through its cast up to f32, when
    only the attention's `matmuls` use the cast (self-attention reads one
    tensor three times)."""
    cast = _owner(operand, molten.CastOp)
    if (
        cast is not None
        and isinstance(operand.type.element_type, Float32Type)  # type: ignore[attr-defined]
        and all(use.operation in matmuls for use in operand.uses)
    ):
        return cast.input, [cast]
    return operand, []


def match_attention(weighted: molten.MatmulOp) -> AttentionPattern | None:
    """The attention whose p @ v is `weighted`, if it is one the attention
    kernel computes (see the module docstring), else None."""
    if weighted.transpose_a is not None or weighted.transpose_b is not None:
        return None
    probs, prob_ops = weighted.lhs, []
    if _only_user(probs) is not weighted:
        return None
    if isinstance(cast := probs.owner, molten.CastOp):  # the softmax's downcast
        probs, prob_ops = cast.input, [cast]
        if _only_user(probs) is not cast:
            return None
    softmax = _softmax_of(probs)
    if softmax is None:
        return None
    x, softmax_ops = softmax
    scores = _scaled_scores(x)
    if scores is None:
        return None
    qk, scale, causal, score_ops = scores
    matmuls = (qk, weighted)
    query, q_ops = _stored(qk.lhs, matmuls)
    key, k_ops = _stored(qk.rhs, matmuls)
    value, v_ops = _stored(weighted.rhs, matmuls)
    elements = {t.type.element_type for t in (query, key, value)}  # type: ignore[attr-defined]
    if len(elements) != 1 or not isinstance(
        next(iter(elements)), Float16Type | BFloat16Type
    ):
        return None
    q_shape, k_shape, v_shape = (shape_of(t) for t in (query, key, value))
    if not (q_shape[:-2] == k_shape[:-2] == v_shape[:-2]):
        return None
    if q_shape[-1] % HEAD_DIM_MULTIPLE or v_shape[-1] % HEAD_DIM_MULTIPLE:
        return None
    output, out_ops = weighted.result, []
    cast = _only_user(weighted.result)
    if isinstance(cast, molten.CastOp):
        output, out_ops = cast.result, [cast]
    ops = tuple(
        dict.fromkeys(
            [
                *q_ops,
                *k_ops,
                *v_ops,
                *score_ops,
                *softmax_ops,
                *prob_ops,
                weighted,
                *out_ops,
            ]
        )
    )
    return AttentionPattern(query, key, value, scale, causal, qk, weighted, output, ops)


def attention_in(body: Block, where: str) -> AttentionPattern:
    """The attention an attention kernel's `body` computes."""
    for op in body.ops:
        if isinstance(op, molten.MatmulOp) and (found := match_attention(op)):
            return found
    raise NotImplementedError(
        f"{where}: the attention kernel's body is not softmax(q @ kᵀ * scale "
        "[+ causal mask]) @ v on f16 or bf16 tensors"
    )


class FuseAttentionPattern(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.MatmulOp, rewriter: PatternRewriter):
        if not is_fusible_root(op):
            return
        found = match_attention(op)
        if found is None:
            return
        group = set(found.ops)
        block = op.parent_block()
        if block is None or not is_convex(group, block):
            return
        fuse(rewriter, group, kernel.KernelKind.ATTENTION)


@dataclass(frozen=True)
class FuseAttention(ModulePass):
    """Fuses each softmax(q @ kᵀ * scale [+ causal mask]) @ v into one
    attention kernel."""

    name = "fuse-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            FuseAttentionPattern(), apply_recursively=False
        ).rewrite_module(op)
