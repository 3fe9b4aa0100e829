"""The wgmma gemm family (sm_90a): the cp.async kernel's candidate tiles,
stages and split-K, ranked by the estimate, and the choice between it and
the persistent TMA kernel (`wgmma_pick`), by the two kernels' estimates."""

from __future__ import annotations

import math

from molten.dialects import kernel, molten
from molten.dialects.molten import shape_of
from molten.passes.schedule.common import (
    GEMV_MAX_M,
    MAX_SPLIT,
    SPLIT_MIN_STEPS,
    SWIZZLE_K,
    FamilyRule,
    KernelBody,
    takes_tensor_cores,
)
from molten.passes.schedule.cost import (
    WGMMA_STAGES,
    WGMMA_STREAM_SECONDS,
    WgmmaCandidate,
    wgmma_schedule_of,
)
from molten.passes.schedule.persistent import (
    persistent_candidates,
    persistent_ranked,
    persistent_schedule,
    takes_persistent,
)
from molten.passes.schedule.target import Target

WGMMA_TILES = ((128, 256), (128, 128), (64, 256), (64, 128), (64, 64))
"""The output tiles (M, N) a wgmma gemm may take: 128 rows in two
warpgroups of 64 (256 threads), 64 rows in one; the K step is one
128-byte swizzled row (64 elements)."""


def wgmma_candidates(matmul: molten.MatmulOp, target: Target) -> list[WgmmaCandidate]:
    """Every tile, stage count and split-K the wgmma gemm may take, fastest
    first by the estimate (ties: larger tiles, more stages, fewer parts:
    six stages ran 4-12% faster than four on the H100 where both fit).
    A split gives each part at least SPLIT_MIN_STEPS K steps and is tried
    only while the tiles leave SMs idle."""
    result = shape_of(matmul.result)
    m, n = result[-2], result[-1]
    k = shape_of(matmul.lhs)[-2 if matmul.transpose_a is not None else -1]
    shape = (math.prod(result[:-2]), m, n, k)
    k_steps = math.ceil(k / SWIZZLE_K)
    found = []
    for tile in WGMMA_TILES:
        tiles = shape[0] * math.ceil(m / tile[0]) * math.ceil(n / tile[1])
        for stages in WGMMA_STAGES:
            if WgmmaCandidate.shared_bytes(tile, stages) > target.shared_per_block:
                continue
            for split in range(1, MAX_SPLIT + 1):
                if split > 1 and (
                    tiles * (split - 1) >= target.sm_count
                    or kernel.part_steps(k_steps, split) < SPLIT_MIN_STEPS
                    or kernel.leaves_empty_part(k_steps, split)
                ):
                    continue
                found.append(
                    WgmmaCandidate.estimate(shape, tile, stages, split, target)
                )
    return sorted(
        found,
        key=lambda c: (round(c.seconds * 1e8), -c.rows * c.cols, -c.stages, c.split),
    )


def wgmma_schedule(matmul: molten.MatmulOp, target: Target) -> kernel.ScheduleAttr:
    """The schedule of a gemm on sm_90a's warpgroup tensor cores: the tile
    stages and split-K the estimate finds fastest (wgmma_candidates); a
    warpgroup per 64 rows of the tile, a K step of 64. Where the persistent
    TMA kernel takes the gemm: that kernel (one block an SM, its next
    tile's loads overlapping this one's epilogue) in the tile and split-K
    its estimate finds fastest (persistent_ranked), where that beats the
    cp.async kernel's estimate (with WGMMA_STREAM_SECONDS where streaming
    the operands bounds that)."""
    return wgmma_pick(matmul, target)[0]


def wgmma_pick(
    matmul: molten.MatmulOp, target: Target
) -> tuple[kernel.ScheduleAttr, float]:
    """wgmma_schedule's schedule and its estimated seconds."""
    best = wgmma_candidates(matmul, target)[0]
    cp_async = best.seconds + (WGMMA_STREAM_SECONDS if best.streamed else 0.0)
    if not takes_persistent(matmul):
        return wgmma_schedule_of(best), cp_async
    ranked = persistent_ranked(matmul, target)
    if not ranked or ranked[0].seconds > cp_async:
        return wgmma_schedule_of(best), cp_async
    fastest = ranked[0]
    schedule = persistent_schedule((fastest.rows, fastest.cols), target, fastest.split)
    return schedule, fastest.seconds


class WgmmaRule(FamilyRule):
    """A gemm of one matmul on sm_90a's warpgroup tensor cores: the cp.async
    kernel or the persistent TMA kernel, whichever the estimate finds
    faster."""

    kind = kernel.KernelKind.GEMM

    def applies(self, body: KernelBody, target: Target) -> bool:
        matmuls = body.matmuls
        return (
            target.wgmma
            and len(matmuls) == 1
            and not body.prologue
            and takes_tensor_cores(matmuls[0], GEMV_MAX_M + 1)
        )

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        return wgmma_schedule(body.matmuls[0], target)

    def candidates(
        self, body: KernelBody, target: Target, count: int
    ) -> list[kernel.ScheduleAttr]:
        """The heuristic's pick, then the estimate's next fastest tiles and
        splits, each with the stages the estimate likes best for it, and,
        where `count` leaves room (6 or more) and the persistent TMA kernel
        takes the gemm, that kernel (persistent_candidates) where the
        heuristic did not pick it."""
        (matmul,) = body.matmuls
        picked = self.schedule(body, target)
        persistent = []
        if count >= 6 and takes_persistent(matmul):
            persistent = [
                s for s in persistent_candidates(matmul, target) if s != picked
            ]
        found = [picked]
        shapes = {
            (picked.tile.data[0].data, picked.tile.data[1].data, picked.split.data)
        }
        for candidate in wgmma_candidates(matmul, target):
            shape = (candidate.rows, candidate.cols, candidate.split)
            if len(found) == count - len(persistent):
                break
            if shape not in shapes:
                shapes.add(shape)
                found.append(wgmma_schedule_of(candidate))
        return found + persistent
