"""The graph API: write the math, get a `func.func` of molten ops.

```python
from molten.ir import DataflowGraph, TensorShape

g = DataflowGraph("fused_rmsnorm")
x = g.add_input("x", TensorShape([2048, 5120]))      # float32 unless dtype= says
w = g.add_input("w", TensorShape([5120]))
out = g.rms_norm(x, w, eps=1e-6, name="norm")
g.add_output(out)
print(g.to_mlir())
```

Builder methods read like torch's: tensor operands first, then the op's
options in torch's order (`softmax(x, -1)`, `rms_norm(x, w, 1e-5)`,
`reduce_sum(x, 1, True)`), and the result's name as `name="norm"` or, as
Molten's first API wrote it, as the last positional argument
(`rms_norm(x, w, "norm")`: a string where no string can go; see
`molten.positional_names`). Options
are checked at the call: a wrong type or value raises a `GraphError` naming
the op and the option. Every method checks shapes and element types
as it builds (through the op's own verifier rule) and raises a `ShapeError` or
`DTypeError` naming the op, the operands and their shapes. Tensors also
support `+ - * / ** @` and unary `-`, with Python numbers as scalars.
`Tensor` and `TensorShape` live in `molten.tensor`, and are this module's
names too.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any, Literal

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.printer import Printer

# The graph conventions are the graph API's too (`molten.ir.DTYPES`,
# `molten.ir.sanitize_name`): re-exported from here.
from molten.conventions import DTYPES as DTYPES
from molten.conventions import (
    NAME_ATTR,
    UPDATES_ATTR,
    dtype_name,
    element_type,
    graph_updates,
    input_name,
    is_dtype_name,
    output_name,
    sanitize_name,
)
from molten.dialects import molten
from molten.dialects.molten import FLOAT, INTEGER, element_kind
from molten.errors import DTypeError, GraphError, MoltenError, ShapeError
from molten.positional_names import StringOption, accepts_positional_names
from molten.promotion import default_element, number_category, result_element
from molten.tensor import Operand, Tensor, TensorShape


def name_value(value: SSAValue, name: str) -> str:
    """Gives `value` the SSA name nearest `name` (sanitized) and returns the
    sanitized name. The SSA name may lose a trailing `_<digits>`; whoever needs
    the exact name keeps the returned one."""
    clean = sanitize_name(name)
    value.name_hint = clean
    if not value.name_hint:  # "_1" has nothing left before its suffix
        value.name_hint = None
    return clean


DTypeLike = Annotated[
    Any,
    StringOption(f"a dtype name: {', '.join(DTYPES)}, ...", is_dtype_name),
]
"""A dtype: its name, a numpy or torch dtype, or a molten element type."""


def _checked_name(op_name: str, name: Any) -> str | None:
    if name is None or isinstance(name, str):
        return name
    raise GraphError(
        f"{op_name}: name must be a string, got {name!r} ({type(name).__name__})"
    )


def _checked_real(op_name: str, what: str, value: Any) -> float:
    """A real number (not a bool, not a string)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        raise GraphError(
            f"{op_name}: {what} must be a real number, got {value!r} "
            f"({type(value).__name__})"
        )
    return float(value)  # a value out of the op's range is its verifier's


INT64_RANGE = (-(2**63), 2**63 - 1)
"""What an op's integer option holds (an i64 attribute)."""


