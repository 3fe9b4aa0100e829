"""The CPU interpreter against independent float64 numpy formulas, op by op."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from conftest import (
    DTYPES,
    NATIVE_TOL,
    REFERENCE_TOL,
    assert_close,
    assert_storage,
    erf,
    one_op_graph,
    rand,
    rand_signed_away_from_zero,
    round_to_dtype,
)
from test_integer_ops import COVERED

import molten
from molten.dialects.molten import Molten
from molten.interpreters.molten import MoltenFunctions
from molten.ir import DataflowGraph


@dataclass
class Spec:
    shapes: list[tuple[int, ...]]
    build: Callable
    formula: Callable  # float64 numpy, on the float64 inputs
    gen: Callable | None = None  # gen(rng, shape, dtype) -> inputs (one per shape)
    ops: tuple[str, ...] = ()  # the ops the graph holds (for coverage)


def uniform(low, high):
    return lambda rng, shapes, dtype: [rand(rng, s, dtype, low, high) for s in shapes]


def positive(rng, shapes, dtype):
    return [rand(rng, s, dtype, 0.1, 10.0) for s in shapes]


def nonzero(rng, shapes, dtype):
    return [rand_signed_away_from_zero(rng, s, dtype) for s in shapes]


def div_inputs(rng, shapes, dtype):
    return [
        rand(rng, shapes[0], dtype),
        rand_signed_away_from_zero(rng, shapes[1], dtype),
    ]


def pow_inputs(rng, shapes, dtype):
    return [
        rand(rng, shapes[0], dtype, 0.5, 2.0),
        rand(rng, shapes[1], dtype, -2.0, 2.0),
    ]


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def rotate_half_ref(x):
    h = x.shape[-1] // 2
    out = np.empty_like(x)
    for i in range(x.shape[-1]):
        out[..., i] = -x[..., i + h] if i < h else x[..., i - h]
    return out


def matmul_ref(a, b, transpose_a=False, transpose_b=False):
    sub_a = "...ki" if transpose_a else "...ik"
    sub_b = "...jk" if transpose_b else "...kj"
    return np.einsum(f"{sub_a},{sub_b}->...ij", a, b)


def as_f32(value):
    """Composites compute with eps and scale as f32 values, as PyTorch does."""
    return float(np.float32(value))


def rms_norm_ref(x, w, eps):
    eps = as_f32(eps)
    axes = tuple(range(x.ndim - w.ndim, x.ndim))
    n = math.prod(w.shape)
    ms = np.sum(x**2, axis=axes, keepdims=True) / n
    return x / np.sqrt(ms + eps) * w


def layer_norm_ref(x, w, b, eps):
    eps = as_f32(eps)
    axes = tuple(range(x.ndim - w.ndim, x.ndim))
    n = math.prod(w.shape)
    mu = np.sum(x, axis=axes, keepdims=True) / n
    var = np.sum((x - mu) ** 2, axis=axes, keepdims=True) / n  # biased
    return (x - mu) / np.sqrt(var + eps) * w + b


def softmax_ref(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def rope_ref(x, cos, sin):
    """Pairs (i, i + d/2) rotated, HF Llama's rotate-half convention."""
    c = np.broadcast_to(cos, x.shape)
    s = np.broadcast_to(sin, x.shape)
    h = x.shape[-1] // 2
    out = np.empty_like(x)
    for i in range(h):
        out[..., i] = x[..., i] * c[..., i] - x[..., i + h] * s[..., i]
        out[..., i + h] = x[..., i + h] * c[..., i + h] + x[..., i] * s[..., i + h]
    return out


def attention_ref(q, k, v, scale, causal):
    """A naive loop: key j is visible to query i iff j <= i (top-left) when causal."""
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    q = np.broadcast_to(q, batch + q.shape[-2:])
    k = np.broadcast_to(k, batch + k.shape[-2:])
    v = np.broadcast_to(v, batch + v.shape[-2:])
    sq, sk, dv = q.shape[-2], k.shape[-2], v.shape[-1]
    scale = as_f32(scale)
    out = np.zeros(batch + (sq, dv))
    for idx in np.ndindex(*batch):
        for i in range(sq):
            visible = [j for j in range(sk) if not causal or j <= i]
            scores = [scale * float(np.dot(q[idx][i], k[idx][j])) for j in visible]
            top = max(scores)
            weights = [math.exp(s - top) for s in scores]
            total = sum(weights)
            for w, j in zip(weights, visible, strict=True):
                out[idx][i] += (w / total) * v[idx][j]
    return out


