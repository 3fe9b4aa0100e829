"""`torch.compile(model, backend="molten")`, and `molten.explain`.

Dynamo hands the backend an FX graph of the model; the backend exports it
(`torch.export`: ATen ops as the model wrote them), splits it into the
largest parts of ops Molten takes (`ATEN_OPS`, torch's
CapabilityBasedPartitioner) and compiles each part into one Molten graph
of fused kernels; the other ops run in eager PyTorch between them:

    linear -> relu -> cumsum -> mul -> add
    [Molten: linear, relu]  [eager: cumsum]  [Molten: mul, add]

Sizes Dynamo makes symbolic (`dynamic=True`, or a size that changed)
stay symbolic in the export and become named dimensions of the parts'
graphs: each part compiles once for every size.

It never returns a wrong result silently: a graph it cannot export, a part
it cannot translate or compile, inputs not on a CUDA device, and a part
called where autograd records gradients (Molten computes none: it is for
inference, under `torch.no_grad()` or `torch.inference_mode()`) run in
eager PyTorch, with one warning saying why; `molten.explain(model,
*inputs)` says what runs where before running anything.
"""

from __future__ import annotations

import itertools
import operator
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from molten.errors import MoltenError


class MoltenBackendWarning(UserWarning):
    """Part or all of a model compiled with backend="molten" runs in eager
    PyTorch; the message says which and why."""


@dataclass
class Part:
    """One part of a partitioned graph: its ATen ops, and either the Molten
    graph compiled for them or why they run in eager PyTorch."""

    name: str
    ops: list[str]
    molten: bool
    reason: str = ""
    """Why the part runs in eager PyTorch (empty where Molten runs it)."""
    kernels: tuple[Any, ...] = ()
    """The part's kernels, where it was compiled to know them
    (`molten.compiler.Kernel`: name, fused ops), in launch order."""


@dataclass
class Explanation:
    """What runs in Molten and what in eager PyTorch, and why
    (`molten.explain`): printed as a report, a summary line, then each part
    with its ops and its kernels (each with the ops it fuses), and each
    eager op with the reason."""

    parts: list[Part] = field(default_factory=list)
    reason: str = ""
    """Why the whole model runs eagerly, where it does."""

    @property
    def whole(self) -> bool:
        """Whether Molten computes the whole model (one part, Molten's)."""
        return not self.reason and all(p.molten for p in self.parts)

    def __str__(self) -> str:
        if self.reason:
            return f"eager PyTorch runs the whole model: {self.reason}"
        ours = [p for p in self.parts if p.molten]
        eager = [p for p in self.parts if not p.molten]
        kernels = sum(len(p.kernels) for p in ours)
        summary = (
            "Molten runs the whole model"
            if self.whole
            else f"Molten runs {len(ours)} part(s), eager PyTorch {len(eager)} op(s)"
        )
        counted = f", {kernels} kernel(s)" if kernels else ""
        lines = [f"{summary}{counted}."]
        for part in self.parts:
            if not part.molten:
                lines.append(
                    f"{part.name}: eager ({part.reason}): {', '.join(part.ops)}"
                )
                continue
            lines.append(f"{part.name}: Molten: {', '.join(part.ops)}")
            for k in part.kernels:
                lines.append(f"  kernel {k.name}: {', '.join(k.fused_ops)}")
        return "\n".join(lines)


Compile = Callable[[Any], Callable[..., Any]]
"""How a part's DataflowGraph becomes a callable of torch tensors."""


def molten_backend(gm: Any, example_inputs: Sequence[Any], **options: Any) -> Any:
    """The torch.compile backend: `gm` with the parts Molten takes compiled
    (`torch.compile(model, backend="molten")`)."""
    return backend(_gpu_compile(options))(gm, example_inputs)


