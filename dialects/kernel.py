"""The `kernel` dialect: which molten ops run together as one kernel.

Level 2 of Molten. A `kernel.fused` op holds a region of molten ops that one
GPU kernel will compute. The region is isolated from above: its inputs are
the op's operands, bound to block arguments, and its `kernel.yield` names the
values the kernel writes out. Everything is still tensors, so the reference
interpreter runs a fused group exactly as it ran the ops before fusion.

```mlir
%norm = kernel.fused row_reduce (%x, %w)
    : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32> {
^bb0(%xa: tensor<2048x5120xf32>, %wa: tensor<5120xf32>):
  ...molten ops...
  kernel.yield %r : tensor<2048x5120xf32>
}
```

`kernel-outline` moves each group into a `kernel.func` (a symbol) called by a
`kernel.launch`; `kernel-schedule` attaches a `#kernel.schedule<...>`, the
only source of launch and tiling parameters for the levels below.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import auto

from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    IntAttr,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


class KernelKind(StrEnum):
    """What a fused group computes, which decides how it is lowered."""

    POINTWISE = auto()
    ROW_REDUCE = auto()
    GEMM = auto()
    ATTENTION = auto()


@irdl_attr_definition
class KernelKindAttr(EnumAttribute[KernelKind], SpacedOpaqueSyntaxAttribute):
    """`#kernel<kind row_reduce>`; printed bare (`row_reduce`) inside ops."""

    name = "kernel.kind"


SCHEDULE_FIELDS = (
    "block",
    "rows_per_block",
    "vector",
    "elements_per_thread",
    "split",
)
"""The integer fields of `#kernel.schedule`, in printing order (`split` only
when above 1)."""
SCHEDULE_DEFAULTS = {
    "rows_per_block": 1,
    "vector": 1,
    "elements_per_thread": 1,
    "split": 1,
}


SPLIT_THREADS_PER_SM = 1024
"""The threads per SM the blocks of a split row (`split` > 1) are made to fit
(64 registers each): kernel-schedule counts that many resident, the
lowering makes it so."""


@irdl_attr_definition
class ScheduleAttr(ParametrizedAttribute):
    """How a kernel runs: threads per block, rows per block, vector width,
    elements per thread, blocks per row (`split`, printed when above 1) and
    tile sizes (for gemm: block M, N, K).

    ```mlir
    #kernel.schedule<block = 256, rows_per_block = 1, vector = 4,
                     elements_per_thread = 4, tile = [128, 128, 32]>
    #kernel.schedule<block = 1024, rows_per_block = 1, vector = 4,
                     elements_per_thread = 32, split = 128>
    ```
    """

    name = "kernel.schedule"

    block: IntAttr = param_def()
    rows_per_block: IntAttr = param_def()
    vector: IntAttr = param_def()
    elements_per_thread: IntAttr = param_def()
    split: IntAttr = param_def()
    tile: ArrayAttr[IntAttr] = param_def()

    def __init__(
        self,
        block: int,
        rows_per_block: int = 1,
        vector: int = 1,
        elements_per_thread: int = 1,
        tile: Sequence[int] = (),
        split: int = 1,
    ):
        super().__init__(
            IntAttr(block),
            IntAttr(rows_per_block),
            IntAttr(vector),
            IntAttr(elements_per_thread),
            IntAttr(split),
            ArrayAttr([IntAttr(t) for t in tile]),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: dict[str, Attribute] = {}

        def parse_field() -> None:
            field_span = parser._current_token.span
            key = parser.parse_identifier()
            if key in values:
                parser.raise_error(f"schedule field '{key}' is given twice", field_span)
            if key != "tile" and key not in SCHEDULE_FIELDS:
                parser.raise_error(
                    f"unknown schedule field '{key}' (fields: "
                    f"{', '.join((*SCHEDULE_FIELDS, 'tile'))})",
                    field_span,
                )
            parser.parse_punctuation("=")
            if key == "tile":
                sizes = parser.parse_comma_separated_list(
                    parser.Delimiter.SQUARE, parser.parse_integer
                )
                values[key] = ArrayAttr([IntAttr(s) for s in sizes])
            else:
                values[key] = IntAttr(parser.parse_integer(allow_negative=False))

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parse_field)
        if "block" not in values:
            parser.raise_error("a schedule needs 'block'")
        return (
            values["block"],
            *(
                values.get(f, IntAttr(SCHEDULE_DEFAULTS[f]))
                for f in SCHEDULE_FIELDS[1:]
            ),
            values.get("tile", ArrayAttr([])),
        )

    def print_parameters(self, printer: Printer) -> None:
        fields = [
            f"{f} = {getattr(self, f).data}"
            for f in SCHEDULE_FIELDS
            if f != "split" or self.split.data != 1
        ]
        if self.tile.data:
            fields.append(f"tile = [{', '.join(str(t.data) for t in self.tile)}]")
        printer.print_string(f"<{', '.join(fields)}>")

    def verify(self) -> None:
        for f in SCHEDULE_FIELDS:
            if getattr(self, f).data < 1:
                raise VerifyException(f"#kernel.schedule: {f} must be >= 1")
        if any(t.data < 1 for t in self.tile):
            raise VerifyException("#kernel.schedule: tile sizes must be >= 1")
        if self.block.data % self.rows_per_block.data:
            raise VerifyException(
                f"#kernel.schedule: rows_per_block = {self.rows_per_block.data} "
                f"does not divide block = {self.block.data}"
            )


def _verify_yield_types(op_name: str, body: Region, types: Sequence[Attribute]):
    terminator = body.block.last_op
    if not isinstance(terminator, YieldOp):
        raise VerifyException(f"{op_name}: the body must end in kernel.yield")
    yielded = [v.type for v in terminator.values]
    if yielded != list(types):
        raise VerifyException(
            f"{op_name}: kernel.yield gives ({', '.join(map(str, yielded))}) but the "
            f"op returns ({', '.join(map(str, types))})"
        )


@irdl_op_definition
class FusedOp(IRDLOperation):
    """A group of molten ops computed by one kernel (see the module docstring)."""

    name = "kernel.fused"

    inputs = var_operand_def()
    outputs = var_result_def()
    kind = prop_def(KernelKindAttr)
    schedule = opt_prop_def(ScheduleAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), Pure())
    assembly_format = (
        "$kind (`schedule` $schedule^)? `(` $inputs `)` attr-dict "
        "`:` functional-type($inputs, $outputs) $body"
    )

    def __init__(
        self,
        kind: KernelKind,
        inputs: Sequence[SSAValue],
        output_types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            properties={"kind": KernelKindAttr(kind)},
            regions=[body],
        )

    def verify_(self) -> None:
        arg_types = [a.type for a in self.body.block.args]
        if arg_types != [v.type for v in self.inputs]:
            raise VerifyException(
                "kernel.fused: block argument types must match the inputs"
            )
        _verify_yield_types(self.name, self.body, self.result_types)


class KernelFuncCallable(CallableOpInterface):
    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        assert isinstance(op, FuncOp)
        return op.body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, FuncOp)
        return op.function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, FuncOp)
        return op.function_type.outputs.data


class LaunchSymbolUser(SymbolUserOpInterface):
    """A launch names an existing kernel.func whose type matches its own."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, LaunchOp)
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if not isinstance(callee, FuncOp):
            raise VerifyException(
                f"kernel.launch: {op.callee} is not a kernel.func in this module"
            )
        want = callee.function_type
        got_in = [v.type for v in op.inputs]
        if list(want.inputs.data) != got_in or list(want.outputs.data) != list(
            op.result_types
        ):
            raise VerifyException(
                f"kernel.launch: the types do not match {op.callee}: {want}"
            )


