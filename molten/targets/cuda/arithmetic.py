"""The printers of arith and math ops and of the thread-index registers: each
result a `const` variable of one expression, or, for constants and thread
indices, the expression written where it is used."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Operation

from molten.dialects import cuda
from molten.targets.cuda.body import BodyPrinter, OpPrinter
from molten.targets.cuda.c_types import c_type, float_literal, integer_literal


def _constant(printer: BodyPrinter, op: arith.ConstantOp) -> None:
    value = op.value
    if isinstance(value, FloatAttr):
        printer.inline(op.result, float_literal(value.value.data))
        return
    if not isinstance(value, IntegerAttr):
        raise NotImplementedError(f"-t cuda: constant {value}")
    if isinstance(value.type, IntegerType):
        printer.inline(op.result, integer_literal(value.value.data, value.type))
        return
    printer.inline(op.result, str(value.value.data))


def special_register(variable: str) -> OpPrinter:
    """An axis of `threadIdx`, `blockIdx`, ..., inline."""
    return lambda printer, op: printer.inline(
        op.results[0], f"(int64_t){variable}.{op.dim.data.value}"
    )


def binary(operator: str, bitwise: str | None = None) -> OpPrinter:
    """`a <operator> b`; for a logical op, `bitwise` is its operator on
    integers wider than a bool."""

    def print_binary(printer: BodyPrinter, op: Operation) -> None:
        a, b = (printer.name(v) for v in op.operands)
        chosen = operator
        if bitwise is not None and op.results[0].type != IntegerType(1):
            chosen = bitwise
        printer.define(op.results[0], f"{a} {chosen} {b}")

    return print_binary


_UNSIGNED_OF = {
    "int8_t": "unsigned",
    "int": "unsigned",
    "int64_t": "unsigned long long",
}
"""The unsigned type of the same width as a signed type whose arithmetic can
overflow, or whose left shift of a negative value is undefined in C++17."""


def wrapping(operator: str) -> OpPrinter:
    """`a <operator> b` that wraps on overflow as torch's integers do: on a
    signed int or int64_t, computed on its unsigned type (where signed
    overflow would be undefined behaviour in C++) and converted back."""

    def print_wrapping(printer: BodyPrinter, op: Operation) -> None:
        a, b = (printer.name(v) for v in op.operands)
        result = op.results[0].type
        t = c_type(result)
        if isinstance(result, IntegerType) and t in _UNSIGNED_OF:
            u = _UNSIGNED_OF[t]
            printer.define(op.results[0], f"({t})(({u}){a} {operator} ({u}){b})")
            return
        printer.define(op.results[0], f"{a} {operator} {b}")

    return print_wrapping


def _conversion(printer: BodyPrinter, op: Operation) -> None:
    """A C++ cast, which converts as the op does given the operand's C++
    type: sign- or zero-extends by the operand's signedness, truncates an
    integer modulo its width and a float toward zero."""
    (operand,) = op.operands
    result = op.results[0]
    printer.define(result, f"({c_type(result.type)}){printer.name(operand)}")


def _bitcast(printer: BodyPrinter, op: arith.BitcastOp) -> None:
    """The same bits as another type: a float's through CUDA's intrinsics
    (a C++ cast would convert its value); an integer's by a cast, which
    keeps the bits between types of one width."""
    source, result = op.input.type, op.result.type
    if isinstance(source, Float32Type) and result == IntegerType(32):
        printer.define(op.result, f"__float_as_int({printer.name(op.input)})")
        return
    if source == IntegerType(32) and isinstance(result, Float32Type):
        printer.define(op.result, f"__int_as_float({printer.name(op.input)})")
        return
    if isinstance(source, Float32Type) or isinstance(result, Float32Type):
        raise NotImplementedError(f"-t cuda: no bitcast from {source} to {result}")
    _conversion(printer, op)


def _pick(printer: BodyPrinter, op: Operation, operator: str) -> None:
    a, b = (printer.name(v) for v in op.operands)
    printer.define(op.results[0], f"{a} {operator} {b} ? {a} : {b}")


def _minimum_signed(printer: BodyPrinter, op: arith.MinSIOp) -> None:
    if isinstance(op.result.type, IndexType):
        call("molten_imin")(printer, op)
        return
    _pick(printer, op, "<")


def allows_approximation(op: Operation) -> bool:
    """Whether `op`'s fastmath flags allow an approximate function (afn)."""
    fastmath = getattr(op, "fastmath", None)
    return (
        isinstance(fastmath, arith.FastMathFlagsAttr)
        and arith.FastMathFlag.APPROX_FUNC in fastmath.data
    )


