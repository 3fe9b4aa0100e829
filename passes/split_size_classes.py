"""`split-size-classes`: a graph whose fusion depends on a named size, one
copy per size class.

Whether matmuls of one lhs (q, k and v; gate and up) are best one kernel
depends on their rows: on the H100 a GEMV serves each alone up to 8 rows,
gate and up pay as one persistent kernel from 9, q, k and v from 33. Over
a named M that choice cannot be made once. This pass copies such a graph,
one copy per gemm size class (`GEMM_SIZE_CLASSES`, then the rest), each
a `func.func` marked with the range of the size it runs at:

```mlir
func.func @mlp_T1(...) attributes {molten.sizes = #molten.sizes<@mlp, 1 <= T <= 1>}
func.func @mlp_T2(...) attributes {molten.sizes = #molten.sizes<@mlp, 2 <= T <= 4>}
...
func.func @mlp_T2049(...) attributes {molten.sizes = #molten.sizes<@mlp, 2049 <= T>}
```

The fusion passes decide each copy's kernels at its class's bound (as
kernel-schedule schedules a class: `sized_for_decision`),
`merge-size-classes` joins neighbouring copies fused alike, and the
launcher runs the copy whose range holds the size. A graph with one
named M over all such matmuls is split; others are left as they are.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from molten.dialects import molten
from molten.dialects.molten import SIZES_ATTR, SizeRangeAttr, value_dims


def size_dependent_rows(graph: func.FuncOp) -> str | None:
    """The name of the rows of `graph`'s matmuls where two of them share
    their lhs over a named M (and every named M is that one), else None."""
    matmuls = [op for op in graph.walk() if isinstance(op, molten.MatmulOp)]
    rows = {value_dims(mm.result)[-2] for mm in matmuls}
    names = {r for r in rows if isinstance(r, str)}
    if len(names) != 1:
        return None
    named = [mm for mm in matmuls if value_dims(mm.result)[-2] in names]
    if not any(
        a.shares_lhs_with(b) for i, a in enumerate(named) for b in named[i + 1 :]
    ):
        return None
    return names.pop()


def size_ranges(classes: tuple[int, ...]) -> list[tuple[int, int]]:
    """The ranges (least, most) of the size classes bounded by `classes`
    (most 0: no bound)."""
    leasts = [1, *(bound + 1 for bound in classes)]
    return list(zip(leasts, [*classes, 0], strict=True))


def split(module: ModuleOp, graph: func.FuncOp, dim: str) -> None:
    """Replaces `graph` by its copies, one per gemm size class of `dim`."""
    from molten.passes.schedule.size_classes import GEMM_SIZE_CLASSES

    used = {
        name.data
        for o in module.walk()
        if isinstance(name := o.properties.get("sym_name"), StringAttr)
    }
    name = graph.sym_name.data
    for least, most in size_ranges(GEMM_SIZE_CLASSES):
        copy = graph.clone()
        copy_name, index = f"{name}_{dim}{least}", 0
        while copy_name in used:
            index += 1
            copy_name = f"{name}_{dim}{least}_{index}"
        used.add(copy_name)
        copy.sym_name = StringAttr(copy_name)
        copy.attributes[SIZES_ATTR] = SizeRangeAttr(name, dim, least, most)
        Rewriter.insert_op(copy, InsertPoint.before(graph))
    Rewriter.erase_op(graph)


@dataclass(frozen=True)
class SplitSizeClasses(ModulePass):
    """Copies each graph whose fusion depends on a named M (matmuls of one
    lhs) once per gemm size class, each copy marked with its range."""

    name = "split-size-classes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in [g for g in op.ops if isinstance(g, func.FuncOp)]:
            if SIZES_ATTR in graph.attributes or not graph.body.blocks:
                continue
            dim = size_dependent_rows(graph)
            if dim is not None:
                split(op, graph, dim)
