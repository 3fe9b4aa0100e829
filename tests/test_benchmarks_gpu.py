"""The benchmark harness on a GPU: the timer keeps host overhead out of GPU
times, a wrong Molten kernel is refused and not timed, and the smoke suite
runs end to end into a results file that compares equal to itself.

Marker `gpu`: skipped without torch or a CUDA GPU.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU for torch"),
]


@pytest.fixture(scope="module")
def timer():
    from benchmarks.timing import Timer

    return Timer(torch.device("cuda"), budget_s=0.05)


def test_gpu_time_leaves_out_the_host_time_and_call_latency_keeps_it(timer):
    x = torch.ones(1024, device="cuda")

    def slow_host_fast_kernel():
        time.sleep(300e-6)
        return x * 2

    gpu = timer.gpu_time(slow_host_fast_kernel, reps=30)
    call = timer.call_latency(slow_host_fast_kernel)
    assert gpu.median < 30, gpu  # the multiply, not the 300 us on the host
    assert call.median > 300, call


def test_gpu_time_follows_the_work(timer):
    small = torch.ones(2**20, device="cuda")
    large = torch.ones(2**27, device="cuda")
    t_small = timer.gpu_time(lambda: small.mul_(1.0), reps=30).median
    t_large = timer.gpu_time(lambda: large.mul_(1.0), reps=30).median
    # 128x the bytes: at least 30x the time (small calls carry fixed costs).
    assert t_large > 30 * t_small, (t_small, t_large)
    samples, tbps = timer.copy_bandwidth(256 * 2**20)
    assert samples.q1 <= samples.median <= samples.q3


def test_a_wrong_molten_kernel_is_refused_and_not_timed(timer):
    from benchmarks.cases import smoke_suite
    from benchmarks.harness import run_case
    from molten import ops

    case = next(c for c in smoke_suite() if c.op == "gelu(x*a+b)*c")
    wrong = dataclasses.replace(case, molten=lambda x, a, b, c: ops.gelu(x * a + b) + c)
    record = run_case(wrong, timer, seed=1)
    assert not record["check"]["molten_ok"]
    assert "exceeds the bound" in record["refused"]
    assert "molten" not in record["timings"]
    assert set(record["timings"]) == {"eager", "compile"}


def test_a_molten_call_that_fails_is_recorded_and_not_timed(timer, monkeypatch):
    from benchmarks.cases import smoke_suite
    from benchmarks.harness import run_case
    from molten import LaunchError
    from molten.compiler import CompiledGraph

    def refuse(self, *inputs, out=None, stream=None):
        raise LaunchError("cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE")

    monkeypatch.setattr(CompiledGraph, "__call__", refuse)
    record = run_case(smoke_suite()[0], timer, seed=2)
    assert record["molten_unavailable"].startswith("LaunchError: cuLaunchKernel")
    assert "refused" not in record and "molten" not in record["timings"]


def test_the_smoke_suite_runs_end_to_end(tmp_path):
    from benchmarks import report
    from benchmarks.cases import smoke_suite
    from benchmarks.harness import run_suite

    lines = []
    result = run_suite("smoke", smoke_suite(), budget_s=0.02, progress=lines.append)
    assert len(lines) == 1 + len(result["cases"])
    for case in result["cases"]:
        assert case["check"]["molten_ok"], case["check"]
        assert {"molten", "eager", "compile"} <= set(case["timings"])
        for timing in case["timings"].values():
            assert timing["gpu_us"]["median"] > 0 and timing["call_us"]["median"] > 0
    assert "cublas" in result["cases"][-1]["timings"]
    assert 0.3 < result["copy_tbps"] < 20
    path = tmp_path / "smoke.json"
    results = report.merge(path, result)
    assert "| smoke | 3 |" in report.markdown(results)
    text, outliers = report.compare(results, results)
    assert not outliers and "+0.0%" in text
