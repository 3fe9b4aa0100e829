"""Reference semantics of the molten dialect on numpy, for xDSL's interpreter.

This is the oracle every pass and kernel is tested against, so each op follows
PyTorch's definition of the same op (gelu's two forms, the max-subtracted
softmax, layer_norm's biased variance, top-left-aligned causal attention).

Two precisions:

* native (default): every op reads its operands as float32, computes in
  float32 and rounds its result to the result's element type (f16, or bf16
  with round-to-nearest-even), which is what a fused GPU kernel and PyTorch
  eager do per op. bf16 tensors are held as float32 arrays of bf16 values,
  since numpy has no bf16.
* reference (`reference=True`): every op computes in float64 and nothing is
  rounded to its element type, casts included: the exact-math oracle that
  low-precision results are compared against with a tolerance.

Integers and bools are exact in both: an op on them computes in its
element's own numpy type (int64, int32, int8, uint8, bool), wrapping on
overflow as torch does, and a result of an integer or bool type is
converted as torch converts (a float truncated toward zero, anything
nonzero true).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from molten.dialects import molten
from molten.dialects.molten import BOOL, FLOAT, element_kind, is_unsigned
from molten.errors import InputError

Semantics = Callable[..., np.ndarray]
"""`fn(op, dtype, *operands) -> result`, computing in numpy dtype `dtype`."""


# --------------------------------------------------------------------------
# Element types and rounding.
# --------------------------------------------------------------------------


def _to_float32_round_to_odd(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding toward zero, lowest bit set when inexact.

    Rounding to odd with 16 spare bits makes a following round-to-nearest to
    bf16 correct, where rounding to nearest twice could be off by one ulp.
    """
    y = x.astype(np.float32)
    too_far = np.abs(y.astype(np.float64)) > np.abs(x)
    y = np.where(too_far, np.nextafter(y, np.float32(0)), y).astype(np.float32)
    inexact = (y.astype(np.float64) != x) & np.isfinite(y)
    bits = y.view(np.uint32) | inexact.astype(np.uint32)
    return bits.view(np.float32)


def round_to_bfloat16(array: Any) -> np.ndarray:
    """Values rounded to the nearest bf16 (ties to even), held as float32."""
    x = np.asarray(array)
    with np.errstate(all="ignore"):
        if x.dtype == np.float64:
            x = _to_float32_round_to_odd(x)
        x = np.array(x, dtype=np.float32)  # a contiguous copy; keeps rank 0
        bits = x.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
        return np.where(np.isnan(x), np.float32(np.nan), rounded.view(np.float32))


def storage_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of a molten element type."""
    if isinstance(element_type, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element_type, Float32Type | BFloat16Type):
        return np.dtype(np.float32)
    if element_type == BOOL:
        return np.dtype(np.bool_)
    if isinstance(element_type, IntegerType):
        sign = "u" if is_unsigned(element_type) else "i"
        return np.dtype(f"{sign}{element_type.width.data // 8}")
    raise TypeError(f"no numpy storage for element type {element_type}")


def round_to(array: Any, element_type: Attribute) -> np.ndarray:
    """`array` rounded to `element_type` and held in its storage dtype; to
    an integer, truncated toward zero and wrapped; to a bool, nonzero."""
    if isinstance(element_type, BFloat16Type):
        return round_to_bfloat16(array)
    x = np.asarray(array)
    with np.errstate(all="ignore"):
        if element_type == BOOL:
            return x != 0
        if isinstance(element_type, IntegerType) and x.dtype.kind == "f":
            # Through int64, so that wrapping to a narrow type is modular
            # (numpy casts a float out of int8's range unpredictably).
            x = np.trunc(x).astype(np.int64)
        return x.astype(storage_dtype(element_type))


# --------------------------------------------------------------------------
# Op semantics.
# --------------------------------------------------------------------------

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, exact to float64 (numpy has none)."""
    values = np.asarray(_erf(np.asarray(x, dtype=np.float64)), dtype=np.float64)
    return values.astype(x.dtype)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    if approximate == "tanh":
        c = x.dtype.type(math.sqrt(2 / math.pi))
        return 0.5 * x * (1 + np.tanh(c * (x + x.dtype.type(0.044715) * x**3)))
    return 0.5 * x * (1 + erf(x / x.dtype.type(math.sqrt(2))))


