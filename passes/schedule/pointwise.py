"""The pointwise family: a grid-stride loop, one run of `vector` elements a
thread an iteration, 256 threads a block, fewer (down to 64) where that
spreads a small kernel over more SMs."""

from __future__ import annotations

import math

from molten.dialects import kernel, molten
from molten.errors import StaticShapeNeeded
from molten.passes.schedule.common import FamilyRule, KernelBody, vector_width
from molten.passes.schedule.target import Target

POINTWISE_BLOCK = 256


MIN_POINTWISE_BLOCK = 64


def pointwise_schedule(
    elements: float, width: int, target: Target
) -> kernel.ScheduleAttr:
    """The schedule of a pointwise kernel over `elements`, `width` at a time
    (infinite where a named dimension makes the count known at run time
    only: scheduled as for many)."""
    runs = math.ceil(min(elements, 2**62) / width)
    block = POINTWISE_BLOCK
    while block > MIN_POINTWISE_BLOCK and math.ceil(runs / block) < target.sm_count:
        block //= 2
    return kernel.ScheduleAttr(
        kernel.ScheduleFamily.POINTWISE, block, vector=width, elements_per_thread=width
    )


class PointwiseRule(FamilyRule):
    kind = kernel.KernelKind.POINTWISE

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        domain = kernel.iteration_domain(body.outputs)
        inner = domain[-1] if domain else 1
        if isinstance(inner, str):
            raise StaticShapeNeeded(
                f"kernel-schedule: a pointwise kernel whose innermost dimension is "
                f"named ({inner})"
            )
        width = vector_width(inner, body.tensors)
        return pointwise_schedule(molten.element_count(domain), width, target)
