"""The attention family: flash attention, a block of query rows against
tiles of keys (mma.sync: four warps of 16 rows; sm_90a's wgmma: warpgroups
of 64 where the head dims are multiples of 64), the query heads that share
a KV head packed into a block's rows at decode, and the keys split into
parts (flash-decoding) where the blocks leave SMs idle."""

from __future__ import annotations

import math

from molten.dialects import kernel
from molten.dialects.cuda import WGMMA_M
from molten.dialects.molten import shape_of
from molten.passes.fuse_attention import attention_of
from molten.passes.schedule.common import WARP, FamilyRule, KernelBody
from molten.passes.schedule.target import DEFAULT_TARGET, Target

ATTENTION_WARPS = 4
"""Warps of an attention block."""


ATTENTION_WARP_ROWS = 16
"""Query rows of each warp of an attention block (one mma's M)."""


ATTENTION_BLOCKS_PER_SM = 2
"""Blocks per SM a split attention aims at (two fit in shared memory at head
dimension 128): each keeps a tile of K and V in flight, and a decode reads
little else, so its speed is the bytes in flight per SM."""


ATTENTION_TILES_PER_PART = 2
"""The fewest tiles of keys a part of a split attention takes: fewer, and
the copy pipeline barely fills before the part is done."""


def attention_split(
    groups: int, key_tiles: int, causal: bool, sm_count: int, may_split: bool = True
) -> int:
    """The parts the keys of each of `groups` blocks of query rows split
    into (flash-decoding): none while the groups fill the SMs, else as many
    as `ATTENTION_BLOCKS_PER_SM` blocks an SM take in one wave, each part
    at least `ATTENTION_TILES_PER_PART` tiles. A causal attention is not
    split (its groups see different numbers of keys), nor any unless
    `may_split`."""
    if causal or not may_split or groups >= sm_count:
        return 1
    wanted = ATTENTION_BLOCKS_PER_SM * sm_count // groups
    return max(1, min(wanted, key_tiles // ATTENTION_TILES_PER_PART))


ATTENTION_WARPGROUPS = 2
"""Warpgroups of a wgmma attention block (sm_90a), 64 query rows each, above
head dimension 64; one at 64, where two blocks of one fit an SM and run
out of step with each other (each waits at its own barrier per tile of
keys). Measured on the H100 (benchmarks/experiments/attention_wgmma.py,
2026-11-26, f16): at head dimension 64 one warpgroup ran 2% faster without
the causal mask and 12% with it; at 128, two ran 4-9% faster at 8K keys
and level at 2K."""


ATTENTION_WGMMA_KEYS = 128
"""Keys of a wgmma attention's K and V tiles at head dimension 128 (a thread
holds keys / 2 f32 scores and value head / 2 outputs); 64 at head dimension
64 and above 128. Measured on an H200 (benchmarks/experiments/
attention_wgmma.py, 2026-11-26, f16): at head dimension 128, 128 keys ran
5-14% faster than 64; at head dimension 64, 64 keys ran 4-14% faster
without the causal mask and level with it."""


ATTENTION_WGMMA_STAGES = 2
"""K and V tiles in shared memory for a wgmma attention: one copied while
the other is computed on. Three (where they fit) leave each tile's P V
running beside the next tile's Q Kᵀ and softmax (FlashAttention-3's
intra-warpgroup overlap); on an H200 that ran 4-9% slower at head dimension
128 (benchmarks/experiments/attention_wgmma.py, 2026-11-26, f16): the two
warpgroups of a block already overlap each other's softmax and products,
and the kernel issues more instructions than the tensor cores wait for."""


def attention_schedule(
    body: KernelBody,
    target: Target = DEFAULT_TARGET,
    may_split: bool = True,
) -> kernel.ScheduleAttr:
    """An attention kernel's: a block of four warps takes 64 query rows
    (tile M) against K and V tiles of 64 keys (tile N; 32 above head
    dimension 128, where each warp's output accumulators are larger, when
    the head dims are multiples of 32), the
    whole head dimension (tile K) at once, two tiles of K and V in flight;
    each warp's tile is 16 rows by the value head dimension. The keys
    split (attention_split) where `may_split`."""
    found = attention_of(body)
    head = shape_of(found.query)[-1]
    value_head = shape_of(found.value)[-1]
    # 32 keys a tile where the accumulators are large, if the block's
    # 16-byte copies divide such a tile (head dims that are multiples of 32).
    narrow = max(head, value_head) > 128 and not (head % 32 or value_head % 32)
    keys = 32 if narrow else 64
    rows = ATTENTION_WARP_ROWS * ATTENTION_WARPS
    *batch, queries, _ = shape_of(found.weighted.result)
    # Few queries (a decode) leave a block's rows idle: the query heads
    # that share a KV head fill them, and each K and V tile is read once
    # for all of them. (Not causal: its tiles of keys follow the rows.)
    pack = found.group if queries < rows and not found.causal else 1
    if pack == 1 and target.wgmma and takes_wgmma_attention(head, value_head):
        return wgmma_attention_schedule(found, target, may_split)
    groups = math.prod(batch) // pack * -(-pack * queries // rows)
    key_tiles = -(-shape_of(found.key)[-2] // keys)
    return kernel.ScheduleAttr(
        kernel.ScheduleFamily.ATTENTION,
        WARP * ATTENTION_WARPS,
        tile=[rows, keys, head],
        split=attention_split(
            groups, key_tiles, found.causal, target.sm_count, may_split
        ),
        warp=[ATTENTION_WARP_ROWS, value_head],
        stages=2,
        pack=pack,
    )


def takes_wgmma_attention(head: int, value_head: int) -> bool:
    """Whether wgmma takes an attention's products: head dims that are whole
    128-byte swizzled rows (multiples of 64), at most 256 (wgmma's N)."""
    return all(d % 64 == 0 and d <= 256 for d in (head, value_head))


def stages_bytes(rows: int, keys: int, head: int, value_head: int, stages: int) -> int:
    """Shared memory of an attention's 16-bit Q tile and `stages` K and V tiles."""
    return 2 * (rows * head + stages * keys * (head + value_head))


def wgmma_attention_schedule(
    found, target: Target, may_split: bool = True
) -> kernel.ScheduleAttr:
    """An attention on sm_90a's wgmma: `ATTENTION_WARPGROUPS` warpgroups of 64
    query rows (one at head dimension 64) against tiles of
    `ATTENTION_WGMMA_KEYS` keys (64 at head dimension 64 and above 128),
    `ATTENTION_WGMMA_STAGES` stages where they fit the shared memory, else
    two; keys split as on mma.sync."""
    head = shape_of(found.query)[-1]
    value_head = shape_of(found.value)[-1]
    keys = ATTENTION_WGMMA_KEYS if 64 < max(head, value_head) <= 128 else 64
    groups_of_rows = ATTENTION_WARPGROUPS if max(head, value_head) > 64 else 1
    rows = WGMMA_M * groups_of_rows
    # Three stages (P V left running) where they fit the shared memory.
    stages = ATTENTION_WGMMA_STAGES
    if stages_bytes(rows, keys, head, value_head, stages) > target.shared_per_block:
        stages = 2
    *batch, queries, _ = shape_of(found.weighted.result)
    groups = math.prod(batch) * -(-queries // rows)
    key_tiles = -(-shape_of(found.key)[-2] // keys)
    return kernel.ScheduleAttr(
        kernel.ScheduleFamily.ATTENTION,
        WARP * kernel.WARPGROUP_WARPS * groups_of_rows,
        tile=[rows, keys, head],
        split=attention_split(
            groups, key_tiles, found.causal, target.sm_count, may_split
        ),
        warp=[WGMMA_M, value_head],
        stages=stages,
        mma_warps=kernel.WARPGROUP_WARPS,
    )


class AttentionRule(FamilyRule):
    kind = kernel.KernelKind.ATTENTION

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        return attention_schedule(body, target)
