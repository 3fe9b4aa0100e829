"""What every gemm kernel shares: the matmul's sizes, transposes and batch
axes, the block's origin in them, operand offsets, and cp.async copies of
operand tiles into shared memory.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.ir import BlockArgument, Operation, SSAValue

from molten.dialects import cuda, kernel, molten
from molten.dialects.molten import Dim, value_dims
from molten.passes.lowering.emitter import (
    Emitter,
    Index,
    both,
    broadcast_index,
    ravel,
    unravel,
)
from molten.passes.lowering.kernels import GridOf
from molten.passes.tiling.gemm import gemm_matmuls
from molten.passes.tiling.polyhedral import Gemm

MAX_GRID_Y = 65535
"""The most blocks a grid has along y (and z)."""


@dataclass(frozen=True)
class GemmShape(Gemm):
    """A gemm kernel's matmul, with its sizes, transposes and batch axes."""

    matmuls: tuple[molten.MatmulOp, ...]
    """The kernel's matmuls: one, or siblings sharing its lhs (tile.gemm_matmuls)."""
    source: SSAValue
    """The kernel input the lhs tiles are read from: the lhs, or where the
    kernel computes the lhs (fuse-prologue), the input it computes it from."""
    row_reductions: tuple[molten.ReductionOp, ...] = ()
    """Reductions over the rows of `source` that the epilogue reads
    (fuse-prologue): the kernel accumulates them from the lhs tiles."""
    side_by_side: bool = True
    """Whether each tile of the output is a tile of every sibling (an op
    reads several: #kernel.gemm_match), else of one of them, the
    tiles of each one after another (`concatenated`)."""

    @property
    def concatenated(self) -> bool:
        """Whether each tile of the kernel is one sibling's (q, k and v)."""
        return len(self.matmuls) > 1 and not self.side_by_side

    def sibling(self, p: int) -> GemmShape:
        """The gemm of the p-th matmul alone, on the kernel's lhs tiles."""
        mm = self.matmuls[p]
        return GemmShape(
            **vars(Gemm.of(mm)),
            matmuls=(mm,),
            source=self.source,
            row_reductions=self.row_reductions,
        )

    @property
    def matmul(self) -> molten.MatmulOp:
        """The first matmul: its operands' shapes and types are every one's."""
        return self.matmuls[0]

    @property
    def has_prologue(self) -> bool:
        """Whether the kernel computes the lhs from `source`."""
        return self.source is not self.matmul.lhs

    @staticmethod
    def of(
        kfunc: kernel.FuncOp, siblings: bool = False, prologue: bool = False
    ) -> GemmShape:
        """The gemm of a kernel; where it holds siblings, or computes its lhs,
        only for a lowering that takes them (`siblings`, `prologue`)."""
        from molten.passes.fuse_prologue import prologue_source
        from molten.passes.schedule.common import KernelBody

        matmuls = gemm_matmuls(kfunc)
        first = matmuls[0]
        source = first.lhs
        if not isinstance(source, BlockArgument):
            source = prologue_source(kfunc, first.lhs)
        reductions = tuple(
            op for op in kfunc.body.block.ops if isinstance(op, molten.ReductionOp)
        )
        gemm = GemmShape(
            **vars(Gemm.of(first)),
            matmuls=tuple(matmuls),
            source=source,
            row_reductions=reductions,
            side_by_side=KernelBody.of(kfunc).side_by_side,
        )
        if any(not isinstance(mm.rhs, BlockArgument) for mm in matmuls):
            raise NotImplementedError(
                "lower-kernel-to-cuda: a matmul rhs computed inside the kernel "
                f"({gemm.describe()}) is not supported"
            )
        if gemm.has_prologue and not prologue:
            raise NotImplementedError(
                "lower-kernel-to-cuda: a gemm that computes its lhs "
                f"({gemm.describe()}, fuse-prologue) is lowered by the persistent "
                "TMA gemm and the SIMT gemm only, not by this schedule's kernel"
            )
        if len(matmuls) > 1 and not siblings:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: {len(matmuls)} matmuls of one lhs in one "
                f"kernel ({gemm.describe()} each) are computed by the persistent TMA "
                "gemm and the SIMT gemm only, not by this schedule's kernel"
            )
        return gemm

    def sibling_outputs(
        self, p: int, outputs: Sequence[SSAValue], out_ptrs: Sequence[SSAValue]
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """The outputs (and their pointers) computed from the p-th matmul: a
        concatenated kernel's tile of that sibling stores these."""
        matmul = self.matmuls[p]
        reads: dict[SSAValue, bool] = {}

        def reads_matmul(value: SSAValue) -> bool:
            if value not in reads:
                owner = value.owner
                reads[value] = owner is matmul or (
                    isinstance(owner, Operation)
                    and not isinstance(owner, molten.MatmulOp)
                    and any(reads_matmul(v) for v in owner.operands)
                )
            return reads[value]

        kept = [
            (o, ptr)
            for o, ptr in zip(outputs, out_ptrs, strict=True)
            if reads_matmul(o)
        ]
        return [o for o, _ in kept], [ptr for _, ptr in kept]

    def sibling_tiles(self, bn: int) -> list[int]:
        """Where each sibling's tiles of `bn` columns start among a
        concatenated kernel's column tiles, and (last) their count."""
        starts = [0]
        for mm in self.matmuls:
            starts.append(starts[-1] + -(-value_dims(mm.result)[-1] // bn))
        return starts

    @property
    def rhs_operands(self) -> list[SSAValue]:
        """Each matmul's rhs, in order."""
        return [mm.rhs for mm in self.matmuls]

    @staticmethod
    def grid(tiling: kernel.TilingAttr) -> tuple[int, int, int]:
        grid = tuple(g.data for g in tiling.grid)
        if grid[1] > MAX_GRID_Y or grid[2] > MAX_GRID_Y:
            raise NotImplementedError(f"lower-kernel-to-cuda: a gemm grid of {grid}")
        return grid  # type: ignore[return-value]

    def launch_grid(
        self, tiling: kernel.TilingAttr, bm: int
    ) -> tuple[tuple[int, int, int], GridOf | None]:
        """The grid of a kernel whose blocks' y is their tile of M: the
        tiling's; over a named M, its y counted at launch (ceil(M / bm), at
        most the tiling's, which bounds it where the kernel's rows are
        bounded)."""
        x, y, z = self.grid(tiling)
        if isinstance(self.m, int):
            return (x, y, z), None
        return (x, y or MAX_GRID_Y, z), GridOf((self.m,), 1, bm, 1, 1)

    def rows(self, e: Emitter) -> Index:
        """M: its size, or the kernel's parameter where it is named."""
        return e.extent(self.m)

    def block_origin(
        self,
        e: Emitter,
        bm: int,
        bn: int,
        split: int = 1,
        col_tile: Index | None = None,
    ):
        """The first row and column of the block's output tile, the offsets of
        its batch's A and B matrices, and its batch index (the grid's z is
        batches x `split`, split-K's parts). `col_tile`: the tile's index
        along N where that is not the grid's x (a concatenated kernel's)."""
        tile_n = e.add(cuda.BlockIdxOp(cuda.Dim.X)) if col_tile is None else col_tile
        tile_m = e.add(cuda.BlockIdxOp(cuda.Dim.Y))
        batch = e.idiv(e.add(cuda.BlockIdxOp(cuda.Dim.Z)), split)
        batch_index = unravel(e, batch, self.batch_shape) if self.batch_shape else []

        def matrix_base(shape: Sequence[Dim]) -> Index:
            if not self.batch_shape:
                return 0
            index = broadcast_index(batch_index, shape[:-2], self.batch_shape)
            return e.imul(ravel(e, index, shape[:-2]), math.prod(shape[-2:]))

        row0, col0 = e.imul(tile_m, bm), e.imul(tile_n, bn)
        row0.name_hint, col0.name_hint = "row0", "col0"
        return (
            row0,
            col0,
            matrix_base(self.a_shape),
            matrix_base(self.b_shape),
            batch_index,
        )

    @property
    def result_shape(self) -> list[int]:
        """The matmul's result: the batch axes, then M and N."""
        return [*self.batch_shape, self.m, self.n]


def gemm_offset(
    e: Emitter, row: Index, col: Index, shape: Sequence[int], transposed: bool
) -> Index:
    """Offset of logical element (row, col) of a matrix stored as `shape`'s last
    two axes, read transposed or not."""
    rows, cols = shape[-2:]
    if transposed:
        return e.iadd(e.imul(col, cols), row)
    return e.iadd(e.imul(row, cols), col)


def issue_copies(
    e: Emitter,
    buffer: SSAValue,
    ptr: SSAValue,
    copies,
    stage_base: Index,
    k0: Index,
    k_step: int,
    k_total: int | None,
    wanted: SSAValue | None = None,
) -> None:
    """cp.async of each (target, offset at K = 0, K, inside) copy at K offset
    `k0` (`k_step` elements a K) to `stage_base` + target of `buffer`; a copy
    past `k_total` (None: K divides), outside the operand or not `wanted`
    writes zeros and reads nothing."""
    for target, offset, k, inside in copies:
        k_inside = None
        if k_total is not None:
            k_inside = e.icmp(e.iadd(k0, k), k_total, "slt")
        valid = both(e, both(e, inside, k_inside), wanted)
        source = e.index(e.iadd(offset, e.imul(k0, k_step)))
        if valid is None:
            valid = e.true()
        else:
            source = e.select(valid, source, e.index(0))
        e.add(
            cuda.CpAsyncOp(
                buffer, e.index(e.iadd(stage_base, target)), ptr, source, valid
            )
        )


@dataclass
class StagedOperand:
    """One matmul operand passing through shared memory: per stage a tile of
    `rows` x `cols` elements in the operand's storage order (cols along its
    contiguous axis), `pitch` elements a row. `k_rows`: the rows are the K
    axis (A transposed, B not), else the columns are."""

    ptr: SSAValue
    base: Index
    buffer: SSAValue
    rows: int
    cols: int
    pitch: int
    k_rows: bool
    outer0: Index
    """The first row (of M or N) of the block's tile."""
    outer_total: int
    k_total: Index
    outer_partial: bool
    """Whether the last tile along M (or N) sticks out of the operand."""
    k_partial: bool

    @classmethod
    def of_rows(
        cls,
        e: Emitter,
        ptr: SSAValue,
        base: Index,
        element,
        shape: tuple[int, int, int, Index],
        pitch: int,
        name: str,
    ):
        """`stages` tiles of `rows` consecutive rows of a [total_rows, cols]
        matrix (shape = (stages, rows, cols, total_rows)) in a new shared
        buffer, `pitch` elements a row; a tile moves along the rows (the K
        of its copies). `total_rows` may be known at run time only (an
        index value)."""
        stages, rows, cols, total_rows = shape
        buffer = e.add(cuda.SharedAllocOp(element, stages * rows * pitch))
        buffer.name_hint = name
        return cls(
            ptr,
            base,
            buffer,
            rows,
            cols,
            pitch,
            k_rows=True,
            outer0=0,
            outer_total=cols,
            k_total=total_rows,
            outer_partial=False,
            k_partial=not isinstance(total_rows, int) or total_rows % rows != 0,
        )

    @property
    def row_length(self) -> int:
        """Elements a row of the operand's storage (its contiguous axis)."""
        return self.k_total if not self.k_rows else self.outer_total

    @property
    def stage_size(self) -> int:
        """Elements of one stage in shared memory."""
        return self.rows * self.pitch

    def place(self, e: Emitter, outer: Index, k: Index) -> Index:
        """Where element (outer, k) of the tile lies in a stage: its row of
        the storage order, `pitch` elements a row."""
        row, col = (k, outer) if self.k_rows else (outer, k)
        return e.iadd(e.imul(row, self.pitch), col)

    def copies(self, e: Emitter, tid: Index, threads: int, width: int):
        """Per 16-byte copy of this thread: where it goes in a stage, its global
        offset at K = 0, its row or column along K, and whether it lies inside
        the operand along M or N (None: always, the tiles divide it)."""
        per_row = self.cols // width
        result = []
        for copy in range(self.rows * per_row // threads):
            flat = e.iadd(tid, copy * threads)
            row, col = e.idiv(flat, per_row), e.imul(e.irem(flat, per_row), width)
            outer, k = (col, row) if self.k_rows else (row, col)
            target = self.place(e, outer, k)
            outer = e.iadd(self.outer0, outer)
            inside = None
            if self.outer_partial:
                inside = e.icmp(outer, self.outer_total, "slt")
            if self.k_rows:
                offset = e.iadd(e.imul(k, self.row_length), outer)
            else:
                offset = e.iadd(e.imul(outer, self.row_length), k)
            result.append((target, e.iadd(self.base, offset), k, inside))
        return result

    def issue(
        self,
        e: Emitter,
        copies,
        stage: Index,
        k0: Index,
        wanted: SSAValue | None = None,
    ) -> None:
        """cp.async of the tile at K offset `k0` into `stage` (zeros where it
        lies outside the operand, or everywhere unless `wanted`)."""
        issue_copies(
            e,
            self.buffer,
            self.ptr,
            copies,
            e.imul(stage, self.stage_size),
            k0,
            self.row_length if self.k_rows else 1,
            self.k_total if self.k_partial else None,
            wanted,
        )


@dataclass(frozen=True)
class LdmatrixLanes:
    """The row of an mma operand's 16 x 16 tile that each lane addresses for
    ldmatrix.x4 (lane l gives row l % 8 of matrix l / 8), as (outer, k): for
    the A fragment (outer: M) or two n8 fragments of B (outer: N), stored
    [outer][k], or [k][outer] (`k_rows`: read transposed). A matrix's row
    is 16 bytes, `k_unit` elements: 8 of 16 bits, or 4 f32 (tf32, whose
    fragments are 16 x 8 and two of 8 x 8, never read transposed)."""

    lane: Index
    quad: Index
    eighth: Index
    k_unit: int = 8

    @staticmethod
    def of(e: Emitter, lane: Index, k_unit: int = 8) -> LdmatrixLanes:
        return LdmatrixLanes(lane, e.idiv(lane, 8), e.irem(lane, 8), k_unit)

    def a(self, e: Emitter, k_rows: bool) -> tuple[Index, Index]:
        """(m, k) of this lane's row of the A fragment."""
        if k_rows:  # [k][m]: transposed into A's row-major fragments
            k = e.iadd(self.eighth, e.imul(e.idiv(self.quad, 2), 8))
            return e.imul(e.irem(self.quad, 2), 8), k
        return e.irem(self.lane, 16), e.imul(e.idiv(self.lane, 16), self.k_unit)

    def b(self, e: Emitter, k_rows: bool) -> tuple[Index, Index]:
        """(n, k) of this lane's row of two n8 fragments of B."""
        if k_rows:  # [k][n]: transposed into B's column-major fragments
            k = e.iadd(self.eighth, e.imul(e.irem(self.quad, 2), 8))
            return e.imul(e.idiv(self.quad, 2), 8), k
        n = e.iadd(self.eighth, e.imul(e.idiv(self.quad, 2), 8))
        return n, e.imul(e.irem(self.quad, 2), self.k_unit)


def a_fragment(
    e: Emitter, element, left: Sequence[SSAValue], right: Sequence[SSAValue]
) -> list[SSAValue]:
    """The A fragment of an m16n8k16 mma (or the A registers of a wgmma
    from registers) made from f32 accumulators of two n8 column blocks of a
    product's output, `left` and `right` (four each, in the accumulator
    layout: rows l / 4 and l / 4 + 8, columns 2 (l % 4) and 2 (l % 4) + 1),
    rounded to `element`: the accumulator pair has the A fragment's
    layout, so a product's output is the next one's A without leaving
    registers (attention's P V)."""
    return [
        e.add(cuda.PackOp(element, left[0], left[1])),
        e.add(cuda.PackOp(element, left[2], left[3])),
        e.add(cuda.PackOp(element, right[0], right[1])),
        e.add(cuda.PackOp(element, right[2], right[3])),
    ]