def backend(compile_part: Compile, need_cuda: bool = True) -> Callable[..., Any]:
    """A torch.compile backend whose parts are `compile_part` of their
    graphs. A graph of symbolic sizes (Dynamo's dynamic dimensions) is
    planned at its first call, outside Dynamo's trace: torch.export's
    symbolic shapes would otherwise join the guards of the frame Dynamo is
    compiling."""

    def planned(gm: Any, inputs: Sequence[Any]) -> Any:
        compiled, explanation = plan(gm, inputs, compile_part, need_cuda)
        for part in explanation.parts:
            if not part.molten:
                _warn(
                    f"{part.name} ({', '.join(part.ops)}) runs eagerly: {part.reason}"
                )
        if explanation.reason:
            _warn(f"the graph runs eagerly: {explanation.reason}")
        return compiled

    def compile_graph(gm: Any, example_inputs: Sequence[Any]) -> Any:
        if not _symbolic_inputs(gm):
            return planned(gm, example_inputs)
        compiled: list[Any] = []

        def first_call_plans(*args: Any) -> Any:
            if not compiled:
                compiled.append(planned(gm, args))
            return compiled[0](*args)

        return first_call_plans

    return compile_graph


def _symbolic_inputs(module: Any) -> list[int]:
    """The positions of a Dynamo graph's SymInt inputs (its symbolic sizes)."""
    import torch

    placeholders = [
        n
        for n in getattr(module, "graph", torch.fx.Graph()).nodes
        if n.op == "placeholder"
    ]
    return [
        i
        for i, n in enumerate(placeholders)
        if isinstance(n.meta.get("example_value"), torch.SymInt)
    ]


def explain(model: Any, *inputs: Any) -> Explanation:
    """What `torch.compile(model, backend="molten")` would run in Molten
    and what in eager PyTorch, and why, for `model` at `inputs`: each
    part's ops translated and compiled (to CUDA source; nothing runs)."""

    from molten.compiler import ZeroCompiler

    compiler = ZeroCompiler()

    def compile_only(graph: Any) -> Callable[..., Any]:
        return compiler.compile(graph)  # never called: its kernels are read

    return plan(model, inputs, compile_only, need_cuda=False)[1]


def plan(
    model: Any,
    example_inputs: Sequence[Any],
    compile_part: Compile,
    need_cuda: bool = True,
) -> tuple[Callable[..., Any], Explanation]:
    """`model` partitioned: a callable of its inputs whose parts Molten
    takes are `compile_part` of their graphs, the rest eager; and what
    went where. Where nothing can run in Molten, the model itself."""
    import torch

    eager = model.forward if hasattr(model, "forward") else model
    tensors = [x for x in example_inputs if isinstance(x, torch.Tensor)]
    if need_cuda and not all(x.is_cuda for x in tensors):
        devices = sorted({str(x.device) for x in tensors})
        return eager, Explanation(
            reason=f"inputs on {', '.join(devices)}; Molten runs on CUDA devices"
        )
    from molten.from_torch import decomposed, function_module, translate, without_cache

    module = model if isinstance(model, torch.nn.Module) else function_module(model)
    try:
        with without_cache(module):  # a transformers model: no cache object out
            exported, dropped = _export(module, example_inputs)
    except Exception as error:  # torch's own errors, of many types
        first = (str(error).strip().splitlines() or [""])[0]
        return eager, Explanation(
            reason=f"torch.export could not trace it: {type(error).__name__}: {first}"
        )
    prefix = getattr(model, "__name__", type(model).__name__)
    # What Molten has no handler for, decomposed into Core ATen and
    # functionalized first, as from_torch does (diff, new_ones, add_...).
    exported = decomposed(exported, prefix)
    fused = _partitioned(exported.module())
    explanation = Explanation()
    for name, part in list(fused.named_children()):
        if not name.startswith("fused_"):
            continue
        ops = [
            str(n.target).removeprefix("aten.")
            for n in part.graph.nodes
            if n.op == "call_function"
        ]
        try:
            graph = translate(part.graph, f"{prefix}_{name}", sizes=_size_names(part))
            run = compile_part(graph)
        except (MoltenError, NotImplementedError) as error:
            explanation.parts.append(Part(name, ops, False, str(error)))
            continue
        setattr(fused, name, _molten_part(run, part, name))
        kernels = tuple(getattr(run, "kernels", ()))
        explanation.parts.append(Part(name, ops, True, kernels=kernels))
    for node in fused.graph.nodes:
        if node.op == "call_function" and not _bookkeeping(node):
            reason = _unsupported_reason(node)
            explanation.parts.append(Part(node.name, [str(node.target)], False, reason))
    if dropped:  # the exported module reads the sizes off its tensors
        return _without(fused, dropped), explanation
    return fused, explanation


