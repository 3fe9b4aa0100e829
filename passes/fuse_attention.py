"""`fuse-attention`: softmax(f(q @ kᵀ)) @ v as one kernel.

The pattern is found in the decomposed IR, the math a user writes or that
`molten-decompose` makes of `molten.attention`:

    s = matmul(q, k, transpose_b)        q [..., Sq, D], k [..., Sk, D]
    x = f(s, ...)                        elementwise ops on the scores: a
                                         scale, the causal mask, an additive
                                         mask or bias given as a tensor
                                         (ALiBi written as math), casts
    p = softmax(x) over the last axis    max-subtracted or not, in f32
                                         between casts or not
    o = matmul(p, v)                     v [..., Sk, Dv]
    o = cast(o)                          optional

where q, k and v are f16 or bf16 tensors, read as they are or through a cast
up to f32 (the decomposition's own). The whole chain becomes one
`kernel.fused` of kind `attention`: the scores and probabilities never
leave the kernel, which evaluates f per element of each tile of scores.
Each intermediate must have no other user.

k and v may be shared across batch axes: broadcast by the matmuls, or
repeated by broadcast_to and reshape of their batch axes (grouped-query and
multi-query attention, as Hugging Face's repeat_kv writes it); the kernel
reads each stored KV head where a query head needs it.

What does not fuse (and stays the gemm, row_reduce, gemm kernels it was):
f32 operands (the kernel multiplies on tensor cores), head dimensions that
are not a multiple of 16.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    ModuleOp,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.dialects.molten import Dim, broadcasts_to, value_dims
from molten.passes.fusion import (
    ELEMENTWISE,
    GENERATORS,
    LAYOUTS,
    fuse,
    is_convex,
    is_fusible_root,
)
from molten.passes.lowering.emitter import broadcast_index
from molten.passes.schedule.common import KernelBody

HEAD_DIM_MULTIPLE = 16
"""Head dimensions the kernel takes: multiples of one mma's K (and of the
16 columns one ldmatrix.x4 gives P V)."""


@dataclass(frozen=True)
class AttentionPattern:
    """One attention found in the IR: the tensors q, k and v as stored (f16
    or bf16), its two matmuls, the softmax's input, whether the scores end
    in the causal mask, and its ops from the stored tensors to the output."""

    query: SSAValue
    key: SSAValue
    value: SSAValue
    causal: bool
    """Whether the scores end in the causal mask (see `_ends_in_causal_mask`)."""
    scores: molten.MatmulOp
    """q @ kᵀ."""
    logits: SSAValue
    """The softmax's input: the scores after the elementwise ops on them
    (scale, mask, bias), which the kernel evaluates per element."""
    weighted: molten.MatmulOp
    """p @ v."""
    output: SSAValue
    """The attention's result: p @ v, or its cast."""
    ops: tuple[Operation, ...]
    group: int = 1
    """How many consecutive query heads read the same K and V (`query_group`)."""

    def record(self, inputs: Sequence[SSAValue]) -> kernel.AttentionMatchAttr:
        """The #kernel.attention_match of a kernel of `inputs` computing it."""
        where = list(inputs)
        return kernel.AttentionMatchAttr(
            where.index(self.query),
            where.index(self.key),
            where.index(self.value),
            self.group,
            self.causal,
        )


def _only_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _owner(value: SSAValue, kind: type[Operation]) -> Operation | None:
    return value.owner if isinstance(value.owner, kind) else None


