"""Gemm on tensor cores with mma.sync m16n8k16 (sm_80 and later): fragments
read by ldmatrix from shared memory that `stages` operand tiles flow into
by cp.async. f32 operands run as 3xTF32 (m16n8k8): each fragment split
into two tf32 terms, three mmas a product, to about f32's precision.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import Block, Region

from molten.dialects import cuda, kernel
from molten.passes.lowering.emitter import (
    F32,
    INDEX,
    WARP,
    Index,
    close_if,
    element_of,
    emit_if,
)
from molten.passes.lowering.epilogue import Epilogue, Staging, finish
from molten.passes.lowering.fragments import MMA_M16N8K8, MMA_M16N8K16
from molten.passes.lowering.kernels import KernelShell, Launch, LoweredKernel
from molten.passes.lowering.matmul import GemmShape, LdmatrixLanes, StagedOperand

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
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    gemm = GemmShape.of(kfunc)
    mm = gemm.matmul
    element = element_of(mm.lhs)
    tf32 = element == F32
    bm, bn, bk = (t.data for t in tiling.block)
    wm, wn = (t.data for t in tiling.warp)
    stages = tiling.stages.data
    partial = {d.data for d in tiling.partial}
    mma_kind = MMA_M16N8K8 if tf32 else MMA_M16N8K16
    shape = mma_kind.instruction
    fm, fn, fk = shape
    warps_n = bn // wn
    block = WARP * (bm // wm) * warps_n
    width = cuda.ASYNC_COPY_BYTES // cuda.element_bytes(element)
    if tuple(f.data for f in tiling.fragment) != shape or wn % (2 * fn) or stages < 2:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: a tensor-core gemm tile {bm}x{bn}x{bk} with warp "
            f"tiles {wm}x{wn} (ldmatrix x4 reads two n8 fragments of B) and "
            f"{stages} stages (cp.async needs two or more)"
        )
    grid, grid_of = gemm.launch_grid(tiling, bm)
    tid = shell.thread_index()
    lane, warp = e.irem(tid, WARP), e.idiv(tid, WARP)
    lane.name_hint, warp.name_hint = "lane", "warp"
    warp_m = e.imul(e.idiv(warp, warps_n), wm)
    warp_n = e.imul(e.irem(warp, warps_n), wn)
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn)

    def staged(ptr, base, footprint, k_rows, outer0, outer_total, outer_dim, name):
        rows, cols, pitch = (f.data for f in footprint)
        if cols % width:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: a tensor-core operand tile of {cols} columns "
                f"(cp.async copies {width} elements)"
            )
        buffer = e.add(cuda.SharedAllocOp(element, stages * rows * pitch))
        buffer.name_hint = name
        return StagedOperand(
            ptr,
            base,
            buffer,
            rows,
            cols,
            pitch,
            k_rows,
            outer0,
            outer_total,
            gemm.k,
            outer_dim in partial,
            "k" in partial,
        )

    a = staged(
        pointers[mm.lhs],
        a_base,
        tiling.lhs,
        gemm.transpose_a,
        row0,
        gemm.m,
        "m",
        "a_tile",
    )
    b = staged(
        pointers[mm.rhs],
        b_base,
        tiling.rhs,
        not gemm.transpose_b,
        col0,
        gemm.n,
        "n",
        "b_tile",
    )
    a_copies = a.copies(e, tid, block, width)
    b_copies = b.copies(e, tid, block, width)
    k_steps = tiling.k_steps.data

    def fragment_offset(operand: StagedOperand, outer: Index, k: Index) -> Index:
        if operand.k_rows:
            return e.iadd(e.imul(k, operand.pitch), outer)
        return e.iadd(e.imul(outer, operand.pitch), k)

    # Each lane's row address for ldmatrix, relative to its warp tile's
    # first fragment; for a tf32 operand stored [k][outer] (ldmatrix does
    # not transpose 32-bit elements), its own element (k l % 4, outer l / 4).
    lanes = LdmatrixLanes.of(e, lane, width)

    def by_element() -> tuple[Index, Index]:
        return e.idiv(lane, 4), e.irem(lane, 4)

    a_of = by_element() if tf32 and a.k_rows else lanes.a(e, a.k_rows)
    b_of = by_element() if tf32 and b.k_rows else lanes.b(e, b.k_rows)
    a_lane = fragment_offset(a, e.iadd(warp_m, a_of[0]), a_of[1])
    b_lane = fragment_offset(b, e.iadd(warp_n, b_of[0]), b_of[1])

    # One commit group per stage, empty for stages past the last K step, so
    # the wait below always counts `stages - 2` groups still in flight.
    for stage in range(stages - 1):
        if stage < k_steps:
            a.issue(e, a_copies, stage, stage * bk)
            b.issue(e, b_copies, stage, stage * bk)
        e.add(cuda.CpAsyncCommitOp())

    m_frags, n_frags = wm // fm, wn // fn
    layout = mma_kind.tiled(m_frags, n_frags)
    count = len(layout.registers)
    per_mma = len(mma_kind.registers)
    loop_body = Block(arg_types=[INDEX, *[F32] * count])
    loop = scf.ForOp(
        e.index(0),
        e.index(k_steps),
        e.index(1),
        [e.f32(0.0)] * count,
        Region(loop_body),
    )
    e.block.add_op(loop)
    lb = e.nested(loop_body)
    kt = loop_body.args[0]
    kt.name_hint = "k_tile"
    lb.add(cuda.CpAsyncWaitOp(stages - 2))
    lb.add(cuda.SyncThreadsOp())
    # The tile `stages - 1` ahead goes into the stage read last iteration,
    # which every thread has finished with (the barrier above).
    ahead = lb.iadd(kt, stages - 1)
    fetch = emit_if(lb, lb.icmp(ahead, k_steps, "slt"))
    a.issue(fetch, a_copies, fetch.irem(ahead, stages), fetch.imul(ahead, bk))
    b.issue(fetch, b_copies, fetch.irem(ahead, stages), fetch.imul(ahead, bk))
    close_if(fetch)
    lb.add(cuda.CpAsyncCommitOp())
    stage = lb.irem(kt, stages)
    a_stage = lb.iadd(lb.imul(stage, a.rows * a.pitch), a_lane)
    b_stage = lb.iadd(lb.imul(stage, b.rows * b.pitch), b_lane)
    acc = list(loop_body.args[1:])

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
        at = (i * n_frags + j) * per_mma
        if not tf32:
            mma = lb.add(cuda.MmaOp(element, lhs[0], rhs[0], acc[at : at + 4]))
            acc[at : at + 4] = list(mma.owner.results)
            return
        # 3xTF32: small x big, big x small, then big x big, from zero; their
        # sum is added to the accumulators in f32, rounded to nearest. The
        # tensor cores round their own sums toward zero, an error that K / 8
        # mmas chained through the accumulators let build up (0.5 in a row
        # sum of 8192 outputs of K = 8192 on the H100).
        sums = [zero] * 4
        for left, right in ((lhs[1], rhs[0]), (lhs[0], rhs[1]), (lhs[0], rhs[0])):
            sums = list(lb.add(cuda.MmaOp(element, left, right, sums)).owner.results)
        acc[at : at + 4] = [
            lb.add(arith.AddfOp(c, d))
            for c, d in zip(acc[at : at + 4], sums, strict=True)
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
            terms(registers(b, b_stage, j * 2 * fn, kk)) for j in range(n_frags // 2)
        ]
        for i in range(m_frags):
            for j in range(n_frags):
                multiply(i, j, a_terms[i], b_terms[j // 2])
    loop_body.add_op(scf.YieldOp(*acc))
    e.add(cuda.CpAsyncWaitOp(0))

    origin = layout.thread_origin(e, lane, (row0, warp_m), (col0, warp_n))
    accumulators = layout.places(e, origin, loop.results)
    staging = Staging((b.buffer, a.buffer), (bm, bn), (row0, col0), tid, block)
    end = Epilogue(
        gemm,
        batch_index,
        accumulators,
        guard_rows="m" in partial,
        guard_cols="n" in partial,
        staging=staging,
        run=layout.run,
    )
    return finish(shell, end, Launch(grid, block, grid_of, min_blocks=1))


def fragment_offset_const(operand: StagedOperand, outer: int, k: int) -> int:
    """The offset in a stage of the fragment at (outer, k) from a lane's own."""
    if operand.k_rows:
        return k * operand.pitch + outer
    return outer * operand.pitch + k