def call(function: str, approximation: str | None = None) -> OpPrinter:
    """`function(operands...)`, or the device function `approximation`
    where the op's fastmath flags allow one."""

    def print_call(printer: BodyPrinter, op: Operation) -> None:
        callee = function
        if approximation is not None and allows_approximation(op):
            callee = approximation
        arguments = ", ".join(printer.name(v) for v in op.operands)
        printer.define(op.results[0], f"{callee}({arguments})")

    return print_call


_C_COMPARISONS = {
    "eq": "==",
    "ne": "!=",
    "slt": "<",
    "sle": "<=",
    "sgt": ">",
    "sge": ">=",
    "oeq": "==",
    "one": "!=",
    "olt": "<",
    "ole": "<=",
    "ogt": ">",
    "oge": ">=",
    "une": "!=",
    "ult": "<",
    "ule": "<=",
    "ugt": ">",
    "uge": ">=",
}
"""The C++ operator of each predicate the lowering makes."""

_UNORDERED = {"ugt": "<=", "uge": "<", "ult": ">=", "ule": ">"}
"""The ordered C++ operator whose negation is an unordered float predicate."""


def compare(predicates: Sequence[str]) -> OpPrinter:
    """`a <operator> b` of an arith.cmpi or cmpf (`predicates`: its
    predicate names, by number)."""

    def print_compare(printer: BodyPrinter, op: arith.CmpiOp | arith.CmpfOp) -> None:
        predicate = predicates[op.predicate.value.data]
        a, b = (printer.name(v) for v in op.operands)
        if predicate == "uno":  # either is a NaN
            expression = f"{a} != {a}" if a == b else f"{a} != {a} || {b} != {b}"
            printer.define(op.result, expression, "cond")
            return
        if predicate == "ord":  # neither is a NaN
            expression = f"{a} == {a}" if a == b else f"{a} == {a} && {b} == {b}"
            printer.define(op.result, expression, "cond")
            return
        if isinstance(op, arith.CmpfOp) and predicate in _UNORDERED:
            # A NaN or the relation: C++'s comparisons are ordered, so the
            # negation of the opposite one.
            printer.define(op.result, f"!({a} {_UNORDERED[predicate]} {b})", "cond")
            return
        operator = _C_COMPARISONS[predicate]
        printer.define(op.result, f"{a} {operator} {b}", "cond")

    return print_compare


def _select(printer: BodyPrinter, op: arith.SelectOp) -> None:
    condition, a, b = (printer.name(v) for v in op.operands)
    printer.define(op.result, f"{condition} ? {a} : {b}")


def _extend_float(printer: BodyPrinter, op: arith.ExtFOp) -> None:
    convert = (
        "__half2float" if isinstance(op.input.type, Float16Type) else "__bfloat162float"
    )
    printer.define(op.result, f"{convert}({printer.name(op.input)})")


def _truncate_float(printer: BodyPrinter, op: arith.TruncFOp) -> None:
    convert = (
        "__float2half_rn"
        if isinstance(op.result.type, Float16Type)
        else "__float2bfloat16_rn"
    )
    printer.define(op.result, f"{convert}({printer.name(op.input)})")


def _check_index(printer: BodyPrinter, op: cuda.CheckIndexOp) -> None:
    value, position = printer.name(op.value), printer.name(op.position)
    size = op.size.value.data
    printer.emit(f"if ({value} < 0 || {value} >= {size}) {{")
    printer.emit(
        f'  printf("molten: {op.what.data}: index %lld at position %lld is out '
        f'of range [0, {size})\\n", (long long){value}, (long long){position});'
    )
    printer.emit("  __trap();")
    printer.emit("}")