def hf_rope_tables(positions, dim, base=10000.0):
    inv_freq = 1.0 / base ** (np.arange(0, dim, 2) / dim)
    freqs = np.outer(positions, inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


def rope_inputs(rng, shapes, dtype):
    x = rand(rng, shapes[0], dtype)
    cos, sin = hf_rope_tables(np.arange(shapes[1][0]), shapes[1][1])
    return [x, round_to_dtype(cos, dtype), round_to_dtype(sin, dtype)]


def _binary(op, formula, shapes, gen=None):
    return Spec(shapes, lambda g, a, b: getattr(g, op)(a, b), formula, gen, (op,))


def _unary(op, formula, gen=None, shape=(4, 6), **kw):
    return Spec([shape], lambda g, a: getattr(g, op)(a, **kw), formula, gen, (op,))


SPECS: dict[str, Spec] = {
    "add": _binary("add", lambda a, b: a + b, [(3, 5), (5,)]),
    "add-3d": _binary("add", lambda a, b: a + b, [(4, 1, 6), (5, 1)]),
    "sub": _binary("sub", lambda a, b: a - b, [(3, 1), (1, 5)]),
    "mul": _binary("mul", lambda a, b: a * b, [(3, 5), ()]),
    "div": _binary("div", lambda a, b: a / b, [(3, 5), (3, 1)], div_inputs),
    "max": _binary("max", lambda a, b: np.where(a >= b, a, b), [(3, 5), (5,)]),
    "min": _binary("min", lambda a, b: np.where(a <= b, a, b), [(2, 3, 5), (3, 5)]),
    "pow": _binary(
        "pow", lambda a, b: np.exp(b * np.log(a)), [(3, 5), (3, 5)], pow_inputs
    ),
    "neg": _unary("neg", lambda x: -x),
    "abs": _unary("abs", lambda x: np.where(x < 0, -x, x)),
    "exp": _unary("exp", lambda x: np.e**x, uniform(-3, 3)),
    "log": _unary("log", np.log, positive),
    "sqrt": _unary("sqrt", lambda x: x**0.5, positive),
    "rsqrt": _unary("rsqrt", lambda x: x**-0.5, positive),
    "reciprocal": _unary("reciprocal", lambda x: x**-1.0, nonzero),
    "square": _unary("square", lambda x: x**2),
    "tanh": _unary("tanh", lambda x: (np.exp(2 * x) - 1) / (np.exp(2 * x) + 1)),
    "sigmoid": _unary("sigmoid", sigmoid, uniform(-6, 6)),
    "relu": _unary("relu", lambda x: np.where(x > 0, x, 0.0)),
    "gelu": _unary(
        "gelu", lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))), uniform(-4, 4)
    ),
    "gelu-tanh": _unary("gelu", gelu_tanh, uniform(-4, 4), approximate="tanh"),
    "silu": _unary("silu", lambda x: x * sigmoid(x), uniform(-6, 6)),
    "rotate_half": _unary("rotate_half", rotate_half_ref, shape=(3, 8)),
    "rotate_half-3d": _unary("rotate_half", rotate_half_ref, shape=(2, 3, 4)),
    "reduce_sum": Spec(
        [(3, 4, 5)],
        lambda g, x: g.reduce_sum(x, [0, 2]),
        lambda x: x.sum(axis=2).sum(axis=0),
        ops=("reduce_sum",),
    ),
    "reduce_sum-keepdim": Spec(
        [(3, 4)],
        lambda g, x: g.reduce_sum(x, -1, keepdim=True),
        lambda x: x.sum(axis=1)[:, None],
        ops=("reduce_sum",),
    ),
    "reduce_max": Spec(
        [(3, 4, 5)],
        lambda g, x: g.reduce_max(x, 1, keepdim=True),
        lambda x: np.maximum.reduce(x, axis=1)[:, None, :],
        ops=("reduce_max",),
    ),
    "reduce_max-all": Spec(
        [(3, 4)],
        lambda g, x: g.reduce_max(x, [0, 1], keepdim=True),
        lambda x: np.full((1, 1), x.max()),
        ops=("reduce_max",),
    ),
    "reduce_mean": Spec(
        [(3, 4, 5)],
        lambda g, x: g.reduce_mean(x, -1),
        lambda x: x.sum(axis=-1) / 5,
        ops=("reduce_mean",),
    ),
    "reduce_mean-2axes": Spec(
        [(3, 4, 6)],
        lambda g, x: g.reduce_mean(x, [0, 2], keepdim=True),
        lambda x: x.sum(axis=(0, 2), keepdims=True) / 18,
        ops=("reduce_mean",),
    ),
    "broadcast_to": Spec(
        [(4,)],
        lambda g, x: g.broadcast_to(x, [2, 3, 4]),
        lambda x: np.tile(x, (2, 3, 1)),
        ops=("broadcast_to",),
    ),
    "broadcast_to-middle": Spec(
        [(3, 1)],
        lambda g, x: g.broadcast_to(x, [3, 5]),
        lambda x: np.repeat(x, 5, axis=1),
        ops=("broadcast_to",),
    ),
    "reshape": Spec(
        [(3, 4)],
        lambda g, x: g.reshape(x, [2, -1]),
        lambda x: np.array(x.ravel().tolist()).reshape(2, 6),
        ops=("reshape",),
    ),
    "transpose": Spec(
        [(2, 3, 4)],
        lambda g, x: g.transpose(x, [2, 0, 1]),
        lambda x: np.einsum("abc->cab", x),
        ops=("transpose",),
    ),
    "cumsum": Spec(
        [(3, 4)],
        lambda g, x: g.cumsum(x, 1, exclusive=True),
        lambda x: np.stack([x[:, :i].sum(axis=1) for i in range(4)], axis=1),
        ops=("cumsum",),
    ),
    "cumprod": Spec(
        [(3, 4)],
        lambda g, x: g.cumprod(x, 1, reverse=True),
        lambda x: np.stack([x[:, i:].prod(axis=1) for i in range(4)], axis=1),
        ops=("cumprod",),
    ),
    "cummax": Spec(
        [(3, 4)],
        lambda g, x: g.cummax(x, 1)[0],
        lambda x: np.stack([x[:, : i + 1].max(axis=1) for i in range(4)], axis=1),
        ops=("cummax",),
    ),
    "cummin": Spec(
        [(3, 4)],
        lambda g, x: g.cummin(x, 0)[0],
        lambda x: np.stack([x[: i + 1].min(axis=0) for i in range(3)], axis=0),
        ops=("cummin",),
    ),
    "flip": Spec(
        [(3, 4)], lambda g, x: g.flip(x, [0]), lambda x: x[::-1], ops=("flip",)
    ),
    "triu": Spec(
        [(2, 3, 4)],
        lambda g, x: g.triu(x, 1),
        lambda x: np.where(np.arange(4)[None, :] - np.arange(3)[:, None] >= 1, x, 0),
        ops=("triu",),
    ),
    "tril": Spec(
        [(4, 3)],
        lambda g, x: g.tril(x, -1),
        lambda x: np.where(np.arange(3)[None, :] - np.arange(4)[:, None] <= -1, x, 0),
        ops=("tril",),
    ),
    "slice": Spec(
        [(3, 8)], lambda g, x: g.slice(x, 1, 2, 5), lambda x: x[:, 2:7], ops=("slice",)
    ),
    "pad": Spec(
        [(3, 4)],
        lambda g, x: g.pad(x, 1, 2, 1),
        lambda x: np.concatenate([np.zeros((3, 2)), x, np.zeros((3, 1))], axis=1),
        ops=("pad",),
    ),
    "matmul": Spec(
        [(3, 4), (4, 5)], lambda g, a, b: g.matmul(a, b), matmul_ref, ops=("matmul",)
    ),
    "matmul-ta": Spec(
        [(4, 3), (4, 5)],
        lambda g, a, b: g.matmul(a, b, transpose_a=True),
        lambda a, b: matmul_ref(a, b, True),
        ops=("matmul",),
    ),
    "matmul-tb-batch": Spec(
        [(2, 1, 3, 4), (5, 6, 4)],
        lambda g, a, b: g.matmul(a, b, transpose_b=True),
        lambda a, b: matmul_ref(a, b, False, True),
        ops=("matmul",),
    ),
    "matmul-ta-tb": Spec(
        [(2, 4, 3), (6, 4)],
        lambda g, a, b: g.matmul(a, b, transpose_a=True, transpose_b=True),
        lambda a, b: matmul_ref(a, b, True, True),
        ops=("matmul",),
    ),
    "rms_norm": Spec(
        [(4, 16), (16,)],
        lambda g, x, w: g.rms_norm(x, w),
        lambda x, w: rms_norm_ref(x, w, 1e-6),
        ops=("rms_norm",),
    ),
    "rms_norm-2axes": Spec(
        [(2, 3, 8), (3, 8)],
        lambda g, x, w: g.rms_norm(x, w, eps=0.25),
        lambda x, w: rms_norm_ref(x, w, 0.25),
        ops=("rms_norm",),
    ),
    "layer_norm": Spec(
        [(4, 16), (16,), (16,)],
        lambda g, x, w, b: g.layer_norm(x, w, b),
        lambda x, w, b: layer_norm_ref(x, w, b, 1e-5),
        ops=("layer_norm",),
    ),
    "layer_norm-2axes": Spec(
        [(2, 3, 8), (3, 8), (3, 8)],
        lambda g, x, w, b: g.layer_norm(x, w, b, eps=0.1),
        lambda x, w, b: layer_norm_ref(x, w, b, 0.1),
        ops=("layer_norm",),
    ),
    "softmax": Spec(
        [(4, 9)],
        lambda g, x: g.softmax(x),
        lambda x: softmax_ref(x, -1),
        uniform(-4, 4),
        ops=("softmax",),
    ),
    "softmax-axis0": Spec(
        [(5, 3, 2)],
        lambda g, x: g.softmax(x, axis=0),
        lambda x: softmax_ref(x, 0),
        uniform(-4, 4),
        ops=("softmax",),
    ),
    "rope": Spec(
        [(2, 5, 8), (5, 8), (5, 8)],
        lambda g, x, c, s: g.rope(x, c, s),
        rope_ref,
        rope_inputs,
        ops=("rope",),
    ),
    "rope-general": Spec(
        [(3, 6), (6,), (3, 1)],
        lambda g, x, c, s: g.rope(x, c, s),
        rope_ref,
        ops=("rope",),
    ),
    "attention": Spec(
        [(2, 5, 8), (2, 6, 8), (2, 6, 4)],
        lambda g, q, k, v: g.attention(q, k, v),
        lambda q, k, v: attention_ref(q, k, v, 1 / math.sqrt(8), False),
        ops=("attention",),
    ),
    "attention-causal": Spec(
        [(2, 6, 8), (2, 6, 8), (2, 6, 8)],
        lambda g, q, k, v: g.attention(q, k, v, causal=True),
        lambda q, k, v: attention_ref(q, k, v, 1 / math.sqrt(8), True),
        ops=("attention",),
    ),
    "attention-causal-long-q": Spec(
        [(7, 4), (5, 4), (5, 3)],
        lambda g, q, k, v: g.attention(q, k, v, causal=True, scale=0.5),
        lambda q, k, v: attention_ref(q, k, v, 0.5, True),
        ops=("attention",),
    ),
    "attention-causal-short-q": Spec(
        [(1, 3, 4), (6, 4), (2, 6, 5)],
        lambda g, q, k, v: g.attention(q, k, v, causal=True),
        lambda q, k, v: attention_ref(q, k, v, 0.5, True),
        ops=("attention",),
    ),
    "attention-batch-broadcast": Spec(
        [(2, 1, 3, 8), (3, 4, 8), (1, 4, 5)],
        lambda g, q, k, v: g.attention(q, k, v, scale=0.3),
        lambda q, k, v: attention_ref(q, k, v, 0.3, False),
        ops=("attention",),
    ),
}


