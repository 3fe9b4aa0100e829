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
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.target import Target

from molten.dialects import cuda

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
        "NULL",
        "INFINITY",
        "NAN",
        "int64_t",
        "stream",
        "err",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "warpSize",
        "dim3",
        "min",
        "max",
    ]
)

_BAD_CHARS = re.compile(r"[^A-Za-z0-9_]")


def c_identifier(name: str) -> str:
    """`name` as a C++ identifier that is neither a keyword nor reserved."""
    cleaned = _BAD_CHARS.sub("_", name) or "v"
    if cleaned[0].isdigit():
        cleaned = "v" + cleaned
    # Names starting with "__" or "_" + capital are reserved to the implementation.
    cleaned = re.sub(r"^_+(?=[A-Z_]|$)", "", cleaned) or "v"
    if cleaned in CPP_KEYWORDS or cleaned.startswith("molten_"):
        cleaned += "_"
    return cleaned


@dataclass
class Scope:
    """Unique C++ names for the values of one function."""

    taken: set[str] = field(default_factory=set)

    def fresh(self, hint: str | None, default: str = "v") -> str:
        base = c_identifier(hint) if hint else default
        name, suffix = base, 1
        while name in self.taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
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
    raise NotImplementedError(f"-t cuda: no C++ type for {t}")


def float_literal(value: float) -> str:
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    text = repr(float(np.float32(value)))
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
}
_CALLS = {
    arith.MaximumfOp: "molten_fmax",
    arith.MinimumfOp: "molten_fmin",
    arith.MinSIOp: "molten_imin",
    mathd.ExpOp: "expf",
    mathd.LogOp: "logf",
    mathd.SqrtOp: "sqrtf",
    mathd.RsqrtOp: "rsqrtf",
    mathd.TanhOp: "tanhf",
    mathd.ErfOp: "erff",
    mathd.PowFOp: "powf",
    mathd.AbsFOp: "fabsf",
}
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

    def name(self, value: SSAValue) -> str:
        return self.names[value]

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def define(self, value: SSAValue, expression: str, default: str = "v") -> None:
        name = self.scope.fresh(value.name_hint, default)
        self.names[value] = name
        self.emit(f"const {c_type(value.type)} {name} = {expression};")

    def block(self, block: Block) -> None:
        for op in block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(value, FloatAttr):
                self.names[op.result] = float_literal(value.value.data)
            elif isinstance(value, IntegerAttr):
                self.names[op.result] = str(value.value.data)
            else:
                raise NotImplementedError(f"-t cuda: constant {value}")
        elif type(op) in _SPECIAL:
            axis = op.dim.data.value
            self.names[op.results[0]] = f"(int64_t){_SPECIAL[type(op)]}.{axis}"
        elif type(op) in _BINARY:
            a, b = (self.name(v) for v in op.operands)
            self.define(op.results[0], f"{a} {_BINARY[type(op)]} {b}")
        elif type(op) in _CALLS:
            args = ", ".join(self.name(v) for v in op.operands)
            self.define(op.results[0], f"{_CALLS[type(op)]}({args})")
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
            self.define(op.result, f"{self.name(op.ptr)}[{self.name(op.index)}]")
        elif isinstance(op, cuda.StoreOp):
            self.emit(
                f"{self.name(op.ptr)}[{self.name(op.index)}] = {self.name(op.value)};"
            )
        elif isinstance(op, cuda.SharedAllocOp):
            name = self.scope.fresh(op.result.name_hint, "shared")
            self.names[op.result] = name
            element = op.result.type.element_type
            self.emit(f"__shared__ {c_type(element)} {name}[{op.size.value.data}];")
        elif isinstance(op, cuda.SyncThreadsOp):
            self.emit("__syncthreads();")
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
        elif isinstance(op, cuda.LaunchOp):
            self._launch(op)
        elif isinstance(op, cuda.CopyOp):
            element = c_type(op.target.type.element_type)
            target, source = self.name(op.target), self.name(op.source)
            self.emit(
                f"err = cudaMemcpyAsync({target}, {source}, "
                f"{op.size.value.data} * sizeof({element}), "
                "cudaMemcpyDeviceToDevice, stream);"
            )
            self.emit("if (err != cudaSuccess) return err;")
        else:
            raise NotImplementedError(f"-t cuda: cannot print {op.name}")

    def _for(self, op: scf.ForOp) -> None:
        body = op.body.block
        iv = self.scope.fresh(body.args[0].name_hint, "i")
        self.names[body.args[0]] = iv
        carried = []
        for arg, init, result in zip(
            body.args[1:], op.iter_args, op.results, strict=True
        ):
            name = self.scope.fresh(result.name_hint, "acc")
            self.emit(f"{c_type(arg.type)} {name} = {self.name(init)};")
            self.names[arg] = self.names[result] = name
            carried.append(name)
        lb, ub, step = (self.name(v) for v in (op.lb, op.ub, op.step))
        self.emit(f"for (int64_t {iv} = {lb}; {iv} < {ub}; {iv} += {step}) {{")
        self.depth += 1
        self.block(body)
        terminator = body.last_op
        assert isinstance(terminator, scf.YieldOp)
        for name, value in zip(carried, terminator.operands, strict=True):
            self.emit(f"{name} = {self.name(value)};")
        self.depth -= 1
        self.emit("}")

    def _if(self, op: scf.IfOp) -> None:
        if op.results:
            raise NotImplementedError("-t cuda: scf.if with results")
        self.emit(f"if ({self.name(op.cond)}) {{")
        self.depth += 1
        self.block(op.true_region.block)
        self.depth -= 1
        if op.false_region.blocks and list(op.false_region.block.ops)[:-1]:
            self.emit("} else {")
            self.depth += 1
            self.block(op.false_region.block)
            self.depth -= 1
        self.emit("}")

    def _alloc(self, op: cuda.AllocOp) -> None:
        name = self.scope.fresh(op.result.name_hint, "buffer")
        self.names[op.result] = name
        element = c_type(op.result.type.element_type)
        size = op.size.value.data
        self.emit(f"{element}* {name} = nullptr;")
        self.emit(
            f"err = cudaMallocAsync((void**)&{name}, {size} * sizeof({element}), "
            "stream);"
        )
        self.emit("if (err != cudaSuccess) return err;")

    def _launch(self, op: cuda.LaunchOp) -> None:
        name = self.kernel_names[op.callee.string_value()]
        grid = ", ".join(str(g) for g in op.grid.get_values())
        block = ", ".join(str(b) for b in op.block.get_values())
        args = ", ".join(self.name(a) for a in op.args)
        self.emit(f"{name}<<<dim3({grid}), dim3({block}), 0, stream>>>({args});")
        self.emit("err = cudaGetLastError();")
        self.emit("if (err != cudaSuccess) return err;")


