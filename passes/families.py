"""The kernel families, each named once: the rule that schedules it, the
tiling its schedules get and its lowering, by the `ScheduleFamily` a
`#kernel.schedule` names.

`kernel-schedule` tries the rules of a kernel's kind in this table's order;
the first that applies schedules it. A rule's schedule may be of another
family of its kind where its estimate says so (the wgmma rule's, the
persistent TMA kernel; the siblings rule's, the SIMT kernel where TMA
does not take them): the passes after it go by the schedule's family,
never by the rule. `tile` gives a kernel the tiling of its schedule's
family, where it has one, and `lower-kernel-to-cuda` lowers it by its
family's lowering.

A new family is one entry here, one `ScheduleFamily` with its fields in
`SCHEDULE_FAMILIES` (dialects/kernel.py), a rule module under
`passes/schedule/` and a lowering module under `passes/lowering/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from molten.dialects import kernel
from molten.passes.lowering.attention import lower_attention
from molten.passes.lowering.gemm import (
    lower_gemv_kernel,
    lower_mma_kernel,
    lower_simt_kernel,
    lower_tma_kernel,
    lower_wgmma_kernel,
)
from molten.passes.lowering.kernels import LoweredKernel
from molten.passes.lowering.pointwise import lower_pointwise
from molten.passes.lowering.row_reduce import lower_row_reduce
from molten.passes.lowering.scan import lower_scan
from molten.passes.schedule.attention import AttentionRule
from molten.passes.schedule.common import FamilyRule
from molten.passes.schedule.gemm_mma import MmaRule
from molten.passes.schedule.gemm_simt import SimtRule
from molten.passes.schedule.gemv import GemvRule
from molten.passes.schedule.pointwise import PointwiseRule
from molten.passes.schedule.rows import RowReduceRule
from molten.passes.schedule.scan import ScanRule
from molten.passes.schedule.siblings import SiblingsRule
from molten.passes.schedule.wgmma import WgmmaRule
from molten.passes.tile import tiling_for

Lowering = Callable[[kernel.FuncOp, kernel.ScheduleAttr, int], LoweredKernel]
"""A family's lowering: the kernel, its schedule (a variant's, for a kernel
over a named size) and the most rows of that variant (0: any)."""
Tiling = Callable[[kernel.FuncOp, kernel.ScheduleAttr, int], kernel.TilingAttr]
"""A family's tiling: the kernel, its schedule and the most rows of a
variant (0: any)."""


def _any_rows(
    lower: Callable[[kernel.FuncOp, kernel.ScheduleAttr], LoweredKernel],
) -> Lowering:
    """The lowering of a family whose kernels have no variants (static sizes
    or a named dimension their code takes at run time)."""
    return lambda kfunc, schedule, rows_most=0: lower(kfunc, schedule)


@dataclass(frozen=True)
class Family:
    """One kernel family: its rule, its lowering and its tiling (None: the
    lowering derives what it needs from the schedule alone)."""

    rule: FamilyRule
    lower: Lowering
    tiling: Tiling | None = None

    @property
    def kind(self) -> kernel.KernelKind:
        return self.rule.kind


F = kernel.ScheduleFamily
FAMILIES: dict[kernel.ScheduleFamily, Family] = {
    F.POINTWISE: Family(PointwiseRule(), _any_rows(lower_pointwise)),
    F.ROW_REDUCE: Family(RowReduceRule(), _any_rows(lower_row_reduce)),
    F.SCAN: Family(ScanRule(), _any_rows(lower_scan)),
    F.ATTENTION: Family(AttentionRule(), lower_attention),
    F.GEMM_TMA: Family(SiblingsRule(), lower_tma_kernel, tiling_for),
    F.GEMV: Family(GemvRule(), lower_gemv_kernel, tiling_for),
    F.GEMM_WGMMA: Family(WgmmaRule(), lower_wgmma_kernel, tiling_for),
    F.GEMM_MMA: Family(MmaRule(), lower_mma_kernel, tiling_for),
    F.GEMM_SIMT: Family(SimtRule(), lower_simt_kernel, tiling_for),
}
"""Every family, the gemm families in the order their rules are tried:
sibling matmuls (or a prologue) on the persistent TMA kernel, a GEMV for
few rows, wgmma (sm_90a), mma.sync, and the SIMT kernel for the rest."""


def rules_of(kind: kernel.KernelKind) -> tuple[FamilyRule, ...]:
    """The rules of a kind's families, in the order they are tried."""
    return tuple(family.rule for family in FAMILIES.values() if family.kind == kind)


def family_of(schedule: kernel.ScheduleAttr) -> Family:
    return FAMILIES[schedule.family.data]

