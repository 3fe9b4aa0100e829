"""`molten.from_torch`: a PyTorch function or module as a `DataflowGraph`.

`torch.export` traces the module at its example inputs into ATen ops (the
graph as the module wrote it: `aten.linear`, `aten.layer_norm`,
`aten.scaled_dot_product_attention`, not yet decomposed); each op becomes
the molten ops of its math, by the entry of `ATEN_OPS` named after it
(the table is `molten.aten_ops`; this module walks the graph):

    from_torch(nn.Sequential(nn.Linear(64, 128), nn.GELU()), [torch.randn(8, 64)])
    # inputs: 0_weight [128, 64], 0_bias [128], x [8, 64] (parameters first,
    # named as the module names them, then the forward's inputs)
    # %linear = molten.matmul %x, %0_weight transpose_b ... + %0_bias
    # %gelu = molten.gelu %linear

The graph's inputs are the module's parameters and floating-point
buffers, in the order `named_parameters()` then `named_buffers()` give
them (torch.export's order, names with `.` as `_`), then the forward's
tensor inputs (`torch_arguments` puts a module's tensors in that order).
A buffer of another dtype (BatchNorm's step counter) is module state, not
math: not an input, its in-place updates left out, an op reading it
refused. An op Molten
does not take raises `UnsupportedError` naming the ATen op and the line of
the user's source that called it.
"""

from __future__ import annotations

import contextlib
import inspect
import operator
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from molten.aten_ops import (
    ATEN_OPS,
    CONCAT_READERS,
    DTYPES,
    Concatenated,
    Unavailable,
)
from molten.dialects.molten import is_dim_name
from molten.errors import MoltenError, UnsupportedError
from molten.ir import DataflowGraph, Tensor


def from_torch(
    fn_or_module: Any,
    example_inputs: Sequence[Any],
    *,
    name: str | None = None,
    dynamic: dict[str, dict[int, str]] | None = None,
) -> DataflowGraph:
    """The graph of `fn_or_module` (an `nn.Module` or a function of
    tensors) traced by `torch.export` at `example_inputs`: inputs the
    module's parameters and buffers, then the forward's tensors (see the
    module's docstring); outputs the forward's tensors, in order.

    `dynamic` names dimensions of the forward's inputs, by input and axis:
    `{"x": {0: "T"}}` makes x's first dimension the named T of the graph
    (one compile for every T; an axis may not be 1 in the example, which
    torch.export would fix)."""
    torch = _torch()
    module = fn_or_module
    if not isinstance(module, torch.nn.Module):
        if not callable(module):
            raise UnsupportedError(
                f"from_torch: takes an nn.Module or a function of tensors, not "
                f"{type(module).__name__}"
            )
        module = function_module(fn_or_module)
    graph_name = name or getattr(fn_or_module, "__name__", type(module).__name__)
    inputs = _parameter_names(fn_or_module) or _parameter_names(module.forward)
    example_inputs = _numbers_as_tensors(example_inputs)
    try:
        with without_cache(module):
            exported = torch.export.export(
                module,
                tuple(example_inputs),
                dynamic_shapes=_dynamic_shapes(
                    dynamic, inputs, len(example_inputs), module is not fn_or_module
                ),
            )
    except Exception as error:  # torch's own errors: many types, all a trace failure
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise UnsupportedError(
            f"from_torch: torch.export could not trace {graph_name}: "
            f"{type(error).__name__}: {first}"
        ) from None
    return _translate(
        decomposed(exported, graph_name),
        graph_name,
        _defined_at(fn_or_module),
        inputs,
        dynamic or {},
    )


@contextlib.contextmanager
def without_cache(module: Any) -> Iterator[None]:
    """A transformers model traced without its KV cache (`config.use_cache`
    off while it is exported): a forward of ids gives its logits or hidden
    states, not a cache object torch.export cannot return. (A decode step
    with a cache passes the cache's tensors as inputs.)"""
    config = getattr(module, "config", None)
    if getattr(config, "use_cache", None) is not True:
        yield
        return
    config.use_cache = False
    try:
        yield
    finally:
        config.use_cache = True


