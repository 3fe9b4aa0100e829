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
from collections.abc import Sequence
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


_BINARY = {
    arith.AddfOp: "+",
    arith.SubfOp: "-",
    arith.MulfOp: "*",
    arith.DivfOp: "/",
    arith.AddiOp: "+",
    arith.SubiOp: "-",
    arith.MuliOp: "*",
    arith.DivSIOp: "/",
    arith.RemSIOp: "%",
    arith.AndIOp: "&&",
    arith.OrIOp: "||",
    arith.XOrIOp: "^",
}
_BITWISE = {arith.AndIOp: "&", arith.OrIOp: "|"}
"""The operators of logical ops on integers wider than a bool."""
_CALLS = {
    arith.MaximumfOp: "molten_fmax",
    arith.MaxnumfOp: "fmaxf",
    arith.MinimumfOp: "molten_fmin",
    arith.MinSIOp: "molten_imin",
    mathd.ExpOp: "expf",
    mathd.Exp2Op: "exp2f",
    mathd.LogOp: "logf",
    mathd.SqrtOp: "sqrtf",
    mathd.RsqrtOp: "rsqrtf",
    mathd.TanhOp: "tanhf",
    mathd.ErfOp: "erff",
    mathd.PowFOp: "powf",
    mathd.AbsFOp: "fabsf",
}
_APPROXIMATE_CALLS = {mathd.Exp2Op: "molten_exp2_approx"}
"""The device functions of ops whose fastmath flags allow an approximation
(afn)."""


def _call_name(op: Operation) -> str:
    fastmath = getattr(op, "fastmath", None)
    if (
        type(op) in _APPROXIMATE_CALLS
        and isinstance(fastmath, arith.FastMathFlagsAttr)
        and arith.FastMathFlag.APPROX_FUNC in fastmath.data
    ):
        return _APPROXIMATE_CALLS[type(op)]
    return _CALLS[type(op)]


