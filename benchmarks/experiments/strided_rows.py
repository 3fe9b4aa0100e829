"""Experiment: schedules of strided rows (a reduction over axis 1 with axes
after it, a thread a row) on KernelBench's RMSNorm over channels
([112, 64, 512, 512] f32) and mean over dim 1 ([128, 4096, 4095]): threads a
block and rows held in registers or walked, by hand schedules, beside
torch.compile. Checked against eager first. L2 flushed, medians. Not a
harness result: only for picking `kernel-schedule`'s strided constants.

    PYTHONPATH=. python benchmarks/experiments/strided_rows.py
"""

import torch

import molten
from benchmarks.timing import Timer
from molten.dialects import kernel
from molten.ir import DataflowGraph


def rms_norm_channels(shape):
    g = DataflowGraph("rms")
    x = g.add_input("x", shape)
    mean_square = g.reduce_mean(g.square(x), 1, keepdim=True)
    g.add_output(x / g.sqrt(mean_square + 1e-5), "y")
    return g, lambda x: x / torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + 1e-5)


def mean_dim1(shape):
    g = DataflowGraph("mean")
    g.add_output(g.reduce_mean(g.add_input("x", shape), 1), "y")
    return g, lambda x: torch.mean(x, dim=1)


def main() -> None:
    timer = Timer(torch.device("cuda"))
    for make, shape, candidates in [
        (
            rms_norm_channels,
            [112, 64, 512, 512],
            [(256, 64), (128, 64), (64, 64), (512, 64), (256, 1), (128, 1)],
        ),
        (mean_dim1, [128, 4096, 4095], [(256, 1), (128, 1), (512, 1), (1024, 1)]),
    ]:
        g, eager = make(shape)
        x = torch.rand(*shape, device="cuda")
        want = eager(x)
        compiled_torch = torch.compile(eager)
        compiled_torch(x)
        base = timer.gpu_time(lambda f=compiled_torch, x=x: f(x)).median
        print(f"{make.__name__} {shape}: torch.compile {base:9.1f} us", flush=True)
        for block, per_thread in candidates:
            schedule = kernel.ScheduleAttr(
                "row_reduce",
                block,
                rows_per_block=block,
                vector=1,
                elements_per_thread=per_thread,
            )
            compiled = molten.ZeroCompiler().compile(
                g, schedules={f"{g.name}_row_reduce0": schedule}
            )
            got = compiled(x)
            error = (got - want).abs().max().item()
            us = timer.gpu_time(lambda f=compiled, x=x: f(x)).median
            print(
                f"  block {block:4} elements {per_thread:3}: {us:9.1f} us "
                f"{base / us:5.2f}x torch.compile (max error {error:.1e})",
                flush=True,
            )


if __name__ == "__main__":
    main()
