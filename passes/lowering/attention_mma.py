"""Attention's two products on mma.sync m16n8k16 (sm_80 and later), for the
flash loop of `attention_softmax`: each warp takes `fragments` of 16 query
rows. Q goes into fragment registers once; K and V fragments are read by
ldmatrix from tiles whose rows are padded by 16 bytes, so that ldmatrix's
eight rows fall in distinct banks. P = exp2(S - m), rounded to the operand
type, is packed straight into the A fragments of P V: an m16n8k16
accumulator pair has the layout of an A fragment, so P never leaves
registers.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Attribute, SSAValue

from molten.dialects import cuda
from molten.passes.lowering.emitter import Emitter, Index
from molten.passes.lowering.fragments import AccumulatorLayout
from molten.passes.lowering.matmul import LdmatrixLanes, StagedOperand, a_fragment


def padded_rows(
    e: Emitter,
    ptr: SSAValue,
    base: Index,
    element: Attribute,
    stages: int,
    box: tuple[int, int, int],
    total_rows: Index,
    name: str,
) -> StagedOperand:
    """`stages` tiles of a [total_rows, cols] matrix in shared memory, each
    the tiling's box of `rows` consecutive rows, rows `pitch` elements
    apart (padded by 16 bytes: ldmatrix's eight rows then fall in distinct
    banks); a tile moves along the rows."""
    rows, cols, pitch = box
    shape = (stages, rows, cols, total_rows)
    return StagedOperand.of_rows(e, ptr, base, element, shape, pitch, name)


@dataclass(frozen=True)
class MmaProducts:
    """Q Kᵀ and P V on mma.sync m16n8k16, each warp its `fragments` of 16
    query rows: Q read into fragment registers once, K and V fragments by
    ldmatrix from padded tiles (`padded_rows`)."""

    element: Attribute
    k: StagedOperand
    v: StagedOperand
    q_frags: list[list[tuple[SSAValue, ...]]]
    k_lane: Index
    v_lane: Index
    layouts: tuple[AccumulatorLayout, AccumulatorLayout]
    """S's (and P's) layout, and O's: the warp's mma.sync fragments."""
    tile_row: Index
    """The warp's first row in the block's."""

    async_proxy = False
    """ldmatrix reads what a barrier made visible."""

    @staticmethod
    def of(
        e: Emitter,
        lane: Index,
        warp_row: Index,
        tiles: tuple[StagedOperand, StagedOperand, StagedOperand],
        element: Attribute,
        head: int,
        layouts: tuple[AccumulatorLayout, AccumulatorLayout],
    ) -> MmaProducts:
        """The warp's Q fragments read from the Q tile (which has arrived)
        and its lanes' ldmatrix addresses in the K and V tiles."""
        q, k, v = tiles
        fragments = layouts[0].tiles[0]
        # Each lane's row address for ldmatrix: Q [m][k] as A; K [n][k] as
        # B (two n8 fragments per load); V [k][n] as B, read transposed.
        lanes = LdmatrixLanes.of(e, lane)
        m_of, k_of = lanes.a(e, False)
        q_lane = e.iadd(e.imul(e.iadd(warp_row, m_of), q.pitch), k_of)
        n_of, k_of = lanes.b(e, False)
        k_lane = e.iadd(e.imul(n_of, k.pitch), k_of)
        n_of, k_of = lanes.b(e, True)
        v_lane = e.iadd(e.imul(k_of, v.pitch), n_of)
        q_frags = [
            [
                e.add(
                    cuda.LdMatrixOp(
                        q.buffer, e.index(e.iadd(q_lane, i * 16 * q.pitch + kk * 16))
                    )
                ).owner.results
                for kk in range(head // 16)
            ]
            for i in range(fragments)
        ]
        return MmaProducts(element, k, v, q_frags, k_lane, v_lane, layouts, warp_row)

    @staticmethod
    def tiles_ahead(stages: int) -> int:
        """Tiles of K and V copied ahead of the one computed on: all stages
        but the current one's."""
        return stages - 1

    def pending_initial(self, e: Emitter) -> list[SSAValue]:
        """Nothing is carried from one tile's products to the next's."""
        return []

    def settled(self, e: Emitter, o: list[SSAValue]) -> list[SSAValue]:
        """O: each mma.sync is done when its results are used."""
        return o

    def finished(
        self, e: Emitter, o: list[SSAValue], pending: list[SSAValue], count: Index
    ) -> list[SSAValue]:
        """O after the loop: complete."""
        return o

    def scores(
        self,
        e: Emitter,
        tile: tuple[Index, Index],
        o: list[SSAValue],
        pending: list[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """S = Q Kᵀ against the keys of `tile` = (index, stage), in S's
        layout; and O."""
        _, stage = tile
        layout = self.layouts[0]
        fragments, s_frags = layout.tiles
        k_stage = e.iadd(e.imul(stage, self.k.rows * self.k.pitch), self.k_lane)
        zero = e.f32(0.0)
        s = [zero] * len(layout.registers)
        for kk in range(len(self.q_frags[0])):
            for pair in range(s_frags // 2):
                at = e.iadd(k_stage, pair * 16 * self.k.pitch + kk * 16)
                b = e.add(cuda.LdMatrixOp(self.k.buffer, e.index(at))).owner.results
                for i in range(fragments):  # each K fragment serves every row's
                    for half in range(2):
                        acc = layout.instruction_slice(i, 2 * pair + half)
                        mma = cuda.MmaOp(
                            self.element,
                            self.q_frags[i][kk],
                            b[2 * half : 2 * half + 2],
                            s[acc],
                        )
                        e.add(mma)
                        s[acc] = list(mma.results)
        return s, o

    def weighted(
        self,
        e: Emitter,
        stage: Index,
        p: list[SSAValue],
        o: list[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """O += P V for the tile in `stage`, P (in f32, in S's layout) packed
        from the accumulators into A fragments; nothing carried."""
        scores, out = self.layouts
        fragments, s_frags = scores.tiles
        v_stage = e.iadd(e.imul(stage, self.v.rows * self.v.pitch), self.v_lane)
        o = list(o)
        for kk in range(s_frags // 2):
            a = [
                a_fragment(
                    e,
                    self.element,
                    p[scores.instruction_slice(i, 2 * kk)],
                    p[scores.instruction_slice(i, 2 * kk + 1)],
                )
                for i in range(fragments)
            ]
            for pair in range(out.tiles[1] // 2):
                at = e.iadd(v_stage, kk * 16 * self.v.pitch + pair * 16)
                b = e.add(
                    cuda.LdMatrixOp(self.v.buffer, e.index(at), trans=True)
                ).owner.results
                for i in range(fragments):
                    for half in range(2):
                        acc = out.instruction_slice(i, 2 * pair + half)
                        mma = cuda.MmaOp(
                            self.element, a[i], b[2 * half : 2 * half + 2], o[acc]
                        )
                        e.add(mma)
                        o[acc] = list(mma.results)
        return o, []
