"""The schedule rule of each kernel family, in the order `kernel-schedule`
tries a kind's rules: for a gemm, sibling matmuls (or a prologue) on the
persistent TMA kernel, a GEMV for few rows, wgmma (sm_90a), mma.sync, and
the SIMT kernel for the rest. A rule's schedule may be of another family
of its kind where its estimate says so (the wgmma rule's, the persistent
TMA kernel; the siblings rule's, the SIMT kernel where TMA does not take
them): the passes after it go by the schedule's family, never the rule.

The rules live here, below the fusion passes that ask them what a gemm
would get; `passes/families.py` joins each to its family's tiling and
lowering.
"""

from __future__ import annotations

from molten.dialects import kernel
from molten.passes.schedule.attention import AttentionRule
from molten.passes.schedule.common import FamilyRule
from molten.passes.schedule.gemm_mma import MmaRule
from molten.passes.schedule.gemm_simt import SimtRule
from molten.passes.schedule.gemv import GemvRule
from molten.passes.schedule.pointwise import PointwiseRule
from molten.passes.schedule.rows import RowReduceRule
from molten.passes.schedule.scan import ScanRule
from molten.passes.schedule.scatter import ScatterRule
from molten.passes.schedule.siblings import SiblingsRule
from molten.passes.schedule.wgmma import WgmmaRule

F = kernel.ScheduleFamily
FAMILY_RULES: dict[kernel.ScheduleFamily, FamilyRule] = {
    F.POINTWISE: PointwiseRule(),
    F.ROW_REDUCE: RowReduceRule(),
    F.SCAN: ScanRule(),
    F.SCATTER: ScatterRule(),
    F.ATTENTION: AttentionRule(),
    F.GEMM_TMA: SiblingsRule(),
    F.GEMV: GemvRule(),
    F.GEMM_WGMMA: WgmmaRule(),
    F.GEMM_MMA: MmaRule(),
    F.GEMM_SIMT: SimtRule(),
}
"""Each family's rule, a kind's in the order they are tried."""


def rules_of(kind: kernel.KernelKind) -> tuple[FamilyRule, ...]:
    """The rules of a kind's families, in the order they are tried."""
    return tuple(rule for rule in FAMILY_RULES.values() if rule.kind == kind)
