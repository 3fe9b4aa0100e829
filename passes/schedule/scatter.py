"""The scatter family: a grid-stride loop over the source's elements, a
thread one a step, blocks sized as a pointwise kernel's of that count."""

from __future__ import annotations

from molten.dialects import kernel, molten
from molten.passes.schedule.common import FamilyRule, KernelBody
from molten.passes.schedule.pointwise import pointwise_schedule
from molten.passes.schedule.target import Target


class ScatterRule(FamilyRule):
    kind = kernel.KernelKind.SCATTER

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        (scatter,) = [op for op in body.ops if isinstance(op, molten.ScatterOp)]
        elements = molten.element_count(molten.value_dims(scatter.source))
        block = pointwise_schedule(elements, 1, target).block.data
        return kernel.ScheduleAttr(kernel.ScheduleFamily.SCATTER, block)
