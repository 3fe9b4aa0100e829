"""Integer, bool and the new float ops of the molten dialect in the
interpreter: exact for integers and bools, against torch's own ops where
torch is installed and against numpy formulas always."""

from __future__ import annotations

import numpy as np
import pytest
from integer_cases import STORAGE

import molten
from molten.dialects import molten as m
from molten.errors import InputError

TORCH = {
    "i64": "int64",
    "i32": "int32",
    "i8": "int8",
    "ui8": "uint8",
    "i1": "bool",
    "f32": "float32",
}
SHAPE = (3, 17)


def values(rng, element: str, positive: bool = False) -> np.ndarray:
    if element == "i1":
        return rng.integers(0, 2, SHAPE).astype(bool)
    if element == "f32":
        x = rng.uniform(-3, 3, SHAPE).astype(np.float32)
        return np.abs(x) + 0.1 if positive else x
    info = np.iinfo(STORAGE[element])
    low = 1 if positive else info.min
    x = rng.integers(low, int(info.max) + 1, SHAPE, dtype=np.int64)
    return x.astype(STORAGE[element])


def t(element: str) -> str:
    return f"tensor<{SHAPE[0]}x{SHAPE[1]}x{element}>"


def one_op(op: str, operands: list[str], result: str) -> str:
    args = ", ".join(f"%a{i}: {t(e)}" for i, e in enumerate(operands))
    uses = ", ".join(f"%a{i}" for i in range(len(operands)))
    if len(operands) == 1 and op not in PREDICATES:
        signature = t(operands[0])
    elif op in PREDICATES:
        signature = f"{t(operands[0])} -> {t(result)}"
    else:
        ins = ", ".join(t(e) for e in operands)
        signature = f"({ins}) -> {t(result)}"
    return (
        f"func.func @f({args}) -> {t(result)} {{\n"
        f"  %r = molten.{op} {uses} : {signature}\n"
        f"  func.return %r : {t(result)}\n}}\n"
    )


PREDICATES = {"isnan", "isinf"}

# op -> (operand element types, result, torch function name, numpy formula)
INTEGER_CASES = {
    "add": ("i8", "i8", "add", lambda a, b: a + b),
    "sub": ("ui8", "ui8", "sub", lambda a, b: a - b),
    "mul": ("i32", "i32", "mul", lambda a, b: a * b),
    "max": ("i64", "i64", "maximum", np.maximum),
    "min": ("ui8", "ui8", "minimum", np.minimum),
    "floor_divide": ("i64", "i64", "floor_divide", lambda a, b: a // b),
    "remainder": ("i32", "i32", "remainder", np.remainder),
    "fmod": ("i8", "i8", "fmod", np.fmod),
    "bitwise_and": ("i64", "i64", "bitwise_and", np.bitwise_and),
    "bitwise_or": ("ui8", "ui8", "bitwise_or", np.bitwise_or),
    "bitwise_xor": ("i1", "i1", "bitwise_xor", np.bitwise_xor),
    "logical_and": ("i1", "i1", "logical_and", np.logical_and),
    "logical_or": ("i1", "i1", "logical_or", np.logical_or),
    "logical_xor": ("i1", "i1", "logical_xor", np.logical_xor),
    "eq": ("i64", "i1", "eq", np.equal),
    "ne": ("i1", "i1", "ne", np.not_equal),
    "lt": ("i8", "i1", "lt", np.less),
    "le": ("ui8", "i1", "le", np.less_equal),
    "gt": ("f32", "i1", "gt", np.greater),
    "ge": ("i32", "i1", "ge", np.greater_equal),
    "neg": ("i8", "i8", "neg", np.negative),
    "abs": ("i32", "i32", "abs", np.abs),
    "square": ("i64", "i64", "square", np.square),
    "relu": ("i8", "i8", "relu", lambda x: np.maximum(x, 0)),
    "sign": ("i64", "i64", "sign", np.sign),
    "bitwise_not": ("ui8", "ui8", "bitwise_not", np.invert),
    "logical_not": ("i1", "i1", "logical_not", np.logical_not),
}
DIVIDES = {"floor_divide", "remainder", "fmod"}
UNARY = {"neg", "abs", "square", "relu", "sign", "bitwise_not", "logical_not"}

FLOAT_CASES = {
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "erf": None,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "log2": np.log2,
    "log10": np.log10,
    "exp2": np.exp2,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "trunc": np.trunc,
    "sign": lambda x: np.where(np.isnan(x), 0, np.sign(x)),
    "isnan": np.isnan,
    "isinf": np.isinf,
    "atan2": np.arctan2,
    "floor_divide": np.floor_divide,
    "remainder": np.remainder,
    "fmod": np.fmod,
}
BINARY_FLOAT = {"atan2", "floor_divide", "remainder", "fmod"}
IN_UNIT = {"asin", "acos"}
POSITIVE = {"log1p", "log2", "log10"}


def _integer_inputs(rng, name: str) -> list[np.ndarray]:
    element = INTEGER_CASES[name][0]
    arity = 1 if name in UNARY else 2
    inputs = [values(rng, element) for _ in range(arity)]
    if name in DIVIDES:
        inputs[1] = np.where(inputs[1] == 0, 1, inputs[1]).astype(inputs[1].dtype)
    return inputs


@pytest.mark.parametrize("name", sorted(INTEGER_CASES))
def test_integer_op_is_exact(name, rng):
    element, result, _, formula = INTEGER_CASES[name]
    inputs = _integer_inputs(rng, name)
    text = one_op(name, [element] * len(inputs), result)
    with np.errstate(all="ignore"):
        want = np.asarray(formula(*inputs)).astype(STORAGE[result])
    for reference in (False, True):
        got = molten.interpret(text, *inputs, reference=reference)
        assert got.dtype == STORAGE[result]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(INTEGER_CASES))
