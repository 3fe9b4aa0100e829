"""Errors in a spec's text, pointed at its lines: `file:line:col: error: ...`.

Shared by `molten-opt`, the `molten` CLI and `DataflowGraph.from_mlir`: a
parser that gives each op its source location, and the search for the op an
error is about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span

from molten.conventions import NAME_ATTR, graph_updates
from molten.errors import GraphError


class MoltenParseError(ParseError):
    """A parse error printed as `file:line:col: error: message`, the source line
    and carets, in every mode (xDSL prints a ParseError itself under
    --parsing-diagnostics)."""

    def __str__(self) -> str:
        context = self.span.print_with_context().splitlines()[1:]
        header = f"{self.span.get_location()}: error: {self.msg}"
        return "\n".join([header, *(line for line in context if line.strip())])


_OP_NAME = re.compile(r'\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w.$]*)')


class LocatingParser(Parser):
    """A parser that gives each op it parses its source location, and turns
    the errors xDSL raises while building an op (a type constraint checked by
    the assembly format, a float literal too large for its type) into parse
    errors at that op."""

    def __init__(self, *args, line_offset: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.line_offset = line_offset
        self.clipped_names: dict[SSAValue, str] = {}
        """Block arguments whose SSA name lost a trailing `_<digits>` (xDSL
        reads `%h_0` as `h`), with the name as written."""

    def _register_ssa_definition(
        self, name: str, values: Sequence[SSAValue], span: Span
    ) -> None:
        super()._register_ssa_definition(name, values, span)
        if not SSAValue.is_valid_name(name):  # %0 names nothing
            return
        for value in values:
            if isinstance(value, BlockArgument) and value.name_hint != name:
                self.clipped_names[value] = name

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        start = span.get_location()
        try:
            op = super().parse_operation()
        except (VerifyException, OverflowError) as error:
            line = span.input.content[span.start :].split("\n", 1)[0]
            match = _OP_NAME.match(line)
            name = f"{match.group(1)}: " if match else ""
            raise MoltenParseError(span, f"{name}{error}") from None
        if not isinstance(op.location, FileLineColLoc):
            op.location = FileLineColLoc(
                StringAttr(start.file),
                IntAttr(start.line + self.line_offset),
                IntAttr(start.col),
            )
        return op


_BOM = "\ufeff"


def decode_spec(data: bytes, name: str) -> str:
    """A spec's bytes as UTF-8 text (`parse_located` drops a leading
    byte-order mark). Bytes that are not UTF-8 are an error at their line and
    column, not characters silently replaced."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = error.start - (before.rfind(b"\n") + 1) + 1
        raise Diagnostic(
            f"{name}:{line}:{column}: error: byte 0x{data[error.start]:02x} is not "
            "UTF-8 text; a spec is UTF-8"
        ) from None
    return text


MAX_NESTING = 64
"""Brackets a spec may nest ((, [, {, <): real specs nest a handful; xDSL's
parser recurses per level and would run out of Python stack near a few
hundred."""


_ESCAPE = re.compile(r'\\(?:[\\"nt]|[0-9a-fA-F]{2})')
"""The escapes of an MLIR string literal."""


def unreadable(source: str, name: str, line_offset: int = 0) -> str | None:
    """A located error at the first bracket nested deeper than MAX_NESTING
    (outside comments and string literals) or the first string literal not
    closed on its line, or None."""
    depth, line, column, i, n = 0, 1, 0, 0, len(source)
    while i < n:
        char = source[i]
        column += 1
        if char == "\n":
            line, column = line + 1, 0
        elif char == "/" and source.startswith("//", i):
            i = source.find("\n", i)
            if i < 0:
                break
            continue
        elif char == '"':
            start_column = column
            i += 1
            while i < n and source[i] != '"' and source[i] != "\n":
                if source[i] == "\\" and not _ESCAPE.match(source, i):
                    # xDSL's lexer reports an unknown escape as an unclosed
                    # string: say what it is.
                    escape = source[i : i + 2].rstrip("\n")
                    return (
                        f"{name}:{line + line_offset}:{column + 1}: error: unknown "
                        f"escape {escape} in a string literal (MLIR's escapes are "
                        '\\\\, \\", \\n, \\t and \\ with two hex digits)'
                    )
                i += 2 if source[i] == "\\" else 1
                column += 1
            if i >= n or source[i] != '"':
                # xDSL's lexer backtracks exponentially on an unclosed string
                # on a long line (its regex nests quantifiers): say it here.
                return (
                    f"{name}:{line + line_offset}:{start_column}: error: string "
                    "literal not closed on its line"
                )
        elif char in "([{<":
            depth += 1
            if depth > MAX_NESTING:
                header = (
                    f"{name}:{line + line_offset}:{column}: error: brackets nested "
                    f"more than {MAX_NESTING} deep; Molten reads specs nested less "
                    "deeply"
                )
                text = source.splitlines()[line - 1]
                if column > 160:  # a long line: the caret would say little
                    return header
                return f"{header}\n{text}\n{' ' * (column - 1)}^"
        elif char in ")]}" or (char == ">" and source[i - 1 : i] != "-"):
            depth = max(0, depth - 1)
        i += 1
    return None


