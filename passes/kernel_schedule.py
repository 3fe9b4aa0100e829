"""`kernel-schedule`: a `#kernel.schedule` for every kernel, by heuristics.

Everything below the kernel level takes its launch and tiling parameters
from this attribute and invents none. The heuristics here are deliberately
plain (the speed-of-light schedules come with vectorization):

* pointwise: 256 threads, one element per thread, scalar accesses;
* row_reduce: one block per row, the fewest threads (a multiple of 32, at
  most 1024) that cover the row with at most 8 elements each, held in
  registers (`elements_per_thread`); a longer row gets 1024 threads and
  `elements_per_thread = 1`: it is read again for each pass over it;
* gemm: 256 threads on 64x64 output tiles with a K step of 16.

A schedule already present (written by hand or by an autotuner) is kept.
"""

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.dialects.molten import shape_of

POINTWISE_BLOCK = 256
MAX_BLOCK = 1024
MAX_ROW_ELEMENTS_PER_THREAD = 8
GEMM_BLOCK = 256
GEMM_TILE = (64, 64, 16)


def row_length(body_ops: list[Operation]) -> int:
    """Elements per row of a row_reduce kernel: the size of its reduced axes."""
    for op in body_ops:
        if isinstance(op, molten.ReductionOp):
            shape = shape_of(op.input)
            return math.prod(shape[i] for i in op.axes.get_values())
    raise ValueError("a row_reduce kernel without a reduction")


def schedule_for(
    kind: kernel.KernelKind, body_ops: list[Operation]
) -> kernel.ScheduleAttr:
    if kind == kernel.KernelKind.ROW_REDUCE:
        n = row_length(body_ops)
        threads = math.ceil(n / MAX_ROW_ELEMENTS_PER_THREAD)
        block = min(MAX_BLOCK, max(32, 32 * math.ceil(threads / 32)))
        per_thread = math.ceil(n / block)
        if per_thread > MAX_ROW_ELEMENTS_PER_THREAD:
            per_thread = 1
        return kernel.ScheduleAttr(
            block, rows_per_block=1, elements_per_thread=per_thread
        )
    if kind == kernel.KernelKind.GEMM:
        return kernel.ScheduleAttr(GEMM_BLOCK, tile=GEMM_TILE)
    if kind == kernel.KernelKind.POINTWISE:
        return kernel.ScheduleAttr(POINTWISE_BLOCK)
    raise NotImplementedError(f"kernel-schedule: no heuristic for {kind.value} kernels")


class ScheduleKernel(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: kernel.FuncOp | kernel.FusedOp, rewriter: PatternRewriter
    ):
        if op.schedule is not None:
            return
        op.schedule = schedule_for(op.kind.data, list(op.body.block.ops))
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class KernelSchedule(ModulePass):
    """Attaches a heuristic #kernel.schedule to each kernel that has none."""

    name = "kernel-schedule"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ScheduleKernel(), apply_recursively=False).rewrite_module(
            op
        )
