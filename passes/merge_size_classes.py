"""`merge-size-classes`: neighbouring copies of a graph fused alike, one.

After fusion, copies of a graph by size class (`split-size-classes`)
whose bodies are the same kernels become one copy for both ranges; a
graph left with one copy takes back its name and loses the mark, as if
never split:

```mlir
// before: @mlp_T1 (1 <= T <= 1) ... @mlp_T5 (5 <= T <= 8), each a GEMV a
// matmul; @mlp_T9 (9 <= T <= 32) ... @mlp_T2049 (2049 <= T), gate and up
// one kernel
func.func @mlp_T1(...) attributes {molten.sizes = #molten.sizes<@mlp, 1 <= T <= 8>}
func.func @mlp_T9(...) attributes {molten.sizes = #molten.sizes<@mlp, 9 <= T>}
```
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from molten.dialects.molten import SIZES_ATTR, SizeRangeAttr, as_graph


def copies_by_graph(module: ModuleOp) -> dict[str, list[func.FuncOp]]:
    """The copies by size class of each graph in `module`, by the graph's
    name, in their order (increasing sizes)."""
    copies: dict[str, list[func.FuncOp]] = {}
    for graph in module.ops:
        sizes = graph.attributes.get(SIZES_ATTR)
        if isinstance(graph, func.FuncOp) and isinstance(sizes, SizeRangeAttr):
            copies.setdefault(sizes.graph.data, []).append(graph)
    return copies


def merge(copies: list[func.FuncOp]) -> None:
    """Joins each copy to the one before where their bodies are alike."""
    kept = copies[0]
    for copy in copies[1:]:
        if not kept.body.is_structurally_equivalent(copy.body):
            kept = copy
            continue
        first, last = kept.attributes[SIZES_ATTR], copy.attributes[SIZES_ATTR]
        assert isinstance(first, SizeRangeAttr) and isinstance(last, SizeRangeAttr)
        kept.attributes[SIZES_ATTR] = SizeRangeAttr(
            first.graph.data, first.dim.data, first.least.data, last.most.data
        )
        Rewriter.erase_op(copy)


@dataclass(frozen=True)
class MergeSizeClasses(ModulePass):
    """Joins neighbouring copies of a graph by size class that fused alike;
    a graph of one copy is the graph again."""

    name = "merge-size-classes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for name, copies in copies_by_graph(op).items():
            merge(copies)
            left = copies_by_graph(op)[name]
            if len(left) == 1:
                as_graph(left[0])
