"""A gemm kernel's end: the epilogue (bias, activation, residual, cast)
evaluated on each thread's f32 accumulators, each output stored once,
directly or staged through shared memory and stored 16 bytes a thread;
then the return and the kernel op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.ir import SSAValue

from molten.dialects import cuda
from molten.dialects.molten import value_dims
from molten.passes.lowering.emitter import (
    Emitter,
    Index,
    both,
    broadcast_index,
    close_if,
    element_of,
    emit_for,
    emit_if,
    ravel,
)
from molten.passes.lowering.evaluator import Evaluator, round_to
from molten.passes.lowering.kernels import (
    KernelShell,
    Launch,
    Layout,
    LoweredKernel,
    store_output,
    store_scalar,
)
from molten.passes.lowering.matmul import GemmShape

Accumulated = SSAValue | tuple[SSAValue, ...]
"""A thread's f32 accumulator at one place of the output tile: one, or one
per matmul of a kernel of siblings (GemmShape.matmuls)."""


def by_place(values: Sequence[SSAValue], products: int) -> list[Accumulated]:
    """A thread's accumulators, each matmul's one after another, as one
    Accumulated per place (the siblings' side by side)."""
    if products == 1:
        return list(values)
    count = len(values) // products
    return [tuple(values[p * count + j] for p in range(products)) for j in range(count)]


Values = list[SSAValue]
SiblingTile = Callable[[Emitter, GemmShape, Index, Values, Values], None]
"""A concatenated kernel's work on one sibling's tile: given the branch's
emitter, that sibling's gemm, the tile's index among its own column tiles,
and the outputs (and pointers) computed from it."""


def each_sibling(
    gemm: GemmShape,
    e: Emitter,
    tile: Index,
    bn: int,
    outputs: Sequence[SSAValue],
    out_ptrs: Sequence[SSAValue],
    work: SiblingTile,
) -> None:
    """A concatenated kernel's (GemmShape.concatenated) work on its column
    tile `tile` of `bn` columns, counted over every sibling's tiles one
    sibling after another: a branch per sibling (the same in every thread
    of the block) holding `work` on that sibling's tile."""
    starts = gemm.sibling_tiles(bn)
    last = len(gemm.matmuls) - 1
    for p in range(last + 1):
        inside = both(
            e,
            e.icmp(tile, starts[p], "sge") if p else None,
            e.icmp(tile, starts[p + 1], "slt") if p < last else None,
        )
        assert inside is not None
        branch = emit_if(e, inside)
        own, own_ptrs = gemm.sibling_outputs(p, outputs, out_ptrs)
        work(branch, gemm.sibling(p), branch.isub(tile, starts[p]), own, own_ptrs)
        close_if(branch)


@dataclass(frozen=True)
class RowMap:
    """Where row r (0 ... count - 1) of the rows a kernel's tiles run
    through is in the matmul's result: its batch index and row. A gemm's
    rows are one batch matrix's; an attention with packed query heads runs
    through the rows of consecutive matrices."""

    count: int
    prefix: Callable[[Emitter, Index], list[Index]]

    @staticmethod
    def of(gemm: GemmShape, batch_index: list[Index] | RowMap) -> RowMap:
        """The rows of the matrix at `batch_index` (or the map given)."""
        if isinstance(batch_index, RowMap):
            return batch_index
        return RowMap(gemm.m, lambda e, row: [*batch_index, row])


@dataclass(frozen=True)
class StagingTile:
    """A block's tile of one output in shared memory, `pitch` elements a
    row, between the epilogue and the store of `width`-element vectors to
    the output `ptr`."""

    output: SSAValue
    ptr: SSAValue
    buffer: SSAValue
    pitch: int
    width: int
    layout: Layout | None = None
    """Where the output permutes a value of the matmul's shape (the tile
    holds that value; each vector goes where the layout sends it)."""


@dataclass(frozen=True)
class Staging:
    """Shared buffers free for a gemm's epilogue: the block tile's shape and
    first row and column, the thread's index in the block and the block's
    threads (which store the tiles a vector each at a time)."""

    buffers: tuple[SSAValue, ...]
    tile_shape: tuple[int, int]
    origin: tuple[Index, Index]
    tid: Index
    threads: int


def staging_tiles(
    gemm: GemmShape, outputs: list[SSAValue], out_ptrs: list[SSAValue], staging: Staging
) -> list[StagingTile]:
    """The outputs the epilogue stores through shared memory, each in one
    of the `staging` buffers (the operand tiles, idle once the K loop is
    done): an output of the matmul's shape, of a free buffer's element
    type, with rows of whole vectors and the block's tile of it fitting
    the buffer (rows padded by one vector, so that the threads writing
    a column spread over the banks), or a layout of such a value that
    keeps vectors whole. The others are stored directly."""
    bm, bn = staging.tile_shape
    free = list(staging.buffers)
    tiles = []
    for output, ptr in zip(outputs, out_ptrs, strict=True):
        element = element_of(output)
        width = cuda.VECTOR_BYTES // cuda.element_bytes(element)
        layout = Layout.of(output, gemm.result_shape)
        if gemm.n % width:
            continue
        if layout is None and list(value_dims(output)) != gemm.result_shape:
            continue
        if layout is not None and layout.contiguous % width:
            continue
        pitch = bn + width
        for buffer in free:
            alloc = buffer.owner
            assert isinstance(alloc, cuda.SharedAllocOp)
            assert isinstance(buffer.type, cuda.PointerType)
            if (
                buffer.type.element_type == element
                and alloc.size.value.data >= bm * pitch
            ):
                free.remove(buffer)
                tiles.append(StagingTile(output, ptr, buffer, pitch, width, layout))
                break
    return tiles


Placed = tuple[Index, Index, Accumulated]
"""A thread's accumulator at its row and column of the matmul's result."""
Defined = tuple[SSAValue, list[Index], SSAValue]
"""(value, index, scalar) a kernel computed before its epilogue."""


@dataclass(frozen=True)
class Epilogue:
    """A tiled kernel's outputs from each (row, column, f32 accumulator) of
    this thread (a tuple of accumulators where the kernel computes sibling
    matmuls, one each): each matmul's result rounded to its type, the ops
    after it evaluated on it, each output stored once; rows and columns
    past the matrix skipped where the tiles do not divide it
    (`guard_rows`, `guard_cols`). With `staging`, the outputs that fit its
    buffers go to their tile in shared memory first, at their place
    relative to the block tile's origin, and from there to the output a
    vector a thread (`store_staged`). The accumulators come in runs of
    `run` consecutive columns of a row, the first a multiple of `run`:
    where `run` divides N, a run is guarded as one, so that its stores
    stay together for `vectorize` (a run starting inside the matrix lies
    in it). An output that permutes a value of the matmul's shape
    (`Layout`) is that value stored where the layout sends it; a run of it
    stays together where the layout keeps runs contiguous."""

    gemm: GemmShape
    rows: list[Index] | RowMap
    """The batch index of the tile's matrix, or where each row lies."""
    accumulators: Sequence[Placed]
    guard_rows: bool = False
    guard_cols: bool = False
    staging: Staging | None = None
    run: int = 1
    defined: Sequence[Defined] = ()
    """What the kernel computed already (a prologue's row reductions, at
    [row, 0])."""

    def emit(
        self,
        e: Emitter,
        pointers: dict[SSAValue, SSAValue],
        outputs: list[SSAValue],
        out_ptrs: list[SSAValue],
    ) -> None:
        """The epilogue's ops in `e`, storing `outputs` to `out_ptrs`."""
        staging = self.staging
        staged = []
        if staging is not None:
            staged = staging_tiles(self.gemm, outputs, out_ptrs, staging)
        if staged:
            # Every warp is done with the operand tiles (its copies landed,
            # its tensor-core reads retired) before they are overwritten.
            e.add(cuda.SyncThreadsOp())
        self._store(e, pointers, outputs, out_ptrs, staged)
        if staging is None or not staged:
            return
        e.add(cuda.SyncThreadsOp())
        store_staged(
            self.gemm,
            e,
            staged,
            staging,
            self.rows,
            self.guard_rows,
            self.guard_cols,
        )

    def _store(
        self,
        e: Emitter,
        pointers: dict[SSAValue, SSAValue],
        outputs: list[SSAValue],
        out_ptrs: list[SSAValue],
        staged: Sequence[StagingTile],
    ) -> None:
        """Each accumulator's outputs stored, or written to its staging tile."""
        gemm, accumulators = self.gemm, self.accumulators
        guard_rows, guard_cols = self.guard_rows, self.guard_cols
        origin = self.staging.origin if self.staging is not None else (0, 0)
        rows = RowMap.of(gemm, self.rows)
        ev = Evaluator(e, pointers)
        for value, index, scalar in self.defined:
            ev.define(value, index, scalar)
        tiles = {tile.output: tile for tile in staged}
        layouts = {o: Layout.of(o, gemm.result_shape) for o in outputs}
        run = 1 if gemm.n % self.run else self.run
        # Rows past M: a gemm's epilogue is evaluated on the last row (its
        # inputs read in bounds) and only the stores are guarded, so that the
        # rows' work overlaps as in a tile that M divides (a guard around it
        # all kept the compiler from overlapping a gelu epilogue's rows). Where the
        # kernel defined values by row (a prologue's reductions) or its rows
        # are not one matrix's (a RowMap), the guard takes it all.
        clamped = guard_rows and not self.defined and not isinstance(self.rows, RowMap)
        for first in range(0, len(accumulators), run):
            row, col, _ = accumulators[first]
            inside = None
            if guard_rows and not clamped:
                inside = e.icmp(row, rows.count, "slt")
            if guard_cols:
                inside = both(e, inside, e.icmp(col, gemm.n, "slt"))
            inner = e if inside is None else emit_if(e, inside)
            rows_inside = inner.icmp(row, rows.count, "slt") if clamped else None
            stores: list[tuple[Evaluator, SSAValue, SSAValue, Index]] = []
            # Each layout output's place of the run's first element.
            run_places: dict[SSAValue, list[Index]] = {}
            for j, (row, col, accumulated) in enumerate(
                accumulators[first : first + run]
            ):
                scoped = ev.scoped(inner)
                at_row = inner.imin(row, inner.isub(rows.count, 1)) if clamped else row
                index = [*rows.prefix(inner, at_row), col]
                stored_at = [*rows.prefix(inner, row), col] if clamped else index
                values = (
                    accumulated if isinstance(accumulated, tuple) else (accumulated,)
                )
                for mm, value in zip(gemm.matmuls, values, strict=True):
                    rounded = round_to(inner, value, element_of(mm.result))
                    scoped.define(mm.result, index, rounded)
                for output, ptr in zip(outputs, out_ptrs, strict=True):
                    tile, layout = tiles.get(output), layouts[output]
                    if tile is None and layout is not None:
                        source = scoped.at(layout.source, index)
                        place = _run_place(
                            layout, inner, stored_at, j, run, run_places, output
                        )
                        offset = ravel(inner, place, value_dims(output))
                        stores.append((scoped, source, ptr, offset))
                        continue
                    if tile is None:
                        if clamped:
                            read_at = broadcast_index(
                                index, value_dims(output), gemm.result_shape
                            )
                            scalar = scoped.at(output, read_at)
                            stores.append((scoped, scalar, ptr, (output, stored_at)))
                        else:
                            store_output(scoped, output, ptr, index, gemm.result_shape)
                        continue
                    place = inner.iadd(
                        inner.imul(inner.isub(row, origin[0]), tile.pitch),
                        inner.isub(col, origin[1]),
                    )
                    value = output if layout is None else layout.source
                    stores.append((scoped, scoped.at(value, index), tile.buffer, place))
            guarded = inner if rows_inside is None else emit_if(inner, rows_inside)
            for scoped, value, ptr, where in stores:
                if isinstance(where, tuple):  # (output, its index), evaluated
                    output, stored = where
                    store_output(
                        scoped.scoped(guarded),
                        output,
                        ptr,
                        stored,
                        gemm.result_shape,
                        value,
                    )
                    continue
                store_scalar(scoped.scoped(guarded), value, ptr, where)
            if rows_inside is not None:
                close_if(guarded)
            if inside is not None:
                close_if(inner)


def _run_place(
    layout: Layout,
    e: Emitter,
    index: list[Index],
    j: int,
    run: int,
    run_places: dict[SSAValue, list[Index]],
    output: SSAValue,
) -> list[Index]:
    """Where `layout` sends the `j`-th element of a run of `run` adjacent
    columns: the first's place, kept in `run_places`, offset by `j` along
    the output's last axis where the layout keeps the run contiguous (so
    that `vectorize` sees consecutive stores); else its own place."""
    if layout.contiguous % run:
        return layout.place(e, index)
    if j == 0:
        run_places[output] = layout.place(e, index)
        return run_places[output]
    first = run_places[output]
    return [*first[:-1], e.iadd(first[-1], j)]


def store_staged(
    gemm: GemmShape,
    e: Emitter,
    staged: Sequence[StagingTile],
    staging: Staging,
    batch_index: list[Index] | RowMap,
    guard_rows: bool,
    guard_cols: bool,
) -> None:
    """Each staged output's block tile from shared memory to the output,
    a vector a thread at a time, consecutive threads along a row: a
    warp writes whole rows at once (the accumulators' own layout would
    write a few bytes of each of eight rows)."""
    bm, bn = staging.tile_shape
    origin, block = staging.origin, staging.threads
    rows = RowMap.of(gemm, batch_index)
    for tile in staged:
        per_row = bn // tile.width
        vectors = bm * per_row
        # A loop, not unrolled here: its indices would be shared with
        # the copies' (by cse), whose registers then live to the end.
        loop, body = emit_for(e, 0, -(-vectors // block), 1)
        flat = loop.iadd(staging.tid, loop.imul(body.args[0], block))
        inside = loop.icmp(flat, vectors, "slt") if vectors % block else None
        inner = loop if inside is None else emit_if(loop, inside)
        r = inner.idiv(flat, per_row)
        c = inner.imul(inner.irem(flat, per_row), tile.width)
        row, col = inner.iadd(origin[0], r), inner.iadd(origin[1], c)
        load = cuda.LoadOp(
            tile.buffer,
            inner.index(inner.iadd(inner.imul(r, tile.pitch), c)),
            tile.width,
        )
        inner.add(load)
        # Rows of whole vectors: a vector starting inside the matrix
        # lies inside it.
        guard = inner.icmp(row, rows.count, "slt") if guard_rows else None
        if guard_cols:
            guard = both(inner, guard, inner.icmp(col, gemm.n, "slt"))
        stores = inner if guard is None else emit_if(inner, guard)
        index = [*rows.prefix(stores, row), col]
        if tile.layout is None:
            offset = ravel(stores, index, gemm.result_shape)
        else:
            place = tile.layout.place(stores, index)
            offset = ravel(stores, place, value_dims(tile.output))
        stores.add(cuda.StoreOp(list(load.values), tile.ptr, stores.index(offset)))
        if guard is not None:
            close_if(stores)
        if inside is not None:
            close_if(inner)
        body.add_op(scf.YieldOp())


def finish(
    shell: KernelShell,
    epilogue: Epilogue,
    launch: Launch,
    branch: Emitter | None = None,
) -> LoweredKernel:
    """A tiled kernel's end: `epilogue` on the shell's outputs, then the
    kernel, launched as `launch` says. With `branch`, the epilogue goes in
    that `scf.if` body of the entry block (a condition the same in every
    thread of the block: the last block of a split to arrive), which is
    closed before the return."""
    epilogue.emit(
        shell.e if branch is None else branch,
        shell.pointers,
        shell.outputs,
        shell.out_ptrs,
    )
    if branch is not None:
        close_if(branch)
    return shell.finish(launch)
