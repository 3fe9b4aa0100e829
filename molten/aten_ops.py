"""The ATen table: how each ATen op torch.export records is written in
molten ops (`ATEN_OPS`, filled by the `@aten(...)` handlers below), and the
values the handlers take and give besides tensors (`Unavailable`,
`Concatenated`). `molten.from_torch` walks an FX graph and calls these.

A handler is `handler(g, *args, **kwargs)`: the graph being built, then the
node's arguments as torch.export recorded them, with tensors as the graph's
`Tensor`s. It raises a MoltenError for what Molten does not take; the
translation names the ATen op and the user's line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from molten.dialects.molten import ELEMENTWISE_UNARY_OPS, GeluOp
from molten.errors import DTypeError, UnsupportedError
from molten.ir import Tensor

DTYPES = {
    "torch.float32": "float32",
    "torch.float16": "float16",
    "torch.bfloat16": "bfloat16",
    "torch.int64": "int64",
    "torch.int32": "int32",
    "torch.int8": "int8",
    "torch.uint8": "uint8",
    "torch.bool": "bool",
}
"""The torch dtypes a Molten tensor may have, by their names."""
FLOAT_DTYPES = ("float32", "float16", "bfloat16")

Handler = Callable[..., Any]
ATEN_OPS: dict[str, Handler] = {}
"""How each ATen op (`aten.<name>.<overload>`) is written in molten ops:
`handler(g, *args, **kwargs)` with the node's arguments, tensors as the
graph's `Tensor`s."""


def aten(*names: str) -> Callable[[Handler], Handler]:
    """Registers a handler for the ATen ops `names` (without `aten.`)."""

    def register(handler: Handler) -> Handler:
        for name in names:
            ATEN_OPS[f"aten.{name}"] = handler
        return handler

    return register


@dataclass(frozen=True)
class Unavailable:
    """A value the graph does not compute (a module's step counter, the
    indices of a max): an op that reads it is refused, naming `what`."""

    what: str


@dataclass(frozen=True)
class Concatenated:
    """`torch.cat(parts, axis)` kept as its parts: a weight concat (q, k and
    v's weights side by side) that a linear or matmul reads and a split or
    slice at the parts' edges takes apart again. Each product is computed
    per part (sibling matmuls of one input, which fuse-epilogue fuses
    again), so no concatenation of weights is materialized. Any other
    reader (`CONCAT_READERS`) or an output gets the concatenation (the
    translation's `_materialized`: `DataflowGraph.concat`)."""

    parts: tuple[Tensor, ...]
    axis: int
    """Non-negative, in the parts' rank."""

    def sizes(self) -> list[Any]:
        return [part.shape[self.axis] for part in self.parts]


_KEEPS_CONCAT = (
    "aten.linear.default",
    "aten.mm.default",
    "aten.matmul.default",
    "aten.t.default",
)
"""The ops whose result of a `Concatenated` operand is one again."""
_SPLITS = ("aten.split.Tensor", "aten.split_with_sizes.default", "aten.slice.Tensor")
CONCAT_READERS = ("aten.cat.default", *_KEEPS_CONCAT, *_SPLITS)
"""The ATen ops that take a `Concatenated` value."""


# ---------------------------------------------------------------------------
# The ops.
# ---------------------------------------------------------------------------


def _unsupported(op: str, what: str) -> UnsupportedError:
    return UnsupportedError(f"{op}: {what} is not supported by Molten yet")


@aten("add.Tensor", "add.Scalar")
def _add(g, a, b, alpha=1):
    return g.add(a, b if alpha == 1 else _scaled(g, b, alpha))


@aten("sub.Tensor", "sub.Scalar")
def _sub(g, a, b, alpha=1):
    return g.sub(a, b if alpha == 1 else _scaled(g, b, alpha))


@aten("rsub.Scalar", "rsub.Tensor")
def _rsub(g, a, b, alpha=1):
    return g.sub(b, a if alpha == 1 else _scaled(g, a, alpha))


def _scaled(g, x, alpha):
    return g.mul(x, alpha) if isinstance(x, Tensor) else x * alpha


@aten("mul.Tensor", "mul.Scalar")
def _mul(g, a, b):
    return g.mul(a, b)


@aten("div.Tensor", "div.Scalar", "div.Tensor_mode")
def _div(g, a, b, rounding_mode=None):
    """a / b; with rounding_mode "floor", a // b; with "trunc", the quotient
    toward zero (integers: (a - fmod(a, b)) // b, exact)."""
    if rounding_mode is None:
        return g.div(a, b)
    if rounding_mode == "floor":
        return g.floor_divide(a, b)
    if rounding_mode != "trunc":
        raise _unsupported("aten.div", f"rounding_mode={rounding_mode!r}")
    if any(_is_float(v) for v in (a, b)):
        return g.trunc(g.div(a, b))
    return g.floor_divide(g.sub(a, g.fmod(a, b)), b)


def _is_float(v: Any) -> bool:
    """A float tensor or a Python float."""
    if isinstance(v, Tensor):
        return v.dtype in FLOAT_DTYPES
    return isinstance(v, float)


@aten("pow.Tensor_Scalar", "pow.Tensor_Tensor")
def _pow(g, x, exponent):
    return g.pow(x, exponent)


def _unary(method: str) -> Handler:
    return lambda g, x: getattr(g, method)(x)


for _op in ELEMENTWISE_UNARY_OPS:  # their ATen names are Molten's
    if _op is not GeluOp:  # gelu takes `approximate`: its own handler below
        _name = _op.name.removeprefix("molten.")
        aten(f"{_name}.default")(_unary(_name))


@aten("gelu.default")
def _gelu(g, x, approximate="none"):
    return g.gelu(x, approximate)


@aten("clamp.default", "clamp.Tensor")
def _clamp(g, x, min=None, max=None):  # noqa: A002 (torch's names)
    if min is not None:
        x = g.max(x, min)
    if max is not None:
        x = g.min(x, max)
    return x


@aten("clamp_min.default")
def _clamp_min(g, x, min):  # noqa: A002
    return g.max(x, min)


@aten("clamp_max.default")
def _clamp_max(g, x, max):  # noqa: A002
    return g.min(x, max)


