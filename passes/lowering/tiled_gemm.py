"""The skeleton every cp.async-fed tensor-core gemm shares: the kernel
shell, the grid, the block's origin and each unit's (warp or warpgroup)
tile in it, the operand tiles and their copies, the software-pipelined K
loop (`pipeline.CopyPipeline`), split-K's parts, and the epilogue on the
accumulators' places (`fragments.AccumulatorLayout`), staged through the
idle operand buffers.

A family (`gemm_mma`'s mma.sync, `gemm_wgmma`'s wgmma) supplies only what
differs (`TensorCoreFamily`): its checks, how its threads form the units
that issue one instruction, its operand tiles in shared memory, its
pipeline's policy and its main-loop product with the layout of the
accumulators it leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from xdsl.ir import SSAValue

from molten.dialects import cuda, kernel
from molten.passes.lowering.emitter import Emitter, Index, element_of
from molten.passes.lowering.epilogue import Epilogue, Staging, finish
from molten.passes.lowering.fragments import AccumulatorLayout
from molten.passes.lowering.kernels import KernelShell, Launch, LoweredKernel
from molten.passes.lowering.matmul import GemmShape, StagedOperand
from molten.passes.lowering.pipeline import CopyPipeline, Fill
from molten.passes.lowering.split_k import KRange, SplitK

Staged = TypeVar("Staged", bound=StagedOperand)


@dataclass(frozen=True)
class OperandTile:
    """What the skeleton knows of one operand's block tile: its pointer and
    matrix offset, its rows (of M or N) in the block tile from `outer0` of
    `outer_total`, whether its rows are K (`k_rows`: A transposed, B not),
    whether its last tile sticks out of it along M or N and along K, the
    tiling's footprint of it in shared memory (rows, columns, pitch) and a
    name for its buffer."""

    ptr: SSAValue
    base: Index
    outer: int
    k_rows: bool
    outer0: Index
    outer_total: int
    k_total: int
    outer_partial: bool
    k_partial: bool
    footprint: tuple[int, int, int]
    name: str

    def staged(
        self,
        kind: type[Staged],
        buffer: SSAValue,
        rows: int,
        cols: int,
        pitch: int,
    ) -> Staged:
        """The operand in `buffer`, per stage `rows` x `cols` elements in its
        storage order, `pitch` a row."""
        return kind(
            self.ptr,
            self.base,
            buffer,
            rows,
            cols,
            pitch,
            self.k_rows,
            self.outer0,
            self.outer_total,
            self.k_total,
            self.outer_partial,
            self.k_partial,
        )


@dataclass(frozen=True)
class UnitPlace:
    """A thread's unit (the warp or warpgroup that issues one instruction):
    its index in the block, the thread's index in it, and the first row
    and column of the unit's tile in the block tile."""

    unit: Index
    in_unit: Index
    row: Index
    col: Index


class GemmProduct(Protocol):
    """A family's main-loop product on one K step's operand tiles."""

    layout: AccumulatorLayout
    """Where the accumulators it leaves lie (the unit's tile)."""

    def step(
        self,
        e: Emitter,
        pipeline: CopyPipeline,
        k: Index,
        acc: list[SSAValue],
        last: bool,
    ) -> list[SSAValue]:
        """The accumulators after K step `k` (its tiles landed), `last` the
        peeled last step's."""
        ...


class TensorCoreFamily(Protocol):
    """What a tensor-core gemm family supplies to `lower_tiled_gemm`."""

    unit_threads: int
    """Threads issuing one instruction: a warp's, or a warpgroup's."""

    def thread_unit(self, e: Emitter, tid: SSAValue) -> tuple[Index, Index]:
        """The thread's unit and its index in it."""
        ...

    def operand(self, e: Emitter, tile: OperandTile) -> StagedOperand:
        """The operand's `stages` tiles in a new shared buffer."""
        ...

    def pipeline(self, steps: KRange, fill: Fill) -> CopyPipeline:
        """The K loop's pipeline over the block's `steps`."""
        ...

    def product(
        self, e: Emitter, place: UnitPlace, a: StagedOperand, b: StagedOperand
    ) -> GemmProduct:
        """The main-loop product of the unit at `place` on tiles `a` and `b`
        (emitting what it computes once, before the loop)."""
        ...


Family = Callable[[GemmShape, kernel.TilingAttr], TensorCoreFamily]
"""A family for a gemm and its tiling (raising NotImplementedError where
the family does not take them)."""