_PREDICATES = {
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
_SPECIAL = {
    cuda.ThreadIdxOp: "threadIdx",
    cuda.BlockIdxOp: "blockIdx",
    cuda.BlockDimOp: "blockDim",
    cuda.GridDimOp: "gridDim",
}


class BodyPrinter:
    """C++ statements for the ops of a kernel or launcher body."""

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

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def define(self, value: SSAValue, expression: str, default: str = "v") -> None:
        name = self.scope.fresh(value.name_hint, default)
        self.names[value] = name
        if value.name_hint:
            self.origins[name] = value.name_hint
        self.emit(f"const {c_type(value.type)} {name} = {expression};")

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(value, FloatAttr):
                self.names[op.result] = float_literal(value.value.data)
            elif isinstance(value, IntegerAttr) and value.type == IntegerType(1):
                self.names[op.result] = "true" if value.value.data else "false"
            elif isinstance(value, IntegerAttr):
                self.names[op.result] = str(value.value.data)
            else:
                raise NotImplementedError(f"-t cuda: constant {value}")
        elif type(op) in _SPECIAL:
            axis = op.dim.data.value
            self.names[op.results[0]] = f"(int64_t){_SPECIAL[type(op)]}.{axis}"
        elif type(op) in _BINARY:
            a, b = (self.name(v) for v in op.operands)
            operator = _BINARY[type(op)]
            if op.results[0].type != IntegerType(1):
                operator = _BITWISE.get(type(op), operator)
            self.define(op.results[0], f"{a} {operator} {b}")
        elif type(op) in _CALLS:
            args = ", ".join(self.name(v) for v in op.operands)
            self.define(op.results[0], f"{_call_name(op)}({args})")
        elif isinstance(op, arith.NegfOp):
            self.define(op.result, f"-{self.name(op.operand)}")
        elif isinstance(op, arith.CmpiOp | arith.CmpfOp):
            names = (
                arith.CMPI_COMPARISON_OPERATIONS
                if isinstance(op, arith.CmpiOp)
                else arith.CMPF_COMPARISON_OPERATIONS
            )
            predicate = names[op.predicate.value.data]
            a, b = (self.name(v) for v in op.operands)
            self.define(op.result, f"{a} {_PREDICATES[predicate]} {b}", "cond")
        elif isinstance(op, arith.SelectOp):
            c, a, b = (self.name(v) for v in op.operands)
            self.define(op.result, f"{c} ? {a} : {b}")
        elif isinstance(op, arith.ExtFOp):
            source = op.input.type
            fn = (
                "__half2float"
                if isinstance(source, Float16Type)
                else "__bfloat162float"
            )
            self.define(op.result, f"{fn}({self.name(op.input)})")
        elif isinstance(op, arith.TruncFOp):
            target = op.result.type
            fn = (
                "__float2half_rn"
                if isinstance(target, Float16Type)
                else "__float2bfloat16_rn"
            )
            self.define(op.result, f"{fn}({self.name(op.input)})")
        elif isinstance(op, cuda.LoadOp):
            self._load(op)
        elif isinstance(op, cuda.StoreOp):
            self._store(op)
        elif isinstance(op, cuda.SharedAllocOp):
            self._shared_alloc(op)
        elif isinstance(op, cuda.CpAsyncOp):
            target = f"{self.name(op.target)} + {self.name(op.target_index)}"
            source = f"{self.name(op.source)} + {self.name(op.source_index)}"
            self.emit(f"molten_cp_async({target}, {source}, {self.name(op.valid)});")
        elif isinstance(op, cuda.CpAsyncCommitOp):
            self.emit("molten_cp_async_commit();")
        elif isinstance(op, cuda.CpAsyncWaitOp):
            self.emit(f"molten_cp_async_wait<{op.pending.value.data}>();")
        elif isinstance(op, cuda.LdMatrixOp):
            names = self._declare(op.fragments, "frag")
            fn = "molten_ldmatrix_trans" if op.trans is not None else "molten_ldmatrix"
            address = f"{self.name(op.ptr)} + {self.name(op.index)}"
            self.emit(f"{fn}({address}, {', '.join(names)});")
        elif isinstance(op, cuda.MmaOp):
            names = self._declare(op.d, "acc")
            kind = _MMA_KINDS[type(op.operand)]
            args = ", ".join([*names, *(self.name(v) for v in (*op.a, *op.b, *op.c))])
            self.emit(f"molten_mma_{kind}({args});")
        elif isinstance(op, cuda.SplitTf32Op):
            big, small = self._declare(op.results, "tf32")
            self.emit(f"molten_split_tf32({self.name(op.value)}, {big}, {small});")
        elif isinstance(op, cuda.PackOp):
            kind = _MMA_KINDS[type(op.operand)]
            lo, hi = self.name(op.lo), self.name(op.hi)
            self.define(op.result, f"molten_pack_{kind}({lo}, {hi})", "pair")
        elif isinstance(op, cuda.WgmmaDescriptorOp):
            address = f"{self.name(op.ptr)}, {self.name(op.index)}"
            self.define(
                op.result,
                f"molten_wgmma_descriptor({address}, {op.leading.value.data}, "
                f"{op.stride.value.data})",
                "desc",
            )
        elif isinstance(op, cuda.WgmmaOp):
            if op.c:
                names = self._declare_in_place(op.d, op.c, "acc")
            else:  # D = A B: the helper only writes them
                names = self._declare(op.d, "acc")
            args = ", ".join([*names, self.name(op.a), self.name(op.b)])
            self.emit(f"{wgmma_helper_name(op)}({args});")
        elif isinstance(op, cuda.WgmmaRegisterAOp):
            names = self._declare_in_place(op.d, op.c, "acc")
            args = ", ".join([*names, *(self.name(r) for r in op.a), self.name(op.b)])
            self.emit(f"{wgmma_helper_name(op)}({args});")
        elif isinstance(op, cuda.WgmmaFenceOp):
            self.emit('asm volatile("wgmma.fence.sync.aligned;" ::: "memory");')
        elif isinstance(op, cuda.WgmmaCommitOp):
            self.emit('asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");')
        elif isinstance(op, cuda.WgmmaWaitOp):
            names = self._declare_in_place(op.results_, op.values, "acc")
            wait = f"molten_wgmma_wait{len(names)}<{op.pending.value.data}>"
            self.emit(f"{wait}({', '.join(names)});")
        elif isinstance(op, cuda.FenceProxyAsyncOp):
            self.emit('asm volatile("fence.proxy.async.shared::cta;" ::: "memory");')
        elif isinstance(op, cuda.MbarrierInitOp):
            barrier = f"{self.name(op.barriers)} + {self.name(op.index)}"
            self.emit(f"molten_mbarrier_init({barrier}, {op.count.value.data});")
        elif isinstance(op, cuda.FenceMbarrierInitOp):
            self.emit(
                'asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");'
            )
        elif isinstance(op, cuda.MbarrierArriveOp):
            barrier = f"{self.name(op.barriers)} + {self.name(op.index)}"
            if op.cta is not None:
                cta = self.name(op.cta)
                self.emit(f"molten_mbarrier_arrive_cluster({barrier}, {cta});")
            elif op.expect_tx is None:
                self.emit(f"molten_mbarrier_arrive({barrier});")
            else:
                tx = op.expect_tx.value.data
                self.emit(f"molten_mbarrier_arrive_expect_tx({barrier}, {tx});")
        elif isinstance(op, cuda.MbarrierWaitOp):
            barrier = f"{self.name(op.barriers)} + {self.name(op.index)}"
            self.emit(f"molten_mbarrier_wait({barrier}, {self.name(op.parity)});")
        elif isinstance(op, cuda.TmaLoadOp):
            target = f"{self.name(op.target)} + {self.name(op.target_index)}"
            barrier = f"{self.name(op.barriers)} + {self.name(op.barrier_index)}"
            c0, c1 = self.name(op.c0), self.name(op.c1)
            tensor_map = f"&{self.name(op.map)}"
            if op.multicast is None:
                self.emit(
                    f"molten_tma_load({target}, {tensor_map}, {barrier}, {c0}, {c1});"
                )
            else:
                mask = op.multicast.value.data
                self.emit(
                    f"molten_tma_load_multicast({target}, {tensor_map}, {barrier}, "
                    f"{c0}, {c1}, {mask});"
                )
        elif isinstance(op, cuda.ClusterSyncOp):
            self.emit("molten_cluster_sync();")
        elif isinstance(op, cuda.SetMaxRegistersOp):
            direction, count = op.direction.data, op.count.value.data
            self.emit(
                f'asm volatile("setmaxnreg.{direction}.sync.aligned.u32 {count};");'
            )
        elif isinstance(op, cuda.SyncThreadsOp):
            self.emit("__syncthreads();")
        elif isinstance(op, cuda.NamedBarrierOp):
            barrier, threads = self.name(op.id), op.threads.value.data
            self.emit(
                f'asm volatile("bar.sync %0, {threads};" :: "r"((int){barrier}) '
                ': "memory");'
            )
        elif isinstance(op, cuda.GroupBarrierOp):
            counters, group, target = (self.name(v) for v in op.operands)
            self.emit(f"molten_group_barrier({counters} + {group}, {target});")
        elif isinstance(op, cuda.LastArrivalOp):
            counters, group, count = (self.name(v) for v in op.operands)
            among = "" if op.threads is None else f", {op.threads.value.data}"
            self.define(
                op.result,
                f"molten_last_arrival({counters} + {group}, {count}{among})",
            )
        elif isinstance(op, cuda.ShflXorOp):
            self.define(
                op.result,
                f"__shfl_xor_sync(0xffffffffu, {self.name(op.value)}, "
                f"{op.offset.value.data})",
            )
        elif isinstance(op, scf.ForOp):
            self._for(op)
        elif isinstance(op, scf.IfOp):
            self._if(op)
        elif isinstance(op, scf.YieldOp | cuda.ReturnOp):
            pass  # handled by the enclosing construct / the end of the function
        elif isinstance(op, cuda.AllocOp):
            self._alloc(op)
        elif isinstance(op, cuda.FreeOp):
            self.emit(f"cudaFreeAsync({self.name(op.ptr)}, stream);")
            self.allocated.remove(self.name(op.ptr))
        elif isinstance(op, cuda.LaunchOp):
            self._launch(op)
        elif isinstance(op, cuda.MakeTensorMapOp):
            # A map only variants of a launch use is made where one runs.
            if not all(
                isinstance(use.operation, cuda.LaunchOp)
                and use.operation.when is not None
                for use in op.result.uses
            ):
                self._tensor_map(op)
        elif isinstance(op, cuda.ZeroOp):
            element = c_type(op.target.type.element_type)
            self.emit(
                f"err = cudaMemsetAsync({self.name(op.target)}, 0, "
                f"{op.size.value.data} * sizeof({element}), stream);"
            )
            self.check_error()
        elif isinstance(op, cuda.CopyOp):
            element = c_type(op.target.type.element_type)
            target, source = self.name(op.target), self.name(op.source)
            count = self._count(op.size.value.data, op.factors)
            self.emit(
                f"err = cudaMemcpyAsync({target}, {source}, "
                f"{count} * sizeof({element}), "
                "cudaMemcpyDeviceToDevice, stream);"
            )
            self.check_error()
        else:
            raise NotImplementedError(f"-t cuda: cannot print {op.name}")

    def _declare(self, values, default: str) -> list[str]:
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

    def _declare_in_place(self, values, sources, default: str) -> list[str]:
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
        names = self._declare(values, default)
        for name, source in zip(names, sources, strict=True):
            self.emit(f"{name} = {self.name(source)};")
        return names

    def _shared_alloc(self, op: cuda.SharedAllocOp) -> None:
        name = self.scope.fresh(op.result.name_hint, "shared")
        self.names[op.result] = name
        element = c_type(op.result.type.element_type)
        if op.result in self.dynamic_shared:
            offset = self.dynamic_shared[op.result]
            self.emit(
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
        self.emit(f"__shared__{align} {element} {name}[{op.size.value.data}];")

    def _load(self, op: cuda.LoadOp) -> None:
        address = f"{self.name(op.ptr)}[{self.name(op.index)}]"
        if op.coherent is not None:
            self.define(op.result, f"__ldcg(&{address})")
            return
        if len(op.values) == 1:
            self.define(op.result, address)
            return
        vector = _vector_type(op.ptr.type, len(op.values))
        hint = op.values[0].name_hint
        name = self.scope.fresh(f"{hint}_vec" if hint else None, "vec")
        self.emit(
            f"const {vector} {name} = *reinterpret_cast<const {vector}*>(&{address});"
        )
        for i, value in enumerate(op.values):
            self.define(value, f"{name}.v[{i}]")

    def _store(self, op: cuda.StoreOp) -> None:
        address = f"{self.name(op.ptr)}[{self.name(op.index)}]"
        if len(op.values) == 1:
            self.emit(f"{address} = {self.name(op.value)};")
            return
        vector = _vector_type(op.ptr.type, len(op.values))
        values = ", ".join(self.name(v) for v in op.values)
        self.emit(
            f"*reinterpret_cast<{vector}*>(&{address}) = {vector}{{{{{values}}}}};"
        )

    def _for(self, op: scf.ForOp) -> None:
        body = op.body.block
        iv = self.scope.fresh(body.args[0].name_hint, "i")
        self.names[body.args[0]] = iv
        carried = []
        for arg, init, result in zip(
            body.args[1:], op.iter_args, op.results, strict=True
        ):
            name = self.scope.fresh(result.name_hint or arg.name_hint, "acc")
            self.variables.add(name)
            self.emit(f"{c_type(arg.type)} {name} = {self.name(init)};")
            self.names[arg] = self.names[result] = name
            carried.append(name)
        lb, ub, step = (self.name(v) for v in (op.lb, op.ub, op.step))
        self.emit(f"for (int64_t {iv} = {lb}; {iv} < {ub}; {iv} += {step}) {{")
        self.depth += 1
        self.block(body)
        terminator = body.last_op
        assert isinstance(terminator, scf.YieldOp)
        updates = [self.name(v) for v in terminator.operands]
        if any(
            u in carried and u != name for u, name in zip(updates, carried, strict=True)
        ):
            # A yielded value is itself carried (e.g. two swapped): read all
            # before writing any.
            staged = [self.scope.fresh(f"{name}_next") for name in carried]
            for name, update, arg in zip(staged, updates, body.args[1:], strict=True):
                self.emit(f"const {c_type(arg.type)} {name} = {update};")
            updates = staged
        for name, update in zip(carried, updates, strict=True):
            if name != update:
                self.emit(f"{name} = {update};")
        self.depth -= 1
        self.emit("}")

    def _if(self, op: scf.IfOp) -> None:
        # Results are variables declared before the if, each branch
        # assigning what it yields.
        results = []
        for result in op.results:
            name = self.scope.fresh(result.name_hint, "v")
            self.emit(f"{c_type(result.type)} {name};")
            self.names[result] = name
            results.append(name)

        def branch(block: Block) -> None:
            self.depth += 1
            self.block(block)
            terminator = block.last_op
            if results:
                assert isinstance(terminator, scf.YieldOp)
                for name, value in zip(results, terminator.operands, strict=True):
                    self.emit(f"{name} = {self.name(value)};")
            self.depth -= 1

        self.emit(f"if ({self.name(op.cond)}) {{")
        branch(op.true_region.block)
        if op.false_region.blocks and (results or list(op.false_region.block.ops)[:-1]):
            self.emit("} else {")
            branch(op.false_region.block)
        self.emit("}")

    def _alloc(self, op: cuda.AllocOp) -> None:
        name = self.scope.fresh(op.result.name_hint, "buffer")
        self.names[op.result] = name
        element = c_type(op.result.type.element_type)
        size = self._count(op.size.value.data, op.factors)
        self.emit(f"{element}* {name} = nullptr;")
        self.emit(
            f"err = cudaMallocAsync((void**)&{name}, {size} * sizeof({element}), "
            "stream);"
        )
        self.check_error()
        self.allocated.append(name)

    def _count(self, size: int, factors: Sequence[SSAValue]) -> str:
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

    def _tensor_map(self, op: cuda.MakeTensorMapOp) -> None:
        """The tensor map's encoding on the host."""
        name = self.scope.fresh(op.result.name_hint, "map")
        self.names[op.result] = name
        (rows, cols), (box_rows, box_cols) = (
            op.shape.get_values(),
            op.box.get_values(),
        )
        element = op.result.type.element_type
        kind = "BFLOAT16" if isinstance(element, BFloat16Type) else "FLOAT16"
        if op.rows is not None:
            size = self.name(op.rows)
            rows = size if rows == 1 else f"{rows} * {size}"
        self.emit(f"MoltenTensorMap {name};")
        self.emit(
            f"err = molten_make_tensor_map(&{name}, {self.name(op.source)}, "
            f"{rows}, {cols}, {box_rows}, {box_cols}, "
            f"CU_TENSOR_MAP_DATA_TYPE_{kind});"
        )
        self.check_error()

    def _launch(self, op: cuda.LaunchOp) -> None:
        if op.when is not None:
            position, least, most = op.when.get_values()
            size = self.name(op.args[position])
            bounds = [f"{size} >= {least}"] + ([f"{size} <= {most}"] if most else [])
            if least == most:
                bounds = [f"{size} == {least}"]
            self.emit(f"if ({' && '.join(bounds)}) {{  // this variant's sizes")
            self.depth += 1
            for arg in op.args:
                made = arg.owner
                if isinstance(made, cuda.MakeTensorMapOp) and arg not in self.names:
                    self._tensor_map(made)
        args = ", ".join(self.name(a) for a in op.args)

        arguments = ""
        if op.cooperative is not None:
            arguments = self.scope.fresh("arguments")
            addresses = ", ".join(f"(void*)&{self.name(a)}" for a in op.args)
            self.emit(f"void* {arguments}[] = {{{addresses}}};")

        callees = [op.callee] if op.fallback is None else [op.callee, op.fallback]
        for callee in callees:
            name = self.kernel_names[callee.string_value()]
            shared = self.shared_bytes.get(name, 0)
            if not shared:
                continue
            if op.cooperative is not None:
                raise NotImplementedError(
                    "-t cuda: a cooperative launch of a kernel with dynamic shared "
                    "memory"
                )
            # Above 48 KiB a kernel must opt in to its dynamic shared memory.
            self.emit(
                f"err = cudaFuncSetAttribute((const void*){name}, "
                f"cudaFuncAttributeMaxDynamicSharedMemorySize, {shared});"
            )
            self.check_error()

        def launch(callee: SymbolRefAttr) -> str:
            name = self.kernel_names[callee.string_value()]
            grid_shape, block_shape = op.launch_shape(callee)
            grid = ", ".join(str(g) for g in grid_shape)
            scale = op.grid_scale
            if callee == op.fallback and op.fallback_grid is not None:
                scale = op.fallback_scale
            if op.grid_of is not None and scale is not None:
                factor, divisor, *rest = scale.get_values()
                times, axis = rest or (1, 0)
                work = " * ".join(
                    [*(self.name(v) for v in op.grid_sizes())]
                    + ([f"{factor}LL"] if factor != 1 else [])
                )
                extra = f", {times}" if times != 1 else ""
                sizes = [str(g) for g in grid_shape]
                sizes[axis] = (
                    f"molten_grid({work}, {divisor}, {grid_shape[axis]}{extra})"
                )
                grid = ", ".join(sizes)
            block = ", ".join(str(b) for b in block_shape)
            if op.cooperative is None:
                shared = self.shared_bytes.get(name, 0)
                return (
                    f"{name}<<<dim3({grid}), dim3({block}), {shared}, stream>>>"
                    f"({args});"
                )
            (group,) = op.cooperative.get_values()
            groups = op.grid.get_values()[0] // group
            threads = math.prod(op.block.get_values())
            return (
                f"err = molten_launch_cooperative((const void*){name}, {groups}, "
                f"{group}, {threads}, {arguments}, stream);"
            )

        if op.aligned is None or op.fallback is None:
            self.emit(launch(op.callee))
        else:
            pointers = " | ".join(
                f"(uintptr_t){self.name(op.args[i])}" for i in op.aligned.get_values()
            )
            self.emit(f"if ((({pointers}) % {cuda.VECTOR_BYTES}) == 0) {{")
            self.emit(f"  {launch(op.callee)}")
            self.emit("} else {  // a pointer too misaligned for the vector accesses")
            self.emit(f"  {launch(op.fallback)}")
            self.emit("}")
        if op.cooperative is None:
            self.emit("err = cudaGetLastError();")
        self.check_error()
        if op.when is not None:
            self.depth -= 1
            self.emit("}")


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
            type(op) in _APPROXIMATE_CALLS
            and _call_name(op) == _APPROXIMATE_CALLS[type(op)]
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
