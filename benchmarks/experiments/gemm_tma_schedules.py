"""Experiment: Molten's persistent TMA gemm (a schedule's `persistent`
blocks) beside the heuristic's schedule and cuBLAS, on x @ w.T (bf16, the
linear layers of Llama-3-8B) at the given token counts; each checked
against cuBLAS first, L2 flushed, medians (benchmarks.timing). Not a
harness result.

    PYTHONPATH=. python benchmarks/experiments/gemm_tma_schedules.py [M ...]
    PYTHONPATH=. python benchmarks/experiments/gemm_tma_schedules.py MxNxK ...

(the first form: M tokens of each of LAYERS' N x K; the second: those
shapes). Split-K variants whose parts would not be equal are left out.
"""

import sys

import torch

import molten
from benchmarks.experiments.linear import checked_us, linear_graph
from benchmarks.timing import Timer
from molten.passes.schedule.common import wgmma_tile_schedule

LAYERS = [(4096, 4096), (14336, 4096), (4096, 14336)]
SHAPES = [
    tuple(int(d) for d in a.split("x")) if "x" in a else (int(a), n, k)
    for a in sys.argv[1:] or ["512", "2048", "8192"]
    for n, k in ([(0, 0)] if "x" in a else LAYERS)
]
TILES = [  # (rows, columns, cluster, split)
    (128, 256, 1, 1),
    (128, 256, 1, 2),
    (128, 256, 1, 3),
    (128, 256, 1, 4),
    (128, 256, 2, 2),
    (128, 192, 1, 1),
    (128, 128, 1, 1),
    (128, 128, 1, 2),
]

STAGES = {256: 4, 192: 5, 128: 6}
"""As many stages as fit 227 KiB of shared memory."""


def main() -> None:
    timer = Timer(torch.device("cuda"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5
        ref = x @ w.T
        cublas = timer.gpu_time(lambda x=x, w=w: x @ w.T).median
        flops = 2 * m * n * k
        print(f"{m}x{n}x{k} cuBLAS {cublas:8.1f} us", flush=True)
        g = linear_graph(m, n, k)
        variants = [("heuristic", None)] + [
            (
                f"TMA persistent {rows}x{cols} cluster {cluster} split {split}",
                wgmma_tile_schedule(
                    rows,
                    cols,
                    STAGES[cols],
                    split=split,
                    persistent=sms,
                    cluster=cluster,
                ),
            )
            for rows, cols, cluster, split in TILES
            if -(-k // 64) % split == 0
        ]
        for label, schedule in variants:
            compiler = molten.ZeroCompiler(arch="sm_90a")
            schedules = {"linear_gemm0": schedule} if schedule else None
            compiled = compiler.compile(g, schedules=schedules)
            us = checked_us(timer, compiled, x, w, ref)
            if isinstance(us, str):
                print(f"  {label}: {us}", flush=True)
                continue
            print(
                f"  {label:44}: {us:8.1f} us {flops / us / 1e6:6.0f} TFLOP/s "
                f"{cublas / us:5.2f}x cuBLAS (grid {compiled.kernels[0].grid})",
                flush=True,
            )


if __name__ == "__main__":
    main()
