"""The SIMT gemm family: f32 gemms and shapes the tensor cores do not take
(and a tensor-core gemm's variant for misaligned operands), a thread a
fragment of outputs: 128x128 block tiles where they fill the SMs, else
64x64."""

from __future__ import annotations

import math

from molten.dialects import kernel, molten
from molten.dialects.molten import shape_of
from molten.passes.schedule.common import FamilyRule, KernelBody
from molten.passes.schedule.target import DEFAULT_TARGET, Target

GEMM_BLOCK = 256


GEMM_TILE = (64, 64, 16)
"""A SIMT gemm's block tile: 4x4 outputs a thread."""


GEMM_LARGE_TILE = (128, 128, 8)
"""A SIMT gemm's block tile where such tiles still give every SM a block:
8x8 outputs a thread, four FMAs for each value read from shared memory
(4x4 has two). With the next K step's tiles loaded during this one's, a K
step of 8 ran 6% faster than one of 16 and 11% faster than one of 32 on
the H100 (f32, 4096 cubed, two blocks an SM): fewer registers hold the
loads in flight."""


def simt_gemm_schedule(
    matmul: molten.MatmulOp | None = None, target: Target = DEFAULT_TARGET
) -> kernel.ScheduleAttr:
    """The schedule of a gemm on the SIMT cores (f32, shapes tensor cores do
    not take, and, without a matmul, a tensor-core gemm's variant for
    misaligned operands): large tiles where they fill the SMs."""
    if matmul is not None:
        result = shape_of(matmul.result)
        bm, bn, _ = GEMM_LARGE_TILE
        tiles = math.ceil(result[-2] / bm) * math.ceil(result[-1] / bn)
        if tiles * math.prod(result[:-2]) >= target.sm_count:
            return kernel.ScheduleAttr(
                kernel.ScheduleFamily.GEMM_SIMT, GEMM_BLOCK, tile=GEMM_LARGE_TILE
            )
    return kernel.ScheduleAttr(
        kernel.ScheduleFamily.GEMM_SIMT, GEMM_BLOCK, tile=GEMM_TILE
    )


class SimtRule(FamilyRule):
    """Any gemm no rule before took."""

    kind = kernel.KernelKind.GEMM

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        return simt_gemm_schedule(body.matmuls[0], target)