def is_blank(source: str) -> bool:
    """Whether `source` holds only whitespace and `//` comments."""
    return all(
        not line.strip() or line.strip().startswith("//")
        for line in source.splitlines()
    )


def parse_located(
    ctx: Context,
    text: str,
    name: str,
    line_offset: int = 0,
    implicit_module: bool = True,
) -> ModuleOp:
    """`text` parsed with every op located; a parse error as MoltenParseError.
    Text with no ops (blank, or comments only) is an empty module, as in
    mlir-opt."""
    if is_blank(text):
        return ModuleOp([])
    text = text.removeprefix(_BOM)  # as editors on Windows write one
    if (problem := unreadable(text, name, line_offset)) is not None:
        raise Diagnostic(problem)
    try:
        # The lexer reads the first token as the parser is made: its errors
        # (an unexpected character) are parse errors too.
        parser = LocatingParser(ctx, text, name, line_offset=line_offset)
        module = parser.parse_module(implicit_module)
        _keep_input_names(module, parser.clipped_names)
    except MoltenParseError:
        raise
    except ParseError as error:
        raise MoltenParseError(error.span, error.msg) from None
    except RecursionError:  # nesting the bracket count does not see
        raise Diagnostic(
            f"{name}: error: the spec nests too deeply for Molten to read"
        ) from None
    if (problem := first_unusable_function(module)) is not None:
        op, error = problem
        raise Diagnostic(locate_op(op, error, text, line_offset)) from None
    if (misuse := first_use_before_definition(module)) is not None:
        op, index = misuse
        value = op.operands[index]
        shown = f"%{value.name_hint}" if value.name_hint else "a value"
        own = "its own result" if value.owner is op else f"{shown}, defined later"
        error = VerifyException(
            f"{op.name}: operand {index} uses {own}: a value must be defined "
            "before its first use (SSA dominance)"
        )
        raise Diagnostic(locate_op(op, error, text, line_offset)) from None
    return module


def _keep_input_names(module: ModuleOp, written: dict[SSAValue, str]) -> None:
    """Gives each `func.func` input whose SSA name lost part of its written
    name a `molten.name` attribute holding the name as written, so `%h_0`
    and `%h_1` stay two inputs named as the spec names them."""
    for func in module.walk():
        if not isinstance(func, FuncOp) or not func.body.blocks:
            continue
        args = func.body.blocks[0].args  # (several blocks: refused after)
        if not any(arg in written for arg in args):
            continue
        old = (
            func.arg_attrs.data if func.arg_attrs else [DictionaryAttr({})] * len(args)
        )
        func.arg_attrs = ArrayAttr(
            [
                DictionaryAttr({NAME_ATTR: StringAttr(written[arg]), **attrs.data})
                if arg in written
                else attrs
                for arg, attrs in zip(args, old, strict=True)
            ]
        )


def first_unusable_function(
    module: Operation,
) -> tuple[Operation, VerifyException] | None:
    """The first function that is only a declaration (no body: nothing for
    Molten to compile), whose body is several blocks (branches: a Molten
    function is one block of ops), or that redefines a symbol of its
    module."""

    seen: set[tuple[Block | None, str]] = set()
    for op in module.walk():
        symbol = getattr(op, "sym_name", None)
        if not isinstance(symbol, StringAttr):
            continue
        misnamed = _misnamed(op) or _misupdated(op)
        if misnamed is not None:
            return op, VerifyException(misnamed)
        blocks = [len(list(region.blocks)) for region in op.regions]
        if any(count > 1 for count in blocks):
            return op, VerifyException(
                f"{op.name} @{symbol.data} has a body of {max(blocks)} blocks; a "
                "Molten function is one block of ops, without branches"
            )
        if _is_declaration(op):
            return op, VerifyException(
                f"func.func @{symbol.data} is a declaration without a body; "
                "Molten compiles functions with bodies only"
            )
        key = (op.parent_block(), symbol.data)  # symbols are unique per block
        if key in seen:
            return op, VerifyException(
                f"{op.name} @{symbol.data} is defined twice in its module; "
                "symbols must be unique"
            )
        seen.add(key)
    return None


def _misnamed(op: Operation) -> str | None:
    """Why an input's or result's `molten.name` of function `op` is not a
    name (a string), or None."""
    for role, attrs in (
        ("input", getattr(op, "arg_attrs", None)),
        ("result", getattr(op, "res_attrs", None)),
    ):
        if not isinstance(attrs, ArrayAttr):
            continue
        for index, entry in enumerate(attrs.data):
            name = (
                entry.data.get(NAME_ATTR) if isinstance(entry, DictionaryAttr) else None
            )
            if name is not None and not isinstance(name, StringAttr):
                return (
                    f"{op.name} @{op.sym_name.data}: {role} {index}'s {NAME_ATTR} "
                    f'is {name}, not a string (a name is "x")'
                )
    return None


