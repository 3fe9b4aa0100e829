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
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from molten.dialects import molten

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
    raise TypeError(f"no numpy storage for element type {element_type}")


def round_to(array: Any, element_type: Attribute) -> np.ndarray:
    """`array` rounded to `element_type` and held in its storage dtype."""
    if isinstance(element_type, BFloat16Type):
        return round_to_bfloat16(array)
    with np.errstate(over="ignore"):
        return np.asarray(array).astype(storage_dtype(element_type))


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
    values = np.array(op.value.get_values(), dtype=dtype)
    shape = tuple(op.value.get_type().get_shape())
    if values.size == 1:
        return np.full(shape, values[0], dtype=dtype)
    return values.reshape(shape)


def cumsum(x: np.ndarray, axis: int, reverse: bool, exclusive: bool) -> np.ndarray:
    """torch.cumsum along `axis`; from the end with `reverse`; with
    `exclusive`, each element the sum of those before it (the first 0)."""
    if reverse:
        x = np.flip(x, axis)
    total = np.cumsum(x, axis=axis)
    if exclusive:
        before = np.take(total, range(x.shape[axis] - 1), axis=axis)
        pad = [(0, 0)] * x.ndim
        pad[axis] = (1, 0)
        total = np.pad(before, pad)
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


SEMANTICS: dict[type[Operation], Semantics] = {
    molten.AddOp: lambda op, dt, a, b: a + b,
    molten.SubOp: lambda op, dt, a, b: a - b,
    molten.MulOp: lambda op, dt, a, b: a * b,
    molten.DivOp: lambda op, dt, a, b: a / b,
    molten.MaxOp: lambda op, dt, a, b: np.maximum(a, b),
    molten.MinOp: lambda op, dt, a, b: np.minimum(a, b),
    molten.PowOp: lambda op, dt, a, b: np.power(a, b),
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
    molten.TriuOp: lambda op, dt, x: np.triu(x, op.diagonal.value.data),
    molten.TrilOp: lambda op, dt, x: np.tril(x, op.diagonal.value.data),
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
    molten.CumsumOp: lambda op, dt, x: cumsum(
        x, op.axis.value.data, op.reverse is not None, op.exclusive is not None
    ),
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
    """One molten op on numpy operands (in storage form), as the interpreter runs it."""
    dtype = np.dtype(np.float64 if reference else np.float32)
    with np.errstate(all="ignore"):
        value = SEMANTICS[type(op)](op, dtype, *(a.astype(dtype) for a in operands))
        value = np.asarray(value, dtype=dtype)
        if reference:
            return value
        return round_to(value, op.results[0].type.element_type)


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
