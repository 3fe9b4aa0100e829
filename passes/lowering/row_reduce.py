"""`row_reduce` kernels: rows of the reduced axes, several a block, a block
each, or split across a group of blocks, as the schedule says.
"""

from __future__ import annotations

import math
from dataclasses import replace

from xdsl.dialects import arith, scf
from xdsl.dialects import math as mathd
from xdsl.ir import Block, Region, SSAValue

from molten.dialects import cuda, kernel, molten
from molten.dialects.molten import value_dims
from molten.errors import StaticShapeNeeded
from molten.passes.lowering.emitter import (
    F32,
    INDEX,
    MAX_GRID_X,
    WARP,
    Emitter,
    Index,
    close_if,
    emit_for,
    emit_if,
    ravel,
    unravel,
    unravel_vector,
)
from molten.passes.lowering.evaluator import Evaluator
from molten.passes.lowering.kernels import (
    GridOf,
    KernelShell,
    Launch,
    LoweredKernel,
    Scratch,
    checked_vector_width,
    row_loop,
    store_scalar,
)
from molten.passes.lowering.reductions import Accumulator, block_reduce
from molten.passes.lowering.split_row import (
    SplitRow,
    Staged,
    exchange_row_values,
    exchange_stages,
    row_value,
)


def lower_row_reduce(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr
) -> LoweredKernel:
    """Rows of the reduced axes: `lanes` = block / rows_per_block threads per
    row (a power of two up to a warp when a block has several rows), or
    `split` blocks per row, each with a part of it. A thread holds its
    elements of the row in registers when lanes * elements_per_thread
    covers its part, and walks the part once per pass otherwise.

    Strided rows (axes after the reduced ones, `inner`) are numbered with
    the inner axes fastest, so with a thread a row (lanes = 1) the threads
    of a warp load consecutive elements of each column."""
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    outputs, out_ptrs = shell.outputs, shell.out_ptrs
    name = f"@{kfunc.sym_name.data}"
    body_ops = list(kfunc.body.block.ops)
    reductions = [op for op in body_ops if isinstance(op, molten.ReductionOp)]
    full = value_dims(reductions[0].input)
    axes = sorted(reductions[0].axes.get_values())
    k, first_axis = len(axes), axes[0]
    outer, col_shape = full[:first_axis], full[first_axis : first_axis + k]
    inner = full[first_axis + k :]
    row_shape = (*outer, *inner)
    if any(isinstance(d, str) for d in col_shape):
        raise StaticShapeNeeded(
            f"lower-kernel-to-cuda: {name} reduces over a named dimension "
            f"({', '.join(d for d in col_shape if isinstance(d, str))}); rows of a "
            "size known at run time only are not lowered yet"
        )
    n = math.prod(col_shape)
    rows = e.count(row_shape)
    block = schedule.block.data
    rows_per_block = schedule.rows_per_block.data
    split = schedule.split.data
    lanes = block // rows_per_block
    if block % WARP:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s row_reduce block of {block} threads is "
            "not a multiple of 32"
        )
    if rows_per_block > 1 and (lanes > WARP or lanes & (lanes - 1)):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s schedule gives {lanes} threads to each "
            f"of {rows_per_block} rows per block; several rows per block take a "
            "power of two of threads each, at most 32"
        )
    if split > 1 and rows_per_block > 1:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s schedule splits rows across blocks "
            "and puts several rows in a block"
        )
    if inner and (lanes > 1 or split > 1 or schedule.vector.data > 1):
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name} reduces strided rows (axes follow the "
            "reduced ones), which take a thread a row and vector = 1; its schedule "
            f"gives {lanes} threads a row, split {split}, vector "
            f"{schedule.vector.data}"
        )
    width = checked_vector_width(kfunc, schedule, col_shape[-1])
    ept = schedule.elements_per_thread.data
    chunk = width * math.ceil(n / (split * width))  # columns of a part
    if (split - 1) * chunk >= n:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: {name}'s schedule splits rows of {n} elements "
            f"into {split} parts, which leaves a part empty"
        )
    shortest = n - (split - 1) * chunk  # the last part's columns
    span = lanes * width  # columns covered by one run of `width` per thread
    cached = lanes * ept >= chunk

    tid = e.add(cuda.ThreadIdxOp())
    bid = e.add(cuda.BlockIdxOp())
    gdim = e.add(cuda.GridDimOp())
    lane: Index = tid if rows_per_block == 1 else e.irem(tid, lanes)
    split_row: SplitRow | None = None
    stages = [[Staged(op)] for op in reductions]
    group: Index = bid
    part: Index = 0
    row_valid: SSAValue | None = None
    grid_of: GridOf | None = None
    if split > 1:
        # Blocks come in groups of `split`, one group per row at a time.
        if not isinstance(rows, int):
            raise StaticShapeNeeded(
                f"lower-kernel-to-cuda: {name}'s schedule splits rows across "
                "blocks, and its number of rows is known at run time only"
            )
        if rows * split > MAX_GRID_X:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: {name}: {rows} rows of {split} blocks each"
            )
        stages = exchange_stages(reductions)
        slots = max(len(stage) for stage in stages)
        # A counter per group, and two sets of `slots` x `split` partial
        # results per group (one exchange's and the next's); there are at
        # most `rows` groups. Only the counters must start at zero.
        # Partial totals in each accumulation's type (f32, int64 keys, ...).
        types = list(dict.fromkeys(Accumulator.of(op).type for op in reductions))
        scratch = (
            Scratch("group_counters", cuda.COUNTER_TYPE, rows, True),
            *(
                Scratch(_partials_name(t), t, 2 * rows * split * slots, False)
                for t in types
            ),
        )
        counters, *buffers = shell.scratch(scratch)
        partials = dict(zip(types, buffers, strict=True))
        group, part = e.idiv(bid, split), e.irem(bid, split)
        group.name_hint, part.name_hint = "group", "part"
        split_row = SplitRow(
            counters, partials, group, part, split, chunk, shortest, slots
        )
        groups = e.add(arith.DivSIOp(gdim, e.index(split)))
        grid = rows * split
        rb, row_block = emit_for(e, group, rows, groups)
        row = row_block.args[0]
        row.name_hint = "row"
        iteration = rb.add(arith.DivSIOp(rb.index(rb.isub(row, group)), groups))
    else:
        loop = row_loop(e, row_shape, rows, rows_per_block, lanes, tid, bid, gdim)
        rb, row_block, row, row_valid, grid, grid_of = loop
    row_index = unravel(rb, row, row_shape)

    def element(col: list[Index]) -> list[Index]:
        """The index of column `col` (an index of the reduced axes) of the row."""
        return [*row_index[:first_axis], *col, *row_index[first_axis:]]

    per_row = element([0] * k)
    row_value_shape = (*outer, *(1,) * k, *inner)
    ev = Evaluator(rb, pointers)
    first = rb.imul(part, chunk)
    end: Index = n if split == 1 else rb.imin(rb.iadd(first, chunk), n)
    start = rb.iadd(first, rb.imul(lane, width))  # the thread's first column

    def run(em: Emitter, j: Index) -> list[tuple[tuple[Index, int], list[Index]]]:
        """The columns (j + c) and indices of the `width` elements from
        column `j` of the row."""
        cols = unravel_vector(em, j, col_shape, width)
        return [((j, c), element(col)) for c, col in enumerate(cols)]

    # Runs of a cached part: thread t holds columns first + t * width + c *
    # span, ... (width of them each). Where a run may pass the part's end,
    # the threads past it read the part's last run instead (width divides
    # the part) and discard it. Each run's indices are built once, so that
    # its values are loaded once.
    runs: list[tuple[list[tuple[tuple[Index, int], list[Index]]], SSAValue | None]] = []
    if cached:
        for c in range(math.ceil(chunk / span)):
            j = rb.iadd(start, c * span)
            if isinstance(j, SSAValue):
                j.name_hint = "col"
            if (c + 1) * span <= shortest:
                runs.append((run(rb, j), None))
            else:
                valid = rb.icmp(j, end, "slt")
                runs.append((run(rb, rb.imin(j, rb.isub(end, width))), valid))

    def block_total(evaluator: Evaluator, op: molten.ReductionOp) -> SSAValue:
        """The block's total of `op` over its lanes' elements of the part."""
        accumulator = Accumulator.of(op)
        name = f"{op.results[0].name_hint or 'reduction'}_acc"

        def named(state: list[SSAValue]) -> list[SSAValue]:
            state[0].name_hint = name
            return state

        if cached:
            # The first element starts the state (no identity, which only
            # stands in for runs past the part's end; a position needs none).
            state: list[SSAValue] | None = None
            for columns, valid in runs:
                if accumulator.idempotent:
                    valid = None
                for (j, c), index in columns:
                    value = evaluator.at(op.input, index)
                    column = rb.iadd(j, c) if accumulator.positional else 0
                    if state is None and valid is None:
                        state = accumulator.local_first(rb, value, column)
                        continue
                    if state is None:
                        state = accumulator.local_identity(rb)
                    stepped = accumulator.local_step(rb, state, value, column)
                    if valid is not None:
                        stepped = [
                            rb.select(valid, new, old)
                            for new, old in zip(stepped, state, strict=True)
                        ]
                    state = named(stepped)
            assert state is not None
        else:
            first_run: Index = start
            if accumulator.idempotent:
                # The thread's first run, or the part's last where the thread
                # has none, starts the state; the loop takes the rest.
                first_run = rb.imin(start, rb.isub(end, width))
                state = []
                for (j, c), index in run(rb, first_run):
                    value = evaluator.at(op.input, index)
                    column = rb.iadd(j, c)
                    state = (
                        accumulator.local_first(rb, value, column)
                        if not state
                        else accumulator.local_step(rb, state, value, column)
                    )
                begin = rb.iadd(start, span)
            else:
                state, begin = accumulator.local_identity(rb), start
            loop_body = Block(arg_types=[INDEX, *accumulator.local_types])
            loop = scf.ForOp(
                rb.index(begin), rb.index(end), rb.index(span), state, Region(loop_body)
            )
            rb.block.add_op(loop)
            inner = rb.nested(loop_body)
            scoped = evaluator.scoped(inner)
            partial = list(loop_body.args[1:])
            for (j, c), index in run(inner, loop_body.args[0]):
                value = scoped.at(op.input, index)
                column = inner.iadd(j, c) if accumulator.positional else 0
                partial = accumulator.local_step(inner, partial, value, column)
            loop_body.add_op(scf.YieldOp(*partial))
            state = named(list(loop.results))
        return block_reduce(rb, accumulator, accumulator.finish(rb, state), tid, lanes)

    for s, stage in enumerate(stages):
        rebased = any(staged.rule is not None for staged in stage)
        # A rebased reduction is taken with its block's own value of its
        # shift; the row's values are defined after the exchange.
        local = ev.scoped(rb) if rebased else ev
        totals = []
        local_values: dict[molten.ReductionOp, SSAValue] = {}
        for staged in stage:
            totals.append(block_total(local, staged.op))
            if local is not ev:
                assert split_row is not None
                value = row_value(
                    rb,
                    staged.op,
                    totals[-1],
                    lambda: split_row.inverse_count(rb, part),
                )
                local.define(staged.op.results[0], per_row, value)
                local_values[staged.op] = value
        if split_row is not None:
            exchange = rb.iadd(rb.imul(iteration, len(stages)), s)
            values = exchange_row_values(rb, stage, totals, split_row, tid, exchange, n)
        else:
            values = [
                row_value(rb, staged.op, total, lambda: rb.f32(1.0 / n))
                for staged, total in zip(stage, totals, strict=True)
            ]
        row_values = {}
        for staged, value in zip(stage, values, strict=True):
            row_values[staged.op] = value
            ev.define(staged.op.results[0], per_row, value)
        if local is ev:
            continue
        # The inputs' loads are kept: the outputs read them again. So are the
        # exponentials of the online softmax, rescaled to the row's maximum:
        # exp(x - c_b) * exp(c_b - C) (none where the part is all -inf).
        rescaled = {}
        for staged in stage:
            if staged.rule != "exp":
                continue
            assert staged.shift is not None
            shift_local = local_values[staged.shift]
            delta = rb.add(arith.SubfOp(shift_local, row_values[staged.shift]))
            empty = rb.add(arith.CmpfOp(shift_local, rb.f32(-math.inf), "oeq"))
            rescaled[staged.op.input] = (rb.add(mathd.ExpOp(delta)), empty)
        for key, scalar in local.known.items():
            if key in ev.known:
                continue
            if key[0] in pointers:
                ev.known[key] = scalar
            elif key[0] in rescaled:
                factor, empty = rescaled[key[0]]
                scaled = rb.add(arith.MulfOp(scalar, factor))
                ev.known[key] = rb.select(empty, rb.f32(0.0), scaled)

    sb = rb if row_valid is None else emit_if(rb, row_valid)
    stores = ev if row_valid is None else ev.scoped(sb)
    for value, ptr in zip(outputs, out_ptrs, strict=True):
        shape = value_dims(value)
        if shape == full:
            if cached:
                for columns, valid in runs:
                    target = sb if valid is None else emit_if(sb, valid)
                    scoped = stores if valid is None else stores.scoped(target)
                    for _, index in columns:
                        scalar = scoped.at(value, index)
                        store_scalar(scoped, scalar, ptr, ravel(target, index, full))
                    if valid is not None:
                        close_if(target)
            else:
                lb, loop_block = emit_for(sb, start, end, span)
                scoped = stores.scoped(lb)
                for _, index in run(lb, loop_block.args[0]):
                    scalar = scoped.at(value, index)
                    store_scalar(scoped, scalar, ptr, ravel(lb, index, full))
                loop_block.add_op(scf.YieldOp())
        elif shape == row_value_shape or _views_row_values(value, row_value_shape):
            # A view of the row values (without keepdim) is stored in their
            # order, at the row's own offset.
            source = value if shape == row_value_shape else value.owner.operands[0]
            scalar = stores.at(source, per_row)
            offset = ravel(sb, per_row, row_value_shape)
            if lanes == 1 and split == 1:  # a thread a row: it stores its own
                store_scalar(stores, scalar, ptr, offset)
                continue
            leader = sb.icmp(lane, 0, "eq")
            if split > 1:
                first_part = sb.icmp(part, 0, "eq")
                leader = sb.add(arith.AndIOp(leader, first_part))
            inner = emit_if(sb, leader)
            store_scalar(stores.scoped(inner), scalar, ptr, offset)
            close_if(inner)
        else:
            raise NotImplementedError(
                f"lower-kernel-to-cuda: a row_reduce output of shape {shape} "
                f"(neither the row shape {full} nor one value per row)"
            )
    if row_valid is not None:
        close_if(sb)
    row_block.add_op(scf.YieldOp())
    # The blocks of a split row must be resident together, as many as
    # kernel-schedule counts on.
    resident = kernel.SPLIT_THREADS_PER_SM // block
    min_blocks = resident if split > 1 and resident > 1 else None
    launch = Launch((grid, 1, 1), block, grid_of, min_blocks)
    if split_row is not None:
        launch = replace(launch, cooperative=split, scratch=scratch)
    return shell.finish(launch)


def _views_row_values(value: SSAValue, row_value_shape: tuple) -> bool:
    """Whether `value` is a reshape of a value of one element per row."""
    owner = value.owner
    return isinstance(owner, molten.ReshapeOp) and (
        value_dims(owner.input) == row_value_shape
    )


def _partials_name(t) -> str:
    """The scratch buffer of a split row's partial totals of type `t`."""
    return "group_partials" if t == F32 else f"group_partials_{t}"
