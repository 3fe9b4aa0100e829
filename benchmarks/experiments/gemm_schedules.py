"""Experiment: the wgmma gemm's tile and split-K (sm_90a) against the estimate
that `kernel-schedule` picks them by. For each shape (x @ w.T, w stored
[N, K], bf16, the linear layers of Llama-3-8B and Qwen2.5-7B), times the
estimate's best candidates, each checked against cuBLAS first, beside
cuBLAS's x @ w.T; L2 flushed, medians (benchmarks.timing). Not a harness
result: only for calibrating the estimate. Prints one line a candidate.

    PYTHONPATH=. python benchmarks/experiments/gemm_schedules.py [M ...]
"""

import sys

import torch

import molten
import molten.passes.kernel_schedule as schedule
from benchmarks.experiments.linear import checked_us, linear_graph
from benchmarks.timing import Timer

LAYERS = [  # (N, K)
    (4096, 4096),  # Llama-3-8B O
    (14336, 4096),  # Llama-3-8B gate, up
    (4096, 14336),  # Llama-3-8B down
]
TOKENS = [int(a) for a in sys.argv[1:]] or [16, 64, 128, 512, 2048, 8192]
CANDIDATES = 5


def _compiled(g, candidate):
    """`g` compiled with the candidate's schedule for its gemm."""
    hand = {"linear_gemm0": schedule.wgmma_schedule_of(candidate)}
    return molten.ZeroCompiler(arch="sm_90a").compile(g, schedules=hand)


def main() -> None:
    timer = Timer(torch.device("cuda"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for m in TOKENS:
        for n, k in LAYERS:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5
            ref = x @ w.T
            cublas = timer.gpu_time(lambda x=x, w=w: x @ w.T).median
            g = linear_graph(m, n, k)
            probe = molten.ZeroCompiler(arch="sm_90a").optimize(g)
            (mm,) = [op for op in probe.walk() if op.name == "molten.matmul"]
            candidates = schedule.wgmma_candidates(mm, sms)[:CANDIDATES]
            flops = 2 * m * n * k
            print(f"{m}x{n}x{k} cuBLAS {cublas:8.1f} us", flush=True)
            for rank, c in enumerate(candidates):
                us = checked_us(timer, _compiled(g, c), x, w, ref)
                if isinstance(us, str):
                    print(f"  {c}: {us}")
                    continue
                print(
                    f"  #{rank} {c.rows:3}x{c.cols:<3} stages {c.stages} "
                    f"split {c.split:2}: "
                    f"{us:8.1f} us (estimate {c.seconds * 1e6:7.1f}) "
                    f"{flops / us / 1e6:6.0f} TFLOP/s {cublas / us:5.2f}x cuBLAS",
                    flush=True,
                )


if __name__ == "__main__":
    main()
