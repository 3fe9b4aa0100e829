"""The C++ spelling of IR types and of constants."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute


def c_type(t: Attribute) -> str:
    if isinstance(t, Float32Type):
        return "float"
    if isinstance(t, Float16Type):
        return "__half"
    if isinstance(t, BFloat16Type):
        return "__nv_bfloat16"
    if isinstance(t, IndexType):
        return "int64_t"
    if isinstance(t, IntegerType):
        found = _INTEGERS.get((t.width.data, t.signedness.data != Signedness.UNSIGNED))
        if found is not None:
            return found
    raise NotImplementedError(f"-t cuda: no C++ type for {t}")


_INTEGERS = {
    (1, True): "bool",
    (8, True): "int8_t",
    (8, False): "uint8_t",
    (32, True): "int",  # also COUNTER_TYPE
    (64, True): "int64_t",
    (64, False): "unsigned long long",  # DESCRIPTOR and BARRIER_TYPE
}
"""The C++ type of an integer type by (width, signed); signless is signed."""


def integer_literal(value: int, t: IntegerType) -> str:
    """The C++ literal of `value` as a `t`: an int64 one with the LL suffix
    (the least is written as an expression: its magnitude has no literal)."""
    if t.width.data == 1:
        return "true" if value else "false"
    if t.width.data < 64:
        return str(value)
    if value == -(2**63):
        return "(-9223372036854775807LL - 1)"
    return f"{value}ULL" if t.signedness.data == Signedness.UNSIGNED else f"{value}LL"


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
