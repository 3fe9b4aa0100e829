"""Experiment: the pointwise schedule of a token embedding (Qwen2.5-7B's
table, 152,064 x 3,584 bf16, by 4,096 ids): block and elements per thread,
each timed by triton's do_bench (median, L2 flushed by do_bench's cache
clear) in one process beside torch's embedding, as GB/s over the rows
read and written.

    PYTHONPATH=. python benchmarks/experiments/embedding_schedules.py
"""

import torch
import triton.testing

import molten
from molten.dialects import kernel
from molten.ir import DataflowGraph

VOCAB, WIDTH, IDS = 152064, 3584, 4096
VARIANTS = [(256, 8), (256, 16), (256, 32), (512, 16), (128, 32), (1024, 8)]


def graph() -> DataflowGraph:
    g = DataflowGraph("embed")
    ids = g.add_input("ids", [IDS], "int64")
    table = g.add_input("table", [VOCAB, WIDTH], "bfloat16")
    g.add_output(g.embedding(ids, table))
    return g


def main() -> None:
    ids = torch.randint(0, VOCAB, (IDS,), device="cuda")
    table = torch.randn(VOCAB, WIDTH, device="cuda", dtype=torch.bfloat16)
    moved = IDS * 8 + 2 * IDS * WIDTH * 2
    want = torch.nn.functional.embedding(ids, table)
    eager = triton.testing.do_bench(lambda: torch.nn.functional.embedding(ids, table))
    print(f"torch embedding: {eager * 1e3:.1f} us, {moved / eager / 1e6:.0f} GB/s")
    for block, per_thread in VARIANTS:
        schedule = kernel.ScheduleAttr(
            "pointwise", block, vector=8, elements_per_thread=per_thread
        )
        compiled = molten.ZeroCompiler().compile(
            graph(), schedules={"embed_pointwise0": schedule}
        )
        out = compiled(ids, table)
        assert torch.equal(out, want)
        ms = triton.testing.do_bench(lambda c=compiled: c(ids, table))
        print(
            f"block {block}, {per_thread} a thread: {ms * 1e3:.1f} us, "
            f"{moved / ms / 1e6:.0f} GB/s"
        )


if __name__ == "__main__":
    main()
