"""The `-t cuda` target: a cuda-dialect module printed as one `.cu` file and
its header.

The printer walks each `cuda.kernel` and `cuda.host_func` body and writes a
C++ statement per op; Jinja2 templates hold the rest (file skeleton, device
helpers, launcher signatures, the header). Every identifier that reaches C++
(kernel, launcher, parameter and variable names, all from the graph) is
reduced to `[A-Za-z0-9_]`, kept clear of C++ keywords and reserved names, and
made unique, so no name in a graph can inject code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import IO

import jinja2
import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.target import Target

from molten.dialects import cuda
from molten.dialects.molten import Dim, split_dims

CPP_KEYWORDS = frozenset(
    [
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "requires",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
    ]
)

GENERATED_NAMES = frozenset(
    [
        "int64_t",
        "uintptr_t",
        "size_t",
        "dim3",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "warpSize",
        "stream",
        "err",
        "min",
        "max",
        "expf",
        "logf",
        "sqrtf",
        "rsqrtf",
        "tanhf",
        "erff",
        "powf",
        "fabsf",
        "fmaxf",
        "fminf",
        "cudaError_t",
        "cudaStream_t",
        "cudaSuccess",
        "cudaGetLastError",
        "cudaMallocAsync",
        "cudaFreeAsync",
        "cudaMemcpyAsync",
        "cudaMemcpyDeviceToDevice",
        "cudaFuncSetAttribute",
        "cudaFuncAttributeMaxDynamicSharedMemorySize",
    ]
)
"""Names the generated code refers to, which a graph's name must not shadow."""

LOWERCASE_MACROS = frozenset(
    ["linux", "unix", "i386", "errno", "stdin", "stdout", "stderr", "assert"]
)
"""Predefined or library macros without capitals (capitalized names are all
treated as possible macros)."""

GLOBAL_NAMES = frozenset(
    [
        "main",
        "malloc",
        "calloc",
        "realloc",
        "free",
        "exit",
        "abort",
        "printf",
        "puts",
        "memcpy",
        "memset",
        "strlen",
        "exp",
        "log",
        "sqrt",
        "tanh",
        "erf",
        "pow",
        "fabs",
        "abs",
    ]
)
"""Library functions a kernel or launcher (a global symbol) must not be named."""

_BAD_CHARS = re.compile(r"[^A-Za-z0-9_]")


def c_identifier(name: str, *, is_global: bool = False) -> str:
    """`name` as a C++ identifier that is no keyword, reserved name (no leading
    `_`, no `__`), possible macro (all capitals), name the generated code uses,
    or, for a global symbol, library function or `cuda*` name."""
    cleaned = re.sub(r"_{2,}", "_", _BAD_CHARS.sub("_", name)).lstrip("_")
    if not cleaned or cleaned[0].isdigit():
        cleaned = "v" + cleaned
    clashes = (
        cleaned in CPP_KEYWORDS
        or cleaned in GENERATED_NAMES
        or cleaned in LOWERCASE_MACROS
        or cleaned.startswith("molten_")
        or (cleaned.upper() == cleaned and any(c.isalpha() for c in cleaned[1:]))
        or (is_global and (cleaned in GLOBAL_NAMES or cleaned.startswith("cu")))
    )
    return cleaned + "_" if clashes else cleaned


@dataclass
class Scope:
    """Unique C++ names for the values of one function (or for globals)."""

    taken: set[str] = field(default_factory=set)
    is_global: bool = False
    next_suffix: dict[str, int] = field(default_factory=dict)
    """Per base name, the suffix to try first: every smaller one is taken
    (names are never released), so each name costs O(1), not a scan."""

    def fresh(self, hint: str | None, default: str = "v") -> str:
        base = c_identifier(hint, is_global=self.is_global) if hint else default
        if base not in self.taken:
            self.taken.add(base)
            return base
        suffix = self.next_suffix.get(base, 1)
        while True:
            # "int_" + "_1" would be a reserved "__": join on one underscore;
            # and "M_PI_" + "2" a macro again: the result is checked anew.
            name = c_identifier(
                f"{base.rstrip('_')}_{suffix}", is_global=self.is_global
            )
            suffix += 1
            if name not in self.taken:
                break
        self.next_suffix[base] = suffix
        self.taken.add(name)
        return name


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


OpPrinter = Callable[["BodyPrinter", Operation], None]
"""Writes one op's C++ (statements, or the expression its result stands for)."""


