"""`gemm` kernels, one lowering per gemm family, each tiled as the kernel's
#kernel.tiling says: the GEMV, the SIMT kernel, and the tensor-core kernels
(mma.sync, wgmma, wgmma fed by TMA in a persistent kernel), each with a
SIMT variant the launcher takes for misaligned pointers.
"""

from __future__ import annotations

from collections.abc import Callable

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
from molten.passes.tiling.gemm import tiling_for

SIMT_SUFFIX = "_simt"
"""The name of a tensor-core gemm's SIMT variant ends so."""


def gemm_tiling(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
):
    """The kernel's #kernel.tiling where the `tile` pass gave it one for this
    schedule, else the one it would give (for a named M of at most
    `rows_most` rows, where given)."""
    tiling = kfunc.tiling_under(schedule)
    if isinstance(tiling, kernel.TilingAttr):
        return tiling
    return tiling_for(kfunc, schedule, rows_most)


def lower_gemv_kernel(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
) -> LoweredKernel:
    """A GEMV: K split across the block's threads (`k_lanes`)."""
    return lower_gemv(kfunc, schedule, gemm_tiling(kfunc, schedule, rows_most))


def lower_simt_kernel(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
) -> LoweredKernel:
    """A gemm on the SIMT cores, each thread a fragment of outputs."""
    return lower_gemm_simt(kfunc, schedule, gemm_tiling(kfunc, schedule, rows_most))


TensorCoreProduct = Callable[
    [kernel.FuncOp, kernel.ScheduleAttr, kernel.TilingAttr], LoweredKernel
]


def _with_simt_variant(product: TensorCoreProduct):
    """The lowering of a tensor-core family: its kernel, and the SIMT kernel
    the launcher takes where a pointer is not 16-byte aligned (cp.async
    copies 16 aligned bytes, and a staged epilogue stores vectors)."""

    def lower(
        kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
    ) -> LoweredKernel:
        lowered = product(kfunc, schedule, gemm_tiling(kfunc, schedule, rows_most))
        simt = lower_simt_kernel(kfunc, simt_gemm_schedule())
        simt.op.sym_name = StringAttr(kfunc.sym_name.data + SIMT_SUFFIX)
        take_arguments_of(simt, lowered)
        gemm = GemmShape.of(kfunc, siblings=True, prologue=True)
        args = list(kfunc.body.block.args)
        lowered.fallback = simt
        operands = {args.index(gemm.source)}
        operands |= {args.index(rhs) for rhs in gemm.rhs_operands}
        lowered.aligned = tuple(sorted(operands | set(cuda.vector_params(lowered.op))))
        return lowered

    return lower


lower_mma_kernel = _with_simt_variant(
    lambda kfunc, schedule, tiling: lower_gemm_mma(kfunc, tiling)
)
"""mma.sync on fragments ldmatrix reads from cp.async's stages."""
lower_wgmma_kernel = _with_simt_variant(
    lambda kfunc, schedule, tiling: lower_gemm_wgmma(kfunc, tiling)
)
"""sm_90a's wgmma on swizzled tiles cp.async fills."""
lower_tma_kernel = _with_simt_variant(
    lambda kfunc, schedule, tiling: lower_gemm_wgmma_tma(
        kfunc, tiling, schedule.persistent.data, schedule.cluster.data
    )
)
"""The persistent wgmma kernel, a producer warpgroup loading by TMA."""
