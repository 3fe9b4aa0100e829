"""`tile`: each gemm and attention kernel's tiling, derived polyhedrally
(islpy) from its schedule by its family's tiling (`passes/families.py`).

A gemm kernel computes C[b, i, j] += A[b, i, k] * B[b, k, j] over the
iteration domain { S[b, i, j, k] } (`passes/tiling/polyhedral.py`); its
`#kernel.tiling` (`passes/tiling/gemm.py`) checks the tiling legal against
the accumulation's dependences, counts the tiles and K steps (the extent of
the domain's image under S -> T[b, i/BM, j/BN, k/BK]), finds the loops
whose last tile is partial (exact), each operand's footprint (the box of
one tile's image under its access relation) and checks that the tile sizes
divide across levels (block, warp, fragment; for a GEMV, its threads' share
of the block tile). An attention kernel's `#kernel.attention_tiling`
(`passes/tiling/attention.py`) answers the same questions of
{ S[g, i, j, d, e] } (query rows, keys, head dims): tiles of query rows,
key steps, partial loops (for some length, where one is named) and the
Q, K and V tiles' shared-memory boxes. The lowerings read these instead of
recomputing them.

```mlir
kernel.func @mm(...) -> (tensor<256x256xf16>) gemm
    schedule #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32],
                              warp = [64, 64], stages = 4>
    tiling #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 32],
                          warp = [64, 64], fragment = [16, 8, 16], stages = 4,
                          k_steps = 2, partial = [], lhs = [128, 32, 40],
                          rhs = [32, 128, 136]> {
```

A kernel with variants (over a named size) is tiled per variant as it is
lowered; here each variant's schedule is checked to tile. A tiling already
there is kept; other kernels are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from molten.dialects import kernel
from molten.passes.families import FAMILIES, family_of

TILED_KINDS = frozenset(f.kind for f in FAMILIES.values() if f.tiling is not None)
"""The kinds whose families are tiled (gemm, attention)."""


@dataclass(frozen=True)
class Tile(ModulePass):
    """Attaches its family's tiling (islpy), derived from the schedule, to
    each gemm and attention kernel.func that has none."""

    name = "tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kfunc in [o for o in op.walk() if isinstance(o, kernel.FuncOp)]:
            if kfunc.tiling is not None:
                continue
            if kfunc.variants is not None:
                # Each variant is tiled again as it is lowered (a kernel of its
                # own); here its schedule is only checked to tile.
                for variant in kfunc.variants:
                    tiling = family_of(variant.schedule).tiling
                    if tiling is not None:
                        tiling(kfunc, variant.schedule, variant.most.data)
                continue
            if kfunc.schedule is None:
                if kfunc.kind.data in TILED_KINDS:
                    raise PassFailedException(
                        f"tile: @{kfunc.sym_name.data} has no schedule; run "
                        "kernel-schedule first"
                    )
                continue
            tiling = family_of(kfunc.schedule).tiling
            if tiling is not None:
                kfunc.tiling = tiling(kfunc, kfunc.schedule, 0)