class BodyPrinter:
    """C++ statements for the ops of a kernel or launcher body, each op
    written by its entry in `OP_PRINTERS`."""

    def __init__(self, scope: Scope, kernel_names: dict[str, str] | None = None):
        self.scope = scope
        self.kernel_names = kernel_names or {}
        self.names: dict[SSAValue, str] = {}
        self.lines: list[str] = []
        self.depth = 1
        self.allocated: list[str] = []
        """Buffers a launcher has allocated so far, freed on an early return."""
        self.origins: dict[str, str] = {}
        """C++ variable -> the IR value name it was derived from."""
        self.dynamic_shared: dict[SSAValue, int] = {}
        """Shared buffers placed in dynamic shared memory -> byte offsets."""
        self.shared_bytes: dict[str, int] = {}
        """Kernel C++ name -> the dynamic shared memory it is launched with."""
        self.variables: set[str] = set()
        """C++ names declared mutable (not const): an op may update them in
        place."""

    def name(self, value: SSAValue) -> str:
        return self.names[value]

    def address(self, pointer: SSAValue, index: SSAValue) -> str:
        """`pointer + index`, the address of an element."""
        return f"{self.name(pointer)} + {self.name(index)}"

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def inline(self, value: SSAValue, expression: str) -> None:
        """`value` written as `expression` wherever it is used (no variable)."""
        self.names[value] = expression

    def define(self, value: SSAValue, expression: str, default: str = "v") -> None:
        name = self.scope.fresh(value.name_hint, default)
        self.names[value] = name
        if value.name_hint:
            self.origins[name] = value.name_hint
        self.emit(f"const {c_type(value.type)} {name} = {expression};")

    def declare(self, values: Sequence[SSAValue], default: str) -> list[str]:
        """Variables for the results of an op that writes them through
        references (one declaration, then the call)."""
        names = [self.scope.fresh(v.name_hint, default) for v in values]
        self.variables.update(names)
        for value, name in zip(values, names, strict=True):
            self.names[value] = name
            if value.name_hint:
                self.origins[name] = value.name_hint
        self.emit(f"{c_type(values[0].type)} {', '.join(names)};")
        return names

    def declare_in_place(
        self, values: Sequence[SSAValue], sources: Sequence[SSAValue], default: str
    ) -> list[str]:
        """Variables for the results of an op that updates its operands in
        place (through references): each operand's own variable where this
        op is its last reader, else a copy of it. A wgmma's accumulators
        must not be copied while a wgmma writes them (reading them before
        its wgmma.wait_group is undefined): updated in place, the chain of
        wgmmas and waits of a K loop copies none."""
        if all(
            source.has_one_use() and self.name(source) in self.variables
            for source in sources
        ):
            for value, source in zip(values, sources, strict=True):
                self.names[value] = self.name(source)
            return [self.name(source) for source in sources]
        names = self.declare(values, default)
        for name, source in zip(names, sources, strict=True):
            self.emit(f"{name} = {self.name(source)};")
        return names

    def count(self, size: int, factors: Sequence[SSAValue]) -> str:
        """An element count: `size` times the `factors` (sizes)."""
        return " * ".join([str(size), *(self.name(f) for f in factors)])

    def check_error(self) -> None:
        """Returns the error, freeing the buffers allocated so far."""
        if not self.allocated:
            self.emit("if (err != cudaSuccess) return err;")
            return
        self.emit("if (err != cudaSuccess) {")
        for name in reversed(self.allocated):
            self.emit(f"  cudaFreeAsync({name}, stream);")
        self.emit("  return err;")
        self.emit("}")

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        printer = printer_for(type(op))
        if printer is None:
            raise NotImplementedError(f"-t cuda: cannot print {op.name}")
        printer(self, op)


def printer_for(op_class: type[Operation]) -> OpPrinter | None:
    """The printer of `op_class` itself, else of its nearest base class that
    has one (the first in its method resolution order); None where none has."""
    for cls in op_class.__mro__:
        if cls in OP_PRINTERS:
            return OP_PRINTERS[cls]
    return None


def statement(line: str) -> OpPrinter:
    """The printer of an op that is one fixed statement."""
    return lambda printer, op: printer.emit(line)


def ptx(instruction: str) -> OpPrinter:
    """The printer of an op that is one PTX instruction without operands,
    which the compiler must not move memory accesses across."""
    return statement(f'asm volatile("{instruction};" ::: "memory");')


# --------------------------------------------------------------------------
# Arithmetic (arith, math) and the thread-index registers
# --------------------------------------------------------------------------


def _constant(printer: BodyPrinter, op: arith.ConstantOp) -> None:
    value = op.value
    if isinstance(value, FloatAttr):
        printer.inline(op.result, float_literal(value.value.data))
        return
    if not isinstance(value, IntegerAttr):
        raise NotImplementedError(f"-t cuda: constant {value}")
    if value.type == IntegerType(1):
        printer.inline(op.result, "true" if value.value.data else "false")
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
}
"""The C++ operator of each predicate the lowering makes."""


def compare(predicates: Sequence[str]) -> OpPrinter:
    """`a <operator> b` of an arith.cmpi or cmpf (`predicates`: its
    predicate names, by number)."""

    def print_compare(printer: BodyPrinter, op: arith.CmpiOp | arith.CmpfOp) -> None:
        operator = _C_COMPARISONS[predicates[op.predicate.value.data]]
        a, b = (printer.name(v) for v in op.operands)
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
    arith.AddiOp: binary("+"),
    arith.SubiOp: binary("-"),
    arith.MuliOp: binary("*"),
    arith.DivSIOp: binary("/"),
    arith.RemSIOp: binary("%"),
    arith.AndIOp: binary("&&", bitwise="&"),
    arith.OrIOp: binary("||", bitwise="|"),
    arith.XOrIOp: binary("^"),
    arith.MaximumfOp: call("molten_fmax"),
    arith.MaxnumfOp: call("fmaxf"),
    arith.MinimumfOp: call("molten_fmin"),
    arith.MinSIOp: call("molten_imin"),
    mathd.ExpOp: call("expf"),
    mathd.Exp2Op: call("exp2f", approximation="molten_exp2_approx"),
    mathd.LogOp: call("logf"),
    mathd.SqrtOp: call("sqrtf"),
    mathd.RsqrtOp: call("rsqrtf"),
    mathd.TanhOp: call("tanhf"),
    mathd.ErfOp: call("erff"),
    mathd.PowFOp: call("powf"),
    mathd.AbsFOp: call("fabsf"),
    arith.NegfOp: lambda printer, op: printer.define(
        op.result, f"-{printer.name(op.operand)}"
    ),
    arith.CmpiOp: compare(arith.CMPI_COMPARISON_OPERATIONS),
    arith.CmpfOp: compare(arith.CMPF_COMPARISON_OPERATIONS),
    arith.SelectOp: _select,
    arith.ExtFOp: _extend_float,
    arith.TruncFOp: _truncate_float,
}


# --------------------------------------------------------------------------
# Memory: global and shared loads and stores, shared buffers
# --------------------------------------------------------------------------


