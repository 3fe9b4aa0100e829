"""`gemm` kernels: the kernel's #kernel.tiling picks the GEMV, a tensor-core
kernel (wgmma or mma.sync, with a SIMT variant for misaligned pointers) or
the SIMT kernel.
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from molten.dialects import cuda, kernel
from molten.passes.lowering.gemm_mma import lower_gemm_mma
from molten.passes.lowering.gemm_simt import lower_gemm_simt
from molten.passes.lowering.gemm_wgmma import lower_gemm_wgmma
from molten.passes.lowering.gemm_wgmma_tma import lower_gemm_wgmma_tma
from molten.passes.lowering.gemv import lower_gemv
from molten.passes.lowering.kernels import LoweredKernel, take_arguments_of
from molten.passes.lowering.matmul import GemmShape
from molten.passes.schedule.gemm_simt import simt_gemm_schedule
from molten.passes.tile import tiling_for

SIMT_SUFFIX = "_simt"
"""The name of a tensor-core gemm's SIMT variant ends so."""


def gemm_tiling(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
):
    """The kernel's #kernel.tiling where the `tile` pass gave it one for this
    schedule, else the one it would give (for a named M of at most
    `rows_most` rows, where given)."""
    if kfunc.tiling is not None and kfunc.schedule == schedule:
        return kfunc.tiling
    return tiling_for(kfunc, schedule, rows_most)


def lower_gemm(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
) -> LoweredKernel:
    """A gemm kernel of the schedule's family, tiled as its #kernel.tiling
    says: a GEMV (K split across threads), on tensor cores (mma.sync,
    wgmma, or wgmma fed by TMA in a persistent kernel), else on the SIMT
    cores, each thread a fragment of outputs. Over a named M, of at most
    `rows_most` rows where given."""
    tiling = gemm_tiling(kfunc, schedule, rows_most)
    family = schedule.family.data
    if family == kernel.ScheduleFamily.GEMV:
        return lower_gemv(kfunc, schedule, tiling)
    if family == kernel.ScheduleFamily.GEMM_SIMT:
        return lower_gemm_simt(kfunc, schedule, tiling)
    if family == kernel.ScheduleFamily.GEMM_TMA:
        lowered = lower_gemm_wgmma_tma(
            kfunc, tiling, schedule.persistent.data, schedule.cluster.data
        )
    elif family == kernel.ScheduleFamily.GEMM_WGMMA:
        lowered = lower_gemm_wgmma(kfunc, tiling)
    else:
        lowered = lower_gemm_mma(kfunc, tiling)
    # cp.async copies 16 aligned bytes, and a staged epilogue stores
    # vectors: for pointers at a lesser alignment the launcher takes the
    # SIMT kernel instead.
    simt = lower_gemm(kfunc, simt_gemm_schedule())
    simt.op.sym_name = StringAttr(kfunc.sym_name.data + SIMT_SUFFIX)
    take_arguments_of(simt, lowered)
    gemm = GemmShape.of(kfunc, siblings=True, prologue=True)
    args = list(kfunc.body.block.args)
    lowered.fallback = simt
    operands = {args.index(gemm.source)}
    operands |= {args.index(rhs) for rhs in gemm.rhs_operands}
    lowered.aligned = tuple(sorted(operands | set(cuda.vector_params(lowered.op))))
    return lowered
