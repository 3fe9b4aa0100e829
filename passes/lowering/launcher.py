"""The host launcher: the graph's func.func becomes a cuda.host_func that
launches its kernels in order, with buffers for values passed between
them, scratch buffers a kernel asks for, and copies for outputs that are
inputs or returned twice. A graph split by size class (split-size-classes)
becomes one launcher of all its copies' launches, each run where its copy's
range (and its variant's class) holds the size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, SymbolRefAttr, i64
from xdsl.ir import Block, Region, SSAValue

from molten.conventions import graph_updates, input_name, output_name, sanitize_name
from molten.dialects import cuda, kernel, molten
from molten.dialects.molten import (
    SizeRangeAttr,
    graph_name,
    size_range_of,
    split_dims,
    value_dims,
)
from molten.errors import GraphError, StaticShapeNeeded, UnsupportedError
from molten.passes.lowering.emitter import INDEX, element_of
from molten.passes.lowering.kernels import (
    GridOf,
    LoweredKernel,
    SizeRange,
    pointer_type,
    size_names,
)


def _extent(value: SSAValue, sizes: dict[str, SSAValue]) -> tuple[int, list[SSAValue]]:
    """A tensor's element count: its static part and the launcher's sizes of
    its named dimensions."""
    static, named = split_dims(value_dims(value))
    return static, [sizes[d] for d in named]


def lower_graph(
    copies: list[func.FuncOp], kernels: dict[str, list[LoweredKernel]]
) -> cuda.HostFuncOp:
    """The launcher of a graph: one `func.func`, or its copies by size
    class (split-size-classes), each copy's launches run where its range
    holds the size."""
    graph = copies[0]
    name = graph_name(graph)
    block = graph.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    returned = list(ret.arguments)
    if not returned:
        raise GraphError(
            f"lower-kernel-to-cuda: @{name} returns nothing; a "
            "graph must return at least one tensor for Molten to compute"
        )
    updates = graph_updates(graph)
    # An output that updates an input in place has no pointer of its own.
    written = [v for i, v in enumerate(returned) if i not in updates]
    names = [input_name(graph, i) or f"in{i}" for i in range(len(block.args))]
    out_names = [
        output_name(graph, i) or value.name_hint or f"out{i}"
        for i, value in enumerate(returned)
        if i not in updates
    ]
    params = [pointer_type(a) for a in block.args] + [pointer_type(v) for v in written]
    dims = size_names([*block.args, *written])
    params += [INDEX] * len(dims)
    entry = Block(arg_types=params)
    param_names = [sanitize_name(name) for name in [*names, *out_names, *dims]]
    for arg, param in zip(entry.args, param_names, strict=True):
        arg.name_hint = param
    sizes = dict(zip(dims, entry.args[len(entry.args) - len(dims) :], strict=True))
    output_args = iter(entry.args[len(block.args) : len(block.args) + len(written)])
    outputs: list[SSAValue | int] = [
        updates[i] if i in updates else next(output_args) for i in range(len(returned))
    ]
    copied: dict[tuple[SSAValue, SSAValue], SSAValue] = {}
    temporaries: list[SSAValue] = []
    for copy in copies:
        # A copy's buffers are freed before the next copy's: only one copy
        # runs, so they may take the same memory.
        for buffer in temporaries:
            entry.add_op(cuda.FreeOp(buffer))
        temporaries = []
        _lower_copy(copy, kernels, entry, sizes, outputs, copied, temporaries)
    for (target, source), value in copied.items():
        entry.add_op(cuda.CopyOp(target, source, *_extent(value, sizes)))
    for buffer in temporaries:
        entry.add_op(cuda.FreeOp(buffer))
    entry.add_op(cuda.ReturnOp())
    # The names go in the op only where SSA names lost part of them.
    exact = all(a.name_hint == n for a, n in zip(entry.args, param_names, strict=True))
    return cuda.HostFuncOp(
        name,
        params,
        len(written),
        Region(entry),
        None if exact else param_names,
        [value_dims(a) for a in block.args] + [value_dims(v) for v in written],
        dims,
        sorted(updates.values()),
    )


def _lower_copy(
    graph: func.FuncOp,
    kernels: dict[str, list[LoweredKernel]],
    entry: Block,
    sizes: dict[str, SSAValue],
    outputs: Sequence[SSAValue | int],
    copied: dict[tuple[SSAValue, SSAValue], SSAValue],
    temporaries: list[SSAValue],
) -> None:
    """Adds to the launcher `entry` the buffers and launches of `graph` (a
    copy by size class: launched only where its range holds the size), and
    to `copied` the copies of its outputs that are inputs or returned
    twice, then those into inputs updated in place (the same in every copy
    of a graph: each copy once). `outputs` holds each output's pointer, or
    the position of the input it updates."""
    block = graph.body.block
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    buffers: dict[SSAValue, SSAValue] = dict(zip(block.args, entry.args, strict=False))
    # An output that is an input, or a value returned again, is copied into
    # its output buffer after the kernels.
    updated: list[tuple[SSAValue, int]] = []
    for value, arg in zip(ret.arguments, outputs, strict=True):
        if isinstance(arg, int):
            updated.append((value, arg))
        elif value in buffers:
            copied.setdefault((arg, buffers[value]), value)
        else:
            buffers[value] = arg
    # Memory a kernel may write over once nothing reads its value again:
    # the launcher's own buffers, and inputs the graph updates in place.
    reusable = set(temporaries) | {entry.args[p] for _, p in updated}
    order = {op: i for i, op in enumerate(block.ops)}
    copy_range = size_range_of(graph)
    for op in block.ops:
        if isinstance(op, func.ReturnOp):
            break
        if isinstance(op, molten.MoltenOp):  # no fusion pass takes it
            typed = op.operands or op.results
            raise UnsupportedError(
                f"lower-kernel-to-cuda: {op.name} "
                f"{'of ' if op.operands else 'giving '}"
                f"{', '.join(str(v.type) for v in typed)} is not lowered to "
                "CUDA yet: no kernel computes it (the interpreter, molten.interpret, "
                "runs it)"
            )
        if not isinstance(op, kernel.LaunchOp):
            raise NotImplementedError(
                f"lower-kernel-to-cuda: {op.name} at the graph level; run the "
                "fusion passes and kernel-outline first"
            )
        lowered_kernels = kernels[op.callee.string_value()]
        for out, inp in lowered_kernels[0].starts_as:
            # A scatter writes into its input's memory where that input is
            # read by nothing after it: no copy.
            result, start = op.results[out], op.inputs[inp]
            if (
                result not in buffers
                and buffers[start] in reusable
                and not any(lowered.reads_start for lowered in lowered_kernels)
                and all(order[use.operation] <= order[op] for use in start.uses)
            ):
                buffers[result] = buffers[start]
        for result in op.results:
            if result not in buffers:
                alloc = cuda.AllocOp(element_of(result), *_extent(result, sizes))
                alloc.result.name_hint = result.name_hint
                entry.add_op(alloc)
                buffers[result] = alloc.result
                temporaries.append(alloc.result)
                reusable.add(alloc.result)
        for out, inp in lowered_kernels[0].starts_as:
            target, source = buffers[op.results[out]], buffers[op.inputs[inp]]
            if target is not source:
                extent = _extent(op.results[out], sizes)
                entry.add_op(cuda.CopyOp(target, source, *extent))
        for lowered in lowered_kernels:
            when = _within(lowered, copy_range)
            if when is not False:
                entry.add_op(
                    _launch(op, lowered, buffers, sizes, entry, temporaries, when)
                )
    # An input updated by a value computed elsewhere takes it at the end,
    # after every kernel that reads the input's old values.
    for value, position in updated:
        if buffers[value] is not entry.args[position]:
            copied.setdefault((entry.args[position], buffers[value]), value)


def _within(
    lowered: LoweredKernel, copy_range: SizeRangeAttr | None
) -> SizeRange | None | Literal[False]:
    """The sizes `lowered` runs at in a graph copy of `copy_range`: its
    variant's, within the copy's (None: any; False: none)."""
    if copy_range is None:
        return lowered.when
    dim = copy_range.dim.data
    if lowered.when is None:
        return SizeRange(dim, copy_range.least.data, copy_range.most.data)
    if lowered.when.dim != dim:
        raise StaticShapeNeeded(
            f"lower-kernel-to-cuda: @{lowered.op.sym_name.data} chooses its "
            f"variant by {lowered.when.dim} in a copy of its graph for a range "
            f"of {dim}; give the size of one of them"
        )
    both = copy_range.meet(lowered.when.least, lowered.when.most)
    return False if both is None else SizeRange(dim, *both)


def _launch(
    op: kernel.LaunchOp,
    lowered: LoweredKernel,
    buffers: dict[SSAValue, SSAValue],
    sizes: dict[str, SSAValue],
    entry: Block,
    temporaries: list[SSAValue],
    when: SizeRange | None,
) -> cuda.LaunchOp:
    """The launch of `lowered` (the kernel of `op`, or one of its variants),
    after the tensor maps and scratch buffers it takes, at the sizes `when`
    (None: any)."""
    args = [buffers[v] for v in (*op.inputs, *op.results)]
    pointers = len(args)
    kernel_dims = size_names([*op.inputs, *op.results])
    args += [sizes[d] for d in kernel_dims]
    for spec in lowered.tensor_maps:
        rows, cols = spec.shape
        tensor_map = cuda.MakeTensorMapOp(
            buffers[op.inputs[spec.operand]],
            (1, cols) if isinstance(rows, str) else spec.shape,
            spec.box,
            sizes[rows] if isinstance(rows, str) else None,
        )
        tensor_map.result.name_hint = "tensor_map"
        entry.add_op(tensor_map)
        args.append(tensor_map.result)
    for buffer in lowered.scratch:
        alloc = cuda.AllocOp(buffer.element, buffer.size)
        alloc.result.name_hint = buffer.name
        entry.add_op(alloc)
        if buffer.zeroed:
            entry.add_op(cuda.ZeroOp(alloc.result, buffer.size, buffer.restored))
        args.append(alloc.result)
        temporaries.append(alloc.result)
    launch = cuda.LaunchOp(lowered.op.sym_name.data, lowered.grid, lowered.block, args)
    if when is not None:
        dim, least, most = when
        launch.when = DenseArrayBase.from_list(
            i64, [pointers + kernel_dims.index(dim), least, most]
        )
    if lowered.cooperative is not None:
        launch.cooperative = DenseArrayBase.from_list(i64, [lowered.cooperative])
    if lowered.grid_of is not None:
        positions = [pointers + kernel_dims.index(d) for d in lowered.grid_of.dims]
        launch.grid_of = DenseArrayBase.from_list(i64, positions)
        launch.grid_scale = _grid_scale(lowered.grid_of)
    if lowered.fallback is not None:
        fallback = lowered.fallback
        launch.aligned = DenseArrayBase.from_list(i64, list(lowered.aligned))
        launch.fallback = SymbolRefAttr(fallback.op.sym_name.data)
        if (fallback.grid, fallback.block, fallback.grid_of) != (
            lowered.grid,
            lowered.block,
            lowered.grid_of,
        ):
            launch.fallback_grid = DenseArrayBase.from_list(i64, fallback.grid)
            launch.fallback_block = DenseArrayBase.from_list(i64, fallback.block)
            if fallback.grid_of is not None:
                if (
                    lowered.grid_of is None
                    or fallback.grid_of.dims != lowered.grid_of.dims
                ):
                    raise StaticShapeNeeded(
                        f"lower-kernel-to-cuda: @{fallback.op.sym_name.data}'s grid "
                        "grows with sizes other than its kernel's"
                    )
                launch.fallback_scale = _grid_scale(fallback.grid_of)
    return launch


def _grid_scale(grid_of: GridOf) -> DenseArrayBase:
    """`cuda.launch`'s `scale` of a grid computed from sizes: [scale,
    divisor], with [times, axis] after where either is not the default."""
    scale = [grid_of.scale, grid_of.divisor]
    if (grid_of.times, grid_of.axis) != (1, 0):
        scale += [grid_of.times, grid_of.axis]
    return DenseArrayBase.from_list(i64, scale)
