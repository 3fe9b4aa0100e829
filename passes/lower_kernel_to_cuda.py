"""`lower-kernel-to-cuda`: kernel.func bodies to cuda kernels, graphs to launchers.

A kernel's tensors become global pointers: its inputs (read only) then its
outputs. Its body, a DAG of molten ops, is evaluated per element: the value
of a tensor at an index is computed from its operands at the indices its op
maps to (broadcasting drops or zeroes axes; reshape, transpose and
rotate_half remap them), loading inputs and reusing what was already
computed. Arithmetic is f32: f16/bf16 are converted on load, rounded at a
molten.cast to them and on store. `index` values are 64-bit; a named
dimension's size is an `index` parameter of the kernels and the launcher
(row, scan and pointwise kernels, a gemm over a named M and attention
over a named sequence, by size class).

* pointwise: a grid-stride loop over the elements of the kernel's shape.
* row_reduce: a grid-stride loop over rows, as the schedule says: several
  rows per block, a block per row, a row split across a group of blocks
  that exchange partial results through global memory (a cooperative
  launch), or, for strided rows (axes after the reduced ones), a thread a
  row, consecutive threads on consecutive rows. Each reduction accumulates
  in f32 over the thread's part, then combines across the row's threads:
  warp shuffles, one shared-memory slot per warp, shuffles again, so every
  thread holds the total. When the
  schedule holds the row in registers the input is read once; otherwise
  the row is walked again for each reduction and for the store.
* gemm, as its #kernel.tiling says: output tiles of the block tile per
  block; on tensor cores (mma.sync m16n8k16 on fragments read by ldmatrix
  from shared memory that `stages` operand tiles flow into by cp.async),
  with a SIMT variant launched for operands not 16-byte aligned; on the
  SIMT cores, each thread accumulating a micro-tile (4x4, 8x8) while f32
  operand tiles pass through two stages of shared memory; or, for a few
  rows (`k_lanes`), as a GEMV that streams B once with K split across the
  block's threads. The
  epilogue (bias, activation, residual, cast) is evaluated on the f32
  accumulators before a single guarded store. Batch axes run along
  blockIdx.z, broadcast like numpy; transposed operands are read through
  their strides.
  On sm_90a the gemm runs on wgmma: the cp.async kernel, or the persistent
  kernel fed by TMA (a producer warpgroup, `persistent` blocks looping over
  the tiles).
* scan: a grid-stride loop over rows, each walked in steps that carry the
  sum of the steps before; a Kogge-Stone scan across lanes.
* attention: flash attention, a block of query rows against tiles of keys
  with the online softmax (mma.sync, or wgmma on sm_90a), query heads that
  share a KV head packed into a block's rows, keys split into parts that
  the last block of a group combines.

The code of each kernel kind is one module of `molten.passes.lowering`
(pointwise, row_reduce with split_row, scan, gemm choosing gemv, gemm_simt,
gemm_mma, gemm_wgmma (both on tiled_gemm) or gemm_wgmma_tma, attention with
its stages: attention_softmax, attention_mma or attention_wgmma,
attention_split), built from
its shared blocks: index arithmetic (emitter), per-element evaluation
(evaluator), kernel parameters and stores (kernels), block reductions
(reductions), the gemm epilogue and staged store (epilogue) and the host
launcher (launcher). `passes/families.py` names each family's lowering; this module
lowers each kernel by its schedule's family.

The graph's `func.func` becomes a `cuda.host_func` launching the kernels in
order, with `cuda.alloc`/`cuda.free` buffers for values passed between them
and a `cuda.copy` for an output that is an input or a value returned twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import OpResult
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from molten.dialects import kernel
from molten.dialects.molten import FLOAT, element_kind, graph_name
from molten.errors import UnsupportedError
from molten.passes.families import family_of
from molten.passes.lowering.gemm_mma import MMA_SHAPE
from molten.passes.lowering.kernels import LoweredKernel, lower_variants
from molten.passes.lowering.launcher import lower_graph

__all__ = ["MMA_SHAPE", "LowerKernelToCuda", "lower_kernel"]


def lower_scheduled(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
) -> LoweredKernel:
    """A kernel under one schedule, by its family's lowering (over a named
    size, the variant's of at most `rows_most` rows)."""
    return family_of(schedule).lower(kfunc, schedule, rows_most)


def check_element_types(kfunc: kernel.FuncOp) -> None:
    """An UnsupportedError naming the first integer or bool tensor of a
    gemm kernel: the interpreter runs those, the CUDA lowering does not yet
    (its epilogue is float)."""
    if kfunc.kind.data in (
        kernel.KernelKind.POINTWISE,
        kernel.KernelKind.SCAN,
        kernel.KernelKind.SCATTER,
        kernel.KernelKind.ROW_REDUCE,
        # Its matmuls take floats; integers and bools make masks, evaluated
        # per score as in a pointwise kernel.
        kernel.KernelKind.ATTENTION,
    ):
        return
    values = [*kfunc.body.block.args]
    values += [r for o in kfunc.body.walk() for r in o.results]
    for value in values:
        t = value.type
        if isinstance(t, TensorType) and element_kind(t.element_type) != FLOAT:
            what = (
                f"{value.owner.name} result" if isinstance(value, OpResult) else "input"
            )
            raise UnsupportedError(
                f"lower-kernel-to-cuda: @{kfunc.sym_name.data}: {what} "
                f"{value.name_hint or ''} {t} holds {t.element_type}; integer "
                f"and bool tensors are lowered to CUDA in pointwise, row_reduce, "
                f"scan and attention kernels, not yet in a {kfunc.kind.data.value} "
                "kernel (the interpreter, molten.interpret, runs them)"
            )


def lower_kernel(kfunc: kernel.FuncOp) -> list[LoweredKernel]:
    """The cuda kernels of a kernel.func: one, or one per variant."""
    check_element_types(kfunc)
    if kfunc.variants is not None:
        return lower_variants(kfunc, lower_scheduled)
    if kfunc.schedule is None:
        raise PassFailedException(
            f"lower-kernel-to-cuda: @{kfunc.sym_name.data} has no schedule; run "
            "kernel-schedule first"
        )
    return [lower_scheduled(kfunc, kfunc.schedule)]


@dataclass(frozen=True)
class LowerKernelToCuda(ModulePass):
    """Lowers kernel.func bodies to cuda kernels and graphs to cuda launchers."""

    name = "lower-kernel-to-cuda"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = {
            k.sym_name.data: lower_kernel(k)
            for k in op.ops
            if isinstance(k, kernel.FuncOp)
        }
        graphs: dict[str, list[func.FuncOp]] = {}
        for graph in op.ops:
            if isinstance(graph, func.FuncOp):
                graphs.setdefault(graph_name(graph), []).append(graph)
        for copies in graphs.values():
            Rewriter.replace_op(copies[0], lower_graph(copies, kernels))
            for copy in copies[1:]:
                Rewriter.erase_op(copy)
        for k in [k for k in op.ops if isinstance(k, kernel.FuncOp)]:
            ops = [
                o
                for lowered in kernels[k.sym_name.data]
                for o in (lowered.op, lowered.fallback and lowered.fallback.op)
                if o is not None
            ]
            Rewriter.replace_op(k, ops, [])
