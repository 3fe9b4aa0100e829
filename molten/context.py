"""The xDSL context that knows every dialect Molten's IR may contain."""

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.dialects.scf import Scf
from xdsl.ir import Dialect
from xdsl.utils.exceptions import VerifyException

from molten.dialects.cuda import Cuda
from molten.dialects.kernel import Kernel
from molten.dialects.molten import Molten

DIALECTS: tuple[Dialect, ...] = (Builtin, Func, Arith, Math, Scf, Molten, Kernel, Cuda)


def molten_context() -> Context:
    """A fresh context with builtin, func and Molten's dialects loaded."""
    ctx = Context()
    for dialect in DIALECTS:
        ctx.load_dialect(dialect)
    return ctx


def parse_module(text: str, name: str = "<string>") -> ModuleOp:
    """Parses and verifies MLIR text in Molten's context; errors point at the
    text's lines (a parse error as a ParseError, a rule broken as the rule's
    MoltenError, other verifier errors as a GraphError)."""
    from molten.diagnostics import Diagnostic, locate, parse_located
    from molten.errors import GraphError, MoltenError

    try:
        module = parse_located(molten_context(), text, name)
    except Diagnostic as error:  # well-formed text, ill-formed IR (dominance)
        raise GraphError(str(error)) from None
    try:
        module.verify()
    except VerifyException as error:
        located = locate(module, error, text, name)
        kind = type(error) if isinstance(error, MoltenError) else GraphError
        raise kind(located) from None
    return module
