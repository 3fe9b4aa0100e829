"""Experiment: a decode attention's schedule. Times the split, packed decode
kernel (32 query heads on 8 KV heads, head dim 128, f16) with the schedule
kernel-schedule picks and with other key tiles, stages and splits, beside
torch's SDPA (enable_gqa). Medians of 50 calls by CUDA events, each after a
256 MiB write that flushes L2; not a harness result (no checks), only for
choosing the default.

    PYTHONPATH=. python benchmarks/experiments/decode_split.py
"""

import statistics

import torch
import torch.nn.functional as F

import molten
import molten.passes.schedule.attention as schedule
from benchmarks.cases import molten_decode
from molten.dialects import kernel
from molten.ir import DataflowGraph
from molten.passes.schedule.target import DEFAULT_TARGET

FLUSH = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
PICKED = schedule.attention_schedule


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


def _variant(keys, stages, split_scale):
    """kernel-schedule's attention schedule with other key tiles, stages and
    a scaled split."""

    def attention_schedule(body_ops, target=DEFAULT_TARGET):
        s = PICKED(body_ops, target)
        rows, _, head = (t.data for t in s.tile)
        return kernel.ScheduleAttr(
            "attention",
            s.block.data,
            tile=[rows, keys, head],
            split=max(1, int(s.split.data * split_scale)),
            warp=[t.data for t in s.warp],
            stages=stages,
            pack=s.pack.data,
        )

    return attention_schedule


VARIANTS = [(64, 2, 1.0), (64, 2, 0.5), (32, 3, 1.0), (32, 4, 1.0), (32, 4, 2.0)]
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
    for keys, stages, split_scale in VARIANTS:
        schedule.attention_schedule = _variant(keys, stages, split_scale)
        g = DataflowGraph.trace(
            molten_decode,
            [
                (n, list(t.shape), "float16")
                for n, t in zip("qkv", (q, k, v), strict=True)
            ],
            "decode",
        )
        compiled = molten.ZeroCompiler(arch="sm_90a").compile(g)
        us = _time(compiled, q, k, v)
        line.append(
            f"keys {keys} stages {stages} grid {compiled.kernels[0].grid}: "
            f"{us:6.1f} us ({kv_bytes / us / 1e6:.2f} TB/s)"
        )
    print("\n  ".join(line), flush=True)
schedule.attention_schedule = PICKED