def decomposed(exported: Any, graph_name: str) -> Any:
    """`exported` with each op Molten has no handler for decomposed into
    Core ATen (torch.export's `run_decompositions`), by a table without the
    ops it handles: its composites (softmax, layer_norm, rms_norm, sdpa,
    silu, gelu...) stay whole, and a graph of handled ops only is left as
    it is."""
    from torch.export import default_decompositions

    # An in-place op is functionalized by the decomposition (torch's own
    # machinery) unless it updates a step counter, module state that the
    # translation leaves alone (BatchNorm's).
    unhandled = {
        str(node.target)
        for node in exported.graph.nodes
        if node.op == "call_function"
        and str(node.target).startswith("aten.")
        and not _updates_a_counter(node)
    } - set(ATEN_OPS)
    if not unhandled:
        return exported
    table = default_decompositions()
    for op in list(table.keys()):
        if str(op) in ATEN_OPS:
            del table[op]
    try:
        return exported.run_decompositions(table)
    except Exception as error:  # torch's own errors, as in tracing
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise UnsupportedError(
            f"from_torch: torch.export could not decompose "
            f"{', '.join(sorted(unhandled))} of {graph_name}: "
            f"{type(error).__name__}: {first}"
        ) from None


def _in_place(node: Any) -> bool:
    """Whether `node` is an in-place ATen op (aten.add_.Tensor)."""
    return str(node.target).split(".")[1].endswith("_")


def _updates_a_counter(node: Any) -> bool:
    """Whether `node` is an in-place op on a step counter (a 0-d integer
    buffer: not a tensor the graph takes)."""
    target = node.args[0] if node.args else None
    return (
        _in_place(node)
        and getattr(target, "op", None) == "placeholder"
        and not _is_tensor_input(target.meta.get("val"))
    )


def _dynamic_shapes(
    dynamic: dict[str, dict[int, str]] | None,
    inputs: list[str],
    count: int,
    wrapped: bool,
) -> Any:
    """torch.export's `dynamic_shapes` for `dynamic` (names by input and
    axis): a Dim per name, shared by every axis that names it."""
    if not dynamic:
        return None
    from torch.export import Dim

    unknown = sorted(set(dynamic) - set(inputs))
    if unknown:
        raise UnsupportedError(
            f"from_torch: dynamic names {', '.join(unknown)}, which are not inputs "
            f"of the forward ({', '.join(inputs)})"
        )
    dims: dict[str, Any] = {}
    specs = []
    for i in range(count):
        axes = dynamic.get(inputs[i], {}) if i < len(inputs) else {}
        for dim in axes.values():
            if not is_dim_name(dim):
                raise UnsupportedError(
                    f"from_torch: dynamic dimension {dim!r} is not a name (an "
                    "identifier such as T)"
                )
        specs.append(
            {a: dims.setdefault(d, Dim(d, min=1)) for a, d in axes.items()} or None
        )
    return (tuple(specs),) if wrapped else tuple(specs)


def torch_arguments(module: Any, *inputs: Any) -> tuple[Any, ...]:
    """The arguments of the graph `from_torch(module, ...)` gives, for
    `module`'s forward at `inputs`: its parameters and buffers of a Molten
    dtype (not BatchNorm's step counter, an integer of no dimensions), then
    the inputs (a Python float as the 0-d tensor the graph takes)."""
    # Tied weights (T5's shared embedding) are one input per name, as
    # torch.export lifts them.
    return (
        *(p.detach() for _, p in module.named_parameters(remove_duplicate=False)),
        *(
            b
            for _, b in module.named_buffers(remove_duplicate=False)
            if _is_tensor_input(b)
        ),
        *_numbers_as_tensors(inputs),
    )


def _numbers_as_tensors(inputs: Sequence[Any]) -> list[Any]:
    """`inputs` with each Python float a 0-d float32 tensor on the device of
    the tensors among them: an input of the graph, given at each call
    (torch.export would fix its value at the example's, `A * s` then the
    same for every s)."""
    torch = _torch()
    devices = [x.device for x in inputs if isinstance(x, torch.Tensor)]
    device = devices[0] if devices else None
    # torch.full, not torch.tensor: a fill on the stream, no host copy that
    # would wait for the GPU.
    return [
        torch.full((), x, dtype=torch.float32, device=device)
        if isinstance(x, float)
        else x
        for x in inputs
    ]


def function_module(fn: Callable[..., Any]) -> Any:
    """An nn.Module whose forward is `fn` (torch.export traces modules)."""
    torch = _torch()

    class FunctionModule(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)

    return FunctionModule()


def _torch():
    try:
        import torch
    except ImportError:
        raise UnsupportedError(
            "from_torch: needs PyTorch (pip install torch); Molten itself does not"
        ) from None
    return torch