def test_integer_op_matches_torch(name, rng):
    torch = pytest.importorskip("torch")
    element, result, torch_name, _ = INTEGER_CASES[name]
    inputs = _integer_inputs(rng, name)
    text = one_op(name, [element] * len(inputs), result)
    fn = getattr(torch, torch_name, None) or getattr(torch.nn.functional, torch_name)
    want = fn(*(torch.from_numpy(x) for x in inputs)).numpy()
    np.testing.assert_array_equal(molten.interpret(text, *inputs), want)


@pytest.mark.parametrize("name", sorted(FLOAT_CASES))
def test_float_op(name, rng):
    arity = 2 if name in BINARY_FLOAT else 1
    inputs = [values(rng, "f32", positive=name in POSITIVE) for _ in range(arity)]
    if name in IN_UNIT:
        inputs = [np.clip(x / 3, -1, 1).astype(np.float32) for x in inputs]
    if name in {"isnan", "isinf", "sign"}:
        inputs[0][0, :3] = [np.nan, np.inf, -np.inf]  # torch.sign(nan) is 0
    if name == "round":
        inputs[0][0, :4] = [0.5, 1.5, 2.5, -0.5]  # halves to even
    result = "i1" if name in PREDICATES else "f32"
    text = one_op(name, ["f32"] * arity, result)
    got = molten.interpret(text, *inputs, reference=True)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        fn = getattr(torch, name, None) or getattr(torch.special, name)
        want = fn(*(torch.from_numpy(x).double() for x in inputs)).numpy()
    elif FLOAT_CASES[name] is None:
        pytest.skip("erf's formula is the interpreter's own; torch checks it")
    else:
        want = FLOAT_CASES[name](*(x.astype(np.float64) for x in inputs))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert got.dtype == (np.bool_ if result == "i1" else np.float64)


CASTS = [
    ("f32", "i32", [-2.7, -0.5, 0.5, 2.7, 100.9]),  # toward zero
    ("f32", "i1", [0.0, -0.0, 0.1, -3.0, np.nan]),  # nonzero is true
    ("i1", "f32", [True, False]),  # 0/1
    ("i64", "i8", [127, 128, -129, 255, 2**40 + 3]),  # wraps
    ("i64", "ui8", [-1, 256, 255, 3]),
    ("ui8", "i64", [0, 255, 128]),
    ("i32", "f32", [2**24 + 1, -7]),  # rounds to f32
]


