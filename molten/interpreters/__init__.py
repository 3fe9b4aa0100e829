"""Runs Molten IR on the CPU: the semantic oracle for passes and kernels."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter

from molten.conventions import dtype_name, input_name
from molten.dialects.molten import (
    BOOLEAN,
    FLOAT,
    INTEGER,
    dims_of,
    element_kind,
    graph_name,
    integer_range,
    is_dynamic,
)
from molten.errors import GraphError, InputError, MoltenError
from molten.interpreters.kernel import KernelFunctions
from molten.interpreters.molten import MoltenFunctions, round_to, storage_dtype


def entry_function(module: ModuleOp, entry: str | None = None) -> FuncOp:
    """The function to run: `entry`, or the module's only function (of a
    graph split by size class, its first copy: the copies share the
    graph's signature, and `_specialized` keeps the one of the sizes)."""
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    if entry is None and len({graph_name(f) for f in funcs}) == 1:
        funcs = funcs[:1]
    if entry is not None:
        for func in funcs:
            if func.sym_name.data == entry:
                return func
        names = ", ".join(f.sym_name.data for f in funcs) or "none"
        raise GraphError(f"no function @{entry} in the module (it has: {names})")
    if len(funcs) != 1:
        names = ", ".join(f.sym_name.data for f in funcs) or "none"
        raise GraphError(
            f"the module has {len(funcs)} functions ({names}); name one with entry="
        )
    return funcs[0]


def _as_module(program: Any) -> ModuleOp:
    if isinstance(program, ModuleOp):
        return program
    if isinstance(program, str):
        from molten.context import parse_module

        return parse_module(program)
    if hasattr(program, "to_module"):
        return program.to_module()
    raise TypeError(
        "interpret() takes a DataflowGraph, a builtin.module or MLIR text, "
        f"not {type(program).__name__}"
    )


def _specialized(
    module: ModuleOp, func: FuncOp, inputs: tuple[Any, ...]
) -> tuple[ModuleOp, FuncOp]:
    """A copy of `module` with the named dimensions of `func`'s inputs at the
    sizes the arrays give (an InputError where they disagree), and its
    copy of `func`: numpy computes at any size, the types say which."""
    from molten.dims import bind
    from molten.passes.specialize_dims import specialize

    sizes = bind(
        (_input_name(func, i), dims_of(t), np.shape(value))
        for i, (t, value) in enumerate(
            zip(func.function_type.inputs.data, inputs, strict=True)
        )
    )
    copy = module.clone()
    specialize(copy, sizes)
    return copy, entry_function(copy, graph_name(func))


def _input_name(func: FuncOp, index: int) -> str:
    name = input_name(func, index)
    return f"input {index} ('{name}')" if name else f"input {index}"


def _prepare_input(func: FuncOp, index: int, value: Any, reference: bool):
    expected = func.function_type.inputs.data[index]
    what = _input_name(func, index)
    try:
        array = np.asarray(value)
    except ValueError as error:
        raise InputError(f"{what} is not an array: {error}") from None
    element = expected.element_type
    kind = element_kind(element)
    if array.dtype.kind not in _ARRAY_KINDS[kind]:
        hint = " (give a real-valued array)" if kind == FLOAT else ""
        raise InputError(
            f"{what} has dtype {array.dtype}; the graph expects "
            f"{dtype_name(element)}{hint}"
        )
    shape = tuple(expected.get_shape())
    if array.shape != shape:
        raise InputError(f"{what} has shape {array.shape}; the graph expects {shape}")
    if kind != FLOAT:
        low, high = integer_range(element)
        if array.size and (array.min() < low or array.max() > high):
            raise InputError(
                f"{what} holds values from {array.min()} to {array.max()}, out "
                f"of the range of {dtype_name(element)} [{low}, {high}]"
            )
        return array.astype(storage_dtype(element))
    if reference:
        return array.astype(np.float64)
    return round_to(array, element)


_ARRAY_KINDS = {FLOAT: "fiu", INTEGER: "iub", BOOLEAN: "b"}
"""The numpy dtype kinds an input of each kind of element takes: floats
take real numbers (a bool array for a float input is taken for a
mistake), integers integers or bools, bools only bools."""


def interpret(
    program: Any, *inputs: Any, reference: bool = False, entry: str | None = None
) -> np.ndarray | tuple[np.ndarray, ...]:
    """Runs a graph on numpy arrays and returns its outputs.

    `program` is a `DataflowGraph`, a `builtin.module` or MLIR text; `inputs`
    are array-likes of the graph's input shapes (converted to the inputs'
    element types). Native precision rounds every op's result to its element
    type (f16 as float16, f32 and bf16 as float32 arrays); `reference=True`
    computes everything in float64 without rounding. One output is returned
    as an array, several as a tuple.
    """
    module = _as_module(program)
    func = entry_function(module, entry)
    n_inputs = len(func.function_type.inputs.data)
    if len(inputs) != n_inputs:
        raise InputError(
            f"@{graph_name(func)} takes {n_inputs} inputs, got {len(inputs)}"
        )
    if any(is_dynamic(t) for t in func.function_type.inputs.data):
        module, func = _specialized(module, func, inputs)
    arrays = tuple(
        _prepare_input(func, i, value, reference) for i, value in enumerate(inputs)
    )
    # Imported here: xdsl.interpreters' package imports every interpreter
    # xDSL has (RISC-V's among them), a second of start-up for molten-opt.
    from xdsl.interpreters.func import FuncFunctions

    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(MoltenFunctions(reference))
    interpreter.register_implementations(KernelFunctions())
    try:
        results = interpreter.call_op(func.sym_name.data, arrays)
    except MoltenError as error:
        # The message names the op and its operands; xDSL's note would add
        # a dump of the whole module.
        error.__notes__ = []
        raise
    outputs = tuple(
        np.array(
            r,
            dtype=np.float64
            if reference and element_kind(t.element_type) == FLOAT
            else storage_dtype(t.element_type),
        )
        for r, t in zip(results, func.function_type.outputs.data, strict=True)
    )
    return outputs[0] if len(outputs) == 1 else outputs