def _load(printer: BodyPrinter, op: cuda.LoadOp) -> None:
    address = f"{printer.name(op.ptr)}[{printer.name(op.index)}]"
    if op.coherent is not None:
        printer.define(op.result, f"__ldcg(&{address})")
        return
    if len(op.values) == 1:
        printer.define(op.result, address)
        return
    vector = _vector_type(op.ptr.type, len(op.values))
    hint = op.values[0].name_hint
    name = printer.scope.fresh(f"{hint}_vec" if hint else None, "vec")
    printer.emit(
        f"const {vector} {name} = *reinterpret_cast<const {vector}*>(&{address});"
    )
    for i, value in enumerate(op.values):
        printer.define(value, f"{name}.v[{i}]")


def _store(printer: BodyPrinter, op: cuda.StoreOp) -> None:
    address = f"{printer.name(op.ptr)}[{printer.name(op.index)}]"
    if len(op.values) == 1:
        printer.emit(f"{address} = {printer.name(op.value)};")
        return
    vector = _vector_type(op.ptr.type, len(op.values))
    values = ", ".join(printer.name(v) for v in op.values)
    printer.emit(
        f"*reinterpret_cast<{vector}*>(&{address}) = {vector}{{{{{values}}}}};"
    )


def _shared_alloc(printer: BodyPrinter, op: cuda.SharedAllocOp) -> None:
    name = printer.scope.fresh(op.result.name_hint, "shared")
    printer.names[op.result] = name
    element = c_type(op.result.type.element_type)
    if op.result in printer.dynamic_shared:
        offset = printer.dynamic_shared[op.result]
        printer.emit(
            f"{element}* const {name} = "
            f"reinterpret_cast<{element}*>(molten_shared + {offset});"
        )
        return
    # Aligned only where the accesses need it: the alignment alone
    # changes how ptxas allocates registers.
    align = (
        f" __align__({cuda.shared_alignment(op.result)})"
        if cuda.copied_whole(op.result) or cuda.swizzled(op.result)
        else ""
    )
    printer.emit(f"__shared__{align} {element} {name}[{op.size.value.data}];")


MEMORY_PRINTERS: dict[type[Operation], OpPrinter] = {
    cuda.LoadOp: _load,
    cuda.StoreOp: _store,
    cuda.SharedAllocOp: _shared_alloc,
}


# --------------------------------------------------------------------------
# Threads: barriers and shuffles
# --------------------------------------------------------------------------


def _named_barrier(printer: BodyPrinter, op: cuda.NamedBarrierOp) -> None:
    barrier, threads = printer.name(op.id), op.threads.value.data
    printer.emit(
        f'asm volatile("bar.sync %0, {threads};" :: "r"((int){barrier}) : "memory");'
    )


def _group_barrier(printer: BodyPrinter, op: cuda.GroupBarrierOp) -> None:
    counters, group, target = (printer.name(v) for v in op.operands)
    printer.emit(f"molten_group_barrier({counters} + {group}, {target});")


def _last_arrival(printer: BodyPrinter, op: cuda.LastArrivalOp) -> None:
    counters, group, count = (printer.name(v) for v in op.operands)
    among = "" if op.threads is None else f", {op.threads.value.data}"
    printer.define(
        op.result, f"molten_last_arrival({counters} + {group}, {count}{among})"
    )


def _shfl_xor(printer: BodyPrinter, op: cuda.ShflXorOp) -> None:
    value, offset = printer.name(op.value), op.offset.value.data
    printer.define(op.result, f"__shfl_xor_sync(0xffffffffu, {value}, {offset})")


THREAD_PRINTERS: dict[type[Operation], OpPrinter] = {
    cuda.SyncThreadsOp: statement("__syncthreads();"),
    cuda.NamedBarrierOp: _named_barrier,
    cuda.GroupBarrierOp: _group_barrier,
    cuda.LastArrivalOp: _last_arrival,
    cuda.ShflXorOp: _shfl_xor,
}


# --------------------------------------------------------------------------
# Tensor cores and their PTX: cp.async, ldmatrix, mma.sync, wgmma, TMA
# --------------------------------------------------------------------------


def _cp_async(printer: BodyPrinter, op: cuda.CpAsyncOp) -> None:
    target = printer.address(op.target, op.target_index)
    source = printer.address(op.source, op.source_index)
    printer.emit(f"molten_cp_async({target}, {source}, {printer.name(op.valid)});")


def _ldmatrix(printer: BodyPrinter, op: cuda.LdMatrixOp) -> None:
    names = printer.declare(op.fragments, "frag")
    helper = "molten_ldmatrix_trans" if op.trans is not None else "molten_ldmatrix"
    address = printer.address(op.ptr, op.index)
    printer.emit(f"{helper}({address}, {', '.join(names)});")


def _mma(printer: BodyPrinter, op: cuda.MmaOp) -> None:
    names = printer.declare(op.d, "acc")
    kind = _MMA_KINDS[type(op.operand)]
    operands = (printer.name(v) for v in (*op.a, *op.b, *op.c))
    printer.emit(f"molten_mma_{kind}({', '.join([*names, *operands])});")


def _split_tf32(printer: BodyPrinter, op: cuda.SplitTf32Op) -> None:
    big, small = printer.declare(op.results, "tf32")
    printer.emit(f"molten_split_tf32({printer.name(op.value)}, {big}, {small});")


def _pack(printer: BodyPrinter, op: cuda.PackOp) -> None:
    kind = _MMA_KINDS[type(op.operand)]
    lo, hi = printer.name(op.lo), printer.name(op.hi)
    printer.define(op.result, f"molten_pack_{kind}({lo}, {hi})", "pair")


def _wgmma_descriptor(printer: BodyPrinter, op: cuda.WgmmaDescriptorOp) -> None:
    address = f"{printer.name(op.ptr)}, {printer.name(op.index)}"
    printer.define(
        op.result,
        f"molten_wgmma_descriptor({address}, {op.leading.value.data}, "
        f"{op.stride.value.data})",
        "desc",
    )


