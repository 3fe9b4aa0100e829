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

from xdsl.ir import SSAValue

from molten.dialects import cuda
from molten.passes.lowering.emitter import WARP, Emitter, Index
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
    rows: int,
    cols: int,
    total_rows: int,
    name: str,
) -> SwizzledOperand:
    """`stages` tiles of `rows` consecutive rows of a [total_rows, cols]
    matrix in shared memory, each a block of `rows` swizzled 128-byte rows
    per 64 columns; a tile moves along the rows."""
    if cols % SWIZZLE_ELEMENTS:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: a wgmma attention's head dims are multiples "
            f"of {SWIZZLE_ELEMENTS}, not {cols}"
        )
    buffer = e.add(cuda.SharedAllocOp(element, stages * rows * cols))
    buffer.name_hint = name
    return SwizzledOperand(
        ptr,
        base,
        buffer,
        rows,
        cols,
        cols,
        k_rows=True,
        outer0=0,
        outer_total=cols,
        k_total=total_rows,
        outer_partial=False,
        k_partial=total_rows % rows != 0,
    )


@dataclass(frozen=True)
class WgmmaProducts:
    """Q Kᵀ and P V of a warpgroup's 64 query rows on wgmma (see the module
    docstring); each warp of it holds one fragment of 16 rows."""

    element: object
    q: SwizzledOperand
    k: SwizzledOperand
    v: SwizzledOperand
    head: int
    tile_row: Index
    """The warpgroup's first row in the block's (and in the Q tile)."""

    fragments = 1

    @staticmethod
    def of(
        e: Emitter,
        tid: Index,
        tiles: tuple[SwizzledOperand, SwizzledOperand, SwizzledOperand],
        element,
        head: int,
        group_rows: int,
    ) -> WgmmaProducts:
        tile_row = e.imul(e.idiv(tid, WARPGROUP), group_rows)
        return WgmmaProducts(element, *tiles, head, tile_row)

    @staticmethod
    def rows_per_warp(group_rows: int) -> int:
        return group_rows // (WARPGROUP // WARP)

    def arrived(self, e: Emitter) -> None:
        """Copies by cp.async become visible to the tensor cores' reads."""
        e.add(cuda.FenceProxyAsyncOp())

    def scores(self, e: Emitter, stage: Index, keys: int) -> list[list[list[SSAValue]]]:
        """S = Q Kᵀ of the warpgroup's rows against the stage's keys, as
        s[0][f][r]: the thread's accumulator r of columns 8 f to 8 f + 7."""
        e.add(cuda.WgmmaFenceOp())
        acc = [e.f32(0.0)] * (keys // 2)
        for kk in range(0, self.head, cuda.WGMMA_K):
            da = self.q.row_descriptor(e, 0, self.tile_row, kk)
            db = self.k.row_descriptor(e, stage, 0, kk)
            mma = e.add(cuda.WgmmaOp(self.element, da, db, acc)).owner
            acc = list(mma.results)
        s = self._wait(e, acc)
        return [[s[4 * f : 4 * f + 4] for f in range(keys // 8)]]

    def weighted(
        self,
        e: Emitter,
        stage: Index,
        p: list[list[list[SSAValue]]],
        o: list[list[SSAValue]],
        keys: int,
    ) -> list[list[SSAValue]]:
        """O += P V, P (in f32, the layout of `scores`) packed into A
        registers per 16 keys, V read MN-major from the stage."""
        (p_rows,) = p
        (acc,) = o
        a = [
            a_fragment(e, self.element, p_rows[2 * kk], p_rows[2 * kk + 1])
            for kk in range(keys // cuda.WGMMA_K)
        ]
        # The rescaled accumulators and all of P are written before the
        # wgmmas that read them (a register written between two wgmmas
        # makes ptxas wait for the first).
        e.add(cuda.WgmmaFenceOp())
        for kk, a_kk in enumerate(a):
            db = self.v.descriptor(e, stage, 0, kk * cuda.WGMMA_K)
            mma = e.add(
                cuda.WgmmaRegisterAOp(self.element, a_kk, db, acc, trans_b=True)
            ).owner
            acc = list(mma.results)
        return [self._wait(e, acc)]

    @staticmethod
    def _wait(e: Emitter, acc: list[SSAValue]) -> list[SSAValue]:
        e.add(cuda.WgmmaCommitOp())
        return list(e.add(cuda.WgmmaWaitOp(0, acc)).owner.results)
