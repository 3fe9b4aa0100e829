"""Experiment: the attention kernel's block shape. Times the kernel with
warps of 16 or 32 query rows and blocks of 4 or 8 warps, beside torch's SDPA,
at two prefill shapes (f16). Medians of 30 calls by CUDA events; not a
harness result (no L2 flush, no checks), only for choosing the default.

    python benchmarks/experiments/attention_tiles.py
"""

import statistics

import torch
import torch.nn.functional as F

import molten
import molten.passes.schedule.attention as schedule
from molten.ir import DataflowGraph


def _time(fn, *args, calls=30, **kwargs):
    times = []
    for _ in range(calls):
        start, end = torch.cuda.Event(True), torch.cuda.Event(True)
        start.record()
        fn(*args, **kwargs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return statistics.median(times)


for b, h, s, d, causal in [
    (4, 32, 2048, 128, False),
    (4, 32, 2048, 128, True),
    (8, 16, 1024, 64, False),
    (8, 16, 1024, 64, True),
]:
    q, k, v = (
        torch.randn(b, h, s, d, dtype=torch.float16, device="cuda") for _ in "qkv"
    )
    flops = 4 * b * h * s * s * d / (2 if causal else 1)
    sdpa = _time(F.scaled_dot_product_attention, q, k, v, is_causal=causal)
    line = [f"{b}x{h}x{s}x{d}{' causal' if causal else ''}: sdpa {sdpa:.0f} us"]
    for rows, warps in [(16, 4), (16, 8), (32, 4)]:
        schedule.ATTENTION_WARP_ROWS, schedule.ATTENTION_WARPS = rows, warps
        g = DataflowGraph("attention")
        qs, ks, vs = (g.add_input(n, [b, h, s, d], "float16") for n in "qkv")
        g.add_output(g.attention(qs, ks, vs, causal=causal))
        compiled = molten.ZeroCompiler().compile(g)
        out = torch.empty_like(q)
        want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        compiled(q, k, v, out=[out])
        error = ((out.float() - want.float()).norm() / want.float().norm()).item()
        t = _time(compiled, q, k, v, out=[out])
        line.append(
            f"{rows}x{warps}: {t:.0f} us {flops / t / 1e6:.0f} TF/s "
            f"({sdpa / t:.2f}x, err {error:.1e})"
        )
    print(" | ".join(line), flush=True)
