"""Gemm on the CUDA cores (SIMT): each thread accumulates a micro-tile of
outputs (4x4, 8x8) while f32 operand tiles pass through two stages of
shared memory. Also the variant launched for a tensor-core gemm whose
operands are not 16-byte aligned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith, scf
from xdsl.ir import Block, Region, SSAValue

from molten.dialects import cuda, kernel
from molten.passes.lowering.emitter import F32, INDEX, Emitter, Index, both
from molten.passes.lowering.epilogue import (
    Accumulated,
    Epilogue,
    by_place,
    each_sibling,
    finish,
)
from molten.passes.lowering.evaluator import Evaluator
from molten.passes.lowering.kernels import KernelShell, Launch, LoweredKernel
from molten.passes.lowering.matmul import GemmShape, gemm_offset

SIMT_A_SKEW = 4
"""Floats a SIMT gemm's A tile pads each of its K rows with, so that the
threads storing it transposed spread over the banks (a multiple of
SIMT_VECTOR, so the rows stay aligned for vector reads)."""
SIMT_VECTOR = 4
"""Elements a SIMT gemm thread reads from a shared tile at once (16 bytes of
f32), and loads of a global run at most."""
SIMT_MIN_BLOCKS = 2
"""Blocks of a SIMT gemm an SM holds at least: ptxas caps its registers (at
128 for 256 threads) so that one block's barrier overlaps another's math;
on the H100 this ran 6% faster than one block an SM (f32, 4096 cubed)."""


def _micro_tile_step(i: int, at_once: int, threads: int) -> int:
    """How far row (or column) i of a SIMT thread's micro-tile lies past its
    first in the block tile: in groups of `at_once` consecutive ones, group
    g starting at at_once * (thread + g * threads)."""
    group, within = divmod(i, at_once)
    return group * threads * at_once + within


def lower_gemm_simt(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, tiling: kernel.TilingAttr
) -> LoweredKernel:
    """A gemm on the SIMT cores, as `tiling` has it: each thread accumulates
    a micro-tile of outputs while f32 operand tiles pass through two stages
    of shared memory."""
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    gemm = GemmShape.of(kfunc, siblings=True, prologue=True)
    products = len(gemm.matmuls)
    m, k = gemm.m, gemm.k
    a_shape = gemm.a_shape
    trans_a, trans_b = gemm.transpose_a, gemm.transpose_b
    block = schedule.block.data
    bm, bn, bk = (t.data for t in tiling.block)
    partial = {d.data for d in tiling.partial}
    fm, fn = (f.data for f in tiling.fragment.data[:2])
    # Thread (r, c) holds groups of `rows_at_once` consecutive rows, group g
    # starting at row rows_at_once * (r + g * threads_m) of the tile, and
    # likewise of columns: one vector read of shared memory a group (a
    # warp's reads of a K row of B consecutive, of A broadcast).
    threads_m, threads_n = bm // fm, bn // fn
    rows_at_once, cols_at_once = math.gcd(fm, SIMT_VECTOR), math.gcd(fn, SIMT_VECTOR)
    if (
        threads_m * threads_n != block
        or bm % fm
        or bn % fn
        or (bm * bk) % block
        or (bk * bn) % block
    ):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: gemm tile {bm}x{bn}x{bk} with {block} threads "
            f"(each thread computes {fm}x{fn} outputs)"
        )
    grid, grid_of = gemm.launch_grid(tiling, bm)
    a_pitch = bm + SIMT_A_SKEW
    a_stage, b_stage = bk * a_pitch, bk * bn
    last_k0 = (math.ceil(k / bk) - 1) * bk

    tid = e.add(cuda.ThreadIdxOp())
    # A concatenated kernel's tiles are each one sibling's: its origin is
    # found in the sibling's branch.
    origin = None if gemm.concatenated else gemm.block_origin(e, bm, bn)
    thread_row = e.idiv(tid, threads_n)
    thread_col = e.irem(tid, threads_n)
    # Two stages: the next K step's tiles are loaded while this one's are used.
    a_tile = e.add(cuda.SharedAllocOp(F32, 2 * a_stage))  # [2][bk][a_pitch]
    a_tile.name_hint = "a_tile"
    # [2][bk][bn] of each matmul's B (siblings share A's tile).
    in_tile = 1 if gemm.concatenated else products
    b_tiles = [e.add(cuda.SharedAllocOp(F32, 2 * b_stage)) for _ in range(in_tile)]
    for p, b_tile in enumerate(b_tiles):
        b_tile.name_hint = "b_tile" if in_tile == 1 else f"b{p}_tile"
    zero = e.f32(0.0)

    def tile_of(
        e: Emitter, gemm: GemmShape, origin
    ) -> tuple[list[tuple[Index, Index, Accumulated]], list[Index]]:
        """This thread's accumulators of `gemm`'s block tile at `origin`
        (GemmShape.block_origin), and the tile's batch index."""
        mm = gemm.matmul
        products = len(gemm.matmuls)
        n = gemm.n
        b_shape = gemm.b_shape
        row0, col0, a_base, b_base, batch_index = origin

        def load_tile(
            em: Emitter,
            ptr,
            base,
            tile_rows,
            tile_cols,
            shape,
            transposed,
            rows,
            cols,
            dims,
            origin,
            computed: SSAValue | None = None,
        ):
            # The tile_rows x tile_cols tile at `origin`, walked in its storage
            # order: consecutive threads on consecutive runs of the contiguous
            # axis (coalesced), each a run of up to SIMT_VECTOR elements (which
            # `vectorize` can make one load); rows and columns past the matrix
            # (only along the tiling's partial loops) read as zeros. A
            # `computed` operand (a prologue's lhs) is evaluated per element.
            loads = Evaluator(em, pointers)
            guard_rows, guard_cols = (d in partial for d in dims)
            outer, inner = (
                (tile_cols, tile_rows) if transposed else (tile_rows, tile_cols)
            )
            run = next(
                w
                for w in (SIMT_VECTOR, 2, 1)
                if inner % w == 0 and (outer * inner // w) % block == 0
            )
            staged = []
            for chunk in range(outer * inner // (run * block)):
                flat = em.iadd(tid, chunk * block)
                o, i0 = (
                    em.idiv(flat, inner // run),
                    em.imul(em.irem(flat, inner // run), run),
                )
                for j in range(run):
                    i = em.iadd(i0, j)
                    r, c = (i, o) if transposed else (o, i)
                    grow, gcol = em.iadd(origin[0], r), em.iadd(origin[1], c)
                    valid = both(
                        em,
                        em.icmp(grow, rows, "slt") if guard_rows else None,
                        em.icmp(gcol, cols, "slt") if guard_cols else None,
                    )
                    if guard_rows:
                        grow = em.imin(grow, em.isub(rows, 1))
                    if guard_cols:
                        gcol = em.imin(gcol, em.isub(cols, 1))
                    if computed is not None:
                        value = loads.at(computed, [grow, gcol])
                    else:
                        offset = em.iadd(
                            base, gemm_offset(em, grow, gcol, shape, transposed)
                        )
                        value = loads.load(ptr, offset)
                    if valid is not None:
                        value = em.select(valid, value, zero)
                    staged.append((r, c, value))
            return staged

        def load_tiles(em: Emitter, k0: Index):
            # A's tile: rows m (bm), columns k (bk); B's: rows k (bk), columns n.
            a = load_tile(
                em,
                pointers[gemm.source],
                a_base,
                bm,
                bk,
                a_shape,
                trans_a,
                m,
                k,
                "mk",
                (row0, k0),
                mm.lhs if gemm.has_prologue else None,
            )
            bs = [
                load_tile(
                    em,
                    pointers[rhs],
                    b_base,
                    bk,
                    bn,
                    b_shape,
                    trans_b,
                    k,
                    n,
                    "kn",
                    (k0, col0),
                )
                for rhs in gemm.rhs_operands
            ]
            return a, bs

        def store_tiles(em: Emitter, stage: Index, tiles) -> None:
            a, bs = tiles
            a_at, b_at = em.imul(stage, a_stage), em.imul(stage, b_stage)
            for r, c, value in a:  # stored k-major
                slot = em.iadd(a_at, em.iadd(em.imul(c, a_pitch), r))
                em.add(cuda.StoreOp(value, a_tile, em.index(slot)))
            for b, b_tile in zip(bs, b_tiles, strict=True):
                for r, c, value in b:
                    slot = em.iadd(b_at, em.iadd(em.imul(r, bn), c))
                    em.add(cuda.StoreOp(value, b_tile, em.index(slot)))

        store_tiles(e, 0, load_tiles(e, 0))
        e.add(cuda.SyncThreadsOp())

        count = fm * fn  # accumulators of each matmul, one after another
        loop_body = Block(arg_types=[INDEX, *[F32] * count * products])
        loop = scf.ForOp(
            e.index(0),
            e.index(k),
            e.index(bk),
            [zero] * count * products,
            Region(loop_body),
        )
        e.block.add_op(loop)
        lb = e.nested(loop_body)
        k0 = loop_body.args[0]
        stage = lb.irem(lb.idiv(k0, bk), 2)
        # The last step loads its own tiles again (into the stage no one reads),
        # which keeps the loop free of branches.
        upcoming = load_tiles(lb, lb.imin(lb.iadd(k0, bk), last_k0))
        a_at, b_at = lb.imul(stage, a_stage), lb.imul(stage, b_stage)

        def group_starts(
            at: Index, thread: Index, size: int, at_once: int, threads: int
        ):
            # Where each group of `at_once` rows (or columns) of this thread's
            # micro-tile starts in a K row of the stage at `at`.
            return [
                lb.iadd(
                    at,
                    lb.iadd(
                        lb.imul(thread, at_once), _micro_tile_step(i, at_once, threads)
                    ),
                )
                for i in range(0, size, at_once)
            ]

        a_rows = group_starts(a_at, thread_row, fm, rows_at_once, threads_m)
        b_cols = group_starts(b_at, thread_col, fn, cols_at_once, threads_n)

        def read(tile: SSAValue, at: Index, width: int) -> Sequence[SSAValue]:
            load = cuda.LoadOp(tile, lb.index(at), width)
            lb.add(load)
            return load.values

        acc = list(loop_body.args[1:])
        for kk in range(bk):
            a = [
                v
                for start in a_rows
                for v in read(a_tile, lb.iadd(start, kk * a_pitch), rows_at_once)
            ]
            for p, b_tile in enumerate(b_tiles):
                b = [
                    v
                    for start in b_cols
                    for v in read(b_tile, lb.iadd(start, kk * bn), cols_at_once)
                ]
                at = p * count
                acc[at : at + count] = [
                    lb.add(
                        arith.AddfOp(
                            acc[at + i * fn + j], lb.add(arith.MulfOp(a[i], b[j]))
                        )
                    )
                    for i in range(fm)
                    for j in range(fn)
                ]
        store_tiles(lb, lb.isub(1, stage), upcoming)
        lb.add(cuda.SyncThreadsOp())
        loop_body.add_op(scf.YieldOp(*acc))

        first_row = e.iadd(row0, e.imul(thread_row, rows_at_once))
        first_col = e.iadd(col0, e.imul(thread_col, cols_at_once))
        # Each row and column made once (in the order cse would keep): the
        # epilogue computes what is per row (a prologue's row reductions) once
        # a row.
        rows: dict[int, Index] = {}
        cols: dict[int, Index] = {}

        def row(i: int) -> Index:
            if i not in rows:
                rows[i] = e.iadd(
                    first_row, _micro_tile_step(i, rows_at_once, threads_m)
                )
            return rows[i]

        def col(j: int) -> Index:
            if j not in cols:
                cols[j] = e.iadd(
                    first_col, _micro_tile_step(j, cols_at_once, threads_n)
                )
            return cols[j]

        places = by_place(list(loop.results), products)
        accumulators = [
            (
                row(i),
                col(j),
                places[i * fn + j],
            )
            for i in range(fm)
            for j in range(fn)
        ]
        return accumulators, batch_index

    launch = Launch(grid, block, grid_of, min_blocks=SIMT_MIN_BLOCKS)
    if origin is not None:
        accumulators, batch_index = tile_of(e, gemm, origin)
        guard_rows, guard_cols = "m" in partial, "n" in partial
        end = Epilogue(gemm, batch_index, accumulators, guard_rows, guard_cols)
        return finish(shell, end, launch)

    def sibling_tile(branch, sibling, tile, own, own_ptrs) -> None:
        at = sibling.block_origin(branch, bm, bn, col_tile=tile)
        accumulators, batch_index = tile_of(branch, sibling, at)
        guard_cols = sibling.n % bn != 0
        end = Epilogue(sibling, batch_index, accumulators, "m" in partial, guard_cols)
        end.emit(branch, pointers, own, own_ptrs)

    column_tile = e.add(cuda.BlockIdxOp(cuda.Dim.X))
    outputs, out_ptrs = shell.outputs, shell.out_ptrs
    each_sibling(gemm, e, column_tile, bn, outputs, out_ptrs, sibling_tile)
    return shell.finish(launch)