def _last_axis_keepdim(op: Operation | None, x: SSAValue) -> bool:
    return (
        isinstance(op, molten.ReductionOp)
        and op.operands[0] is x
        and list(op.axes.get_values()) == [len(value_dims(x)) - 1]
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


MAX_SCORE_OPS = 16
"""The most elementwise ops between q @ kᵀ and the softmax that are searched."""


def _score_path(x: SSAValue, depth: int = 0) -> list[Operation] | None:
    """The ops from q @ kᵀ to the softmax's input `x`: a matmul with kᵀ, then
    elementwise ops each taking the previous one's single-use result (their
    other operands are read per element: a scale, a mask, a bias)."""
    op = x.owner
    if isinstance(op, molten.MatmulOp):
        if op.transpose_a is None and op.transpose_b is not None:
            return [op]
        return None
    if depth >= MAX_SCORE_OPS or not isinstance(op, ELEMENTWISE):
        return None
    for operand in op.operands:
        if _only_user(operand) is not op or value_dims(operand) != value_dims(x):
            continue
        path = _score_path(operand, depth + 1)
        if path is not None:
            return [*path, op]
    return None


_HEAD_MAPS = (molten.CastOp, molten.BroadcastToOp, molten.ReshapeOp)
"""Ops the kernel folds into where it reads a tensor: between a stored q, k
or v and its matmul, a cast up to f32 and KV heads repeated for
grouped-query attention (a broadcast and reshapes of the batch axes only);
before an operand of the ops on the scores, a bias cast up to f32."""


def _operand_producers(path: list[Operation]) -> list[Operation]:
    """The casts, broadcasts and reshapes that make the other operands of the
    ops on the scores (a bias cast up to f32), used nowhere else, and the
    elementwise work on inputs and positions that makes a mask (a causal or
    padding mask from iota comparisons, logical ops and where): the kernel
    computes them per element where it reads the operand. A mask's ops
    that other kernels use too (every layer's attention) stay for them,
    each kernel computing its own."""
    producers: list[Operation] = []
    for op in path[1:]:
        for operand in op.operands:
            user = op
            while isinstance(producer := operand.owner, _HEAD_MAPS):
                if producer in path or _only_user(operand) is not user:
                    break
                producers.append(producer)
                operand, user = producer.operands[0], producer
            if operand.owner not in path:
                producers += _mask_ops(operand, value_dims(path[-1].results[0]))
    return list(dict.fromkeys(producers))


_MASK_MAPS = (molten.ReshapeOp, molten.BroadcastToOp)


def _mask_ops(value: SSAValue, scores: Sequence[Dim]) -> list[Operation]:
    """The ops computing `value` (an operand of an op on the scores) from
    inputs and generators (iota) alone, elementwise or through reshapes and
    broadcasts, each of a shape that broadcasts into the `scores`' (so that
    the kernel computes an element per score it reads); none if some op on
    the way is not of those kinds (a matmul, a reduction, a larger
    tensor)."""
    found: list[Operation] = []
    # (a value, whether a reshape or broadcast reads it: it then need not
    # broadcast into the scores itself, its view does)
    stack = [(value, False)]
    while stack:
        current, viewed = stack.pop()
        op = current.owner
        if not isinstance(op, Operation) or isinstance(op, GENERATORS):
            continue  # an input, or a generator (cloned into the kernel)
        if not is_fusible_root(op) or not isinstance(op, (*ELEMENTWISE, *_MASK_MAPS)):
            return []
        if not viewed and not broadcasts_to(value_dims(current), scores):
            return []
        if op not in found:
            found.append(op)
            view = isinstance(op, _MASK_MAPS)
            stack.extend((operand, view) for operand in op.operands)
    return found


def _ends_in_causal_mask(path: list[Operation]) -> bool:
    """Whether the last op before the softmax (casts aside) adds the causal
    mask: keys after the query then weigh exactly nothing, and the kernel
    skips the tiles that hold only such keys."""
    for op in reversed(path):
        if isinstance(op, molten.CastOp):
            continue
        return isinstance(op, molten.AddOp) and any(
            isinstance(v.owner, molten.CausalMaskOp) for v in op.operands
        )
    return False


def _stored(
    operand: SSAValue, matmuls: tuple[Operation, ...]
) -> tuple[SSAValue, list[Operation]]:
    """The tensor a matmul operand reads, through casts, broadcasts and
    reshapes that keep its last two axes, each used only on the way to the
    attention's `matmuls` (self-attention reads one tensor three times)."""
    ops: list[Operation] = []
    users: tuple[Operation, ...] = matmuls
    while isinstance(op := operand.owner, _HEAD_MAPS):
        source = op.operands[0]
        if not all(use.operation in users for use in operand.uses):
            break
        source_dims = value_dims(source)
        if source_dims[-2:] != value_dims(operand)[-2:] or len(source_dims) < 2:
            break
        if isinstance(op, molten.CastOp) and not isinstance(
            operand.type.element_type,  # type: ignore[attr-defined]
            Float32Type,
        ):
            break
        ops.append(op)
        operand, users = source, (op,)
    return operand, list(reversed(ops))


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
    score_ops = _score_path(x)
    if score_ops is None:
        return None
    qk = score_ops[0]
    assert isinstance(qk, molten.MatmulOp)
    matmuls = (qk, weighted)
    query, q_ops = _stored(qk.lhs, matmuls)
    key, k_ops = _stored(qk.rhs, matmuls)
    value, v_ops = _stored(weighted.rhs, matmuls)
    elements = {t.type.element_type for t in (query, key, value)}  # type: ignore[attr-defined]
    if len(elements) != 1 or not isinstance(
        next(iter(elements)), Float16Type | BFloat16Type
    ):
        return None
    head, value_head = value_dims(query)[-1], value_dims(value)[-1]
    if not isinstance(head, int) or not isinstance(value_head, int):
        return None
    if head % HEAD_DIM_MULTIPLE or value_head % HEAD_DIM_MULTIPLE:
        return None
    # Named sizes only in the sequences' axes: the batch axes (heads) fixed.
    if any(
        isinstance(d, str)
        for t in (query, key, value, weighted.result)
        for d in value_dims(t)[:-2]
    ):
        return None
    output, out_ops = weighted.result, []
    cast = _only_user(weighted.result)
    if isinstance(cast, molten.CastOp):
        output, out_ops = cast.result, [cast]
    # The heads put back side by side ([H, T, D] -> [T, H * D]): the kernel
    # stores its result where the layout sends it.
    while isinstance(layout := _only_user(output), LAYOUTS):
        output, out_ops = layout.results[0], [*out_ops, layout]
    ops = tuple(
        dict.fromkeys(
            [
                *q_ops,
                *k_ops,
                *v_ops,
                *_operand_producers(score_ops),
                *score_ops,
                *softmax_ops,
                *prob_ops,
                weighted,
                *out_ops,
            ]
        )
    )
    found = AttentionPattern(
        query, key, value, _ends_in_causal_mask(score_ops), qk, x, weighted, output, ops
    )
    return dataclasses.replace(found, group=query_group(found))


def stored_offset(
    operand: SSAValue,
    stored: SSAValue,
    batch_index: Sequence[Any],
    batch_shape: Sequence[int],
    ravel: Callable[[list[Any], Sequence[Dim]], Any],
    unravel: Callable[[Any, Sequence[Dim]], list[Any]],
) -> Any:
    """Where the matrix a matmul `operand` reads at `batch_index` (of the
    matmul's `batch_shape`) starts in the `stored` tensor it comes from:
    through the matmul's broadcast of batch axes, then back through the
    casts, broadcasts and reshapes between them (which keep the last two
    axes). `ravel(index, shape)` and `unravel(linear, shape)` do the index
    arithmetic: on a kernel's index values, or on numpy arrays of every
    batch at once."""
    shape = value_dims(operand)
    index = [*broadcast_index(batch_index, shape[:-2], batch_shape), 0, 0]
    value = operand
    while value is not stored:
        op = value.owner
        source = op.operands[0]  # type: ignore[union-attr]
        if isinstance(op, molten.BroadcastToOp):
            index = broadcast_index(index, value_dims(source), value_dims(value))
        elif isinstance(op, molten.ReshapeOp):
            index = unravel(ravel(index, value_dims(value)), value_dims(source))
        value = source
    return ravel(index, value_dims(stored))


SEQUENCE_STAND_IN = 7
"""The size `query_group` gives a named sequence axis: which matrices share K
and V follows from the batch axes alone (the ops between a stored tensor
and its matmul keep the last two axes), whatever the sequences' length."""


def query_group(found: AttentionPattern) -> int:
    """How many consecutive batch matrices (query heads) share their K and V
    matrices while their queries are consecutive in memory (one matrix of
    q after another): the query rows an attention kernel's block may run
    through for each K and V tile it reads. 1 where none are shared."""
    batch_shape = [int(d) for d in value_dims(found.weighted.result)[:-2]]
    batches = math.prod(batch_shape)
    if batches == 1:
        return 1
    every_batch = list(np.indices(batch_shape).reshape(len(batch_shape), -1))

    def sized(shape: Sequence[Dim]) -> list[int]:
        return [d if isinstance(d, int) else SEQUENCE_STAND_IN for d in shape]

    def offsets(operand: SSAValue, stored: SSAValue) -> np.ndarray:
        found_offsets = stored_offset(
            operand,
            stored,
            every_batch,
            batch_shape,
            lambda index, shape: np.ravel_multi_index(index, sized(shape)),
            lambda linear, shape: list(np.unravel_index(linear, sized(shape))),
        )
        return np.broadcast_to(found_offsets, (batches,))

    sq, d = sized(value_dims(found.scores.lhs)[-2:])
    queries = offsets(found.scores.lhs, found.query)
    if not np.array_equal(queries, np.arange(batches) * sq * d):
        return 1
    keys = offsets(found.scores.rhs, found.key)
    values = offsets(found.weighted.rhs, found.value)
    for group in range(batches, 1, -1):
        if batches % group:
            continue
        first = np.arange(batches) // group * group
        if np.array_equal(keys, keys[first]) and np.array_equal(values, values[first]):
            return group
    return 1


def attention_of(body: KernelBody) -> AttentionPattern:
    """The attention an attention kernel computes, as fuse-attention
    recorded it (#kernel.attention_match): q, k and v the inputs it names;
    q @ kᵀ and p @ v the body's two matmuls, in order; the logits the
    softmax's input."""
    matched = body.matched
    assert isinstance(matched, kernel.AttentionMatchAttr)  # the verifier's
    scores, weighted = body.matmuls
    probs = weighted.lhs
    if isinstance(cast := probs.owner, molten.CastOp):  # the softmax's downcast
        probs = cast.input
    softmax = _softmax_of(probs)
    assert softmax is not None, "an attention kernel's p @ v reads a softmax"
    return AttentionPattern(
        query=body.inputs[matched.query.data],
        key=body.inputs[matched.key.data],
        value=body.inputs[matched.value.data],
        causal=bool(matched.causal.data),
        scores=scores,
        logits=softmax[0],
        weighted=weighted,
        output=body.outputs[0],
        ops=tuple(op for op in body.ops if not isinstance(op, kernel.YieldOp)),
        group=matched.group.data,
    )


class FuseAttentionPattern(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.MatmulOp, rewriter: PatternRewriter):
        if not is_fusible_root(op):
            return
        found = match_attention(op)
        if found is None:
            return
        if any(
            isinstance(t.owner, GENERATORS)
            for t in (found.query, found.key, found.value)
        ):
            return  # the kernel reads q, k and v from its inputs
        group = set(found.ops)
        block = op.parent_block()
        if block is None or not is_convex(group, block):
            return
        fused = fuse(rewriter, group, kernel.KernelKind.ATTENTION)
        if fused is not None:
            fused.matched = found.record(fused.inputs)


@dataclass(frozen=True)
class FuseAttention(ModulePass):
    """Fuses each softmax(f(q @ kᵀ)) @ v (f: a scale, masks, biases) into
    one attention kernel."""

    name = "fuse-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            FuseAttentionPattern(), apply_recursively=False
        ).rewrite_module(op)