def _stored_pointers(body: Block) -> set[SSAValue]:
    return {op.ptr for op in body.walk() if isinstance(op, cuda.StoreOp)}


def _param(scope: Scope, arg: SSAValue, const: bool) -> tuple[str, str]:
    assert isinstance(arg.type, cuda.PointerType)
    name = scope.fresh(arg.name_hint, "p")
    qualifier = "const " if const else ""
    return name, f"{qualifier}{c_type(arg.type.element_type)}* __restrict__ {name}"


@dataclass
class TranslationUnit:
    source: str
    header: str


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("molten.targets", "templates"),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)


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
    global_scope = Scope()
    kernel_names = {
        k.sym_name.data: global_scope.fresh(k.sym_name.data) for k in kernels
    }
    kernel_views = []
    for k in kernels:
        scope = Scope()
        printer = BodyPrinter(scope)
        stored = _stored_pointers(k.body.block)
        params = []
        for arg in k.body.block.args:
            name, decl = _param(scope, arg, const=arg not in stored)
            printer.names[arg] = name
            params.append(decl)
        printer.block(k.body.block)
        kernel_views.append(
            {
                "name": kernel_names[k.sym_name.data],
                "block": k.block.data,
                "params": params,
                "body": "\n".join(printer.lines),
                "fused_ops": [s.data for s in k.fused_ops] if k.fused_ops else [],
            }
        )
    launcher_views = []
    for launcher in launchers:
        scope = Scope({"err", "stream"})
        printer = BodyPrinter(scope, kernel_names)
        args = launcher.body.block.args
        n_inputs = len(args) - launcher.outputs.data
        params, doc = [], []
        for i, arg in enumerate(args):
            name, decl = _param(scope, arg, const=i < n_inputs)
            printer.names[arg] = name
            params.append(decl.replace(" __restrict__", ""))
            role = "input" if i < n_inputs else "output"
            doc.append(f"  {name}: {role}, {c_type(arg.type.element_type)} elements")
        params.append("cudaStream_t stream")
        printer.emit("cudaError_t err = cudaSuccess;")
        printer.block(launcher.body.block)
        printer.emit("return cudaSuccess;")
        launcher_views.append(
            {
                "name": global_scope.fresh(launcher.sym_name.data),
                "params": params,
                "body": "\n".join(printer.lines),
                "doc": [f"{launcher.sym_name.data}: runs the graph on `stream`.", *doc],
            }
        )
    context = {
        "version": version("molten"),
        "source": source_name,
        "kernels": kernel_views,
        "launchers": launcher_views,
    }
    return TranslationUnit(
        _ENV.get_template("translation_unit.cu.j2").render(context),
        _ENV.get_template("header.h.j2").render(context),
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
