"""`tile`: a gemm kernel's `#kernel.tiling`, derived polyhedrally from its
schedule.

A gemm kernel computes C[b, i, j] += A[b, i, k] * B[b, k, j] (transposes and
numpy batch broadcasting in the access relations) over the iteration domain

    { S[b, i, j, k] : 0 <= b < batches and 0 <= i < M and 0 <= j < N
                      and 0 <= k < K }

(shapes are static; b runs over the result's batch axes, flattened). With
the domain and the access relations as islpy sets and maps, the pass

* derives the dependences of the accumulation into C (flow, output and anti:
  write and read relations composed, restricted to the lexicographic order)
  and checks the tiling legal: none carried by b, i or j (spread over blocks,
  warps and threads) and every one kept in order by the tiled schedule
  [b, i/BM, j/BN, k/BK, i, j, k] (the K tiles run in order);
* tiles the domain by S[b, i, j, k] -> T[b, i/BM, j/BN, k/BK] (floors): the
  grid and the K steps are the extent of the domain's image, the partial
  loops those along which a tile's full box leaves the domain (exact), and
  each operand's footprint the box one tile's image under its access
  relation spans;
* checks that the tile sizes divide across levels (block, warp, fragment;
  for a GEMV, `k_lanes` > 1, the fragment is a thread's share of the block
  tile: its rows, `vector` columns and the K step over k_lanes).

The result, on each kernel.func of kind gemm that has a schedule and no
tiling yet (one already there is kept):

```mlir
kernel.func @mm(...) -> (tensor<256x256xf16>) gemm
    schedule #kernel.schedule<block = 128, ..., tile = [128, 128, 32],
                              warp = [64, 64], stages = 4>
    tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 32],
                          warp = [64, 64], fragment = [16, 8, 16], stages = 4,
                          k_steps = 2, partial = [], lhs = [128, 32, 40],
                          rhs = [32, 128, 136]> {
```

Other kernels are left as they are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

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
from molten.dialects.molten import Dim, shape_of, value_dims
from molten.errors import StaticShapeNeeded
from molten.passes.fuse_attention import attention_in, query_group
from molten.passes.schedule.common import MMA_ELEMENT_TYPES, WARP, side_by_side

DOMAIN_DIMS = ("b", "i", "j", "k")
"""The iteration domain's dimensions: batch, then the gemm's M, N and K."""
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


@dataclass(frozen=True)
class Gemm:
    """The matmul of a gemm kernel, as the polyhedral model needs it."""

    batch_shape: tuple[int, ...]
    m: Dim
    """The rows: a size, or the name of one known at run time."""
    n: int
    k: int
    a_shape: tuple[Dim, ...]
    b_shape: tuple[int, ...]
    transpose_a: bool
    transpose_b: bool
    element: Attribute

    @staticmethod
    def of(matmul: molten.MatmulOp, result_only: bool = False) -> Gemm:
        """The gemm of `matmul`. M may be named (its size an `index` of the
        kernel), where A is stored [M, K] and nothing else is named; any
        size but the batch axes may be where only the result's shape is
        read (`result_only`: an attention's P V, whose epilogue it is)."""
        result, a_shape = value_dims(matmul.result), value_dims(matmul.lhs)
        transpose_a = matmul.transpose_a is not None
        named = [i for i, d in enumerate(result) if isinstance(d, str)]
        if (
            named
            and not result_only
            and (named != [len(result) - 2] or len(result) != 2 or transpose_a)
        ):
            raise StaticShapeNeeded(
                f"a matmul of result {list(result)}{' (A transposed)' * transpose_a}"
                " takes a size known at run time only as its M, with no batch "
                "axes and A stored [M, K]"
            )
        b_shape = value_dims(matmul.rhs) if result_only else shape_of(matmul.rhs)
        return Gemm(
            result[:-2],  # type: ignore[arg-type]
            result[-2],
            result[-1],  # type: ignore[arg-type]
            a_shape[-2] if transpose_a else a_shape[-1],  # type: ignore[arg-type]
            a_shape,
            tuple(b_shape),  # type: ignore[arg-type]
            transpose_a,
            matmul.transpose_b is not None,
            matmul.lhs.type.element_type,  # type: ignore[attr-defined]
        )

    @property
    def batches(self) -> int:
        return math.prod(self.batch_shape)

    def describe(self) -> str:
        batch = "x".join(map(str, self.batch_shape))
        return (batch + " batches of " if batch else "") + (
            f"M x N x K = {self.m} x {self.n} x {self.k}"
        )


# --------------------------------------------------------------------------
# The polyhedral model (islpy).
# --------------------------------------------------------------------------


def iteration_domain(gemm: Gemm, rows_most: int = 0) -> isl.Set:
    """{ S[b, i, j, k] } over the gemm's batches, M, N and K; a named M is a
    parameter ([M] -> { ... : 0 <= i < M ... }), at most `rows_most` where
    given."""
    sizes = (gemm.batches, _isl_size(gemm.m), gemm.n, gemm.k)
    constraints = " and ".join(
        f"0 <= {d} < {size}" for d, size in zip(DOMAIN_DIMS, sizes, strict=True)
    ) + _rows_bound(gemm, rows_most)
    return isl.Set(f"{_params(gemm)}{{ S[{', '.join(DOMAIN_DIMS)}] : {constraints} }}")


NAMED_M = "M"
"""The isl parameter of a named M (whatever the user named it: the model's
own names would clash with the domain's)."""


def _isl_size(size: Dim) -> str | int:
    return NAMED_M if isinstance(size, str) else size


def _params(gemm: Gemm) -> str:
    """The isl parameters of the gemm's named sizes."""
    return f"[{NAMED_M}] -> " if isinstance(gemm.m, str) else ""


def _rows_bound(gemm: Gemm, rows_most: int) -> str:
    """The constraint of a named M of at most `rows_most` rows."""
    named = isinstance(gemm.m, str) and rows_most
    return f" and {NAMED_M} <= {rows_most}" if named else ""


def batch_index(batch_shape: Sequence[int], operand_batch: Sequence[int]) -> list[str]:
    """The operand's batch index as quasi-affine expressions of the flattened
    batch b: b unravelled over `batch_shape`, axes the operand broadcasts
    (size 1, or absent: numpy aligns shapes on the right) read at 0."""
    offset = len(batch_shape) - len(operand_batch)
    index = []
    for axis, size in enumerate(operand_batch):
        full = batch_shape[offset + axis]
        if size == 1:
            index.append("0")
            continue
        stride = math.prod(batch_shape[offset + axis + 1 :])
        index.append(f"(floor(b / {stride}) mod {full})")
    return index


def access_relations(gemm: Gemm) -> tuple[isl.Map, isl.Map, isl.Map]:
    """What S[b, i, j, k] reads of A and B and accumulates into C, in each
    tensor's storage order (A^T is stored [K, M], B^T [N, K])."""
    s = f"S[{', '.join(DOMAIN_DIMS)}]"

    def relation(name: str, index: list[str]) -> isl.Map:
        return isl.Map(f"{{ {s} -> {name}[{', '.join(index)}] }}")

    a = batch_index(gemm.batch_shape, gemm.a_shape[:-2])
    b = batch_index(gemm.batch_shape, gemm.b_shape[:-2])
    c = batch_index(gemm.batch_shape, gemm.batch_shape)
    return (
        relation("A", [*a, *(("k", "i") if gemm.transpose_a else ("i", "k"))]),
        relation("B", [*b, *(("j", "k") if gemm.transpose_b else ("k", "j"))]),
        relation("C", [*c, "i", "j"]),
    )


def accumulation_dependences(domain: isl.Set, write: isl.Map, read: isl.Map):
    """The flow, output and anti dependences of an accumulation that reads and
    writes through `read` and `write`, in the domain's lexicographic order."""
    write, read = write.intersect_domain(domain), read.intersect_domain(domain)
    before = domain.lex_lt_set(domain)
    flow = write.apply_range(read.reverse())
    output = write.apply_range(write.reverse())
    anti = read.apply_range(write.reverse())
    return flow.union(output).union(anti).intersect(before).coalesce()


def tile_expressions(sizes: Sequence[int]) -> list[str]:
    """b, floor(i / BM), floor(j / BN), floor(k / BK)."""
    return ["b", *(f"floor({d} / {t})" for d, t in zip("ijk", sizes, strict=True))]


def tiling_map(sizes: Sequence[int]) -> isl.Map:
    """S[b, i, j, k] -> T[b, i/BM, j/BN, k/BK]: the block tile (and K step) of
    each point."""
    dims = ", ".join(DOMAIN_DIMS)
    return isl.Map(f"{{ S[{dims}] -> T[{', '.join(tile_expressions(sizes))}] }}")


def tiled_schedule(sizes: Sequence[int]) -> isl.Map:
    """The order the tiled kernel runs points in: tiles first (b, the M and N
    tiles, then the K steps), points within a tile after."""
    dims = ", ".join(DOMAIN_DIMS)
    return isl.Map(
        f"{{ S[{dims}] -> [{', '.join(tile_expressions(sizes))}, i, j, k] }}"
    )


def illegality(dependences: isl.Map, sizes: Sequence[int]) -> str | None:
    """Why tiling by `sizes` breaks a dependence, or None when it is legal."""
    carried_by_k_only = isl.Set("{ S[0, 0, 0, dk] }")
    distances = dependences.deltas()
    if not distances.is_subset(carried_by_k_only):
        return (
            f"dependence distances {distances} are carried by b, i or j, which "
            "blocks, warps and threads run in parallel"
        )
    schedule = tiled_schedule(sizes)
    if not dependences.is_subset(schedule.lex_lt_map(schedule)):
        return f"the tiled order breaks dependences {dependences}"
    return None


def tile_counts(domain: isl.Set, tiling: isl.Map) -> tuple[int, ...]:
    """The tiles along b, i, j and k: the extent of the domain's image (0
    along one that grows with a named size: the launch computes it)."""
    image = domain.apply(tiling)
    counts = []
    for d in range(len(DOMAIN_DIMS)):
        lowest, highest = image.dim_min_val(d), image.dim_max_val(d)
        if not (lowest.is_int() and highest.is_int()):
            counts.append(0)
            continue
        counts.append(highest.to_python() - lowest.to_python() + 1)
    return tuple(counts)


def partial_dims(domain: isl.Set, tiling: isl.Map, gemm: Gemm) -> list[str]:
    """The loops among m, n, k along which some tile's full box leaves the
    domain: the points of those boxes outside it, sorted by the bound they
    cross."""
    full_boxes = tiling.reverse().intersect_domain(domain.apply(tiling))
    outside = full_boxes.intersect_range(domain.complement())
    partial = []
    for name, dim, size in zip(
        kernel.GEMM_DIMS, DOMAIN_DIMS[1:], (gemm.m, gemm.n, gemm.k), strict=True
    ):
        inside_dim = isl.Set(
            f"{_params(gemm)}{{ S[{', '.join(DOMAIN_DIMS)}] : "
            f"0 <= {dim} < {_isl_size(size)} }}"
        )
        if not outside.intersect_range(inside_dim.complement()).is_empty():
            partial.append(name)
    return partial


def footprint(tiling: isl.Map, access: isl.Map) -> tuple[int, ...]:
    """The box one full tile reads through `access`, per tensor dimension: one
    more than the largest distance between two elements of one tile's image
    (the same for every tile)."""
    image = tiling.reverse().apply_range(access)
    distances = image.reverse().apply_range(image).deltas()
    return tuple(
        distances.dim_max_val(d).to_python() + 1
        for d in range(distances.dim(isl.dim_type.set))
    )


# --------------------------------------------------------------------------
# The pass.
# --------------------------------------------------------------------------


def _fail(kfunc: kernel.FuncOp, message: str) -> PassFailedException:
    return PassFailedException(f"tile: @{kfunc.sym_name.data}: {message}")


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
        raise _fail(
            kfunc,
            f"block tile {_format(tile)} is not a whole number of warp tiles "
            f"{_format(warp)}",
        )
    if warp[0] % fm or warp[1] % fn or bk % fk:
        raise _fail(
            kfunc,
            f"warp tile {_format(warp)} (K step {bk}) is not a whole number of "
            f"fragments {_format(fragment)}",
        )
    threads = WARP * mma_warps * (bm // warp[0]) * (bn // warp[1])
    if block != threads:
        raise _fail(
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
        raise _fail(
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
            raise _fail(
                kfunc,
                f"block tile {_format(tile)} with B stored [N, K] takes groups of "
                f"k_lanes = {lanes} threads (block = {block} a whole number of "
                f"them), each the same number of columns, and a K step that is "
                f"whole rounds of {lanes} x vector = {width}",
            )
        return bm, bn // (block // lanes), bk // lanes
    if bn % width or bk % lanes:
        raise _fail(
            kfunc,
            f"block tile {_format(tile)} is not a whole number of runs of "
            f"vector = {width} columns and k_lanes = {lanes} shares of K",
        )
    threads = (bn // width) * lanes
    if block != threads:
        raise _fail(
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
        raise _fail(
            kfunc,
            f"a wgmma warpgroup tile is {WGMMA_M} rows by a multiple of 8 columns "
            f"up to 256, not {_format(warp)}",
        )
    if tile[2] != SWIZZLE_ELEMENTS:
        raise _fail(
            kfunc,
            f"a wgmma block tile's K step is {SWIZZLE_ELEMENTS} (one 128-byte "
            f"swizzled row), not {tile[2]} in {_format(tile)}",
        )
    return WGMMA_M, warp[1], WGMMA_K


ATTENTION_FRAGMENT_ROWS = 16
"""Query rows of one mma.sync's M: a warp's share of an attention block."""


def attention_schedule_problem(found, schedule: kernel.ScheduleAttr) -> str | None:
    """What an attention kernel's schedule asks that its lowering does not
    take, or None. On mma.sync: tile = [m w, 16 n, head dim], warp = [m,
    value head dim], m a multiple of 16, block = 32 w. On wgmma (mma_warps =
    4): warp = [64, value head dim], block = 128 w, head dims multiples of
    64 and at most 256 keys and value head dims. Either way two or more
    stages, tiles that the block's 16-byte copies divide, no split or pack
    of a causal attention, a pack of query heads that share K and V."""
    head = value_dims(found.query)[-1]
    value_head = value_dims(found.value)[-1]
    bm, bn, bd = (
        (t.data for t in schedule.tile) if len(schedule.tile) == 3 else (0,) * 3
    )
    wm, wn = (t.data for t in schedule.warp) if len(schedule.warp) == 2 else (0, 0)
    mma_warps = schedule.mma_warps.data
    split, pack = schedule.split.data, schedule.pack.data
    on_wgmma = mma_warps > 1
    units = bm // wm if wm else 0
    block = 32 * mma_warps * units
    width = VECTOR_BYTES // element_bytes(found.query.type.element_type)
    if (
        (bd, wn) != (head, value_head)
        or not units
        or wm % ATTENTION_FRAGMENT_ROWS
        or bm % wm
        or bn % 16
        or head % 16
        or value_head % 16
        or schedule.stages.data < 2
        or (split > 1 and found.causal)
        or (pack > 1 and (found.causal or query_group(found) % pack))
        or schedule.block.data != block
        or any(
            (rows * cols // width) % block
            for rows, cols in ((bm, head), (bn, head), (bn, value_head))
        )
    ):
        return (
            f"it takes tile = [m w, 16 n, {head}], warp = [m, {value_head}] with m "
            "a multiple of 16, block = 32 w, or with mma_warps = 4 (wgmma) warp "
            f"= [64, {value_head}], block = 128 w; two or more stages, tiles "
            "that the block's 16-byte copies divide, no split or pack of a "
            "causal attention, and a pack of query heads that share K and V"
        )
    if on_wgmma and (
        wm != WGMMA_M or bn > 256 or head % 64 or value_head % 64 or value_head > 256
    ):
        return (
            f"on wgmma it takes warp = [{WGMMA_M}, {value_head}], at most 256 keys "
            "a tile and head dims that are multiples of 64 up to 256"
        )
    return None


def gemm_matmuls(kfunc: kernel.FuncOp) -> list[molten.MatmulOp]:
    """A gemm kernel's matmuls: one, or siblings that share its lhs and
    transposes (one tile of the lhs serves them all). Side by side
    (`side_by_side`: an op reads several of them), each tile of the output
    is a tile of each, and they must share their types too; else each
    tile is a tile of one of them, of any width."""
    matmuls = [op for op in kfunc.body.block.ops if isinstance(op, molten.MatmulOp)]
    if not matmuls:
        raise _fail(kfunc, "a gemm kernel holds a molten.matmul, and this one none")
    first = matmuls[0]
    for other in matmuls[1:]:
        if not other.shares_lhs_with(first):
            raise _fail(
                kfunc,
                f"a gemm kernel's {len(matmuls)} matmuls must share their lhs, "
                "transposes and element types",
            )
    together = side_by_side(list(kfunc.body.block.ops))
    if together and any(not other.is_sibling_of(first) for other in matmuls[1:]):
        raise _fail(
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
        raise _fail(
            kfunc, f"the schedule's tile {list(sizes)} must give block M, N and K"
        )
    warp = tuple(w.data for w in schedule.warp)
    tf32 = gemm.element == Float32Type()
    if warp and not (
        isinstance(gemm.element, MMA_ELEMENT_TYPES)
        or (tf32 and schedule.mma_warps.data == 1)
    ):
        raise _fail(
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
            raise _fail(
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
            raise _fail(
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
        raise _fail(kfunc, f"tiling {gemm.describe()} by {_format(sizes)}: {reason}")

    tiling = tiling_map(sizes)
    batches, m_tiles, n_tiles, k_steps = tile_counts(domain, tiling)
    if len(matmuls) > 1 and not side_by_side(list(kfunc.body.block.ops)):
        # Each tile one sibling's: the tiles of each one after another.
        n_tiles = sum(-(-sibling.n // sizes[1]) for sibling in siblings)
    split = schedule.split.data
    if split > 1 and schedule.mma_warps.data == 1:
        raise _fail(
            kfunc,
            f"split-K (split = {split}) is implemented for wgmma gemms "
            f"(mma_warps = {kernel.WARPGROUP_WARPS}) only",
        )
    if kernel.leaves_empty_part(k_steps, split):
        raise _fail(
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


@dataclass(frozen=True)
class Tile(ModulePass):
    """Attaches a #kernel.tiling, derived with islpy from the schedule, to
    each gemm kernel.func that has none."""

    name = "tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kfunc in [o for o in op.walk() if isinstance(o, kernel.FuncOp)]:
            if kfunc.kind.data == kernel.KernelKind.ATTENTION and kfunc.schedule:
                found = attention_in(kfunc.body.block.ops, "tile")
                problem = attention_schedule_problem(found, kfunc.schedule)
                if problem is not None:
                    raise _fail(kfunc, f"schedule {kfunc.schedule} ({problem})")
                continue
            if kfunc.kind.data != kernel.KernelKind.GEMM or kfunc.tiling is not None:
                continue
            if kfunc.variants is not None:
                # Each variant is tiled again as it is lowered (a kernel of its
                # own); here its schedule is only checked to tile.
                for variant in kfunc.variants:
                    tiling_for(kfunc, variant.schedule, variant.most.data)
                continue
            if kfunc.schedule is None:
                raise PassFailedException(
                    f"tile: @{kfunc.sym_name.data} has no schedule; run "
                    "kernel-schedule first"
                )
            kfunc.tiling = tiling_for(kfunc, kfunc.schedule)
