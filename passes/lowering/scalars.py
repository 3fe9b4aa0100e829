"""Scalars of every element type in a kernel body: the type a tensor's
elements are computed in (f32 for every float; an integer or a bool its own
type), typed constants, torch's conversions between element types, and the
arith ops of molten's elementwise ops on such scalars.

An integer scalar has its tensor's element type (i64, i32, i8 signless and
signed; ui8 unsigned; i1 a bool), so the C++ variable holding it wraps as
torch's integers do, and the op chosen follows its signedness (divui, not
divsi, on a ui8).
"""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda
from molten.dialects.molten import (
    BOOL,
    FLOAT,
    element_kind,
    integer_range,
    is_unsigned,
)
from molten.passes.lowering.emitter import F32, Emitter


def scalar_type(element: Attribute) -> Attribute:
    """The type an element of a tensor of `element` is computed in."""
    return F32 if element_kind(element) == FLOAT else element


def is_float(x: SSAValue) -> bool:
    return isinstance(x.type, Float32Type)


def _unsigned(t: Attribute) -> bool:
    # A bool compares and divides as the unsigned 0 and 1 it is.
    return t == BOOL or is_unsigned(t)


def zero(e: Emitter, t: Attribute) -> SSAValue:
    return e.constant(0, t)


def convert(e: Emitter, x: SSAValue, source: Attribute, target: Attribute) -> SSAValue:
    """`x`, an element of `source`, as an element of `target`, as torch casts:
    a float to an integer truncates toward zero (through int64, wrapping to
    a narrower type), anything to a bool is whether it is nonzero, a bool is
    0 or 1, and a float is rounded to `target`'s precision (held in f32)."""
    to = scalar_type(target)
    if target == BOOL:
        return to_bool(e, x)
    if isinstance(to, Float32Type):
        if not is_float(x):
            make = arith.UIToFPOp if _unsigned(x.type) else arith.SIToFPOp
            x = e.add(make(x, F32))
        return round_to(e, x, target)
    assert isinstance(to, IntegerType)
    if is_float(x):
        wide = e.add(arith.FPToSIOp(x, IntegerType(64)))
        return convert(e, wide, IntegerType(64), target)
    width, to_width = x.type.bitwidth, to.bitwidth  # type: ignore[attr-defined]
    if x.type == to:
        return x
    if width < to_width:
        extend = arith.ExtUIOp if _unsigned(x.type) else arith.ExtSIOp
        return e.add(extend(x, to))
    if width > to_width:
        return e.add(arith.TruncIOp(x, to))
    return e.add(arith.BitcastOp(x, to))  # i8 <-> ui8: the same bits


def round_to(e: Emitter, value: SSAValue, element: Attribute) -> SSAValue:
    """An f32 value rounded to float `element`'s precision, still as f32."""
    if isinstance(element, Float32Type):
        return value
    narrow = e.add(arith.TruncFOp(value, element))
    return e.add(arith.ExtFOp(narrow, F32))


def to_bool(e: Emitter, x: SSAValue) -> SSAValue:
    """Whether `x` is nonzero (a NaN is)."""
    if x.type == BOOL:
        return x
    if is_float(x):
        return e.add(arith.CmpfOp(x, e.f32(0.0), "une"))
    return e.add(arith.CmpiOp(x, zero(e, x.type), "ne"))


_FLOAT_PREDICATES = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole"}
_FLOAT_PREDICATES |= {"gt": "ogt", "ge": "oge"}


def compare(e: Emitter, relation: str, a: SSAValue, b: SSAValue) -> SSAValue:
    """a `relation` b (eq, ne, lt, le, gt, ge) as a bool; a NaN compares
    unequal to everything, as in torch."""
    if is_float(a):
        return e.add(arith.CmpfOp(a, b, _FLOAT_PREDICATES[relation]))
    if relation in ("eq", "ne"):
        return e.add(arith.CmpiOp(a, b, relation))
    sign = "u" if _unsigned(a.type) else "s"
    return e.add(arith.CmpiOp(a, b, sign + relation))


