"""Experiment: the wgmma attention's schedule (sm_90a). Times the kernel with
one or two warpgroups, 64 or 128 keys a tile and two or three stages
(three: P V left running beside the next tile's softmax) beside torch's
SDPA, at the attention suite's prefill shapes (f16). Medians of 30 calls by
CUDA events; not a harness result (no L2 flush, no checks), only for
choosing the default.

    python benchmarks/experiments/attention_wgmma.py
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


VARIANTS = [  # (warpgroups, keys, stages)
    (2, 128, 2),
    (2, 64, 2),
    (1, 64, 2),
    (1, 64, 3),
    (1, 128, 2),
]

for b, h, s, d, causal in [
    (1, 32, 8192, 128, False),
    (1, 32, 8192, 128, True),
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
    line = f"({b}, {h}, {s}, {d}) causal={causal!s:5} SDPA {sdpa:8.1f} us"
    for groups, keys, stages in VARIANTS:
        schedule.ATTENTION_WARPGROUPS = groups
        schedule.ATTENTION_WGMMA_KEYS = keys
        schedule.ATTENTION_WGMMA_STAGES = stages
        g = DataflowGraph("attention")
        qi, ki, vi = (g.add_input(n, [b, h, s, d], "float16") for n in "qkv")
        g.add_output(g.attention(qi, ki, vi, causal=causal))
        try:
            compiled = molten.ZeroCompiler(arch="sm_90a").compile(g)
            (kernel,) = compiled.kernels
            out = torch.empty_like(q)
            t = _time(compiled, q, k, v, out=[out])
            line += (
                f" | {groups}x{keys}x{kernel.block[0]}t s{stages}: {t:8.1f} us "
                f"{flops / t / 1e6:5.0f} TF/s {sdpa / t:4.2f}x"
            )
        except Exception as error:  # noqa: BLE001 - a variant that does not build
            line += f" | {groups}x{keys} s{stages}: {type(error).__name__}"
    print(line, flush=True)