def _wgmma(printer: BodyPrinter, op: cuda.WgmmaOp) -> None:
    if op.c:
        names = printer.declare_in_place(op.d, op.c, "acc")
    else:  # D = A B: the helper only writes them
        names = printer.declare(op.d, "acc")
    arguments = ", ".join([*names, printer.name(op.a), printer.name(op.b)])
    printer.emit(f"{wgmma_helper_name(op)}({arguments});")


def _wgmma_register_a(printer: BodyPrinter, op: cuda.WgmmaRegisterAOp) -> None:
    names = printer.declare_in_place(op.d, op.c, "acc")
    a = (printer.name(r) for r in op.a)
    arguments = ", ".join([*names, *a, printer.name(op.b)])
    printer.emit(f"{wgmma_helper_name(op)}({arguments});")


def _wgmma_wait(printer: BodyPrinter, op: cuda.WgmmaWaitOp) -> None:
    names = printer.declare_in_place(op.results_, op.values, "acc")
    wait = f"molten_wgmma_wait{len(names)}<{op.pending.value.data}>"
    printer.emit(f"{wait}({', '.join(names)});")


def _mbarrier_init(printer: BodyPrinter, op: cuda.MbarrierInitOp) -> None:
    barrier = printer.address(op.barriers, op.index)
    printer.emit(f"molten_mbarrier_init({barrier}, {op.count.value.data});")


def _mbarrier_arrive(printer: BodyPrinter, op: cuda.MbarrierArriveOp) -> None:
    barrier = printer.address(op.barriers, op.index)
    if op.cta is not None:
        cta = printer.name(op.cta)
        printer.emit(f"molten_mbarrier_arrive_cluster({barrier}, {cta});")
        return
    if op.expect_tx is None:
        printer.emit(f"molten_mbarrier_arrive({barrier});")
        return
    tx = op.expect_tx.value.data
    printer.emit(f"molten_mbarrier_arrive_expect_tx({barrier}, {tx});")


def _mbarrier_wait(printer: BodyPrinter, op: cuda.MbarrierWaitOp) -> None:
    barrier = printer.address(op.barriers, op.index)
    printer.emit(f"molten_mbarrier_wait({barrier}, {printer.name(op.parity)});")


def _tma_load(printer: BodyPrinter, op: cuda.TmaLoadOp) -> None:
    target = printer.address(op.target, op.target_index)
    barrier = printer.address(op.barriers, op.barrier_index)
    c0, c1 = printer.name(op.c0), printer.name(op.c1)
    tensor_map = f"&{printer.name(op.map)}"
    if op.multicast is None:
        printer.emit(f"molten_tma_load({target}, {tensor_map}, {barrier}, {c0}, {c1});")
        return
    mask = op.multicast.value.data
    printer.emit(
        f"molten_tma_load_multicast({target}, {tensor_map}, {barrier}, "
        f"{c0}, {c1}, {mask});"
    )


def _set_max_registers(printer: BodyPrinter, op: cuda.SetMaxRegistersOp) -> None:
    direction, count = op.direction.data, op.count.value.data
    printer.emit(f'asm volatile("setmaxnreg.{direction}.sync.aligned.u32 {count};");')


TENSOR_CORE_PRINTERS: dict[type[Operation], OpPrinter] = {
    cuda.CpAsyncOp: _cp_async,
    cuda.CpAsyncCommitOp: statement("molten_cp_async_commit();"),
    cuda.CpAsyncWaitOp: lambda printer, op: printer.emit(
        f"molten_cp_async_wait<{op.pending.value.data}>();"
    ),
    cuda.LdMatrixOp: _ldmatrix,
    cuda.MmaOp: _mma,
    cuda.SplitTf32Op: _split_tf32,
    cuda.PackOp: _pack,
    cuda.WgmmaDescriptorOp: _wgmma_descriptor,
    cuda.WgmmaOp: _wgmma,
    cuda.WgmmaRegisterAOp: _wgmma_register_a,
    cuda.WgmmaFenceOp: ptx("wgmma.fence.sync.aligned"),
    cuda.WgmmaCommitOp: ptx("wgmma.commit_group.sync.aligned"),
    cuda.WgmmaWaitOp: _wgmma_wait,
    cuda.FenceProxyAsyncOp: ptx("fence.proxy.async.shared::cta"),
    cuda.MbarrierInitOp: _mbarrier_init,
    cuda.FenceMbarrierInitOp: ptx("fence.mbarrier_init.release.cluster"),
    cuda.MbarrierArriveOp: _mbarrier_arrive,
    cuda.MbarrierWaitOp: _mbarrier_wait,
    cuda.TmaLoadOp: _tma_load,
    cuda.ClusterSyncOp: statement("molten_cluster_sync();"),
    cuda.SetMaxRegistersOp: _set_max_registers,
}


# --------------------------------------------------------------------------
# Control flow: scf.for and scf.if
# --------------------------------------------------------------------------


def _for(printer: BodyPrinter, op: scf.ForOp) -> None:
    body = op.body.block
    iv = printer.scope.fresh(body.args[0].name_hint, "i")
    printer.names[body.args[0]] = iv
    carried = []
    for arg, init, result in zip(body.args[1:], op.iter_args, op.results, strict=True):
        name = printer.scope.fresh(result.name_hint or arg.name_hint, "acc")
        printer.variables.add(name)
        printer.emit(f"{c_type(arg.type)} {name} = {printer.name(init)};")
        printer.names[arg] = printer.names[result] = name
        carried.append(name)
    lb, ub, step = (printer.name(v) for v in (op.lb, op.ub, op.step))
    printer.emit(f"for (int64_t {iv} = {lb}; {iv} < {ub}; {iv} += {step}) {{")
    printer.depth += 1
    printer.block(body)
    terminator = body.last_op
    assert isinstance(terminator, scf.YieldOp)
    updates = [printer.name(v) for v in terminator.operands]
    if any(
        u in carried and u != name for u, name in zip(updates, carried, strict=True)
    ):
        # A yielded value is itself carried (e.g. two swapped): read all
        # before writing any.
        staged = [printer.scope.fresh(f"{name}_next") for name in carried]
        for name, update, arg in zip(staged, updates, body.args[1:], strict=True):
            printer.emit(f"const {c_type(arg.type)} {name} = {update};")
        updates = staged
    for name, update in zip(carried, updates, strict=True):
        if name != update:
            printer.emit(f"{name} = {update};")
    printer.depth -= 1
    printer.emit("}")


