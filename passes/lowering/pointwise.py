"""`pointwise` kernels: a grid-stride loop over runs of `vector` consecutive
elements of the kernel's iteration domain.
"""

from __future__ import annotations

from xdsl.dialects import scf

from molten.dialects import kernel
from molten.passes.lowering.emitter import unravel_vector
from molten.passes.lowering.evaluator import Evaluator
from molten.passes.lowering.kernels import (
    KernelShell,
    Launch,
    LoweredKernel,
    checked_vector_width,
    grid_for,
    grid_stride_loop,
    store_output,
)


def lower_pointwise(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr
) -> LoweredKernel:
    """A grid-stride loop over runs of `vector` consecutive elements, on a
    grid that gives each thread about `elements_per_thread` elements."""
    shell = KernelShell.of(kfunc)
    e, pointers = shell.e, shell.pointers
    outputs, out_ptrs = shell.outputs, shell.out_ptrs
    domain = kernel.iteration_domain(outputs)
    block = schedule.block.data
    width = checked_vector_width(kfunc, schedule, domain[-1] if domain else 1)
    # The grid gives each thread about elements_per_thread elements in all.
    runs = e.idiv(e.count(domain), width)  # width divides the innermost size
    runs_per_thread = max(1, schedule.elements_per_thread.data // width)
    grid, grid_of = grid_for(domain, block * runs_per_thread, width)

    body, loop_block = grid_stride_loop(e, runs)
    ev = Evaluator(body, pointers)
    base = body.imul(loop_block.args[0], width)
    for index in unravel_vector(body, base, domain, width):
        for value, ptr in zip(outputs, out_ptrs, strict=True):
            store_output(ev, value, ptr, index, domain)
    loop_block.add_op(scf.YieldOp())
    return shell.finish(Launch((grid, 1, 1), block, grid_of))
