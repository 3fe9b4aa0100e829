"""The benchmark harness without a GPU: the suites (each case's graph, its
bytes and FLOPs, its compile), the derived figures, the markdown, merging
and comparing results files, the plot and the command line. Where torch is
installed, each case's PyTorch function is checked against its Molten graph
on the CPU (both in float64, at small sizes).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math

import numpy as np
import pytest

import molten
from benchmarks import report
from benchmarks.__main__ import main
from benchmarks.cases import LAYER_TOKENS, MAIN_SUITES, SUITES, Case
from molten.dialects import molten as dialect

ALL_CASES = [case for make in SUITES.values() for case in make()]


def test_the_issue_s_suites_and_shapes_are_all_there():
    ids = {suite: [c.id for c in SUITES[suite]()] for suite in MAIN_SUITES}
    assert (
        len(ids["seed"]) == 27
    )  # 2 hidden x 3 tokens + 3 tokens of the gate, x 3 dtypes
    assert "rms_norm*silu-8192x5120-bf16" in ids["seed"]
    assert ids["norms"] == [
        "layer_norm-16x64x256x256-f32",
        "softmax-4096x65536-f32",
        "softmax-8192x5120-f16",
    ]
    assert (
        len(ids["elementwise"]) == 6
        and "gelu(x*a+b)*c-134217728-bf16" in ids["elementwise"]
    )
    assert len(ids["gemm"]) == 12 and "gelu(x@w+b)-4096x4096x4096-f32" in ids["gemm"]
    assert "gelu(x@w.T+b)-1x4096x4096-bf16" in ids["gemm"]  # nn.Linear's weight
    models = ("qwen2.5-7b", "llama3-8b")
    assert ids["layer"] == [
        f"{model}.layer-{tokens}-bf16" for model in models for tokens in LAYER_TOKENS
    ] + [f"{model}.mlp-{tokens}-bf16" for model in models for tokens in (512, 2048)]
    assert ids["calls"] == [
        "rms_norm.call-1x3584-bf16",
        "gelu(x@w+b).call-1x4096x4096-bf16",
        *(f"{model}.layer-1-bf16" for model in models),
    ]
    every = [c.id for c in ALL_CASES]
    assert len(every) == len(set(every))


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.id)
def test_each_case_is_a_graph_of_its_operands(case: Case):
    graph = case.graph()
    assert [(t.name, tuple(t.shape), t.dtype) for t in graph.inputs] == [
        (o.name, o.shape, o.dtype or case.dtype) for o in case.operands
    ]
    assert len(graph.outputs) == 1


def test_bytes_count_each_input_and_output_once():
    by_id = {c.id: c for c in ALL_CASES}
    rms = by_id["rms_norm-2048x5120-f32"]
    assert rms.bytes == (2048 * 5120 * 2 + 5120) * 4
    gate = by_id["rms_norm*silu-8192x5120-f16"]
    assert gate.bytes == (8192 * 5120 * 3 + 5120) * 2
    gemm = by_id["gelu(x@w+b)-2048x4096x4096-bf16"]
    assert gemm.bytes == (2048 * 4096 + 4096 * 4096 + 4096 + 2048 * 4096) * 2
    assert gemm.flops == 2 * 2048 * 4096 * 4096
    assert by_id["gelu(x*a+b)*c-65536-f32"].bytes == 5 * 65536 * 4
    # A lookup moves the rows its ids name (read, then written), not its table.
    embedding = by_id["embedding-4096x152064x3584-bf16"]
    assert embedding.bytes == 4096 * 8 + 2 * 4096 * 3584 * 2


def test_every_case_compiles_to_one_kernel():
    # One fused kernel per case is what these suites measure; the layer
    # suite measures a whole decoder layer (its kernel count is in
    # tests/test_decoder_layer.py). The kernels are counted where they are
    # outlined; tests/test_generated_sources.py compiles every case whole.
    from molten.dialects import kernel

    for case in ALL_CASES:
        if case.suite == "layer" or case.build is not None:
            continue
        module = molten.ZeroCompiler().optimize(case.graph())
        kernels = [op for op in module.walk() if isinstance(op, kernel.FuncOp)]
        assert len(kernels) == 1, case.id


def _small(case: Case) -> Case:
    """The case with every dimension cut to at most 7 (a function of the
    dimension, so operands that share a size still do)."""
    operands = tuple(
        dataclasses.replace(
            o, shape=tuple(min(d, 7) for d in o.shape), high=min(o.high, 7)
        )
        for o in case.operands
    )
    return dataclasses.replace(case, operands=operands)


def _arrays(case: Case, rng) -> list[np.ndarray]:
    """Random operands: ids in [0, high), the others normal."""
    return [
        rng.integers(0, o.high, o.shape)
        if o.init == "index"
        else rng.standard_normal(o.shape)
        for o in case.operands
    ]


def test_each_pytorch_function_computes_its_molten_graph():
    torch = pytest.importorskip("torch")
    families = {(c.molten, c.torch): c for c in ALL_CASES if c.build is None}
    rng = np.random.default_rng(7)
    for case in map(_small, families.values()):
        arrays = _arrays(case, rng)
        want = molten.interpret(case.graph(), *arrays, reference=True)
        got = case.torch(*(torch.from_numpy(a) for a in arrays)).numpy()
        # A composite's float parameter (attention's scale) is the f32 value
        # the graph's kernels compute with, also in the float64 reference
        # (interpreters.molten.f32_parameter); torch in float64 keeps it exact.
        parameter = any(
            isinstance(op, dialect.AttentionOp) for op in case.graph()._block.ops
        )
        rtol, atol = (1e-6, 1e-7) if parameter else (1e-9, 1e-12)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=case.id)
        for name, reference in case.references.items():
            # Only the shape is checked, in float32: FlexAttention on the CPU
            # takes no float64.
            floats = (
                torch.from_numpy(a).float()
                if a.dtype.kind == "f"
                else torch.from_numpy(a)
                for a in arrays
            )
            assert reference(*floats).shape == got.shape, name


def test_the_pytorch_layer_computes_the_example_s_layer():
    torch = pytest.importorskip("torch")
    from benchmarks.cases import (
        _decoder_layer_example,
        torch_decoder_layer,
        torch_mlp_block,
    )

    example = _decoder_layer_example()
    for qkv_bias in (True, False):
        config = example.LayerConfig(64, 96, 4, 2, qkv_bias=qkv_bias)
        graph = example.decoder_layer(config, 5, "float32")
        rng = np.random.default_rng(3)
        arrays = [rng.standard_normal(t.shape.dims) for t in graph.inputs]
        want = molten.interpret(graph, *arrays, reference=True)
        got = torch_decoder_layer(config)(*map(torch.from_numpy, arrays)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        graph = example.mlp_block(config, 5, "float32")
        arrays = [rng.standard_normal(t.shape.dims) for t in graph.inputs]
        want = molten.interpret(graph, *arrays, reference=True)
        got = torch_mlp_block(config)(*map(torch.from_numpy, arrays)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_relative_error_is_infinite_on_nan_and_on_a_shape_mismatch():
    torch = pytest.importorskip("torch")
    from benchmarks.harness import relative_error

    ref = torch.tensor([1.0, -4.0], dtype=torch.float64)
    assert relative_error(torch.tensor([1.0, -3.0]), ref) == pytest.approx(0.25)
    assert relative_error(torch.tensor([math.nan, -4.0]), ref) == math.inf
    assert relative_error(torch.tensor([1.0]), ref) == math.inf


# ---------------------------------------------------------------------------
# Results files, from a hand-made run.
# ---------------------------------------------------------------------------


def _timing(us: float) -> dict:
    return {
        "gpu_us": {"median": us, "q1": us, "q3": us, "min": us, "reps": 10},
        "call_us": {"median": us + 20, "q1": us, "q3": us, "min": us, "reps": 5},
    }


def _case(case_id: str, *, bytes: int, flops: int = 0, **timings: float) -> dict:
    op, shape, dtype = case_id.rsplit("-", 2)
    return {
        "id": case_id,
        "op": op,
        "shape": [int(d) for d in shape.split("x")],
        "dtype": {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[dtype],
        "bytes": bytes,
        "flops": flops,
        "check": {"errors": {"eager": 1e-7, "molten": 2e-7}, "bound": 1e-5,
                  "molten_ok": True, "compile_ok": True},
        "timings": {name: _timing(us) for name, us in timings.items()},
    }  # fmt: skip


def _suite(name: str, cases: list[dict], copy_tbps: float = 3.0) -> dict:
    return {
        "suite": name,
        "started": "2026-11-22T09:00:00+00:00",
        "finished": "2026-11-22T09:01:00+00:00",
        "environment": {"device": "NVIDIA H100 80GB HBM3", "sm_count": 132,
                        "cuda_driver": "13.0", "molten": "0.1.0+abc", "torch": "2.11",
                        "triton": "3.6"},
        "timing": {"event_floor_us": 1.2, "flush_bytes": 256 << 20},
        "copy": [{"bytes": 1 << 30, "tbps": copy_tbps}],
        "copy_tbps": copy_tbps,
        "cases": cases,
    }  # fmt: skip


def _results() -> dict:
    seed = _suite(
        "seed",
        [
            # 300 MB in 100 us: 3 TB/s, all of the copy bandwidth.
            _case("rms_norm-2048x5120-f32", bytes=300_000_000, molten=100.0,
                  eager=150.0, compile=80.0),
            _case("rms_norm-1x5120-f16", bytes=30_000, molten=5.0, eager=10.0,
                  compile=5.0),
        ],
    )  # fmt: skip
    gemm = _suite(
        "gemm",
        [
            _case("gelu(x@w+b)-4096x4096x4096-f16", bytes=10**8, flops=2 * 4096**3,
                  molten=1000.0, eager=300.0, compile=250.0, cublas=200.0),
        ],
    )  # fmt: skip
    return {
        "schema": 1,
        "device": "NVIDIA H100 80GB HBM3",
        "date": "2026-11-22",
        "suites": {"seed": seed, "gemm": gemm},
    }


def test_derived_figures_come_from_bytes_flops_and_the_copy_bandwidth():
    results = _results()
    seed = results["suites"]["seed"]
    d = report.derive(seed["cases"][0], seed["copy_tbps"])
    assert d["implementations"]["molten"]["tbps"] == pytest.approx(3.0)
    assert d["implementations"]["molten"]["pct_copy"] == pytest.approx(100.0)
    assert d["speedup"] == pytest.approx({"eager": 1.5, "compile": 0.8})
    gemm = results["suites"]["gemm"]["cases"][0]
    g = report.derive(gemm, 3.0)["implementations"]
    assert g["cublas"]["tflops"] == pytest.approx(2 * 4096**3 / 200e-6 / 1e12)
    summary = report.suite_summary(seed)
    assert summary["compile"] == {
        "geomean": pytest.approx(0.8**0.5),
        "wins": 0,
        "timed": 2,
    }
    assert summary["eager"]["wins"] == 2


def test_markdown_shows_each_case_losses_included_and_refusals():
    results = _results()
    refused = results["suites"]["seed"]["cases"][1]
    refused["refused"] = "Molten's error 0.5 exceeds the bound 0.002; not timed"
    refused["check"]["molten_ok"] = False
    del refused["timings"]["molten"]
    text = report.markdown(results)
    assert "# Molten benchmarks: NVIDIA H100 80GB HBM3, 2026-11-22" in text
    row = next(line for line in text.splitlines() if "| 2048x5120 |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:12] == [
        "300.0", "100.0", "150.0", "80.0", "3.00", "100%", "125%", "1.50x", "0.80x",
    ]  # fmt: skip
    assert "| rms_norm | 1x5120 | float16 | 0.0 | refused |" in text
    assert "- rms_norm-1x5120-f16: Molten's error 0.5 exceeds" in text
    assert "Checks: 1 of 2 Molten outputs within the bound" in text
    gemm_row = next(line for line in text.splitlines() if "4096x4096x4096" in line)
    assert "| 1,000 | 300.0 | 250.0 | 200.0 | 137.4 | 687.2 | 20% |" in gemm_row
    assert "0.30x | 0.25x" in gemm_row  # Molten loses, and the table says so


def test_markdown_sets_the_backend_beside_the_graph_api():
    """A case timed through torch.compile(backend="molten") gets a row of the
    backend's table: both medians, their ratio, and any part that fell back."""
    layer = _case("llama3-8b.layer-128-bf16", bytes=10**9, flops=10**12,
                  molten=250.0, eager=400.0, compile=300.0)  # fmt: skip
    layer["timings"]["molten-backend"] = _timing(255.0)
    results = _results()
    results["suites"]["layer"] = _suite("layer", [layer])
    text = report.markdown(results)
    assert 'torch.compile(backend="molten") on the PyTorch function' in text
    assert (
        "| llama3-8b.layer | 128 | bfloat16 | 250.0 | 255.0 | 1.020 | 300.0 | no |"
        in text
    )
    layer["backend_fallbacks"] = ["fused_0 runs eagerly from now on: ..."]
    assert "| 1.020 | 300.0 | fused_0 runs eagerly" in report.markdown(results)


