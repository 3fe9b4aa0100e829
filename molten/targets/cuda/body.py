"""The printer of a kernel or launcher body: C++ statements, one op at a time,
each written by the op's printer in a table of op class -> printer
(`op_table.OP_PRINTERS`), and the factories of the table's one-line
printers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xdsl.ir import Block, Operation, SSAValue

from molten.targets.cuda.c_types import c_type
from molten.targets.cuda.names import Scope

OpPrinter = Callable[["BodyPrinter", Operation], None]
"""Writes one op's C++ (statements, or the expression its result stands for)."""


class BodyPrinter:
    """C++ statements for the ops of a kernel or launcher body, each op
    written by its printer in `printers` (`printer_for`)."""

    def __init__(
        self,
        scope: Scope,
        printers: Mapping[type[Operation], OpPrinter],
        kernel_names: dict[str, str] | None = None,
    ):
        self.scope = scope
        self.printers = printers
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
        printer = printer_for(type(op), self.printers)
        if printer is None:
            raise NotImplementedError(f"-t cuda: cannot print {op.name}")
        printer(self, op)


def printer_for(
    op_class: type[Operation], printers: Mapping[type[Operation], OpPrinter]
) -> OpPrinter | None:
    """The printer of `op_class` itself, else of its nearest base class that
    has one (the first in its method resolution order); None where none has."""
    for cls in op_class.__mro__:
        if cls in printers:
            return printers[cls]
    return None


def statement(line: str) -> OpPrinter:
    """The printer of an op that is one fixed statement."""
    return lambda printer, op: printer.emit(line)


def ptx(instruction: str) -> OpPrinter:
    """The printer of an op that is one PTX instruction without operands,
    which the compiler must not move memory accesses across."""
    return statement(f'asm volatile("{instruction};" ::: "memory");')