def _checked_int(op_name: str, what: str, value: Any) -> int:
    """An integer (an int or numpy integer; not a bool, float or string) of
    int64's range: the attribute that keeps it is an i64."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise GraphError(
            f"{op_name}: {what} must be an integer, got {value!r} "
            f"({type(value).__name__})"
        )
    least, greatest = INT64_RANGE
    if not least <= int(value) <= greatest:
        raise GraphError(
            f"{op_name}: {what} {int(value)} is outside int64's range "
            f"[{least}, {greatest}]"
        )
    return int(value)


def _checked_ints(op_name: str, what: str, values: Any) -> list[int]:
    """A sequence of integers (a list, tuple, TensorShape or 1-D array)."""
    if isinstance(values, str | bytes) or not isinstance(
        values, Sequence | np.ndarray | TensorShape
    ):
        raise GraphError(
            f"{op_name}: {what} must be a sequence of integers, got {values!r} "
            f"({type(values).__name__})"
        )
    return [_checked_int(op_name, f"{what} entry {i}", v) for i, v in enumerate(values)]


def _checked_dims(op_name: str, what: str, values: Any) -> list[molten.Dim]:
    """A sequence of integers and dimension names (identifiers: "T")."""
    if isinstance(values, str | bytes) or not isinstance(
        values, Sequence | np.ndarray | TensorShape
    ):
        raise GraphError(
            f"{op_name}: {what} must be a sequence of sizes and dimension names, "
            f"got {values!r} ({type(values).__name__})"
        )
    return [
        v if molten.is_dim_name(v) else _checked_int(op_name, f"{what} entry {i}", v)
        for i, v in enumerate(values)
    ]


def _is_float(x: Tensor) -> bool:
    return element_kind(x.type.element_type) == FLOAT


def _checked_flag(op_name: str, what: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise GraphError(
            f"{op_name}: {what} must be True or False, got {value!r} "
            f"({type(value).__name__})"
        )
    return bool(value)


@accepts_positional_names
class DataflowGraph:
    """A dataflow graph of molten ops, built op by op; it becomes one `func.func`."""

    def __init__(self, name: str):
        self.name = sanitize_name(name)
        self._block = Block()
        self._outputs: list[tuple[SSAValue, str]] = []
        self._names: dict[SSAValue, str] = {}
        """The exact names of inputs and named values (see `name_value`)."""
        self._updates: dict[SSAValue, SSAValue] = {}
        """Input -> the value it holds after a call (`copy_`, `index_copy_`)."""
        self._stale: dict[SSAValue, str] = {}
        """Values of an input before its update in place -> what updated it."""

    # ----------------------------------------------------------------------
    # Inputs, outputs, IR.
    # ----------------------------------------------------------------------

    @property
    def inputs(self) -> list[Tensor]:
        return [Tensor(self, arg) for arg in self._block.args]

    @property
    def outputs(self) -> list[Tensor]:
        return [Tensor(self, value) for value, _ in self._outputs]

    @property
    def output_names(self) -> list[str]:
        return [name for _, name in self._outputs]

    def _names_in_use(self) -> set[str]:
        return {self._names[a] for a in self._block.args} | {
            name for _, name in self._outputs
        }

    def add_input(
        self, name: str, shape: TensorShape | Sequence[int], dtype: Any = "float32"
    ) -> Tensor:
        """A new graph input of `shape` and `dtype` (float32, float16, bfloat16)."""
        if not isinstance(name, str):
            raise GraphError(
                f"add_input: the name must be a string, got {name!r} "
                f"({type(name).__name__})"
            )
        clean = sanitize_name(name)
        try:
            shape = shape if isinstance(shape, TensorShape) else TensorShape(shape)
        except ShapeError as error:
            raise ShapeError(
                f"add_input: input '{clean}' of graph '{self.name}': {error}; "
                "Molten tensors have positive sizes or named dimensions"
            ) from None
        if clean in self._names_in_use():
            raise GraphError(
                f"graph '{self.name}' already has an input or output named '{clean}'"
            )
        tensor_type = molten.tensor_type(shape.dims, element_type(dtype))
        molten.check_tensor_size("add_input", f"input '{clean}'", tensor_type)
        arg = self._block.insert_arg(tensor_type, len(self._block.args))
        self._names[arg] = name_value(arg, clean)
        return Tensor(self, arg)

    def add_output(self, tensor: Tensor, name: str | None = None) -> None:
        """Marks `tensor` as a graph output, named `name` (default: its own name)."""
        self._check_owned(tensor, "add_output")
        name = _checked_name("add_output", name)
        if name is not None:
            clean = sanitize_name(name)
            if clean in self._names_in_use():
                raise GraphError(
                    f"graph '{self.name}' already has an input or output named "
                    f"'{clean}'"
                )
        else:
            base = tensor.name or f"out{len(self._outputs)}"
            clean, suffix = base, 1
            while clean in self._names_in_use():
                clean, suffix = f"{base}_{suffix}", suffix + 1
        self._outputs.append((tensor.value, clean))

    def to_module(self) -> ModuleOp:
        """A fresh `builtin.module` holding the graph as one `func.func`: its
        outputs, then a result per input updated in place (`molten.updates`,
        named as the input)."""
        if not self._outputs and not self._updates:
            raise GraphError(f"graph '{self.name}' has no outputs; call add_output")
        returned = list(self._outputs) + [
            (self._updates[arg], self._names[arg])
            for arg in self._block.args
            if arg in self._updates
        ]
        updated = [arg.index for arg in self._block.args if arg in self._updates]
        inputs = [arg.type for arg in self._block.args]
        outputs = [value.type for value, _ in returned]
        body = Region(Block(arg_types=inputs))
        mapping: dict[SSAValue, SSAValue] = {}
        # An input's name goes in an attribute only where its SSA name cannot
        # carry it: a suffix was dropped, or the printer will add one because
        # an earlier input has the same SSA name. The usual signature stays plain.
        printed: set[str | None] = set()
        attrs = []
        for old, new in zip(self._block.args, body.block.args, strict=True):
            new.name_hint = old.name_hint
            mapping[old] = new
            exact = self._names[old] == old.name_hint and old.name_hint not in printed
            attrs.append(
                DictionaryAttr(
                    {} if exact else {NAME_ATTR: StringAttr(self._names[old])}
                )
            )
            printed.add(old.name_hint)
        arg_attrs = ArrayAttr(attrs)
        for op in self._block.ops:
            body.block.add_op(op.clone(mapping))
        body.block.add_op(ReturnOp(*(mapping[v] for v, _ in returned)))
        res_attrs = ArrayAttr(
            [DictionaryAttr({NAME_ATTR: StringAttr(name)}) for _, name in self._outputs]
            + [
                DictionaryAttr(
                    {
                        NAME_ATTR: StringAttr(self._names[self._block.args[i]]),
                        UPDATES_ATTR: IntegerAttr(i, i64),
                    }
                )
                for i in updated
            ]
        )
        func = FuncOp(
            self.name,
            (inputs, outputs),
            body,
            arg_attrs=arg_attrs if any(d.data for d in arg_attrs.data) else None,
            res_attrs=res_attrs,
        )
        return ModuleOp([func])

    def to_mlir(self, generic: bool = False) -> str:
        """The graph as MLIR text (custom format, or generic with `generic=True`)."""
        from io import StringIO

        stream = StringIO()
        Printer(stream=stream, print_generic_format=generic).print_op(self.to_module())
        return stream.getvalue() + "\n"

    def __str__(self) -> str:
        return self.to_mlir()

    def __repr__(self) -> str:
        n_ops = len(list(self._block.ops))
        return (
            f"DataflowGraph('{self.name}', {len(self._block.args)} inputs, "
            f"{n_ops} ops, {len(self._outputs)} outputs)"
        )

    @classmethod
    def trace(
        cls,
        fn: Callable[..., Any],
        inputs: Sequence[tuple[str, TensorShape | Sequence[int], Any]],
        name: str | None = None,
        **constants: Any,
    ) -> DataflowGraph:
        """The graph of `fn`, a Python function of graph ops (`molten.ops`,
        operators), called on new inputs given as (name, shape, dtype) and
        on the keyword `constants`; what it returns (a tensor or a tuple of
        them) are the outputs. The graph is named `name` or after `fn`."""
        graph = cls(name or fn.__name__)
        tensors = [graph.add_input(*spec) for spec in inputs]
        result = fn(*tensors, **constants)
        results = result if isinstance(result, tuple | list) else (result,)
        if not results or not all(isinstance(r, Tensor) for r in results):
            raise GraphError(
                f"{graph.name}: the traced function must return a graph tensor or a "
                f"tuple of them, not {type(result).__name__}"
            )
        for r in results:
            graph.add_output(r)
        return graph

    @property
    def dims(self) -> tuple[str, ...]:
        """The names of the graph's dynamic dimensions, in order of first use
        by its inputs."""
        names: dict[str, None] = {}
        for arg in self._block.args:
            names.update(dict.fromkeys(molten.dim_names(arg.type)))
        return tuple(names)

    def specialize(self, **sizes: int) -> DataflowGraph:
        """A copy of this graph with its named dimensions at the given sizes
        (`g.specialize(T=17)`); names not given stay dynamic. A size an op's
        rule refuses raises its error."""
        from molten.passes.specialize_dims import specialize

        for dim, size in sizes.items():
            if isinstance(size, bool) or not isinstance(size, int | np.integer):
                raise GraphError(
                    f"graph '{self.name}': the size of {dim} must be an integer, "
                    f"got {size!r} ({type(size).__name__})"
                )
        unknown = sorted(set(sizes) - set(self.dims))
        if unknown:
            raise GraphError(
                f"graph '{self.name}' has no dimension named {', '.join(unknown)} "
                f"(its dimensions: {', '.join(self.dims) or 'none'})"
            )
        module = self.to_module()
        try:
            specialize(module, sizes)
        except Exception as error:  # a rule broken at these sizes, or a bad size
            raise ShapeError(f"graph '{self.name}' at {sizes}: {error}") from None
        return DataflowGraph.from_mlir(str(module), name=f"{self.name}.specialize")

    @classmethod
    def from_mlir(
        cls, text: str, entry: str | None = None, name: str = "<string>"
    ) -> DataflowGraph:
        """A graph from MLIR text holding a `func.func` of molten ops; `name`
        (a file name) is what parse errors point at."""
        from molten.context import parse_module
        from molten.interpreters import entry_function

        func = entry_function(parse_module(text, name), entry)
        if not func.function_type.outputs.data:
            from xdsl.utils.exceptions import VerifyException

            from molten.diagnostics import locate_op

            nothing = VerifyException(
                f"func.func @{func.sym_name.data} returns nothing; a graph must "
                "return at least one tensor for Molten to compute"
            )
            raise GraphError(locate_op(func, nothing, text, 0))
        graph = cls(func.sym_name.data)
        mapping: dict[SSAValue, SSAValue] = {}
        for i, arg in enumerate(func.body.block.args):
            name = input_name(func, i) or f"arg{i}"
            mapping[arg] = graph.add_input(
                name, molten.dims_of(arg.type), arg.type.element_type
            ).value
        names = [
            output_name(func, i) for i in range(len(func.function_type.outputs.data))
        ]
        try:
            updates = graph_updates(func)
        except GraphError as error:
            from molten.diagnostics import locate_op

            raise GraphError(locate_op(func, error, text, 0)) from None
        for op in func.body.block.ops:
            if isinstance(op, ReturnOp):
                for i, (value, name) in enumerate(
                    zip(op.arguments, names, strict=True)
                ):
                    if i in updates:
                        arg = graph._block.args[updates[i]]
                        graph._updates[arg] = mapping[value]
                    else:
                        graph.add_output(Tensor(graph, mapping[value]), name)
                break
            if not isinstance(op, molten.MoltenOp):
                raise GraphError(
                    f"@{func.sym_name.data} holds {op.name}; a DataflowGraph holds "
                    "molten ops only"
                )
            graph._block.add_op(op.clone(mapping))
        return graph

    # ----------------------------------------------------------------------
    # Building ops.
    # ----------------------------------------------------------------------

    def _check_owned(self, tensor: Any, where: str) -> None:
        if not isinstance(tensor, Tensor):
            raise GraphError(
                f"{where}: expected a Tensor of graph '{self.name}', got "
                f"{type(tensor).__name__}"
            )
        if tensor.graph is not self:
            raise GraphError(
                f"{where}: tensor {tensor} belongs to graph '{tensor.graph.name}', "
                f"not '{self.name}'"
            )
        stale = self._stale.get(tensor.value)
        if stale is not None:
            raise GraphError(
                f"{where}: tensor {tensor} holds the values from before {stale} "
                "updated it in place; use the tensor that call returned (it has "
                "the new values)"
            )

    @contextlib.contextmanager
    def _building(self, op_name: str, operands: Sequence[Any]) -> Iterator[None]:
        """Gives any MoltenError raised inside the op's name and operands, once."""
        try:
            yield
        except MoltenError as error:
            if getattr(error, "graph_context", False):
                raise
            message = str(error)
            if not message.startswith(op_name):
                message = f"{op_name}: {message}"
            listing = ", ".join(
                f"%{t.name or '?'}: {t.type}" if isinstance(t, Tensor) else repr(t)
                for t in operands
            )
            located = type(error)(
                f"{message}\n  in graph '{self.name}': {op_name}({listing})"
            )
            located.graph_context = True
            raise located from None

    def _emit(
        self,
        op_type: type[molten.MoltenOp],
        operands: Sequence[Tensor],
        name: str | None,
        properties: dict[str, Attribute] | None = None,
        result_type: TensorType | None = None,
        given: Sequence[Any] | None = None,
    ) -> Tensor:
        """`op_type` on `operands`; an error lists the operands as `given`
        (before promotion), where they were promoted."""
        name = _checked_name(op_type.name, name)
        for t in operands:
            self._check_owned(t, op_type.name)
        with self._building(op_type.name, operands if given is None else given):
            op = op_type.with_inferred_type(
                [t.value for t in operands], properties, result_type
            )
        if name is not None:
            self._names[op.results[0]] = name_value(op.results[0], name)
        self._block.add_op(op)
        return Tensor(self, op.results[0])

    @contextlib.contextmanager
    def _all_or_nothing(self) -> Iterator[None]:
        """Ops added inside (casts of operands, then the op) stay only if
        none fails: a refused op leaves the graph as it was."""
        mark = self._block.last_op
        try:
            yield
        except MoltenError:
            while self._block.last_op is not mark:
                op = self._block.last_op
                assert op is not None
                for result in op.results:
                    self._names.pop(result, None)
                op.detach()
                op.erase()
            raise

    def _as(self, operand: Operand, element: Attribute) -> Tensor:
        """`operand` as a tensor of `element`: a tensor cast where it has
        another type, a number a constant of it."""
        if isinstance(operand, Tensor):
            if operand.type.element_type == element:
                return operand
            return self.cast(operand, element)
        return self.constant(operand, dtype=element)

    def _promoted(self, op_name: str, operands: Sequence[Operand]) -> list[Tensor]:
        """The operands in the type they compute in, as torch promotes them
        (`molten.promotion`)."""
        tensors = [t for t in operands if isinstance(t, Tensor)]
        if not tensors:
            raise GraphError(f"{op_name}: at least one operand must be a Tensor")
        for t in tensors:
            self._check_owned(t, op_name)
        with self._building(op_name, list(operands)):
            element = result_element(operands)
        return [self._as(o, element) for o in operands]

    def _binary(
        self,
        op_type: type[molten.MoltenOp],
        lhs: Operand,
        rhs: Operand,
        name,
        *,
        floats: bool = False,
    ) -> Tensor:
        """`op_type` on the promoted operands; `floats`: an integer or bool
        result of promotion is float32 instead (true division)."""
        with self._all_or_nothing():
            operands = self._promoted(op_type.name, [lhs, rhs])
            if floats and element_kind(operands[0].type.element_type) != FLOAT:
                operands = [self.cast(t, "float32") for t in operands]
            return self._emit(op_type, operands, name, given=[lhs, rhs])

    def _float_unary(self, op_type, x: Tensor, name) -> Tensor:
        """`op_type` on `x`, an integer or bool `x` as float32 (as torch's
        math functions take them)."""
        self._check_owned(x, op_type.name)
        if isinstance(x, Tensor) and element_kind(x.type.element_type) != FLOAT:
            x = self.cast(x, "float32")
        return self._emit(op_type, [x], name)

    def _as_bool(self, x: Operand) -> Tensor | bool:
        """Whether `x` is nonzero: a bool tensor or number as it is."""
        if not isinstance(x, Tensor):
            return bool(x)
        if x.type.element_type == molten.BOOL:
            return x
        return self.cast(x, "bool")

    def add(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs + rhs, broadcasting like numpy, promoting like torch."""
        return self._binary(molten.AddOp, lhs, rhs, name)

    def sub(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs - rhs, broadcasting like numpy."""
        return self._binary(molten.SubOp, lhs, rhs, name)

    def mul(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs * rhs, broadcasting like numpy."""
        return self._binary(molten.MulOp, lhs, rhs, name)

    def div(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs / rhs, true division (integers divide as float32, as torch's)."""
        return self._binary(molten.DivOp, lhs, rhs, name, floats=True)

    def max(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """Elementwise maximum (torch.maximum), broadcasting like numpy."""
        return self._binary(molten.MaxOp, lhs, rhs, name)

    def min(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """Elementwise minimum (torch.minimum), broadcasting like numpy."""
        return self._binary(molten.MinOp, lhs, rhs, name)

    def pow(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs ** rhs, broadcasting like numpy (floats)."""
        return self._binary(molten.PowOp, lhs, rhs, name)

    def floor_divide(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """lhs // rhs, rounded toward -inf (an integer division by 0 is -1)."""
        return self._binary(molten.FloorDivideOp, lhs, rhs, name)

    def remainder(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """lhs % rhs with the sign of rhs (Python's %, torch.remainder)."""
        return self._binary(molten.RemainderOp, lhs, rhs, name)

    def fmod(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """The remainder with the sign of lhs (C's fmod, torch.fmod)."""
        return self._binary(molten.FmodOp, lhs, rhs, name)

    def atan2(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """The angle of (rhs, lhs), in radians."""
        return self._binary(molten.Atan2Op, lhs, rhs, name, floats=True)

    def bitwise_and(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """lhs & rhs, on integers and bools."""
        return self._binary(molten.BitwiseAndOp, lhs, rhs, name)

    def bitwise_or(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """lhs | rhs, on integers and bools."""
        return self._binary(molten.BitwiseOrOp, lhs, rhs, name)

    def bitwise_xor(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """lhs ^ rhs, on integers and bools."""
        return self._binary(molten.BitwiseXorOp, lhs, rhs, name)

    def shift_left(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """lhs << rhs on integers (torch.bitwise_left_shift; 0 past the width)."""
        return self._binary(molten.ShiftLeftOp, lhs, rhs, name)

    def shift_right(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """lhs >> rhs on integers, arithmetic for signed ones."""
        return self._binary(molten.ShiftRightOp, lhs, rhs, name)

    def _logical(self, op_type, lhs: Operand, rhs: Operand, name) -> Tensor:
        with self._all_or_nothing():
            lhs, rhs = self._as_bool(lhs), self._as_bool(rhs)
            return self._binary(op_type, lhs, rhs, name)

    def logical_and(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """Whether both are nonzero (any dtypes; a bool result)."""
        return self._logical(molten.LogicalAndOp, lhs, rhs, name)

    def logical_or(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """Whether either is nonzero."""
        return self._logical(molten.LogicalOrOp, lhs, rhs, name)

    def logical_xor(
        self, lhs: Operand, rhs: Operand, *, name: str | None = None
    ) -> Tensor:
        """Whether exactly one is nonzero."""
        return self._logical(molten.LogicalXorOp, lhs, rhs, name)

    def eq(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs == rhs, a bool tensor (a NaN equals nothing)."""
        return self._binary(molten.EqOp, lhs, rhs, name)

    def ne(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs != rhs, a bool tensor."""
        return self._binary(molten.NeOp, lhs, rhs, name)

    def lt(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs < rhs, a bool tensor."""
        return self._binary(molten.LtOp, lhs, rhs, name)

    def le(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs <= rhs, a bool tensor."""
        return self._binary(molten.LeOp, lhs, rhs, name)

    def gt(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs > rhs, a bool tensor."""
        return self._binary(molten.GtOp, lhs, rhs, name)

    def ge(self, lhs: Operand, rhs: Operand, *, name: str | None = None) -> Tensor:
        """lhs >= rhs, a bool tensor."""
        return self._binary(molten.GeOp, lhs, rhs, name)

    def neg(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._emit(molten.NegOp, [x], name)

    def abs(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._emit(molten.AbsOp, [x], name)

    def sign(self, x: Tensor, *, name: str | None = None) -> Tensor:
        """-1, 0 or 1 (0 at a NaN, as torch.sign)."""
        return self._emit(molten.SignOp, [x], name)

    def square(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._emit(molten.SquareOp, [x], name)

    def relu(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._emit(molten.ReluOp, [x], name)

    def exp(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.ExpOp, x, name)

    def log(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.LogOp, x, name)

    def sqrt(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.SqrtOp, x, name)

    def rsqrt(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.RsqrtOp, x, name)

    def reciprocal(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.ReciprocalOp, x, name)

    def tanh(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.TanhOp, x, name)

    def sigmoid(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.SigmoidOp, x, name)

    def silu(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.SiluOp, x, name)

    def gelu(
        self,
        x: Tensor,
        approximate: Literal["none", "tanh"] = "none",
        *,
        name: str | None = None,
    ) -> Tensor:
        """GELU: exact erf form, or approximate="tanh" (as torch's gelu)."""
        if not isinstance(approximate, str):
            raise GraphError(
                f"molten.gelu: approximate must be 'none' or 'tanh', got "
                f"{approximate!r} ({type(approximate).__name__})"
            )
        props = {"approximate": StringAttr(approximate)}
        if isinstance(x, Tensor) and element_kind(x.type.element_type) != FLOAT:
            x = self.cast(x, "float32")
        return self._emit(molten.GeluOp, [x], name, props)

    def _rounding(self, op_type, x: Tensor, name) -> Tensor:
        # An integer is its own floor, ceil, round and trunc (as in torch).
        self._check_owned(x, op_type.name)
        if isinstance(x, Tensor) and element_kind(x.type.element_type) == INTEGER:
            return x
        return self._float_unary(op_type, x, name)

    def floor(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._rounding(molten.FloorOp, x, name)

    def ceil(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._rounding(molten.CeilOp, x, name)

    def round(self, x: Tensor, *, name: str | None = None) -> Tensor:
        """The nearest integer, halves to even (torch.round)."""
        return self._rounding(molten.RoundOp, x, name)

    def trunc(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._rounding(molten.TruncOp, x, name)

    def bitwise_not(self, x: Tensor, *, name: str | None = None) -> Tensor:
        """~x on integers; on a bool, logical not."""
        return self._emit(molten.BitwiseNotOp, [x], name)

    def logical_not(self, x: Tensor, *, name: str | None = None) -> Tensor:
        """Whether x is zero (any dtype; a bool result)."""
        self._check_owned(x, molten.LogicalNotOp.name)
        return self._emit(molten.LogicalNotOp, [self._as_bool(x)], name)

    def isnan(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._predicate(molten.IsNanOp, x, name)

    def isinf(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._predicate(molten.IsInfOp, x, name)

    def _predicate(self, op_type, x: Tensor, name) -> Tensor:
        self._check_owned(x, op_type.name)
        with self._building(op_type.name, [x]):
            target = molten.tensor_type(molten.dims_of(x.type), molten.BOOL)
        if element_kind(x.type.element_type) != FLOAT:
            x = self.cast(x, "float32")  # an integer is never NaN nor inf
        return self._emit(op_type, [x], name, result_type=target)

    def where(
        self,
        condition: Tensor,
        on_true: Operand,
        on_false: Operand,
        *,
        name: str | None = None,
    ) -> Tensor:
        """on_true where `condition` (a bool tensor) holds, else on_false,
        the three broadcast together and the two values promoted."""
        self._check_owned(condition, molten.WhereOp.name)
        with self._all_or_nothing():
            numbers = [on_true, on_false]
            if all(isinstance(v, bool | int | float | np.number) for v in numbers):
                # Two numbers: the dtype torch gives them (float32, int64, bool).
                kind = max(number_category(v) for v in numbers)
                element = default_element([False, 0, 0.0][kind])
                on_true = self.constant(on_true, dtype=dtype_name(element))
            values = self._promoted(molten.WhereOp.name, [on_true, on_false])
            given = [condition, on_true, on_false]
            return self._emit(molten.WhereOp, [condition, *values], name, given=given)

    def _indexing(self, op_type, x: Tensor, indices: Tensor, axis: int, name):
        axis = _checked_int(op_type.name, "axis", axis)
        self._check_owned(x, op_type.name)
        with self._building(op_type.name, [x, indices, axis]):
            rank = len(x.type.get_shape())
            axis = molten.normalize_axis(op_type.name, axis, rank)
        props = {"axis": IntegerAttr(axis, i64)}
        return self._emit(op_type, [x, indices], name, props)

    def take(
        self, x: Tensor, indices: Tensor, axis: int = 0, *, name: str | None = None
    ) -> Tensor:
        """x's slices along `axis` at each of `indices` (int64 or int32): the
        shape is x's before `axis`, indices', then x's after (numpy.take)."""
        return self._indexing(molten.TakeOp, x, indices, axis, name)

    def index_select(
        self, x: Tensor, axis: int, indices: Tensor, *, name: str | None = None
    ) -> Tensor:
        """torch.index_select: x's slices along `axis` at 1-D `indices`."""
        if isinstance(indices, Tensor) and indices.shape.rank != 1:
            raise GraphError(
                f"molten.index_select: indices {indices.type} must be 1-D "
                "(g.take takes any shape)"
            )
        return self.take(x, indices, axis, name=name)

    def embedding(
        self, ids: Tensor, weight: Tensor, *, name: str | None = None
    ) -> Tensor:
        """torch.nn.functional.embedding: the rows of `weight` (a table of
        shape [vocabulary, width]) at `ids`, of shape ids' + [width]."""
        if isinstance(weight, Tensor) and weight.shape.rank != 2:
            raise GraphError(
                f"molten.embedding: weight {weight.type} must be a 2-D table "
                "[vocabulary, width]"
            )
        return self.take(weight, ids, 0, name=name)

    def gather(
        self, x: Tensor, axis: int, indices: Tensor, *, name: str | None = None
    ) -> Tensor:
        """torch.gather: x along `axis` at `indices` (x's rank, the result's
        shape): result[i][j] = x[i][indices[i][j]] for axis 1."""
        return self._indexing(molten.GatherOp, x, indices, axis, name)

    def scatter(
        self,
        x: Tensor,
        axis: int,
        indices: Tensor,
        source: Tensor | float,
        *,
        accumulate: bool = False,
        name: str | None = None,
    ) -> Tensor:
        """torch.scatter: x with `source` (a tensor of indices' shape, or a
        number) written along `axis` at `indices` (x's rank):
        result[i][indices[i][j]] = source[i][j] for axis 1; added with
        `accumulate` (scatter_add). Of two writes to one element the last
        wins. Functional: x itself is not changed."""
        op_name = molten.ScatterOp.name
        axis = _checked_int(op_name, "axis", axis)
        accumulate = _checked_flag(op_name, "accumulate", accumulate)
        self._check_owned(x, op_name)
        with self._building(op_name, [x, indices, axis]):
            rank = len(x.type.get_shape())
            axis = molten.normalize_axis(op_name, axis, rank)
        if not isinstance(source, Tensor) and isinstance(indices, Tensor):
            source = self.full(indices.shape, source, x.dtype)
        props: dict[str, Attribute] = {"axis": IntegerAttr(axis, i64)}
        if accumulate:
            props["accumulate"] = UnitAttr()
        return self._emit(molten.ScatterOp, [x, indices, source], name, props)

    def scatter_add(
        self, x: Tensor, axis: int, indices: Tensor, source: Tensor, *, name=None
    ) -> Tensor:
        """torch.scatter_add: `source` added into x along `axis` at `indices`
        (every write counts, duplicates too)."""
        return self.scatter(x, axis, indices, source, accumulate=True, name=name)

    def index_copy(
        self, x: Tensor, axis: int, index: Tensor, source: Tensor, *, name=None
    ) -> Tensor:
        """torch.index_copy: x with its slices along `axis` at the 1-D `index`
        replaced by those of `source` (x's shape but `len(index)` along
        `axis`), as a KV cache takes a step's keys."""
        return self._index_update(x, axis, index, source, False, name)

    def index_add(
        self,
        x: Tensor,
        axis: int,
        index: Tensor,
        source: Tensor,
        *,
        alpha: float = 1.0,
        name: str | None = None,
    ) -> Tensor:
        """torch.index_add: `alpha * source`'s slices added to x's along
        `axis` at the 1-D `index`."""
        if alpha != 1:
            source = self.mul(source, alpha)
        return self._index_update(x, axis, index, source, True, name)

    def _index_update(self, x, axis, index, source, accumulate, name) -> Tensor:
        op_name = "molten.index_copy" if not accumulate else "molten.index_add"
        self._check_owned(x, op_name)
        if not isinstance(index, Tensor) or index.shape.rank != 1:
            raise GraphError(f"{op_name}: index must be a 1-D tensor of positions")
        if not isinstance(source, Tensor) or source.shape.rank != x.shape.rank:
            raise GraphError(f"{op_name}: source must be a tensor of x's rank")
        axis = molten.normalize_axis(
            op_name, _checked_int(op_name, "axis", axis), x.shape.rank
        )
        # The 1-D index along `axis`, the same for every other position.
        ones = [1] * x.shape.rank
        ones[axis] = index.shape[0]
        spread = self.broadcast_to(self.reshape(index, ones), list(source.shape.dims))
        return self.scatter(x, axis, spread, source, accumulate=accumulate, name=name)

    # -- in place: graph inputs whose memory a call updates ---------------------

    def copy_(self, x: Tensor, value: Operand) -> Tensor:
        """torch's `x.copy_(value)` on a graph input: after a call, the input's
        memory holds `value` (broadcast and cast to x's shape and dtype),
        written there by the compiled graph, which takes no output for it and
        does not return it (the interpreter, functional, returns it after
        the graph's outputs). Returns `value` as x's new tensor; x itself may
        not be used after (it would be the old values)."""
        return self._update(x, value, "copy_")

    def index_copy_(
        self, x: Tensor, axis: int, index: Tensor, source: Tensor, *, name=None
    ) -> Tensor:
        """torch's `x.index_copy_(axis, index, source)` on a graph input (a KV
        cache taking a step's keys): `index_copy`, written into x's memory by
        one scatter kernel, nothing else copied."""
        return self._update(
            x, lambda: self.index_copy(x, axis, index, source, name=name), "index_copy_"
        )

    def index_add_(
        self,
        x: Tensor,
        axis: int,
        index: Tensor,
        source: Tensor,
        *,
        alpha: float = 1.0,
        name: str | None = None,
    ) -> Tensor:
        """torch's `x.index_add_(axis, index, source, alpha=alpha)` on a graph
        input, added into its memory."""
        return self._update(
            x,
            lambda: self.index_add(x, axis, index, source, alpha=alpha, name=name),
            "index_add_",
        )

    def scatter_(
        self,
        x: Tensor,
        axis: int,
        indices: Tensor,
        source: Tensor | float,
        *,
        accumulate: bool = False,
        name: str | None = None,
    ) -> Tensor:
        """torch's `x.scatter_(axis, indices, source)` on a graph input
        (`accumulate`: scatter_add_), written into its memory."""
        return self._update(
            x,
            lambda: self.scatter(
                x, axis, indices, source, accumulate=accumulate, name=name
            ),
            "scatter_",
        )

    def scatter_add_(
        self, x: Tensor, axis: int, indices: Tensor, source: Tensor, *, name=None
    ) -> Tensor:
        """torch's `x.scatter_add_(axis, indices, source)` on a graph input."""
        return self.scatter_(x, axis, indices, source, accumulate=True, name=name)

    def _updated_input(self, x: Any, how: str) -> SSAValue:
        """The graph input that x is (or is the latest update of)."""
        where = f"molten.{how}"
        self._check_owned(x, where)
        current = {v: arg for arg, v in self._updates.items()}
        arg = x.value if x.value in self._block.args else current.get(x.value)
        if arg is None:
            raise GraphError(
                f"{where}: {x} is not a graph input; only an input's memory can be "
                f"updated in place (for a computed tensor use the functional "
                f"{how.rstrip('_')})"
            )
        return arg

    def _update(
        self, x: Tensor, value: Operand | Callable[[], Tensor], how: str
    ) -> Tensor:
        """Records that the input x holds `value` (made by calling it, once x
        is known to be an input) after a call (x is the input or its latest
        update), and returns value as its tensor."""
        where = f"molten.{how}"
        arg = self._updated_input(x, how)
        if callable(value):
            value = value()
        if not isinstance(value, Tensor):
            value = self.full(x.shape, value, x.dtype)
        self._check_owned(value, where)
        if value.type.element_type != x.type.element_type:
            value = self.cast(value, x.dtype)
        if list(value.shape.dims) != list(x.shape.dims):
            value = self.broadcast_to(value, list(x.shape.dims))
        self._stale[x.value] = f"{where} of input '{self._names[arg]}'"
        self._updates[arg] = value.value
        return value

    def take_along_dim(
        self, x: Tensor, indices: Tensor, axis: int, *, name: str | None = None
    ) -> Tensor:
        """torch.take_along_dim with a dim: gather with its indices broadcast
        over the other axes first where they have size 1."""
        if isinstance(x, Tensor) and isinstance(indices, Tensor):
            axis_n = (
                molten.normalize_axis("molten.take_along_dim", axis, x.shape.rank)
                if isinstance(axis, int)
                else axis
            )
            if indices.shape.rank == x.shape.rank:
                shape = [
                    i if d == axis_n or i != 1 else n
                    for d, (n, i) in enumerate(zip(x.shape, indices.shape, strict=True))
                ]
                if list(indices.shape.dims) != shape:
                    indices = self.broadcast_to(indices, shape)
        return self.gather(x, axis, indices, name=name)

    def masked_fill(
        self, x: Tensor, mask: Tensor, value: float, *, name: str | None = None
    ) -> Tensor:
        """x with `value` where `mask` (bool, broadcast to x) holds; x's dtype."""
        self._check_owned(x, "molten.masked_fill")
        fill = self._as(value, x.type.element_type)
        return self.where(mask, fill, x, name=name)

    def sin(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.SinOp, x, name)

    def cos(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.CosOp, x, name)

    def tan(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.TanOp, x, name)

    def asin(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.AsinOp, x, name)

    def acos(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.AcosOp, x, name)

    def atan(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.AtanOp, x, name)

    def sinh(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.SinhOp, x, name)

    def cosh(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.CoshOp, x, name)

    def erf(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.ErfOp, x, name)

    def log1p(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.Log1pOp, x, name)

    def expm1(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.Expm1Op, x, name)

    def log2(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.Log2Op, x, name)

    def log10(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.Log10Op, x, name)

    def exp2(self, x: Tensor, *, name: str | None = None) -> Tensor:
        return self._float_unary(molten.Exp2Op, x, name)

    def rotate_half(self, x: Tensor, *, name: str | None = None) -> Tensor:
        """concat(-x[..., d/2:], x[..., :d/2]) over the last axis."""
        return self._emit(molten.RotateHalfOp, [x], name)

    def cast(self, x: Tensor, dtype: DTypeLike, *, name: str | None = None) -> Tensor:
        """x converted to `dtype` (round to nearest even)."""
        self._check_owned(x, molten.CastOp.name)
        with self._building(molten.CastOp.name, [x]):
            target = molten.tensor_type(molten.dims_of(x.type), element_type(dtype))
        return self._emit(molten.CastOp, [x], name, result_type=target)

    def constant(
        self,
        value: Any,
        shape: TensorShape | Sequence[int] | None = None,
        dtype: DTypeLike = "float32",
        *,
        name: str | None = None,
    ) -> Tensor:
        """A constant: a scalar (rank 0, or broadcast to `shape`) or an array."""
        name = _checked_name(molten.ConstantOp.name, name)
        if shape is not None:
            shape = _checked_ints(molten.ConstantOp.name, "shape", shape)
        with self._building(molten.ConstantOp.name, [value]):
            element = element_type(dtype)
            try:
                array = np.asarray(value)
                if array.dtype.kind not in "biuf":
                    raise TypeError
                if element_kind(element) == FLOAT or array.dtype.kind == "f":
                    array = array.astype(np.float64)
            except (TypeError, ValueError):
                raise DTypeError(f"value {value!r} is not real-valued") from None
            if array.size == 0:
                raise ShapeError("value is empty")
            try:
                op = molten.ConstantOp.from_values(
                    array.ravel().tolist(), TensorType(element, list(array.shape))
                )
            except OverflowError:
                raise ShapeError(
                    f"value {value!r} is out of range for {dtype_name(element)}"
                ) from None
        self._block.add_op(op)
        result = Tensor(self, op.result)
        if shape is not None and tuple(shape) != array.shape:
            return self.broadcast_to(result, shape, name=name)
        if name is not None:
            self._names[op.result] = name_value(op.result, name)
        return result

    def iota(
        self,
        shape: TensorShape | Sequence[int],
        axis: int = 0,
        dtype: DTypeLike = "int64",
        *,
        name: str | None = None,
    ) -> Tensor:
        """A tensor of `shape` whose elements are their index along `axis`."""
        shape = _checked_ints(molten.IotaOp.name, "shape", shape)
        axis = _checked_int(molten.IotaOp.name, "axis", axis)
        with self._building(molten.IotaOp.name, [shape, axis]):
            axis = molten.normalize_axis(molten.IotaOp.name, axis, len(shape))
            target = molten.tensor_type(shape, element_type(dtype))
            props = {"axis": IntegerAttr(axis, i64)}
        return self._emit(molten.IotaOp, [], name, props, result_type=target)

    def arange(
        self,
        start: float,
        end: float | None = None,
        step: float = 1,
        *,
        dtype: DTypeLike | None = None,
        name: str | None = None,
    ) -> Tensor:
        """start, start + step, ... up to `end` (excluded), as torch.arange:
        `arange(n)` is 0 .. n-1; int64 unless a bound or the step is a float
        (then float32) or `dtype` says."""
        if end is None:
            start, end = 0, start
        bounds = [
            _checked_real("molten.arange", what, v)
            for what, v in (("start", start), ("end", end), ("step", step))
        ]
        if bounds[2] == 0:
            raise GraphError("molten.arange: step must not be 0")
        count = math.ceil((bounds[1] - bounds[0]) / bounds[2])
        if count < 1:
            raise ShapeError(
                f"molten.arange: no element from {start} to {end} by {step}"
            )
        if dtype is None:
            floats = any(number_category(v) == 2 for v in (start, end, step))
            dtype = "float32" if floats else "int64"
        ramp = self.iota([count], 0, dtype)
        if step != 1:
            ramp = self.mul(ramp, self._as(step, ramp.type.element_type))
        if start != 0:
            ramp = self.add(ramp, self._as(start, ramp.type.element_type))
        if name is not None:
            name = _checked_name("molten.arange", name)
            self._names[ramp.value] = name_value(ramp.value, name)
        return ramp

    def full(
        self,
        shape: TensorShape | Sequence[int],
        value: float,
        dtype: DTypeLike | None = None,
        *,
        name: str | None = None,
    ) -> Tensor:
        """`shape` filled with `value`; the dtype torch gives `value` (bool,
        int64 or float32) unless `dtype` says."""
        element = default_element(value) if dtype is None else element_type(dtype)
        return self.constant(value, shape, element, name=name)

    def zeros(
        self,
        shape: TensorShape | Sequence[int],
        dtype: DTypeLike = "float32",
        *,
        name: str | None = None,
    ) -> Tensor:
        return self.full(shape, 0, dtype, name=name)

    def ones(
        self,
        shape: TensorShape | Sequence[int],
        dtype: DTypeLike = "float32",
        *,
        name: str | None = None,
    ) -> Tensor:
        return self.full(shape, 1, dtype, name=name)

    def full_like(
        self,
        x: Tensor,
        value: float,
        dtype: DTypeLike | None = None,
        *,
        name: str | None = None,
    ) -> Tensor:
        """x's shape filled with `value`, in x's dtype unless `dtype` says."""
        self._check_owned(x, "molten.full_like")
        element = x.type.element_type if dtype is None else element_type(dtype)
        return self.full(list(x.shape.dims), value, element, name=name)

    def zeros_like(
        self, x: Tensor, dtype: DTypeLike | None = None, *, name: str | None = None
    ) -> Tensor:
        return self.full_like(x, 0, dtype, name=name)

    def ones_like(
        self, x: Tensor, dtype: DTypeLike | None = None, *, name: str | None = None
    ) -> Tensor:
        return self.full_like(x, 1, dtype, name=name)

    def _axes(self, op_name: str, x: Tensor, axes: int | Sequence[int]) -> list[int]:
        rank = len(x.type.get_shape())
        if isinstance(axes, int | np.integer) and not isinstance(axes, bool):
            values = [int(axes)]
        else:
            values = _checked_ints(op_name, "axes", axes)
        return sorted(molten.normalize_axis(op_name, a, rank) for a in values)

    def _reduce(self, op_type, x: Tensor, axes, name, keepdim: bool) -> Tensor:
        keepdim = _checked_flag(op_type.name, "keepdim", keepdim)
        self._check_owned(x, op_type.name)
        with self._building(op_type.name, [x]):
            props: dict[str, Attribute] = {
                "axes": molten._int_array(self._axes(op_type.name, x, axes))
            }
        if keepdim:
            props["keepdim"] = UnitAttr()
        return self._emit(op_type, [x], name, props)

    def reduce_sum(
        self,
        x: Tensor,
        axes: int | Sequence[int],
        keepdim: bool = False,
        *,
        name: str | None = None,
    ) -> Tensor:
        """Sum over `axes` (negative axes count from the end); integers and
        bools sum as int64, as torch's and numpy's."""
        integral = isinstance(x, Tensor) and element_kind(x.type.element_type) != FLOAT
        if integral and x.dtype != "int64":
            x = self.cast(x, "int64")
        return self._reduce(molten.ReduceSumOp, x, axes, name, keepdim)

    def reduce_max(
        self,
        x: Tensor,
        axes: int | Sequence[int],
        keepdim: bool = False,
        *,
        name: str | None = None,
    ) -> Tensor:
        """Maximum over `axes`."""
        return self._reduce(molten.ReduceMaxOp, x, axes, name, keepdim)

    def reduce_mean(
        self,
        x: Tensor,
        axes: int | Sequence[int],
        keepdim: bool = False,
        *,
        name: str | None = None,
    ) -> Tensor:
        """Mean over `axes`."""
        return self._reduce(molten.ReduceMeanOp, x, axes, name, keepdim)

    def argmax(
        self,
        x: Tensor,
        axis: int | None = None,
        keepdim: bool = False,
        *,
        name: str | None = None,
    ) -> Tensor:
        """The position (int64) of the maximum along `axis` (torch.argmax):
        the first of equal ones, the first NaN where there is one; with no
        axis, of x flattened."""
        return self._arg_reduce(molten.ArgMaxOp, x, axis, keepdim, name)

    def argmin(
        self,
        x: Tensor,
        axis: int | None = None,
        keepdim: bool = False,
        *,
        name: str | None = None,
    ) -> Tensor:
        """The position (int64) of the minimum along `axis` (torch.argmin)."""
        return self._arg_reduce(molten.ArgMinOp, x, axis, keepdim, name)

    def max_with_indices(
        self, x: Tensor, axis: int, keepdim: bool = False
    ) -> tuple[Tensor, Tensor]:
        """(values, indices) of the maximum along `axis`, as torch.max(x, dim)."""
        axis = _checked_int(molten.ArgMaxOp.name, "axis", axis)
        return (
            self.reduce_max(x, axis, keepdim),
            self.argmax(x, axis, keepdim),
        )

    def min_with_indices(
        self, x: Tensor, axis: int, keepdim: bool = False
    ) -> tuple[Tensor, Tensor]:
        """(values, indices) of the minimum along `axis`, as torch.min(x, dim)."""
        axis = _checked_int(molten.ArgMinOp.name, "axis", axis)
        indices = self.argmin(x, axis, keepdim)
        if element_kind(x.type.element_type) == FLOAT:
            # -max(-x) is exact in floats, NaN where x has one, as torch's.
            return self.neg(self.reduce_max(self.neg(x), axis, keepdim)), indices
        # An integer's negation wraps at the least value: read the minimum
        # at its position instead.
        dims = list(x.shape.dims)
        axis = molten.normalize_axis(molten.ArgMinOp.name, axis, len(dims))
        kept = [*dims[:axis], 1, *dims[axis + 1 :]]
        at = indices if keepdim else self.reshape(indices, kept)
        values = self.take_along_dim(x, at, axis)
        return (
            values if keepdim else self.reshape(values, indices.shape.dims)
        ), indices

    def _arg_reduce(self, op_type, x: Tensor, axis, keepdim, name) -> Tensor:
        keepdim = _checked_flag(op_type.name, "keepdim", keepdim)
        self._check_owned(x, op_type.name)
        if axis is None:
            flat = self.reshape(x, [-1])
            index = self._reduce(op_type, flat, 0, None if keepdim else name, False)
            if not keepdim:
                return index
            ones = [1] * len(x.type.get_shape())
            return self.reshape(index, ones, name=name)
        axis = _checked_int(op_type.name, "axis", axis)
        return self._reduce(op_type, x, axis, name, keepdim)

    def triu(self, x: Tensor, diagonal: int = 0, *, name: str | None = None) -> Tensor:
        """x above the diagonal (column - row >= diagonal) of its last two
        axes, 0 elsewhere (torch.triu)."""
        return self._triangle(molten.TriuOp, x, diagonal, name)

    def tril(self, x: Tensor, diagonal: int = 0, *, name: str | None = None) -> Tensor:
        """x below the diagonal (column - row <= diagonal) of its last two
        axes, 0 elsewhere (torch.tril)."""
        return self._triangle(molten.TrilOp, x, diagonal, name)

    def _triangle(self, op_type, x: Tensor, diagonal, name) -> Tensor:
        diagonal = _checked_int(op_type.name, "diagonal", diagonal)
        props = {"diagonal": IntegerAttr(diagonal, i64)}
        return self._emit(op_type, [x], name, props)

    def cumsum(
        self,
        x: Tensor,
        axis: int = -1,
        *,
        reverse: bool = False,
        exclusive: bool = False,
        name: str | None = None,
    ) -> Tensor:
        """The running sum along `axis` (torch.cumsum: integers and bools
        sum as int64); from the end with `reverse`; with `exclusive`, each
        element the sum of those before it (the first is 0)."""
        return self._scan(molten.CumsumOp, x, axis, reverse, exclusive, name, True)

    def cumprod(
        self,
        x: Tensor,
        axis: int = -1,
        *,
        reverse: bool = False,
        exclusive: bool = False,
        name: str | None = None,
    ) -> Tensor:
        """The running product along `axis` (torch.cumprod: integers and
        bools multiply as int64)."""
        return self._scan(molten.CumprodOp, x, axis, reverse, exclusive, name, True)

    def cummax(
        self, x: Tensor, axis: int = -1, *, name: str | None = None
    ) -> tuple[Tensor, Tensor]:
        """torch.cummax: (the running maximum along `axis`, in x's dtype (of
        bools: whether any so far), and the int64 position of each's
        maximum, the last of equal ones; a NaN, once met, stays, at the
        last NaN's position)."""
        return self._running_extreme(molten.CummaxOp, x, axis, name)

    def cummin(
        self, x: Tensor, axis: int = -1, *, name: str | None = None
    ) -> tuple[Tensor, Tensor]:
        """torch.cummin: (the running minimum along `axis`, its positions)."""
        return self._running_extreme(molten.CumminOp, x, axis, name)

    def _running_extreme(
        self, op_type: type[molten.ScanOp], x: Tensor, axis: int, name: str | None
    ) -> tuple[Tensor, Tensor]:
        """cummax or cummin's values, and their positions: the running
        maximum of each position where the element is the running extreme
        (or a NaN), -1 elsewhere, which picks the last of equal ones."""
        self._check_owned(x, op_type.name)
        if x.dtype == "bool":  # any so far: the running extreme of 0s and 1s
            values = self._scan(op_type, self.cast(x, "uint8"), axis, False, False)
            values = self.cast(values, "bool", name=name)
        else:
            values = self._scan(op_type, x, axis, False, False, name)
        axis = molten.normalize_axis(op_type.name, axis, x.shape.rank)
        at = self.eq(x, values)
        if _is_float(x):
            at = self.logical_or(at, self.isnan(x))
        positions = self.where(at, self.iota(list(x.shape.dims), axis), -1)
        indices = self._scan(molten.CummaxOp, positions, axis, False, False)
        return values, indices

    def _scan(
        self,
        op_type: type[molten.ScanOp],
        x: Tensor,
        axis: int,
        reverse: bool,
        exclusive: bool,
        name: str | None = None,
        widen: bool = False,
    ) -> Tensor:
        """`op_type` along `axis`; with `widen`, integers and bools as int64
        first (torch's cumsum and cumprod)."""
        op_name = op_type.name
        axis = _checked_int(op_name, "axis", axis)
        reverse = _checked_flag(op_name, "reverse", reverse)
        exclusive = _checked_flag(op_name, "exclusive", exclusive)
        self._check_owned(x, op_name)
        with self._building(op_name, [x]):
            rank = len(x.type.get_shape())
            props: dict[str, Attribute] = {
                "axis": IntegerAttr(molten.normalize_axis(op_name, axis, rank), i64)
            }
        if reverse:
            props["reverse"] = UnitAttr()
        if exclusive:
            props["exclusive"] = UnitAttr()
        if widen and x.dtype != "int64" and not _is_float(x):
            x = self.cast(x, "int64")
        return self._emit(op_type, [x], name, props)

    def flip(
        self, x: Tensor, axes: int | Sequence[int], *, name: str | None = None
    ) -> Tensor:
        """x with the order of its elements reversed along `axes` (torch.flip)."""
        self._check_owned(x, molten.FlipOp.name)
        with self._building(molten.FlipOp.name, [x]):
            props = {"axes": molten._int_array(self._axes(molten.FlipOp.name, x, axes))}
        return self._emit(molten.FlipOp, [x], name, props)

    def _window(self, op_type, x: Tensor, axis, size_of, props, name) -> Tensor:
        """An op of x along one axis whose result's size there `size_of`
        gives from x's (slice and pad)."""
        self._check_owned(x, op_type.name)
        axis = _checked_int(op_type.name, "axis", axis)
        with self._building(op_type.name, [x]):
            rank = len(x.type.get_shape())
            axis = molten.normalize_axis(op_type.name, axis, rank)
            dims = list(molten.dims_of(x.type))
            if isinstance(dims[axis], str):
                raise ShapeError(
                    f"axis {axis} of {x.type} is named ({dims[axis]}); "
                    "a fixed size is needed"
                )
            dims[axis] = size_of(dims[axis])
            target = molten.tensor_type(dims, x.type.element_type)
            props = {
                "axis": IntegerAttr(axis, i64),
                **{k: IntegerAttr(v, i64) for k, v in props.items()},
            }
        return self._emit(op_type, [x], name, props, result_type=target)

    def slice(
        self,
        x: Tensor,
        axis: int,
        start: int,
        length: int,
        *,
        name: str | None = None,
    ) -> Tensor:
        """The `length` elements from `start` along `axis` (torch.narrow)."""
        start = _checked_int(molten.SliceOp.name, "start", start)
        length = _checked_int(molten.SliceOp.name, "length", length)
        if length < 1:
            raise GraphError(
                f"{molten.SliceOp.name}: length {length} must be at least 1 "
                "(a slice takes `length` elements from `start`)"
            )
        return self._window(
            molten.SliceOp, x, axis, lambda _: length, {"start": start}, name
        )

    def pad(
        self,
        x: Tensor,
        axis: int,
        before: int,
        after: int,
        *,
        name: str | None = None,
    ) -> Tensor:
        """x between `before` and `after` zeros along `axis`."""
        before = _checked_int(molten.PadOp.name, "before", before)
        after = _checked_int(molten.PadOp.name, "after", after)
        return self._window(
            molten.PadOp,
            x,
            axis,
            lambda n: before + n + after,
            {"before": before},
            name,
        )

    def concat(
        self, parts: Sequence[Tensor], axis: int = 0, *, name: str | None = None
    ) -> Tensor:
        """The parts side by side along `axis` (torch.cat): the sum of the
        parts each padded to the whole, which one kernel computes reading
        each part once. (A -0.0 of a part comes out as 0.0.)"""
        if (
            not isinstance(parts, list | tuple)
            or not parts
            or not all(isinstance(p, Tensor) for p in parts)
        ):
            raise GraphError(
                f"concat: parts must be a non-empty list of tensors, got {parts!r}"
            )
        parts = list(parts)
        axis = _checked_int("concat", "axis", axis)
        axis = molten.normalize_axis("concat", axis, len(parts[0].type.get_shape()))
        sizes = [molten.dims_of(p.type)[axis] for p in parts]
        if any(isinstance(d, str) for d in sizes):
            raise ShapeError(f"concat: the parts' axis {axis} must be a fixed size")
        total = sum(sizes)  # type: ignore[arg-type]
        padded, offset = [], 0
        for part, size in zip(parts, sizes, strict=True):
            after = total - offset - size  # type: ignore[operator]
            last = name if len(parts) == 1 else None
            padded.append(self.pad(part, axis, offset, after, name=last))
            offset += size  # type: ignore[operator]
        whole = padded[0]
        for i, part in enumerate(padded[1:], start=2):
            whole = self.add(whole, part, name=name if i == len(padded) else None)
        return whole

    def broadcast_to(
        self, x: Tensor, shape: TensorShape | Sequence[int], *, name: str | None = None
    ) -> Tensor:
        """x broadcast to `shape` under numpy's rules."""
        self._check_owned(x, molten.BroadcastToOp.name)
        shape = _checked_dims(molten.BroadcastToOp.name, "shape", shape)
        with self._building(molten.BroadcastToOp.name, [x]):
            target = molten.tensor_type(TensorShape(shape).dims, x.type.element_type)
        return self._emit(molten.BroadcastToOp, [x], name, result_type=target)

    def reshape(
        self, x: Tensor, shape: Sequence[int], *, name: str | None = None
    ) -> Tensor:
        """x in row-major order with `shape`; one dimension may be -1
        (inferred). A named dimension of x stays itself (`[T, 28, 128]` from
        `[T, 3584]`)."""
        self._check_owned(x, molten.ReshapeOp.name)
        dims = _checked_dims(molten.ReshapeOp.name, "shape", shape)
        with self._building(molten.ReshapeOp.name, [x]):
            if dims.count(-1) > 1:
                raise ShapeError(f"shape {dims} has more than one -1")
            if -1 in dims:
                known = math.prod(d for d in dims if isinstance(d, int) and d != -1)
                total = math.prod(
                    d for d in molten.dims_of(x.type) if isinstance(d, int)
                )
                if known <= 0 or total % known:
                    raise ShapeError(f"cannot reshape {x.type} to {dims}")
                dims[dims.index(-1)] = total // known
            target = molten.tensor_type(TensorShape(dims).dims, x.type.element_type)
        return self._emit(molten.ReshapeOp, [x], name, result_type=target)

    def transpose(
        self, x: Tensor, permutation: Sequence[int], *, name: str | None = None
    ) -> Tensor:
        """Result axis i is input axis permutation[i] (negative entries count
        from the end)."""
        self._check_owned(x, molten.TransposeOp.name)
        rank = len(x.type.get_shape())
        # Out-of-range entries are left for the op's rule, which names them all.
        entries = _checked_ints(molten.TransposeOp.name, "permutation", permutation)
        perm = [p % rank if -rank <= p < 0 else p for p in entries]
        props = {"permutation": molten._int_array(perm)}
        return self._emit(molten.TransposeOp, [x], name, props)

    def matmul(
        self,
        a: Tensor,
        b: Tensor,
        *,
        transpose_a: bool = False,
        transpose_b: bool = False,
        name: str | None = None,
    ) -> Tensor:
        """a @ b over the last two axes; batch axes broadcast."""
        props: dict[str, Attribute] = {}
        if _checked_flag(molten.MatmulOp.name, "transpose_a", transpose_a):
            props["transpose_a"] = UnitAttr()
        if _checked_flag(molten.MatmulOp.name, "transpose_b", transpose_b):
            props["transpose_b"] = UnitAttr()
        return self._emit(molten.MatmulOp, [a, b], name, props)

    def rms_norm(
        self,
        x: Tensor,
        weight: Tensor,
        eps: float = 1e-6,
        *,
        name: str | None = None,
    ) -> Tensor:
        """x * rsqrt(mean(x^2) + eps) * weight over the axes `weight` spans."""
        eps = _checked_real(molten.RmsNormOp.name, "eps", eps)
        props = {"epsilon": FloatAttr(eps, Float64Type())}
        return self._emit(molten.RmsNormOp, [x, weight], name, props)

    def layer_norm(
        self,
        x: Tensor,
        weight: Tensor,
        bias: Tensor,
        eps: float = 1e-5,
        *,
        name: str | None = None,
    ) -> Tensor:
        """(x - mean) * rsqrt(var + eps) * weight + bias over `weight`'s axes."""
        eps = _checked_real(molten.LayerNormOp.name, "eps", eps)
        props = {"epsilon": FloatAttr(eps, Float64Type())}
        return self._emit(molten.LayerNormOp, [x, weight, bias], name, props)

    def softmax(self, x: Tensor, axis: int = -1, *, name: str | None = None) -> Tensor:
        """Numerically stable softmax along `axis`."""
        axis = _checked_int(molten.SoftmaxOp.name, "axis", axis)
        self._check_owned(x, molten.SoftmaxOp.name)
        with self._building(molten.SoftmaxOp.name, [x]):
            rank = len(x.type.get_shape())
            props = {
                "axis": IntegerAttr(
                    molten.normalize_axis(molten.SoftmaxOp.name, axis, rank), i64
                )
            }
        return self._emit(molten.SoftmaxOp, [x], name, props)

    def rope(
        self, x: Tensor, cos: Tensor, sin: Tensor, *, name: str | None = None
    ) -> Tensor:
        """Rotary embedding: x * cos + rotate_half(x) * sin."""
        return self._emit(molten.RopeOp, [x, cos, sin], name)

    def attention(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        *,
        scale: float | None = None,
        causal: bool = False,
        name: str | None = None,
    ) -> Tensor:
        """softmax(query @ key^T * scale [+ causal mask]) @ value.

        `scale` defaults to 1 / sqrt(head dim), as in torch's
        scaled_dot_product_attention.
        """
        self._check_owned(query, molten.AttentionOp.name)
        if scale is None:
            head = molten.dims_of(query.type)[-1]
            if isinstance(head, str):
                raise ShapeError(
                    f"{molten.AttentionOp.name}: query {query.type} has a named "
                    f"head dimension {head}; give scale="
                )
            scale = 1 / math.sqrt(head)
        scale = _checked_real(molten.AttentionOp.name, "scale", scale)
        props: dict[str, Attribute] = {"scale": FloatAttr(scale, Float64Type())}
        if _checked_flag(molten.AttentionOp.name, "causal", causal):
            props["causal"] = UnitAttr()
        return self._emit(molten.AttentionOp, [query, key, value], name, props)

    def causal_mask(
        self,
        rows: molten.Dim,
        cols: molten.Dim,
        dtype: DTypeLike = "float32",
        *,
        name: str | None = None,
    ) -> Tensor:
        """The additive causal mask: 0 where col <= row, -inf elsewhere
        (`rows` and `cols` sizes or dimension names)."""
        with self._building(molten.CausalMaskOp.name, [rows, cols]):
            dims = TensorShape([rows, cols]).dims
            target = molten.tensor_type(dims, element_type(dtype))
        return self._emit(molten.CausalMaskOp, [], name, result_type=target)