ARITHMETIC_PRINTERS: dict[type[Operation], OpPrinter] = {
    arith.ConstantOp: _constant,
    cuda.ThreadIdxOp: special_register("threadIdx"),
    cuda.BlockIdxOp: special_register("blockIdx"),
    cuda.BlockDimOp: special_register("blockDim"),
    cuda.GridDimOp: special_register("gridDim"),
    arith.AddfOp: binary("+"),
    arith.SubfOp: binary("-"),
    arith.MulfOp: binary("*"),
    arith.DivfOp: binary("/"),
    arith.AddiOp: wrapping("+"),
    arith.SubiOp: wrapping("-"),
    arith.MuliOp: wrapping("*"),
    arith.DivSIOp: binary("/"),
    arith.DivUIOp: binary("/"),
    arith.FloorDivSIOp: call("molten_floor_div"),
    arith.RemSIOp: binary("%"),
    arith.RemUIOp: binary("%"),
    arith.AndIOp: binary("&&", bitwise="&"),
    arith.OrIOp: binary("||", bitwise="|"),
    arith.XOrIOp: binary("^"),
    arith.ShLIOp: wrapping("<<"),
    arith.ShRSIOp: binary(">>"),
    arith.ShRUIOp: binary(">>"),
    arith.MaximumfOp: call("molten_fmax"),
    arith.MaxnumfOp: call("fmaxf"),
    arith.MinimumfOp: call("molten_fmin"),
    arith.MinSIOp: _minimum_signed,
    arith.MinUIOp: lambda printer, op: _pick(printer, op, "<"),
    arith.MaxSIOp: lambda printer, op: _pick(printer, op, ">"),
    arith.MaxUIOp: lambda printer, op: _pick(printer, op, ">"),
    arith.SIToFPOp: _conversion,
    arith.UIToFPOp: _conversion,
    arith.FPToSIOp: _conversion,
    arith.ExtSIOp: _conversion,
    arith.ExtUIOp: _conversion,
    arith.TruncIOp: _conversion,
    arith.IndexCastOp: _conversion,
    arith.BitcastOp: _bitcast,
    cuda.FmodOp: call("fmodf"),
    cuda.CheckIndexOp: _check_index,
    mathd.ExpOp: call("expf"),
    mathd.Exp2Op: call("exp2f", approximation="molten_exp2_approx"),
    mathd.LogOp: call("logf"),
    mathd.SqrtOp: call("sqrtf"),
    mathd.RsqrtOp: call("rsqrtf"),
    mathd.TanhOp: call("tanhf"),
    mathd.ErfOp: call("erff"),
    mathd.PowFOp: call("powf"),
    mathd.AbsFOp: call("fabsf"),
    mathd.SinOp: call("sinf"),
    mathd.CosOp: call("cosf"),
    mathd.TanOp: call("tanf"),
    mathd.AsinOp: call("asinf"),
    mathd.AcosOp: call("acosf"),
    mathd.AtanOp: call("atanf"),
    mathd.Atan2Op: call("atan2f"),
    mathd.SinhOp: call("sinhf"),
    mathd.CoshOp: call("coshf"),
    mathd.Log1pOp: call("log1pf"),
    mathd.ExpM1Op: call("expm1f"),
    mathd.Log2Op: call("log2f"),
    mathd.Log10Op: call("log10f"),
    mathd.FloorOp: call("floorf"),
    mathd.CeilOp: call("ceilf"),
    mathd.RoundEvenOp: call("rintf"),  # halves to even, as torch.round
    mathd.TruncOp: call("truncf"),
    mathd.CopySignOp: call("copysignf"),
    arith.NegfOp: lambda printer, op: printer.define(
        op.result, f"-{printer.name(op.operand)}"
    ),
    arith.CmpiOp: compare(arith.CMPI_COMPARISON_OPERATIONS),
    arith.CmpfOp: compare(arith.CMPF_COMPARISON_OPERATIONS),
    arith.SelectOp: _select,
    arith.ExtFOp: _extend_float,
    arith.TruncFOp: _truncate_float,
}