def rotate_half(x: np.ndarray) -> np.ndarray:
    first, second = np.split(x, 2, axis=-1)
    return np.concatenate([-second, first], axis=-1)


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    rows, cols = shape[-2:]
    keep = np.arange(cols)[None, :] <= np.arange(rows)[:, None]
    mask = np.where(keep, 0.0, -np.inf).astype(dtype)
    return np.broadcast_to(mask, shape)


def _axes(op: molten.ReductionOp) -> tuple[int, ...]:
    return tuple(op.axes.get_values())


def _normalized_axes(op: molten.RmsNormOp | molten.LayerNormOp) -> tuple[int, ...]:
    return tuple(range(-len(op.weight.type.get_shape()), 0))


def f32_parameter(value: float, dtype: np.dtype):
    """A composite's float parameter (eps, scale) as the f32 value it computes
    with, as PyTorch does; exact in float64 too."""
    return dtype.type(np.float32(value))


def _rms_norm(op: molten.RmsNormOp, dtype, x, w):
    axes = _normalized_axes(op)
    eps = f32_parameter(op.epsilon.value.data, dtype)
    return x * (1 / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)) * w


def _layer_norm(op: molten.LayerNormOp, dtype, x, w, b):
    axes = _normalized_axes(op)
    eps = f32_parameter(op.epsilon.value.data, dtype)
    centered = x - np.mean(x, axis=axes, keepdims=True)
    variance = np.mean(centered * centered, axis=axes, keepdims=True)
    return centered * (1 / np.sqrt(variance + eps)) * w + b


def _matmul(op: molten.MatmulOp, dtype, a, b):
    if op.transpose_a is not None:
        a = np.swapaxes(a, -1, -2)
    if op.transpose_b is not None:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)


def _attention(op: molten.AttentionOp, dtype, q, k, v):
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * f32_parameter(
        op.scale.value.data, dtype
    )
    if op.causal is not None:
        scores = scores + causal_mask(scores.shape[-2:], dtype)
    return np.matmul(softmax(scores, axis=-1), v)


def _constant(op: molten.ConstantOp, dtype):
    if element_kind(op.result.type.element_type) != FLOAT:
        dtype = storage_dtype(op.result.type.element_type)
    values = np.array(op.values(), dtype=dtype)
    shape = tuple(op.value.get_type().get_shape())
    if values.size == 1:
        return np.full(shape, values[0], dtype=dtype)
    return values.reshape(shape)


_SCANS = {
    "sum": (np.add, 0),
    "prod": (np.multiply, 1),
    "max": (np.maximum, None),
    "min": (np.minimum, None),
}
"""A scan's combination and its identity (None: the type's extreme)."""


def scan(
    x: np.ndarray, axis: int, reverse: bool, exclusive: bool, combine: str = "sum"
) -> np.ndarray:
    """torch.cumsum (cumprod, cummax's and cummin's values) along `axis`;
    from the end with `reverse`; with `exclusive`, each element the
    combination of those before it (the first the identity)."""
    ufunc, identity = _SCANS[combine]
    if reverse:
        x = np.flip(x, axis)
    total = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
    if exclusive:
        if identity is None and np.issubdtype(x.dtype, np.floating):
            identity = -np.inf if combine == "max" else np.inf
        elif identity is None:
            extremes = np.iinfo(x.dtype)
            identity = extremes.min if combine == "max" else extremes.max
        before = np.take(total, range(x.shape[axis] - 1), axis=axis)
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        total = np.pad(before, pad, constant_values=identity)
    return np.flip(total, axis) if reverse else total


def _result_shape(op: Operation) -> tuple[int, ...]:
    return tuple(op.results[0].type.get_shape())


def _axis(op: molten.SliceOp | molten.PadOp) -> int:
    return op.axis.value.data


def _padding(op: molten.PadOp, x: np.ndarray) -> list[tuple[int, int]]:
    axis, before = _axis(op), op.before.value.data
    widths = [(0, 0)] * x.ndim
    widths[axis] = (before, _result_shape(op)[axis] - before - x.shape[axis])
    return widths