def _export(module: Any, example_inputs: Sequence[Any]) -> tuple[Any, list[int]]:
    """torch.export of `module` at `example_inputs`. Where Dynamo made sizes
    symbolic (a graph of `dynamic=True`, or one it recompiled for a new
    size: SymInt inputs, tensors of symbolic dimensions), those dimensions
    stay symbolic, one `Dim` per symbol, and each SymInt input is read off
    a tensor dimension it names, so that the parts compile once for every
    size (named dimensions, `_size_names`). Also the positions of the
    inputs the exported module does not take (the SymInts)."""
    import torch

    fakes = [
        n.meta.get("example_value")
        for n in getattr(module, "graph", torch.fx.Graph()).nodes
        if n.op == "placeholder"
    ]
    sized = _symbolic_inputs(module)
    dims: dict[int, dict[int, Any]] = {}
    found: dict[str, tuple[int, int]] = {}  # a symbol -> (input, axis) of it
    symbols: dict[str, Any] = {}
    for i, fake in enumerate(fakes):
        if not isinstance(fake, torch.Tensor):
            continue
        for axis, d in enumerate(fake.shape):
            if isinstance(d, torch.SymInt) and str(d).isidentifier():
                symbol = str(d)
                found.setdefault(symbol, (i, axis))
                if symbol not in symbols:
                    symbols[symbol] = torch.export.Dim(symbol)
                dims.setdefault(i, {})[axis] = symbols[symbol]
    if not dims:
        return torch.export.export(module, tuple(example_inputs)), []
    for i in sized:
        if str(fakes[i]) not in found:
            raise ValueError(f"the symbolic size {fakes[i]} is no input's dimension")
    tensors = [i for i in range(len(example_inputs)) if i not in sized]

    class ReadsSizes(torch.nn.Module):
        """`module` of its tensor inputs, its SymInt inputs read off them."""

        def __init__(self):
            super().__init__()
            self.inner = module

        def forward(self, *xs):
            args: list[Any] = [None] * len(example_inputs)
            for k, i in enumerate(tensors):
                args[i] = xs[k]
            for i in sized:
                j, axis = found[str(fakes[i])]
                args[i] = args[j].shape[axis]
            return self.inner(*args)

    exported = torch.export.export(
        ReadsSizes(),
        tuple(example_inputs[i] for i in tensors),
        # One spec a tensor, for forward's one parameter, *xs.
        dynamic_shapes=(tuple(dims.get(i) for i in tensors),),
    )
    return exported, sized