def test_merge_adds_or_replaces_a_suite_and_keeps_to_one_device(tmp_path):
    path = tmp_path / "nvidia-h100-80gb-hbm3-2026-11-22.json"
    results = _results()
    report.merge(path, results["suites"]["seed"])
    report.merge(path, results["suites"]["gemm"])
    rerun = copy.deepcopy(results["suites"]["seed"])
    rerun["cases"] = rerun["cases"][:1]
    merged = report.merge(path, rerun)
    assert list(merged["suites"]) == ["seed", "gemm"]
    assert len(json.loads(path.read_text())["suites"]["seed"]["cases"]) == 1
    other = copy.deepcopy(rerun)
    other["environment"]["device"] = "NVIDIA H200"
    with pytest.raises(ValueError, match="holds results of NVIDIA H100"):
        report.merge(path, other)
    assert report.results_path(tmp_path, "NVIDIA H100 80GB HBM3", "2026-11-22") == path


def test_merge_joins_a_part_of_a_suite_to_the_same_moltens_earlier_run(tmp_path):
    path = tmp_path / "nvidia-h100-80gb-hbm3-2026-11-22.json"
    seed = _results()["suites"]["seed"]
    assert len(seed["cases"]) == 2
    first, second = copy.deepcopy(seed), copy.deepcopy(seed)
    first["cases"], second["cases"] = seed["cases"][:1], seed["cases"][1:]
    second["started"], second["finished"] = "2026-11-22T13:00:00", "2026-11-22T13:01:00"
    report.merge(path, first, part=True)
    joined = report.merge(path, second, part=True)["suites"]["seed"]
    assert [c["id"] for c in joined["cases"]] == [c["id"] for c in seed["cases"]]
    assert (joined["started"], joined["finished"]) == (
        first["started"],
        "2026-11-22T13:01:00",
    )
    rerun = copy.deepcopy(first)
    rerun["cases"][0]["timings"]["molten"]["gpu_us"]["median"] = 1.0
    joined = report.merge(path, rerun, part=True)["suites"]["seed"]
    assert len(joined["cases"]) == 2
    assert joined["cases"][0]["timings"]["molten"]["gpu_us"]["median"] == 1.0
    # Another Molten's part replaces the entry: no suite mixes two trees.
    other = copy.deepcopy(second)
    other["environment"]["molten"] = "0.1.0+other"
    replaced = report.merge(path, other, part=True)["suites"]["seed"]
    assert [c["id"] for c in replaced["cases"]] == [seed["cases"][1]["id"]]