def _run(spec, dtype, rng):
    g = one_op_graph(dtype, spec.shapes, spec.build)
    gen = spec.gen or uniform(-2.0, 2.0)
    inputs = gen(rng, spec.shapes, dtype)
    for x, shape in zip(inputs, spec.shapes, strict=True):
        assert x.shape == tuple(shape)
        np.testing.assert_array_equal(round_to_dtype(x, dtype), x)  # representable
    want = spec.formula(*inputs)
    return g, inputs, want


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_op_reference_mode(name, dtype, rng):
    g, inputs, want = _run(SPECS[name], dtype, rng)
    got = molten.interpret(g, *inputs, reference=True)
    assert got.dtype == np.float64
    assert_close(got, want, REFERENCE_TOL)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SPECS))
def test_op_native_mode(name, dtype, rng):
    g, inputs, want = _run(SPECS[name], dtype, rng)
    got = molten.interpret(g, *inputs)
    assert got.shape == want.shape
    assert_storage(got, dtype)
    assert_close(got, want, NATIVE_TOL[dtype])
    # Native f32 computes in float32: close to, but (in general) not the float64 value.
    if dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_specs_cover_every_op():
    covered = {op for spec in SPECS.values() for op in spec.ops}
    covered |= {"cast", "constant", "causal_mask"}  # tested below
    covered |= COVERED  # integer, bool and the newer float ops
    covered |= {"take", "gather"}  # tests/test_indexing.py
    # tests/test_integer_kernels.py, test_graph_api.py and test_core_aten.py
    covered |= {"argmax", "argmin", "scatter"}
    assert covered == {op.name.removeprefix("molten.") for op in Molten.operations}