def add(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.add((arith.AddfOp if is_float(a) else arith.AddiOp)(a, b))


def subtract(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.add((arith.SubfOp if is_float(a) else arith.SubiOp)(a, b))


def multiply(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    return e.add((arith.MulfOp if is_float(a) else arith.MuliOp)(a, b))


def maximum(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """The greater (a NaN if either is one, as torch.maximum)."""
    if is_float(a):
        return e.add(arith.MaximumfOp(a, b))
    return e.add((arith.MaxUIOp if _unsigned(a.type) else arith.MaxSIOp)(a, b))


def minimum(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    if is_float(a):
        return e.add(arith.MinimumfOp(a, b))
    return e.add((arith.MinUIOp if _unsigned(a.type) else arith.MinSIOp)(a, b))


def negate(e: Emitter, x: SSAValue) -> SSAValue:
    if is_float(x):
        return e.add(arith.NegfOp(x))
    return e.add(arith.SubiOp(zero(e, x.type), x))


def absolute(e: Emitter, x: SSAValue) -> SSAValue:
    if is_float(x):
        return e.add(mathd.AbsFOp(x))
    if _unsigned(x.type):
        return x
    return e.select(compare(e, "lt", x, zero(e, x.type)), negate(e, x), x)


def lowest(e: Emitter, t: Attribute) -> SSAValue:
    """The start of a maximum: -inf, or an integer type's least value."""
    if isinstance(t, Float32Type):
        return e.f32(-math.inf)
    return e.constant(integer_range(t)[0], t)


def highest(e: Emitter, t: Attribute) -> SSAValue:
    """The start of a minimum: inf, or an integer type's greatest value."""
    if isinstance(t, Float32Type):
        return e.f32(math.inf)
    return e.constant(integer_range(t)[1], t)


def one(e: Emitter, t: Attribute) -> SSAValue:
    return e.constant(1, t)


def sign(e: Emitter, x: SSAValue) -> SSAValue:
    """-1, 0 or 1 (0 at a NaN, as torch.sign)."""
    t = x.type
    z = zero(e, t)
    below = z
    if not _unsigned(t):
        below = e.select(compare(e, "lt", x, z), e.constant(-1, t), z)
    return e.select(compare(e, "gt", x, z), e.constant(1, t), below)


def _divisor(e: Emitter, b: SSAValue) -> tuple[SSAValue, SSAValue]:
    """Whether integer `b` is 0, and `b` with a 0 replaced by 1: the
    division is then defined, and its result is chosen after."""
    by_zero = compare(e, "eq", b, zero(e, b.type))
    return by_zero, e.select(by_zero, e.constant(1, b.type), b)


def _signs_differ(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    z = zero(e, a.type)
    return e.add(arith.XOrIOp(compare(e, "lt", a, z), compare(e, "lt", b, z)))


def floor_divide(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """a // b, rounded toward -inf. Integers: a division by 0 is -1 (as
    torch's CUDA kernels give). Floats: torch's div_floor (the quotient of
    a - fmod(a, b), corrected to the nearest integer)."""
    if not is_float(a):
        by_zero, divisor = _divisor(e, b)
        make = arith.DivUIOp if _unsigned(a.type) else arith.FloorDivSIOp
        quotient = e.add(make(a, divisor))
        return e.select(by_zero, e.constant(-1, a.type), quotient)
    mod = e.add(cuda.FmodOp(a, b))
    div = e.add(arith.DivfOp(e.add(arith.SubfOp(a, mod)), b))
    adjust = e.add(arith.AndIOp(to_bool(e, mod), _signs_differ(e, b, mod)))
    div = e.select(adjust, e.add(arith.SubfOp(div, e.f32(1.0))), div)
    floor = e.add(mathd.FloorOp(div))
    up = compare(e, "gt", e.add(arith.SubfOp(div, floor)), e.f32(0.5))
    rounded = e.select(up, e.add(arith.AddfOp(floor, e.f32(1.0))), floor)
    quotient = e.add(arith.DivfOp(a, b))
    signed_zero = e.add(mathd.CopySignOp(e.f32(0.0), quotient))
    result = e.select(to_bool(e, div), rounded, signed_zero)
    return e.select(compare(e, "eq", b, e.f32(0.0)), quotient, result)


def fmod(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """The remainder with the sign of `a` (C's %; an integer's by 0 is 0)."""
    if is_float(a):
        return e.add(cuda.FmodOp(a, b))
    by_zero, divisor = _divisor(e, b)
    make = arith.RemUIOp if _unsigned(a.type) else arith.RemSIOp
    return e.select(by_zero, zero(e, a.type), e.add(make(a, divisor)))


def remainder(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """The remainder with the sign of `b` (Python's %, torch.remainder)."""
    rem = fmod(e, a, b)
    if not is_float(a) and _unsigned(a.type):
        return rem
    adjust = e.add(arith.AndIOp(to_bool(e, rem), _signs_differ(e, rem, b)))
    return e.select(adjust, add(e, rem, b), rem)


def shift(e: Emitter, left: bool, a: SSAValue, b: SSAValue) -> SSAValue:
    """a << b or a >> b with torch's rule past the width (a shift by less
    than 0 or not less than the width): 0 to the left, and to the right
    the sign filled (0 for an unsigned a)."""
    t = a.type
    width = t.bitwidth  # type: ignore[attr-defined]
    z = zero(e, t)
    beyond = compare(e, "ge", b, e.constant(width, t))
    outside = beyond
    if not _unsigned(t):
        outside = e.add(arith.OrIOp(compare(e, "lt", b, z), beyond))
    amount = e.select(outside, z, b)
    if left:
        return e.select(outside, z, e.add(arith.ShLIOp(a, amount)))
    if _unsigned(t):
        return e.select(outside, z, e.add(arith.ShRUIOp(a, amount)))
    fill = e.add(arith.ShRSIOp(a, e.constant(width - 1, t)))
    return e.select(outside, fill, e.add(arith.ShRSIOp(a, amount)))


def bitwise_not(e: Emitter, x: SSAValue) -> SSAValue:
    # Every bit set: true, the greatest unsigned value, or -1.
    if x.type == BOOL:
        ones = e.true()
    elif is_unsigned(x.type):
        ones = e.constant(integer_range(x.type)[1], x.type)
    else:
        ones = e.constant(-1, x.type)
    return e.add(arith.XOrIOp(x, ones))


def is_nan(e: Emitter, x: SSAValue) -> SSAValue:
    return e.add(arith.CmpfOp(x, x, "uno"))


def is_inf(e: Emitter, x: SSAValue) -> SSAValue:
    return e.add(arith.CmpfOp(e.add(mathd.AbsFOp(x)), e.f32(math.inf), "oeq"))
