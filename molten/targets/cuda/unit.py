"""The translation unit: a cuda-dialect module's `.cu` source and header,
rendered from the Jinja2 templates (file skeleton, device helpers, launcher
signatures, the header) with the printed bodies; and the `-t cuda` and
`-t cuda-header` targets."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import IO

import jinja2
from xdsl.context import Context
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.utils.target import Target

from molten.dialects import cuda
from molten.dialects.molten import Dim, split_dims
from molten.targets.cuda.arithmetic import allows_approximation
from molten.targets.cuda.body import BodyPrinter
from molten.targets.cuda.c_types import c_type
from molten.targets.cuda.names import Scope, c_identifier
from molten.targets.cuda.op_table import OP_PRINTERS
from molten.targets.cuda.tensor_cores import wgmma_helpers


def _stored_pointers(body: Block) -> set[SSAValue]:
    """The pointers a kernel writes through (not const)."""
    return {
        op.ptr if isinstance(op, cuda.StoreOp | cuda.AtomicAddOp) else op.counters
        for op in body.walk()
        if isinstance(
            op,
            cuda.StoreOp | cuda.AtomicAddOp | cuda.GroupBarrierOp | cuda.LastArrivalOp,
        )
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
    loader=jinja2.PackageLoader("molten.targets.cuda", "templates"),
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
        printer = BodyPrinter(scope, OP_PRINTERS)
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
        printer = BodyPrinter(scope, OP_PRINTERS, kernel_names)
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
        updated = launcher.updated_inputs()
        params, doc, sizes, taken = [], [], [], set()
        for i, (arg, hint) in enumerate(zip(args, hints, strict=True)):
            const = i < n_inputs and i not in updated
            name, decl = _param(scope, arg, const=const, hint=hint)
            printer.names[arg] = name
            params.append(decl.replace(" __restrict__", ""))
        dims = {
            d: printer.names[a]
            for d, a in zip(launcher.dim_names(), args[pointers:], strict=True)
        }
        for i, (arg, shape) in enumerate(zip(args[:pointers], shapes, strict=True)):
            name = printer.names[arg]
            role = (
                "input, updated in place"
                if i in updated
                else "input"
                if i < n_inputs
                else "output"
            )
            extents = ""
            if shape is not None:
                named = [dims[d] if isinstance(d, str) else str(d) for d in shape]
                extents = (" x ".join(named) or "one") + " "
                sizes.append(_size_macros(launcher_name, name, shape, taken, dims))
            element = c_type(arg.type.element_type)
            doc.append(f"  {name}: {role}, {extents}{element} elements")
        for name in dims.values():
            doc.append(f"  {name}: the size of dimension {name}, at least 1")
        declared_at = len(printer.lines)
        for name in dims.values():
            printer.emit(f"if ({name} < 1) return cudaErrorInvalidValue;")
        if dims:
            sizes.append(
                [f'#define {launcher_name.upper()}_DIMS "{" ".join(dims.values())}"']
            )
        params.append("cudaStream_t stream")
        printer.block(launcher.body.block)
        # The launches check `err`; a launcher of none (only copies) has none.
        if any(re.search(r"\berr\b", line) for line in printer.lines[declared_at:]):
            declaration = "  " * printer.depth + "cudaError_t err = cudaSuccess;"
            printer.lines.insert(declared_at, declaration)
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
