"""Gemm on sm_90a's wgmma in a persistent kernel fed by TMA (a schedule's
`persistent` blocks): one producer warpgroup loads the operand tiles by TMA
into a ring of `stages` tiles, each guarded by a full and an empty
mbarrier; the other warpgroups (one per 64 rows of the block tile) wait on
a stage's full barrier, issue its wgmmas, and release the previous step's
stage once its wgmmas are done. Each block loops over output tiles, walked
in groups of GROUP_M rows of tiles (so that the blocks at work at once
share rows of A and columns of B in L2), and the producer loads the next
tile while the consumers run this one's epilogue.

In a cluster of C blocks (a schedule's `cluster`), the blocks take C
consecutive row tiles of the same columns: each loads its own tile of A
and 1/C of the tile of B, multicast into every block of the cluster, so
that L2 serves B once for C blocks. A stage is then refilled only when the
consumers of every block of the cluster have released it: each consumer
warp arrives at that stage's empty barrier in every block.

The launcher encodes a tensor map per operand (`cuda.make_tensor_map`),
128-byte swizzled: the layout the swizzled operand tiles of the cp.async
kernel have, so their wgmma descriptors are reused (`SwizzledOperand`).
Elements past the matrix arrive as zeros; the epilogue guards the partial
tiles' rows and columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.ir import SSAValue

from molten.dialects import cuda, kernel
from molten.dialects.molten import value_dims
from molten.passes.lowering.emitter import (
    WARP,
    Emitter,
    Index,
    close_if,
    element_of,
    emit_carried_for,
    emit_if,
)
from molten.passes.lowering.epilogue import (
    Epilogue,
    by_place,
    each_sibling,
)
from molten.passes.lowering.fragments import wgmma_m64
from molten.passes.lowering.gemm_tma_prologue import ComputedLhs, row_reductions_done
from molten.passes.lowering.gemm_wgmma import (
    SWIZZLE_ELEMENTS,
    SWIZZLE_ROWS,
    WARPGROUP,
    SwizzledOperand,
)
from molten.passes.lowering.kernels import (
    GridOf,
    KernelShell,
    Launch,
    LoweredKernel,
)
from molten.passes.lowering.matmul import GemmShape
from molten.passes.lowering.pipeline import peeled_steps
from molten.passes.lowering.split_k import SplitK

GROUP_M = 8
"""Rows of output tiles a block's tile walk takes before the next columns."""
PRODUCER_REGISTERS = 40
"""Registers a producer thread keeps (setmaxnreg): it only issues TMA loads."""
CONSUMER_REGISTERS = 232
"""Registers a consumer thread takes: its accumulators and their epilogue."""


@dataclass(frozen=True)
class TensorMapSpec:
    """A tensor map the launcher makes for a kernel: of its input `operand`
    (an index among the kernel's inputs), a row-major [rows, cols] matrix,
    read in boxes of `box` = [rows, cols]."""

    operand: int
    shape: tuple[int, int]
    box: tuple[int, int]


