"""The printers of global and shared memory accesses and shared buffers."""

from __future__ import annotations

from xdsl.ir import Attribute, Operation

from molten.dialects import cuda
from molten.targets.cuda.body import BodyPrinter, OpPrinter
from molten.targets.cuda.c_types import c_type


def _vector_type(pointer: Attribute, width: int) -> str:
    assert isinstance(pointer, cuda.PointerType)
    return f"molten_vec<{c_type(pointer.element_type)}, {width}>"


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


def _atomic_add(printer: BodyPrinter, op: cuda.AtomicAddOp) -> None:
    address = f"&{printer.name(op.ptr)}[{printer.name(op.index)}]"
    value = printer.name(op.value)
    assert isinstance(op.ptr.type, cuda.PointerType)
    if c_type(op.ptr.type.element_type) == "int64_t":
        # CUDA adds 64-bit integers as unsigned: two's complement sums the same.
        address = f"reinterpret_cast<unsigned long long*>({address})"
        value = f"static_cast<unsigned long long>({value})"
    printer.emit(f"atomicAdd({address}, {value});")


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
    cuda.AtomicAddOp: _atomic_add,
    cuda.SharedAllocOp: _shared_alloc,
}
