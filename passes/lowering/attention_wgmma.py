"""Attention's two products on sm_90a's warpgroup tensor cores (wgmma), for
the flash loop of `attention`: a warpgroup takes 64 query rows.

Q, K and V tiles lie in shared memory in 128-byte swizzled rows, each in
blocks of 64 columns (`SwizzledOperand` with the tile's rows as its
moving axis). S = Q Kᵀ reads Q and K from there, K-major (`row_descriptor`);
O += P V takes P from registers, packed from the accumulators of S, and V
MN-major. A thread's accumulators of S and O have the layout of the mma.sync
fragments the rest of the loop works on (its warp's 16 rows), so the online
softmax, the split and the epilogue are attention's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda
from molten.passes.lowering.emitter import WARP, Emitter, Index
from molten.passes.lowering.fragments import AccumulatorLayout
from molten.passes.lowering.gemm_wgmma import (
    SWIZZLE_ELEMENTS,
    WARPGROUP,
    SwizzledOperand,
)
from molten.passes.lowering.matmul import a_fragment


def swizzled_rows(
    e: Emitter,
    ptr: SSAValue,
    base: Index,
    element,
    stages: int,
    box: tuple[int, int, int],
    total_rows: int,
    name: str,
) -> SwizzledOperand:
    """`stages` tiles of a [total_rows, cols] matrix in shared memory, each
    the tiling's box of `rows` consecutive rows, a block of `rows` swizzled
    128-byte rows per 64 columns (unpadded: pitch = cols); a tile moves
    along the rows."""
    rows, cols, pitch = box
    assert cols % SWIZZLE_ELEMENTS == 0, "tiling.attention_schedule_problem"
    assert pitch == cols, "a swizzled tile's rows are not padded"
    shape = (stages, rows, cols, total_rows)
    return SwizzledOperand.of_rows(e, ptr, base, element, shape, cols, name)


@dataclass(frozen=True)
class WgmmaProducts:
    """Q Kᵀ and P V of a warpgroup's 64 query rows on wgmma (see the module
    docstring); each warp of it holds one fragment of 16 rows.

    With three or more stages (`overlapped`), a tile's P V runs beside the
    next tile's softmax: P is packed and carried into the next iteration,
    whose Q Kᵀ is issued first and its P V (of the tile before) after it,
    so that waiting for all but the newest group gives the scores while
    P V still runs; O is waited for only where it is rescaled. The V that
    P V reads stays in its stage for that iteration: the copies run
    `stages - 2` tiles ahead. FlashAttention-3's intra-warpgroup overlap."""

    element: Attribute
    q: SwizzledOperand
    k: SwizzledOperand
    v: SwizzledOperand
    head: int
    stages: int
    layouts: tuple[AccumulatorLayout, AccumulatorLayout]
    """S's (and P's) layout, and O's, as a warp's mma.sync fragments: a
    warpgroup's wgmma accumulators are its warps' fragments side by side."""
    tile_row: Index
    """The warpgroup's first row in the block's (and in the Q tile)."""

    async_proxy = True
    """cp.async's copies are fenced for the tensor cores' reads."""

    @staticmethod
    def of(
        e: Emitter,
        tid: Index,
        tiles: tuple[SwizzledOperand, SwizzledOperand, SwizzledOperand],
        element: Attribute,
        head: int,
        group_rows: int,
        stages: int,
        layouts: tuple[AccumulatorLayout, AccumulatorLayout],
    ) -> WgmmaProducts:
        tile_row = e.imul(e.idiv(tid, WARPGROUP), group_rows)
        return WgmmaProducts(element, *tiles, head, stages, layouts, tile_row)

    @property
    def overlapped(self) -> bool:
        return self.stages > 2

    @property
    def keys(self) -> int:
        """Keys a tile: the columns of S."""
        return self.layouts[0].tiles[1] * self.layouts[0].instruction[1]

    @staticmethod
    def tiles_ahead(stages: int) -> int:
        """Tiles of K and V copied ahead of the one computed on: all stages
        but the current one's, and but the one a running P V reads."""
        return stages - 2 if stages > 2 else 1

    @staticmethod
    def rows_per_warp(group_rows: int) -> int:
        return group_rows // (WARPGROUP // WARP)

    def pending_initial(self, e: Emitter) -> list[SSAValue]:
        """The P carried into the first iteration (`overlapped`): zeros, so
        that its P V adds nothing (it reads the first tile's V, finite)."""
        if not self.overlapped:
            return []
        zero = e.add(arith.ConstantOp(IntegerAttr(0, cuda.FRAGMENT)))
        return [zero] * (self.keys // 4)

    def scores(
        self,
        e: Emitter,
        tile: tuple[Index, Index],
        o: list[SSAValue],
        pending: list[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """S = Q Kᵀ of the warpgroup's rows against the keys of `tile` =
        (index, stage), in S's layout; and O, to which (`overlapped`) the
        tile before's P V, issued after Q Kᵀ, is still adding."""
        e.add(cuda.WgmmaFenceOp())
        index, stage = tile
        acc: list[SSAValue] = []  # the first product is D = A B
        for kk in range(0, self.head, cuda.WGMMA_K):
            da = self.q.row_descriptor(e, 0, self.tile_row, kk)
            db = self.k.row_descriptor(e, stage, 0, kk)
            mma = cuda.WgmmaOp(self.element, da, db, acc, n=self.keys)
            acc = list(e.add(mma).owner.results)
        e.add(cuda.WgmmaCommitOp())
        if not self.overlapped:
            return self._wait(e, 0, acc), o
        # The first tile's pending P (zeros) reads its own V.
        before = e.isub(index, e.imin(index, 1))
        o = self._issue(e, e.irem(before, self.stages), pending, o)
        done = self._wait(e, 1, [*acc, *o])
        return done[: len(acc)], done[len(acc) :]

    def settled(self, e: Emitter, o: list[SSAValue]) -> list[SSAValue]:
        """O once every P V that writes it is done."""
        if not self.overlapped:
            return o
        return self._wait(e, 0, o)

    def weighted(
        self,
        e: Emitter,
        stage: Index,
        p: list[SSAValue],
        o: list[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """O += P V for the tile in `stage`, P (in f32, in S's layout) packed
        into A registers per 16 keys, V read MN-major; or (`overlapped`) the
        packed P, for the next iteration to issue."""
        scores = self.layouts[0]
        a = [
            reg
            for kk in range(self.keys // cuda.WGMMA_K)
            for reg in a_fragment(
                e,
                self.element,
                p[scores.instruction_slice(0, 2 * kk)],
                p[scores.instruction_slice(0, 2 * kk + 1)],
            )
        ]
        if self.overlapped:
            return o, a
        acc = self._issue(e, stage, a, o)
        return self._wait(e, 0, acc), []

    def finished(
        self,
        e: Emitter,
        o: list[SSAValue],
        pending: list[SSAValue],
        count: Index,
    ) -> list[SSAValue]:
        """O after the loop over `count` tiles: (`overlapped`) with the last
        tile's P V, issued and waited for."""
        if not self.overlapped:
            return o
        last = e.isub(count, e.imin(count, 1))  # a part past the keys: 0
        return self._wait(e, 0, self._issue(e, e.irem(last, self.stages), pending, o))

    def _issue(
        self, e: Emitter, stage: Index, a: list[SSAValue], acc: list[SSAValue]
    ) -> list[SSAValue]:
        """Issues and commits acc += P V for P packed in `a` (four registers
        per 16 keys) and the stage's V, MN-major."""
        # The accumulators and all of P are written before the wgmmas that
        # read them (a register written between two wgmmas makes ptxas
        # wait for the first).
        e.add(cuda.WgmmaFenceOp())
        for kk in range(len(a) // 4):
            db = self.v.descriptor(e, stage, 0, kk * cuda.WGMMA_K)
            mma = cuda.WgmmaRegisterAOp(
                self.element, a[4 * kk : 4 * kk + 4], db, acc, trans_b=True
            )
            acc = list(e.add(mma).owner.results)
        e.add(cuda.WgmmaCommitOp())
        return acc

    @staticmethod
    def _wait(e: Emitter, pending: int, values: list[SSAValue]) -> list[SSAValue]:
        return list(e.add(cuda.WgmmaWaitOp(pending, values)).owner.results)
