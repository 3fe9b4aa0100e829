"""Autotuning on a GPU (sm_90: the wgmma gemm has candidates): candidates
timed, the winner stored and reused without timing, the tuned graph
correct; `molten tune`. Marker `gpu`."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from test_runtime_gpu import GPU_MISSING, TOLERANCE, _reference

import molten
from molten import DeviceArray
from molten.ir import DataflowGraph
from molten.tuning import TuningDatabase


def _sm_90_missing() -> str | None:
    if GPU_MISSING is not None:
        return GPU_MISSING
    from molten.passes.schedule.target import device_native_arch
    from molten.runtime import current_device_id

    native = device_native_arch(current_device_id())
    return None if native == "sm_90a" else f"wgmma needs an sm_90 GPU, not {native}"


SM_90_MISSING = _sm_90_missing()
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(SM_90_MISSING is not None, reason=str(SM_90_MISSING)),
]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MOLTEN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _linear(m=20, n=1000, k=1000):
    g = DataflowGraph("lin")
    x = g.add_input("x", [m, k], "bfloat16")
    w = g.add_input("w", [n, k], "bfloat16")
    b = g.add_input("b", [n], "bfloat16")
    g.add_output(g.gelu(g.matmul(x, w, transpose_b=True) + b), "y")
    return g


def test_autotune_times_stores_and_reuses(cache_dir):
    g = _linear()
    tuner = molten.ZeroCompiler(arch="sm_90a", autotune=3, progress=False)
    tuned = tuner.compile(g)
    (name,) = tuner.tuned
    timed = tuner.trials[name]
    assert len(timed) == 3 and all(t.microseconds for t in timed)
    winner = min(timed, key=lambda t: t.microseconds)
    assert tuner.tuned[name] == winner.schedule
    assert f"molten.tuned = {{{name} = {winner.schedule}}}" in tuned.ir
    entries = TuningDatabase().entries
    assert len(entries) == 1
    (entry,) = entries.values()
    assert entry["schedule"] == str(winner.schedule)

    again = molten.ZeroCompiler(arch="sm_90a", autotune=3, progress=False)
    rerun = again.compile(g)
    assert again.trials == {} and again.tuned == tuner.tuned
    assert rerun.source == tuned.source

    # Unpinned, the JIT compiles for sm_90a with the same tuning: the
    # database's schedule, nothing timed again.
    portable = molten.ZeroCompiler(autotune=3, progress=False).compile(g)
    assert portable.jit_target("sm_90a").source == tuned.source
    assert len(TuningDatabase().entries) == 1

    rng = np.random.default_rng()
    arrays = [rng.uniform(-2, 2, t.shape.dims) for t in g.inputs]
    inputs = [DeviceArray.from_numpy(a, "bfloat16") for a in arrays]
    got = portable(*inputs).numpy().astype(np.float64)
    want = _reference(g, *arrays)
    error = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert error < TOLERANCE["bfloat16"]


def test_cli_tune_prints_the_candidates_and_writes_the_files(tmp_path, cache_dir):
    spec = tmp_path / "lin.mlir"
    spec.write_text(_linear(70, 1024, 4000).to_mlir())
    out = tmp_path / "out"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "molten.tools.cli",
            "tune",
            str(spec),
            "--candidates",
            "2",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.count(" us  #kernel.schedule<") == 2, run.stdout
    assert "<-" in run.stdout
    final = next(out.glob("*.final.mlir")).read_text()
    assert "molten.tuned" in final
    again = subprocess.run(
        [sys.executable, "-m", "molten.tools.cli", "tune", str(spec)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert again.returncode == 0, again.stderr
    assert "(from the tuning database)" in again.stdout