def test_compare_flags_large_cases_that_moved_more_than_the_threshold():
    first = _results()
    second = copy.deepcopy(first)
    cases = second["suites"]["seed"]["cases"]
    cases[0]["timings"]["molten"]["gpu_us"]["median"] = 110.0  # +10%, large
    cases[0]["timings"]["eager"]["gpu_us"]["median"] = 151.5  # +1%, large
    cases[1]["timings"]["molten"]["gpu_us"]["median"] = 10.0  # +100%, small
    text, outliers = report.compare(first, second, threshold_pct=3, large_us=50)
    assert outliers == ["seed/rms_norm-2048x5120-f32/molten: +10.0%"]
    assert text.startswith("6 of 7 timings of at least 50 us agree within 3%")
    assert "| seed | rms_norm-1x5120-f16 | Molten | 5.0 | 10.0 | +100.0% |" in text


def test_plot_draws_both_panels(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "results.png"
    report.plot(_results(), path)
    assert path.read_bytes().startswith(b"\x89PNG")


def test_command_line_lists_cases_and_redraws_a_report(tmp_path, capsys):
    assert main(["list", "--suite", "norms"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 3 and "softmax-4096x65536-f32" in listed[1]
    assert "2,147.48 MB" in listed[1]
    assert main(["list", "--suite", "gemm", "--dtype", "float16", "--match", "1x"]) == 0
    assert capsys.readouterr().out.count("gelu(x@w+b)-1x4096x4096-f16") == 1
    # --suite repeats: each suite named, once.
    assert (
        main(["list", "--suite", "norms", "--suite", "decode", "--suite", "norms"]) == 0
    )
    suites = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert suites == ["norms"] * 3 + ["decode"] * 12
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_results()))
    assert main(["report", str(path), "--no-plot"]) == 0
    assert path.with_suffix(".md").read_text() == report.markdown(_results())
    second = tmp_path / "s.json"
    slower = _results()
    slower["suites"]["gemm"]["cases"][0]["timings"]["molten"]["gpu_us"]["median"] = 2000
    second.write_text(json.dumps(slower))
    assert main(["compare", str(path), str(second)]) == 0
    assert main(["compare", str(path), str(second), "--strict"]) == 1
    assert "+100.0% **over**" in capsys.readouterr().out
