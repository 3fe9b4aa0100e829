"""The graph API promotes as torch does (molten.promotion): two tensors by
torch.promote_types, a tensor and a Python number by torch.result_type;
true division and the math functions take integers as float32; the
creation ops (arange, full, zeros, ones, *_like) give torch's dtypes; and
Python's operators on tensors build torch's ops, checked against torch's
own results where torch is installed."""

import itertools

import numpy as np
import pytest

import molten
from molten import DataflowGraph
from molten.errors import DTypeError

DTYPES = ["float32", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"]


def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("a, b", itertools.product(DTYPES, DTYPES))
def test_two_tensors_promote_as_torch(a, b):
    torch = _torch()
    g = DataflowGraph("g")
    x, y = g.add_input("x", [4], a), g.add_input("y", [4], b)
    c = g.add_input("c", [4], "bool")
    if {a, b} == {"uint8", "int8"}:
        with pytest.raises(DTypeError, match="promote to int16 in torch"):
            g.where(c, x, y)
        return
    want = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert g.where(c, x, y).dtype == str(want).removeprefix("torch.")
    assert (x == y).dtype == "bool"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("number", [True, 3, 0.5])
def test_a_tensor_and_a_number_promote_as_torch(dtype, number):
    torch = _torch()
    g = DataflowGraph("g")
    x = g.add_input("x", [4], dtype)
    c = g.add_input("c", [4], "bool")
    want = torch.result_type(torch.zeros(4, dtype=getattr(torch, dtype)), number)
    assert g.where(c, x, number).dtype == str(want).removeprefix("torch.")


def test_true_division_and_math_take_integers_as_float32():
    g = DataflowGraph("g")
    ids = g.add_input("ids", [4], "int64")
    assert (ids / 2).dtype == "float32"
    assert g.sin(ids).dtype == "float32" and g.exp(ids).dtype == "float32"
    assert g.floor(ids) is ids  # an integer is its own floor
    assert (ids // 2).dtype == "int64" and (ids % 3).dtype == "int64"


def test_operators_build_torchs_ops(rng):
    torch = _torch()
    g = DataflowGraph("ops")
    a = g.add_input("a", [3, 17], "int32")
    b = g.add_input("b", [3, 17], "int32")
    m = g.add_input("m", [3, 17], "bool")
    results = {
        "floordiv": a // b,
        "mod": a % b,
        "and": a & b,
        "or": a | 7,
        "xor": a ^ b,
        "invert": ~a,
        "not": ~m,
        "lshift": a << 3,
        "rshift": a >> 2,
        "lt": a < b,
        "le": a <= 0,
        "gt": a > b,
        "ge": a >= b,
        "eq": a == b,
        "ne": a != 5,
        "masked": g.masked_fill(a, m, -1),
        "where": g.where(m, a, 2.5),
        "abs": abs(a),
    }
    for name, t in results.items():
        g.add_output(t, name)
    x = rng.integers(-100, 100, (3, 17)).astype(np.int32)
    y = rng.integers(1, 20, (3, 17)).astype(np.int32)
    z = rng.integers(0, 2, (3, 17)).astype(bool)
    got = dict(zip(results, molten.interpret(g, x, y, z), strict=True))
    tx, ty, tz = (torch.from_numpy(v) for v in (x, y, z))
    want = {
        "floordiv": tx // ty,
        "mod": tx % ty,
        "and": tx & ty,
        "or": tx | 7,
        "xor": tx ^ ty,
        "invert": ~tx,
        "not": ~tz,
        "lshift": tx << 3,
        "rshift": tx >> 2,
        "lt": tx < ty,
        "le": tx <= 0,
        "gt": tx > ty,
        "ge": tx >= ty,
        "eq": tx == ty,
        "ne": tx != 5,
        "masked": tx.masked_fill(tz, -1),
        "where": torch.where(tz, tx, 2.5),
        "abs": tx.abs(),
    }
    for name in results:
        assert got[name].dtype == want[name].numpy().dtype, name
        np.testing.assert_array_equal(got[name], want[name].numpy(), err_msg=name)


def test_a_tensor_has_no_truth_value_but_hashes():
    g = DataflowGraph("g")
    x = g.add_input("x", [4], "int64")
    with pytest.raises(TypeError, match="no truth value"):
        bool(x == 3)
    assert {x: 1}[x] == 1


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((5,), {}),
        ((2, 11, 3), {}),
        ((10, 0, -3), {}),
        ((0.0, 1.0, 0.25), {}),
        ((1, 4), {"dtype": "float16"}),
        ((-3, 3), {"dtype": "int8"}),
    ],
)
def test_arange_is_torchs(args, kwargs):
    torch = _torch()
    g = DataflowGraph("g")
    r = g.arange(*args, **kwargs)
    g.add_output(r)
    want = torch.arange(
        *args, **{k: getattr(torch, v) for k, v in kwargs.items()}
    ).numpy()
    got = molten.interpret(g)
    assert r.dtype == str(want.dtype) and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_full_zeros_ones_and_likes_take_torchs_dtypes():
    g = DataflowGraph("g")
    h = g.add_input("h", [2, 3], "float16")
    assert g.full([2], True).dtype == "bool"
    assert g.full([2], 7).dtype == "int64"
    assert g.full([2], 0.5).dtype == "float32"
    assert g.zeros([2]).dtype == "float32" and g.ones([2], "int8").dtype == "int8"
    assert g.zeros_like(h).dtype == "float16" and g.ones_like(h).shape == h.shape
    assert g.full_like(h, 2, "int32").dtype == "int32"
    big = g.full([2], 2**62 + 1, "int64")
    g.add_output(big)
    np.testing.assert_array_equal(
        molten.interpret(g, np.zeros((2, 3))), [2**62 + 1] * 2
    )


def test_a_refused_op_leaves_no_casts_behind():
    g = DataflowGraph("g")
    ids = g.add_input("ids", [2, 8], "int64")
    h = g.add_input("h", [3, 8], "float16")
    before = len(list(g._block.ops))
    with pytest.raises(molten.ShapeError, match=r"molten.add\(%ids: tensor<2x8xi64>"):
        ids + h
    assert len(list(g._block.ops)) == before


def test_where_of_two_numbers_takes_torchs_dtype():
    """torch.where(mask, 0.0, least): two numbers give float32 (int64 for
    ints, bool for bools), as torch gives them."""
    torch = pytest.importorskip("torch")
    g = DataflowGraph("numbers")
    mask = g.add_input("mask", [4], "bool")
    pairs = [(0.0, -3.0e38), (1, 2), (True, False), (1, 2.5)]
    for a, b in pairs:
        g.add_output(g.where(mask, a, b))
    keep = np.array([True, False, True, False])
    for got, (a, b) in zip(molten.interpret(g, keep), pairs, strict=True):
        want = torch.where(torch.from_numpy(keep), a, b)
        assert str(got.dtype) == str(want.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(got, want.numpy())
