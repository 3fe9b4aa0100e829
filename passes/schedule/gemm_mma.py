"""The mma.sync gemm family (sm_80 and the portable sm_90, where wgmma does
not take the gemm): f16 and bf16 on m16n8k16 in 128x128 block tiles of
four 64x64 warps, four stages of cp.async; f32 as 3xTF32 on m16n8k8 in
64x128 tiles of four 64x32 warps."""

from __future__ import annotations

from molten.dialects import kernel
from molten.passes.schedule.common import (
    FamilyRule,
    KernelBody,
    takes_tensor_cores,
    takes_tf32,
)
from molten.passes.schedule.target import Target

MMA_GEMM_BLOCK = 128
"""Four warps: each holds a 64x64 warp tile's f32 accumulators (128
registers a thread)."""


MMA_GEMM_TILE = (128, 128, 32)
"""The block tile of a tensor-core gemm: 2x2 warp tiles, two k16 steps per
stage."""


MMA_GEMM_WARP = (64, 64)
"""A warp's tile: 4x8 mma.sync m16n8k16 per k16 step."""


MMA_GEMM_STAGES = 4
"""Operand tiles in flight (cp.async), to cover global memory latency."""


TF32_GEMM_TILE = (64, 128, 16)
"""The block tile of an f32 gemm on tensor cores (3xTF32, mma.sync
m16n8k8): a K step of 16, four stages of f32 tiles in 48 KiB."""


TF32_GEMM_WARP = (64, 32)


TF32_GEMM_BLOCK = 128
"""Four warps of 64x32. A 64x64 warp tile (128 accumulators a thread) with
3xTF32's split fragments and partial sums spills (up to 100 bytes, ptxas
for sm_80 and sm_90); 64x32 spills none. Measured on the H100 against
cuBLAS f32 (benchmarks/experiments/tf32_schedules.py, 2026-11-28): 64x128
block tiles of four such warps ran 1.00-1.22x of cuBLAS on KernelBench's
four f32 shapes, 128x128 tiles of eight 0.90-1.11x."""


class MmaRule(FamilyRule):
    """A gemm of one matmul that mma.sync takes (16-bit, or f32 as 3xTF32)."""

    kind = kernel.KernelKind.GEMM

    def applies(self, body: KernelBody, target: Target) -> bool:
        (matmul,) = body.matmuls
        return takes_tf32(matmul) or takes_tensor_cores(matmul)

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        if takes_tf32(body.matmuls[0]):
            return kernel.ScheduleAttr(
                kernel.ScheduleFamily.GEMM_MMA,
                TF32_GEMM_BLOCK,
                tile=TF32_GEMM_TILE,
                warp=TF32_GEMM_WARP,
                stages=MMA_GEMM_STAGES,
            )
        return kernel.ScheduleAttr(
            kernel.ScheduleFamily.GEMM_MMA,
            MMA_GEMM_BLOCK,
            tile=MMA_GEMM_TILE,
            warp=MMA_GEMM_WARP,
            stages=MMA_GEMM_STAGES,
        )
