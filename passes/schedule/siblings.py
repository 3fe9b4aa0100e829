"""Sibling matmuls (one lhs) in one persistent TMA kernel: side by side in
each tile where one op reads them together (gate and up), else each tile
one sibling's (q, k and v), where the estimate finds that no slower."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block

from molten.dialects import kernel, molten
from molten.dialects.molten import shape_of
from molten.passes.schedule.common import (
    WGMMA_N_STEP,
    FamilyRule,
    KernelBody,
    wgmma_tile_schedule,
)
from molten.passes.schedule.cost import WgmmaCandidate
from molten.passes.schedule.gemm_simt import simt_gemm_schedule
from molten.passes.schedule.persistent import persistent_ranked
from molten.passes.schedule.target import Target
from molten.passes.schedule.wgmma import wgmma_pick


def siblings_as_one(matmuls: list[molten.MatmulOp]) -> molten.MatmulOp:
    """The matmul a kernel of sibling matmuls (sharing their lhs) is
    estimated as: their lhs times a rhs of all their columns, detached
    from the IR. Its tiles are the kernel's tiles of every sibling side
    by side, or one after another: the same loads, tensor-core work and
    accumulators."""
    first = matmuls[0]
    *batch, m, _ = shape_of(first.result)
    *rhs_batch, rows, cols = shape_of(first.rhs)
    wide = sum(shape_of(mm.result)[-1] for mm in matmuls)
    rhs_shape = (
        [*rhs_batch, wide, cols] if first.transpose_b else [*rhs_batch, rows, wide]
    )
    rhs_type = TensorType(first.rhs.type.element_type, rhs_shape)  # type: ignore
    operands = Block(arg_types=[first.lhs.type, rhs_type]).args
    result = TensorType(first.result.type.element_type, [*batch, m, wide])  # type: ignore
    return molten.MatmulOp.create(
        operands=list(operands),
        result_types=[result],
        properties=dict(first.properties),
    )


def siblings_schedules(
    matmuls: list[molten.MatmulOp],
    target: Target,
    count: int = 1,
    side_by_side: bool | None = None,
) -> list[kernel.ScheduleAttr]:
    """The schedules of a gemm kernel of sibling matmuls (or of one with a
    prologue, which these take alike), at most `count`,
    the estimate's fastest first: the persistent TMA kernel's (the kernel
    that computes siblings on tensor cores) in the tiles persistent_ranked
    finds fastest for them as one (siblings_as_one); B stored [N, K], K
    unsplit. Side by side (`side_by_side`; by default where their types
    agree), each tile is shared out by column among the siblings
    (so a width each sibling's wgmma takes), the stages of the whole
    tile; else each tile is one sibling's, the tiles of each one after
    another."""
    found = []
    for c, cols in _siblings_ranked(matmuls, target, side_by_side):
        found.append(
            wgmma_tile_schedule(c.rows, cols, c.stages, persistent=target.sm_count)
        )
        if len(found) == count:
            break
    return found


def _siblings_ranked(
    matmuls: list[molten.MatmulOp], target: Target, side_by_side: bool | None
) -> list[tuple[WgmmaCandidate, int]]:
    """siblings_schedules' candidates, the fastest first, each with the
    columns of each sibling's tile (a share of the candidate's tile side
    by side, else all of it)."""
    # Split-K and B stored [K, N] left ptxas serializing the siblings'
    # wgmmas (C7520): not taken until that is understood.
    if matmuls[0].transpose_b is None:
        return []
    if side_by_side is None:
        side_by_side = all(mm.is_sibling_of(matmuls[0]) for mm in matmuls)
    products = len(matmuls) if side_by_side else 1
    widths = None if side_by_side else [shape_of(mm.result)[-1] for mm in matmuls]
    found = []
    for c in persistent_ranked(siblings_as_one(matmuls), target, widths):
        cols, rest = divmod(c.cols, products)
        if not (rest or cols % WGMMA_N_STEP or c.split > 1):
            found.append((c, cols))
    return found


def siblings_pay(matmuls: list[molten.MatmulOp], target: Target) -> bool:
    """Whether matmuls of one lhs that no op reads together (q, k and v)
    are estimated to take no longer in one persistent kernel, each tile
    one's, than each in its own kernel (wgmma_pick)."""
    ranked = _siblings_ranked(matmuls, target, side_by_side=False)
    if not ranked:
        return False
    fastest = ranked[0][0].seconds
    return fastest <= sum(wgmma_pick(mm, target)[1] for mm in matmuls)


class SiblingsRule(FamilyRule):
    """A gemm kernel of sibling matmuls, or with a prologue: the persistent
    TMA kernel where its tiles take them (sm_90a), else the SIMT kernel."""

    kind = kernel.KernelKind.GEMM

    def applies(self, body: KernelBody, target: Target) -> bool:
        return len(body.matmuls) > 1 or body.prologue

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        return self.candidates(body, target, 1)[0]

    def candidates(
        self, body: KernelBody, target: Target, count: int
    ) -> list[kernel.ScheduleAttr]:
        from_tma = target.wgmma and siblings_schedules(
            body.matmuls, target, count, body.side_by_side
        )
        if from_tma:
            return from_tma
        return [simt_gemm_schedule(body.matmuls[0], target)]