@irdl_op_definition
class FuncOp(IRDLOperation):
    """An outlined kernel: a symbol whose body is one fused group.

    ```mlir
    kernel.func @fused_rmsnorm_kernel0(%x: tensor<4x8xf32>) -> tensor<4x8xf32>
        row_reduce schedule #kernel.schedule<block = 32, ...> {
      ...
      kernel.yield %r : tensor<4x8xf32>
    }
    ```
    The `fused_ops` property lists the ops of the original graph the kernel
    computes, for the comment above the generated CUDA kernel.
    """

    name = "kernel.func"

    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    kind = prop_def(KernelKindAttr)
    schedule = opt_prop_def(ScheduleAttr)
    fused_ops = opt_prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), KernelFuncCallable())

    def __init__(
        self,
        sym_name: str,
        kind: KernelKind,
        function_type: FunctionType,
        body: Region,
        fused_ops: Sequence[str] = (),
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "function_type": function_type,
            "kind": KernelKindAttr(kind),
        }
        if fused_ops:
            properties["fused_ops"] = ArrayAttr([StringAttr(n) for n in fused_ops])
        super().__init__(properties=properties, regions=[body])

    def verify_(self) -> None:
        arg_types = [a.type for a in self.body.block.args]
        if arg_types != list(self.function_type.inputs.data):
            raise VerifyException(
                f"kernel.func @{self.sym_name.data}: block argument types must "
                "match the function type's inputs"
            )
        _verify_yield_types(self.name, self.body, self.function_type.outputs.data)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(") -> (")
        printer.print_list(self.function_type.outputs.data, printer.print_attribute)
        printer.print_string(f") {self.kind.data.value}")
        if self.schedule is not None:
            printer.print_string(" schedule ")
            printer.print_attribute(self.schedule)
        extra = {"fused_ops": self.fused_ops} if self.fused_ops is not None else {}
        printer.print_op_attributes({**self.attributes, **extra}, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        sym_name = parser.parse_symbol_name()
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
        )
        parser.parse_punctuation("->")
        outputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        kind = KernelKindAttr(parser.parse_str_enum(KernelKind))
        schedule = None
        if parser.parse_optional_keyword("schedule"):
            schedule = parser.parse_attribute()
        attributes = parser.parse_optional_attr_dict_with_keyword()
        extra = dict(attributes.data) if attributes is not None else {}
        body = parser.parse_region(args)
        properties: dict[str, Attribute] = {
            "sym_name": sym_name,
            "function_type": FunctionType.from_lists([a.type for a in args], outputs),
            "kind": kind,
        }
        if schedule is not None:
            properties["schedule"] = schedule
        if "fused_ops" in extra:
            properties["fused_ops"] = extra.pop("fused_ops")
        return cls.create(properties=properties, attributes=extra, regions=[body])


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The values a kernel body writes out.

    ```mlir
    kernel.yield %r, %s : tensor<8xf32>, tensor<8x1xf32>
    ```
    """

    name = "kernel.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(FusedOp, FuncOp), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


def iteration_domain(outputs: Sequence[SSAValue]) -> tuple[int, ...]:
    """The shape a pointwise kernel iterates over: its largest output's (the
    others are broadcast into it)."""
    shapes = [tuple(v.type.get_shape()) for v in outputs]  # type: ignore[attr-defined]
    return max(shapes, key=math.prod)


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Runs an outlined kernel on its inputs: one step of the host schedule.

    ```mlir
    %r = kernel.launch @fused_rmsnorm_kernel0(%x, %w)
        : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
    """

    name = "kernel.launch"
    callee = prop_def(SymbolRefAttr)
    inputs = var_operand_def()
    outputs = var_result_def()
    traits = traits_def(LaunchSymbolUser())
    assembly_format = (
        "$callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"
    )

    def __init__(
        self, callee: str, inputs: Sequence[SSAValue], output_types: Sequence[Attribute]
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            properties={"callee": SymbolRefAttr(callee)},
        )


Kernel = Dialect(
    "kernel",
    [FusedOp, YieldOp, FuncOp, LaunchOp],
    [KernelKindAttr, ScheduleAttr],
)
