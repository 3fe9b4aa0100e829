"""Gemm of a few rows (decode) as a GEMV: K split across a block's threads,
B streamed once, partial sums added by shuffles and in fixed order through
shared memory.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, scf
from xdsl.ir import Block, Region, SSAValue

from molten.dialects import cuda, kernel, molten
from molten.passes.lowering.emitter import (
    F32,
    INDEX,
    WARP,
    Emitter,
    Index,
    both,
    close_if,
    emit_if,
)
from molten.passes.lowering.epilogue import Epilogue
from molten.passes.lowering.evaluator import Evaluator
from molten.passes.lowering.kernels import KernelShell, Launch, LoweredKernel
from molten.passes.lowering.matmul import GemmShape, gemm_offset
from molten.passes.lowering.reductions import lanes_reduce


def lower_gemv(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, tiling: kernel.TilingAttr
) -> LoweredKernel:
    """A gemm of few rows (a GEMV), B stored [K, N] and read once: thread t of
    a block sums run t % runs (`vector` consecutive columns) of every row of
    the tile over rows k_lane, k_lane + k_lanes, ... of B (k_lane = t /
    runs), `stages` rows of B loaded before they are used; the k_lanes
    partial sums of each output are added by shuffles within a warp, then in
    one fixed order across warps through shared memory, and one thread per
    row and run applies the epilogue and stores the run."""
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    gemm = GemmShape.of(kfunc)
    mm = gemm.matmul
    name = kfunc.sym_name.data
    m, n, k = gemm.rows(e), gemm.n, gemm.k
    a_shape, trans_a = gemm.a_shape, gemm.transpose_a
    block = schedule.block.data
    lanes, in_flight = schedule.k_lanes.data, schedule.stages.data
    bm, bn, _ = (t.data for t in tiling.block)
    width = tiling.fragment.data[1].data
    runs = bn // width
    warps = block // WARP
    if gemm.transpose_b:
        return _lower_gemv_nk(kfunc, schedule, tiling)
    if n % width:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: @{name}'s schedule has vector = {width}, "
            f"which does not divide N = {n}"
        )
    if WARP % runs or block % WARP or bm * runs > block:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: @{name}: a GEMV of {runs} runs of columns a "
            f"block, {bm} rows and {block} threads (the runs must divide a warp, "
            "the block be whole warps and have a thread per row and run)"
        )
    partial = {d.data for d in tiling.partial}
    grid, grid_of = gemm.launch_grid(tiling, bm)

    tid = e.add(cuda.ThreadIdxOp())
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn)
    run = e.irem(tid, runs)
    k_lane = e.idiv(tid, runs)
    col = e.iadd(col0, e.imul(run, width))
    # A run past N (the last block's) reads the last run of B, stores nothing.
    b_col = e.imin(col, n - width) if "n" in partial else col
    # Where each row of A starts (row k of it, for A stored transposed);
    # offset(row, kk) = offset(row, 0) + offset(0, kk).
    a_starts = []
    for r in range(bm):
        row = e.iadd(row0, r)
        if "m" in partial:
            row = e.imin(row, e.isub(m, 1))
        a_starts.append(e.iadd(a_base, gemm_offset(e, row, 0, a_shape, trans_a)))
    for value, hint in ((run, "run"), (k_lane, "k_lane"), (col, "col")):
        if isinstance(value, SSAValue):
            value.name_hint = hint
    zero = e.f32(0.0)

    def accumulate(em: Emitter, rows_of_b: list[Index], acc, valid=None):
        # All loads first, so that `in_flight` rows of B are in flight at once.
        ev = Evaluator(em, pointers)
        loaded = []
        for kk in rows_of_b:
            b_offset = em.iadd(b_base, em.iadd(em.imul(kk, n), b_col))
            b = [ev.load(pointers[mm.rhs], em.iadd(b_offset, j)) for j in range(width)]
            a_step = gemm_offset(em, 0, kk, a_shape, trans_a)
            a = [ev.load(pointers[mm.lhs], em.iadd(s, a_step)) for s in a_starts]
            if valid is not None:
                b = [em.select(valid, v, zero) for v in b]
                a = [em.select(valid, v, zero) for v in a]
            loaded.append((a, b))
        for a, b in loaded:
            acc = [
                em.add(
                    arith.AddfOp(acc[r * width + j], em.add(arith.MulfOp(a[r], b[j])))
                )
                for r in range(bm)
                for j in range(width)
            ]
        return acc

    # Rows k_lane + i * lanes of B for i < k // lanes are inside for every
    # thread; the last, partial round of K guarded.
    trips = k // lanes
    acc = _whole_rounds(
        e,
        trips,
        in_flight,
        [zero] * (bm * width),
        lambda em, i: em.iadd(em.imul(i, lanes), k_lane),
        accumulate,
    )
    if k % lanes:
        valid = e.icmp(k_lane, k % lanes, "slt")
        last_row = e.imin(e.iadd(trips * lanes, k_lane), k - 1)
        acc = accumulate(e, [last_row], acc, valid)

    # Within a warp: the k_lanes of a run are the lanes that differ in the
    # bits above the run's.
    offset = runs
    while offset < WARP:
        acc = [e.add(arith.AddfOp(v, e.add(cuda.ShflXorOp(v, offset)))) for v in acc]
        offset *= 2
    # Across warps: each warp's sums in its slots, added in warp order.
    outputs_per_warp = bm * bn
    sums = e.add(cuda.SharedAllocOp(F32, warps * outputs_per_warp))
    sums.name_hint = "warp_sums"
    lane = e.irem(tid, WARP)
    warp = e.idiv(tid, WARP)
    writer = emit_if(e, e.icmp(lane, runs, "slt"))
    slot0 = writer.iadd(writer.imul(warp, outputs_per_warp), writer.imul(lane, width))
    for r in range(bm):
        for j in range(width):
            slot = writer.index(writer.iadd(slot0, r * bn + j))
            writer.add(cuda.StoreOp(acc[r * width + j], sums, slot))
    close_if(writer)
    e.add(cuda.SyncThreadsOp())

    reader = emit_if(e, e.icmp(tid, bm * runs, "slt"))
    row_in_tile = reader.idiv(tid, runs)
    row = reader.iadd(row0, row_in_tile)
    inside = both(
        reader,
        reader.icmp(row, m, "slt") if "m" in partial else None,
        reader.icmp(col, n, "slt") if "n" in partial else None,
    )
    final = reader if inside is None else emit_if(reader, inside)
    first = final.iadd(final.imul(row_in_tile, bn), final.imul(run, width))
    accumulators = []
    for j in range(width):
        total = None
        for w in range(warps):
            slot = final.index(final.iadd(first, w * outputs_per_warp + j))
            value = final.add(cuda.LoadOp(sums, slot))
            total = value if total is None else final.add(arith.AddfOp(total, value))
        accumulators.append((row, final.iadd(col, j), total))
    end = Epilogue(gemm, batch_index, accumulators)
    end.emit(final, pointers, shell.outputs, shell.out_ptrs)
    if inside is not None:
        close_if(final)
    close_if(reader)
    return shell.finish(Launch(grid, block, grid_of))


Accumulate = Callable[[Emitter, list[Index], list[SSAValue]], list[SSAValue]]
"""acc plus the products at a thread's positions of K, their loads first."""