def test_every_op_has_an_interpreter_implementation():
    implemented = {op_type for op_type, _ in MoltenFunctions._impls()}
    missing = [op.name for op in Molten.operations if op not in implemented]
    assert not missing, missing
    assert len(list(Molten.operations)) == 93


# --------------------------------------------------------------------------
# Cast, constant, causal_mask.
# --------------------------------------------------------------------------


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_cast(src, dst, rng):
    g = one_op_graph(src, [(5, 7)], lambda g, x: g.cast(x, dst))
    x = rand(rng, (5, 7), src, -100, 100)
    got = molten.interpret(g, x)
    assert_storage(got, dst)
    np.testing.assert_array_equal(got, round_to_dtype(x, dst))  # exact RNE
    ref = molten.interpret(g, x, reference=True)
    np.testing.assert_array_equal(ref, x)  # reference mode does not round casts


def _bits_to_f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


# float32 bit pattern -> expected bf16 bit pattern (upper half), round to nearest even
BF16_CASES = {
    0x3F800000: 0x3F80,  # 1.0 exact
    0x3F808000: 0x3F80,  # 1 + 2^-8: a tie, 0x3F80 is even -> down
    0x3F818000: 0x3F82,  # a tie, 0x3F81 is odd -> up
    0x3F808001: 0x3F81,  # just above the tie -> up
    0x3F807FFF: 0x3F80,  # just below the tie -> down
    0xBF808000: 0xBF80,  # negative tie -> even
    0xBF818000: 0xBF82,
    0x3DCCCCCD: 0x3DCD,  # 0.1f
    0x7F7FFFFF: 0x7F80,  # max float32 rounds up to +inf
    0x7F7F8000: 0x7F80,  # tie at the largest bf16, odd -> +inf
    0x7F7E8000: 0x7F7E,  # tie, even -> stays finite
    0x00008000: 0x0000,  # subnormal tie -> even (zero)
    0x00018000: 0x0002,  # subnormal tie -> even (up)
    0x80000000: 0x8000,  # -0.0 keeps its sign
    0x7F800000: 0x7F80,  # +inf
    0xFF800000: 0xFF80,  # -inf
}