def _if(printer: BodyPrinter, op: scf.IfOp) -> None:
    # Results are variables declared before the if, each branch
    # assigning what it yields.
    results = []
    for result in op.results:
        name = printer.scope.fresh(result.name_hint, "v")
        printer.emit(f"{c_type(result.type)} {name};")
        printer.names[result] = name
        results.append(name)

    def branch(block: Block) -> None:
        printer.depth += 1
        printer.block(block)
        terminator = block.last_op
        if results:
            assert isinstance(terminator, scf.YieldOp)
            for name, value in zip(results, terminator.operands, strict=True):
                printer.emit(f"{name} = {printer.name(value)};")
        printer.depth -= 1

    printer.emit(f"if ({printer.name(op.cond)}) {{")
    branch(op.true_region.block)
    if op.false_region.blocks and (results or list(op.false_region.block.ops)[:-1]):
        printer.emit("} else {")
        branch(op.false_region.block)
    printer.emit("}")


def _printed_by_enclosing_op(printer: BodyPrinter, op: Operation) -> None:
    """A terminator: the enclosing scf.for or scf.if assigns what it yields,
    the end of the function returns."""


CONTROL_FLOW_PRINTERS: dict[type[Operation], OpPrinter] = {
    scf.ForOp: _for,
    scf.IfOp: _if,
    scf.YieldOp: _printed_by_enclosing_op,
    cuda.ReturnOp: _printed_by_enclosing_op,
}


# --------------------------------------------------------------------------
# Host: a launcher's buffers, copies, tensor maps and launches
# --------------------------------------------------------------------------


def _alloc(printer: BodyPrinter, op: cuda.AllocOp) -> None:
    name = printer.scope.fresh(op.result.name_hint, "buffer")
    printer.names[op.result] = name
    element = c_type(op.result.type.element_type)
    size = printer.count(op.size.value.data, op.factors)
    printer.emit(f"{element}* {name} = nullptr;")
    printer.emit(
        f"err = cudaMallocAsync((void**)&{name}, {size} * sizeof({element}), stream);"
    )
    printer.check_error()
    printer.allocated.append(name)


def _free(printer: BodyPrinter, op: cuda.FreeOp) -> None:
    printer.emit(f"cudaFreeAsync({printer.name(op.ptr)}, stream);")
    printer.allocated.remove(printer.name(op.ptr))


def _zero(printer: BodyPrinter, op: cuda.ZeroOp) -> None:
    element = c_type(op.target.type.element_type)
    printer.emit(
        f"err = cudaMemsetAsync({printer.name(op.target)}, 0, "
        f"{op.size.value.data} * sizeof({element}), stream);"
    )
    printer.check_error()


def _copy(printer: BodyPrinter, op: cuda.CopyOp) -> None:
    element = c_type(op.target.type.element_type)
    target, source = printer.name(op.target), printer.name(op.source)
    count = printer.count(op.size.value.data, op.factors)
    printer.emit(
        f"err = cudaMemcpyAsync({target}, {source}, "
        f"{count} * sizeof({element}), "
        "cudaMemcpyDeviceToDevice, stream);"
    )
    printer.check_error()


def _make_tensor_map(printer: BodyPrinter, op: cuda.MakeTensorMapOp) -> None:
    """The tensor map's encoding on the host."""
    name = printer.scope.fresh(op.result.name_hint, "map")
    printer.names[op.result] = name
    (rows, cols), (box_rows, box_cols) = op.shape.get_values(), op.box.get_values()
    element = op.result.type.element_type
    kind = "BFLOAT16" if isinstance(element, BFloat16Type) else "FLOAT16"
    if op.rows is not None:
        size = printer.name(op.rows)
        rows = size if rows == 1 else f"{rows} * {size}"
    printer.emit(f"MoltenTensorMap {name};")
    printer.emit(
        f"err = molten_make_tensor_map(&{name}, {printer.name(op.source)}, "
        f"{rows}, {cols}, {box_rows}, {box_cols}, "
        f"CU_TENSOR_MAP_DATA_TYPE_{kind});"
    )
    printer.check_error()


def _tensor_map_unless_per_variant(
    printer: BodyPrinter, op: cuda.MakeTensorMapOp
) -> None:
    # A map only variants of a launch use is made where one runs (_launch).
    if all(
        isinstance(use.operation, cuda.LaunchOp) and use.operation.when is not None
        for use in op.result.uses
    ):
        return
    _make_tensor_map(printer, op)


