"""The gemm families in the order `kernel-schedule` tries them: sibling
matmuls (or a prologue) on the persistent TMA kernel, a GEMV for few rows,
wgmma (sm_90a), mma.sync, and the SIMT kernel for the rest."""

from __future__ import annotations

from xdsl.ir import Operation

from molten.dialects import kernel
from molten.passes.schedule.common import FamilyRule, KernelBody, first_rule
from molten.passes.schedule.gemm_mma import MmaRule
from molten.passes.schedule.gemm_simt import SimtRule
from molten.passes.schedule.gemv import GemvRule
from molten.passes.schedule.siblings import SiblingsRule
from molten.passes.schedule.target import DEFAULT_TARGET, Target
from molten.passes.schedule.wgmma import WgmmaRule

GEMM_RULES: tuple[FamilyRule, ...] = (
    SiblingsRule(),
    GemvRule(),
    WgmmaRule(),
    MmaRule(),
    SimtRule(),
)


def gemm_schedule(
    body_ops: list[Operation], target: Target = DEFAULT_TARGET
) -> kernel.ScheduleAttr:
    """The schedule of a gemm kernel of these ops (its tensors do not matter
    to the gemm rules): a size class's, a fusion's question."""
    body = KernelBody(body_ops, [], [])
    rule = first_rule(GEMM_RULES, body, target)
    assert rule is not None  # SimtRule takes any gemm
    return rule.schedule(body, target)
