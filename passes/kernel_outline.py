"""`kernel-outline`: each kernel.fused becomes a kernel.func and a launch.

The graph's `func.func` is left holding the host schedule: one
`kernel.launch` per kernel, in order. Kernels are named after the graph and
their kind (`@fused_rmsnorm_row_reduce0`) and record the molten ops they
compute in `fused_ops`. The copies of a graph by size class
(split-size-classes) launch one kernel for groups alike (the norms, the
attention, a gemm that fused alike): only what their fusion changes is a
kernel of its own.
"""

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from molten.dialects import kernel
from molten.dialects.molten import SIZES_ATTR, graph_name
from molten.passes.fusion import GENERATORS


@dataclass
class OutlineFusedGroup(RewritePattern):
    used_names: set[str] = field(default_factory=set[str])
    copies_kernels: dict[str, list[kernel.FuncOp]] = field(
        default_factory=dict[str, list[kernel.FuncOp]]
    )
    """The kernels outlined from the copies by size class of each graph, by
    the graph's name: a later copy launches an alike kernel again."""

    def _outlined_alike(self, op: kernel.FusedOp, graph: str) -> str | None:
        """The name of a kernel an earlier copy of `graph` outlined from a
        group alike `op` (kind, schedule, types and body), if any."""
        for outlined in self.copies_kernels.get(graph, []):
            if (
                outlined.kind == op.kind
                and outlined.matched == op.matched
                and outlined.schedule == op.schedule
                and list(outlined.function_type.outputs) == list(op.result_types)
                and outlined.body.is_structurally_equivalent(op.body)
            ):
                return outlined.sym_name.data
        return None

    def _unique_name(self, base: str) -> str:
        index = 0
        while f"{base}{index}" in self.used_names:
            index += 1
        self.used_names.add(f"{base}{index}")
        return f"{base}{index}"

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: kernel.FusedOp, rewriter: PatternRewriter):
        graph = op.parent_op()
        if not isinstance(graph, func.FuncOp):
            return
        copy_of = graph_name(graph) if SIZES_ATTR in graph.attributes else None
        if copy_of is not None and (alike := self._outlined_alike(op, copy_of)):
            rewriter.replace(op, kernel.LaunchOp(alike, op.inputs, op.result_types))
            return
        name = self._unique_name(f"{graph_name(graph)}_{op.kind.data.value}")
        body = Region()
        op.body.move_blocks(body)
        fused_ops = [
            o.name.removeprefix("molten.")
            for o in body.block.ops
            if not isinstance(o, (*GENERATORS, kernel.YieldOp))
        ]
        function_type = FunctionType.from_lists(
            [v.type for v in op.inputs], op.result_types
        )
        outlined = kernel.FuncOp(name, op.kind.data, function_type, body, fused_ops)
        if op.matched is not None:
            outlined.matched = op.matched
        if op.schedule is not None:
            outlined.schedule = op.schedule
        rewriter.insert(outlined, InsertPoint.before(graph))
        if copy_of is not None:
            self.copies_kernels.setdefault(copy_of, []).append(outlined)
        launch = kernel.LaunchOp(name, op.inputs, op.result_types)
        rewriter.replace(op, launch)


@dataclass(frozen=True)
class KernelOutline(ModulePass):
    """Moves each kernel.fused group into a kernel.func called by kernel.launch."""

    name = "kernel-outline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        existing = {
            name.data
            for o in op.walk()
            if isinstance(name := o.properties.get("sym_name"), StringAttr)
        }
        PatternRewriteWalker(
            OutlineFusedGroup(existing), apply_recursively=False
        ).rewrite_module(op)
