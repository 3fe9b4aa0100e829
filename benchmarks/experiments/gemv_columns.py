"""Experiment: the GEMV of B stored [N, K] (x @ w.T, bf16) at 1 to 8 rows:
how many columns of B a warp should take (each vector of x it loads then
serves them all) and how many rounds of K each thread keeps in flight;
beside it the wgmma kernels (cp.async and persistent, 64-row tiles, rows
past M wasted) that kernel-schedule's estimates pick at that M, to find
the rows up to which the GEMV should take x @ w.T. Each candidate is
checked against cuBLAS first, then timed beside cuBLAS's x @ w.T (L2
flushed, medians: benchmarks.timing). Not a harness result: only for
choosing `gemv_nk_schedule`'s parameters and `GEMV_NK_MAX_M`. One line a
candidate.

    PYTHONPATH=. python benchmarks/experiments/gemv_columns.py [M ...]
"""

import sys

import torch

import molten
from benchmarks.experiments.linear import LinearCase, checked_us
from benchmarks.timing import Timer
from molten.passes.schedule.cost import wgmma_schedule_of
from molten.passes.schedule.gemv import gemv_nk_schedule
from molten.passes.schedule.persistent import persistent_ranked, persistent_schedule
from molten.passes.schedule.target import Target, target_named
from molten.passes.schedule.wgmma import wgmma_candidates

LAYERS = [  # (N, K)
    (6144, 4096),  # Llama-3-8B QKV
    (4096, 4096),  # Llama-3-8B O
    (4096, 14336),  # Llama-3-8B down
    (4608, 3584),  # Qwen2.5-7B QKV
    (3584, 3584),  # Qwen2.5-7B O
    (3584, 18944),  # Qwen2.5-7B down
]
COLUMNS = (1, 2)
STAGES = (2, 4)


def candidates(matmul, target: Target) -> dict:
    """Name: schedule of each candidate timed for the gemm."""
    tried = {
        f"GEMV columns {columns} stages {stages}": gemv_nk_schedule(
            matmul, columns, stages
        )
        for columns in COLUMNS
        for stages in STAGES
    }
    best = wgmma_candidates(matmul, target)[0]
    tried[f"wgmma {best.rows}x{best.cols} split {best.split}"] = wgmma_schedule_of(best)
    for fastest in persistent_ranked(matmul, target)[:1]:
        tried[f"persistent {fastest.rows}x{fastest.cols} split {fastest.split}"] = (
            persistent_schedule((fastest.rows, fastest.cols), target, fastest.split)
        )
    return tried


def main() -> None:
    timer = Timer(torch.device("cuda"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    target = target_named("sm_90a").with_sm_count(sms)
    for m in [int(a) for a in sys.argv[1:]] or [1, 2, 4, 8, 16]:
        for n, k in LAYERS:
            case = LinearCase.of(timer, m, n, k)
            weight_bytes = n * k * 2
            print(f"{m}x{n}x{k} cuBLAS {case.cublas_us:7.1f} us", flush=True)
            for name, picked in candidates(case.matmul, target).items():
                compiled = molten.ZeroCompiler(arch="sm_90a").compile(
                    case.graph, schedules={"linear_gemm0": picked}
                )
                us = checked_us(timer, compiled, case.x, case.w, case.ref)
                if isinstance(us, str):
                    print(f"  {name}: {us}")
                    continue
                print(
                    f"  {name}: {us:7.1f} us {weight_bytes / us / 1e6:5.2f} TB/s "
                    f"{case.cublas_us / us:5.2f}x cuBLAS",
                    flush=True,
                )


if __name__ == "__main__":
    main()