def _defined_at(fn: Any) -> str:
    """Where a function (not a module: its ops have their own lines) is
    defined: torch.export records no lines inside a function it traces
    through a wrapper."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_filename.startswith("<"):
        return ""
    return (
        f"{getattr(fn, '__qualname__', fn)} ({code.co_filename}:{code.co_firstlineno})"
    )


def _parameter_names(fn: Any) -> list[str]:
    """A function's or a bound forward's positional parameters (its inputs'
    names; the wrapper torch.export traces for a function takes *args)."""
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [
        p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds
    ]


def _translate(
    exported: Any,
    graph_name: str,
    defined_at: str,
    input_names: list[str],
    dynamic: dict[str, dict[int, str]],
) -> DataflowGraph:
    """The graph of an ExportedProgram: its parameters and floating-point
    buffers named as the module names them, then its user inputs, their
    symbolic sizes by the names `dynamic` gives them."""
    from torch.export.graph_signature import InputKind

    signature = {spec.arg.name: spec for spec in exported.graph_signature.input_specs}
    users = [
        n
        for n in exported.graph.nodes
        if n.op == "placeholder" and signature[n.name].kind == InputKind.USER_INPUT
    ]
    forward_names = dict(zip(users, input_names, strict=False))
    sizes = {  # a size's symbol (s77) -> its name (T)
        str(node.meta["val"].shape[axis]): dim
        for node, name in forward_names.items()
        for axis, dim in dynamic.get(name, {}).items()
    }

    def input_name(node: Any) -> str | Unavailable:
        spec = signature[node.name]
        if spec.kind == InputKind.USER_INPUT:
            return forward_names.get(node, node.name)
        name = spec.target or node.name
        if not _is_tensor_input(node.meta.get("val")):  # a counter, not math
            return Unavailable(f"buffer '{name}' (a counter)")
        return name

    names = {node.name: name for node, name in forward_names.items()}
    return translate(
        exported.graph,
        graph_name,
        input_name,
        defined_at,
        sizes,
        _user_outputs(exported, graph_name, names),
    )


def _user_outputs(
    exported: Any, graph_name: str, names: dict[str, str]
) -> list[bool | str]:
    """What each of the exported graph's outputs is: True for the forward's
    own, the placeholder's name for the new value of an input or buffer it
    writes in place (the graph updates that input: `copy_`), False for a
    step counter's update (state, not math)."""
    from torch.export.graph_signature import OutputKind

    input_specs = exported.graph_signature.input_specs
    placeholders = [n for n in exported.graph.nodes if n.op == "placeholder"]
    counters = {
        spec.target
        for spec, node in zip(input_specs, placeholders, strict=True)
        if not _is_tensor_input(node.meta.get("val"))
    }
    placeholder_of = {
        spec.target or spec.arg.name: spec.arg.name for spec in input_specs
    }
    kept: list[bool | str] = []
    for spec in exported.graph_signature.output_specs:
        if spec.kind == OutputKind.USER_OUTPUT:
            kept.append(True)
        elif spec.kind == OutputKind.BUFFER_MUTATION and spec.target in counters:
            kept.append(False)
        elif spec.kind in (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION):
            kept.append(placeholder_of.get(spec.target, spec.target))
        else:
            raise UnsupportedError(
                f"from_torch: {graph_name} writes {spec.kind.name.lower()} "
                f"'{names.get(spec.target, spec.target)}'; Molten's graphs update "
                "inputs and buffers in place, not parameters or gradients"
            )
    return kept


def translate(
    graph: Any,
    graph_name: str,
    input_name: Callable[[Any], str | Unavailable] = lambda node: node.name,
    defined_at: str = "",
    sizes: dict[str, str] | None = None,
    kept: list[bool | str] | None = None,
) -> DataflowGraph:
    """The DataflowGraph of an FX graph of ATen ops (torch.export's, or a
    part of one): each placeholder an input named by `input_name` (or a
    value the graph does not compute), each op by its entry of ATEN_OPS,
    the outputs in order (those `kept` says, where it is given: an entry
    naming a placeholder is that input's new value, written in place)."""
    g = DataflowGraph(graph_name)
    values: dict[Any, Any] = {}
    placeholders: dict[str, Any] = {}
    for node in graph.nodes:
        if node.op == "placeholder":
            placeholders[node.name] = node
            name = input_name(node)
            values[node] = (
                name
                if isinstance(name, Unavailable)
                else _input(g, node, name, sizes or {})
            )
        elif node.op == "call_function":
            values[node] = _call(g, node, values, defined_at)
        elif node.op == "output":
            results = node.args[0]
            results = results if isinstance(results, list | tuple) else [results]
            for i, out in enumerate(results):
                role = True if kept is None else kept[i]
                if role is False:
                    continue
                result = _materialized(g, values.get(out))
                if not isinstance(result, Tensor):
                    raise UnsupportedError(
                        f"from_torch: output {i} of {graph_name} is not a tensor "
                        f"Molten computes ({out})"
                    )
                if role is True:
                    g.add_output(result, out.name)
                    continue
                written = values.get(placeholders.get(role))
                if not isinstance(written, Tensor):
                    raise UnsupportedError(
                        f"from_torch: {graph_name} writes '{role}' in place, which "
                        "is not one of its tensor inputs"
                    )
                g.copy_(written, result)
        else:
            raise UnsupportedError(
                f"from_torch: {node.op} {node.target} in {graph_name} is not an "
                "ATen op; Molten translates graphs of ATen ops"
            )
    return g


