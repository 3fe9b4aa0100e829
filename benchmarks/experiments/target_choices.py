"""Experiment: where an H200's facts and an H100's give different schedules
(the GEMV-or-wgmma estimate of x @ w.T at 2 to 4 rows, which reads the copy
bandwidth), both kernels timed on the GPU at hand beside cuBLAS (checked
against cuBLAS first; L2 flushed, medians: benchmarks.timing). Not a harness
result: it checks that the target's facts pick the faster kernel there.

    PYTHONPATH=. python benchmarks/experiments/target_choices.py
"""

import torch

import molten
from benchmarks.experiments.linear import LinearCase, checked_us
from benchmarks.timing import Timer
from molten.dialects import kernel

SHAPES = [  # (M, N, K): x @ w.T at 2 to 4 rows of layers' widths (Llama-3-8B,
    # Qwen2.5-7B), where the targets "h100" and "h200" picked apart by the
    # estimate before GEMV_ROW_BYTES_PER_S (2026-12-01), or still do
    (2, 6144, 14336),
    (3, 4096, 14336),
    (4, 2048, 18944),
    (4, 6144, 3584),
    (4, 6144, 4096),
    (3, 6144, 4096),
]
TARGETS = ("h100", "h200")


def kind(schedule: kernel.ScheduleAttr) -> str:
    if schedule.k_lanes.data > 1:
        return "GEMV"
    tile = "x".join(str(t.data) for t in schedule.tile.data[:2])
    persistent = " persistent" if schedule.persistent.data else ""
    return f"wgmma {tile} split {schedule.split.data}{persistent}"


def main() -> None:
    timer = Timer(torch.device("cuda"))
    print(f"device: {torch.cuda.get_device_name()}")
    for m, n, k in SHAPES:
        case = LinearCase.of(timer, m, n, k)
        line = [f"{m}x{n}x{k}: cuBLAS {case.cublas_us:6.1f} us"]
        for name in TARGETS:
            compiled = molten.ZeroCompiler(target=name).compile(case.graph)
            schedule = molten.ZeroCompiler(target=name).optimize(case.graph)
            (picked,) = [
                op.schedule for op in schedule.walk() if isinstance(op, kernel.FuncOp)
            ]
            us = checked_us(timer, compiled, case.x, case.w, case.ref)
            shown = us if isinstance(us, str) else f"{us:6.1f} us"
            line.append(f"{name} facts: {kind(picked)} {shown}")
        print("; ".join(line), flush=True)


if __name__ == "__main__":
    main()