@pytest.mark.parametrize("source, target, data", CASTS)
def test_casts_follow_torch(source, target, data):
    x = np.array(data, dtype=STORAGE[source])
    n = len(data)
    text = (
        f"func.func @f(%x: tensor<{n}x{source}>) -> tensor<{n}x{target}> {{\n"
        f"  %r = molten.cast %x : tensor<{n}x{source}> to tensor<{n}x{target}>\n"
        f"  func.return %r : tensor<{n}x{target}>\n}}\n"
    )
    got = molten.interpret(text, x)
    assert got.dtype == STORAGE[target]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        want = torch.from_numpy(x).to(getattr(torch, TORCH[target])).numpy()
        np.testing.assert_array_equal(got, want)
    if source == "f32" and target == "i32":
        np.testing.assert_array_equal(got, [-2, 0, 0, 2, 100])
    if target == "i1":
        np.testing.assert_array_equal(got, [False, False, True, True, True])


def test_shifts_follow_torch():
    a = np.array([1, -8, 127, -128, 5, 5], dtype=np.int8)
    b = np.array([1, 1, 7, 7, 8, 9], dtype=np.int8)
    left = "func.func @f(%a: tensor<6xi8>, %b: tensor<6xi8>) -> tensor<6xi8> {\n"
    left += "  %r = molten.OP %a, %b : (tensor<6xi8>, tensor<6xi8>) -> tensor<6xi8>\n"
    left += "  func.return %r : tensor<6xi8>\n}\n"
    shl = molten.interpret(left.replace("OP", "shift_left"), a, b)
    shr = molten.interpret(left.replace("OP", "shift_right"), a, b)
    np.testing.assert_array_equal(shl, [2, -16, -128, 0, 0, 0])
    np.testing.assert_array_equal(shr, [0, -4, 0, -1, 0, 0])


def test_where_iota_and_masks():
    text = """
func.func @mask(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %i = molten.iota axis = 0 : tensor<4x4xi64>
  %j = molten.iota axis = 1 : tensor<4x4xi64>
  %keep = molten.le %j, %i : (tensor<4x4xi64>, tensor<4x4xi64>) -> tensor<4x4xi1>
  %zero = molten.constant dense<0.0> : tensor<f32>
  %r = molten.where %keep, %x, %zero
      : (tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
"""
    x = np.arange(16, dtype=np.float32).reshape(4, 4) + 1
    np.testing.assert_array_equal(molten.interpret(text, x), np.tril(x))


def test_an_integer_input_takes_integers_in_range():
    text = one_op("neg", ["i8"], "i8")
    with pytest.raises(InputError, match="has dtype float32; the graph expects int8"):
        molten.interpret(text, np.zeros(SHAPE, np.float32))
    with pytest.raises(InputError, match=r"out of the range of int8 \[-128, 127\]"):
        molten.interpret(text, np.full(SHAPE, 300))
    got = molten.interpret(text, np.full(SHAPE, -128))
    np.testing.assert_array_equal(got, np.full(SHAPE, -128, np.int8))  # wraps


def test_element_kinds_of_the_ops():
    """Every op says which kinds of element it takes; math stays float."""
    assert m.ExpOp.TAKES == m.FLOATS
    assert m.MatmulOp.TAKES == m.FLOATS
    assert m.AddOp.TAKES == m.NUMBERS
    assert m.ReshapeOp.TAKES == m.ANY_ELEMENT
    assert m.LogicalAndOp.TAKES == m.BOOLS


COVERED = (
    set(INTEGER_CASES)
    | set(FLOAT_CASES)
    | {"shift_left", "shift_right", "where", "iota", "cast"}
)
"""The ops this module tests, for the interpreter's coverage test."""
