"""`kernel-schedule`: a `#kernel.schedule` for every kernel, by heuristics.

Everything below the kernel level takes its launch and tiling parameters
from this attribute and invents none. The heuristics here are plain:

* `vector`: the elements of the kernel's narrowest element type in one
  16-byte access (4 f32, 8 f16 or bf16), halved until it divides the
  innermost dimension that runs of consecutive elements lie along (the
  row's for row_reduce, the output's for pointwise); `vectorize` later
  turns each run's accesses into one where it proves them aligned;
* pointwise: 256 threads, one run of `vector` elements per thread and
  iteration of a grid-stride loop;
* row_reduce: one block per row, the fewest threads (a multiple of 32, at
  most 1024) that cover the row with at most max(8, vector) elements each,
  held in registers (`elements_per_thread`, whole runs); a longer row gets
  512 threads and `elements_per_thread = vector`: it is read again for each
  pass over it;
* gemm: 256 threads on 64x64 output tiles with a K step of 16.

A schedule already present (written by hand or by an autotuner) is kept.
"""

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.dialects.cuda import VECTOR_BYTES, element_bytes
from molten.dialects.molten import shape_of

POINTWISE_BLOCK = 256
MAX_BLOCK = 1024
LONG_ROW_BLOCK = 512
"""Threads per row too long for registers: up to 128 registers each, so the
loops over the row (unrolled by nvcc) do not spill."""
MAX_ROW_ELEMENTS_PER_THREAD = 8
GEMM_BLOCK = 256
GEMM_TILE = (64, 64, 16)


def reduced_shape(body_ops: list[Operation]) -> tuple[int, ...]:
    """The shape of a row_reduce kernel's reduced axes (its rows' shape)."""
    for op in body_ops:
        if isinstance(op, molten.ReductionOp):
            shape = shape_of(op.input)
            return tuple(shape[i] for i in op.axes.get_values())
    raise ValueError("a row_reduce kernel without a reduction")


def vector_width(inner: int, tensors: list[SSAValue]) -> int:
    """Elements of the narrowest element type of `tensors` in one 16-byte
    access, halved until the count divides `inner`."""
    types = [t.type for t in tensors]
    assert all(isinstance(t, TensorType) for t in types)
    itemsize = min(element_bytes(t.element_type) for t in types)  # type: ignore
    width = VECTOR_BYTES // itemsize
    while inner % width:
        width //= 2
    return width


def schedule_for(
    kind: kernel.KernelKind,
    body_ops: list[Operation],
    inputs: list[SSAValue],
    outputs: list[SSAValue],
) -> kernel.ScheduleAttr:
    """The schedule of a kernel of `kind` with these body ops, inputs and
    outputs (tensors)."""
    tensors = [*inputs, *outputs]
    if kind == kernel.KernelKind.ROW_REDUCE:
        row = reduced_shape(body_ops)
        n = math.prod(row)
        width = vector_width(row[-1], tensors)
        most = max(MAX_ROW_ELEMENTS_PER_THREAD, width)
        threads = math.ceil(n / most)
        block = min(MAX_BLOCK, max(32, 32 * math.ceil(threads / 32)))
        per_thread = width * math.ceil(n / (block * width))
        if per_thread > most:
            block, per_thread = LONG_ROW_BLOCK, width
        return kernel.ScheduleAttr(
            block, rows_per_block=1, vector=width, elements_per_thread=per_thread
        )
    if kind == kernel.KernelKind.GEMM:
        return kernel.ScheduleAttr(GEMM_BLOCK, tile=GEMM_TILE)
    if kind == kernel.KernelKind.POINTWISE:
        domain = kernel.iteration_domain(outputs)
        width = vector_width(domain[-1] if domain else 1, tensors)
        return kernel.ScheduleAttr(
            POINTWISE_BLOCK, vector=width, elements_per_thread=width
        )
    raise NotImplementedError(f"kernel-schedule: no heuristic for {kind.value} kernels")


class ScheduleKernel(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: kernel.FuncOp | kernel.FusedOp, rewriter: PatternRewriter
    ):
        if op.schedule is not None:
            return
        body = op.body.block
        results = body.last_op
        assert isinstance(results, kernel.YieldOp)
        op.schedule = schedule_for(
            op.kind.data, list(body.ops), list(body.args), list(results.values)
        )
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class KernelSchedule(ModulePass):
    """Attaches a heuristic #kernel.schedule to each kernel that has none."""

    name = "kernel-schedule"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ScheduleKernel(), apply_recursively=False).rewrite_module(
            op
        )