@aten("hardtanh.default")
def _hardtanh(g, x, min_val=-1.0, max_val=1.0):
    return g.min(g.max(x, min_val), max_val)


@aten("relu6.default")
def _relu6(g, x):
    return g.min(g.max(x, 0.0), 6.0)


@aten("leaky_relu.default")
def _leaky_relu(g, x, negative_slope=0.01):
    return g.add(g.max(x, 0.0), g.mul(g.min(x, 0.0), negative_slope))


@aten("elu.default")
def _elu(g, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """scale * (max(x, 0) + alpha * (exp(min(x, 0) * input_scale) - 1))."""
    negative = g.mul(g.sub(g.exp(g.mul(g.min(x, 0.0), input_scale)), 1.0), alpha)
    return g.mul(g.add(g.max(x, 0.0), negative), scale)


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


@aten("selu.default")
def _selu(g, x):
    return _elu(g, x, SELU_ALPHA, SELU_SCALE)


@aten("hardsigmoid.default")
def _hardsigmoid(g, x):
    return g.min(g.max(g.add(g.div(x, 6.0), 0.5), 0.0), 1.0)


@aten("hardswish.default")
def _hardswish(g, x):
    return g.mul(x, _hardsigmoid(g, x))


@aten("softplus.default")
def _softplus(g, x, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta as max(bx, 0) + log(1 + exp(-|bx|)),
    which never overflows (torch's threshold returns x where the two
    differ by less than exp(-threshold))."""
    bx = x if beta == 1 else g.mul(x, beta)
    y = g.add(g.max(bx, 0.0), g.log(g.add(g.exp(g.neg(g.abs(bx))), 1.0)))
    return y if beta == 1 else g.div(y, beta)


@aten("mish.default")
def _mish(g, x):
    return g.mul(x, g.tanh(_softplus(g, x)))


@aten("maximum.default", "max.other")
def _maximum(g, a, b):
    return g.max(a, b)


@aten("minimum.default", "min.other")
def _minimum(g, a, b):
    return g.min(a, b)


def _dims(x: Tensor, dims: Any) -> list[int]:
    """A reduction's axes: all where torch gives none."""
    if dims is None or (isinstance(dims, list | tuple) and not dims):
        return list(range(x.shape.rank))
    return [dims] if isinstance(dims, int) else list(dims)


def _no_dtype(op: str, dtype: Any) -> None:
    if dtype is not None:
        raise _unsupported(op, f"dtype={dtype}")


@aten("sum.dim_IntList", "sum.default")
def _sum(g, x, dims=None, keepdim=False, *, dtype=None):
    _no_dtype("aten.sum", dtype)
    return g.reduce_sum(x, _dims(x, dims), keepdim)


@aten("mean.dim", "mean.default")
def _mean(g, x, dims=None, keepdim=False, *, dtype=None):
    _no_dtype("aten.mean", dtype)
    return g.reduce_mean(x, _dims(x, dims), keepdim)


@aten("amax.default")
def _amax(g, x, dims=(), keepdim=False):
    return g.reduce_max(x, _dims(x, dims), keepdim)


@aten("amin.default")
def _amin(g, x, dims=(), keepdim=False):
    return g.neg(g.reduce_max(g.neg(x), _dims(x, dims), keepdim))


@aten("triu.default")
def _triu(g, x, diagonal=0):
    return g.triu(x, diagonal)


@aten("tril.default")
def _tril(g, x, diagonal=0):
    return g.tril(x, diagonal)


@aten("cumsum.default")
def _cumsum(g, x, dim, *, dtype=None):
    _no_dtype("aten.cumsum", dtype)
    return g.cumsum(x, dim)


@aten("cumprod.default")
def _cumprod(g, x, dim, *, dtype=None):
    _no_dtype("aten.cumprod", dtype)
    return g.cumprod(x, dim)


@aten("cummax.default")
def _cummax(g, x, dim):
    return g.cummax(x, dim)


@aten("cummin.default")
def _cummin(g, x, dim):
    return g.cummin(x, dim)


@aten("flip.default")
def _flip(g, x, dims):
    return g.flip(x, dims)


@aten("max.dim")
def _max_dim(g, x, dim, keepdim=False):
    return g.max_with_indices(x, dim, keepdim)


@aten("min.dim")
def _min_dim(g, x, dim, keepdim=False):
    return g.min_with_indices(x, dim, keepdim)


@aten("argmax.default")
def _argmax(g, x, dim=None, keepdim=False):
    return g.argmax(x, dim, keepdim)


@aten("argmin.default")
def _argmin(g, x, dim=None, keepdim=False):
    return g.argmin(x, dim, keepdim)


@aten("max.default")
def _max_all(g, x):
    return g.reduce_max(x, _dims(x, None))


@aten("min.default")
def _min_all(g, x):
    return _amin(g, x, None)


@aten("logsumexp.default")
def _logsumexp(g, x, dims, keepdim=False):
    """max + log(sum(exp(x - max))) over `dims`."""
    axes = _dims(x, dims)
    top = g.reduce_max(x, axes, keepdim=True)
    sums = g.reduce_sum(g.exp(g.sub(x, top)), axes, keepdim=keepdim)
    return g.add(g.log(sums), top if keepdim else g.reshape(top, list(sums.shape)))


@aten("softmax.int", "_softmax.default")
def _softmax(g, x, dim, dtype_or_half=None):
    if dtype_or_half not in (None, False):
        raise _unsupported("aten.softmax", f"a result dtype ({dtype_or_half})")
    return g.softmax(x, dim)


@aten("log_softmax.int", "_log_softmax.default")
def _log_softmax(g, x, dim, dtype_or_half=None):
    """x - max - log(sum(exp(x - max))) along `dim`."""
    if dtype_or_half not in (None, False):
        raise _unsupported("aten.log_softmax", f"a result dtype ({dtype_or_half})")
    shifted = g.sub(x, g.reduce_max(x, dim, keepdim=True))
    return g.sub(shifted, g.log(g.reduce_sum(g.exp(shifted), dim, keepdim=True)))


def _filled(g, shape, like: Tensor, value: float) -> Tensor:
    """A constant of `value` of `shape`, of `like`'s dtype (a norm's
    weight or bias where the module has none)."""
    return g.constant(value, list(shape), like.dtype)


@aten("layer_norm.default")
def _layer_norm(g, x, shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    weight = weight if weight is not None else _filled(g, shape, x, 1.0)
    bias = bias if bias is not None else _filled(g, shape, x, 0.0)
    return g.layer_norm(x, weight, bias, eps)


@aten("group_norm.default")
def _group_norm(g, x, groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """x [N, C, ...] normalized over each group of C / groups channels (and
    the axes after C), then scaled and shifted per channel."""
    shape = list(x.shape)
    grouped = g.reshape(x, [shape[0], groups, -1])
    centered = g.sub(grouped, g.reduce_mean(grouped, -1, keepdim=True))
    variance = g.reduce_mean(g.square(centered), -1, keepdim=True)
    normed = g.reshape(g.mul(centered, g.rsqrt(g.add(variance, eps))), shape)
    return _per_channel(g, normed, weight, bias)


def _per_channel(g, x, weight, bias):
    """x * weight + bias, weight and bias [C] along axis 1 of x."""
    along = [x.shape[1], *([1] * (x.shape.rank - 2))]
    if weight is not None:
        x = g.mul(x, g.reshape(weight, along))
    if bias is not None:
        x = g.add(x, g.reshape(bias, along))
    return x


@aten("batch_norm.default")
def _batch_norm(
    g, x, weight, bias, mean, var, training=False, momentum=0.1, eps=1e-5, *rest
):
    """(x - mean) / sqrt(var + eps) * weight + bias per channel (axis 1):
    the running statistics in eval mode, the batch's (biased variance)
    in training mode, whose update of the running statistics the graph
    leaves out."""
    if training or mean is None:
        axes = [a for a in range(x.shape.rank) if a != 1]
        centered = g.sub(x, g.reduce_mean(x, axes, keepdim=True))
        variance = g.reduce_mean(g.square(centered), axes, keepdim=True)
        return _per_channel(
            g, g.mul(centered, g.rsqrt(g.add(variance, eps))), weight, bias
        )
    along = [x.shape[1], *([1] * (x.shape.rank - 2))]
    scale = g.rsqrt(g.add(g.reshape(var, along), eps))
    normed = g.mul(g.sub(x, g.reshape(mean, along)), scale)
    return _per_channel(g, normed, weight, bias)


@aten("rms_norm.default")
def _rms_norm(g, x, shape, weight=None, eps=None):
    weight = weight if weight is not None else _filled(g, shape, x, 1.0)
    if eps is None:  # torch's default: the machine epsilon of x's dtype
        import torch  # loaded: its graph is being translated

        eps = float(torch.finfo(getattr(torch, x.dtype)).eps)
    return g.rms_norm(x, weight, eps)


@aten("linear.default")
def _linear(g, x, weight, bias=None):
    if isinstance(weight, Concatenated):
        return _linear_of_parts(g, x, weight, bias)
    if isinstance(bias, Concatenated):
        raise _unsupported("aten.linear", "a concatenated bias of one weight")
    y = g.matmul(x, weight, transpose_b=True)
    return y if bias is None else g.add(y, bias)


def _linear_of_parts(g, x, weight: Concatenated, bias) -> Concatenated:
    """x @ cat(w_i).T (+ cat(b_i)): the products of the parts, side by side
    along the last axis."""
    if weight.axis != 0 or x.shape.rank < 1:
        raise _unsupported("aten.linear", "a weight concatenated along its K axis")
    biases: list[Any] = [None] * len(weight.parts)
    if isinstance(bias, Concatenated):
        if bias.sizes() != weight.sizes():
            raise _unsupported(
                "aten.linear", "a concatenated bias split unlike its weight"
            )
        biases = list(bias.parts)
    elif bias is not None:
        raise _unsupported("aten.linear", "one bias for a concatenated weight")
    parts = tuple(
        _linear(g, x, w, b) for w, b in zip(weight.parts, biases, strict=True)
    )
    return Concatenated(parts, parts[0].shape.rank - 1)


@aten("mm.default", "bmm.default", "matmul.default")
def _matmul(g, a, b):
    if isinstance(a, Concatenated):
        raise _unsupported("aten.matmul", "a concatenated left operand")
    if isinstance(b, Concatenated):
        if b.parts[0].shape.rank != 2 or b.axis != 1:
            raise _unsupported(
                "aten.matmul", "a right operand concatenated other than along N"
            )
        parts = tuple(g.matmul(a, part) for part in b.parts)
        return Concatenated(parts, parts[0].shape.rank - 1)
    return g.matmul(a, b)


@aten("addmm.default")
def _addmm(g, bias, a, b, *, beta=1, alpha=1):
    y = g.matmul(a, b)
    y = y if alpha == 1 else g.mul(y, alpha)
    return g.add(y, bias if beta == 1 else g.mul(bias, beta))


@aten("scaled_dot_product_attention.default")
def _sdpa(
    g,
    q,
    k,
    v,
    attn_mask=None,
    dropout_p=0.0,
    is_causal=False,
    *,
    scale=None,
    enable_gqa=False,
):
    """softmax(q kᵀ scale [+ mask]) v; a float mask is added to the scores
    (written out: fuse-attention takes the sum into the attention kernel),
    a bool one keeps the scores where it is True (the others get the
    dtype's least finite value: Molten's constants are finite, so a row
    masked whole averages its values where torch gives NaN); with
    enable_gqa, each KV head repeated for its query heads."""
    op = "aten.scaled_dot_product_attention"
    if dropout_p:
        raise _unsupported(op, f"dropout_p={dropout_p}")
    if enable_gqa and q.shape[-3] != k.shape[-3]:
        groups = q.shape[-3] // k.shape[-3]
        k, v = _repeat_heads(g, k, groups), _repeat_heads(g, v, groups)
    if attn_mask is None:
        return g.attention(q, k, v, scale=scale, causal=bool(is_causal))
    if attn_mask.dtype == "bool":
        least = g.constant(LEAST_FINITE[q.dtype], dtype=q.dtype)
        attn_mask = g.where(attn_mask, g.constant(0.0, dtype=q.dtype), least)
    elif attn_mask.dtype not in FLOAT_DTYPES:
        raise _unsupported(op, f"an attn_mask of {attn_mask.dtype}")
    if scale is None:
        head = q.shape[-1]
        if not isinstance(head, int):
            raise _unsupported(op, "a named head dimension without scale=")
        scale = head**-0.5
    scores = g.mul(g.matmul(q, k, transpose_b=True), scale)
    weights = g.softmax(g.add(scores, attn_mask), -1)
    return g.matmul(weights, v)


LEAST_FINITE = {
    "float32": float(np.finfo(np.float32).min),
    "float16": float(np.finfo(np.float16).min),
    "bfloat16": -3.3895313892515355e38,  # (2 - 2**-7) * 2**127
}


def _repeat_heads(g, x: Tensor, groups: int) -> Tensor:
    """[..., H, S, E] -> [..., H * groups, S, E], each head `groups` times
    in a row (repeat_interleave along the heads, as Hugging Face's
    repeat_kv writes it)."""
    *batch, heads, rows, dim = list(x.shape)
    spread = g.broadcast_to(
        g.reshape(x, [*batch, heads, 1, rows, dim]), [*batch, heads, groups, rows, dim]
    )
    return g.reshape(spread, [*batch, heads * groups, rows, dim])


def _reduced(g, x: Tensor, reduction: int) -> Tensor:
    """A loss's reduction (ATen's enum): 0 none, 1 mean, 2 sum."""
    if reduction == 0:
        return x
    axes = list(range(x.shape.rank))
    return g.reduce_mean(x, axes) if reduction == 1 else g.reduce_sum(x, axes)


def _huber(g, x, target, delta):
    """Elementwise c (|x - t| - c / 2) with c = min(|x - t|, delta): a
    square below delta, a line above (the Huber loss)."""
    distance = g.abs(g.sub(x, target))
    c = g.min(distance, delta)
    return g.mul(c, g.sub(distance, g.mul(c, 0.5)))


@aten("huber_loss.default")
def _huber_loss(g, x, target, reduction=1, delta=1.0):
    return _reduced(g, _huber(g, x, target, delta), reduction)


@aten("smooth_l1_loss.default")
def _smooth_l1_loss(g, x, target, reduction=1, beta=1.0):
    if beta == 0:
        return _reduced(g, g.abs(g.sub(x, target)), reduction)
    return _reduced(g, g.div(_huber(g, x, target, beta), beta), reduction)


@aten("mse_loss.default")
def _mse_loss(g, x, target, reduction=1):
    return _reduced(g, g.square(g.sub(x, target)), reduction)


@aten("l1_loss.default")
def _l1_loss(g, x, target, reduction=1):
    return _reduced(g, g.abs(g.sub(x, target)), reduction)


FLOAT32_TINY = 1.1754943508222875e-38
"""The least normal f32: log(max(t, it)) is finite at t = 0."""


@aten("kl_div.default")
def _kl_div(g, x, target, reduction=1, log_target=False):
    """target (log target - x) pointwise (0 where target is 0, as xlogy),
    or exp(target) (target - x) for a log target."""
    if log_target:
        pointwise = g.mul(g.exp(target), g.sub(target, x))
    else:
        log_target_ = g.log(g.max(target, FLOAT32_TINY))
        pointwise = g.mul(target, g.sub(log_target_, x))
    return _reduced(g, pointwise, reduction)


@aten("broadcast_tensors.default")
def _broadcast_tensors(g, tensors):
    shape = list(np.broadcast_shapes(*(tuple(t.shape) for t in tensors)))
    return [t if list(t.shape) == shape else g.broadcast_to(t, shape) for t in tensors]


@aten("sym_size.int")
def _sym_size(g, x, dim):
    """A size of x: a number, or the name of a named dimension."""
    return x.shape[dim]


@aten("view.default", "reshape.default", "_unsafe_view.default")
def _reshape(g, x, shape):
    return g.reshape(x, list(shape))


@aten("permute.default")
def _permute(g, x, dims):
    return g.transpose(x, list(dims))


@aten("transpose.int")
def _transpose(g, x, dim0, dim1):
    order = list(range(x.shape.rank))
    order[dim0], order[dim1] = order[dim1], order[dim0]
    return g.transpose(x, order)


@aten("numpy_T.default")
def _numpy_t(g, x):
    return g.transpose(x, list(reversed(range(x.shape.rank))))


@aten("t.default")
def _t(g, x):
    if isinstance(x, Concatenated):
        return Concatenated(tuple(_t(g, part) for part in x.parts), 1 - x.axis)
    return x if x.shape.rank < 2 else g.transpose(x, [1, 0])


@aten("cat.default")
def _cat(g, tensors, dim=0):
    """Kept as its parts (`Concatenated`): Molten computes no concatenation."""
    parts: list[Tensor] = []
    rank = None
    for t in tensors:
        inner = t.parts if isinstance(t, Concatenated) else (t,)
        parts += inner
        rank = inner[0].shape.rank
    axis = dim % rank
    if any(isinstance(t, Concatenated) and t.axis != axis for t in tensors):
        raise _unsupported("aten.cat", "a cat of cats along another axis")
    return Concatenated(tuple(parts), axis)


def _parts_at(x: Concatenated, dim: int, op: str) -> None:
    if dim % x.parts[0].shape.rank != x.axis:
        raise _unsupported(op, "a split of a torch.cat across its parts' axis")


def _bounds(size: int, start: Any, end: Any) -> tuple[int, int]:
    """torch's slice bounds (None, negative, past the end) as [first, last)."""
    first = 0 if start is None else (start + size if start < 0 else start)
    last = size if end is None else (end + size if end < 0 else end)
    first, last = min(max(first, 0), size), min(max(last, 0), size)
    return first, max(first, last)


@aten("split_with_sizes.default")
def _split_with_sizes(g, x, sizes, dim=0):
    if not isinstance(x, Concatenated):
        dim = dim % x.shape.rank
        offsets = np.cumsum([0, *sizes]).tolist()
        return [
            g.slice(x, dim, first, size)
            for first, size in zip(offsets, sizes, strict=False)
        ]
    _parts_at(x, dim, "aten.split_with_sizes")
    if list(sizes) != x.sizes():
        raise _unsupported(
            "aten.split_with_sizes",
            f"sizes {list(sizes)} other than the torch.cat's parts {x.sizes()}",
        )
    return list(x.parts)


@aten("split.Tensor")
def _split(g, x, size, dim=0):
    if not isinstance(x, Concatenated):
        total = x.shape[dim % x.shape.rank]
        sizes = [min(size, total - first) for first in range(0, total, size)]
        return _split_with_sizes(g, x, sizes, dim)
    return _split_with_sizes(g, x, [size] * len(x.parts), dim)


@aten("slice.Tensor")
def _slice(g, x, dim=0, start=None, end=None, step=1):
    """A window of a computed tensor; one part of a torch.cat, sliced at
    its edges."""
    if step != 1:
        raise _unsupported("aten.slice", f"a step of {step}")
    if not isinstance(x, Concatenated):
        dim = dim % x.shape.rank
        first, last = _bounds(x.shape[dim], start, end)
        if (first, last) == (0, x.shape[dim]):
            return x
        if first == last:
            raise _unsupported("aten.slice", "an empty slice")
        return g.slice(x, dim, first, last - first)
    _parts_at(x, dim, "aten.slice")
    edges = np.cumsum([0, *x.sizes()]).tolist()
    first, last = _bounds(edges[-1], start, end)
    for i, part in enumerate(x.parts):
        if (first, last) == (edges[i], edges[i + 1]):
            return part
        if edges[i] <= first and last <= edges[i + 1]:  # inside one part
            return _slice(g, part, x.axis, first - edges[i], last - edges[i])
    # Across parts (transformers' mask builders slice a cat of positions):
    # the concatenation itself, then the window.
    return _slice(g, g.concat(list(x.parts), x.axis), x.axis, first, last)


@aten("narrow.default")
def _narrow(g, x, dim, start, length):
    return _slice(g, x, dim, start, start + length if start >= 0 else None)


@aten("select.int")
def _select(g, x, dim, index):
    dim = dim % x.shape.rank
    shape = list(x.shape)
    index = index + shape[dim] if index < 0 else index
    row = g.slice(x, dim, index, 1) if shape[dim] != 1 else x
    return g.reshape(row, shape[:dim] + shape[dim + 1 :])


def _like(value: float) -> Handler:
    def handler(
        g, x, *, dtype=None, layout=None, device=None, pin_memory=None,
        memory_format=None,
    ):  # fmt: skip
        return g.full_like(x, value, _creation_dtype("aten.full_like", dtype))

    return handler


aten("zeros_like.default")(_like(0))
aten("ones_like.default")(_like(1))


@aten("expand.default")
def _expand(g, x, sizes, *, implicit=False):
    own = list(x.shape)
    lead = len(sizes) - len(own)
    shape = [own[i - lead] if s == -1 else s for i, s in enumerate(sizes)]
    return x if shape == own else g.broadcast_to(x, shape)


@aten("unsqueeze.default")
def _unsqueeze(g, x, dim):
    shape = list(x.shape)
    dim = dim if dim >= 0 else dim + len(shape) + 1
    return g.reshape(x, [*shape[:dim], 1, *shape[dim:]])


@aten("squeeze.dim", "squeeze.dims", "squeeze.default")
def _squeeze(g, x, dims=None):
    shape = list(x.shape)
    rank = len(shape)
    axes = range(rank) if dims is None else [dims] if isinstance(dims, int) else dims
    drop = {a % rank for a in axes if shape[a % rank] == 1}
    kept = [d for i, d in enumerate(shape) if i not in drop]
    return g.reshape(x, kept) if kept != shape else x


@aten(
    "contiguous.default",
    "clone.default",
    "alias.default",
    "detach.default",
    "lift_fresh_copy.default",
)
def _same(g, x, *, memory_format=None):
    return x


@aten("dropout.default")
def _dropout(g, x, p, train):
    if train and p:
        raise _unsupported("aten.dropout", "training mode")
    return x


def _binary(method: str) -> Handler:
    return lambda g, a, b: getattr(g, method)(a, b)


for _method, _names in {
    "eq": ("eq.Tensor", "eq.Scalar"),
    "ne": ("ne.Tensor", "ne.Scalar"),
    "lt": ("lt.Tensor", "lt.Scalar"),
    "le": ("le.Tensor", "le.Scalar"),
    "gt": ("gt.Tensor", "gt.Scalar"),
    "ge": ("ge.Tensor", "ge.Scalar"),
    "logical_and": ("logical_and.default",),
    "logical_or": ("logical_or.default",),
    "logical_xor": ("logical_xor.default",),
    "bitwise_and": ("bitwise_and.Tensor", "bitwise_and.Scalar", "__and__.Tensor"),
    "bitwise_or": ("bitwise_or.Tensor", "bitwise_or.Scalar", "__or__.Tensor"),
    "bitwise_xor": ("bitwise_xor.Tensor", "bitwise_xor.Scalar", "__xor__.Tensor"),
    "shift_left": (
        "bitwise_left_shift.Tensor",
        "bitwise_left_shift.Tensor_Scalar",
        "__lshift__.Tensor",
        "__lshift__.Scalar",
    ),
    "shift_right": (
        "bitwise_right_shift.Tensor",
        "bitwise_right_shift.Tensor_Scalar",
        "__rshift__.Tensor",
        "__rshift__.Scalar",
    ),
    "floor_divide": ("floor_divide.default", "floor_divide.Scalar"),
    "remainder": ("remainder.Tensor", "remainder.Scalar"),
    "fmod": ("fmod.Tensor", "fmod.Scalar"),
    "atan2": ("atan2.default",),
}.items():
    aten(*_names)(_binary(_method))


@aten("where.self", "where.ScalarOther", "where.ScalarSelf", "where.Scalar")
def _where(g, condition, a, b):
    return g.where(condition, a, b)


@aten("masked_fill.Scalar", "masked_fill.Tensor")
def _masked_fill(g, x, mask, value):
    return g.masked_fill(x, mask, _scalar_of(value, "aten.masked_fill"))


def _scalar_of(value: Any, op: str) -> Any:
    """A fill value: a number, or a 0-d tensor that is a constant."""
    if not isinstance(value, Tensor):
        return value
    raise _unsupported(op, "a fill value computed by the graph (a tensor)")


@aten("embedding.default")
def _embedding(g, weight, indices, padding_idx=-1, scale_grad=False, sparse=False):
    return g.embedding(indices, weight)


@aten("index_select.default")
def _index_select(g, x, dim, index):
    return g.index_select(x, dim, index)


@aten("gather.default")
def _gather(g, x, dim, index, *, sparse_grad=False):
    return g.gather(x, dim, index)


def _index_shaped(g, source, index):
    """`source` cut to the shape of `index` (torch's scatter reads only the
    part of source the index covers)."""
    for axis, (have, want) in enumerate(zip(source.shape, index.shape, strict=True)):
        if have != want:
            source = g.slice(source, axis, 0, want)
    return source


@aten("scatter.src")
def _scatter(g, x, dim, index, src):
    return g.scatter(x, dim, index, _index_shaped(g, src, index))


@aten("scatter.value")
def _scatter_value(g, x, dim, index, value):
    return g.scatter(x, dim, index, value)


@aten("scatter_add.default")
def _scatter_add(g, x, dim, index, src):
    return g.scatter_add(x, dim, index, _index_shaped(g, src, index))


@aten("index_copy.default")
def _index_copy(g, x, dim, index, source):
    return g.index_copy(x, dim, index, source)


@aten("index_add.default")
def _index_add(g, x, dim, index, source, *, alpha=1):
    return g.index_add(x, dim, index, source, alpha=alpha)


@aten("index_put.default")
def _index_put(g, x, indices, values, accumulate=False):
    """x[..., idx, ...] = values (+= with accumulate): one 1-D index tensor,
    at the axis where it is given, the values broadcast to the slices."""
    given = [i for i, t in enumerate(indices) if t is not None]
    if len(given) != 1:
        raise _unsupported("aten.index_put", f"{len(given)} index tensors at once")
    (axis,) = given
    idx = indices[axis]
    if idx.dtype == "bool" or idx.shape.rank != 1:
        raise _unsupported("aten.index_put", f"an index {idx.type} (1-D ids are)")
    shape = list(x.shape)
    shape[axis] = idx.shape[0]
    if not isinstance(values, Tensor):
        values = g.full(shape, values, x.dtype)
    values = g.broadcast_to(_in(g, values, x), shape)
    if accumulate:
        return g.index_add(x, axis, idx, values)
    return g.index_copy(x, axis, idx, values)


def _creation_dtype(op: str, dtype: Any) -> str | None:
    if dtype is None:
        return None
    name = DTYPES.get(str(dtype))
    if name is None:
        raise DTypeError(f"{op}: dtype {dtype}; Molten takes {', '.join(DTYPES)}")
    return name


@aten("arange.default", "arange.start", "arange.start_step")
def _arange(g, *bounds, dtype=None, layout=None, device=None, pin_memory=None):
    return g.arange(*bounds, dtype=_creation_dtype("aten.arange", dtype))


@aten("full.default")
def _full(g, size, value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return g.full(list(size), value, _creation_dtype("aten.full", dtype))


def _filled_as(value: float) -> Handler:
    def handler(g, size, *, dtype=None, layout=None, device=None, pin_memory=None):
        name = _creation_dtype(f"aten.{'ones' if value else 'zeros'}", dtype)
        return g.full(list(size), value, name or "float32")

    return handler


aten("zeros.default")(_filled_as(0))
aten("ones.default")(_filled_as(1))


@aten("full_like.default")
def _full_like(
    g, x, value, *, dtype=None, layout=None, device=None, pin_memory=None,
    memory_format=None,
):  # fmt: skip
    return g.full_like(x, value, _creation_dtype("aten.full_like", dtype))


@aten("scalar_tensor.default")
def _scalar_tensor(g, value, *, dtype=None, layout=None, device=None, pin_memory=None):
    return g.constant(
        value, dtype=_creation_dtype("aten.scalar_tensor", dtype) or "float32"
    )


@aten("asinh.default")
def _asinh(g, x):
    """log(x + sqrt(x² + 1))."""
    x = _as_float(g, x)
    return g.log(g.add(x, g.sqrt(g.add(g.square(x), 1.0))))


@aten("acosh.default")
def _acosh(g, x):
    """log(x + sqrt(x² - 1)) (NaN below 1, as torch)."""
    x = _as_float(g, x)
    return g.log(g.add(x, g.sqrt(g.sub(g.square(x), 1.0))))


@aten("atanh.default")
def _atanh(g, x):
    """log((1 + x) / (1 - x)) / 2."""
    x = _as_float(g, x)
    return g.mul(g.log(g.div(g.add(x, 1.0), g.sub(1.0, x))), 0.5)


def _as_float(g, x: Tensor) -> Tensor:
    return x if x.dtype in FLOAT_DTYPES else g.cast(x, "float32")


@aten("div.Scalar_mode")
def _div_scalar_mode(g, a, b, *, rounding_mode=None):
    return _div(g, a, b, rounding_mode)


@aten("pow.Scalar")
def _pow_scalar(g, base, exponent):
    return g.pow(base, exponent)


@aten("fill.Scalar")
def _fill(g, x, value):
    return g.full_like(x, value)


@aten("empty.memory_format")
def _empty(g, size, *, dtype=None, layout=None, device=None, pin_memory=None,
           memory_format=None):  # fmt: skip
    """Memory whose values are undefined: zeros."""
    return g.full(list(size), 0, _creation_dtype("aten.empty", dtype) or "float32")


@aten("empty_strided.default")
def _empty_strided(g, size, stride, *, dtype=None, layout=None, device=None,
                   pin_memory=None):  # fmt: skip
    return _empty(g, size, dtype=dtype)


@aten("copy.default")
def _copy(g, x, src, non_blocking=False):
    """src broadcast to x's shape, in x's dtype (the functional copy_)."""
    if src.dtype != x.dtype:
        src = g.cast(src, x.dtype)
    return src if src.shape == x.shape else g.broadcast_to(src, list(x.shape))


@aten("constant_pad_nd.default")
def _constant_pad_nd(g, x, pad, value=0):
    """Pads (before, after) from the last axis back; a negative pad slices."""
    for i in range(0, len(pad), 2):
        axis = x.shape.rank - 1 - i // 2
        before, after = pad[i], pad[i + 1]
        if before < 0 or after < 0:
            size = x.shape[axis]
            start, stop = max(-before, 0), size - max(-after, 0)
            x = g.slice(x, axis, start, stop - start)
            before, after = max(before, 0), max(after, 0)
        if not before and not after:
            continue
        padded = g.pad(x, axis, before, after)
        if value:
            inside = g.pad(g.full_like(x, True, "bool"), axis, before, after)
            padded = g.where(inside, padded, value)
        x = padded
    return x


@aten("pad.default")
def _pad(g, x, pad, mode="constant", value=None):
    if mode != "constant":
        raise _unsupported("aten.pad", f"mode={mode!r}")
    return _constant_pad_nd(g, x, pad, value or 0)


@aten("repeat.default")
def _repeat(g, x, repeats):
    """Each axis tiled `repeats` times: x broadcast along a new axis before
    each of its axes, then the pairs merged."""
    lead = len(repeats) - x.shape.rank
    shape = [1] * lead + list(x.shape)
    spread, tiled = [], []
    for times, size in zip(repeats, shape, strict=True):
        spread += [1, size]
        tiled += [times, size]
    wide = g.broadcast_to(g.reshape(x, spread), tiled)
    return g.reshape(wide, [t * n for t, n in zip(repeats, shape, strict=True)])


@aten("any.default", "any.dim", "any.dims")
def _any(g, x, dim=None, keepdim=False):
    """Whether any element along `dim` is nonzero: the greatest of x != 0."""
    nonzero = g.cast(g.ne(x, 0), "float32")
    axes = list(range(x.shape.rank)) if dim is None else _dims(x, dim)
    return g.gt(g.reduce_max(nonzero, axes, keepdim), 0.0)


@aten("var.correction", "var.dim")
def _var(g, x, dims=None, unbiased=None, keepdim=False, *, correction=None):
    """The mean squared deviation times n / (n - correction)."""
    axes = list(range(x.shape.rank)) if dims is None else _dims(x, dims)
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    n = int(np.prod([x.shape[a] for a in axes]))
    centered = g.sub(x, g.reduce_mean(x, axes, keepdim=True))
    variance = g.reduce_mean(g.square(centered), axes, keepdim)
    return g.mul(variance, n / max(n - correction, 0) if n > correction else np.nan)


@aten("native_layer_norm.default")
def _native_layer_norm(g, x, shape, weight, bias, eps):
    return (
        _layer_norm(g, x, shape, weight, bias, eps),
        Unavailable("the mean of aten.native_layer_norm"),
        Unavailable("the rstd of aten.native_layer_norm"),
    )


@aten("native_group_norm.default")
def _native_group_norm(g, x, weight, bias, n, channels, hw, groups, eps):
    return (
        _group_norm(g, x, groups, weight, bias, eps),
        Unavailable("the mean of aten.native_group_norm"),
        Unavailable("the rstd of aten.native_group_norm"),
    )


@aten("_native_batch_norm_legit_no_training.default")
def _batch_norm_no_training(g, x, weight, bias, mean, var, momentum, eps):
    return (
        _batch_norm(g, x, weight, bias, mean, var, False, momentum, eps),
        Unavailable("the saved mean of aten._native_batch_norm_legit"),
        Unavailable("the saved rstd of aten._native_batch_norm_legit"),
    )


@aten("_native_batch_norm_legit.default", "_native_batch_norm_legit.no_stats")
def _batch_norm_legit(g, x, weight, bias, *rest):
    """The batch's statistics (training), or the running ones (eval)."""
    if len(rest) == 6:  # running mean and var given
        mean, var, training, momentum, eps = rest[0], rest[1], *rest[2:5]
    else:
        mean = var = None
        training, momentum, eps = rest[0], rest[1], rest[2]
    out = _batch_norm(g, x, weight, bias, mean, var, training, momentum, eps)
    return (
        out,
        Unavailable("the saved mean of aten._native_batch_norm_legit"),
        Unavailable("the saved rstd of aten._native_batch_norm_legit"),
    )


@aten("index.Tensor")
def _index(g, x, indices):
    """x[..., idx, ...]: index tensors at adjacent axes (broadcast together,
    as transformers' mask builders index a padding mask by batch and key),
    one lookup of x with those axes merged, at each index's linear
    position (a negative index counting from the end)."""
    given = [i for i, t in enumerate(indices) if t is not None]
    if not given:
        return x
    first = given[0]
    if given != list(range(first, first + len(given))):
        raise _unsupported("aten.index", "index tensors at axes apart")
    if any(indices[i].dtype == "bool" for i in given):
        raise _unsupported("aten.index", "a bool mask (its shape depends on it)")
    if len(given) == 1:
        return g.take(x, indices[first], first)
    shape = list(x.shape)
    sizes = shape[first : first + len(given)]
    if not all(isinstance(n, int) for n in sizes):
        raise _unsupported("aten.index", "several index tensors over named sizes")
    linear, stride = None, 1
    for axis, size in reversed(list(zip(given, sizes, strict=True))):
        idx = indices[axis]
        idx = idx if idx.dtype == "int64" else g.cast(idx, "int64")
        idx = g.where(idx < 0, idx + size, idx)
        term = idx if stride == 1 else idx * stride
        linear = term if linear is None else linear + term
        stride *= size
    merged = g.reshape(x, [*shape[:first], stride, *shape[first + len(given) :]])
    return g.take(merged, linear, first)


@aten("slice_scatter.default")
def _slice_scatter(g, x, src, dim=0, start=None, end=None, step=1):
    """x with src written over x[start:end] along `dim`: src padded to x's
    shape and chosen inside the window."""
    if step != 1:
        raise _unsupported("aten.slice_scatter", f"a step of {step}")
    dim = dim % x.shape.rank
    first, last = _bounds(x.shape[dim], start, end)
    after = x.shape[dim] - last
    inside = g.pad(g.full_like(src, True, "bool"), dim, first, after)
    return g.where(inside, g.pad(_in(g, src, x), dim, first, after), x)


@aten("select_scatter.default")
def _select_scatter(g, x, src, dim, index):
    dim = dim % x.shape.rank
    index = index + x.shape[dim] if index < 0 else index
    row = g.reshape(src, [*list(src.shape)[:dim], 1, *list(src.shape)[dim:]])
    return _slice_scatter(g, x, row, dim, index, index + 1)


def _in(g, src: Tensor, x: Tensor) -> Tensor:
    return src if src.dtype == x.dtype else g.cast(src, x.dtype)


@aten("atan2.out")
def _atan2_out(g, a, b, *, out=None):
    """atan2 (torch.export functionalizes the write into `out`)."""
    return g.atan2(a, b)


@aten("diagonal.default")
def _diagonal(g, x, offset=0, dim1=0, dim2=1):
    """x's diagonal over (dim1, dim2) as its last axis: the two axes moved
    last and flattened, then read at the diagonal's constant offsets."""
    rank = x.shape.rank
    dim1, dim2 = dim1 % rank, dim2 % rank
    rest = [a for a in range(rank) if a not in (dim1, dim2)]
    moved = (
        g.transpose(x, [*rest, dim1, dim2])
        if rest + [dim1, dim2] != list(range(rank))
        else x
    )
    rows, cols = x.shape[dim1], x.shape[dim2]
    first_row, first_col = max(-offset, 0), max(offset, 0)
    length = min(rows - first_row, cols - first_col)
    if length <= 0:
        raise _unsupported("aten.diagonal", "an empty diagonal")
    flat = g.reshape(moved, [*(x.shape[a] for a in rest), rows * cols])
    at = [(first_row + i) * cols + first_col + i for i in range(length)]
    return g.take(flat, g.constant(at, dtype="int64"), len(rest))


def _distances(g, x1: Tensor, x2: Tensor, p: float) -> Tensor:
    """The p-norm distance of every row of x1 [..., P, M] to every row of
    x2 [..., R, M]: [..., P, R], from the differences (exact, where the
    expansion |a|² + |b|² - 2ab loses digits)."""
    a = g.reshape(x1, [*list(x1.shape)[:-1], 1, x1.shape[-1]])
    b = g.reshape(x2, [*list(x2.shape)[:-2], 1, *list(x2.shape)[-2:]])
    diff = g.abs(g.sub(a, b))
    if p == 2:
        return g.sqrt(g.reduce_sum(g.square(diff), -1))
    if p == float("inf"):
        return g.reduce_max(diff, -1)
    if p <= 0:
        raise _unsupported("aten.cdist", f"p={p}")
    return g.pow(g.reduce_sum(g.pow(diff, p), -1), 1 / p)


@aten("linalg_vector_norm.default")
def _vector_norm(g, x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ord-norm over `dim` (all axes by default): sqrt(sum x^2), the
    largest or least |x| at +-inf, the count of nonzeros at 0, else
    (sum |x|^ord)^(1/ord)."""
    _no_dtype("aten.linalg_vector_norm", dtype)
    axes = _dims(x, dim)
    magnitude = g.abs(x)
    if ord == 2:
        return g.sqrt(g.reduce_sum(g.square(x), axes, keepdim))
    if ord == float("inf"):
        return g.reduce_max(magnitude, axes, keepdim)
    if ord == float("-inf"):
        return g.neg(g.reduce_max(g.neg(magnitude), axes, keepdim))
    if ord == 0:
        return g.reduce_sum(g.cast(g.ne(x, 0.0), x.dtype), axes, keepdim)
    if ord == 1:
        return g.reduce_sum(magnitude, axes, keepdim)
    return g.pow(g.reduce_sum(g.pow(magnitude, ord), axes, keepdim), 1 / ord)


@aten("_cdist_forward.default", "cdist.default")
def _cdist(g, x1, x2, p=2.0, compute_mode=None):
    return _distances(g, x1, x2, p)


@aten("_pdist_forward.default", "pdist.default")
def _pdist(g, x, p=2.0):
    """The distances of the rows of x [N, M] pair by pair (i < j), in
    order: the upper triangle of their distance matrix."""
    n = x.shape[0]
    pairs = [i * n + j for i in range(n) for j in range(i + 1, n)]
    if not pairs:
        raise _unsupported("aten.pdist", "fewer than two rows")
    flat = g.reshape(_distances(g, x, x, p), [n * n])
    return g.take(flat, g.constant(pairs, dtype="int64"), 0)


@aten("sym_numel.default")
def _sym_numel(g, x):
    return int(np.prod(list(x.shape)))


@aten("sym_stride.int")
def _sym_stride(g, x, dim):
    """The row-major stride of `dim` (Molten's tensors are contiguous)."""
    return int(np.prod(list(x.shape)[dim % x.shape.rank + 1 :]))


@aten("sym_is_contiguous.default")
def _sym_is_contiguous(g, x, memory_format=None):
    return True  # Molten's tensors are contiguous, row-major


@aten("sym_storage_offset.default")
def _sym_storage_offset(g, x):
    return 0


@aten("to.dtype", "_to_copy.default", "to.dtype_layout", "type_as.default")
def _to(g, x, dtype=None, *args, **kwargs):
    target = kwargs.get("dtype", dtype)
    if isinstance(target, Tensor):  # type_as: the other tensor's dtype
        target = target.dtype
    name = target if target in DTYPES.values() else DTYPES.get(str(target))
    if target is None or name == x.dtype:
        return x
    if name is None:
        raise DTypeError(f"a cast to {target}; Molten takes {', '.join(DTYPES)}")
    return g.cast(x, name)


@aten("promote_types.default")
def _promote_types(g, a, b):
    """A dtype computed from two dtypes (Hugging Face's RMSNorm asks for
    the wider of its input's and f32): known when translating."""
    import torch

    return torch.promote_types(a, b)


@aten("_assert_tensor_metadata.default")
def _check_metadata(g, *args, **kwargs):
    return None  # torch.export's check of a value's dtype: nothing to compute