def _launch(printer: BodyPrinter, op: cuda.LaunchOp) -> None:
    if op.when is not None:
        position, least, most = op.when.get_values()
        size = printer.name(op.args[position])
        bounds = [f"{size} >= {least}"] + ([f"{size} <= {most}"] if most else [])
        if least == most:
            bounds = [f"{size} == {least}"]
        printer.emit(f"if ({' && '.join(bounds)}) {{  // this variant's sizes")
        printer.depth += 1
        for arg in op.args:
            made = arg.owner
            if isinstance(made, cuda.MakeTensorMapOp) and arg not in printer.names:
                _make_tensor_map(printer, made)
    args = ", ".join(printer.name(a) for a in op.args)

    arguments = ""
    if op.cooperative is not None:
        arguments = printer.scope.fresh("arguments")
        addresses = ", ".join(f"(void*)&{printer.name(a)}" for a in op.args)
        printer.emit(f"void* {arguments}[] = {{{addresses}}};")

    callees = [op.callee] if op.fallback is None else [op.callee, op.fallback]
    for callee in callees:
        name = printer.kernel_names[callee.string_value()]
        shared = printer.shared_bytes.get(name, 0)
        if not shared:
            continue
        if op.cooperative is not None:
            raise NotImplementedError(
                "-t cuda: a cooperative launch of a kernel with dynamic shared memory"
            )
        # Above 48 KiB a kernel must opt in to its dynamic shared memory.
        printer.emit(
            f"err = cudaFuncSetAttribute((const void*){name}, "
            f"cudaFuncAttributeMaxDynamicSharedMemorySize, {shared});"
        )
        printer.check_error()

    def launch(callee: SymbolRefAttr) -> str:
        name = printer.kernel_names[callee.string_value()]
        grid_shape, block_shape = op.launch_shape(callee)
        grid = ", ".join(str(g) for g in grid_shape)
        scale = op.grid_scale
        if callee == op.fallback and op.fallback_grid is not None:
            scale = op.fallback_scale
        if op.grid_of is not None and scale is not None:
            factor, divisor, *rest = scale.get_values()
            times, axis = rest or (1, 0)
            work = " * ".join(
                [*(printer.name(v) for v in op.grid_sizes())]
                + ([f"{factor}LL"] if factor != 1 else [])
            )
            extra = f", {times}" if times != 1 else ""
            sizes = [str(g) for g in grid_shape]
            sizes[axis] = f"molten_grid({work}, {divisor}, {grid_shape[axis]}{extra})"
            grid = ", ".join(sizes)
        block = ", ".join(str(b) for b in block_shape)
        if op.cooperative is None:
            shared = printer.shared_bytes.get(name, 0)
            return f"{name}<<<dim3({grid}), dim3({block}), {shared}, stream>>>({args});"
        (group,) = op.cooperative.get_values()
        groups = op.grid.get_values()[0] // group
        threads = math.prod(op.block.get_values())
        return (
            f"err = molten_launch_cooperative((const void*){name}, {groups}, "
            f"{group}, {threads}, {arguments}, stream);"
        )

    if op.aligned is None or op.fallback is None:
        printer.emit(launch(op.callee))
    else:
        pointers = " | ".join(
            f"(uintptr_t){printer.name(op.args[i])}" for i in op.aligned.get_values()
        )
        printer.emit(f"if ((({pointers}) % {cuda.VECTOR_BYTES}) == 0) {{")
        printer.emit(f"  {launch(op.callee)}")
        printer.emit("} else {  // a pointer too misaligned for the vector accesses")
        printer.emit(f"  {launch(op.fallback)}")
        printer.emit("}")
    if op.cooperative is None:
        printer.emit("err = cudaGetLastError();")
    printer.check_error()
    if op.when is not None:
        printer.depth -= 1
        printer.emit("}")


HOST_PRINTERS: dict[type[Operation], OpPrinter] = {
    cuda.AllocOp: _alloc,
    cuda.FreeOp: _free,
    cuda.ZeroOp: _zero,
    cuda.CopyOp: _copy,
    cuda.MakeTensorMapOp: _tensor_map_unless_per_variant,
    cuda.LaunchOp: _launch,
}


OP_PRINTERS: dict[type[Operation], OpPrinter] = {
    **ARITHMETIC_PRINTERS,
    **MEMORY_PRINTERS,
    **THREAD_PRINTERS,
    **TENSOR_CORE_PRINTERS,
    **CONTROL_FLOW_PRINTERS,
    **HOST_PRINTERS,
}
"""Each op class's printer. An op whose own class has none is printed by its
nearest base class's (`printer_for`)."""


def _vector_type(pointer: Attribute, width: int) -> str:
    assert isinstance(pointer, cuda.PointerType)
    return f"molten_vec<{c_type(pointer.element_type)}, {width}>"


def _stored_pointers(body: Block) -> set[SSAValue]:
    """The pointers a kernel writes through (not const)."""
    return {
        op.ptr if isinstance(op, cuda.StoreOp) else op.counters
        for op in body.walk()
        if isinstance(op, cuda.StoreOp | cuda.GroupBarrierOp | cuda.LastArrivalOp)
    }


def _size_macros(
    launcher: str,
    param: str,
    shape: Sequence[Dim],
    taken: set[str],
    dims: dict[str, str],
) -> list[str]:
    """`#define`s of a param's element count and (rank 1 and up) shape,
    for a C or C++ caller that allocates the buffers: LAUNCHER_PARAM_...
    (a prefix `taken` already, by names differing only in case, gets the
    first free numeric suffix). Where the shape has named dimensions they
    are the macros' parameters (`dims`: each name's C++ name):
    `G_X_ELEMENTS(T)`, `G_X_SHAPE(T)`."""
    base = prefix = f"{launcher}_{param}".upper()
    suffix = 1
    while prefix in taken:
        prefix, suffix = f"{base}_{suffix}", suffix + 1
    taken.add(prefix)
    static, named = split_dims(shape)
    extents = [f"({dims[d]})" if isinstance(d, str) else str(d) for d in shape]
    if named:
        arguments = f"({', '.join(dict.fromkeys(dims[d] for d in named))})"
        count = " * ".join([*(f"({dims[d]})" for d in named), f"{static}LL"])
        lines = [f"#define {prefix}_ELEMENTS{arguments} ({count})"]
    else:
        arguments = ""
        lines = [f"#define {prefix}_ELEMENTS {static}LL"]
    if shape:
        lines.append(f"#define {prefix}_SHAPE{arguments} {{{', '.join(extents)}}}")
    return lines


def _param(
    scope: Scope, arg: SSAValue, const: bool, hint: str | None = None
) -> tuple[str, str]:
    if isinstance(arg.type, IndexType):
        name = scope.fresh(hint or arg.name_hint, "size")
        return name, f"const int64_t {name}"
    if isinstance(arg.type, cuda.TensorMapType):
        name = scope.fresh(hint or arg.name_hint, "map")
        return name, f"const __grid_constant__ MoltenTensorMap {name}"
    assert isinstance(arg.type, cuda.PointerType)
    name = scope.fresh(hint or arg.name_hint, "p")
    qualifier = "const " if const else ""
    return name, f"{qualifier}{c_type(arg.type.element_type)}* __restrict__ {name}"


