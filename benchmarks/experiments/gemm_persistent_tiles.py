"""Experiment: kernel-schedule's choice between the cp.async wgmma gemm and
the persistent TMA gemm in the tiles it weighs, each timed beside its
estimate (wgmma_candidates, persistent_seconds) and cuBLAS, on x @ w.T
(w stored [N, K], bf16); each checked against cuBLAS first, L2 flushed,
medians (benchmarks.timing). Not a harness result: for calibrating the
estimates.

    PYTHONPATH=. python benchmarks/experiments/gemm_persistent_tiles.py MxNxK ... \
        [--tiles 128x256,128x144,...]

(--tiles: the persistent tiles timed, by default those the heuristic
weighs, persistent_tiles.)
"""

import math
import sys

import torch

import molten
import molten.passes.kernel_schedule as schedule
from benchmarks.experiments.linear import LinearCase, checked_us, shape_of
from benchmarks.timing import Timer


def describe(s) -> str:
    rows, cols, _ = (t.data for t in s.tile.data)
    kind = "TMA persistent" if s.persistent.data else "cp.async"
    return f"{kind} {rows}x{cols} stages {s.stages.data} split {s.split.data}"


def main() -> None:
    timer = Timer(torch.device("cuda"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    args = sys.argv[1:]
    tiles = None
    if "--tiles" in args:
        at = args.index("--tiles")
        tiles = [tuple(int(d) for d in t.split("x")) for t in args[at + 1].split(",")]
        del args[at : at + 2]
    for shape in args:
        m, n, k = shape_of(shape)
        case = LinearCase.of(timer, m, n, k)
        mm, cublas = case.matmul, case.cublas_us
        picked = schedule.wgmma_schedule(mm, sms)
        best = schedule.wgmma_candidates(mm, sms)[0]
        k_steps = math.ceil(k / schedule.SWIZZLE_K)
        variants = [
            (f"heuristic: {describe(picked)}", None, None),
            ("cp.async best", schedule.wgmma_schedule_of(best), best.seconds),
        ] + [
            (
                f"TMA persistent {rows}x{cols}",
                schedule.persistent_schedule((rows, cols), sms),
                schedule.persistent_seconds((rows, cols), m, n, k_steps, sms),
            )
            for rows, cols in tiles or schedule.persistent_tiles(mm)
        ]
        print(f"{m}x{n}x{k} cuBLAS {cublas:8.1f} us", flush=True)
        for label, hand, estimate in variants:
            compiler = molten.ZeroCompiler(arch="sm_90a")
            schedules = {"linear_gemm0": hand} if hand else None
            us = checked_us(
                timer,
                compiler.compile(case.graph, schedules=schedules),
                case.x,
                case.w,
                case.ref,
            )
            if isinstance(us, str):
                print(f"  {label}: {us}", flush=True)
                continue
            guess = f"(estimate {estimate * 1e6:6.1f})" if estimate else ""
            if hand is not None:
                label = f"{label}: {describe(hand)}"
            print(
                f"  {label:58}: {us:7.1f} us {guess:18} {cublas / us:5.2f}x cuBLAS",
                flush=True,
            )


if __name__ == "__main__":
    main()