def lower_tiled_gemm(
    kfunc: kernel.FuncOp, tiling: kernel.TilingAttr, family_of: Family
) -> LoweredKernel:
    """A gemm on tensor cores as `tiling` has it: each unit of the block
    computes its tile of the block's tile with the family's product, on
    operand tiles that `stages` of each operand flow into by cp.async (the
    family's pipeline); the block's parts of K (split-K) are added by the
    last block to finish; the epilogue runs on the accumulators' places,
    staged through the operand buffers, bounded to one block per SM."""
    shell = KernelShell.of(kfunc)
    e = shell.e
    gemm = GemmShape.of(kfunc)
    family = family_of(gemm, tiling)
    element = element_of(gemm.matmul.lhs)
    bm, bn, bk = (t.data for t in tiling.block)
    wm, wn = (t.data for t in tiling.warp)
    partial = {d.data for d in tiling.partial}
    units_n = bn // wn
    block = family.unit_threads * (bm // wm) * units_n
    grid, grid_of = gemm.launch_grid(tiling, bm)
    tid = shell.thread_index()
    unit, in_unit = family.thread_unit(e, tid)
    unit_m = e.imul(e.idiv(unit, units_n), wm)
    unit_n = e.imul(e.irem(unit, units_n), wn)
    place = UnitPlace(unit, in_unit, unit_m, unit_n)
    split = tiling.split.data
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn, split)
    out_tile, part = SplitK.tile_and_part(e, tiling) if split > 1 else (0, 0)
    steps = KRange.of(e, tiling, part)

    def operand_tile(footprint, **where) -> OperandTile:
        """An operand's tile, its footprint the tiling's."""
        rows, cols, pitch = (f.data for f in footprint)
        return OperandTile(
            k_total=gemm.k,
            k_partial="k" in partial,
            footprint=(rows, cols, pitch),
            **where,
        )

    mm = gemm.matmul
    a = family.operand(
        e,
        operand_tile(
            tiling.lhs,
            ptr=shell.pointers[mm.lhs],
            base=a_base,
            outer=bm,
            k_rows=gemm.transpose_a,
            outer0=row0,
            outer_total=gemm.m,
            outer_partial="m" in partial,
            name="a_tile",
        ),
    )
    b = family.operand(
        e,
        operand_tile(
            tiling.rhs,
            ptr=shell.pointers[mm.rhs],
            base=b_base,
            outer=bn,
            k_rows=not gemm.transpose_b,
            outer0=col0,
            outer_total=gemm.n,
            outer_partial="n" in partial,
            name="b_tile",
        ),
    )
    width = cuda.ASYNC_COPY_BYTES // cuda.element_bytes(element)
    a_copies = a.copies(e, tid, block, width)
    b_copies = b.copies(e, tid, block, width)
    product = family.product(e, place, a, b)

    def fill(em: Emitter, step: Index) -> None:
        """Step `step`'s tiles of A and B (counted from the block's first
        step: a part of split-K starts inside K) into its stage."""
        wanted = pipeline.wanted(em, step)
        stage = pipeline.stage(em, step)
        k0 = em.imul(em.iadd(steps.begin, step), bk)
        a.issue(em, a_copies, stage, k0, wanted)
        b.issue(em, b_copies, stage, k0, wanted)

    pipeline = family.pipeline(steps, fill)

    def step(em: Emitter, k: Index, acc: list[SSAValue], last: bool):
        pipeline.begin(em, k, last)
        return product.step(em, pipeline, k, acc, last)

    layout = product.layout
    count = len(layout.registers)
    zeros = [e.f32(0.0)] * count
    done = pipeline.run(e, zeros, step, loops=tiling.part_steps > 1)

    origin = layout.thread_origin(e, in_unit, (row0, unit_m), (col0, unit_n))
    last: Emitter | None = None
    scratch = ()
    if split > 1:
        parts = SplitK.of(shell.region, tiling, block, count)
        has_rows = e.icmp(origin[0], gemm.m, "slt") if "m" in partial else None
        last, done = parts.combined(e, (out_tile, part, tid), done, has_rows)
        scratch = parts.scratch
    end = Epilogue(
        gemm,
        batch_index,
        layout.places(last or e, origin, done),
        guard_rows="m" in partial,
        guard_cols="n" in partial,
        staging=Staging((b.buffer, a.buffer), (bm, bn), (row0, col0), tid, block),
        run=layout.run,
    )
    launch = Launch(grid, block, grid_of, min_blocks=1, scratch=scratch)
    return finish(shell, end, launch, last)
