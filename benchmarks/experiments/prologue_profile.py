"""rms_norm(x, w) @ W.T, fused (fuse-prologue: one gemm kernel) and not
(a row_reduce kernel, then the gemm), kernel by kernel (torch.profiler,
L2 warm), at a sweep of rows:

    python benchmarks/experiments/prologue_profile.py [K N M ...]

(default K = N = 3584, M = 16 64 128 256 512 2048). Under Nsight Compute:
`ncu -k regex:gemm python benchmarks/experiments/prologue_profile.py 3584 3584 512`.
"""

import sys

import torch

import molten
from benchmarks.experiments.layer_profile import kernel_times
from molten.ir import DataflowGraph
from molten.passes import fuse_prologue


def graph(m: int, k: int, n: int) -> DataflowGraph:
    g = DataflowGraph(f"norm_linear_{m}x{k}x{n}")
    x = g.add_input("x", [m, k], "bfloat16")
    w = g.add_input("w", [k], "bfloat16")
    weight = g.add_input("weight", [n, k], "bfloat16")
    g.add_output(g.matmul(g.rms_norm(x, w), weight, transpose_b=True), "y")
    return g


def main(k: int, n: int, rows: list[int]) -> None:
    takes = fuse_prologue.takes_prologue
    for m in rows:
        inputs = [
            torch.randn(t.shape.dims, dtype=torch.bfloat16, device="cuda") * 0.1
            for t in graph(m, k, n).inputs
        ]
        line = []
        for fused in (True, False):
            # Unfused: the pass takes no matmul, the norm is a kernel of its own.
            fuse_prologue.takes_prologue = takes if fused else lambda mm, target: False
            compiled = molten.ZeroCompiler(arch="sm_90a").compile(graph(m, k, n))
            times = kernel_times(lambda c=compiled, a=inputs: c(*a))
            total = sum(us for _, us, _ in times)
            parts = " + ".join(f"{us:.1f}" for _, us, _ in times)
            line.append(f"{'fused' if fused else 'apart'} {total:7.1f} us ({parts})")
        fuse_prologue.takes_prologue = takes
        print(f"M={m:5d} K={k} N={n}: " + "   ".join(line), flush=True)


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    if len(args) >= 3:
        main(args[0], args[1], args[2:])
    else:
        main(3584, 3584, [16, 64, 128, 256, 512, 2048])
