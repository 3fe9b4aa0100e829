"""The printers of what a block's (or a grid's) threads do together:
barriers, the last arrival at a counter, warp shuffles."""

from __future__ import annotations

from xdsl.ir import Operation

from molten.dialects import cuda
from molten.targets.cuda.body import BodyPrinter, OpPrinter, statement


def _named_barrier(printer: BodyPrinter, op: cuda.NamedBarrierOp) -> None:
    barrier, threads = printer.name(op.id), op.threads.value.data
    printer.emit(
        f'asm volatile("bar.sync %0, {threads};" :: "r"((int){barrier}) : "memory");'
    )


def _group_barrier(printer: BodyPrinter, op: cuda.GroupBarrierOp) -> None:
    counters, group, target = (printer.name(v) for v in op.operands)
    printer.emit(f"molten_group_barrier({counters} + {group}, {target});")


def _last_arrival(printer: BodyPrinter, op: cuda.LastArrivalOp) -> None:
    counters, group, count = (printer.name(v) for v in op.operands)
    among = "" if op.threads is None else f", {op.threads.value.data}"
    printer.define(
        op.result, f"molten_last_arrival({counters} + {group}, {count}{among})"
    )


def _shfl_xor(printer: BodyPrinter, op: cuda.ShflXorOp) -> None:
    value, offset = printer.name(op.value), op.offset.value.data
    printer.define(op.result, f"__shfl_xor_sync(0xffffffffu, {value}, {offset})")


THREAD_PRINTERS: dict[type[Operation], OpPrinter] = {
    cuda.SyncThreadsOp: statement("__syncthreads();"),
    cuda.NamedBarrierOp: _named_barrier,
    cuda.GroupBarrierOp: _group_barrier,
    cuda.LastArrivalOp: _last_arrival,
    cuda.ShflXorOp: _shfl_xor,
}
