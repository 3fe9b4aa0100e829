"""Experiment: how many parts a decode attention's keys split into. Times the
split, packed decode kernel (32 query heads on 8 KV heads, head dim 128,
f16) with the split kernel-schedule picks and others, beside torch's SDPA
(enable_gqa). Medians of 50 calls by CUDA events, each after a 256 MiB
write that flushes L2; not a harness result (no checks), only for choosing
the default.

    python benchmarks/experiments/decode_split.py
"""

import statistics

import torch
import torch.nn.functional as F

import molten
import molten.passes.kernel_schedule as schedule
from benchmarks.cases import molten_decode
from molten.ir import DataflowGraph

FLUSH = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")


def _time(fn, *args, calls=50):
    times = []
    for _ in range(calls):
        FLUSH.zero_()
        start, end = torch.cuda.Event(True), torch.cuda.Event(True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return statistics.median(times)


picked = schedule.attention_split
for b, sq, sk in [(1, 1, 8192), (1, 1, 32768), (4, 1, 8192), (1, 8, 8192)]:
    q = torch.randn(b, 32, sq, 128, dtype=torch.float16, device="cuda")
    k, v = (
        torch.randn(b, 8, sk, 128, dtype=torch.float16, device="cuda") for _ in "kv"
    )
    kv_bytes = 2 * k.numel() * 2
    sdpa = _time(
        lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    )
    line = [f"{b}x{sq}x{sk}: SDPA {sdpa:6.1f} us ({kv_bytes / sdpa / 1e6:.2f} TB/s)"]
    for split in (None, 4, 8, 16, 33, 66):
        schedule.attention_split = picked if split is None else (lambda *a, s=split: s)
        g = DataflowGraph.trace(
            molten_decode,
            [
                ("q", list(q.shape), "float16"),
                ("k", list(k.shape), "float16"),
                ("v", list(v.shape), "float16"),
            ],
            "decode",
        )
        compiled = molten.ZeroCompiler(arch="sm_90a").compile(g)
        grid = compiled.kernels[0].grid
        us = _time(compiled, q, k, v)
        label = "picked" if split is None else f"split {split}"
        line.append(f"{label} {grid}: {us:6.1f} us ({kv_bytes / us / 1e6:.2f} TB/s)")
    print("\n  ".join(line), flush=True)
schedule.attention_split = picked
