"""Gemm on tensor cores with mma.sync m16n8k16 (sm_80 and later): fragments
read by ldmatrix from shared memory that `stages` operand tiles flow into
by cp.async. f32 operands run as 3xTF32 (m16n8k8): each fragment split
into two tf32 terms, three mmas a product, to about f32's precision.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda, kernel
from molten.passes.lowering.emitter import F32, WARP, Emitter, Index, element_of
from molten.passes.lowering.fragments import (
    MMA_M16N8K8,
    MMA_M16N8K16,
    AccumulatorLayout,
)
from molten.passes.lowering.kernels import LoweredKernel
from molten.passes.lowering.matmul import GemmShape, LdmatrixLanes, StagedOperand
from molten.passes.lowering.pipeline import CopyPipeline, Fill
from molten.passes.lowering.split_k import KRange
from molten.passes.lowering.tiled_gemm import OperandTile, UnitPlace, lower_tiled_gemm

MMA_SHAPE = MMA_M16N8K16.instruction
"""The tensor-core instruction the warps run: mma.sync m16n8k16."""
TF32_MMA_SHAPE = MMA_M16N8K8.instruction
"""The one they run on f32 operands: mma.sync m16n8k8 on tf32 fragments."""


def lower_gemm_mma(kfunc: kernel.FuncOp, tiling: kernel.TilingAttr) -> LoweredKernel:
    """A gemm on tensor cores (f16 or bf16 operands, f32 accumulators), as
    `tiling` has it: each warp computes a warp tile of the block's tile with
    mma.sync m16n8k16, its fragments read by ldmatrix from shared memory
    (rows padded to the tiling's pitch) that `stages` tiles of each operand
    flow into by cp.async, `stages - 1` ahead of the math."""
    return lower_tiled_gemm(kfunc, tiling, MmaSyncGemm.of)


@dataclass(frozen=True)
class MmaSyncGemm:
    """The mma.sync family of `lower_tiled_gemm`: a warp a unit, operand
    tiles with padded rows, a branch around the copies past the end."""

    element: Attribute
    tiling: kernel.TilingAttr
    kind: AccumulatorLayout
    """The instruction: m16n8k16, or m16n8k8 for tf32 (f32 operands)."""

    unit_threads = WARP

    @staticmethod
    def of(gemm: GemmShape, tiling: kernel.TilingAttr) -> MmaSyncGemm:
        element = element_of(gemm.matmul.lhs)
        kind = MMA_M16N8K8 if element == F32 else MMA_M16N8K16
        bm, bn, bk = (t.data for t in tiling.block)
        wm, wn = (t.data for t in tiling.warp)
        stages = tiling.stages.data
        fn = kind.instruction[1]
        fragment = tuple(f.data for f in tiling.fragment)
        if fragment != kind.instruction or wn % (2 * fn) or stages < 2:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: a tensor-core gemm tile {bm}x{bn}x{bk} with "
                f"warp tiles {wm}x{wn} (ldmatrix x4 reads two n8 fragments of B) "
                f"and {stages} stages (cp.async needs two or more)"
            )
        return MmaSyncGemm(element, tiling, kind)

    def thread_unit(self, e: Emitter, tid: SSAValue) -> tuple[Index, Index]:
        lane, warp = e.irem(tid, WARP), e.idiv(tid, WARP)
        lane.name_hint, warp.name_hint = "lane", "warp"
        return warp, lane

    def operand(self, e: Emitter, tile: OperandTile) -> StagedOperand:
        """`stages` tiles in the tiling's footprint (rows padded to its pitch)."""
        rows, cols, pitch = tile.footprint
        width = cuda.ASYNC_COPY_BYTES // cuda.element_bytes(self.element)
        if cols % width:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: a tensor-core operand tile of {cols} columns "
                f"(cp.async copies {width} elements)"
            )
        stages = self.tiling.stages.data
        buffer = e.add(cuda.SharedAllocOp(self.element, stages * rows * pitch))
        buffer.name_hint = tile.name
        return tile.staged(StagedOperand, buffer, rows, cols, pitch)

    def pipeline(self, steps: KRange, fill: Fill) -> CopyPipeline:
        """`stages - 1` steps ahead (each step's mma.sync reads its fragments
        before the barrier of the next), a branch around the copies past the
        end (no wgmma to serialize)."""
        stages = self.tiling.stages.data
        return CopyPipeline(
            stages, stages - 1, steps.count, steps.fewest, fill, guarded=True
        )

    def product(
        self, e: Emitter, place: UnitPlace, a: StagedOperand, b: StagedOperand
    ) -> MmaSyncProduct:
        """The warp's product, from each lane's row addresses for ldmatrix
        relative to its warp tile's first fragment; for a tf32 operand stored
        [k][outer] (ldmatrix does not transpose 32-bit elements), its own
        element (k l % 4, outer l / 4)."""
        lane = place.in_unit
        tf32 = self.element == F32
        width = cuda.ASYNC_COPY_BYTES // cuda.element_bytes(self.element)

        def fragment_offset(operand: StagedOperand, outer: Index, k: Index) -> Index:
            if operand.k_rows:
                return e.iadd(e.imul(k, operand.pitch), outer)
            return e.iadd(e.imul(outer, operand.pitch), k)

        lanes = LdmatrixLanes.of(e, lane, width)

        def by_element() -> tuple[Index, Index]:
            return e.idiv(lane, 4), e.irem(lane, 4)

        a_of = by_element() if tf32 and a.k_rows else lanes.a(e, a.k_rows)
        b_of = by_element() if tf32 and b.k_rows else lanes.b(e, b.k_rows)
        a_lane = fragment_offset(a, e.iadd(place.row, a_of[0]), a_of[1])
        b_lane = fragment_offset(b, e.iadd(place.col, b_of[0]), b_of[1])
        wm, wn = (t.data for t in self.tiling.warp)
        fm, fn, _ = self.kind.instruction
        layout = self.kind.tiled(wm // fm, wn // fn)
        return MmaSyncProduct(self, a, b, a_lane, b_lane, layout)


@dataclass(frozen=True)
class MmaSyncProduct:
    """A warp's mma.sync products on one K step: its warp tile's fragments
    read by ldmatrix from the stage at its lanes' addresses (`a_lane`,
    `b_lane`), m16n8k16 mmas into its accumulators (3xTF32 on f32)."""

    family: MmaSyncGemm
    a: StagedOperand
    b: StagedOperand
    a_lane: Index
    b_lane: Index
    layout: AccumulatorLayout

    def step(
        self,
        lb: Emitter,
        pipeline: CopyPipeline,
        k: Index,
        acc: list[SSAValue],
        last: bool,
    ) -> list[SSAValue]:
        a, b = self.a, self.b
        element, kind = self.family.element, self.family.kind
        tf32 = element == F32
        fm, fn, fk = kind.instruction
        bk = self.family.tiling.block.data[2].data
        m_frags, n_frags = (
            w.data // f for w, f in zip(self.family.tiling.warp, (fm, fn), strict=True)
        )
        stage = pipeline.stage(lb, k)
        a_stage = lb.iadd(lb.imul(stage, a.rows * a.pitch), self.a_lane)
        b_stage = lb.iadd(lb.imul(stage, b.rows * b.pitch), self.b_lane)
        acc = list(acc)

        def registers(operand: StagedOperand, at: Index, outer: int, kk: int):
            """The four fragment registers of the A fragment at row `outer`, or
            of the two n8 fragments of B at column `outer` (b0, b1 of each)."""
            index = lb.iadd(at, fragment_offset_const(operand, outer, kk))
            if not (tf32 and operand.k_rows):
                ld = lb.add(
                    cuda.LdMatrixOp(operand.buffer, lb.index(index), operand.k_rows)
                )
                return list(ld.owner.results)
            # Row l / 4 (+8) at k l % 4 (+4): A's a0..a3, or b0, b1 of B's two.
            step_k, step_outer = 4 * operand.pitch, 8
            order = (
                (0, step_outer, step_k, step_k + step_outer)
                if operand is a
                else (0, step_k, step_outer, step_k + step_outer)
            )
            return [
                lb.add(cuda.LoadOp(operand.buffer, lb.index(lb.iadd(index, d))))
                for d in order
            ]

        def terms(values: list) -> list[list]:
            """The registers as the mmas take them: [as they are], or for 3xTF32
            [their big terms, their small terms], each split once."""
            if not tf32:
                return [values]
            halves = [lb.add(cuda.SplitTf32Op(v)).owner for v in values]
            big, small = [h.big for h in halves], [h.small for h in halves]
            return [big, small]

        zero = lb.f32(0.0) if tf32 else None

        def multiply(i: int, j: int, lhs: list, pair: list) -> None:
            """The mmas of fragment (i, j) into its accumulators."""
            first = 2 * (j % 2)
            rhs = [t[first : first + 2] for t in pair]
            at = self.layout.instruction_slice(i, j)
            if not tf32:
                mma = lb.add(cuda.MmaOp(element, lhs[0], rhs[0], acc[at]))
                acc[at] = list(mma.owner.results)
                return
            # 3xTF32: small x big, big x small, then big x big, from zero; their
            # sum is added to the accumulators in f32, rounded to nearest. The
            # tensor cores round their own sums toward zero, an error that K / 8
            # mmas chained through the accumulators let build up (0.5 in a row
            # sum of 8192 outputs of K = 8192 on the H100).
            sums = [zero] * 4
            for left, right in ((lhs[1], rhs[0]), (lhs[0], rhs[1]), (lhs[0], rhs[0])):
                sums = list(
                    lb.add(cuda.MmaOp(element, left, right, sums)).owner.results
                )
            acc[at] = [
                lb.add(arith.AddfOp(c, d)) for c, d in zip(acc[at], sums, strict=True)
            ]

        for kk in range(0, bk, fk):
            if tf32:
                # B's fragments, then A's one row at a time: fewer split
                # registers live at once beside the accumulators.
                b_terms = [
                    terms(registers(b, b_stage, j * 2 * fn, kk))
                    for j in range(n_frags // 2)
                ]
                for i in range(m_frags):
                    lhs = terms(registers(a, a_stage, i * fm, kk))
                    for j in range(n_frags):
                        multiply(i, j, lhs, b_terms[j // 2])
                continue
            a_terms = [terms(registers(a, a_stage, i * fm, kk)) for i in range(m_frags)]
            b_terms = [
                terms(registers(b, b_stage, j * 2 * fn, kk))
                for j in range(n_frags // 2)
            ]
            for i in range(m_frags):
                for j in range(n_frags):
                    multiply(i, j, a_terms[i], b_terms[j // 2])
        return acc


def fragment_offset_const(operand: StagedOperand, outer: int, k: int) -> int:
    """The offset in a stage of the fragment at (outer, k) from a lane's own."""
    if operand.k_rows:
        return k * operand.pitch + outer
    return outer * operand.pitch + k
