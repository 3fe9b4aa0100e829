"""The gemm schedule a fusion or a size class asks for: the first of the
gemm families' rules (`passes/families.py`, in the order tried) that takes
the matmul."""

from __future__ import annotations

from xdsl.ir import Operation

from molten.dialects import kernel
from molten.passes.schedule.common import KernelBody, first_rule
from molten.passes.schedule.rules import rules_of
from molten.passes.schedule.target import DEFAULT_TARGET, Target


def gemm_schedule(
    body_ops: list[Operation], target: Target = DEFAULT_TARGET
) -> kernel.ScheduleAttr:
    """The schedule of a gemm kernel of these ops (its tensors do not matter
    to the gemm rules): a size class's, a fusion's question."""
    body = KernelBody(body_ops, [], [])
    rule = first_rule(rules_of(kernel.KernelKind.GEMM), body, target)
    assert rule is not None  # SimtRule takes any gemm
    return rule.schedule(body, target)