def test_bf16_rounding_is_round_to_nearest_even():
    x = _bits_to_f32(list(BF16_CASES))
    expected = np.array(list(BF16_CASES.values()), dtype=np.uint32) << 16
    g = one_op_graph("float32", [x.shape], lambda g, a: g.cast(a, "bf16"))
    got = molten.interpret(g, x)
    np.testing.assert_array_equal(got.view(np.uint32), expected)
    # bf16 inputs are rounded the same way on the way in.
    g = one_op_graph("bf16", [x.shape], lambda g, a: g.neg(a))
    got = molten.interpret(g, x)
    np.testing.assert_array_equal(got.view(np.uint32), expected ^ 0x80000000)


def test_bf16_rounding_keeps_nan():
    g = one_op_graph("float32", [(3,)], lambda g, a: g.cast(a, "bf16"))
    got = molten.interpret(g, _bits_to_f32([0x7FC00000, 0x7F800001, 0xFFFFFFFF]))
    assert np.all(np.isnan(got))


def test_bf16_input_from_float64_is_rounded_once():
    v = np.array([1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30)])
    g = one_op_graph("bf16", [(2,)], lambda g, a: g.neg(g.neg(a)))
    np.testing.assert_array_equal(molten.interpret(g, v), [1.0078125, -1.0078125])