TMA_OPS = {
    cuda.MbarrierInitOp,
    cuda.MbarrierArriveOp,
    cuda.MbarrierWaitOp,
    cuda.TmaLoadOp,
    cuda.ClusterSyncOp,
}
"""The ops whose helpers (and the tensor map type) the prelude defines."""


@dataclass
class TranslationUnit:
    source: str
    header: str
    kernel_names: dict[str, str] = field(default_factory=dict)
    """Each `cuda.kernel`'s symbol -> its (sanitized) C++ name."""
    launcher_names: dict[str, str] = field(default_factory=dict)
    """Each `cuda.host_func`'s symbol -> its C++ name."""
    origins: dict[str, dict[str, str]] = field(default_factory=dict)
    """Kernel C++ name -> {C++ variable -> IR value name}, to trace a line of
    the source back to the graph."""


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("molten.targets", "templates"),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)


WgmmaLike = cuda.WgmmaOp | cuda.WgmmaRegisterAOp


_MMA_KINDS = {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "tf32"}
"""Each tensor-core operand type as helpers and PTX name it (f32: tf32
fragments, mma.sync m16n8k8)."""


def wgmma_helper_name(op: WgmmaLike) -> str:
    """molten_wgmma_m64n<N>k16_<type>_<A><B>[_zero]: A and B each `k`
    (K-major) or `t` (MN-major), A `r` where it is in registers; `_zero`
    where no accumulators come in (D = A B)."""
    kind = _MMA_KINDS[type(op.operand)]
    a = "r" if isinstance(op, cuda.WgmmaRegisterAOp) else _major(op.trans_a)
    zero = "" if op.c else "_zero"
    return f"molten_wgmma_m64n{op.n.value.data}k16_{kind}_{a}{_major(op.trans_b)}{zero}"


def _major(trans: UnitAttr | None) -> str:
    return "t" if trans is not None else "k"


def wgmma_helpers(kernels: list[cuda.KernelOp]) -> list[str]:
    """The device functions the kernels' wgmma ops and waits call: one per
    shape, operand type and majorness, one wait per accumulator count. Each
    wraps one PTX instruction whose accumulators are tied registers ("+f"),
    so the compiler keeps them in place while the tensor cores write them."""
    mmas: dict[str, WgmmaLike] = {}
    waits: set[int] = set()
    for k in kernels:
        for op in k.walk():
            if isinstance(op, WgmmaLike):
                mmas.setdefault(wgmma_helper_name(op), op)
            elif isinstance(op, cuda.WgmmaWaitOp):
                waits.add(len(op.values))
    helpers = []
    for name, op in sorted(mmas.items()):
        count = op.n.value.data // 2
        ptx_type = _MMA_KINDS[type(op.operand)]
        registers = ", ".join(f"%{i}" for i in range(count))
        trans_b = int(op.trans_b is not None)
        if isinstance(op, cuda.WgmmaRegisterAOp):
            a_regs = ", ".join(f"%{count + i}" for i in range(4))
            a_params = ", ".join(f"unsigned a{i}" for i in range(4))
            sources = f"{{{a_regs}}}, %{count + 4}, 1, 1, 1, {trans_b}"
            inputs = ", ".join([*(f'"r"(a{i})' for i in range(4)), '"l"(b)'])
        else:
            a_params = "unsigned long long a"
            trans_a = int(op.trans_a is not None)
            # scale-d 0 where no accumulators come in: D = A B.
            scale_d = int(bool(op.c))
            sources = f"%{count}, %{count + 1}, {scale_d}, 1, 1, {trans_a}, {trans_b}"
            inputs = '"l"(a), "l"(b)'
        output = "+f" if op.c else "=f"
        helpers.append(
            f"__device__ __forceinline__ void {name}("
            + ", ".join(f"float& d{i}" for i in range(count))
            + f", {a_params}, unsigned long long b) {{\n"
            f'  asm volatile("wgmma.mma_async.sync.aligned.m64n{op.n.value.data}k16.'
            f'f32.{ptx_type}.{ptx_type} {{{registers}}}, {sources};"\n'
            "      : "
            + ", ".join(f'"{output}"(d{i})' for i in range(count))
            + f"\n      : {inputs});\n}}"
        )
    for count in sorted(waits):
        helpers.append(
            "template <int Pending>\n"
            f"__device__ __forceinline__ void molten_wgmma_wait{count}("
            + ", ".join(f"float& d{i}" for i in range(count))
            + ") {\n"
            f'  asm volatile("wgmma.wait_group.sync.aligned %{count};"\n'
            "      : "
            + ", ".join(f'"+f"(d{i})' for i in range(count))
            + '\n      : "n"(Pending) : "memory");\n}'
        )
    return helpers


