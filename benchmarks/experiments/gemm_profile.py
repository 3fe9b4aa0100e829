"""Experiment: where a linear layer's time goes, Molten's gemm beside
cuBLAS's. `names` prints the kernels cuBLAS launches for x @ w.T (w stored
[N, K], bf16) at each shape, with their times (torch.profiler): their names
tell the tile, cluster and split cuBLAS picked. `run` calls Molten's gemm
(the heuristic's schedule, or the persistent TMA kernel in TILE with
`--tile RxC`) and cuBLAS a few times each, untimed (under Nsight Compute
every launch is slow), for Nsight Compute to profile:

    PYTHONPATH=. python benchmarks/experiments/gemm_profile.py names MxNxK ...
    ncu --kernel-name regex:'linear_gemm0|sm90|nvjet' --launch-skip 2 \
        --launch-count 2 --section SpeedOfLight --section WarpStateStats ... \
        python benchmarks/experiments/gemm_profile.py run MxNxK [--tile 128x192]

Not a harness result: for finding where time goes.
"""

import sys

import torch

import molten
from benchmarks.experiments.linear import LinearCase, relative_error, shape_of
from molten.passes.schedule.persistent import persistent_schedule
from molten.passes.schedule.target import target_named


def names(shapes: list[str]) -> None:
    for text in shapes:
        m, n, k = shape_of(text)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            x @ w.T
        torch.cuda.synchronize()
        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]
        ) as prof:
            for _ in range(5):
                x @ w.T
            torch.cuda.synchronize()
        kernels = {}
        for event in prof.events():
            if event.device_type == torch.autograd.DeviceType.CUDA:
                kernels.setdefault(event.name, []).append(event.device_time)
        for name, times in kernels.items():
            median = sorted(times)[len(times) // 2]
            print(f"{text:>16} {median:8.1f} us  {name}", flush=True)


def run(shape: str, tile: str | None) -> None:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    target = target_named("sm_90a").with_sm_count(sms)
    case = LinearCase.of(None, *shape_of(shape))
    schedules = None
    if tile:
        rows, cols = (int(d) for d in tile.split("x"))
        schedules = {"linear_gemm0": persistent_schedule((rows, cols), target)}
    compiled = molten.ZeroCompiler(arch="sm_90a").compile(
        case.graph, schedules=schedules
    )
    out = torch.full_like(case.ref, float("nan"))
    error = relative_error(compiled, case.x, case.w, case.ref, out)
    print(f"{shape} Molten's error {error:.2e} against cuBLAS", flush=True)
    for _ in range(4):
        compiled(case.x, case.w, out=out)
        case.x @ case.w.T
    torch.cuda.synchronize()


def main() -> None:
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "names":
        names(rest)
    else:
        tile = rest[rest.index("--tile") + 1] if "--tile" in rest else None
        run(rest[0], tile)


if __name__ == "__main__":
    main()
