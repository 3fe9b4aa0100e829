"""Experiment: the 3xTF32 gemm's tiling (f32 on tensor cores, mma.sync
m16n8k8). For each shape and layout, times warp tiles, K steps and
stages by hand schedules beside cuBLAS's f32 gemm (TF32 off, as torch
runs f32 by default), each checked first against float64 (relative L2
under 3e-6: f32's precision; a candidate that misses it is reported
WRONG, untimed). L2 flushed, medians (benchmarks.timing). Not a harness
result: only for picking `kernel-schedule`'s TF32_GEMM_* constants.
Prints one line a candidate, with ptxas's spills absent from the runtime's
view (check those with tests/test_codegen.py).

    PYTHONPATH=. python benchmarks/experiments/tf32_schedules.py [MxNxK[:kn] ...]

(":kn": B stored [K, N], as torch.matmul(A, B) takes it; else [N, K], as
nn.Linear stores it). Defaults: KernelBench's f32 matmul shapes.
"""

import sys

import torch

import molten
from benchmarks.timing import Timer
from molten.dialects import kernel
from molten.ir import DataflowGraph

SHAPES = sys.argv[1:] or [
    "4096x4096x4096:kn",  # level 1, square matrix multiplication
    "2048x4096x8192:kn",  # level 1, transposed A / B
    "1024x8192x8192",  # level 2, nn.Linear layers
    "32768x32768x64:kn",  # level 1, small K
]
CANDIDATES = [  # (block, warp tile, block tile, stages)
    (128, (64, 64), (128, 128, 16), 4),
    (256, (64, 32), (128, 128, 16), 4),
    (256, (32, 64), (128, 128, 16), 4),
    (256, (64, 32), (128, 128, 32), 3),
    (128, (64, 32), (64, 128, 16), 4),
]
MAX_ERROR = 3e-6


def graph(m: int, n: int, k: int, kn: bool) -> DataflowGraph:
    g = DataflowGraph("mm")
    a = g.add_input("a", [m, k], "float32")
    b = g.add_input("b", [k, n] if kn else [n, k], "float32")
    g.add_output(g.matmul(a, b, transpose_b=not kn), "y")
    return g


def main() -> None:
    timer = Timer(torch.device("cuda"))
    torch.backends.cuda.matmul.allow_tf32 = False
    for text in SHAPES:
        dims, _, layout = text.partition(":")
        m, n, k = (int(d) for d in dims.split("x"))
        kn = layout == "kn"
        a = torch.rand(m, k, device="cuda")
        b = torch.randn(*((k, n) if kn else (n, k)), device="cuda")
        rhs = b if kn else b.T
        want = (a.double() @ rhs.double()).float()
        cublas = timer.gpu_time(lambda: a @ rhs).median  # noqa: B023
        flops = 2 * m * n * k
        print(f"{text}: cuBLAS f32 {cublas:9.1f} us", flush=True)
        g = graph(m, n, k, kn)
        for block, warp, tile, stages in CANDIDATES:
            hand = {
                "mm_gemm0": kernel.ScheduleAttr(
                    "gemm_mma", block, tile=tile, warp=warp, stages=stages
                )
            }
            label = f"block {block} warp {warp} tile {tile} stages {stages}"
            try:
                compiled = molten.ZeroCompiler().compile(g, schedules=hand)
            except Exception as error:  # a schedule the tiling refuses
                print(f"  {label}: {type(error).__name__}: {error}")
                continue
            out = torch.full((m, n), float("nan"), device="cuda")
            compiled(a, b, out=out)
            error = (torch.linalg.norm(out - want) / torch.linalg.norm(want)).item()
            if not error < MAX_ERROR:
                print(f"  {label}: WRONG (relative L2 {error:.2e})")
                continue
            us = timer.gpu_time(lambda: compiled(a, b, out=out)).median  # noqa: B023
            print(
                f"  {label}: {us:9.1f} us {flops / us / 1e6:6.1f} TFLOP/s "
                f"{cublas / us:5.2f}x cuBLAS (error {error:.1e})",
                flush=True,
            )


if __name__ == "__main__":
    main()
