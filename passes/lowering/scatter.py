"""`scatter` kernels: a grid-stride loop over the source's elements, each
computed (with the index it goes to) and written into the output where
the index says, or added there atomically (`accumulate`).

The output is never read: the launcher starts it as the scatter's input
(a copy, or the input's own memory where it is updated in place), which
`LoweredKernel.starts_as` tells it. Other outputs of the kernel (a value
of the source's shape used elsewhere too) are stored as a pointwise
kernel stores them.
"""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.ir import BlockArgument

from molten.dialects import cuda, kernel, molten
from molten.dialects.cuda import element_bytes
from molten.dialects.molten import value_dims
from molten.errors import UnsupportedError
from molten.passes.lowering.emitter import (
    close_if,
    element_of,
    emit_if,
    ravel,
    unravel,
)
from molten.passes.lowering.evaluator import Evaluator, checked_position
from molten.passes.lowering.kernels import (
    KernelShell,
    Launch,
    LoweredKernel,
    grid_for,
    grid_stride_loop,
    store_output,
    store_scalar,
    stored_form,
)


def lower_scatter(kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr) -> LoweredKernel:
    """A thread a source element a step; out-of-range indices are skipped
    (stopped at, printed, where MOLTEN_CHECK_INDICES=1 was set)."""
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    (scatter,) = [op for op in kfunc.body.block.ops if isinstance(op, molten.ScatterOp)]
    name = f"@{kfunc.sym_name.data}"
    destination = scatter.input
    if not isinstance(destination, BlockArgument):
        raise UnsupportedError(
            f"lower-kernel-to-cuda: {name}'s scatter writes into a value computed "
            "in the kernel; it must write into one of the kernel's inputs"
        )
    accumulate = scatter.accumulate is not None
    element = element_of(scatter.result)
    if accumulate and element_bytes(element) == 1:
        raise UnsupportedError(
            f"lower-kernel-to-cuda: {name}: a scatter_add into {scatter.result.type} "
            "has no kernel (CUDA adds atomically 16-, 32- and 64-bit elements); "
            "the interpreter runs it"
        )
    out = shell.outputs.index(scatter.result)
    domain = value_dims(scatter.source)
    target_dims = value_dims(scatter.result)
    axis = scatter.axis.value.data

    block = schedule.block.data
    grid, grid_of = grid_for(domain, block)
    body, loop_block = grid_stride_loop(e, e.count(domain))
    ev = Evaluator(body, pointers)
    index = unravel(body, loop_block.args[0], domain)
    raw = ev.at(scatter.indices, index)
    value = ev.at(scatter.source, index)
    position, size = checked_position(ev, scatter, raw, index)
    within = body.add(
        arith.AndIOp(body.icmp(position, 0, "sge"), body.icmp(position, size, "slt"))
    )
    inner = emit_if(body, within)
    target = list(index)
    target[axis] = position
    offset = ravel(inner, target, target_dims)
    ptr = shell.out_ptrs[out]
    if accumulate:
        added = stored_form(inner, value, ptr)
        inner.add(cuda.AtomicAddOp(added, ptr, inner.index(offset)))
    else:
        store_scalar(ev.scoped(inner), value, ptr, offset)
    close_if(inner)
    for value_out, out_ptr in zip(shell.outputs, shell.out_ptrs, strict=True):
        if value_out is not scatter.result:
            store_output(ev, value_out, out_ptr, index, domain)
    loop_block.add_op(scf.YieldOp())
    lowered = shell.finish(Launch((grid, 1, 1), block, grid_of))
    lowered.starts_as = ((out, destination.index),)
    lowered.reads_start = any(
        use.operation is not scatter or use.index != 0 for use in destination.uses
    )
    return lowered
