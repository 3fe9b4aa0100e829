"""Graphs of integer, bool and float-math ops for the kernel tests: each op
at each element type it takes, every cast between element types, shifts
past the width, and the mask and position-id chains transformers builds
(iota, comparisons, logical ops, where), at an odd width (scalar accesses)
and at a width of whole vectors (16 int8 or bool a 128-bit access).

`CASES` maps a case's name (also its graph's) to a `Case`: its MLIR text
and how to make its inputs. tests/test_integer_kernels.py compiles them
with nvcc; tests/test_integer_kernels_gpu.py runs them on the GPU against
the interpreter, bit for bit where the result is an integer or a bool.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

STORAGE = {
    "i64": np.int64,
    "i32": np.int32,
    "i8": np.int8,
    "ui8": np.uint8,
    "i1": np.bool_,
    "f32": np.float32,
    "f16": np.float16,
    "bf16": np.float32,  # as the interpreter holds it
}
INTEGERS = ("i64", "i32", "i8", "ui8")
ODD, WIDE = (3, 17), (4, 64)


@dataclass(frozen=True)
class Case:
    text: str
    inputs: Callable[[np.random.Generator], list[np.ndarray]]
    result: str
    """The element type of the (first) result."""


def values(rng, element: str, shape, *, nonzero=False, low=None, high=None):
    """Random values of `element` over its range (or [low, high])."""
    if element == "i1":
        return rng.integers(0, 2, shape).astype(bool)
    if element in ("f32", "f16", "bf16"):
        x = rng.uniform(-3 if low is None else low, 3 if high is None else high, shape)
        x = x.astype(np.float32)
        return np.where(x == 0, 1, x).astype(np.float32) if nonzero else x
    info = np.iinfo(STORAGE[element])
    # Not the least value of a signed type: its quotient by -1 overflows.
    least = info.min + (0 if element == "ui8" else 1)
    x = rng.integers(
        least if low is None else low,
        (int(info.max) if high is None else high) + 1,
        shape,
        dtype=np.int64,
    )
    if nonzero:
        x = np.where(x == 0, 1, x)
    return x.astype(STORAGE[element])


def tensor(element: str, shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def one_op(name: str, op: str, operands, result: str, shape, attrs="") -> str:
    args = ", ".join(f"%a{i}: {tensor(e, shape)}" for i, e in enumerate(operands))
    uses = ", ".join(f"%a{i}" for i in range(len(operands)))
    out = tensor(result, shape)
    if op == "cast":
        signature = f"{tensor(operands[0], shape)} to {out}"
    elif op in ("isnan", "isinf"):
        signature = f"{tensor(operands[0], shape)} -> {out}"
    elif len(operands) == 1:
        signature = out
    else:
        signature = f"({', '.join(tensor(e, shape) for e in operands)}) -> {out}"
    return (
        f"func.func @{name}({args}) -> {out} {{\n"
        f"  %r = molten.{op} {uses}{attrs} : {signature}\n"
        f"  func.return %r : {out}\n}}\n"
    )


CASES: dict[str, Case] = {}


def _add(name, text, inputs, result):
    name = re.sub(r"\W", "_", name)
    CASES[name] = Case(text.replace("@NAME", f"@{name}"), inputs, result)


def _op(op, operands, result, shape=ODD, make=None):
    types = [*operands, result] if op == "cast" else operands
    name = f"{op}_{'_'.join(types)}_{'x'.join(map(str, shape))}"

    def inputs(rng, operands=operands, shape=shape):
        if make is not None:
            return make(rng, shape)
        return [values(rng, e, shape) for e in operands]

    _add(name, one_op("NAME", op, operands, result, shape), inputs, result)


def _divisions(op):
    def make(element):
        return lambda rng, shape: [
            values(rng, element, shape),
            values(rng, element, shape, nonzero=True),
        ]

    return make


for op in ("add", "sub", "mul", "max", "min"):
    for element in INTEGERS:
        _op(op, [element] * 2, element)
    _op(op, ["i8", "i8"], "i8", WIDE)
for op in ("floor_divide", "remainder", "fmod"):
    for element in INTEGERS:
        _op(op, [element] * 2, element, make=_divisions(op)(element))
    for element in ("f32", "bf16"):
        _op(op, [element] * 2, element, make=_divisions(op)(element))


def _with_zeros(element):
    """Divisors, a third of them 0: an integer division by 0 is defined
    (// gives -1, the remainders 0), a float one is IEEE's."""

    def make(rng, shape):
        divisor = values(rng, element, shape, low=-3 if element != "ui8" else 0, high=3)
        return [values(rng, element, shape), divisor]

    return make


for op in ("floor_divide", "remainder", "fmod"):
    _op(op, ["i32", "i32"], "i32", WIDE, make=_with_zeros("i32"))
    _op(op, ["ui8", "ui8"], "ui8", WIDE, make=_with_zeros("ui8"))
for op in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    for element in ("i64", "i32", "i8", "ui8", "i1"):
        _op(op, [element] * 2, element)
for op in ("logical_and", "logical_or", "logical_xor"):
    _op(op, ["i1", "i1"], "i1")
    _op(op, ["i1", "i1"], "i1", WIDE)
for op in ("eq", "ne", "lt", "le", "gt", "ge"):
    for element in ("i64", "i32", "i8", "ui8", "i1", "f32", "bf16"):
        _op(op, [element] * 2, "i1")
_op("lt", ["i64", "i64"], "i1", WIDE)
for op in ("neg", "abs", "square", "relu", "sign"):
    for element in INTEGERS:
        _op(op, [element], element)
for element in ("i64", "i32", "ui8", "i1"):
    _op("bitwise_not", [element], element)
_op("logical_not", ["i1"], "i1")
_op("logical_not", ["i1"], "i1", WIDE)


def _shift_amounts(element):
    width = 8 * np.dtype(STORAGE[element]).itemsize
    low = 0 if element == "ui8" else -2

    return lambda rng, shape: [
        values(rng, element, shape),
        values(rng, element, shape, low=low, high=width + 2),
    ]


for op in ("shift_left", "shift_right"):
    for element in INTEGERS:
        _op(op, [element] * 2, element, make=_shift_amounts(element))

FLOAT_MATH = ("sin", "cos", "tan", "atan", "sinh", "cosh", "erf", "expm1", "exp2")
FLOAT_MATH += ("floor", "ceil", "round", "trunc", "sign")
for op in FLOAT_MATH:
    _op(op, ["f32"], "f32")
for op in ("asin", "acos"):
    _op(op, ["f32"], "f32", make=lambda rng, s: [values(rng, "f32", s, low=-1, high=1)])
for op in ("log1p", "log2", "log10"):
    _op(op, ["f32"], "f32", make=lambda rng, s: [values(rng, "f32", s, low=0.1)])
_op("atan2", ["f32", "f32"], "f32")
_op("sin", ["bf16"], "bf16")
_op(
    "round",
    ["f16"],
    "f16",
    make=lambda rng, s: [np.round(4 * values(rng, "f32", s)) / 4],
)


def _special_floats(rng, shape):
    x = values(rng, "f32", shape)
    x.flat[:4] = [np.nan, np.inf, -np.inf, -0.0]
    return [x]


for op in ("isnan", "isinf"):
    _op(op, ["f32"], "i1", make=_special_floats)
    _op(op, ["bf16"], "i1", make=_special_floats)

ELEMENTS = ("f32", "f16", "bf16", *INTEGERS, "i1")


def _cast_inputs(source, target):
    def make(rng, shape):
        if source in ("f32", "f16", "bf16"):
            # Fractions both ways of zero; in range of every integer type
            # (a float out of a type's range converts as C leaves undefined).
            high = 100 if target in ("i8", "i32", "i64") else 250
            low = 0 if target == "ui8" else -100
            x = values(rng, "f32", shape, low=low, high=high)
            x.flat[:3] = [-0.5, 0.5, 0.0]
            return [x]
        return [values(rng, source, shape)]

    return make


for source in ELEMENTS:
    for target in ELEMENTS:
        if source != target:
            _op("cast", [source], target, make=_cast_inputs(source, target))

_add(
    "attention_mask_from_ids",
    """
func.func @NAME(%pad: tensor<2x1x1x37xi1>) -> tensor<2x1x37x37xbf16> {
  %i = molten.iota axis = 2 : tensor<2x1x37x37xi64>
  %j = molten.iota axis = 3 : tensor<2x1x37x37xi64>
  %causal = molten.le %j, %i
      : (tensor<2x1x37x37xi64>, tensor<2x1x37x37xi64>) -> tensor<2x1x37x37xi1>
  %keep = molten.logical_and %causal, %pad
      : (tensor<2x1x37x37xi1>, tensor<2x1x1x37xi1>) -> tensor<2x1x37x37xi1>
  %zero = molten.constant dense<0.0> : tensor<bf16>
  %minus = molten.constant dense<-3.38953139e38> : tensor<bf16>
  %r = molten.where %keep, %zero, %minus
      : (tensor<2x1x37x37xi1>, tensor<bf16>, tensor<bf16>) -> tensor<2x1x37x37xbf16>
  func.return %r : tensor<2x1x37x37xbf16>
}
""",
    lambda rng: [values(rng, "i1", (2, 1, 1, 37))],
    "bf16",
)
_add(
    "position_ids_from_mask",
    """
func.func @NAME(%mask: tensor<4x64xi64>, %offset: tensor<4x1xi64>) -> tensor<4x64xi32> {
  %j = molten.iota axis = 1 : tensor<4x64xi64>
  %one = molten.constant dense<1> : tensor<i64>
  %shifted = molten.add %j, %offset
      : (tensor<4x64xi64>, tensor<4x1xi64>) -> tensor<4x64xi64>
  %pad = molten.eq %mask, %one : (tensor<4x64xi64>, tensor<i64>) -> tensor<4x64xi1>
  %none = molten.constant dense<1> : tensor<i64>
  %ids = molten.where %pad, %shifted, %none
      : (tensor<4x64xi1>, tensor<4x64xi64>, tensor<i64>) -> tensor<4x64xi64>
  %r = molten.cast %ids : tensor<4x64xi64> to tensor<4x64xi32>
  func.return %r : tensor<4x64xi32>
}
""",
    lambda rng: [
        values(rng, "i1", (4, 64)).astype(np.int64),
        values(rng, "i64", (4, 1), low=-(2**40), high=2**40),
    ],
    "i32",
)
_add(
    "scaled_ids_to_float",
    """
func.func @NAME(%ids: tensor<5x33xi64>, %scale: tensor<33xf16>) -> tensor<5x33xf16> {
  %three = molten.constant dense<3> : tensor<i64>
  %m = molten.remainder %ids, %three
      : (tensor<5x33xi64>, tensor<i64>) -> tensor<5x33xi64>
  %f = molten.cast %m : tensor<5x33xi64> to tensor<5x33xf16>
  %r = molten.mul %f, %scale : (tensor<5x33xf16>, tensor<33xf16>) -> tensor<5x33xf16>
  func.return %r : tensor<5x33xf16>
}
""",
    lambda rng: [
        values(rng, "i64", (5, 33), low=-1000, high=1000),
        values(rng, "f32", (33,)).astype(np.float16),
    ],
    "f16",
)


def _indexing(name, text, shapes):
    """A lookup case: `shapes` gives each input as (element, shape, size),
    size the range of an index input's values (None for data)."""

    def inputs(rng):
        return [
            values(rng, e, s)
            if size is None
            else rng.integers(0, size, s).astype(STORAGE[e])
            for e, s, size in shapes
        ]

    _add(name, text, inputs, re.search(r"-> tensor<[^>]*x(\w+)>\n", text)[1])


_indexing(
    "embedding_scaled_plus_positions",
    """
func.func @NAME(%t: tensor<1000x64xbf16>, %ids: tensor<3x5xi64>, %p: tensor<5x64xbf16>)
    -> tensor<3x5x64xbf16> {
  %e = molten.take %t, %ids axis = 0
      : (tensor<1000x64xbf16>, tensor<3x5xi64>) -> tensor<3x5x64xbf16>
  %s = molten.constant dense<8.0> : tensor<bf16>
  %m = molten.mul %e, %s : (tensor<3x5x64xbf16>, tensor<bf16>) -> tensor<3x5x64xbf16>
  %r = molten.add %m, %p
      : (tensor<3x5x64xbf16>, tensor<5x64xbf16>) -> tensor<3x5x64xbf16>
  func.return %r : tensor<3x5x64xbf16>
}
""",
    [("bf16", (1000, 64), None), ("i64", (3, 5), 1000), ("bf16", (5, 64), None)],
)
_indexing(
    "index_select_columns_i32",
    """
func.func @NAME(%x: tensor<6x17xf32>, %i: tensor<9xi32>) -> tensor<6x9xf32> {
  %r = molten.take %x, %i axis = 1
      : (tensor<6x17xf32>, tensor<9xi32>) -> tensor<6x9xf32>
  func.return %r : tensor<6x9xf32>
}
""",
    [("f32", (6, 17), None), ("i32", (9,), 17)],
)
_indexing(
    "gather_rows_of_ids",
    """
func.func @NAME(%x: tensor<5x40xi64>, %i: tensor<4x3xi64>) -> tensor<4x3xi64> {
  %r = molten.gather %x, %i axis = 1
      : (tensor<5x40xi64>, tensor<4x3xi64>) -> tensor<4x3xi64>
  func.return %r : tensor<4x3xi64>
}
""",
    [("i64", (5, 40), None), ("i64", (4, 3), 40)],
)


def _scan(element, shape, axis, flags="", op="cumsum"):
    name = f"{op}_{element}_{'x'.join(map(str, shape))}_{axis}{flags.replace(' ', '_')}"
    t = tensor(element, shape)
    text = (
        f"func.func @NAME(%m: {t}) -> {t} {{\n"
        f"  %r = molten.{op} %m axis = {axis}{flags} : {t}\n"
        f"  func.return %r : {t}\n}}\n"
    )
    high = 1 if element in ("i8", "ui8") or op == "cumprod" else None
    low = -1 if op == "cumprod" else 0 if op == "cumsum" else None
    _add(
        name,
        text,
        lambda rng: [values(rng, element, shape, low=low, high=high)],
        element,
    )


# Rows of one warp, of a block (warps exchanging their sums), strided rows.
_scan("i64", (2, 37), 1)
_scan("i64", (3, 5000), 1)
_scan("i32", (4, 300), 1, " reverse exclusive")
_scan("i8", (64, 5), 0)
# The other combinations: products of -1, 0 and 1 (exact), extremes over the
# whole range, reverse and exclusive (the type's extreme first).
_scan("i64", (3, 5000), 1, op="cumprod")
_scan("i32", (2, 37), 1, " reverse", op="cumprod")
_scan("i64", (3, 5000), 1, op="cummax")
_scan("i32", (4, 300), 1, " reverse exclusive", op="cummin")
_scan("ui8", (64, 5), 0, op="cummax")
_scan("i8", (2, 37), 1, " exclusive", op="cummin")
_add(
    "position_ids_from_padding",
    """
func.func @NAME(%mask: tensor<2x300xi64>) -> tensor<2x300xi64> {
  %c = molten.cumsum %mask axis = 1 : tensor<2x300xi64>
  %one = molten.constant dense<1> : tensor<i64>
  %p = molten.sub %c, %one : (tensor<2x300xi64>, tensor<i64>) -> tensor<2x300xi64>
  %pad = molten.eq %mask, %one : (tensor<2x300xi64>, tensor<i64>) -> tensor<2x300xi1>
  %r = molten.where %pad, %p, %one
      : (tensor<2x300xi1>, tensor<2x300xi64>, tensor<i64>) -> tensor<2x300xi64>
  func.return %r : tensor<2x300xi64>
}
""",
    lambda rng: [values(rng, "i1", (2, 300)).astype(np.int64)],
    "i64",
)


# --------------------------------------------------------------------------
# Row reductions of integer results or inputs: argmax and argmin (int64
# positions of float and integer rows, ties and NaNs among them), max and
# argmax of one row together, integer sums and maxima. Each is one
# row_reduce kernel (tests/test_integer_kernels.py).
# --------------------------------------------------------------------------

REDUCTIONS: dict[str, Case] = {}


def _ties(rng, element, shape):
    """Few distinct values (ties), with -0.0 and 0.0 among them, and a NaN
    in every third row of a float row set."""
    if element not in ("f32", "f16", "bf16"):
        high = 1 if element == "ui8" else 3
        return values(rng, element, shape, low=-3 if element != "ui8" else 0, high=high)
    x = rng.integers(-3, 4, shape).astype(np.float32)
    x[rng.random(shape) < 0.1] = -0.0
    rows = x.reshape(-1, shape[-1])
    for r in range(0, rows.shape[0], 3):
        rows[r, rng.integers(0, shape[-1])] = np.nan
    return x


def _reduction(op, element, shape, axis, keepdim=False, result=None):
    keep = " keepdim" if keepdim else ""
    out_shape = [
        1 if i == axis else d for i, d in enumerate(shape) if keepdim or i != axis
    ]
    result = result or ("i64" if op.startswith("arg") else element)
    t, r = tensor(element, shape), tensor(result, out_shape)
    name = f"{op}_{element}_{'x'.join(map(str, shape))}_{axis}{keep.replace(' ', '_')}"
    text = (
        f"func.func @NAME(%x: {t}) -> {r} {{\n"
        f"  %r = molten.{op} %x axes = [{axis}]{keep} : {t} -> {r}\n"
        f"  func.return %r : {r}\n}}\n"
    )
    name = re.sub(r"\W", "_", name)
    REDUCTIONS[name] = Case(
        text.replace("@NAME", f"@{name}"),
        lambda rng: [_ties(rng, element, shape)],
        result,
    )


# A warp's lanes a row, a block a row, a row walked in passes (a vocabulary
# of logits), strided rows a thread each; float and integer elements.
for _element in ("f32", "f16", "bf16", "i32", "i8", "ui8"):
    _reduction("argmax", _element, (3, 17), 1)
    _reduction("argmin", _element, (3, 17), 1)
_reduction("argmax", "bf16", (4, 5000), 1, keepdim=True)
_reduction("argmin", "f32", (4, 5000), 1)
_reduction("argmax", "bf16", (2, 152064), 1)
_reduction("argmax", "f16", (7, 33), 0)
_reduction("argmin", "f32", (64, 3, 128), 1)
_reduction("argmax", "i32", (5, 40, 64), 1)
for _element, _shape in (("i64", (3, 17)), ("i32", (4, 5000)), ("i8", (64, 3, 40))):
    _reduction("reduce_sum", _element, _shape, 1)
    _reduction("reduce_max", _element, _shape, 1)
_reduction("reduce_max", "ui8", (3, 17), 1)
# Rows split across blocks: int64 keys and integer totals exchanged in
# their own types (a decode step's one row of logits).
_reduction("argmax", "bf16", (1, 152064), 1)
_reduction("argmin", "f16", (3, 70001), 1)
_reduction("reduce_sum", "i32", (2, 200003), 1)

REDUCTIONS["max_with_indices_bf16"] = Case(
    """
func.func @max_with_indices_bf16(%x: tensor<6x1000xbf16>)
    -> (tensor<6xbf16>, tensor<6xi64>) {
  %m = molten.reduce_max %x axes = [1] : tensor<6x1000xbf16> -> tensor<6xbf16>
  %i = molten.argmax %x axes = [1] : tensor<6x1000xbf16> -> tensor<6xi64>
  func.return %m, %i : tensor<6xbf16>, tensor<6xi64>
}
""",
    lambda rng: [_ties(rng, "bf16", (6, 1000))],
    "bf16",
)
REDUCTIONS["max_with_indices_split_f32"] = Case(
    """
func.func @max_with_indices_split_f32(%x: tensor<2x100000xf32>)
    -> (tensor<2x1xf32>, tensor<2x1xi64>) {
  %m = molten.reduce_max %x axes = [1] keepdim : tensor<2x100000xf32> -> tensor<2x1xf32>
  %i = molten.argmax %x axes = [1] keepdim : tensor<2x100000xf32> -> tensor<2x1xi64>
  func.return %m, %i : tensor<2x1xf32>, tensor<2x1xi64>
}
""",
    lambda rng: [_ties(rng, "f32", (2, 100000))],
    "f32",
)
REDUCTIONS["greedy_token"] = Case(
    """
func.func @greedy_token(%logits: tensor<2x32000xf16>, %t: tensor<f16>)
    -> tensor<2xi64> {
  %s = molten.div %logits, %t
      : (tensor<2x32000xf16>, tensor<f16>) -> tensor<2x32000xf16>
  %i = molten.argmax %s axes = [1] : tensor<2x32000xf16> -> tensor<2xi64>
  func.return %i : tensor<2xi64>
}
""",
    lambda rng: [
        values(rng, "f16", (2, 32000)).astype(np.float16),
        np.array(0.7, np.float16),
    ],
    "i64",
)
