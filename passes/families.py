"""The kernel families, each named once: the rule that schedules it, the
tiling its schedules get and its lowering, by the `ScheduleFamily` a
`#kernel.schedule` names.

`kernel-schedule` tries the rules of a kernel's kind in the order of
`passes/schedule/rules.py`, which keeps them below the fusion passes that
ask what a gemm would get; the first that applies schedules it, and the
passes after it go by the schedule's family. `tile` gives a kernel the
tiling of its schedule's family, where it has one, and
`lower-kernel-to-cuda` lowers it by its family's lowering.

A new family is one entry here, one `ScheduleFamily` with its fields in
`SCHEDULE_FAMILIES` (dialects/kernel.py), a rule module under
`passes/schedule/` entered in `rules.FAMILY_RULES`, and a lowering module
under `passes/lowering/`.
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
from molten.passes.lowering.scatter import lower_scatter
from molten.passes.schedule.common import FamilyRule
from molten.passes.schedule.rules import FAMILY_RULES
from molten.passes.tiling.attention import attention_tiling_for
from molten.passes.tiling.gemm import tiling_for

Lowering = Callable[[kernel.FuncOp, kernel.ScheduleAttr, int], LoweredKernel]
"""A family's lowering: the kernel, its schedule (a variant's, for a kernel
over a named size) and the most rows of that variant (0: any)."""
Tiling = Callable[
    [kernel.FuncOp, kernel.ScheduleAttr, int],
    kernel.TilingAttr | kernel.AttentionTilingAttr,
]
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
_LOWERINGS: dict[kernel.ScheduleFamily, tuple[Lowering, Tiling | None]] = {
    F.POINTWISE: (_any_rows(lower_pointwise), None),
    F.ROW_REDUCE: (_any_rows(lower_row_reduce), None),
    F.SCAN: (_any_rows(lower_scan), None),
    F.SCATTER: (_any_rows(lower_scatter), None),
    F.ATTENTION: (lower_attention, attention_tiling_for),
    F.GEMM_TMA: (lower_tma_kernel, tiling_for),
    F.GEMV: (lower_gemv_kernel, tiling_for),
    F.GEMM_WGMMA: (lower_wgmma_kernel, tiling_for),
    F.GEMM_MMA: (lower_mma_kernel, tiling_for),
    F.GEMM_SIMT: (lower_simt_kernel, tiling_for),
}
FAMILIES: dict[kernel.ScheduleFamily, Family] = {
    name: Family(rule, *_LOWERINGS[name]) for name, rule in FAMILY_RULES.items()
}
"""Every family: its rule (`passes/schedule/rules.py`, in the order a kind's
are tried), its lowering and its tiling."""


def family_of(schedule: kernel.ScheduleAttr) -> Family:
    return FAMILIES[schedule.family.data]
