"""The C++ spelling of IR types and float constants."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute

from molten.dialects import cuda


def c_type(t: Attribute) -> str:
    if isinstance(t, Float32Type):
        return "float"
    if isinstance(t, Float16Type):
        return "__half"
    if isinstance(t, BFloat16Type):
        return "__nv_bfloat16"
    if isinstance(t, IndexType):
        return "int64_t"
    if isinstance(t, IntegerType) and t.width.data == 1:
        return "bool"
    if t == cuda.COUNTER_TYPE:
        return "int"
    if t == cuda.DESCRIPTOR:  # also BARRIER_TYPE, an mbarrier's i64
        return "unsigned long long"
    raise NotImplementedError(f"-t cuda: no C++ type for {t}")


def float_literal(value: float) -> str:
    """The C++ literal of `value` rounded to float32 (which reads back exactly)."""
    with np.errstate(over="ignore"):
        single = float(np.float32(value))
    # Bit patterns rather than math.h's NAN/INFINITY, which NVRTC lacks.
    if math.isnan(single):
        return "__int_as_float(0x7fc00000)"
    if math.isinf(single):
        return (
            "__int_as_float(0x7f800000)"
            if single > 0
            else "-__int_as_float(0x7f800000)"
        )
    text = repr(single)
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f"
