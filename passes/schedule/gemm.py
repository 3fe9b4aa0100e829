"""The gemm schedule a fusion or a size class asks for: the first of the
gemm families' rules (`passes/families.py`, in the order tried) that takes
the matmul."""

from __future__ import annotations

from molten.dialects import kernel
from molten.passes.schedule.common import KernelBody, first_rule
from molten.passes.schedule.rules import rules_of
from molten.passes.schedule.target import DEFAULT_TARGET, Target


def gemm_schedule(
    body: KernelBody, target: Target = DEFAULT_TARGET
) -> kernel.ScheduleAttr:
    """The schedule of a gemm kernel: a size class's question."""
    rule = first_rule(rules_of(kernel.KernelKind.GEMM), body, target)
    assert rule is not None  # SimtRule takes any gemm
    return rule.schedule(body, target)