def test_bf16_constant_from_float64_is_rounded_once():
    g = DataflowGraph("c")
    g.add_output(g.constant([1 + 2**-8 + 2**-30, 1 + 2**-8], dtype="bf16"))
    np.testing.assert_array_equal(molten.interpret(g), [1.0078125, 1.0])


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_f16_rounding_is_round_to_nearest_even():
    x = np.array(
        [
            1 + 2**-11,
            1 + 3 * 2**-11,
            1 + 2**-11 + 2**-20,
            65504.0,
            65519.0,
            65520.0,
            -65520.0,
            2.0**-25,
            3 * 2.0**-25,
        ],
        dtype=np.float32,
    )
    want = np.array(
        [1.0, 1 + 2**-9, 1 + 2**-10, 65504.0, 65504.0, np.inf, -np.inf, 0.0, 2.0**-23],
        dtype=np.float16,
    )
    g = one_op_graph("float32", [x.shape], lambda g, a: g.cast(a, "f16"))
    got = molten.interpret(g, x)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_constant(dtype, rng):
    values = rng.uniform(-3, 3, (2, 3))
    g = DataflowGraph("c")
    g.add_output(g.constant(values, dtype=dtype))
    g.add_output(g.constant(0.1, shape=[2, 2], dtype=dtype))
    arr, splat = molten.interpret(g)
    assert_storage(arr, dtype)
    np.testing.assert_array_equal(arr, round_to_dtype(values, dtype))
    np.testing.assert_array_equal(splat, np.full((2, 2), round_to_dtype(0.1, dtype)))
    arr_ref, splat_ref = molten.interpret(g, reference=True)
    # Constants are stored in their element type, so reference mode sees the
    # rounded value too.
    np.testing.assert_array_equal(arr_ref, round_to_dtype(values, dtype))
    np.testing.assert_array_equal(
        splat_ref, np.full((2, 2), round_to_dtype(0.1, dtype))
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,cols", [(4, 4), (3, 5), (5, 3), (1, 1)])
def test_causal_mask(rows, cols, dtype):
    g = DataflowGraph("m")
    g.add_output(g.causal_mask(rows, cols, dtype=dtype))
    want = np.array(
        [[0.0 if j <= i else -np.inf for j in range(cols)] for i in range(rows)]
    )
    for reference in (False, True):
        got = molten.interpret(g, reference=reference)
        assert got.shape == (rows, cols)
        np.testing.assert_array_equal(got, want)
        if not reference:
            assert_storage(got, dtype)


# --------------------------------------------------------------------------
# Semantics worth their own test.
# --------------------------------------------------------------------------


def test_gelu_exact_and_tanh_forms_differ(rng):
    x = np.concatenate([np.linspace(-4, 4, 81), rng.uniform(-4, 4, 40)])
    g = DataflowGraph("gelu")
    a = g.add_input("x", x.shape)
    g.add_output(g.gelu(a))
    g.add_output(g.gelu(a, approximate="tanh"))
    exact, approx = molten.interpret(g, x, reference=True)
    want_exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x])
    np.testing.assert_allclose(exact, want_exact, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(approx, gelu_tanh(x), rtol=1e-13, atol=1e-15)
    # The two forms are different functions (max gap ~ 5e-4 near |x| ~ 2).
    gap = np.max(np.abs(exact - approx))
    assert 1e-4 < gap < 1e-3
    assert math.isclose(exact[x.tolist().index(1.0)], 0.8413447460685429, rel_tol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("center", [1000.0, -1000.0, 30000.0])
def test_softmax_is_stable_for_large_inputs(center, dtype, rng):
    shape = (3, 16)
    x = round_to_dtype(center + rng.uniform(-8, 8, shape), dtype)
    g = one_op_graph(dtype, [shape], lambda g, a: g.softmax(a))
    want = softmax_ref(x, -1)
    for reference in (True, False):
        got = molten.interpret(g, x, reference=reference)
        assert not np.any(np.isnan(got))
        assert_close(got, want, REFERENCE_TOL if reference else NATIVE_TOL[dtype])
        np.testing.assert_allclose(got.astype(np.float64).sum(-1), 1.0, rtol=2e-2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_is_stable_for_large_scores(dtype, rng):
    q = round_to_dtype(rng.uniform(20, 30, (4, 8)), dtype)
    k = round_to_dtype(rng.uniform(20, 30, (6, 8)), dtype)
    v = rand(rng, (6, 3), dtype)
    g = one_op_graph(
        dtype,
        [q.shape, k.shape, v.shape],
        lambda g, a, b, c: g.attention(a, b, c, scale=1.0, causal=True),
    )
    want = attention_ref(q, k, v, 1.0, True)
    got = molten.interpret(g, q, k, v)
    assert np.all(np.isfinite(got))
    assert_close(got, want, NATIVE_TOL[dtype])


def test_layer_norm_uses_biased_variance(rng):
    x = rng.standard_normal((6, 4))
    w, b = np.ones(4), np.zeros(4)
    g = one_op_graph(
        "float32",
        [(6, 4), (4,), (4,)],
        lambda g, a, ww, bb: g.layer_norm(a, ww, bb, eps=0.0),
    )
    got = molten.interpret(g, x, w, b, reference=True)
    mu = x.mean(-1, keepdims=True)
    biased = (x - mu) / x.std(-1, ddof=0, keepdims=True)
    unbiased = (x - mu) / x.std(-1, ddof=1, keepdims=True)
    np.testing.assert_allclose(got, biased, rtol=1e-12)
    assert np.max(np.abs(got - unbiased)) > 0.1
    # Biased: each row has mean 0 and mean square exactly 1.
    np.testing.assert_allclose((got**2).mean(-1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_is_the_running_sum(axis, reverse, exclusive, rng):
    """Element i: the sum of elements 0..i (i..n-1 with reverse), itself left
    out with exclusive, by a loop over the axis."""
    x = rng.standard_normal((4, 5, 6))
    g = one_op_graph(
        "float32",
        [x.shape],
        lambda g, a: g.cumsum(a, axis, reverse=reverse, exclusive=exclusive),
    )
    got = molten.interpret(g, x, reference=True)
    lines = np.moveaxis(x, axis, -1)
    want = np.zeros_like(lines)
    n = lines.shape[-1]
    for i in range(n):
        taken = range(i, n) if reverse else range(i + 1)
        want[..., i] = sum(
            (lines[..., j] for j in taken if not (exclusive and j == i)),
            np.zeros(lines.shape[:-1]),
        )
    np.testing.assert_allclose(got, np.moveaxis(want, -1, axis), rtol=1e-12, atol=1e-12)


def test_slice_pad_and_concat_are_numpy_s(rng):
    x, y = rng.standard_normal((3, 7)), rng.standard_normal((3, 2))
    g = one_op_graph(
        "float32",
        [x.shape, y.shape],
        lambda g, a, b: g.concat([g.slice(a, 1, 2, 4), g.pad(b, 0, 0, 0), a], -1),
    )
    got = molten.interpret(g, x, y, reference=True)
    np.testing.assert_array_equal(got, np.concatenate([x[:, 2:6], y, x], -1))
    g = one_op_graph("float32", [x.shape], lambda g, a: g.pad(a, 0, 2, 1))
    got = molten.interpret(g, x, reference=True)
    np.testing.assert_array_equal(got, np.pad(x, [(2, 1), (0, 0)]))


def test_flip_reverses_the_axes(rng):
    x = rng.standard_normal((3, 4, 5))
    g = one_op_graph("float32", [x.shape], lambda g, a: g.flip(a, [0, -1]))
    got = molten.interpret(g, x, reference=True)
    np.testing.assert_array_equal(got, x[::-1, :, ::-1])


def test_rope_is_hf_rotate_half_rotation(rng):
    seq, dim = 6, 8
    x = rng.standard_normal((2, seq, dim))
    cos, sin = hf_rope_tables(np.arange(seq), dim)
    g = one_op_graph(
        "float32", [x.shape, cos.shape, sin.shape], lambda g, a, c, s: g.rope(a, c, s)
    )
    got = molten.interpret(g, x, cos, sin, reference=True)
    h = dim // 2
    # HF Llama: the pair (x[i], x[i + d/2]) rotated by pos * inv_freq[i].
    inv_freq = 1.0 / 10000.0 ** (np.arange(0, dim, 2) / dim)
    for pos in range(seq):
        for i in range(h):
            theta = pos * inv_freq[i]
            x1, x2 = x[:, pos, i], x[:, pos, i + h]
            np.testing.assert_allclose(
                got[:, pos, i],
                x1 * math.cos(theta) - x2 * math.sin(theta),
                rtol=1e-12,
                atol=1e-14,
            )
            np.testing.assert_allclose(
                got[:, pos, i + h],
                x2 * math.cos(theta) + x1 * math.sin(theta),
                rtol=1e-12,
                atol=1e-14,
            )
    # A rotation keeps the norm of every pair; position 0 is the identity.
    pair_norm = lambda t: t[..., :h] ** 2 + t[..., h:] ** 2  # noqa: E731
    np.testing.assert_allclose(pair_norm(got), pair_norm(x), rtol=1e-12)
    np.testing.assert_allclose(got[:, 0], x[:, 0], rtol=1e-15)
    # Not the interleaved (GPT-J) convention.
    interleaved = x.copy()
    interleaved[..., 0::2] = x[..., 0::2] * cos[:, :h] - x[..., 1::2] * sin[:, :h]
    interleaved[..., 1::2] = x[..., 1::2] * cos[:, :h] + x[..., 0::2] * sin[:, :h]
    assert np.max(np.abs(got - interleaved)) > 1e-3


def test_causal_attention_is_top_left_aligned(rng):
    # 3 queries, 5 keys: query 0 sees only key 0 (top-left), not keys 0..2.
    q = rng.standard_normal((3, 4))
    k = rng.standard_normal((5, 4))
    v = np.eye(5)  # the output row is the attention distribution itself
    g = one_op_graph(
        "float32",
        [q.shape, k.shape, v.shape],
        lambda g, a, b, c: g.attention(a, b, c, causal=True),
    )
    probs = molten.interpret(g, q, k, v, reference=True)
    for i in range(3):
        assert np.all(probs[i, i + 1 :] == 0.0)
        assert np.all(probs[i, : i + 1] > 0.0)
    np.testing.assert_allclose(probs[0], [1, 0, 0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reference", [False, True])
def test_nan_propagation(dtype, reference):
    a = np.array([np.nan, 1.0, np.nan, -2.0, 3.0])
    b = np.array([0.0, np.nan, np.nan, -3.0, 2.0])
    g = DataflowGraph("nan")
    x = g.add_input("a", [5], dtype)
    y = g.add_input("b", [5], dtype)
    g.add_output(g.max(x, y))
    g.add_output(g.min(x, y))
    g.add_output(g.relu(x))
    g.add_output(g.reduce_max(x, 0, keepdim=True))
    g.add_output(g.reduce_max(g.abs(y), 0, keepdim=True))
    mx, mn, relu, rmax, rmax_b = molten.interpret(g, a, b, reference=reference)
    np.testing.assert_array_equal(mx, [np.nan, np.nan, np.nan, -2.0, 3.0])
    np.testing.assert_array_equal(mn, [np.nan, np.nan, np.nan, -3.0, 2.0])
    np.testing.assert_array_equal(relu, [np.nan, 1.0, np.nan, 0.0, 3.0])
    assert np.isnan(rmax[0]) and np.isnan(rmax_b[0])


def test_native_mode_rounds_every_op():
    # In f16, 1 + 2^-12 rounds back to 1, so (x + c) - x is 0; reference mode keeps c.
    g = DataflowGraph("r")
    x = g.add_input("x", [3], "f16")
    g.add_output((x + 2.0**-12) - x)
    x_val = np.ones(3)
    np.testing.assert_array_equal(molten.interpret(g, x_val), np.zeros(3, np.float16))
    np.testing.assert_array_equal(
        molten.interpret(g, x_val, reference=True), np.full(3, 2.0**-12)
    )


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_native_inputs_are_rounded_to_the_input_type():
    g = DataflowGraph("r")
    x = g.add_input("x", [2], "f16")
    g.add_output(g.cast(x, "f32"))
    got = molten.interpret(g, np.array([1 / 3, 1e5]))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [np.float16(1 / 3), np.inf])
    # Reference mode takes the values as given.
    np.testing.assert_array_equal(
        molten.interpret(g, np.array([1 / 3, 1e5]), reference=True), [1 / 3, 1e5]
    )


def test_interpret_accepts_graph_module_and_text(rng):
    g = DataflowGraph("t")
    x = g.add_input("x", [3, 4])
    g.add_output(g.exp(x), "e")
    g.add_output(x * 2.0, "d")
    xv = rng.standard_normal((3, 4))
    for program in (g, g.to_module(), g.to_mlir(), g.to_mlir(generic=True)):
        e, d = molten.interpret(program, xv, reference=True)
        np.testing.assert_allclose(e, np.exp(xv), rtol=1e-15)
        np.testing.assert_array_equal(d, 2 * xv)


def test_interpret_entry_selects_function(rng):
    text = """
    func.func @double(%x: tensor<3xf32>) -> tensor<3xf32> {
      %c = molten.constant dense<2.0> : tensor<f32>
      %0 = molten.mul %x, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
      func.return %0 : tensor<3xf32>
    }
    func.func @negate(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = molten.neg %x : tensor<3xf32>
      func.return %0 : tensor<3xf32>
    }
    """
    xv = rng.standard_normal(3)
    np.testing.assert_array_equal(
        molten.interpret(text, xv, entry="negate", reference=True), -xv
    )
    np.testing.assert_array_equal(
        molten.interpret(text, xv, entry="double", reference=True), 2 * xv
    )


@pytest.mark.parametrize("reference", [False, True])
def test_rank0_output_has_shape_rank0(reference):
    g = DataflowGraph("s")
    x = g.add_input("x", [4])
    g.add_output(g.reduce_sum(x, 0))
    got = molten.interpret(g, np.arange(4.0), reference=reference)
    assert got.shape == ()
    assert float(got) == 6.0


def test_rank0_output_value():
    # Whatever its shape, a rank-0 output holds the right single value.
    g = DataflowGraph("s")
    x = g.add_input("x", [4], "bf16")
    g.add_output(g.reduce_sum(x, 0))
    got = molten.interpret(g, np.arange(4.0))
    assert got.size == 1 and got.reshape(()) == 6.0


@pytest.mark.parametrize("reference", [False, True])
def test_gelu_on_rank0_tensor(reference):
    g = DataflowGraph("g")
    s = g.add_input("s", [])
    g.add_output(g.gelu(s))
    got = molten.interpret(g, 0.5, reference=reference)
    assert math.isclose(
        float(got.reshape(())),
        0.5 * 0.5 * (1 + math.erf(0.5 / math.sqrt(2))),
        rel_tol=1e-6,
    )


@pytest.mark.parametrize("reference", [False, True])
def test_gelu_tanh_on_rank0_tensor(reference):
    g = DataflowGraph("g")
    s = g.add_input("s", [])
    g.add_output(g.gelu(s, approximate="tanh"))
    got = molten.interpret(g, 0.5, reference=reference)
    assert math.isclose(
        float(got.reshape(())), float(gelu_tanh(np.float64(0.5))), rel_tol=1e-6
    )
