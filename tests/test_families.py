"""The kernel families: each named once, in `#kernel.schedule`, and looked
up in one table (`passes/families.py`) for its rule, tiling and lowering."""

from __future__ import annotations

import pytest

from molten import ZeroCompiler
from molten.dialects import kernel
from molten.ir import DataflowGraph
from molten.passes.families import FAMILIES
from molten.passes.schedule.rules import rules_of

F = kernel.ScheduleFamily


def test_every_family_has_one_entry_of_its_kind():
    assert sorted(FAMILIES) == sorted(kernel.ScheduleFamily)
    for name, family in FAMILIES.items():
        assert family.kind == kernel.SCHEDULE_FAMILIES[name].kind, name
    gemm_rules = [type(rule).__name__ for rule in rules_of(kernel.KernelKind.GEMM)]
    assert gemm_rules == [
        "SiblingsRule",
        "GemvRule",
        "WgmmaRule",
        "MmaRule",
        "SimtRule",
    ]


def _linear(m: int, n: int, k: int) -> DataflowGraph:
    g = DataflowGraph("lin")
    x = g.add_input("x", [m, k], "bfloat16")
    w = g.add_input("w", [n, k], "bfloat16")
    g.add_output(g.matmul(x, w, transpose_b=True), "y")
    return g


@pytest.mark.parametrize("rows", [1, 300, 1024])
def test_each_schedule_picked_is_of_a_family_of_its_kernels_kind(rows):
    for arch in ("sm_80", "sm_90a"):
        module = ZeroCompiler(arch=arch).optimize(_linear(rows, 512, 1024))
        for kfunc in module.walk():
            if isinstance(kfunc, kernel.FuncOp) and kfunc.schedule is not None:
                family = kfunc.schedule.family.data
                assert kernel.SCHEDULE_FAMILIES[family].kind == kfunc.kind.data


@pytest.mark.parametrize(
    "schedule, product",
    [
        (
            kernel.ScheduleAttr(
                F.GEMM_MMA, 128, tile=(128, 128, 32), warp=(64, 64), stages=4
            ),
            "molten_mma_bf16(",
        ),
        (
            kernel.ScheduleAttr(
                F.GEMM_WGMMA, 256, tile=(128, 128, 64), warp=(64, 128), stages=4
            ),
            "molten_wgmma_m64n128k16_bf16",
        ),
        (kernel.ScheduleAttr(F.GEMM_SIMT, 256, tile=(64, 64, 16)), None),
    ],
)
def test_the_schedules_family_alone_picks_the_lowering(schedule, product):
    """The same gemm on sm_90a, under hand schedules of three families: the
    kernel is the family's (mma.sync, wgmma, SIMT), whatever the rules
    would have picked."""
    compiled = ZeroCompiler(arch="sm_90a").compile(
        _linear(256, 256, 512), schedules={"lin_gemm0": schedule}
    )
    kernels = compiled.source.split("__global__")[1:]
    products = ["molten_mma_bf16(", "molten_wgmma_m64n128k16_bf16"]
    used = [p for p in products if p in kernels[0]]
    assert used == ([product] if product else [])
    # A tensor-core family's SIMT variant for misaligned pointers follows.
    assert ("lin_gemm0_simt(" in compiled.source) == bool(product)