def lower_gemm_wgmma_tma(
    kfunc: kernel.FuncOp, tiling: kernel.TilingAttr, persistent: int, cluster: int = 1
) -> LoweredKernel:
    """A 2-D gemm with A stored [M, K] and B either way, on wgmma warpgroups
    of a 64-row, whole-width warp tile each, fed by a producer warpgroup's
    TMA loads, in `persistent` blocks (at most one per tile), in clusters
    of `cluster` blocks."""
    shell = KernelShell.of(kfunc)
    e, pointers, region = shell.e, shell.pointers, shell.region
    gemm = GemmShape.of(kfunc, siblings=True, prologue=True)
    mm = gemm.matmul
    products = len(gemm.matmuls)
    # Concatenated siblings (q, k and v): each tile one sibling's, so one
    # B tile a stage; side by side, each sibling's B tile.
    in_tile = 1 if gemm.concatenated else products
    element = element_of(mm.lhs)
    bm, bn, bk = (t.data for t in tiling.block)
    wm, wn = (t.data for t in tiling.warp)
    stages = tiling.stages.data
    partial = {d.data for d in tiling.partial}
    consumers = bm // wm
    if (
        gemm.batch_shape
        or gemm.transpose_a
        or tiling.k_steps.data % tiling.split.data
        or bk != SWIZZLE_ELEMENTS
        or wn != bn
        or bn > 256
        or (not gemm.transpose_b and bn % SWIZZLE_ELEMENTS)
        or stages < 2
        or (gemm.transpose_b and bn % (SWIZZLE_ROWS * cluster))
        or (not gemm.transpose_b and (bn // SWIZZLE_ELEMENTS) % cluster)
        or (gemm.has_prologue and (tiling.split.data > 1 or gemm.k % bk))
        or (gemm.concatenated and tiling.split.data > 1)
    ):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: a persistent TMA gemm of {gemm.describe()} "
            f"in {bm}x{bn}x{bk} tiles of {wm}x{wn} warpgroup tiles, {stages} stages "
            "(it takes one matrix, A stored [M, K], warpgroup tiles of the block's "
            "width up to 256 columns, whole 64-column blocks of a B stored [K, N], "
            f"a K step of 64, K steps ({tiling.k_steps.data}) in {tiling.split.data} "
            "equal parts, and a share of B's tile for each block "
            f"of a cluster of {cluster} of whole 8-row or 64-column units; a lhs "
            "computed in the kernel, or siblings each tile one's, only with K "
            "whole steps, unsplit)"
        )
    block = WARPGROUP * (consumers + 1)
    args = list(kfunc.body.block.args)
    # A's map, then each matmul's B's (siblings: one tile of A serves each).
    maps = (
        TensorMapSpec(
            args.index(gemm.source), (gemm.m, gemm.k), (bm, SWIZZLE_ELEMENTS)
        ),
        *(
            TensorMapSpec(
                args.index(rhs), (n, gemm.k), (bn // cluster, SWIZZLE_ELEMENTS)
            )
            if gemm.transpose_b
            else TensorMapSpec(
                args.index(rhs), (gemm.k, n), (SWIZZLE_ELEMENTS, SWIZZLE_ELEMENTS)
            )
            for rhs, n in ((mm.rhs, value_dims(mm.result)[-1]) for mm in gemm.matmuls)
        ),
    )
    map_a, *b_maps = (
        region.block.insert_arg(cuda.TensorMapType(element), len(region.block.args))
        for _ in maps
    )
    map_a.name_hint = "a_map"
    for p, map_b in enumerate(b_maps):
        map_b.name_hint = "b_map" if products == 1 else f"b{p}_map"

    tid = shell.thread_index()
    group, in_group = e.idiv(tid, WARPGROUP), e.irem(tid, WARPGROUP)
    group.name_hint = "warpgroup"
    a_buffer = e.add(cuda.SharedAllocOp(element, stages * bm * bk))
    a_buffer.name_hint = "a_tile"
    b_buffers = [
        e.add(cuda.SharedAllocOp(element, stages * bn * bk)) for _ in range(in_tile)
    ]
    for p, b_buffer in enumerate(b_buffers):
        b_buffer.name_hint = "b_tile" if in_tile == 1 else f"b{p}_tile"
    bars = e.add(cuda.SharedAllocOp(cuda.BARRIER_TYPE, 2 * stages))
    bars.name_hint = "stage_barriers"

    def operand(ptr, buffer, outer, k_rows, total) -> SwizzledOperand:
        return SwizzledOperand.of(
            ptr, 0, buffer, outer, k_rows, 0, total, gemm.k, False, False
        )

    a = operand(pointers[gemm.source], a_buffer, bm, False, gemm.m)
    bs = [
        operand(pointers[rhs], buffer, bn, not gemm.transpose_b, gemm.n)
        for rhs, buffer in zip(gemm.rhs_operands[:in_tile], b_buffers, strict=True)
    ]

    # The full barrier of stage s is s, its empty barrier stages + s: the
    # producer's arrival and the bytes of the loads into this block fill it;
    # an arrival of every consumer warp of the cluster empties it.
    consumer_warps = consumers * WARPGROUP // WARP
    first = emit_if(e, e.icmp(tid, 0, "eq"))
    for s in range(stages):
        first.add(cuda.MbarrierInitOp(bars, first.index(s), 1))
        first.add(
            cuda.MbarrierInitOp(bars, first.index(stages + s), consumer_warps * cluster)
        )
    first.add(cuda.FenceMbarrierInitOp())
    close_if(first)
    # Every barrier of the cluster is ready before any block signals one.
    e.add(cuda.ClusterSyncOp() if cluster > 1 else cuda.SyncThreadsOp())

    # Cluster tiles of cluster x bm rows, block `rank` of a cluster taking
    # its rank-th bm rows. A work unit is a cluster tile's part of K (its
    # `split` parts consecutive, so that they run at the same time).
    tiles_n = -(-gemm.n // bn)
    if gemm.concatenated:
        tiles_n = gemm.sibling_tiles(bn)[-1]
    split = tiling.split.data
    # Over a named M the units are counted from it, and the grid (at most
    # `persistent` blocks) is the launch's: the clusters from gridDim.
    tiles_m = e.ceil_div(gemm.rows(e), bm * cluster)
    units = e.imul(tiles_m, tiles_n * split)
    grid_of = None
    if isinstance(units, int):
        grid = min(persistent, units * cluster)
        clusters: Index = grid // cluster
    else:
        grid = persistent
        grid_of = GridOf((gemm.m,), 1, bm * cluster, tiles_n * split * cluster)
        clusters = e.idiv(e.add(cuda.GridDimOp(cuda.Dim.X)), cluster)
    k_steps = tiling.k_steps.data // split
    block_id = e.add(cuda.BlockIdxOp(cuda.Dim.X))
    cluster_id: Index = block_id
    rank: Index = 0
    if cluster > 1:
        cluster_id, rank = e.idiv(block_id, cluster), e.irem(block_id, cluster)
    # The units of this cluster: cluster_id, cluster_id + clusters, ...
    own_units = e.idiv(e.iadd(e.isub(units, cluster_id), e.isub(clusters, 1)), clusters)

    def unit_origin(em: Emitter, i: Index) -> tuple[Index, Index, Index, Index, Index]:
        """The first row and column of the block's i-th unit, its part of K,
        its block tile (numbered along N, then M: split-K's) and its column
        tile."""
        unit = em.iadd(cluster_id, em.imul(i, clusters))
        tile, part = (
            (em.idiv(unit, split), em.irem(unit, split)) if split > 1 else (unit, 0)
        )
        per_group = GROUP_M * tiles_n
        first_m = em.imul(em.idiv(tile, per_group), GROUP_M)
        rows = em.imin(em.isub(tiles_m, first_m), GROUP_M)
        within = em.irem(tile, per_group)
        m_tile = em.iadd(
            first_m, em.add(arith.RemSIOp(em.index(within), em.index(rows)))
        )
        n_tile = em.add(arith.DivSIOp(em.index(within), em.index(rows)))
        block_m = em.iadd(em.imul(m_tile, cluster), rank)
        block_tile = em.iadd(em.imul(block_m, tiles_n), n_tile)
        return em.imul(block_m, bm), em.imul(n_tile, bn), part, block_tile, n_tile

    # The stage of the block's K steps, one after another over its units,
    # and the parity of that use of it, carried through the loops: no
    # division on the path between one step's wgmmas and the next's.
    def advance(em: Emitter, stage: SSAValue, parity: SSAValue) -> list[SSAValue]:
        """The stage and parity of the K step after one in `stage`."""
        following = em.index(em.iadd(stage, 1))
        wrapped = em.icmp(following, stages, "eq")
        return [
            em.select(wrapped, em.index(0), following),
            em.select(wrapped, em.index(em.isub(1, parity)), parity),
        ]

    def name_stage(*pairs: Sequence[SSAValue]) -> None:
        for stage, parity in pairs:
            stage.name_hint, parity.name_hint = "stage", "parity"

    def before(em: Emitter, stage: SSAValue, back: int = 1) -> SSAValue:
        """The stage of the K step `back` steps before one in `stage`."""
        if back == 1:
            first = em.icmp(stage, 0, "eq")
            return em.select(first, em.index(stages - 1), em.index(em.isub(stage, 1)))
        wraps = em.icmp(stage, back, "slt")
        return em.select(
            wraps,
            em.index(em.iadd(stage, stages - back)),
            em.index(em.isub(stage, back)),
        )

    # The producer: one thread of the last warpgroup issues every load.
    producer = emit_if(e, e.icmp(group, consumers, "eq"))
    producer.add(cuda.SetMaxRegistersOp("dec", PRODUCER_REGISTERS))
    leader = emit_if(producer, producer.icmp(in_group, 0, "eq"))
    start = [leader.index(0), leader.index(0)]
    _, tile_loop, tile_body = emit_carried_for(leader, 0, own_units, start)
    i = tile_body.args[0]
    m0, n0, part, _, n_tile = unit_origin(tile_loop, i)
    k_first = tile_loop.imul(part, k_steps)
    steps_loop, k_loop, k_body = emit_carried_for(
        tile_loop, 0, k_steps, tile_body.args[1:]
    )
    k, stage, parity = k_body.args
    name_stage(tile_body.args[1:], (stage, parity))
    k_loop.add(
        cuda.MbarrierWaitOp(
            bars,
            k_loop.index(k_loop.iadd(stage, stages)),
            k_loop.index(k_loop.isub(1, parity)),
        )
    )
    full = k_loop.index(stage)
    stage_bytes = (bm + in_tile * bn) * bk * 2
    k_loop.add(cuda.MbarrierArriveOp(bars, full, stage_bytes))
    k0 = k_loop.imul(k_loop.iadd(k_first, k), bk)
    a_place = k_loop.index(k_loop.imul(stage, bm * bk))
    k_loop.add(
        cuda.TmaLoadOp(
            map_a, a_buffer, a_place, bars, full, k_loop.index(k0), k_loop.index(m0)
        )
    )
    # This block's share of each B's tile, into every block of the cluster.
    multicast = (1 << cluster) - 1 if cluster > 1 else None
    # [N, K]: a box of bn / cluster rows of K; [K, N]: a box of 64 rows of K
    # per 64-column block, every cluster-th.
    boxes = 1 if gemm.transpose_b else bn // SWIZZLE_ELEMENTS // cluster

    def box_offset(em: Emitter, j: int) -> Index:
        """Where the block's j-th box starts among the tile's columns."""
        if gemm.transpose_b:
            return em.imul(rank, bn // cluster)
        return em.imul(em.iadd(rank, j * cluster), SWIZZLE_ELEMENTS)

    def load_b(em: Emitter, map_b: SSAValue, b_buffer: SSAValue, n0: Index) -> None:
        """The block's share of the B tile of columns n0... into `b_buffer`."""
        for j in range(boxes):
            offset = box_offset(em, j)
            b_place = em.index(em.iadd(em.imul(stage, bn * bk), em.imul(offset, bk)))
            n = em.index(em.iadd(n0, offset))
            k_index = em.index(k0)
            box = (k_index, n) if gemm.transpose_b else (n, k_index)
            em.add(
                cuda.TmaLoadOp(map_b, b_buffer, b_place, bars, full, *box, multicast)
            )

    if gemm.concatenated:

        def load_sibling_b(em, sibling, tile, own, own_ptrs) -> None:
            map_b = b_maps[gemm.rhs_operands.index(sibling.matmul.rhs)]
            load_b(em, map_b, b_buffers[0], em.imul(tile, bn))

        each_sibling(gemm, k_loop, n_tile, bn, [], [], load_sibling_b)
    else:
        for map_b, b_buffer in zip(b_maps, b_buffers, strict=True):
            load_b(k_loop, map_b, b_buffer, n0)
    k_body.add_op(scf.YieldOp(*advance(k_loop, stage, parity)))
    tile_body.add_op(scf.YieldOp(*steps_loop.results))
    close_if(leader)
    close_if(producer)

    def release(em: Emitter, stage: Index) -> None:
        """A consumer warp's arrival at `stage`'s empty barrier in every
        block of the cluster, by its first lane."""
        lane_zero = emit_if(em, em.icmp(em.irem(in_group, WARP), 0, "eq"))
        empty = lane_zero.index(lane_zero.iadd(stage, stages))
        for cta in range(cluster):
            target = lane_zero.index(cta) if cluster > 1 else None
            lane_zero.add(cuda.MbarrierArriveOp(bars, empty, cta=target))
        close_if(lane_zero)

    # The consumers: warpgroup g takes rows 64 g of each tile.
    consumer = emit_if(e, e.icmp(group, consumers, "slt"))
    consumer.add(cuda.SetMaxRegistersOp("inc", CONSUMER_REGISTERS))
    group_m = consumer.imul(group, wm)
    layout = wgmma_m64(wn)
    # A lhs computed in the kernel, or row reductions of it (fuse-prologue).
    unit = (group, in_group, group_m)
    lhs = ComputedLhs.of(consumer, gemm, layout, unit, a_buffer, pointers, (bm, bk))
    start = [consumer.index(0), consumer.index(0)]
    _, tile_loop, tile_body = emit_carried_for(consumer, 0, own_units, start)
    i = tile_body.args[0]
    m0, n0, part, block_tile, n_tile = unit_origin(tile_loop, i)
    count = len(layout.registers)  # accumulators a thread holds of each matmul

    # A prologue's work on a stage overlaps the wgmmas of the two steps
    # before it (one step's did not cover it), so two groups stay in flight.
    in_flight = 2 if gemm.has_prologue else 1
    if stages <= in_flight:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: a persistent TMA gemm computing its lhs in "
            f"{stages} stages (it keeps {in_flight} steps in flight: more stages)"
        )
    # The rows of this thread's elements in the tile, once a tile.
    rows = [] if lhs is None else lhs.tile_rows(tile_loop, m0)

    def k_step(
        em: Emitter,
        k: Index,
        stage: SSAValue,
        parity: SSAValue,
        acc: list[SSAValue],
        sums: list[SSAValue],
        pending: int,
    ):
        """The wgmmas of the tile's k-th K step, in `stage` of `parity`, on
        `acc` (`count` of each matmul's, one after another), then a wait
        until at most `pending` groups are in flight; once the step
        `in_flight` steps before is done, its stage may be loaded again
        (and, waited for in full, the steps since and this one's own).
        With a prologue, first that, onto `sums`."""
        em.add(cuda.MbarrierWaitOp(bars, stage, parity))
        if lhs is not None:
            sums = lhs.step(em, k, stage, rows, sums)
        em.add(cuda.WgmmaFenceOp())
        parts = [acc[p * count : (p + 1) * count] for p in range(in_tile)]
        for kk in range(0, bk, cuda.WGMMA_K):
            da = a.descriptor(em, stage, group_m, kk)
            for p, b in enumerate(bs):
                db = b.descriptor(em, stage, 0, kk)
                mma = cuda.WgmmaOp(
                    element, da, db, parts[p], trans_a=False, trans_b=b.k_rows
                )
                em.add(mma)
                parts[p] = list(mma.results)
        acc = [value for part in parts for value in part]
        em.add(cuda.WgmmaCommitOp())
        wait = cuda.WgmmaWaitOp(pending, acc)
        em.add(wait)
        if isinstance(k, int):  # the last step: the previous ones K has
            for back in range(min(in_flight, k), 0, -1):
                release(em, before(em, stage, back))
        else:
            released = emit_if(em, em.icmp(k, in_flight - 1, "sgt"))
            release(released, before(released, stage, in_flight))
            close_if(released)
        if pending == 0:
            release(em, stage)
        return list(wait.results), sums

    # Every K step but the last in a loop, `in_flight` groups left in
    # flight; the last after it, waited for in full. (With the last wait after the
    # loop, ptxas moved the f16 epilogue's reads of the accumulators above
    # it, reading the last step's wgmmas half done.)
    zero = tile_loop.f32(0.0)
    sum_count = len(layout.rows) * len(gemm.row_reductions)

    def consume(em: Emitter, k: Index, carried: list[SSAValue], last: bool):
        """A K step on the carried stage, parity, accumulators and sums; the
        next step's stage and parity, and those after it."""
        stage, parity, *rest = carried
        acc, sums = rest[: len(rest) - sum_count], rest[len(rest) - sum_count :]
        if not last:
            name_stage(tile_body.args[1:], (stage, parity))
        pending = 0 if last else in_flight
        acc, sums = k_step(em, k, stage, parity, acc, sums, pending)
        return [*advance(em, stage, parity), *acc, *sums]

    initial = [*tile_body.args[1:], *[zero] * (count * in_tile + sum_count)]
    results = peeled_steps(tile_loop, k_steps, initial, consume, "k_tile")
    following, rest = results[:2], results[2:]
    done, sums = rest[: len(rest) - sum_count], rest[len(rest) - sum_count :]
    lanes = None
    if not gemm.concatenated:
        lanes = layout.thread_origin(tile_loop, in_group, (m0, group_m), (n0, 0))
    last_e = tile_loop
    parts = None
    if split > 1:
        # The last of a tile's parts to arrive adds them and runs the epilogue.
        # Over a named M, scratch for the most tiles its class has.
        most_tiles_m = tiles_m
        if not isinstance(most_tiles_m, int):
            most_tiles_m = -(-tiling.grid.data[1].data * bm // (bm * cluster))
        parts = SplitK.of(
            region,
            tiling,
            consumers * WARPGROUP,
            count * in_tile,
            most_tiles_m * cluster * tiles_n,
            among=True,
        )
        last_e, done = parts.combined(tile_loop, (block_tile, part, tid), done, None)

    def tile_epilogue(em, gemm, lanes, outputs, out_ptrs, guard_cols) -> None:
        """The epilogue of `gemm`'s tile, on its accumulators at the thread's
        first row and column (`lanes`)."""
        accumulators = layout.places(em, lanes, by_place(done, len(gemm.matmuls)))
        defined = row_reductions_done(em, gemm, layout, accumulators, sums)
        end = Epilogue(
            gemm,
            [],
            accumulators,
            guard_rows="m" in partial,
            guard_cols=guard_cols,
            run=layout.run,
            defined=defined,
        )
        end.emit(em, pointers, outputs, out_ptrs)

    if gemm.concatenated:

        def sibling_epilogue(em, sibling, tile, own, own_ptrs) -> None:
            origin = (em.imul(tile, bn), 0)
            lanes = layout.thread_origin(em, in_group, (m0, group_m), origin)
            guard_cols = sibling.n % bn != 0
            tile_epilogue(em, sibling, lanes, own, own_ptrs, guard_cols)

        outputs, out_ptrs = shell.outputs, shell.out_ptrs
        each_sibling(gemm, last_e, n_tile, bn, outputs, out_ptrs, sibling_epilogue)
    else:
        outputs, out_ptrs = shell.outputs, shell.out_ptrs
        tile_epilogue(last_e, gemm, lanes, outputs, out_ptrs, "n" in partial)
    if parts is not None:
        close_if(last_e)
    tile_body.add_op(scf.YieldOp(*following))
    close_if(consumer)
    if cluster > 1:
        # No block leaves while another may still signal its barriers.
        e.add(cuda.ClusterSyncOp())
    launch = Launch(
        (grid, 1, 1),
        block,
        grid_of,
        min_blocks=1,
        cluster=cluster if cluster > 1 else None,
        scratch=() if parts is None else parts.scratch,
        tensor_maps=maps,
    )
    return shell.finish(launch)
