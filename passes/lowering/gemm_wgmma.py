"""Gemm on sm_90a's warpgroup tensor cores (wgmma.mma_async) on operand
tiles in 128-byte swizzled shared memory, fed by cp.async, with the K
loop free of branches.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import Block, Region, SSAValue

from molten.dialects import cuda, kernel
from molten.passes.lowering.emitter import F32, INDEX, WARP, Emitter, Index, element_of
from molten.passes.lowering.epilogue import Epilogue, Staging, finish
from molten.passes.lowering.fragments import wgmma_m64
from molten.passes.lowering.kernels import KernelShell, Launch, LoweredKernel
from molten.passes.lowering.matmul import GemmShape, StagedOperand
from molten.passes.lowering.split_k import KRange, SplitK


@dataclass
class SwizzledOperand(StagedOperand):
    """One matmul operand passing through shared memory for wgmma: per stage
    a tile of `outer` rows (of M or N) by SWIZZLE_ELEMENTS of K, in 128-byte
    swizzled rows. K-major (`k_rows` false: the operand stored [outer][K]):
    a row per row of the tile. MN-major (stored [K][outer]): blocks of 64
    columns, each a row per K (`rows` of them: a gemm's K step, or the
    rows of any tile of whole rows that moves along them, as attention's
    are). Its copies and their issue are a staged operand's; only where a
    chunk lies in a stage differs (`place`)."""

    @staticmethod
    def of(
        ptr: SSAValue,
        base: Index,
        buffer: SSAValue,
        outer: int,
        k_rows: bool,
        outer0: Index,
        outer_total: int,
        k_total: int,
        outer_partial: bool,
        k_partial: bool,
    ) -> SwizzledOperand:
        rows, cols = (SWIZZLE_ELEMENTS, outer) if k_rows else (outer, SWIZZLE_ELEMENTS)
        return SwizzledOperand(
            ptr,
            base,
            buffer,
            rows,
            cols,
            cols,
            k_rows,
            outer0,
            outer_total,
            k_total,
            outer_partial,
            k_partial,
        )

    def _row_start(self, e: Emitter, outer: Index, k: Index) -> Index:
        """Where in a stage the swizzled row holding (outer, k) starts: row
        `outer` of a K-major tile; row k of the 64-column block of `outer`
        of an MN-major one."""
        if not self.k_rows:
            return e.imul(outer, SWIZZLE_ELEMENTS)
        return _block_row_start(e, e.idiv(outer, SWIZZLE_ELEMENTS), k, self.rows)

    def place(self, e: Emitter, outer: Index, k: Index) -> Index:
        """Where the 16-byte chunk at (outer, k) of the tile lies in a stage:
        chunk c of a swizzled row r at c ^ (r % 8)."""
        chunk = CHUNK_ELEMENTS
        if self.k_rows:
            block, column = (
                e.idiv(outer, SWIZZLE_ELEMENTS),
                e.irem(outer, SWIZZLE_ELEMENTS),
            )
            row_start = _block_row_start(e, block, k, self.rows)
            row, c = k, e.idiv(column, chunk)
        else:
            row_start = self._row_start(e, outer, k)
            row, c = outer, e.idiv(k, chunk)
        swizzled = e.ixor(c, e.irem(row, SWIZZLE_ROWS))
        return e.iadd(row_start, e.imul(swizzled, chunk))

    def descriptor(self, e: Emitter, stage: Index, outer: Index, k: int) -> SSAValue:
        """The wgmma descriptor of the sub-tile from row (or column) `outer`
        (a multiple of 8, of 64 when MN-major) and K offset `k` (a multiple
        of 16) of a stage."""
        if self.k_rows:
            start = self._row_start(e, outer, k)
            leading = self.rows * cuda.SWIZZLE_BYTES  # between column blocks
        else:
            start = e.iadd(self._row_start(e, outer, 0), k)
            leading = cuda.ASYNC_COPY_BYTES  # unused by K-major tiles
        return self._described(e, stage, start, leading)

    def row_descriptor(self, e: Emitter, stage: Index, row: Index, k: int) -> SSAValue:
        """The K-major wgmma descriptor of the sub-tile of an MN-major tile
        (`k_rows`) read the other way: its rows from `row` (a multiple of
        8) are the product's M or N and its columns from `k` (a multiple
        of 16) its K. So a tile of whole rows of a matrix stored [rows][K]
        (attention's Q and K) is read as K-major, as V of the same layout
        is read as MN-major."""
        assert self.k_rows
        block, within = divmod(k, SWIZZLE_ELEMENTS)
        start = e.iadd(_block_row_start(e, block, row, self.rows), within)
        return self._described(e, stage, start, cuda.ASYNC_COPY_BYTES)

    def _described(
        self, e: Emitter, stage: Index, start: Index, leading: int
    ) -> SSAValue:
        index = e.index(e.iadd(e.imul(stage, self.stage_size), start))
        return e.add(
            cuda.WgmmaDescriptorOp(
                self.buffer, index, leading, SWIZZLE_ROWS * cuda.SWIZZLE_BYTES
            )
        )


SWIZZLE_ELEMENTS = cuda.SWIZZLE_BYTES // 2
"""16-bit elements in one swizzled row: a wgmma gemm's K step."""
SWIZZLE_ROWS = cuda.SWIZZLE_ALIGNMENT // cuda.SWIZZLE_BYTES
"""Rows of a swizzle atom (eight)."""
CHUNK_ELEMENTS = cuda.ASYNC_COPY_BYTES // 2
"""16-bit elements in one 16-byte chunk, the unit the swizzle permutes."""
WARPGROUP = 4 * WARP


def _block_row_start(e: Emitter, block: Index, k: Index, rows: int) -> Index:
    """Where row k of 64-column block `block` of an MN-major swizzled tile
    starts in a stage (each block `rows` rows by 64 elements)."""
    return e.iadd(
        e.imul(block, rows * SWIZZLE_ELEMENTS),
        e.imul(k, SWIZZLE_ELEMENTS),
    )


def lower_gemm_wgmma(kfunc: kernel.FuncOp, tiling: kernel.TilingAttr) -> LoweredKernel:
    """A gemm on sm_90a's warpgroup tensor cores (f16 or bf16 operands, f32
    accumulators), as `tiling` has it: each warpgroup computes a 64 x N warp
    tile with wgmma.mma_async m64nNk16 on operand tiles in 128-byte swizzled
    shared memory, which `stages` tiles of each operand flow into by
    cp.async, `stages - 2` ahead of the math: one stage is read by the
    wgmmas issued now and one by the previous step's, which may still run.
    The K loop has no branch (ptxas serializes wgmmas across one)."""
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    gemm = GemmShape.of(kfunc)
    mm = gemm.matmul
    element = element_of(mm.lhs)
    bm, bn, bk = (t.data for t in tiling.block)
    wm, wn = (t.data for t in tiling.warp)
    stages = tiling.stages.data
    partial = {d.data for d in tiling.partial}
    groups_n = bn // wn
    block = WARPGROUP * (bm // wm) * groups_n
    ahead = stages - 2
    a_k_rows, b_k_rows = gemm.transpose_a, not gemm.transpose_b
    if (
        tuple(f.data for f in tiling.fragment) != (cuda.WGMMA_M, wn, cuda.WGMMA_K)
        or bk != SWIZZLE_ELEMENTS
        or ahead < 1
        or (a_k_rows and (wm % SWIZZLE_ELEMENTS or bm % SWIZZLE_ELEMENTS))
        or (b_k_rows and (wn % SWIZZLE_ELEMENTS or bn % SWIZZLE_ELEMENTS))
        or (bm * bk // CHUNK_ELEMENTS) % block
        or (bn * bk // CHUNK_ELEMENTS) % block
    ):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: a wgmma gemm tile {bm}x{bn}x{bk} with warpgroup "
            f"tiles {wm}x{wn} and {stages} stages (the K step is one swizzled row "
            f"of {SWIZZLE_ELEMENTS}, an MN-major operand's tiles whole 64-column "
            "blocks, three or more stages, copies shared evenly by the threads)"
        )
    grid, grid_of = gemm.launch_grid(tiling, bm)
    tid = shell.thread_index()
    group, in_group = e.idiv(tid, WARPGROUP), e.irem(tid, WARPGROUP)
    group.name_hint = "warpgroup"
    group_m = e.imul(e.idiv(group, groups_n), wm)
    group_n = e.imul(e.irem(group, groups_n), wn)
    split = tiling.split.data
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn, split)
    tile, part = SplitK.tile_and_part(e, tiling) if split > 1 else (0, 0)
    steps = KRange.of(e, tiling, part)

    def swizzled(ptr, base, outer, k_rows, outer0, outer_total, dim, name):
        buffer = e.add(cuda.SharedAllocOp(element, stages * outer * bk))
        buffer.name_hint = name
        return SwizzledOperand.of(
            ptr,
            base,
            buffer,
            outer,
            k_rows,
            outer0,
            outer_total,
            gemm.k,
            dim in partial,
            "k" in partial,
        )

    a = swizzled(pointers[mm.lhs], a_base, bm, a_k_rows, row0, gemm.m, "m", "a_tile")
    b = swizzled(pointers[mm.rhs], b_base, bn, b_k_rows, col0, gemm.n, "n", "b_tile")
    a_copies = a.copies(e, tid, block, CHUNK_ELEMENTS)
    b_copies = b.copies(e, tid, block, CHUNK_ELEMENTS)

    def k_offset(em: Emitter, step: Index) -> Index:
        return em.imul(em.iadd(steps.begin, step), bk)

    # One commit group per step, empty past the block's last K step, so the
    # wait below always leaves `ahead - 1` groups in flight. (Steps count
    # from the block's first: a part of split-K starts inside K.)
    for step in range(ahead):
        wanted = None
        if step >= steps.fewest:
            wanted = (
                e.add(arith.ConstantOp(IntegerAttr(0, IntegerType(1))))
                if isinstance(steps.count, int)
                else e.icmp(step, steps.count, "slt")
            )
        a.issue(e, a_copies, step, k_offset(e, step), wanted)
        b.issue(e, b_copies, step, k_offset(e, step), wanted)
        e.add(cuda.CpAsyncCommitOp())

    def step(em: Emitter, kt: Index, acc: list[SSAValue], last: bool):
        """One K step (the block's kt-th): wait for its tiles, fetch the
        tiles `ahead` steps on into the stage read two steps ago, issue its
        wgmmas; the accumulators after a wait for all but this step's group
        (for all, `last`)."""
        em.add(cuda.CpAsyncWaitOp(0 if last else ahead - 1))
        # Every thread's copies of this step are in shared memory, and
        # visible to the tensor cores' reads; every warpgroup is past the
        # wait of the step before, so the stage read two steps ago is free.
        em.add(cuda.FenceProxyAsyncOp())
        em.add(cuda.SyncThreadsOp())
        if not last:
            upcoming = em.iadd(kt, ahead)
            wanted = em.icmp(upcoming, steps.count, "slt")
            stage_ahead, k0 = em.irem(upcoming, stages), k_offset(em, upcoming)
            a.issue(em, a_copies, stage_ahead, k0, wanted)
            b.issue(em, b_copies, stage_ahead, k0, wanted)
            em.add(cuda.CpAsyncCommitOp())
        em.add(cuda.WgmmaFenceOp())
        stage = em.irem(kt, stages)
        for kk in range(0, bk, cuda.WGMMA_K):
            da = a.descriptor(em, stage, group_m, kk)
            db = b.descriptor(em, stage, group_n, kk)
            mma = cuda.WgmmaOp(element, da, db, acc, trans_a=a.k_rows, trans_b=b.k_rows)
            em.add(mma)
            acc = list(mma.results)
        em.add(cuda.WgmmaCommitOp())
        wait = cuda.WgmmaWaitOp(0 if last else 1, acc)
        em.add(wait)
        return list(wait.results)

    # All K steps but the last in a loop, one wgmma group left in flight
    # across its back edge; the last step after it, waiting for all. (With
    # the loop's group still in flight into the epilogue, ptxas serializes
    # the wgmmas where the epilogue converts accumulators.)
    layout = wgmma_m64(wn)
    count = len(layout.registers)
    acc = [e.f32(0.0)] * count
    if tiling.part_steps > 1:
        loop_body = Block(arg_types=[INDEX, *[F32] * count])
        loop = scf.ForOp(
            e.index(0),
            e.index(e.isub(steps.count, 1)),
            e.index(1),
            acc,
            Region(loop_body),
        )
        e.block.add_op(loop)
        kt = loop_body.args[0]
        kt.name_hint = "k_tile"
        carried = step(e.nested(loop_body), kt, list(loop_body.args[1:]), False)
        loop_body.add_op(scf.YieldOp(*carried))
        acc = list(loop.results)
    done = step(e, e.isub(steps.count, 1), acc, True)

    origin = layout.thread_origin(e, in_group, (row0, group_m), (col0, group_n))
    last: Emitter | None = None
    scratch = ()
    if split > 1:
        parts = SplitK.of(shell.region, tiling, block, count)
        has_rows = e.icmp(origin[0], gemm.m, "slt") if "m" in partial else None
        last, done = parts.combined(e, (tile, part, tid), done, has_rows)
        scratch = parts.scratch
    accumulators = layout.places(last or e, origin, done)
    end = Epilogue(
        gemm,
        batch_index,
        accumulators,
        guard_rows="m" in partial,
        guard_cols="n" in partial,
        staging=Staging((b.buffer, a.buffer), (bm, bn), (row0, col0), tid, block),
        run=layout.run,
    )
    launch = Launch(grid, block, grid_of, min_blocks=1, scratch=scratch)
    return finish(shell, end, launch, last)
