"""Autotuning without a GPU: the candidate schedules, the kernel signature,
the tuning database, a compile that takes its schedules from the database,
and the errors where timing would need a GPU (tests/test_tuning_gpu.py
times candidates); and schedules given by hand to `compile`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from xdsl.utils.exceptions import PassFailedException

import molten
import molten.tuning as tuning_module
from molten.dialects import kernel
from molten.errors import MoltenError
from molten.ir import DataflowGraph
from molten.passes.schedule.kernel_schedule import schedule_candidates
from molten.passes.schedule.target import target_named
from molten.pipeline import OUTLINE_PIPELINE, run_pipeline
from molten.runtime.cache import CacheWarning
from molten.tuning import (
    Trial,
    TuningDatabase,
    best,
    kernel_signature,
    molten_version,
    tunable_kernels,
)

DEVICE = "NVIDIA H100 80GB HBM3"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MOLTEN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def linear(m: int, n: int, k: int, dtype: str = "bfloat16", name="lin"):
    g = DataflowGraph(name)
    x = g.add_input("x", [m, k], dtype)
    w = g.add_input("w", [n, k], dtype)
    b = g.add_input("b", [n], dtype)
    g.add_output(g.gelu(g.matmul(x, w, transpose_b=True) + b), "y")
    return g


def only_kernel(g: DataflowGraph) -> kernel.FuncOp:
    outlined = run_pipeline(g.to_module(), OUTLINE_PIPELINE)
    (found,) = list(tunable_kernels(outlined))
    return found


def test_wgmma_gemm_candidates_start_with_the_heuristic():
    g = linear(300, 1024, 2048)
    kfunc = only_kernel(g)
    candidates = schedule_candidates(kfunc, 6, target_named("sm_90a"))
    picked = molten.ZeroCompiler(arch="sm_90a").optimize(g)
    (scheduled,) = [op for op in picked.walk() if isinstance(op, kernel.FuncOp)]
    assert candidates[0] == scheduled.schedule
    assert 1 < len(candidates) <= 6
    shapes = [
        (
            c.tile.data[0].data,
            c.tile.data[1].data,
            c.split.data,
            c.persistent.data,
            c.cluster.data,
        )
        for c in candidates
    ]
    assert len(set(shapes)) == len(shapes), "one candidate per tile and split"
    assert all(c.mma_warps.data == kernel.WARPGROUP_WARPS for c in candidates)
    # The last four: the persistent TMA kernel, which the heuristic does not
    # pick for a 300 x 1024 output with 32 K steps: the estimate's three
    # fastest widths (128, 144 and 160: 24 to 21 tiles, one round, the
    # narrower faster), then 128x256 in clusters of two; with fewer than
    # six candidates there is no room.
    persistent = [
        (c.tile.data[1].data, c.persistent.data, c.cluster.data)
        for c in candidates[-4:]
    ]
    assert persistent == [(128, 132, 1), (144, 132, 1), (160, 132, 1), (256, 132, 2)]
    assert not any(c.persistent.data for c in candidates[:-4])
    fewer = schedule_candidates(kfunc, 5, target_named("sm_90a"))
    assert not any(c.persistent.data for c in fewer)


@pytest.mark.parametrize(
    "graph, arch",
    [
        (linear(300, 1024, 2048), "sm_90"),  # mma.sync: one schedule
        (linear(4, 1024, 2048), "sm_90a"),  # a GEMV
        (linear(300, 1024, 2048, "float32"), "sm_90a"),  # SIMT
    ],
    ids=["mma-sync", "gemv", "f32"],
)
def test_other_kernels_have_one_candidate(graph, arch):
    assert len(schedule_candidates(only_kernel(graph), 8, target_named(arch))) == 1


def test_signature_ignores_name_and_schedule_not_shape_or_target():
    a = only_kernel(linear(300, 1024, 2048, name="first"))
    b = only_kernel(linear(300, 1024, 2048, name="second"))
    b.schedule = kernel.ScheduleAttr("gemm_simt", 128, tile=(64, 64, 16))
    assert kernel_signature(a, "sm_90a", 132) == kernel_signature(b, "sm_90a", 132)
    other = only_kernel(linear(301, 1024, 2048))
    assert kernel_signature(a, "sm_90a", 132) != kernel_signature(other, "sm_90a", 132)
    assert kernel_signature(a, "sm_90a", 132) != kernel_signature(a, "sm_90a", 114)
    assert kernel_signature(a, "sm_90a", 132) != kernel_signature(a, "sm_100a", 132)


def test_database_keeps_schedules_across_instances(cache_dir):
    schedule = kernel.ScheduleAttr(
        "gemm_wgmma", 128, tile=(64, 64, 64), warp=(64, 64), split=2
    )
    key = TuningDatabase.key("abc", DEVICE, "0.1.0")
    TuningDatabase().store(key, schedule, {"microseconds": 1.5})
    assert TuningDatabase().schedule(key) == schedule
    assert (
        TuningDatabase().schedule(TuningDatabase.key("abc", "other", "0.1.0")) is None
    )
    # Two processes' entries merge: each store re-reads the file first.
    first, second = TuningDatabase(), TuningDatabase()
    first.store("one", schedule, {})
    second.store("two", schedule, {})
    assert {"one", "two", key} <= set(TuningDatabase().entries)


def test_damaged_database_warns_and_is_empty(cache_dir):
    cache_dir.mkdir(parents=True)
    (cache_dir / "tuning.json").write_text("{ not json")
    with pytest.warns(CacheWarning, match="could not be read"):
        database = TuningDatabase()
    assert database.entries == {}
    entry = {"schema": 1, "entries": {"k": {"schedule": "#kernel.schedule<oops"}}}
    (cache_dir / "tuning.json").write_text(json.dumps(entry))
    assert TuningDatabase().schedule("k") is None  # retuned, not fatal


def test_best_is_the_fastest_correct_trial():
    a, b, c = (kernel.ScheduleAttr("pointwise", n) for n in (128, 256, 512))
    trials = [Trial(a, 9.0), Trial(b, None, "wrong"), Trial(c, 4.0)]
    assert best(trials).schedule == c
    assert best([Trial(b, None, "wrong")]) is None


def test_autotuned_compile_takes_the_stored_schedule(cache_dir, monkeypatch):
    """A kernel the database has is compiled with its stored schedule (no
    GPU, nothing timed), listed in the final IR's molten.tuned."""
    monkeypatch.setattr(tuning_module, "tuning_device", lambda arch: (0, DEVICE))
    g = linear(300, 1024, 2048)
    kfunc = only_kernel(g)
    candidates = schedule_candidates(kfunc, 8, target_named("sm_90a"))
    stored = candidates[-5]  # the last of the cp.async kernel's
    key = TuningDatabase.key(
        kernel_signature(kfunc, "sm_90a", 132), DEVICE, molten_version()
    )
    TuningDatabase().store(key, stored, {})
    compiler = molten.ZeroCompiler(arch="sm_90a", autotune=True)
    compiled = compiler.compile(g)
    assert compiler.tuned == {"lin_gemm0": stored}
    assert compiler.trials == {}
    assert f"molten.tuned = {{lin_gemm0 = {stored}}}" in compiled.ir
    untuned = molten.ZeroCompiler(arch="sm_90a").compile(g)
    assert "molten.tuned" not in untuned.ir
    rows, cols, _ = (t.data for t in stored.tile)
    grid = compiled.kernels[0].grid
    assert grid == (-(-1024 // cols), -(-300 // rows), stored.split.data)


def test_autotune_without_a_gpu_is_a_clear_error(cache_dir, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    compiler = molten.ZeroCompiler(arch="sm_90a", autotune=True)
    try:
        compiler.compile(linear(300, 1024, 2048))
    except MoltenError as error:
        assert "CUDA" in str(error) or "GPU" in str(error) or "device" in str(error)
    else:  # a GPU was found after all: tested in test_tuning_gpu.py
        pytest.skip("a GPU is present")


def test_nothing_to_tune_needs_no_gpu(cache_dir):
    """Kernels with one candidate (here: the portable target's) are not
    tuned, so no device is asked for."""
    compiler = molten.ZeroCompiler(autotune=True)
    compiled = compiler.compile(linear(300, 1024, 2048))
    assert compiler.tuned == {} and "molten.tuned" not in compiled.ir


def test_cli_tune_without_a_gpu_fails_cleanly(tmp_path, cache_dir):
    spec = tmp_path / "lin.mlir"
    spec.write_text(linear(300, 1024, 2048).to_mlir())
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "molten.tools.cli",
            "tune",
            str(spec),
            "--arch",
            "sm_90a",
        ],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    if run.returncode == 0:
        pytest.skip("a GPU is present")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.startswith("molten: error:"), run.stderr


def test_compile_takes_a_schedule_by_hand():
    """`compile(graph, schedules=...)` gives a kernel a schedule of the
    user's: here the persistent TMA gemm (3 x 4 tiles of 128x256 for 300 x
    1024: 12 blocks of three warpgroups; tensor maps made by the launcher)."""
    g = linear(300, 1024, 2048)
    schedule = kernel.ScheduleAttr(
        "gemm_tma", 384, tile=(128, 256, 64), warp=(64, 256), stages=4, persistent=132
    )
    compiled = molten.ZeroCompiler(arch="sm_90a").compile(
        g, schedules={"lin_gemm0": schedule}
    )
    assert compiled.kernels[0].grid == (12, 1, 1)
    assert compiled.kernels[0].block == (384, 1, 1)
    assert "cuda.make_tensor_map" in compiled.ir
    assert "cp.async.bulk.tensor.2d" in compiled.source


def test_hand_schedules_go_with_the_jit_target():
    """Unpinned, the graph is compiled again for the device's best target
    when it runs: with the same hand schedules."""
    g = linear(300, 1024, 2048)
    schedule = kernel.ScheduleAttr(
        "gemm_tma", 384, tile=(128, 256, 64), warp=(64, 256), stages=4, persistent=132
    )
    compiled = molten.ZeroCompiler().compile(g, schedules={"lin_gemm0": schedule})
    native = compiled.jit_target("sm_90a")
    assert native is not compiled and native.arch == "sm_90a"
    assert native.kernels[0].block == (384, 1, 1)
    assert "cuda.make_tensor_map" in native.ir


def test_compile_schedules_name_kernels_and_are_schedules():
    g = linear(300, 1024, 2048)
    compiler = molten.ZeroCompiler(arch="sm_90a")
    with pytest.raises(MoltenError, match="no kernel @nope to schedule; the graph's"):
        compiler.compile(
            g,
            schedules={
                "nope": kernel.ScheduleAttr("gemm_simt", 128, tile=(64, 64, 16))
            },
        )
    with pytest.raises(MoltenError, match="the schedule of @lin_gemm0 is a str"):
        compiler.compile(g, schedules={"lin_gemm0": "tile = [64, 64, 64]"})


def test_persistent_schedule_needs_rows_tma_reads():
    """A hand schedule of the persistent TMA gemm for rows TMA cannot read
    (K = 100 bf16: 200 bytes) fails in the tile pass, naming the kernel."""
    g = DataflowGraph("odd")
    x = g.add_input("x", [300, 100], "bfloat16")
    w = g.add_input("w", [256, 100], "bfloat16")
    g.add_output(g.matmul(x, w, transpose_b=True), "y")
    schedule = kernel.ScheduleAttr(
        "gemm_tma", 384, tile=(128, 256, 64), warp=(64, 256), stages=4, persistent=132
    )
    with pytest.raises(PassFailedException, match="@odd_gemm0: a persistent TMA gemm"):
        molten.ZeroCompiler(arch="sm_90a").compile(g, schedules={"odd_gemm0": schedule})