def _whole_rounds(
    e: Emitter,
    trips: int,
    in_flight: int,
    acc: list[SSAValue],
    position: Callable[[Emitter, Index], Index],
    accumulate: Accumulate,
) -> list[SSAValue]:
    """`acc` through rounds 0 ... trips - 1 of a GEMV's K (the thread's
    `position` in each), `accumulate`d `in_flight` rounds at a time so that
    their loads are in flight together: a loop over whole groups, then the
    groups' remainder."""
    looped = trips - trips % in_flight
    if looped:
        body = Block(arg_types=[INDEX, *[F32] * len(acc)])
        loop = scf.ForOp(
            e.index(0), e.index(looped), e.index(in_flight), acc, Region(body)
        )
        e.block.add_op(loop)
        lb = e.nested(body)
        positions = [position(lb, lb.iadd(body.args[0], i)) for i in range(in_flight)]
        body.add_op(scf.YieldOp(*accumulate(lb, positions, list(body.args[1:]))))
        acc = list(loop.results)
    tail = [position(e, i) for i in range(looped, trips)]
    return accumulate(e, tail, acc) if tail else acc


def _lower_gemv_nk(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, tiling: kernel.TilingAttr
) -> LoweredKernel:
    """A gemm of few rows whose B is stored [N, K] (x @ w.T): `lanes`
    consecutive threads a group of c consecutive columns of the block's (c =
    the fragment's columns), lane l summing elements l w to l w + w - 1 of
    each round of lanes x w along K (w = `vector`, consecutive in B's rows
    and, unless A is transposed, in A's: one 16-byte load each where K
    allows), `stages` rounds loaded before they are used, each load of A
    serving all c columns; the lanes' sums added by shuffles, and lane 0
    applies the epilogue to the group's outputs."""
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    outputs, out_ptrs = shell.outputs, shell.out_ptrs
    gemm = GemmShape.of(kfunc)
    mm = gemm.matmul
    n, k = gemm.n, gemm.k
    block = schedule.block.data
    lanes, in_flight = schedule.k_lanes.data, schedule.stages.data
    width = schedule.vector.data
    bm, bn, _ = (t.data for t in tiling.block)
    columns = tiling.fragment.data[1].data
    partial = {d.data for d in tiling.partial}
    if WARP % lanes or k % width or ("m" in partial and isinstance(gemm.m, int)):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: @{kfunc.sym_name.data}: a GEMV of B stored "
            f"[N, K] with k_lanes = {lanes} (a divisor of a warp), vector = "
            f"{width} (a divisor of K = {k}) and every row in one block"
        )
    grid, grid_of = gemm.launch_grid(tiling, bm)
    # Over a named M (at most bm rows), the rows past it read the last row
    # and store nothing.
    m = gemm.rows(e) if "m" in partial else None

    tid = e.add(cuda.ThreadIdxOp())
    row0, col0, a_base, b_base, batch_index = gemm.block_origin(e, bm, bn)
    lane = e.irem(tid, lanes)
    first_col = e.iadd(col0, e.imul(e.idiv(tid, lanes), columns))
    cols = [e.iadd(first_col, j) for j in range(columns)]
    for value, hint in ((lane, "k_lane"), (first_col, "col")):
        if isinstance(value, SSAValue):
            value.name_hint = hint
    # A column past N (the last block's) reads the last one, stores nothing.
    b_starts = [
        e.iadd(b_base, e.imul(e.imin(col, n - 1) if "n" in partial else col, k))
        for col in cols
    ]

    # offset(row, kk) = offset(row, 0) + offset(0, kk), A transposed or not.
    def a_row(r: int) -> Index:
        row = e.iadd(row0, r)
        return row if m is None else e.imin(row, e.isub(m, 1))

    a_starts = [
        e.iadd(a_base, gemm_offset(e, a_row(r), 0, gemm.a_shape, gemm.transpose_a))
        for r in range(bm)
    ]
    zero = e.f32(0.0)
    step = lanes * width  # elements of K a round
    lane_k = e.imul(lane, width)

    def accumulate(em: Emitter, starts: list[Index], acc, valid=None):
        """acc[r * columns + c] plus row r of A times column c over `width`
        elements of K from each of `starts`; all loads first, so that they
        are in flight at once."""
        ev = Evaluator(em, pointers)
        loaded = []
        for kk in starts:
            b = [
                [
                    ev.load(pointers[mm.rhs], em.iadd(b_start, em.iadd(kk, j)))
                    for j in range(width)
                ]
                for b_start in b_starts
            ]
            a = [
                [
                    ev.load(
                        pointers[mm.lhs],
                        em.iadd(
                            start,
                            gemm_offset(
                                em, 0, em.iadd(kk, j), gemm.a_shape, gemm.transpose_a
                            ),
                        ),
                    )
                    for j in range(width)
                ]
                for start in a_starts
            ]
            if valid is not None:
                b = [[em.select(valid, v, zero) for v in column] for column in b]
            loaded.append((a, b))
        for a, b in loaded:
            for r in range(bm):
                for c in range(columns):
                    for j in range(width):
                        product = em.add(arith.MulfOp(a[r][j], b[c][j]))
                        i = r * columns + c
                        acc[i] = em.add(arith.AddfOp(acc[i], product))
        return acc

    # Whole rounds of K; a last, partial round with each lane's vector kept
    # inside K (K is a whole number of vectors) and counted only if it was
    # there.
    trips = k // step
    acc = _whole_rounds(
        e,
        trips,
        in_flight,
        [zero] * (bm * columns),
        lambda em, i: em.iadd(em.imul(i, step), lane_k),
        accumulate,
    )
    if k % step:
        kk = e.iadd(trips * step, lane_k)
        valid = e.icmp(kk, k, "slt")
        acc = accumulate(e, [e.imin(kk, k - width)], acc, valid)

    # The group's lanes are consecutive: their sums added by shuffles.
    acc = [lanes_reduce(e, molten.ReduceSumOp, v, lanes) for v in acc]
    writer = emit_if(e, e.icmp(lane, 0, "eq"))
    for c, col in enumerate(cols):
        inside = writer.icmp(col, n, "slt") if "n" in partial else None
        final = writer if inside is None else emit_if(writer, inside)
        accumulators = [
            (final.iadd(row0, r), col, acc[r * columns + c]) for r in range(bm)
        ]
        if m is None:
            end = Epilogue(gemm, batch_index, accumulators)
            end.emit(final, pointers, outputs, out_ptrs)
        else:  # over a named M: each row's store guarded
            for accumulator in accumulators:
                stored = emit_if(final, final.icmp(accumulator[0], m, "slt"))
                end = Epilogue(gemm, batch_index, [accumulator])
                end.emit(stored, pointers, outputs, out_ptrs)
                close_if(stored)
        if inside is not None:
            close_if(final)
    close_if(writer)
    return shell.finish(Launch(grid, block, grid_of))
