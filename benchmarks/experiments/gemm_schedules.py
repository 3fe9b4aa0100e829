"""Experiment: the wgmma gemm's tile and split-K (sm_90a) against the estimate
that `kernel-schedule` picks them by. For each shape (x @ w.T, w stored
[N, K], bf16, the linear layers of Llama-3-8B and Qwen2.5-7B), times the
estimate's best candidates (and each split one's tile unsplit), each
checked against cuBLAS first, beside
cuBLAS's x @ w.T; L2 flushed, medians (benchmarks.timing). Not a harness
result: only for calibrating the estimate. Prints one line a candidate.

    PYTHONPATH=. python benchmarks/experiments/gemm_schedules.py [M ...]
    PYTHONPATH=. python benchmarks/experiments/gemm_schedules.py MxNxK ...

(the first form: M tokens of each of LAYERS' N x K; the second: those
shapes).
"""

import sys

import torch

import molten
from benchmarks.experiments.linear import LinearCase, checked_us, shape_of
from benchmarks.timing import Timer
from molten.passes.schedule.cost import WgmmaCandidate, wgmma_schedule_of
from molten.passes.schedule.target import target_named
from molten.passes.schedule.wgmma import wgmma_candidates

LAYERS = [  # (N, K)
    (4096, 4096),  # Llama-3-8B O
    (14336, 4096),  # Llama-3-8B gate, up
    (4096, 14336),  # Llama-3-8B down
]
SHAPES = [
    shape_of(a) if "x" in a else (int(a), n, k)
    for a in sys.argv[1:] or ["16", "64", "128", "512", "2048", "8192"]
    for n, k in ([(0, 0)] if "x" in a else LAYERS)
]
CANDIDATES = 6


def _compiled(g, candidate):
    """`g` compiled with the candidate's schedule for its gemm."""
    hand = {"linear_gemm0": wgmma_schedule_of(candidate)}
    return molten.ZeroCompiler(arch="sm_90a").compile(g, schedules=hand)


def main() -> None:
    timer = Timer(torch.device("cuda"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    target = target_named("sm_90a").with_sm_count(sms)
    for m, n, k in SHAPES:
        case = LinearCase.of(timer, m, n, k)
        mm, cublas = case.matmul, case.cublas_us
        candidates = wgmma_candidates(mm, target)[:CANDIDATES]
        # Each split candidate's tile and stages without split too, so that
        # split-K's own cost shows.
        tried = {(c.rows, c.cols, c.stages) for c in candidates if c.split == 1}
        for c in list(candidates):
            if c.split > 1 and (c.rows, c.cols, c.stages) not in tried:
                tried.add((c.rows, c.cols, c.stages))
                candidates.append(
                    WgmmaCandidate.estimate(
                        (1, m, n, k), (c.rows, c.cols), c.stages, 1, target
                    )
                )
        flops = 2 * m * n * k
        print(f"{m}x{n}x{k} cuBLAS {cublas:8.1f} us", flush=True)
        for rank, c in enumerate(candidates):
            us = checked_us(timer, _compiled(case.graph, c), case.x, case.w, case.ref)
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
