"""A gemm kernel's #kernel.tiling, derived from its schedule with the
polyhedral model (`polyhedral.py`): the fragments of each gemm family, the
checks that its tiles divide across levels, and the tiling itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import islpy as isl
from xdsl.dialects.builtin import Float32Type

from molten.dialects import kernel, molten
from molten.dialects.cuda import (
    SWIZZLE_ALIGNMENT,
    SWIZZLE_BYTES,
    VECTOR_BYTES,
    WGMMA_K,
    WGMMA_M,
    element_bytes,
    tma_reads_rows,
)
from molten.passes.schedule.common import MMA_ELEMENT_TYPES, WARP, KernelBody
from molten.passes.tiling.polyhedral import (
    Gemm,
    access_relations,
    accumulation_dependences,
    footprint,
    illegality,
    iteration_domain,
    partial_dims,
    tile_counts,
    tile_failure,
    tiling_map,
)

SWIZZLE_ELEMENTS = SWIZZLE_BYTES // 2
"""The 16-bit elements of one swizzled row: a wgmma gemm's K step."""
SWIZZLE_ROWS = SWIZZLE_ALIGNMENT // SWIZZLE_BYTES
"""The rows of one swizzle atom (1024 bytes)."""
SHARED_ROW_SKEW_BYTES = VECTOR_BYTES
"""What a tensor-core operand's shared rows are padded by: consecutive rows
start 16 bytes apart modulo 128, so ldmatrix's eight rows hit distinct
banks."""
TF32_K_ROWS_SKEW_BYTES = 2 * VECTOR_BYTES
"""What an f32 operand stored [k][outer] is padded by instead: its lanes
read elements (k l % 4, outer l / 4) one by one, and rows 32 bytes apart
modulo 128 put the warp's 32 on distinct banks."""


def _format(sizes: Sequence[int]) -> str:
    return "x".join(map(str, sizes))