def _shift(op: molten.ShiftLeftOp | molten.ShiftRightOp, a, b) -> np.ndarray:
    """A shift with torch's rule past the width: 0 to the left (and to the
    right for ui8), the sign bit filled to the right."""
    width = a.dtype.itemsize * 8
    out = (b < 0) | (b >= width)
    amount = np.where(out, 0, b).astype(a.dtype)
    if isinstance(op, molten.ShiftLeftOp):
        return np.where(out, 0, np.left_shift(a, amount)).astype(a.dtype)
    fill = np.zeros_like(a) if a.dtype.kind == "u" else np.right_shift(a, width - 1)
    return np.where(out, fill, np.right_shift(a, amount)).astype(a.dtype)


def _floor_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Python's // (floor toward -inf), integer division by 0 giving -1 as
    on a GPU (C leaves it undefined; torch's CUDA kernels return -1)."""
    if a.dtype.kind == "f":
        return np.floor_divide(a, b)
    all_ones = np.invert(np.zeros((), a.dtype))  # -1, or 255 for a uint8
    quotient = np.floor_divide(a, np.where(b == 0, 1, b).astype(b.dtype))
    return np.where(b == 0, all_ones, quotient).astype(a.dtype)


def _by_nonzero(remainder, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """An integer remainder, 0 where the divisor is 0 (as the kernels
    give); a float one as IEEE has it (NaN)."""
    if a.dtype.kind == "f":
        return remainder(a, b)
    divisor = np.where(b == 0, 1, b).astype(b.dtype)
    return np.where(b == 0, 0, remainder(a, divisor)).astype(a.dtype)


def _checked_indices(
    op: molten.TakeOp | molten.GatherOp | molten.ScatterOp, indices, size: int
):
    """An InputError naming the first index out of [0, size)."""
    bad = (indices < 0) | (indices >= size)
    if not bad.any():
        return
    position = [int(i) for i in np.argwhere(bad)[0]]
    raise InputError(
        f"{op.name}: index {int(indices[tuple(position)])} at position {position} "
        f"of 'indices' {op.indices.type} is out of range for axis "
        f"{op.axis.value.data} of input {op.input.type} (size {size})"
    )


def _take(op: molten.TakeOp, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    axis = op.axis.value.data
    _checked_indices(op, indices, x.shape[axis])
    return np.take(x, indices, axis=axis)


def _gather(op: molten.GatherOp, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    axis = op.axis.value.data
    _checked_indices(op, indices, x.shape[axis])
    # Along the other axes the indices cover the first of input's positions.
    window = tuple(
        slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape)
    )
    return np.take_along_axis(x[window], indices, axis=axis)


def _scatter(
    op: molten.ScatterOp, x: np.ndarray, indices: np.ndarray, source: np.ndarray
) -> np.ndarray:
    """x with source written (or added, `accumulate`) along the axis at the
    indices; of two writes to one element, the last (in source's order)."""
    axis = op.axis.value.data
    _checked_indices(op, indices, x.shape[axis])
    at = list(np.indices(indices.shape, sparse=True))
    at[axis] = indices
    result = np.array(x, copy=True)
    if op.accumulate is not None:
        np.add.at(result, tuple(at), source)
    else:
        result[tuple(at)] = source
    return result


def _diagonal(op: molten.TriuOp | molten.TrilOp, x: np.ndarray) -> int:
    """The op's diagonal, brought within the matrix's reach (numpy's index
    arithmetic overflows past int64 / 2; a diagonal beyond every column or
    row selects what the nearest in reach does)."""
    reach = x.shape[-1] + x.shape[-2] if x.ndim >= 2 else 1
    return max(-reach, min(reach, op.diagonal.value.data))


def _iota(op: molten.IotaOp, dtype) -> np.ndarray:
    shape = _result_shape(op)
    axis = op.axis.value.data
    ramp = np.arange(shape[axis], dtype=np.int64)
    ramp = ramp.reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return np.broadcast_to(ramp, shape)


SEMANTICS: dict[type[Operation], Semantics] = {
    molten.AddOp: lambda op, dt, a, b: a + b,
    molten.SubOp: lambda op, dt, a, b: a - b,
    molten.MulOp: lambda op, dt, a, b: a * b,
    molten.DivOp: lambda op, dt, a, b: a / b,
    molten.MaxOp: lambda op, dt, a, b: np.maximum(a, b),
    molten.MinOp: lambda op, dt, a, b: np.minimum(a, b),
    molten.PowOp: lambda op, dt, a, b: np.power(a, b),
    molten.FloorDivideOp: lambda op, dt, a, b: _floor_divide(a, b),
    molten.RemainderOp: lambda op, dt, a, b: _by_nonzero(np.remainder, a, b),
    molten.FmodOp: lambda op, dt, a, b: _by_nonzero(np.fmod, a, b),
    molten.Atan2Op: lambda op, dt, a, b: np.arctan2(a, b),
    molten.BitwiseAndOp: lambda op, dt, a, b: np.bitwise_and(a, b),
    molten.BitwiseOrOp: lambda op, dt, a, b: np.bitwise_or(a, b),
    molten.BitwiseXorOp: lambda op, dt, a, b: np.bitwise_xor(a, b),
    molten.ShiftLeftOp: lambda op, dt, a, b: _shift(op, a, b),
    molten.ShiftRightOp: lambda op, dt, a, b: _shift(op, a, b),
    molten.LogicalAndOp: lambda op, dt, a, b: np.logical_and(a, b),
    molten.LogicalOrOp: lambda op, dt, a, b: np.logical_or(a, b),
    molten.LogicalXorOp: lambda op, dt, a, b: np.logical_xor(a, b),
    molten.EqOp: lambda op, dt, a, b: a == b,
    molten.NeOp: lambda op, dt, a, b: a != b,
    molten.LtOp: lambda op, dt, a, b: a < b,
    molten.LeOp: lambda op, dt, a, b: a <= b,
    molten.GtOp: lambda op, dt, a, b: a > b,
    molten.GeOp: lambda op, dt, a, b: a >= b,
    molten.WhereOp: lambda op, dt, c, a, b: np.where(c, a, b),
    molten.IotaOp: _iota,
    molten.TakeOp: lambda op, dt, x, i: _take(op, x, i),
    molten.GatherOp: lambda op, dt, x, i: _gather(op, x, i),
    molten.ScatterOp: lambda op, dt, x, i, v: _scatter(op, x, i, v),
    molten.SinOp: lambda op, dt, x: np.sin(x),
    molten.CosOp: lambda op, dt, x: np.cos(x),
    molten.TanOp: lambda op, dt, x: np.tan(x),
    molten.AsinOp: lambda op, dt, x: np.arcsin(x),
    molten.AcosOp: lambda op, dt, x: np.arccos(x),
    molten.AtanOp: lambda op, dt, x: np.arctan(x),
    molten.SinhOp: lambda op, dt, x: np.sinh(x),
    molten.CoshOp: lambda op, dt, x: np.cosh(x),
    molten.ErfOp: lambda op, dt, x: erf(x),
    molten.Log1pOp: lambda op, dt, x: np.log1p(x),
    molten.Expm1Op: lambda op, dt, x: np.expm1(x),
    molten.Log2Op: lambda op, dt, x: np.log2(x),
    molten.Log10Op: lambda op, dt, x: np.log10(x),
    molten.Exp2Op: lambda op, dt, x: np.exp2(x),
    molten.FloorOp: lambda op, dt, x: np.floor(x),
    molten.CeilOp: lambda op, dt, x: np.ceil(x),
    molten.RoundOp: lambda op, dt, x: np.round(x),
    molten.TruncOp: lambda op, dt, x: np.trunc(x),
    # 0 at a NaN, as torch.sign (numpy's is NaN there).
    molten.SignOp: lambda op, dt, x: np.where(np.isnan(x), 0, np.sign(x)).astype(
        x.dtype
    ),
    molten.BitwiseNotOp: lambda op, dt, x: np.invert(x),
    molten.LogicalNotOp: lambda op, dt, x: np.logical_not(x),
    molten.IsNanOp: lambda op, dt, x: np.isnan(x),
    molten.IsInfOp: lambda op, dt, x: np.isinf(x),
    molten.NegOp: lambda op, dt, x: -x,
    molten.AbsOp: lambda op, dt, x: np.abs(x),
    molten.ExpOp: lambda op, dt, x: np.exp(x),
    molten.LogOp: lambda op, dt, x: np.log(x),
    molten.SqrtOp: lambda op, dt, x: np.sqrt(x),
    molten.RsqrtOp: lambda op, dt, x: 1 / np.sqrt(x),
    molten.ReciprocalOp: lambda op, dt, x: 1 / x,
    molten.SquareOp: lambda op, dt, x: x * x,
    molten.TanhOp: lambda op, dt, x: np.tanh(x),
    molten.SigmoidOp: lambda op, dt, x: sigmoid(x),
    molten.ReluOp: lambda op, dt, x: np.maximum(x, 0),
    molten.GeluOp: lambda op, dt, x: gelu(x, op.approximate.data),
    molten.SiluOp: lambda op, dt, x: x * sigmoid(x),
    molten.RotateHalfOp: lambda op, dt, x: rotate_half(x),
    molten.TriuOp: lambda op, dt, x: np.triu(x, _diagonal(op, x)),
    molten.TrilOp: lambda op, dt, x: np.tril(x, _diagonal(op, x)),
    # The result is rounded to the target element type on the way out.
    molten.CastOp: lambda op, dt, x: x,
    molten.ConstantOp: _constant,
    molten.ReduceSumOp: lambda op, dt, x: np.sum(
        x, axis=_axes(op), keepdims=op.keepdim is not None
    ),
    molten.ReduceMaxOp: lambda op, dt, x: np.max(
        x, axis=_axes(op), keepdims=op.keepdim is not None
    ),
    molten.ReduceMeanOp: lambda op, dt, x: np.mean(
        x, axis=_axes(op), keepdims=op.keepdim is not None
    ),
    molten.ArgMaxOp: lambda op, dt, x: np.argmax(
        x, axis=_axes(op)[0], keepdims=op.keepdim is not None
    ),
    molten.ArgMinOp: lambda op, dt, x: np.argmin(
        x, axis=_axes(op)[0], keepdims=op.keepdim is not None
    ),
    **{
        scan_op: lambda op, dt, x: scan(
            x,
            op.axis.value.data,
            op.reverse is not None,
            op.exclusive is not None,
            op.COMBINE,
        )
        for scan_op in (
            molten.CumsumOp,
            molten.CumprodOp,
            molten.CummaxOp,
            molten.CumminOp,
        )
    },
    molten.FlipOp: lambda op, dt, x: np.flip(x, tuple(op.axes.get_values())),
    molten.SliceOp: lambda op, dt, x: np.take(
        x,
        range(op.start.value.data, op.start.value.data + _result_shape(op)[_axis(op)]),
        axis=_axis(op),
    ),
    molten.PadOp: lambda op, dt, x: np.pad(x, _padding(op, x)),
    molten.BroadcastToOp: lambda op, dt, x: np.broadcast_to(x, _result_shape(op)),
    molten.ReshapeOp: lambda op, dt, x: np.reshape(x, _result_shape(op)),
    molten.TransposeOp: lambda op, dt, x: np.transpose(
        x, tuple(op.permutation.get_values())
    ),
    molten.MatmulOp: _matmul,
    molten.RmsNormOp: _rms_norm,
    molten.LayerNormOp: _layer_norm,
    molten.SoftmaxOp: lambda op, dt, x: softmax(x, op.axis.value.data),
    molten.RopeOp: lambda op, dt, x, cos, sin: x * cos + rotate_half(x) * sin,
    molten.AttentionOp: _attention,
    molten.CausalMaskOp: lambda op, dt: causal_mask(_result_shape(op), dt),
}


def evaluate(op: Operation, operands: list[np.ndarray], reference: bool) -> np.ndarray:
    """One molten op on numpy operands (in storage form), as the interpreter
    runs it: floats in the precision's dtype, integers and bools exactly."""
    dtype = np.dtype(np.float64 if reference else np.float32)
    args = [
        a.astype(dtype)
        if element_kind(v.type.element_type) == FLOAT
        else a.astype(storage_dtype(v.type.element_type))
        for a, v in zip(operands, op.operands, strict=True)
    ]
    element = op.results[0].type.element_type
    with np.errstate(all="ignore"):
        value = np.asarray(SEMANTICS[type(op)](op, dtype, *args))
        if element_kind(element) != FLOAT:
            return round_to(value, element)
        value = value.astype(dtype)
        if reference:
            return value
        return round_to(value, element)


class MoltenFunctions(InterpreterFunctions):
    """Interpreter implementations of every molten op (see module docstring)."""

    def __init__(self, reference: bool = False):
        self.reference = reference

    def run_molten_op(
        self, interpreter: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        return (evaluate(op, list(args), self.reference),)


for _op_type in SEMANTICS:
    setattr(
        MoltenFunctions,
        "run_" + _op_type.name.replace(".", "_"),
        impl(_op_type)(MoltenFunctions.run_molten_op),
    )
register_impls(MoltenFunctions)