def _misupdated(op: Operation) -> str | None:
    """Why a result's `molten.updates` of function `op` names no input it
    can update in place (`graph_updates`), or None."""
    if not isinstance(op, FuncOp):
        return None
    try:
        graph_updates(op)
    except GraphError as error:
        return str(error)
    return None


def _is_declaration(op: Operation) -> bool:
    """A func.func with a signature and no body (`func.func private @f(...)`);
    an empty `func.func @f() {}` is harmless and stays allowed."""
    from xdsl.dialects import func

    if not isinstance(op, func.FuncOp) or op.body.blocks:
        return False
    signature = op.function_type
    return bool(signature.inputs.data or signature.outputs.data)


def first_use_before_definition(module: Operation) -> tuple[Operation, int] | None:
    """The first op (in text order) with an operand not defined before it: by
    an earlier op of its block or of an enclosing block, or as an argument of
    its block or of an enclosing one. xDSL's verifier does not check
    dominance, and passes then fail in ways that say nothing of the spec.
    """
    visible: set[object] = set()

    def walk(block: Block) -> tuple[Operation, int] | None:
        # What this block adds (a region of several blocks made all of its
        # values visible up front; they stay until the region is done).
        defined = [arg for arg in block.args if arg not in visible]
        visible.update(defined)
        for op in block.ops:
            for index, operand in enumerate(op.operands):
                if operand not in visible:
                    return op, index
            for region in op.regions:
                if (found := walk_region(region)) is not None:
                    return found
            fresh = [result for result in op.results if result not in visible]
            visible.update(fresh)
            defined.extend(fresh)
        visible.difference_update(defined)
        return None

    def walk_region(region: Region) -> tuple[Operation, int] | None:
        # Several blocks form a CFG, where an earlier block need not
        # dominate a later one: that is the verifier's business (Molten's
        # regions have one block); only uses before definitions inside
        # each block are reported.
        several = len(region.blocks) > 1
        everything = (
            [
                value
                for block in region.blocks
                for value in (*block.args, *(r for op in block.ops for r in op.results))
            ]
            if several
            else []
        )
        visible.update(everything)
        for block in region.blocks:
            if (found := walk(block)) is not None:
                return found
        visible.difference_update(everything)
        return None

    for region in module.regions:
        if (found := walk_region(region)) is not None:
            return found
    return None


def error_message(error: Exception) -> str:
    return str(error).removeprefix("Operation does not verify: ")


def locate_op(
    op: Operation, error: Exception, source: str, line_offset: int, name: str = ""
) -> str:
    """`error` as `file:line:col: error: message` and the source line of `op`;
    for an op without a source location (one a pass made), `name: error:`
    and the op."""
    message = error_message(error)
    location = op.location
    if not isinstance(location, FileLineColLoc):
        return f"{name}: error: {message}\n  in op: {op_header(op)}"
    line, col = location.line.data, location.column.data
    header = f"{location.filename.data}:{line}:{col}: error: {message}"
    lines = source.splitlines()
    index = line - line_offset - 1
    if not 0 <= index < len(lines):
        return header
    return f"{header}\n{lines[index]}\n{' ' * (col - 1)}^"


MAX_OP_HEADER = 200
"""Characters of an op an error shows: never a generated kernel whole."""


def op_header(op: Operation) -> str:
    """The first line of `op` as printed (its name, operands and types; not
    its body), shortened."""
    first = str(op).split("\n", 1)[0].rstrip(" {")
    if len(first) > MAX_OP_HEADER:
        first = first[: MAX_OP_HEADER - 3] + "..."
    return first


def error_line(message: str, tool: str) -> str:
    """`message` as a tool prints it: as it is when it already says where
    (`file:line:col: error:`), else after `tool: error:`."""
    located = ": error: " in message.split("\n", 1)[0]
    return message if located else f"{tool}: error: {message}"


class Diagnostic(DiagnosticException):
    """An error already formatted for the user, `file:line:col: error: ...`."""


def first_failing_op(module: Operation) -> tuple[Operation, Exception] | None:
    """The first op, in walk order, whose own verifier fails."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except Exception as error:  # the op's verifier may raise anything
            return op, error
    return None


def locate(
    module: Operation, error: Exception, source: str, name: str, line_offset: int = 0
) -> str:
    """`error` as `file:line:col: error: message` plus the source line, about
    the first op whose verifier fails (or the error alone if none does)."""
    failing = first_failing_op(module)
    if failing is None:
        return f"{name}: error: {error_message(error)}"
    op, error = failing
    return locate_op(op, error, source, line_offset, name)