def _materialized(g: DataflowGraph, value: Any) -> Any:
    """`value` with each `Concatenated` in it computed (`concat`)."""
    if isinstance(value, Concatenated):
        return g.concat(list(value.parts), value.axis)
    if isinstance(value, list | tuple):
        return type(value)(_materialized(g, v) for v in value)
    return value


def takes(node: Any) -> bool:
    """Whether Molten takes this FX node into a part (the backend's
    partitioner asks): an ATen op of ATEN_OPS."""
    return node.op == "call_function" and str(node.target) in ATEN_OPS


def _is_tensor_input(value: Any) -> bool:
    """Whether a buffer is a tensor the graph takes: of a Molten dtype, and
    not an integer of no dimensions (a step counter, as batch norm's)."""
    if str(getattr(value, "dtype", None)) not in DTYPES:
        return False
    return value.dim() > 0 or value.is_floating_point()


def _input(g: DataflowGraph, node: Any, name: str, sizes: dict[str, str]) -> Tensor:
    value = node.meta.get("val")
    dtype = DTYPES.get(str(getattr(value, "dtype", None)))
    if dtype is None:
        raise UnsupportedError(
            f"from_torch: input '{name}' is "
            f"{getattr(value, 'dtype', type(value).__name__)}; Molten takes tensors "
            f"of {', '.join(DTYPES)}"
        )
    dims: list[int | str] = []
    for d in value.shape:
        if isinstance(d, int):
            dims.append(d)
        elif str(d) in sizes:
            dims.append(sizes[str(d)])
        else:
            raise UnsupportedError(
                f"from_torch: input '{name}' has a size {d} torch.export made "
                "symbolic that `dynamic` does not name"
            )
    return g.add_input(name, dims, dtype)


def _call(g: DataflowGraph, node: Any, values: dict[Any, Any], defined_at: str) -> Any:
    target = str(node.target)
    where = lambda: defined_at or source_line(node)  # noqa: E731 (errors only)
    if node.target is operator.getitem:  # one result of an op of several
        return values[node.args[0]][node.args[1]]
    if _updates_state(node, values):
        return None
    handler = ATEN_OPS.get(target)
    if handler is None:
        raise UnsupportedError(
            f"from_torch: {target} in {where()} is not supported by Molten yet"
        )

    def value_of(arg: Any) -> Any:
        if isinstance(arg, list | tuple):
            return type(arg)(value_of(a) for a in arg)
        return values[arg] if hasattr(arg, "op") and arg in values else arg

    args = [value_of(a) for a in node.args]
    kwargs = {k: value_of(v) for k, v in node.kwargs.items()}
    for arg in (*args, *kwargs.values()):
        if isinstance(arg, Unavailable):
            raise UnsupportedError(
                f"from_torch: {target} in {where()} reads {arg.what}, which Molten "
                "does not compute"
            )
    if target not in CONCAT_READERS:
        args = [_materialized(g, a) for a in args]
        kwargs = {k: _materialized(g, v) for k, v in kwargs.items()}
    try:
        return handler(g, *args, **kwargs)
    except MoltenError as error:
        raise type(error)(f"from_torch: {target} in {where()}: {error}") from None


def _updates_state(node: Any, values: dict[Any, Any]) -> bool:
    """Whether `node` is an in-place update of a value the graph does not
    compute (BatchNorm's `num_batches_tracked += 1`) that nothing reads:
    module state outside the math, which the graph leaves alone."""
    return (
        _in_place(node)
        and not node.users
        and bool(node.args)
        and isinstance(values.get(node.args[0]), Unavailable)
    )


def source_line(node: Any) -> str:
    """Where the user's code called `node`'s op: the last frame of its
    stack trace outside torch and Molten, as "file:line (code)"."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in \S+\n\s*(.*)', trace)
    libraries = [
        str(Path(module.__file__).parent)
        for module in (sys.modules["torch"], sys.modules["molten"])
        if module.__file__
    ]
    for path, line, code in reversed(frames):
        if not any(path.startswith(library) for library in libraries):
            return f"{path}:{line} ({code.strip()})"
    return f"graph node %{node.name}"
