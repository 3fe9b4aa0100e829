"""Schedules read their target: the device's facts, named or read off a GPU,
travel on the module, and two devices whose facts differ get different
schedules where the rules weigh those facts."""

import dataclasses
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from molten import MoltenError, ZeroCompiler
from molten.context import molten_context
from molten.dialects import kernel
from molten.ir import DataflowGraph
from molten.passes.schedule.kernel_schedule import KernelSchedule
from molten.passes.schedule.target import (
    DEFAULT_TARGET,
    TARGET_ATTR,
    TARGETS,
    Target,
    attach_target,
    device_facts,
    module_target,
    target_named,
)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_named_target_round_trips_through_its_attribute(name):
    target = TARGETS[name]
    assert Target.from_attr(target.to_attr()) == target
    text = str(target.to_attr())
    parsed = Parser(molten_context(), text).parse_attribute()
    assert Target.from_attr(parsed) == target


def test_the_named_devices_facts():
    h100, h200, a100 = (target_named(n) for n in ("h100", "h200", "a100"))
    assert (h100.sm_count, h200.sm_count, a100.sm_count) == (132, 132, 108)
    assert h200.copy_bytes_per_s > 1.4 * h100.copy_bytes_per_s
    assert h100.wgmma and h200.wgmma and not a100.wgmma
    # The portable sm_90 source: the H100's facts, Hopper's features unused.
    assert not DEFAULT_TARGET.wgmma
    assert dataclasses.replace(DEFAULT_TARGET, device="h100", arch="sm_90a") == (
        dataclasses.replace(h100, features=frozenset())
    )
    assert target_named("sm_90a") == dataclasses.replace(h100, device="sm_90a")
    assert target_named("sm_86").arch == "sm_86"  # an arch Molten names no device for
    with pytest.raises(ValueError, match="unknown target 'h300'"):
        target_named("h300")
    with pytest.raises(MoltenError, match="ZeroCompiler: unknown target 'h300'"):
        ZeroCompiler(target="h300")
    with pytest.raises(MoltenError, match="target a100 is sm_80, not arch='sm_90a'"):
        ZeroCompiler(target="a100", arch="sm_90a")


def test_a_device_read_off_the_gpu():
    """The JIT's target: a named device's facts, with those read off it."""
    read = dict(
        shared_per_block=232448,
        shared_per_sm=233472,
        registers_per_sm=65536,
        l2_bytes=52428800,
    )
    h200 = {**read, "l2_bytes": 62914560}  # as the H200 reports it
    assert device_facts("NVIDIA H200", "sm_90a", sm_count=132, **h200) == (
        target_named("h200")
    )
    assert device_facts("NVIDIA H100 80GB HBM3", "sm_90a", sm_count=132, **read) == (
        target_named("h100")
    )
    # A slice of the SMs keeps each SM's tensor-core rate.
    sliced = device_facts("NVIDIA H100 80GB HBM3", "sm_90a", sm_count=66, **read)
    assert sliced.sm_tensor_flops == target_named("h100").sm_tensor_flops
    # A device Molten does not name: its arch's facts, under its own name.
    other = device_facts("NVIDIA GH200 480GB", "sm_90a", sm_count=132, **read)
    assert other.device == "NVIDIA GH200 480GB" and other.wgmma
    assert other.copy_bytes_per_s == target_named("sm_90a").copy_bytes_per_s


def test_the_compiled_module_carries_its_target():
    g = DataflowGraph("g")
    x = g.add_input("x", [4, 64])
    g.add_output(g.exp(x))
    compiler = ZeroCompiler(target="h200")
    assert compiler.arch == "sm_90a"
    module = compiler.optimize(g)
    assert module_target(module) == target_named("h200")
    assert isinstance(module.attributes[TARGET_ATTR], kernel.TargetAttr)
    assert compiler.compile(g).target == target_named("h200")
    assert module_target(ModuleOp([])) == DEFAULT_TARGET


def _gemm_schedule(graph: DataflowGraph, target: str) -> kernel.ScheduleAttr:
    module = ZeroCompiler(target=target).optimize(graph)
    (kfunc,) = [op for op in module.walk() if isinstance(op, kernel.FuncOp)]
    assert kfunc.schedule is not None
    return kfunc.schedule


def test_wave_quantization_reads_the_sm_count():
    """The SIMT gemm takes 128x128 tiles only where they give every SM a
    block: 120 such tiles do on an A100's 108 SMs, not on an H100's 132."""
    g = DataflowGraph("simt")
    a = g.add_input("a", [1280, 1001])  # K of 1001 f32: no tensor cores
    b = g.add_input("b", [1001, 1536])
    g.add_output(g.matmul(a, b))
    assert _gemm_schedule(g, "a100").tile.data[0].data == 128
    assert _gemm_schedule(g, "h100").tile.data[0].data == 64


DECODE_ATTENTION = (
    Path(__file__).parent.parent / "lit_tests" / "passes" / "attach-target.mlir"
)
"""A decode's attention kernel (32 query heads on 8 KV heads, one query, 8192
keys): the lit test's input, which checks the same splits through molten-opt."""


def _decode_split(target: Target) -> int:
    module = Parser(molten_context(), DECODE_ATTENTION.read_text()).parse_module()
    attach_target(module, target)
    KernelSchedule().apply(molten_context(), module)
    (kfunc,) = [op for op in module.walk() if isinstance(op, kernel.FuncOp)]
    return kfunc.schedule.split.data


def test_the_keys_split_for_the_targets_sms():
    """A decode's keys split (flash-decoding) into as many parts as two
    blocks an SM take: its 8 groups of query rows fill 2 x 108 / 8 = 27
    blocks each on an A100, 2 x 132 / 8 = 33 on an H100."""
    assert _decode_split(target_named("a100")) == 27
    assert _decode_split(target_named("h100")) == 33


def test_the_gemv_or_wgmma_estimate_reads_the_bandwidth():
    """Llama-3-8B's q, k and v at 3 tokens (x @ w.T, 3 x 6144 x 4096 bf16):
    on an H100 wgmma's estimate beats the GEMV's; on an H200, whose HBM
    streams the weight 1.43x as fast (what the GEMV's time is at few rows),
    the GEMV's wins. At 4 rows the GEMV is bound by its rows of A, not the
    stream, and wgmma takes it on both."""

    def picked(rows: int, target: str) -> kernel.ScheduleAttr:
        g = DataflowGraph("qkv")
        x = g.add_input("x", [rows, 4096], "bfloat16")
        w = g.add_input("w", [6144, 4096], "bfloat16")
        g.add_output(g.matmul(x, w, transpose_b=True))
        return _gemm_schedule(g, target)

    h100, h200 = picked(3, "h100"), picked(3, "h200")
    assert h100.mma_warps.data == kernel.WARPGROUP_WARPS and h100.k_lanes.data == 1
    assert h200.k_lanes.data == 32 and h200.mma_warps.data == 1
    assert picked(4, "h200").mma_warps.data == kernel.WARPGROUP_WARPS
