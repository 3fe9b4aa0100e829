"""The polyhedral model of a gemm kernel (islpy): its iteration domain
S[b, i, j, k], the access relations of A, B and C, the dependences of the
accumulation, the tiling map and what it answers: tile counts, partial
tiles and operand footprints. `passes/tiling/gemm.py` builds a kernel's
#kernel.tiling from these; `passes/tiling/attention.py` asks the generic
ones (`tile_counts`, `footprint`) of an attention's domain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import islpy as isl
from xdsl.ir import Attribute
from xdsl.utils.exceptions import PassFailedException

from molten.dialects import kernel, molten
from molten.dialects.molten import Dim, shape_of, value_dims
from molten.errors import StaticShapeNeeded

DOMAIN_DIMS = ("b", "i", "j", "k")
"""The iteration domain's dimensions: batch, then the gemm's M, N and K."""


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
    """The tiles along each dimension of the tiling's image (a gemm's b, i,
    j and k): the extent of the domain's image (0 along one that grows with
    a named size: the launch computes it)."""
    image = domain.apply(tiling)
    counts = []
    for d in range(image.dim(isl.dim_type.set)):
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


def tile_failure(kfunc: kernel.FuncOp, message: str) -> PassFailedException:
    return PassFailedException(f"tile: @{kfunc.sym_name.data}: {message}")
