"""How long Molten takes to compile a graph to CUDA source, by graph size.

Run from the repository root (no GPU needed):

    python -m benchmarks.compile_time            # the table, on stdout
    python -m benchmarks.compile_time --json F   # and the figures to F

Each graph is compiled `--repeat` times in this process (the first
compile pays for imports and xDSL's set-up, so it is run once beforehand
and not counted) and the median wall time is reported. The targets are
those of issue 21, on a 2-core machine: the seed graph under 0.3 s; the
rms_norm + gate/up/down MLP (T = 512, hidden 3584, intermediate 18944,
sm_90a) and attention of (4, 32, 2048, 128) under 1.5 s each; a 2,000-op
elementwise chain in under 10 s. The chain and softmax sweeps show how
compile time grows with the number of ops.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date

from molten import ZeroCompiler
from molten.ir import DataflowGraph

Build = Callable[[], DataflowGraph]


def seed() -> DataflowGraph:
    g = DataflowGraph("fused_rmsnorm")
    x = g.add_input("x", [2048, 5120])
    w = g.add_input("w", [5120])
    g.add_output(g.rms_norm(x, w, name="norm"))
    return g


def mlp(tokens: int = 512, hidden: int = 3584, inter: int = 18944) -> DataflowGraph:
    """A Qwen-style MLP block: rms_norm, then down(silu(gate(h)) * up(h))."""
    g = DataflowGraph("mlp")
    dtype = "bfloat16"
    x = g.add_input("x", [tokens, hidden], dtype)
    norm_w = g.add_input("norm_w", [hidden], dtype)
    gate_w = g.add_input("gate_w", [hidden, inter], dtype)
    up_w = g.add_input("up_w", [hidden, inter], dtype)
    down_w = g.add_input("down_w", [inter, hidden], dtype)
    h = g.rms_norm(x, norm_w)
    act = g.silu(h @ gate_w) * (h @ up_w)
    g.add_output(act @ down_w + x, "y")
    return g


def attention(
    batch: int = 4, heads: int = 32, seq: int = 2048, dim: int = 128
) -> DataflowGraph:
    g = DataflowGraph("attention")
    q, k, v = (g.add_input(n, [batch, heads, seq, dim], "float16") for n in "qkv")
    g.add_output(g.attention(q, k, v, name="o", causal=True))
    return g


def chain(
    ops: int, softmax_every: int = 0, shape: tuple[int, int] = (64, 1024)
) -> Build:
    """`ops` elementwise ops in a chain over `shape` f32, with a softmax in
    place of every `softmax_every`-th one (0: none)."""

    def build() -> DataflowGraph:
        g = DataflowGraph(f"chain{ops}")
        x = g.add_input("x", list(shape))
        y = x
        for i in range(1, ops + 1):
            if softmax_every and i % softmax_every == 0:
                y = g.softmax(y)
            elif i % 3 == 0:
                y = g.tanh(y)
            elif i % 3 == 1:
                y = y * 1.0001
            else:
                y = y + x
        g.add_output(y, "y")
        return g

    return build


CASES: list[tuple[str, str, Build, float | None]] = [
    # (name, arch, graph, target in seconds)
    ("seed rms_norm 2048x5120", "sm_90", seed, 0.3),
    ("mlp T=512 3584/18944 bf16", "sm_90a", mlp, 1.5),
    ("attention 4x32x2048x128 f16", "sm_90a", attention, 1.5),
    *(
        (f"elementwise chain, {n} ops", "sm_90", chain(n), 10.0 if n == 2000 else None)
        for n in (125, 250, 500, 1000, 2000)
    ),
    *(
        (f"chain, {n} ops, softmax every 10", "sm_90", chain(n, 10), None)
        for n in (125, 250, 500)
    ),
]


def measure(build: Build, arch: str, repeat: int) -> tuple[float, int]:
    """Median seconds of `repeat` compiles, and the kernels of one."""
    times, kernels = [], 0
    for _ in range(repeat):
        graph = build()
        start = time.perf_counter()
        compiled = ZeroCompiler(arch=arch).compile(graph)
        times.append(time.perf_counter() - start)
        kernels = len(compiled.kernels)
    return statistics.median(times), kernels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--match", default="", help="only cases containing this")
    args = parser.parse_args(argv)
    measure(seed, "sm_90", 1)  # imports and xDSL's contexts, not counted
    rows, failed = [], False
    print(f"{'graph':36} {'arch':7} {'kernels':>7} {'seconds':>8} {'target':>7}")
    for name, arch, build, target in CASES:
        if args.match not in name:
            continue
        seconds, kernels = measure(build, arch, args.repeat)
        met = target is None or seconds < target
        failed |= not met
        shown = "" if target is None else f"< {target:g}" + ("" if met else " MISSED")
        print(f"{name:36} {arch:7} {kernels:7} {seconds:8.3f} {shown:>7}", flush=True)
        rows.append(
            {
                "graph": name,
                "arch": arch,
                "kernels": kernels,
                "seconds": round(seconds, 4),
                "target": target,
            }
        )
    if args.json:
        record = {
            "date": date.today().isoformat(),
            "commit": _commit(),
            "machine": f"{platform.machine()}, {_cores()} cores",
            "python": platform.python_version(),
            "repeat": args.repeat,
            "statistic": "median wall seconds of ZeroCompiler.compile",
            "cases": rows,
        }
        with open(args.json, "w") as f:
            json.dump(record, f, indent=2)
            f.write("\n")
    return 1 if failed else 0


def _commit() -> str:
    import subprocess

    result = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return result.stdout.strip() or "unknown"


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0


if __name__ == "__main__":
    sys.exit(main())
