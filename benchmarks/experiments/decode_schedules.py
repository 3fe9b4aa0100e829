"""Experiment: a decode attention's key tile and stages, timed by the
benchmark harness itself (L2 flushed, medians, checked against PyTorch):
the decode suite's one-sequence cases (f16), once per schedule, each
variant in the same process, each result in OUTDIR/decode-<keys>x<stages>.json.

    PYTHONPATH=. python benchmarks/experiments/decode_schedules.py OUTDIR
"""

import sys

import molten.passes.schedule.attention as schedule
from benchmarks.__main__ import main
from molten.dialects import kernel
from molten.passes.schedule.target import DEFAULT_TARGET

PICKED = schedule.attention_schedule
VARIANTS = [(64, 2), (32, 4), (32, 3), (64, 3)]


def _variant(keys: int, stages: int):
    """kernel-schedule's attention schedule with another key tile and stages
    where it packs query heads (a decode); others as picked."""

    def attention_schedule(body_ops, target=DEFAULT_TARGET):
        s = PICKED(body_ops, target)
        if s.pack.data == 1:
            return s
        rows, _, head = (t.data for t in s.tile)
        return kernel.ScheduleAttr(
            "attention",
            s.block.data,
            tile=[rows, keys, head],
            split=s.split.data,
            warp=[t.data for t in s.warp],
            stages=stages,
            pack=s.pack.data,
        )

    return attention_schedule


out = sys.argv[1]
for keys, stages in VARIANTS:
    schedule.attention_schedule = _variant(keys, stages)
    print(f"-- keys {keys}, stages {stages}", flush=True)
    main(
        [
            "run",
            "--suite",
            "decode",
            "--dtype",
            "float16",
            "--match",
            "gqa-1x32x8x1x",
            "--output",
            f"{out}/decode-{keys}x{stages}.json",
            "--no-plot",
        ]
    )
