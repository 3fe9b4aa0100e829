"""The software pipeline of a tiled kernel's main loop (a gemm's K steps,
attention's tiles of keys): each step's operand tiles flow by cp.async
into a ring of `stages` shared buffers, `ahead` steps before the math that
reads them, one commit group a step.

A prologue issues the first `ahead` steps' copies. Each step then waits
until its own group has landed (all but the `ahead - 1` newest), fences
the copies for the tensor cores' async proxy where they read shared memory
through it (wgmma), meets at a barrier (every thread's copies visible, and
every thread past the step before, whose stage the copies `ahead` on
overwrite), issues those copies and commits them. Steps past the end copy
nothing: behind a branch, or as zero-filled copies that read nothing where
a branch would serialize the wgmmas after it. A family may peel the last
step (it waits for every group and copies nothing), and drains the copies
in flight after a loop that does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import SSAValue

from molten.dialects import cuda
from molten.passes.lowering.emitter import (
    Emitter,
    Index,
    close_if,
    emit_carried_for,
    emit_if,
)

Fill = Callable[[Emitter, Index], None]
"""Issues the copies of a step's tiles into its stage (`CopyPipeline.stage`),
predicated by `CopyPipeline.wanted`."""
Step = Callable[[Emitter, Index, list[SSAValue], bool], list[SSAValue]]
"""A loop's step: given the step, the values the loop carries and whether it
is the peeled last step, those values after it."""


def loop_steps(
    e: Emitter,
    begin: Index,
    end: Index,
    carried: Sequence[SSAValue],
    step: Callable[[Emitter, SSAValue, list[SSAValue]], list[SSAValue]],
    name: str,
) -> list[SSAValue]:
    """An `scf.for` over steps `begin` to `end` (its induction variable
    named `name`) carrying `carried` through `step`; the values after it."""
    loop, body, block = emit_carried_for(e, begin, end, carried)
    index = block.args[0]
    index.name_hint = name
    block.add_op(scf.YieldOp(*step(body, index, list(block.args[1:]))))
    return list(loop.results)


def peeled_steps(
    e: Emitter,
    steps: Index,
    carried: Sequence[SSAValue],
    step: Step,
    name: str,
    loops: bool = True,
) -> list[SSAValue]:
    """Every step but the last in a loop (none unless `loops`: a single
    step), then the last after it: a wgmma kernel waits for its last step's
    group in full there, so that no accumulator is read before it lands
    and ptxas keeps the loop's wgmmas in flight."""
    if loops:
        carried = loop_steps(
            e,
            0,
            e.isub(steps, 1),
            carried,
            lambda em, k, values: step(em, k, values, False),
            name,
        )
    return step(e, e.isub(steps, 1), list(carried), True)


@dataclass(frozen=True)
class CopyPipeline:
    """A main loop's cp.async pipeline (see the module docstring)."""

    stages: int
    ahead: int
    """Steps copied ahead of the one computed on: all stages but its own
    (`stages - 1`), or but one more where the step before's products may
    still read their stage (`stages - 2`: wgmma's)."""
    steps: Index
    """The block's steps."""
    fewest: int
    """Steps every block has (all of them, where `steps` is known)."""
    fill: Fill
    async_proxy: bool = False
    """Whether the tensor cores read the tiles through the async proxy
    (wgmma): each step fences its copies for it."""
    guarded: bool = False
    """Whether the copies of a step past the end are skipped by a branch
    (else they are zero-filled and read nothing: no branch in the loop)."""
    prologue_zeros: bool = False
    """Whether the prologue zero-fills the stages of steps past a known end
    (else it skips their copies)."""
    peel_last: bool = False
    """Whether the last step is peeled off the loop (`peeled_steps`)."""

    def stage(self, e: Emitter, step: Index) -> Index:
        """The stage holding `step`'s tiles."""
        return e.irem(step, self.stages)

    def wanted(self, e: Emitter, step: Index) -> SSAValue | None:
        """Whether `step`'s copies read their tiles (else they write zeros):
        None where the step is known to be one of the block's, or a branch
        guards its copies."""
        if self.guarded or (isinstance(step, int) and step < self.fewest):
            return None
        if isinstance(step, int) and isinstance(self.steps, int):
            return e.add(arith.ConstantOp(IntegerAttr(0, IntegerType(1))))
        return e.icmp(step, self.steps, "slt")

    def prologue(self, e: Emitter) -> None:
        """The first `ahead` steps' copies, a commit group each (empty for a
        step past a known end, unless `prologue_zeros`), so that a step's
        wait always counts `ahead - 1` newer groups."""
        for step in range(self.ahead):
            past_end = isinstance(self.steps, int) and step >= self.steps
            if not past_end or self.prologue_zeros:
                self.fill(e, step)
            e.add(cuda.CpAsyncCommitOp())

    def landed(self, e: Emitter, last: bool = False) -> None:
        """Waits until the oldest group in flight (every group, `last`) has
        landed and the block's copies are visible to every thread."""
        e.add(cuda.CpAsyncWaitOp(0 if last else self.ahead - 1))
        if self.async_proxy:
            e.add(cuda.FenceProxyAsyncOp())
        e.add(cuda.SyncThreadsOp())

    def begin(self, e: Emitter, step: Index, last: bool = False) -> None:
        """The start of `step`: its tiles landed (`landed`), then the copies
        `ahead` steps on, into the stage every thread is done with (not for
        the peeled `last` step: there are none)."""
        self.landed(e, last)
        if last:
            return
        upcoming = e.iadd(step, self.ahead)
        if not self.guarded:
            self.fill(e, upcoming)
        else:
            inside = emit_if(e, e.icmp(upcoming, self.steps, "slt"))
            self.fill(inside, upcoming)
            close_if(inside)
        e.add(cuda.CpAsyncCommitOp())

    def drain(self, e: Emitter) -> None:
        """After a loop that did not peel its last step: no copy in flight."""
        e.add(cuda.CpAsyncWaitOp(0))

    def run(
        self,
        e: Emitter,
        carried: Sequence[SSAValue],
        step: Step,
        name: str = "k_tile",
        loops: bool = True,
    ) -> list[SSAValue]:
        """The prologue, then every step (`step`, which begins with `begin`),
        the last peeled where `peel_last` (the loop only where `loops`: the
        block may have more than one), else drained after the loop."""
        self.prologue(e)
        if self.peel_last:
            return peeled_steps(e, self.steps, carried, step, name, loops)
        results = loop_steps(
            e,
            0,
            self.steps,
            carried,
            lambda em, k, values: step(em, k, values, False),
            name,
        )
        self.drain(e)
        return results
