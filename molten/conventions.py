"""The conventions of Molten's graph functions: names and dtypes.

A graph is a `func.func` of molten ops whose inputs and outputs have names
(its `molten.name` attributes, identifiers safe in MLIR and C++) and whose
tensors have float32, float16, bfloat16, int64, int32, int8, uint8 or bool
elements, named so by the frameworks. Every layer reads them: the graph
API (`molten.ir`, which re-exports them), the diagnostics, the
interpreter, the lowering and the runtime. They live here,
below all of those, so that none of them imports the graph API.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerAttr,
    StringAttr,
    i8,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from molten.dialects.molten import BOOL, ELEMENT_TYPES, UI8
from molten.errors import DTypeError, GraphError

# --------------------------------------------------------------------------
# Names.
# --------------------------------------------------------------------------

NAME_ATTR = "molten.name"
"""Argument and result attribute of a graph's `func.func` holding a name that
an SSA name cannot carry: xDSL drops a trailing `_<digits>` from SSA names
(`%h_0` reads back as `h`), so inputs `h_0` and `h_1` keep their names here."""


def output_name(func: FuncOp, index: int) -> str | None:
    """The name a graph function gives its output `index` (its `molten.name`
    result attribute), if any."""
    if func.res_attrs is None:
        return None
    attr = func.res_attrs.data[index].data.get(NAME_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


UPDATES_ATTR = "molten.updates"
"""Result attribute of a graph's `func.func`: the position of the input that
the result updates in place (`{molten.updates = 1 : i64}`). The launcher
writes the result into that input's memory and takes no output pointer
for it; the value is the input's new contents, as torch's `copy_`,
`index_copy_` and a KV cache's update leave them."""


def graph_updates(func: FuncOp) -> dict[int, int]:
    """Output position -> the input position it updates in place (the
    results with `molten.updates`), checked: an integer naming an input of
    the result's type, each input updated by one result at most."""
    if func.res_attrs is None:
        return {}
    inputs = func.function_type.inputs.data
    outputs = func.function_type.outputs.data
    updates: dict[int, int] = {}
    for index, entry in enumerate(func.res_attrs.data):
        attr = entry.data.get(UPDATES_ATTR)
        if attr is None:
            continue
        where = f"func.func @{func.sym_name.data}: result {index}'s {UPDATES_ATTR}"
        if not isinstance(attr, IntegerAttr):
            raise GraphError(f"{where} is {attr}, not an input's position (0 : i64)")
        position = attr.value.data
        if not 0 <= position < len(inputs):
            raise GraphError(
                f"{where} is {position}; the function has {len(inputs)} inputs"
            )
        if index < len(outputs) and outputs[index] != inputs[position]:
            raise GraphError(
                f"{where}: the result {outputs[index]} must have the type of "
                f"input {position} ({inputs[position]}) it updates in place"
            )
        if position in updates.values():
            raise GraphError(
                f"{where}: input {position} is updated in place by two results"
            )
        updates[index] = position
    return updates


def input_name(func: FuncOp, index: int) -> str | None:
    """The name of a graph function's input `index`: its `molten.name`
    argument attribute if it has one, else its SSA name."""
    if func.arg_attrs is not None:
        attr = func.arg_attrs.data[index].data.get(NAME_ATTR)
        if isinstance(attr, StringAttr):
            return attr.data
    return func.body.block.args[index].name_hint


_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")


def sanitize_name(name: str) -> str:
    """`name` reduced to an identifier ([A-Za-z_][A-Za-z0-9_]*) safe in MLIR and C++."""
    cleaned = _NAME_CHARS.sub("_", str(name))
    if not cleaned or cleaned[0].isdigit():
        cleaned = "_" + cleaned
    return cleaned


# --------------------------------------------------------------------------
# Dtypes.
# --------------------------------------------------------------------------

DTYPES: dict[str, Attribute] = {
    "float32": Float32Type(),
    "float16": Float16Type(),
    "bfloat16": BFloat16Type(),
    "int64": i64,
    "int32": i32,
    "int8": i8,
    "uint8": UI8,
    "bool": BOOL,
}
_DTYPE_ALIASES = {
    "f32": "float32",
    "fp32": "float32",
    "float": "float32",
    "f16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bf16": "bfloat16",
    "i64": "int64",
    "long": "int64",
    "i32": "int32",
    "i8": "int8",
    "u8": "uint8",
    "ui8": "uint8",
    "i1": "bool",
    "bool_": "bool",
}


def element_type(dtype: Any) -> Attribute:
    """The molten element type for a dtype name, numpy dtype or torch dtype."""
    if isinstance(dtype, Attribute) and dtype in ELEMENT_TYPES:
        return dtype
    if dtype is bool:
        return BOOL
    key = str(dtype).removeprefix("torch.")
    if not isinstance(dtype, str):
        with contextlib.suppress(TypeError):
            key = np.dtype(dtype).name
    key = _DTYPE_ALIASES.get(key, key)
    if key not in DTYPES:
        raise DTypeError(
            f"unsupported dtype {dtype!r}: molten tensors are float32, float16, "
            "bfloat16, int64, int32, int8, uint8 or bool"
        )
    return DTYPES[key]


def is_dtype_name(value: str) -> bool:
    """A string that names a dtype, Molten's or not ("float64": then the op
    says Molten has no float64, which is more use than reading a name)."""
    key = value.removeprefix("torch.")
    if key in DTYPES or key in _DTYPE_ALIASES:
        return True
    try:
        return np.dtype(key).name == key  # not numpy's one-letter codes
    except TypeError:
        return False


def dtype_name(element: Attribute) -> str:
    """The dtype name ('float32', 'bfloat16', 'int64', 'bool', ...) of a molten
    element type."""
    for name, t in DTYPES.items():
        if t == element:
            return name
    raise DTypeError(f"{element} is not a molten element type")


MAX_FILE_STEM = 100
"""Characters of a file name made from a graph's name (file systems take
255 bytes a name; the suffixes and a directory's limits want room)."""


def file_stem(name: str) -> str:
    """The stem of the files saved for graph `name`: the name itself, or
    where it is longer than MAX_FILE_STEM its start and a hash of it all
    (the C symbols inside keep the whole name)."""
    if len(name) <= MAX_FILE_STEM:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    return f"{name[: MAX_FILE_STEM - 17]}_{digest}"
