"""Experiment: kernel-schedule's choice between the cp.async wgmma gemm and
the persistent TMA gemm in the tiles it weighs, each timed beside its
estimate (wgmma_candidates, persistent_seconds) and cuBLAS, on x @ w.T
(w stored [N, K], bf16); each checked against cuBLAS first, L2 flushed,
medians (benchmarks.timing). Not a harness result: for calibrating the
estimates.

    PYTHONPATH=. python benchmarks/experiments/gemm_persistent_tiles.py MxNxK ... \
        [--tiles 128x256,128x144s2,64x144,128x256c2,...]

(--tiles: the persistent tiles timed, by default those the heuristic
weighs, persistent_tiles; `sS` splits K in S parts, `cC` takes clusters of
C blocks.)
"""

import math
import re
import sys

import torch

import molten
from benchmarks.experiments.linear import LinearCase, checked_us, shape_of
from benchmarks.timing import Timer
from molten.passes.schedule.common import SWIZZLE_K
from molten.passes.schedule.cost import persistent_seconds, wgmma_schedule_of
from molten.passes.schedule.persistent import persistent_schedule, persistent_tiles
from molten.passes.schedule.target import target_named
from molten.passes.schedule.wgmma import wgmma_candidates, wgmma_schedule


def describe(s) -> str:
    rows, cols, _ = (t.data for t in s.tile.data)
    kind = "TMA persistent" if s.persistent.data else "cp.async"
    return f"{kind} {rows}x{cols} stages {s.stages.data} split {s.split.data}"


def tile_spec(text: str) -> tuple[tuple[int, int], int, int]:
    """((rows, cols), split, cluster) of "RxC[sS][cC]"."""
    found = re.fullmatch(r"(\d+)x(\d+)(?:s(\d+))?(?:c(\d+))?", text)
    if found is None:
        raise SystemExit(f"--tiles: {text!r} is not RxC[sS][cC]")
    rows, cols, split, cluster = found.groups()
    return (int(rows), int(cols)), int(split or 1), int(cluster or 1)


def main() -> None:
    timer = Timer(torch.device("cuda"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    target = target_named("sm_90a").with_sm_count(sms)
    args = sys.argv[1:]
    tiles = None
    if "--tiles" in args:
        at = args.index("--tiles")
        tiles = [tile_spec(t) for t in args[at + 1].split(",")]
        del args[at : at + 2]
    for shape in args:
        m, n, k = shape_of(shape)
        case = LinearCase.of(timer, m, n, k)
        mm, cublas = case.matmul, case.cublas_us
        picked = wgmma_schedule(mm, target)
        best = wgmma_candidates(mm, target)[0]
        k_steps = math.ceil(k / SWIZZLE_K)
        variants = [
            (f"heuristic: {describe(picked)}", None, None),
            ("cp.async best", wgmma_schedule_of(best), best.seconds),
        ] + [
            (
                f"TMA persistent {tile[0]}x{tile[1]} cluster {cluster}",
                persistent_schedule(tile, target, split=split, cluster=cluster),
                persistent_seconds(tile, m, n, k_steps, target, split),
            )
            for tile, split, cluster in tiles
            or [(t, 1, 1) for t in persistent_tiles(mm)]
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
