"""Gemm on sm_90a's warpgroup tensor cores (wgmma.mma_async) on operand
tiles in 128-byte swizzled shared memory, fed by cp.async, with the K
loop free of branches.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda, kernel
from molten.passes.lowering.emitter import WARP, Emitter, Index, element_of
from molten.passes.lowering.fragments import AccumulatorLayout, wgmma_m64
from molten.passes.lowering.kernels import LoweredKernel
from molten.passes.lowering.matmul import GemmShape, StagedOperand
from molten.passes.lowering.pipeline import CopyPipeline, Fill
from molten.passes.lowering.split_k import KRange
from molten.passes.lowering.tiled_gemm import OperandTile, UnitPlace, lower_tiled_gemm


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
        rows, cols = SwizzledOperand.tile_shape(outer, k_rows)
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

    @staticmethod
    def tile_shape(outer: int, k_rows: bool) -> tuple[int, int]:
        """A stage's rows and columns in storage order: K-major, `outer` rows
        of a K step; MN-major, a K step's rows of `outer` columns."""
        return (SWIZZLE_ELEMENTS, outer) if k_rows else (outer, SWIZZLE_ELEMENTS)

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
    return lower_tiled_gemm(kfunc, tiling, WgmmaGemm.of)


@dataclass(frozen=True)
class WgmmaGemm:
    """The wgmma family of `lower_tiled_gemm`: a warpgroup a unit, operand
    tiles in 128-byte swizzled rows, zero-filled copies past the end and
    the last K step peeled."""

    element: Attribute
    tiling: kernel.TilingAttr

    unit_threads = WARPGROUP

    @staticmethod
    def of(gemm: GemmShape, tiling: kernel.TilingAttr) -> WgmmaGemm:
        bm, bn, bk = (t.data for t in tiling.block)
        wm, wn = (t.data for t in tiling.warp)
        stages = tiling.stages.data
        block = WARPGROUP * (bm // wm) * (bn // wn)
        a_k_rows, b_k_rows = gemm.transpose_a, not gemm.transpose_b
        if (
            tuple(f.data for f in tiling.fragment) != (cuda.WGMMA_M, wn, cuda.WGMMA_K)
            or bk != SWIZZLE_ELEMENTS
            or stages < 3
            or (a_k_rows and (wm % SWIZZLE_ELEMENTS or bm % SWIZZLE_ELEMENTS))
            or (b_k_rows and (wn % SWIZZLE_ELEMENTS or bn % SWIZZLE_ELEMENTS))
            or (bm * bk // CHUNK_ELEMENTS) % block
            or (bn * bk // CHUNK_ELEMENTS) % block
        ):
            raise NotImplementedError(
                f"lower-kernel-to-cuda: a wgmma gemm tile {bm}x{bn}x{bk} with "
                f"warpgroup tiles {wm}x{wn} and {stages} stages (the K step is one "
                f"swizzled row of {SWIZZLE_ELEMENTS}, an MN-major operand's tiles "
                "whole 64-column blocks, three or more stages, copies shared evenly "
                "by the threads)"
            )
        return WgmmaGemm(element_of(gemm.matmul.lhs), tiling)

    def thread_unit(self, e: Emitter, tid: SSAValue) -> tuple[Index, Index]:
        group, in_group = e.idiv(tid, WARPGROUP), e.irem(tid, WARPGROUP)
        group.name_hint = "warpgroup"
        return group, in_group

    def operand(self, e: Emitter, tile: OperandTile) -> SwizzledOperand:
        """`stages` swizzled tiles of the K step's 64 columns (or rows)."""
        stages, bk = self.tiling.stages.data, self.tiling.block.data[2].data
        buffer = e.add(cuda.SharedAllocOp(self.element, stages * tile.outer * bk))
        buffer.name_hint = tile.name
        rows, cols = SwizzledOperand.tile_shape(tile.outer, tile.k_rows)
        return tile.staged(SwizzledOperand, buffer, rows, cols, cols)

    def pipeline(self, steps: KRange, fill: Fill) -> CopyPipeline:
        """`stages - 2` steps ahead (the step before's wgmmas may still read
        their stage), fenced for the async proxy, zero-filled past the end
        (no branch in the K loop), the last step peeled: with the loop's
        group still in flight into the epilogue, ptxas serializes the wgmmas
        where the epilogue converts accumulators."""
        stages = self.tiling.stages.data
        return CopyPipeline(
            stages,
            stages - 2,
            steps.count,
            steps.fewest,
            fill,
            async_proxy=True,
            prologue_zeros=True,
            peel_last=True,
        )

    def product(
        self, e: Emitter, place: UnitPlace, a: StagedOperand, b: StagedOperand
    ) -> WgmmaProduct:
        assert isinstance(a, SwizzledOperand) and isinstance(b, SwizzledOperand)
        wn = self.tiling.warp.data[1].data
        return WgmmaProduct(self.element, self.tiling, a, b, place, wgmma_m64(wn))


@dataclass(frozen=True)
class WgmmaProduct:
    """A warpgroup's wgmmas on one K step: one m64nNk16 per 16 of K, on the
    stage's descriptors, committed, then a wait that leaves this step's
    group in flight (for all, the last step's)."""

    element: Attribute
    tiling: kernel.TilingAttr
    a: SwizzledOperand
    b: SwizzledOperand
    place: UnitPlace
    layout: AccumulatorLayout

    def step(
        self,
        e: Emitter,
        pipeline: CopyPipeline,
        k: Index,
        acc: list[SSAValue],
        last: bool,
    ) -> list[SSAValue]:
        a, b = self.a, self.b
        e.add(cuda.WgmmaFenceOp())
        stage = pipeline.stage(e, k)
        for kk in range(0, self.tiling.block.data[2].data, cuda.WGMMA_K):
            da = a.descriptor(e, stage, self.place.row, kk)
            db = b.descriptor(e, stage, self.place.col, kk)
            mma = cuda.WgmmaOp(
                self.element, da, db, acc, trans_a=a.k_rows, trans_b=b.k_rows
            )
            e.add(mma)
            acc = list(mma.results)
        e.add(cuda.WgmmaCommitOp())
        wait = cuda.WgmmaWaitOp(0 if last else 1, acc)
        e.add(wait)
        return list(wait.results)