def check_divisibility(
    kfunc: kernel.FuncOp,
    block: int,
    tile: Sequence[int],
    warp: Sequence[int],
    fragment: Sequence[int],
    mma_warps: int = 1,
) -> None:
    """On tensor cores: the block tile splits into warp tiles (a warpgroup's
    where `mma_warps` is 4), warp tiles into fragments, and the block's
    threads are its warps. (A SIMT or GEMV fragment is derived from the
    block so that it fits.)"""
    bm, bn, bk = tile
    fm, fn, fk = fragment
    if bm % warp[0] or bn % warp[1]:
        raise tile_failure(
            kfunc,
            f"block tile {_format(tile)} is not a whole number of warp tiles "
            f"{_format(warp)}",
        )
    if warp[0] % fm or warp[1] % fn or bk % fk:
        raise tile_failure(
            kfunc,
            f"warp tile {_format(warp)} (K step {bk}) is not a whole number of "
            f"fragments {_format(fragment)}",
        )
    threads = WARP * mma_warps * (bm // warp[0]) * (bn // warp[1])
    if block != threads:
        raise tile_failure(
            kfunc,
            f"block tile {_format(tile)} in warp tiles of {_format(warp)} takes "
            f"{threads} threads, not block = {block}",
        )


def simt_fragment(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, tile: Sequence[int]
) -> tuple[int, int, int]:
    """A SIMT gemm's fragment: the micro-tile of outputs each thread
    accumulates per K element, the block tile's outputs shared evenly by the
    block's threads; as square as powers of two allow (4x4, 4x8, 8x8)."""
    block = schedule.block.data
    outputs, rest = divmod(tile[0] * tile[1], block)
    rows = 1 << (math.isqrt(max(outputs, 1)).bit_length() - 1)
    cols = outputs // rows
    if (
        rest
        or not outputs
        or rows * cols != outputs
        or tile[0] % rows
        or tile[1] % cols
    ):
        raise tile_failure(
            kfunc,
            f"block tile {_format(tile)} does not split into equal micro-tiles, "
            f"one for each of block = {block} threads",
        )
    return rows, cols, 1


def gemv_fragment(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, tile: Sequence[int]
) -> tuple[int, int, int]:
    """A GEMV thread's share of the block tile: all its rows, `vector`
    columns, and the K step split among `k_lanes` threads (each summing
    every k_lanes-th element: the block reassociates the sum, as every
    reduction's lowering does)."""
    bm, bn, bk = tile
    width, lanes, block = (
        schedule.vector.data,
        schedule.k_lanes.data,
        schedule.block.data,
    )
    if gemm_of(kfunc).transpose_b:
        # B stored [N, K]: `lanes` threads a group of columns, each `vector`
        # of K at a time; a group takes bn / (block / lanes) columns, so
        # that each load of A serves all of them.
        if bk % (lanes * width) or block % lanes or bn % (block // lanes):
            raise tile_failure(
                kfunc,
                f"block tile {_format(tile)} with B stored [N, K] takes groups of "
                f"k_lanes = {lanes} threads (block = {block} a whole number of "
                f"them), each the same number of columns, and a K step that is "
                f"whole rounds of {lanes} x vector = {width}",
            )
        return bm, bn // (block // lanes), bk // lanes
    if bn % width or bk % lanes:
        raise tile_failure(
            kfunc,
            f"block tile {_format(tile)} is not a whole number of runs of "
            f"vector = {width} columns and k_lanes = {lanes} shares of K",
        )
    threads = (bn // width) * lanes
    if block != threads:
        raise tile_failure(
            kfunc,
            f"block tile {_format(tile)} in runs of {width} columns, K split "
            f"{lanes} ways, takes {threads} threads, not block = {block}",
        )
    return bm, width, bk // lanes


def wgmma_fragment(
    kfunc: kernel.FuncOp, warp: Sequence[int], tile: Sequence[int]
) -> tuple[int, int, int]:
    """A wgmma gemm's fragment, one m64nNk16 of a warpgroup: its warp tile's
    64 rows and all its columns (N a multiple of 8 up to 256), over a K step
    of 64 16-bit elements: one 128-byte swizzled row of each operand."""
    if warp[0] != WGMMA_M or warp[1] % 8 or not 8 <= warp[1] <= 256:
        raise tile_failure(
            kfunc,
            f"a wgmma warpgroup tile is {WGMMA_M} rows by a multiple of 8 columns "
            f"up to 256, not {_format(warp)}",
        )
    if tile[2] != SWIZZLE_ELEMENTS:
        raise tile_failure(
            kfunc,
            f"a wgmma block tile's K step is {SWIZZLE_ELEMENTS} (one 128-byte "
            f"swizzled row), not {tile[2]} in {_format(tile)}",
        )
    return WGMMA_M, warp[1], WGMMA_K


def gemm_matmuls(kfunc: kernel.FuncOp) -> list[molten.MatmulOp]:
    """A gemm kernel's matmuls: one, or siblings that share its lhs and
    transposes (one tile of the lhs serves them all). Side by side
    (`side_by_side`: an op reads several of them), each tile of the output
    is a tile of each, and they must share their types too; else each
    tile is a tile of one of them, of any width."""
    matmuls = [op for op in kfunc.body.block.ops if isinstance(op, molten.MatmulOp)]
    if not matmuls:
        raise tile_failure(
            kfunc, "a gemm kernel holds a molten.matmul, and this one none"
        )
    first = matmuls[0]
    for other in matmuls[1:]:
        if not other.shares_lhs_with(first):
            raise tile_failure(
                kfunc,
                f"a gemm kernel's {len(matmuls)} matmuls must share their lhs, "
                "transposes and element types",
            )
    together = KernelBody.of(kfunc).side_by_side
    if together and any(not other.is_sibling_of(first) for other in matmuls[1:]):
        raise tile_failure(
            kfunc,
            f"a gemm kernel's {len(matmuls)} matmuls that an op reads together "
            "must share their operand and result types",
        )
    return matmuls


def gemm_of(kfunc: kernel.FuncOp) -> Gemm:
    return Gemm.of(gemm_matmuls(kfunc)[0])


def tiling_for(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, rows_most: int = 0
) -> kernel.TilingAttr:
    """The tiling of a gemm kernel under its schedule; over a named M, of at
    most `rows_most` rows where given (its grid along M the most tiles,
    else 0: counted at launch)."""
    matmuls = gemm_matmuls(kfunc)
    siblings = [Gemm.of(mm) for mm in matmuls]
    gemm = siblings[0]
    sizes = tuple(t.data for t in schedule.tile)
    if len(sizes) != 3:
        raise tile_failure(
            kfunc, f"the schedule's tile {list(sizes)} must give block M, N and K"
        )
    warp = tuple(w.data for w in schedule.warp)
    tf32 = gemm.element == Float32Type()
    if warp and not (
        isinstance(gemm.element, MMA_ELEMENT_TYPES)
        or (tf32 and schedule.mma_warps.data == 1)
    ):
        raise tile_failure(
            kfunc,
            f"a tensor-core schedule (warp = {list(warp)}) needs f16 or bf16 "
            f"operands (f32 on mma.sync, mma_warps = 1), not {gemm.element}",
        )
    if schedule.k_lanes.data > 1:
        fragment = gemv_fragment(kfunc, schedule, sizes)
    elif schedule.mma_warps.data > 1:
        fragment = wgmma_fragment(kfunc, warp, sizes)
        # A persistent kernel's last warpgroup loads the operands (TMA).
        producers = WARP * schedule.mma_warps.data if schedule.persistent.data else 0
        check_divisibility(
            kfunc,
            schedule.block.data - producers,
            sizes,
            warp,
            fragment,
            schedule.mma_warps.data,
        )
        k_steps = -(-gemm.k // sizes[2])
        if schedule.persistent.data and (
            gemm.batch_shape
            or gemm.transpose_a
            or k_steps % schedule.split.data
            or warp[1] != sizes[1]
            or not tma_reads_rows(gemm.a_shape[-1], gemm.element)
            or not tma_reads_rows(gemm.b_shape[-1], gemm.element)
        ):
            raise tile_failure(
                kfunc,
                f"a persistent TMA gemm (persistent = {schedule.persistent.data}) "
                "takes one matrix (no batch), A stored [M, K], rows of A and B "
                "of whole 16-byte units, its K steps in equal parts under split-K "
                "and warpgroup tiles of the block's width, not "
                f"{gemm.describe()} in warp tiles {_format(warp)} of "
                f"{_format(sizes)} (K steps {k_steps}, split = "
                f"{schedule.split.data})",
            )
        # Each block of a cluster loads a share of B's tile: whole 8-row
        # swizzle atoms of a B stored [N, K], whole 64-column boxes of [K, N].
        cluster = schedule.cluster.data
        unit = SWIZZLE_ROWS if gemm.transpose_b else SWIZZLE_ELEMENTS
        if cluster > 1 and sizes[1] % (unit * cluster):
            raise tile_failure(
                kfunc,
                f"cluster = {cluster}: each block's share of the tile's "
                f"{sizes[1]} columns of B must be whole units of {unit}",
            )
    elif warp:
        fragment = kernel.TF32_FRAGMENT if tf32 else kernel.MMA_FRAGMENT
        check_divisibility(kfunc, schedule.block.data, sizes, warp, fragment)
    else:
        fragment = simt_fragment(kfunc, schedule, sizes)

    domain = iteration_domain(gemm, rows_most)
    read_a, read_b, accumulate = access_relations(gemm)
    dependences = accumulation_dependences(domain, accumulate, accumulate)
    if reason := illegality(dependences, sizes):
        raise tile_failure(
            kfunc, f"tiling {gemm.describe()} by {_format(sizes)}: {reason}"
        )

    tiling = tiling_map(sizes)
    batches, m_tiles, n_tiles, k_steps = tile_counts(domain, tiling)
    if len(matmuls) > 1 and not KernelBody.of(kfunc).side_by_side:
        # Each tile one sibling's: the tiles of each one after another.
        n_tiles = sum(-(-sibling.n // sizes[1]) for sibling in siblings)
    split = schedule.split.data
    if split > 1 and schedule.mma_warps.data == 1:
        raise tile_failure(
            kfunc,
            f"split-K (split = {split}) is implemented for wgmma gemms "
            f"(mma_warps = {kernel.WARPGROUP_WARPS}) only",
        )
    if kernel.leaves_empty_part(k_steps, split):
        raise tile_failure(
            kfunc,
            f"split = {split} parts of {gemm.describe()}'s {k_steps} K steps of "
            f"{sizes[2]} leave a part empty",
        )
    # mma.sync's tiles have their rows padded against bank conflicts; wgmma's
    # are swizzled instead, rows unpadded.
    padded = warp and schedule.mma_warps.data == 1

    def operand(access: isl.Map, k_rows: bool) -> tuple[int, int, int]:
        *batch, rows, cols = footprint(tiling, access)
        assert all(extent == 1 for extent in batch), batch
        skew_bytes = SHARED_ROW_SKEW_BYTES
        if tf32 and k_rows:
            skew_bytes = TF32_K_ROWS_SKEW_BYTES
        skew = skew_bytes // element_bytes(gemm.element) if padded else 0
        return rows, cols, cols + skew

    # A cluster's blocks take consecutive row tiles: rows are guarded
    # where its cluster x bm rows leave the matrix.
    cluster_tiles = tiling_map((sizes[0] * schedule.cluster.data, *sizes[1:]))
    return kernel.TilingAttr(
        grid=(n_tiles, m_tiles, batches * split),
        block=sizes,
        warp=warp,
        fragment=fragment,
        stages=schedule.stages.data,
        k_steps=k_steps,
        # Siblings of other widths (each tile one's): partial along any's.
        partial=sorted(
            {
                dim
                for sibling in set(siblings)
                for dim in partial_dims(
                    iteration_domain(sibling, rows_most), cluster_tiles, sibling
                )
            },
            key=kernel.GEMM_DIMS.index,
        ),
        lhs=operand(read_a, gemm.transpose_a),
        rhs=operand(read_b, not gemm.transpose_b),
        split=split,
    )
