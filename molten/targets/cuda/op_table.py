"""The table of op printers, by op class, merged from each kind's."""

from __future__ import annotations

from xdsl.ir import Operation

from molten.targets.cuda.arithmetic import ARITHMETIC_PRINTERS
from molten.targets.cuda.body import OpPrinter
from molten.targets.cuda.control_flow import CONTROL_FLOW_PRINTERS
from molten.targets.cuda.host import HOST_PRINTERS
from molten.targets.cuda.memory import MEMORY_PRINTERS
from molten.targets.cuda.tensor_cores import TENSOR_CORE_PRINTERS
from molten.targets.cuda.threads import THREAD_PRINTERS

OP_PRINTERS: dict[type[Operation], OpPrinter] = {
    **ARITHMETIC_PRINTERS,
    **MEMORY_PRINTERS,
    **THREAD_PRINTERS,
    **TENSOR_CORE_PRINTERS,
    **CONTROL_FLOW_PRINTERS,
    **HOST_PRINTERS,
}
"""Each op class's printer. An op whose own class has none is printed by its
nearest base class's (`body.printer_for`)."""
