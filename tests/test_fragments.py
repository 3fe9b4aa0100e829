"""The tensor-core accumulator layouts (`passes/lowering/fragments.py`) as the
PTX ISA gives them: each element of an instruction's tile is held by exactly
one register of one thread, where the ISA's fragment figures put it."""

import pytest

from molten.passes.lowering.fragments import (
    MMA_M16N8K8,
    MMA_M16N8K16,
    AccumulatorLayout,
    wgmma_m64,
)


def _held(layout: AccumulatorLayout, rows: int, cols: int) -> dict:
    held = {}
    for thread in range(32 * layout.warps):
        for register in range(len(layout.registers)):
            place = layout.place(thread, register)
            assert place not in held, f"{layout.name}: {place} held twice"
            held[place] = (thread, register)
    assert sorted(held) == [(r, c) for r in range(rows) for c in range(cols)]
    return held


@pytest.mark.parametrize("layout", [MMA_M16N8K16, MMA_M16N8K8])
def test_mma_sync_c_fragment(layout):
    # PTX ISA, mma.m16n8k16 / m16n8k8 C fragments: groupID = lane >> 2,
    # row groupID (+8 for c2, c3), column 2 (lane % 4) + (i & 1).
    held = _held(layout, 16, 8)
    for (row, col), (lane, i) in held.items():
        assert row == lane // 4 + 8 * (i >= 2)
        assert col == 2 * (lane % 4) + (i & 1)


@pytest.mark.parametrize("n", [8, 64, 72, 128, 208, 256])
def test_wgmma_m64_accumulators(n):
    # PTX ISA, wgmma D fragments: thread t of the warpgroup, register j at row
    # 16 (t / 32) + (t % 32) / 4 + 8 ((j / 2) % 2), column 8 (j / 4) + 2 (t % 4)
    # + j % 2.
    layout = wgmma_m64(n)
    held = _held(layout, 64, n)
    for (row, col), (t, j) in held.items():
        assert row == 16 * (t // 32) + (t % 32) // 4 + 8 * ((j // 2) % 2)
        assert col == 8 * (j // 4) + 2 * (t % 4) + j % 2
    assert layout.run == 2 and layout.rows == (0, 8)


def test_tiled_fragments_cover_the_warp_tile():
    layout = MMA_M16N8K16.tiled(2, 4)
    _held(layout, 32, 32)
    assert layout.rows == (0, 8, 16, 24)
    assert [layout.row_slot(j) for j in range(8)] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert layout.row_registers(2)[:4] == [16, 17, 20, 21]
