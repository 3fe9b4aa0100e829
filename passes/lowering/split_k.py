"""Split-K for gemm kernels: the K steps of each output tile split into
parts, one block per part. Each block stores its part's f32 accumulators to
global scratch and arrives at its tile's counter; the last to arrive adds
the parts, in order of part (so results do not depend on which block
finished when), and runs the epilogue.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.ir import Block, Region, SSAValue

from molten.dialects import cuda, kernel
from molten.errors import StaticShapeNeeded
from molten.passes.lowering.emitter import F32, INDEX, Emitter, Index, close_if, emit_if
from molten.passes.lowering.kernels import Scratch, scratch_params


@dataclass(frozen=True)
class KRange:
    """The K steps a block runs: from `begin`, `count` of them (at least
    one), `fewest` the least any block runs (known when lowering)."""

    begin: Index
    count: Index
    fewest: int

    @staticmethod
    def of(e: Emitter, tiling: kernel.TilingAttr, part: Index) -> KRange:
        k_steps, per = tiling.k_steps.data, tiling.part_steps
        if tiling.split.data == 1:
            return KRange(0, k_steps, k_steps)
        begin = e.imul(part, per)
        last = k_steps - (tiling.split.data - 1) * per
        return KRange(begin, e.imin(per, e.isub(k_steps, begin)), min(per, last))


@dataclass(frozen=True)
class SplitK:
    """A split-K gemm's parts in global scratch: per output tile, part and
    accumulator, each thread's f32 value (consecutive threads at
    consecutive addresses, so every store and load is coalesced), and a
    counter per tile."""

    counters: SSAValue
    parts: SSAValue
    split: int
    threads: int
    count: int
    scratch: tuple[Scratch, ...]
    among: bool = False
    """Whether only the block's first `threads` threads hold parts (a
    warp-specialized kernel's consumers): they alone arrive."""

    @staticmethod
    def of(
        region: Region,
        tiling: kernel.TilingAttr,
        threads: int,
        count: int,
        tiles: int | None = None,
        among: bool = False,
    ):
        """The parts of `tiles` output tiles (the tiling's grid's, unless
        given), `count` accumulators of each of `threads` threads each
        (with `among`, the block's first threads, not all of them)."""
        grid = [g.data for g in tiling.grid]
        split = tiling.split.data
        if 0 in grid:
            raise StaticShapeNeeded(
                "lower-kernel-to-cuda: split-K over a named M of no bound (its "
                "parts' scratch is sized by the most tiles)"
            )
        if tiles is None:
            tiles = grid[0] * grid[1] * grid[2] // split
        scratch = (
            Scratch("split_k_counters", cuda.COUNTER_TYPE, tiles, True, True),
            Scratch("split_k_parts", F32, tiles * split * count * threads, False),
        )
        counters, parts = scratch_params(region, scratch)
        return SplitK(counters, parts, split, threads, count, scratch, among)

    @staticmethod
    def tile_and_part(e: Emitter, tiling: kernel.TilingAttr) -> tuple[Index, Index]:
        """The block's output tile (numbered along N, then M, then batches)
        and its part of K: the grid's z is batches x split."""
        split = tiling.split.data
        grid = [g.data for g in tiling.grid]
        z = e.add(cuda.BlockIdxOp(cuda.Dim.Z))
        y = e.add(cuda.BlockIdxOp(cuda.Dim.Y))
        x = e.add(cuda.BlockIdxOp(cuda.Dim.X))
        tile = e.iadd(e.imul(e.iadd(e.imul(e.idiv(z, split), grid[1]), y), grid[0]), x)
        return tile, e.irem(z, split)

    def _first(self, e: Emitter, tile: Index, part: Index, tid: Index) -> Index:
        """Where the thread's first accumulator of this tile's part is (its
        j-th is `threads` x j on)."""
        at = e.imul(e.iadd(e.imul(tile, self.split), part), self.count * self.threads)
        return e.iadd(at, tid)

    def combined(
        self,
        e: Emitter,
        at: tuple[Index, Index, Index],
        values: list[SSAValue],
        has_rows: SSAValue | None,
    ) -> tuple[Emitter, list[SSAValue]]:
        """Stores this block's part (`values`, a thread's accumulators) for
        at = (tile, part, thread), arrives at the tile's counter, and in
        the last block to arrive (the emitter returned, inside an `scf.if`
        the caller closes) adds every part in order of part. A thread
        without rows in the output (`has_rows` false: a tile past M) stores
        and loads nothing; its sums are not stored."""
        tile, part, tid = at
        store = e if has_rows is None else emit_if(e, has_rows)
        first = self._first(store, tile, part, tid)
        for j, value in enumerate(values):
            slot = store.index(store.iadd(first, j * self.threads))
            store.add(cuda.StoreOp([value], self.parts, slot))
        if has_rows is not None:
            close_if(store)
        arrival = cuda.LastArrivalOp(
            self.counters,
            e.index(tile),
            e.index(self.split),
            self.threads if self.among else None,
        )
        last = e.add(arrival)
        last.name_hint = "last"
        inside = emit_if(e, last)
        parts: Index = self.split
        if has_rows is not None:
            parts = inside.select(has_rows, inside.index(self.split), inside.index(0))
        body = Block(arg_types=[INDEX, *[F32] * len(values)])
        zero = inside.f32(0.0)
        loop = scf.ForOp(
            inside.index(0),
            inside.index(parts),
            inside.index(1),
            [zero] * len(values),
            Region(body),
        )
        inside.block.add_op(loop)
        inner, each = inside.nested(body), body.args[0]
        each.name_hint = "part"
        sums = []
        first = self._first(inner, tile, each, tid)
        for j, total in enumerate(body.args[1:]):
            slot = inner.index(inner.iadd(first, j * self.threads))
            load = inner.add(cuda.LoadOp(self.parts, slot, coherent=True))
            sums.append(inner.add(arith.AddfOp(total, load)))
        body.add_op(scf.YieldOp(*sums))
        return inside, list(loop.results)
