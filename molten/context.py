"""The xDSL context that knows every dialect Molten's IR may contain."""

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.dialects.scf import Scf
from xdsl.ir import Dialect
from xdsl.parser import Parser

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
    """Parses and verifies MLIR text in Molten's context."""
    module = Parser(molten_context(), text, name).parse_module()
    module.verify()
    return module