def print_cuda(module: ModuleOp, source_name: str | None = None) -> TranslationUnit:
    """The `.cu` source and header of a cuda-dialect module."""
    kernels = [op for op in module.ops if isinstance(op, cuda.KernelOp)]
    launchers = [op for op in module.ops if isinstance(op, cuda.HostFuncOp)]
    others = [
        op for op in module.ops if not isinstance(op, cuda.KernelOp | cuda.HostFuncOp)
    ]
    if others:
        raise NotImplementedError(
            f"-t cuda: {others[0].name} is not cuda-level; run the pipeline through "
            "lower-kernel-to-cuda first"
        )
    global_scope = Scope(is_global=True)
    kernel_names = {
        k.sym_name.data: global_scope.fresh(k.sym_name.data) for k in kernels
    }
    kernel_views = []
    origins: dict[str, dict[str, str]] = {}
    shared_bytes = {
        kernel_names[k.sym_name.data]: cuda.dynamic_shared_bytes(k) for k in kernels
    }
    for k in kernels:
        scope = Scope()
        printer = BodyPrinter(scope)
        if shared_bytes[kernel_names[k.sym_name.data]]:
            printer.dynamic_shared, _ = cuda.shared_layout(k)
            align = max(map(cuda.shared_alignment, printer.dynamic_shared))
            printer.emit(
                f"extern __shared__ __align__({align}) unsigned char molten_shared[];"
            )
        stored = _stored_pointers(k.body.block)
        params = []
        for arg in k.body.block.args:
            name, decl = _param(scope, arg, const=arg not in stored)
            printer.names[arg] = name
            params.append(decl)
        printer.block(k.body.block)
        origins[kernel_names[k.sym_name.data]] = printer.origins
        kernel_views.append(
            {
                "name": kernel_names[k.sym_name.data],
                "block": k.block.data,
                "min_blocks": k.min_blocks.data if k.min_blocks else None,
                "cluster": k.cluster.data if k.cluster else None,
                "params": params,
                "body": "\n".join(printer.lines),
                "fused_ops": [c_identifier(f.data) for f in k.fused_ops]
                if k.fused_ops
                else [],
            }
        )
    launcher_views = []
    launcher_names: dict[str, str] = {}
    for launcher in launchers:
        scope = Scope({"err", "stream", *kernel_names.values()})
        printer = BodyPrinter(scope, kernel_names)
        printer.shared_bytes = shared_bytes
        launcher_name = global_scope.fresh(launcher.sym_name.data)
        launcher_names[launcher.sym_name.data] = launcher_name
        args = launcher.body.block.args
        pointers = launcher.pointers()
        n_inputs = pointers - launcher.outputs.data
        hints = (
            [n.data for n in launcher.param_names.data]
            if launcher.param_names is not None
            else [None] * len(args)
        )
        shapes = launcher.param_shapes() or [None] * pointers
        params, doc, sizes, taken = [], [], [], set()
        for i, (arg, hint) in enumerate(zip(args, hints, strict=True)):
            name, decl = _param(scope, arg, const=i < n_inputs, hint=hint)
            printer.names[arg] = name
            params.append(decl.replace(" __restrict__", ""))
        dims = {
            d: printer.names[a]
            for d, a in zip(launcher.dim_names(), args[pointers:], strict=True)
        }
        for i, (arg, shape) in enumerate(zip(args[:pointers], shapes, strict=True)):
            name = printer.names[arg]
            role = "input" if i < n_inputs else "output"
            extents = ""
            if shape is not None:
                named = [dims[d] if isinstance(d, str) else str(d) for d in shape]
                extents = (" x ".join(named) or "one") + " "
                sizes.append(_size_macros(launcher_name, name, shape, taken, dims))
            element = c_type(arg.type.element_type)
            doc.append(f"  {name}: {role}, {extents}{element} elements")
        for name in dims.values():
            doc.append(f"  {name}: the size of dimension {name}, at least 1")
        printer.emit("cudaError_t err = cudaSuccess;")
        for name in dims.values():
            printer.emit(f"if ({name} < 1) return cudaErrorInvalidValue;")
        if dims:
            sizes.append(
                [f'#define {launcher_name.upper()}_DIMS "{" ".join(dims.values())}"']
            )
        params.append("cudaStream_t stream")
        printer.block(launcher.body.block)
        printer.emit("return cudaSuccess;")
        launcher_views.append(
            {
                "name": launcher_name,
                "params": params,
                "body": "\n".join(printer.lines),
                "doc": [f"{launcher_name}: runs the graph on `stream`.", *doc],
                "sizes": [line for lines in sizes for line in lines],
            }
        )
    kernel_ops = {type(op) for k in kernels for op in k.walk()}
    context = {
        "computed_grids": any(
            isinstance(op, cuda.LaunchOp) and op.grid_of is not None
            for launcher in launchers
            for op in launcher.body.block.ops
        ),
        "cooperative": any(
            isinstance(op, cuda.LaunchOp) and op.cooperative is not None
            for launcher in launchers
            for op in launcher.body.block.ops
        ),
        "tensor_cores": bool(
            kernel_ops
            & {cuda.CpAsyncOp, cuda.LdMatrixOp, cuda.MmaOp, cuda.WgmmaDescriptorOp}
        ),
        "pack": cuda.PackOp in kernel_ops,
        "tf32": cuda.SplitTf32Op in kernel_ops,
        "exp2_approx": any(
            isinstance(op, mathd.Exp2Op) and allows_approximation(op)
            for k in kernels
            for op in k.walk()
        ),
        "wgmma_helpers": wgmma_helpers(kernels),
        "group_barrier": cuda.GroupBarrierOp in kernel_ops,
        "last_arrival": cuda.LastArrivalOp in kernel_ops,
        "tensor_maps": any(
            isinstance(op, cuda.MakeTensorMapOp)
            for launcher in launchers
            for op in launcher.body.block.ops
        ),
        "tma": bool(kernel_ops & TMA_OPS)
        or any(
            isinstance(a.type, cuda.TensorMapType)
            for k in kernels
            for a in k.body.block.args
        ),
        "version": version("molten"),
        "source": source_name,
        "kernels": kernel_views,
        "launchers": launcher_views,
    }
    return TranslationUnit(
        _ENV.get_template("translation_unit.cu.j2").render(context),
        _ENV.get_template("header.h.j2").render(context),
        kernel_names,
        launcher_names,
        origins,
    )


@dataclass(frozen=True)
class CudaTarget(Target):
    """`-t cuda`: the module's `.cu` translation unit."""

    name = "cuda"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(print_cuda(module).source)


@dataclass(frozen=True)
class CudaHeaderTarget(Target):
    """`-t cuda-header`: the header declaring the module's launchers."""

    name = "cuda-header"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(print_cuda(module).header)