def _without(fused: Any, dropped: list[int]) -> Any:
    """`fused` called with the inputs at `dropped` left out."""
    import torch

    class Without(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fused = fused

        def forward(self, *args: Any) -> Any:
            return self.fused(*(a for i, a in enumerate(args) if i not in dropped))

    return Without()


def _size_names(part: Any) -> dict[str, str]:
    """A part's symbolic sizes (torch.export's symbols, s77) by the names of
    its graph's named dimensions (the same)."""
    import torch

    names: dict[str, str] = {}
    for node in part.graph.nodes:
        value = node.meta.get("val") if node.op == "placeholder" else None
        if isinstance(value, torch.Tensor):
            for d in value.shape:
                if isinstance(d, torch.SymInt) and str(d).isidentifier():
                    names[str(d)] = str(d)
    return names


def _partitioned(module: Any) -> Any:
    """`module` (an exported graph) with each largest part of ops Molten
    takes made a submodule `fused_<n>`."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupportBase

    from molten.from_torch import takes

    class MoltenSupport(OperatorSupportBase):
        def is_node_supported(self, submodules, node) -> bool:
            return takes(node)

    partitioner = CapabilityBasedPartitioner(
        module, MoltenSupport(), allows_single_node_partition=True
    )
    return partitioner.partition_and_fuse()


def _bookkeeping(node: Any) -> bool:
    """torch.export's own checks, which compute nothing, and the picking
    of one result of a part of several."""
    return node.target is operator.getitem or "_assert" in str(node.target)


def _unsupported_reason(node: Any) -> str:
    from molten.aten_ops import ATEN_OPS
    from molten.from_torch import source_line

    if str(node.target) in ATEN_OPS:  # cat, split, slice: see `takes`
        return (
            f"Molten takes {node.target} only as a weight concat, read by linear "
            f"or matmul and split at its parts ({source_line(node)})"
        )
    from molten.core_aten import status_of

    status = status_of(str(node.target).removeprefix("aten."))
    if status.status in ("refused", "out of scope"):  # for good, as core-aten.md
        return (
            f"Molten does not take {node.target}: {status.reason} ({source_line(node)})"
        )
    return f"Molten does not take {node.target} yet ({source_line(node)})"


_PART_OPS = itertools.count()
"""Numbers the custom ops of the parts compiled in this process."""


def molten_op(run: Callable[..., Any], eager: Any, name: str) -> Any:
    """`run` (a compiled part: tensors in, a tensor or a tuple of them out)
    as a torch.library custom op, `torch.ops.molten.<name>_<n>`, of a list
    of tensors to a list of tensors. Its fake implementation is the part's
    eager module on fake tensors, so that torch (FakeTensorMode, Dynamo,
    torch.export of the compiled model) knows the outputs' shapes without
    running Molten; to autograd it is opaque (Molten computes no
    gradients)."""
    import torch

    qualified = f"molten::{name}_{next(_PART_OPS)}"

    def as_list(out: Any) -> list[Any]:
        return list(out) if isinstance(out, tuple | list) else [out]

    # The schema is spelled out: this module's annotations are strings.
    @torch.library.custom_op(
        qualified, mutates_args=(), schema="(Tensor[] args) -> Tensor[]"
    )
    def part(args):
        return as_list(run(*args))

    @part.register_fake
    def _(args):
        return [torch.empty_like(t) for t in as_list(eager(*args))]

    return part


def _molten_part(run: Callable[..., Any], eager: Any, name: str) -> Any:
    """A submodule that runs a part in Molten (`run` of its inputs, through
    its custom op, `molten_op`), and the part's own module (eager) where
    autograd records gradients and from the first time Molten fails at
    run time, with one warning."""
    import torch

    op = molten_op(run, eager, name)
    # The part gives one value, or a tuple of them (its graph's output).
    (output,) = [n for n in eager.graph.nodes if n.op == "output"]
    single = not isinstance(output.args[0], tuple | list)

    class MoltenPart(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.eager = eager
            self.op = op
            self.failed: str | None = None
            self.said: set[str] = set()

        def forward(self, *args: Any) -> Any:
            if torch.is_grad_enabled() and any(
                isinstance(a, torch.Tensor) and a.requires_grad for a in args
            ):
                # Molten computes no gradients: eager keeps autograd right.
                _warn(f"{name} runs eagerly where gradients are recorded", self.said)
                return self.eager(*args)
            if self.failed is None and all(isinstance(a, torch.Tensor) for a in args):
                try:
                    # Parameters require grad; nothing records it here.
                    outs = self.op([a.detach() for a in args])
                    return outs[0] if single else tuple(outs)
                except Exception as error:  # whatever fails, eager is right
                    self.failed = f"{type(error).__name__}: {error}"
                    _warn(f"{name} runs eagerly from now on: {self.failed}", self.said)
            return self.eager(*args)

    return MoltenPart()


def _gpu_compile(options: dict[str, Any]) -> Compile:
    """A part's graph compiled by ZeroCompiler (the backend's `options`
    passed on: arch, autotune, ...), called on torch tensors."""
    from molten.compiler import ZeroCompiler

    return ZeroCompiler(progress=False, **options).compile


def _warn(message: str, said: set[str] | None = None) -> None:
    """Warns, once per message where `said` keeps the messages said."""
    if said is not None:
        if message in said:
            return
        said.add(message)
    warnings.warn(f"molten backend: {message}", MoltenBackendWarning, stacklevel=3)
