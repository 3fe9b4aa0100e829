"""The schedule rules' cost model: the estimated times of the wgmma gemms
(the cp.async kernel's candidates, the persistent TMA kernel's) and of the
GEMV of B stored [N, K], which the rules compare to pick a kernel, a tile
and split-K. The device's facts come from the `Target`; the constants here
are the model's own, fitted on the H100 (each says where)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from molten.dialects import kernel, molten
from molten.dialects.cuda import BARRIER_TYPE, WGMMA_M, element_bytes
from molten.dialects.molten import shape_of
from molten.passes.schedule.common import SWIZZLE_K, WARP, wgmma_tile_schedule
from molten.passes.schedule.target import H100, Target

WGMMA_TILE_EFFICIENCY = {
    (128, 256): 0.56,
    (128, 128): 0.55,
    (64, 256): 0.45,
    (64, 128): 0.40,
    (64, 64): 0.30,
}
"""The fraction of an SM's dense tensor-core peak a block of each tile
sustains in its K loop, fitted to the gemm's times on the H100
(2026-11-26, benchmarks/results/*-gemm-schedules.txt): 128x256 at 459
TFLOP/s on 512x14336x4096, 128x128 (six stages) at 571 on 512x4096x14336;
the one-warpgroup tiles, which hide less latency, below them."""


WGMMA_STAGES = (4, 6, 8)
"""The operand tiles in shared memory a wgmma gemm may take: `stages - 2`
in flight (cp.async), one read by the wgmmas issued now and one by those
of the step before, which may still run. Four cover a compute-bound gemm's
latency; a gemm bound by streaming B (few rows) keeps more in flight."""


DRAM_LATENCY_S = 1.5e-6
"""The time a load takes under load, so that bytes in flight / latency is
the bandwidth they sustain (Little's law). Fitted on the H100 (2026-11-26):
a 16x4096x4096 gemm of 64x64 tiles with two parts of K and two stages in
flight moved 1.4 TB/s, 2 MiB of B in flight."""


BLOCK_LATENCY_S = 3e-6
"""A block's fixed cost in a wave: the pipeline filling, the epilogue."""


WGMMA_STREAM_SECONDS = 3.8e-6
"""What the cp.async wgmma kernel's time has beyond the estimate where
streaming the operands bounds it (few rows): on the H100 (2026-11-26,
benchmarks/results/*-gemm-small-m.txt), its measured time less the
estimate without this at seven shapes of 16 and 128 rows, the median
(-0.3 to 8.5 us). Added where the heuristic weighs that kernel against
the persistent one, whose estimate has its fixed costs
(PERSISTENT_SECONDS' once); where compute bounds it (1030x2048x512), the
estimate was 17% over instead."""


SM_BYTES_PER_S = 150e9
"""What one SM's loads and stores move (split-K's last block of a tile
adds the parts alone)."""


SPLIT_SECONDS = 3.5e-6
"""What split-K costs beyond moving its parts (the last block of a tile
waiting for the others' parts, then adding them before its epilogue),
fitted on the H100 (2026-11-26, benchmarks/results/*-gemm-split.txt):
against the same tile unsplit, split-K ran 2-7 us slower than the
estimate without it at 16 to 128 rows."""


@dataclass(frozen=True)
class WgmmaCandidate:
    """A wgmma gemm's output tile, stages and split-K parts, with its
    estimated time, and whether streaming the operands bounds it."""

    rows: int
    cols: int
    stages: int
    split: int
    seconds: float
    streamed: bool = False

    @staticmethod
    def shared_bytes(tile: tuple[int, int], stages: int) -> int:
        return stages * (tile[0] + tile[1]) * SWIZZLE_K * 2

    @staticmethod
    def estimate(
        shape: tuple[int, int, int, int],
        tile: tuple[int, int],
        stages: int,
        split: int,
        target: Target,
    ) -> WgmmaCandidate:
        """The time of a gemm (batches, M, N, K) of 16-bit operands in
        `tile`s with `stages` and K split `split` ways on the target: the
        busiest SM's tiles at their sustained rate, or the operands, output
        and parts moved at the bandwidth the blocks' loads in flight
        sustain, whichever is longer, plus each wave's fixed cost."""
        batches, m, n, k = shape
        bm, bn = tile
        sms = target.sm_count
        threads = kernel.WARPGROUP_WARPS * WARP * (bm // WGMMA_M)
        tiles = batches * math.ceil(m / bm) * math.ceil(n / bn)
        blocks = tiles * split
        # Blocks an SM holds: its shared memory, and its registers (a
        # thread's accumulators and about 40 more). (A block's most shared
        # memory stands for an SM's, as it was fitted.)
        resident = max(
            1,
            min(
                target.shared_per_block // WgmmaCandidate.shared_bytes(tile, stages),
                target.registers_per_sm // (threads * (bn // 2 + 40)),
            ),
        )
        waves = math.ceil(blocks / (sms * resident))
        k_part = math.ceil(math.ceil(k / SWIZZLE_K) / split) * SWIZZLE_K
        flops = 2 * bm * bn * k_part
        efficiency = WGMMA_TILE_EFFICIENCY[tile]
        compute = (
            math.ceil(blocks / sms) * flops / (target.sm_tensor_flops * efficiency)
        )
        moved = 2 * batches * (m * k + k * n + m * n)
        # Rows of A past M are zeros that no load fetches.
        step_bytes = (min(bm, m) + bn) * SWIZZLE_K * 2
        in_flight = min(blocks, sms * resident) * (stages - 2) * step_bytes
        bandwidth = min(target.copy_bytes_per_s, in_flight / DRAM_LATENCY_S)
        streaming = moved / bandwidth
        seconds = max(compute, streaming) + waves * BLOCK_LATENCY_S
        if split > 1:
            # After the K loops: every part stored and read back, the last
            # block of each tile reading them all.
            part_bytes = min(m, bm) * bn * 4
            parts = 2 * split * tiles * part_bytes
            seconds += (
                parts / target.copy_bytes_per_s
                + split * part_bytes / SM_BYTES_PER_S
                + SPLIT_SECONDS
            )
        return WgmmaCandidate(bm, bn, stages, split, seconds, streaming > compute)


GEMV_SECONDS = (4.3e-6, 2.97e12, 0.075)
"""The GEMV of B stored [N, K]: (fixed seconds, bytes of B a second at one
row on the H100, the share each further row slows B's stream): on the H100
(2026-11-26, *-gemv-columns.txt, *-gemv-vs-wgmma.txt), one row's time at
six weights of 26 to 136 MB fits 4.3 us + B / 2.97 TB/s within 3%; each
row more slows the stream by 7-8% (the conversions and FMAs of A's rows
per byte of B)."""


GEMV_ROW_BYTES_PER_S = 10e12
"""The bytes of B a second the GEMV of B stored [N, K] gets through per row
of A where its loads and conversions of A, not B's stream, bound it: on an
H200 (2026-12-01, benchmarks/experiments/target_choices.py), 3 and 4 rows
took 0.29-0.30 and 0.40 ns a byte of B beyond the fixed cost, at five
shapes of 44 to 176 MB, whatever the bandwidth (an H100's stream is slower
than this bound up to GEMV_NK_MAX_M rows)."""


def gemv_nk_seconds(matmul: molten.MatmulOp, target: Target) -> float:
    """The GEMV's estimated time for a gemm of B stored [N, K]: the fixed
    cost (GEMV_SECONDS), then B's stream at the H100's rate scaled by the
    target's copy bandwidth, or where longer its rows of A at
    GEMV_ROW_BYTES_PER_S."""
    result = shape_of(matmul.result)
    rows = result[-2]
    b_bytes = math.prod(shape_of(matmul.rhs)) * element_bytes(
        matmul.rhs.type.element_type  # type: ignore[attr-defined]
    )
    fixed, rate, slowdown = GEMV_SECONDS
    rate *= target.copy_bytes_per_s / H100.copy_bytes_per_s  # where it was fitted
    stream = b_bytes * (1 + slowdown * (rows - 1)) / rate
    return fixed + max(stream, b_bytes * rows / GEMV_ROW_BYTES_PER_S)


PERSISTENT_ROWS = 128
"""The rows of the persistent kernel's tiles: two consumer warpgroups."""


PERSISTENT_SECONDS = (5.4e-6, 3.35e-6, 0.033e-6, 0.00256e-6)
"""The persistent kernel's time in 128-row tiles of N columns: once (its
start and its last epilogue), a round of tiles on the SMs, and a K step
(of 64) of a round, a + b N (half of b N for 64-row tiles). Fitted on the
H100 (2026-11-26, benchmarks/results/*-gemm-persistent-widths.txt) to 36
times of six shapes (512 to 8192 rows, 8 to 64 K steps) in widths 128 to
256 by 16: within 13% of each, and it picks the fastest width of each
shape but 512x14336x4096 (256 for 160, 3% slower)."""


SM_STREAM_BYTES_PER_S = 100e9
"""The most a persistent block's TMA loads stream into one SM (from L2
or DRAM). Fitted on the H100 (2026-11-26,
benchmarks/results/*-gemm-small-m.txt): where few rows leave the kernel
bound by streaming B, a tile the SM takes alone in a round of its own
costs its bytes at this rate (16x18944x3584 in 148 tiles of 64x128: 56.8
us; in 132 tiles of 64x144: 50.8)."""


def persistent_units(tile: tuple[int, int], m: int, n: int, split: int = 1) -> int:
    """The persistent kernel's units of work in an M x N gemm: a tile's
    part of K."""
    return math.ceil(m / tile[0]) * math.ceil(n / tile[1]) * split


def persistent_seconds(
    tile: tuple[int, int],
    m: int,
    n: int,
    k_steps: int,
    target: Target,
    split: int = 1,
) -> float:
    """The estimated time of an M x N gemm of `k_steps` K steps in the
    persistent TMA kernel's `tile`s, K split in `split` parts
    (PERSISTENT_SECONDS): once, plus the rounds of units (a tile's part)
    the busiest SM takes, or, where longer, the rounds' loads streamed (a
    round's share of the operands and output at DRAM's bandwidth, or a
    unit's operand tiles at one SM's: SM_STREAM_BYTES_PER_S, or what its
    stages in flight sustain); split-K adds the last block's sum of the
    parts."""
    rows, cols = tile
    sm_count = target.sm_count
    units = persistent_units(tile, m, n, split)
    rounds, last = divmod(units, sm_count)
    steps = k_steps // split
    once, per_round, step, per_column = PERSISTENT_SECONDS
    k = k_steps * SWIZZLE_K
    moved = 2 * (m * k + n * k + m * n)
    # Rows of A past M are zeros that no load fetches.
    step_bytes = 2 * (min(rows, m) + cols) * SWIZZLE_K
    in_flight = (most_stages(tile, target, PERSISTENT_MAX_STAGES) - 1) * step_bytes
    stream = min(SM_STREAM_BYTES_PER_S, in_flight / DRAM_LATENCY_S)

    def streamed(units_in_round: int) -> float:
        return max(
            moved * units_in_round / units / target.copy_bytes_per_s,
            steps * step_bytes / stream,
        )

    loads = rounds * streamed(sm_count) + (streamed(last) if last else 0.0)
    work = math.ceil(units / sm_count) * (
        per_round + steps * (step + per_column * cols * rows / PERSISTENT_ROWS)
    )
    seconds = once + max(work, loads)
    if split > 1:
        # The last block of a tile reads and adds every part's f32 tile.
        part_bytes = min(m, rows) * cols * 4
        seconds += SPLIT_SECONDS + split * part_bytes / SM_BYTES_PER_S
    return seconds


def most_stages(
    tile: tuple[int, int], target: Target, limit: int = max(WGMMA_STAGES)
) -> int:
    """The most stages of a wgmma gemm's tile that fit in shared memory
    beside their two mbarriers each (which the persistent kernel has), at
    most `limit`."""
    per_stage = WgmmaCandidate.shared_bytes(tile, 1) + 2 * element_bytes(BARRIER_TYPE)
    return min(target.shared_per_block // per_stage, limit)


PERSISTENT_MAX_STAGES = 16
"""The persistent kernel's stages at most: as many as fit, so that narrow
tiles (64 rows, few columns) keep enough bytes in flight to stream B."""


def wgmma_schedule_of(candidate: WgmmaCandidate) -> kernel.ScheduleAttr:
    """The schedule of a wgmma gemm of the candidate's tile and split."""
    return wgmma_tile_schedule(
        candidate.rows, candidate.cols, candidate.stages, split=candidate.split
    )
