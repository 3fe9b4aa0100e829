"""What the gemm experiments share: the linear layer they time (x @ w.T,
w stored [N, K] as nn.Linear stores it, bf16), its inputs with cuBLAS's
output and time, and a compiled candidate's GPU time, checked against
cuBLAS's output first."""

from dataclasses import dataclass
from typing import Any

import torch

import molten
from benchmarks.timing import Timer
from molten.ir import DataflowGraph

MAX_ERROR = 2e-2
"""The largest error, relative to the output's largest magnitude, that a
candidate may have against cuBLAS's x @ w.T and still be timed."""


def linear_graph(m: int, n: int, k: int) -> DataflowGraph:
    """y = x @ w.T for x [M, K] and w [N, K], bf16; its gemm kernel is
    `linear_gemm0`."""
    g = DataflowGraph("linear")
    x = g.add_input("x", [m, k], "bfloat16")
    w = g.add_input("w", [n, k], "bfloat16")
    g.add_output(g.matmul(x, w, transpose_b=True), "y")
    return g


def shape_of(text: str) -> tuple[int, int, int]:
    """(M, N, K) of "MxNxK"."""
    m, n, k = (int(d) for d in text.split("x"))
    return m, n, k


def relative_error(
    compiled, x: torch.Tensor, w: torch.Tensor, ref: torch.Tensor, out: torch.Tensor
) -> float:
    """max |compiled(x, w) - ref| / max |ref|, computed into `out`."""
    compiled(x, w, out=out)
    return ((out.float() - ref.float()).abs().max() / ref.abs().max()).item()


def checked_us(
    timer: Timer, compiled, x: torch.Tensor, w: torch.Tensor, ref: torch.Tensor
) -> float | str:
    """The median GPU time of `compiled(x, w)` into a NaN-poisoned output,
    or, where that output is off cuBLAS's `ref` by more than MAX_ERROR,
    the error as text ("WRONG (...)"), untimed."""
    out = torch.full_like(ref, float("nan"))
    error = relative_error(compiled, x, w, ref, out)
    if not error < MAX_ERROR:
        return f"WRONG ({error})"
    return timer.gpu_time(lambda: compiled(x, w, out=out)).median


@dataclass
class LinearCase:
    """An M x N x K linear layer to time candidates on: random inputs (w
    scaled by 1/sqrt(K)), cuBLAS's x @ w.T and its median time, the graph
    and its matmul op as kernel-schedule sees it."""

    x: torch.Tensor
    w: torch.Tensor
    ref: torch.Tensor
    cublas_us: float
    graph: DataflowGraph
    matmul: Any

    @staticmethod
    def of(timer: Timer | None, m: int, n: int, k: int) -> "LinearCase":
        """The case, cuBLAS timed by `timer` (without one, not timed: 0)."""
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k**0.5
        cublas = timer.gpu_time(lambda: x @ w.T).median if timer else 0.0
        g = linear_graph(m, n, k)
        probe = molten.ZeroCompiler(arch="sm_90a").optimize(g)
        (mm,) = [op for op in probe.walk() if op.name == "molten.matmul"]
        return LinearCase(x, w, x @ w.T, cublas, g, mm)
