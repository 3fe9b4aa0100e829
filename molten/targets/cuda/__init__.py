"""The `-t cuda` target: a cuda-dialect module printed as one `.cu` file and
its header.

The printer walks each `cuda.kernel` and `cuda.host_func` body and writes a
C++ statement per op, each op by its printer in a table of op class ->
printer (`OP_PRINTERS`, merged from one table per kind of op: `arithmetic`,
`memory`, `threads`, `tensor_cores`, `control_flow`, `host`); Jinja2
templates hold the rest (file skeleton, device helpers, launcher
signatures, the header: `unit`). Every identifier that reaches C++ (kernel,
launcher, parameter and variable names, all from the graph) is reduced to
`[A-Za-z0-9_]`, kept clear of C++ keywords and reserved names, and made
unique, so no name in a graph can inject code (`names`).
"""

from molten.targets.cuda.body import BodyPrinter, OpPrinter, printer_for
from molten.targets.cuda.c_types import c_type, float_literal
from molten.targets.cuda.names import Scope, c_identifier
from molten.targets.cuda.op_table import OP_PRINTERS
from molten.targets.cuda.tensor_cores import wgmma_helper_name, wgmma_helpers
from molten.targets.cuda.unit import (
    CudaHeaderTarget,
    CudaTarget,
    TranslationUnit,
    print_cuda,
)

__all__ = [
    "OP_PRINTERS",
    "BodyPrinter",
    "CudaHeaderTarget",
    "CudaTarget",
    "OpPrinter",
    "Scope",
    "TranslationUnit",
    "c_identifier",
    "c_type",
    "float_literal",
    "print_cuda",
    "printer_for",
    "wgmma_helper_name",
    "wgmma_helpers",
]
