"""The printers of a launcher's ops: stream-ordered buffers, memsets and
copies, tensor maps, and kernel launches with their error checks."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import BFloat16Type, SymbolRefAttr
from xdsl.ir import Operation

from molten.dialects import cuda
from molten.targets.cuda.body import BodyPrinter, OpPrinter
from molten.targets.cuda.c_types import c_type


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
