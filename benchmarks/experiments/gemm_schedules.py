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
from benchmarks.timing import Timer
from molten.ir import DataflowGraph

LAYERS = [  # (N, K)
    (4096, 4096),  # Llama-3-8B O
    (14336, 4096),  # Llama-3-8B gate, up
    (4096, 14336),  # Llama-3-8B down
]
TOKENS = [int(a) for a in sys.argv[1:]] or [16, 64, 128, 512, 2048, 8192]
CANDIDATES = 5
PICKED = schedule.wgmma_schedule


def _graph(m: int, n: int, k: int) -> DataflowGraph:
    g = DataflowGraph("linear")
    x = g.add_input("x", [m, k], "bfloat16")
    w = g.add_input("w", [n, k], "bfloat16")
    g.add_output(g.matmul(x, w, transpose_b=True), "y")
    return g


def _compiled(g: DataflowGraph, candidate):
    def forced(matmul, sm_count):
        return schedule.wgmma_schedule_of(candidate)

    schedule.wgmma_schedule = forced
    try:
        return molten.ZeroCompiler(arch="sm_90a").compile(g)
    finally:
        schedule.wgmma_schedule = PICKED


def main() -> None:
    timer = Timer(torch.device("cuda"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for m in TOKENS:
        for n, k in LAYERS:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5
            ref = x @ w.T
            cublas = timer.gpu_time(lambda x=x, w=w: x @ w.T).median
            g = _graph(m, n, k)
            probe = molten.ZeroCompiler(arch="sm_90a").optimize(g)
            (mm,) = [op for op in probe.walk() if op.name == "molten.matmul"]
            candidates = schedule.wgmma_candidates(mm, sms)[:CANDIDATES]
            flops = 2 * m * n * k
            print(f"{m}x{n}x{k} cuBLAS {cublas:8.1f} us", flush=True)
            for rank, c in enumerate(candidates):
                compiled = _compiled(g, c)
                out = torch.full_like(ref, float("nan"))
                compiled(x, w, out=out)
                error = (
                    (out.float() - ref.float()).abs().max() / ref.abs().max()
                ).item()
                if not error < 2e-2:
                    print(f"  {c}: WRONG ({error})")
                    continue
                us = timer.gpu_time(
                    lambda c=compiled, x=x, w=w, out=out: c(x, w, out=out)
                ).median
                print(
                    f"  #{rank} {c.rows:3}x{c.cols:<3} stages {c.stages} "
                    f"split {c.split:2}: "
                    f"{us:8.1f} us (estimate {c.seconds * 1e6:7.1f}) "
                    f"{flops / us / 1e6:6.0f} TFLOP/s {cublas / us:5.2f}x cuBLAS",
                    flush=True,
                )


if __name__ == "__main__":
    main()
