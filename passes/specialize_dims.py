"""`specialize-dims`: named dimensions given their sizes.

A graph over `tensor<?x3584xbf16, ["T"]>` holds for any T; given `T=17`
every type of it becomes static (`tensor<17x3584xbf16>`), the function's
signature too, and the ops check their rules again at those sizes. A
kernel with `variants` by a size given keeps the one whose class holds it
as its schedule, and of a graph's copies by size class
(split-size-classes) the one whose range holds it is the graph. Names not
given stay dynamic.

    molten-opt -p 'specialize-dims{sizes="T=17"}' layer.mlir
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from molten.dialects import kernel, molten


def specialized_type(t: Attribute, sizes: Mapping[str, int]) -> Attribute:
    """`t` with its dimensions named in `sizes` at those sizes."""
    if not molten.is_dynamic(t):
        return t
    assert isinstance(t, TensorType)
    dims = [sizes.get(d, d) if isinstance(d, str) else d for d in molten.dims_of(t)]
    return molten.tensor_type(dims, t.element_type)


def specialize(module: ModuleOp, sizes: Mapping[str, int]) -> None:
    """Gives the dimensions named in `sizes` their sizes throughout `module`
    (in place), then verifies it: an op whose rule fails at these sizes
    raises its error."""
    for name, size in sizes.items():
        if not molten.is_dim_name(name) or isinstance(size, bool) or size < 1:
            raise PassFailedException(
                f"specialize-dims: {name} = {size}: a dimension name takes a "
                "positive size"
            )
    _keep_copies(module, sizes)
    specialize_types(module, sizes)
    for kfunc in module.walk():
        if isinstance(kfunc, kernel.FuncOp) and kfunc.variants is not None:
            _keep_variant(kfunc, sizes)
    module.verify()


def _keep_copies(module: ModuleOp, sizes: Mapping[str, int]) -> None:
    """Of each graph split by size class (split-size-classes), the copy
    whose range holds the size given, as the graph (its name, unmarked);
    the other copies and the kernels only they launch are dropped."""
    dropped: set[str] = set()
    for graph in list(module.ops):
        found = molten.size_range_of(graph)
        size = None if found is None else sizes.get(found.dim.data)
        if found is None or size is None:
            continue
        if found.holds(size):
            molten.as_graph(graph)
            continue
        dropped |= {
            o.callee.string_value()
            for o in graph.walk()
            if isinstance(o, kernel.LaunchOp)
        }
        Rewriter.erase_op(graph)
    launched = {
        o.callee.string_value() for o in module.walk() if isinstance(o, kernel.LaunchOp)
    }
    for kfunc in list(module.ops):
        if (
            isinstance(kfunc, kernel.FuncOp)
            and kfunc.sym_name.data in dropped - launched
        ):
            Rewriter.erase_op(kfunc)


def _keep_variant(kfunc: kernel.FuncOp, sizes: Mapping[str, int]) -> None:
    """The kernel's schedule: its variant for the size given its dimension
    (the first whose bound holds it; the last is open-ended)."""
    variants = list(kfunc.variants or ())
    size = sizes.get(variants[0].dim.data)
    if size is None:
        return
    kept = next(v for v in variants if not v.most.data or size <= v.most.data)
    kfunc.variants = None
    kfunc.schedule = kept.schedule


def specialize_types(root: Operation, sizes: Mapping[str, int]) -> None:
    """Gives the dimensions named in `sizes` their sizes in every type within
    `root` (in place; not verified)."""
    for op in root.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    new = specialized_type(arg.type, sizes)
                    if new != arg.type:
                        Rewriter.replace_value_with_new_type(arg, new)
        for result in op.results:
            new = specialized_type(result.type, sizes)
            if new != result.type:
                Rewriter.replace_value_with_new_type(result, new)
        signature = getattr(op, "function_type", None)  # func.func, kernel.func
        if isinstance(signature, FunctionType):
            op.function_type = FunctionType.from_lists(  # type: ignore[attr-defined]
                [specialized_type(t, sizes) for t in signature.inputs.data],
                [specialized_type(t, sizes) for t in signature.outputs.data],
            )


def parse_sizes(text: str) -> dict[str, int]:
    """ "T=17,S=128" as {"T": 17, "S": 128}."""
    sizes: dict[str, int] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        name, _, value = entry.partition("=")
        try:
            sizes[name.strip()] = int(value)
        except ValueError:
            raise PassFailedException(
                f'specialize-dims: sizes="{text}": expected NAME=SIZE entries '
                'separated by commas (sizes="T=17,S=128")'
            ) from None
    return sizes


@dataclass(frozen=True)
class SpecializeDims(ModulePass):
    """Gives named dimensions their sizes (`sizes="T=17,S=128"`)."""

    name = "specialize-dims"

    sizes: str = ""
    """NAME=SIZE entries separated by commas."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specialize(op, parse_sizes(self.sizes))
