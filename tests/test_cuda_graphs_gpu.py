"""Compiled graphs captured as CUDA graphs and replayed: Molten's own
capture (`compiled.cuda_graph(...)`) and Molten's calls inside torch's
(`torch.cuda.graph`), on one kernel, on a decoder layer with buffers
between its kernels, and on a split-K gemm whose counters a call keeps.
Every replay runs on fresh values written into the captured inputs, its
outputs poisoned first, against the float64 interpreter or a plain call.

Marker `gpu`: skipped without torch and a CUDA GPU.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import molten
from molten import InputError, ZeroCompiler
from molten.ir import DataflowGraph

try:  # tests/ is a package (tests/__init__.py) or a plain directory
    from .conftest import split_k_linear
except ImportError:  # pragma: no cover
    from conftest import split_k_linear

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from decoder_layer import CONFIGS, decoder_layer  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch", reason="the tests hold their arrays in torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")
    return torch


def _rms_norm(rows: int, hidden: int, dtype: str) -> DataflowGraph:
    g = DataflowGraph("norm")
    x = g.add_input("x", [rows, hidden], dtype)
    w = g.add_input("w", [hidden], dtype)
    g.add_output(g.rms_norm(x, w), "y")
    return g


def _interpreted(graph: DataflowGraph, *tensors) -> np.ndarray:
    arrays = [t.double().cpu().numpy() for t in tensors]
    return molten.interpret(graph, *arrays, reference=True)


def _relative(got, want) -> float:
    got = got.double().cpu().numpy()
    assert not np.isnan(got).any(), "NaN in the output: the replay did not write it"
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


def test_replay_reads_new_input_values(torch):
    graph = _rms_norm(3, 3584, "bfloat16")
    compiled = ZeroCompiler().compile(graph)
    x = torch.randn(3, 3584, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(3584, device="cuda", dtype=torch.bfloat16)
    captured = compiled.cuda_graph(x, w)
    y = captured.outputs
    assert y.shape == (3, 3584) and y.dtype == torch.bfloat16
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        w.copy_(torch.randn_like(w))
        y.fill_(float("nan"))
        assert captured.replay() is y
        torch.cuda.synchronize()
        assert _relative(y, _interpreted(graph, x, w)) < 1e-2


def test_replay_on_a_stream_and_into_out(torch):
    graph = _rms_norm(1, 5120, "float32")
    compiled = ZeroCompiler().compile(graph)
    x = torch.randn(1, 5120, device="cuda")
    w = torch.randn(5120, device="cuda")
    out = torch.empty(1, 5120, device="cuda")
    captured = compiled.cuda_graph(x, w, out=out)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out.fill_(float("nan"))
        x.mul_(2.0)
        assert captured.replay(stream=side) is out
    side.synchronize()
    assert _relative(out, _interpreted(graph, x, w)) < 1e-5


def test_capture_checks_its_arguments_as_a_call_does(torch):
    compiled = ZeroCompiler().compile(_rms_norm(2, 512, "float32"))
    x = torch.randn(2, 513, device="cuda")
    w = torch.randn(512, device="cuda")
    with pytest.raises(InputError, match=r"input 'x' .* has shape \(2, 513\)"):
        compiled.cuda_graph(x, w)


@pytest.mark.parametrize("tokens", [1, 64])
def test_a_captured_decoder_layer_matches_its_call(torch, tokens):
    """Nine to twelve kernels and the buffers between them, in one graph."""
    config = CONFIGS["qwen2.5-7b"]
    compiled = ZeroCompiler().compile(decoder_layer(config, tokens, "bfloat16"))
    inputs = [
        torch.randn(spec.shape, device="cuda").to(torch.bfloat16) * 0.05
        for spec in compiled.executable().inputs
    ]
    captured = compiled.cuda_graph(*inputs)
    for _ in range(2):
        for tensor in inputs:
            tensor.copy_(torch.randn_like(tensor) * 0.05)
        want = compiled(*inputs).double().cpu().numpy()
        captured.outputs.fill_(float("nan"))
        captured.replay()
        torch.cuda.synchronize()
        assert _relative(captured.outputs, want) < 1e-2


def test_split_k_counters_inside_a_capture(torch):
    """The split-K gemm's counters, kept across calls, are made and zeroed
    within a capture instead (a kept one would outlive the graph's memory),
    by Molten's capture and by torch's."""
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the wgmma gemm (sm_90a) runs on sm_90 devices only")
    compiled = split_k_linear()
    xs = torch.randn(16, 8192, device="cuda", dtype=torch.bfloat16)
    ws = torch.randn(1024, 8192, device="cuda", dtype=torch.bfloat16)
    ours = compiled.cuda_graph(xs, ws)
    theirs_out = torch.empty(16, 1024, device="cuda", dtype=torch.bfloat16)
    compiled(xs, ws, out=theirs_out)  # warm up outside torch's capture
    theirs = torch.cuda.CUDAGraph()
    with torch.cuda.graph(theirs):
        compiled(xs, ws, out=theirs_out)
    for _ in range(3):
        xs.copy_(torch.randn_like(xs))
        ws.copy_(torch.randn_like(ws))
        want = (xs.double() @ ws.double().T).cpu().numpy()
        for replay, out in ((ours.replay, ours.outputs), (theirs.replay, theirs_out)):
            out.fill_(float("nan"))
            replay()
            torch.cuda.synchronize()
            assert _relative(out, want) < 1e-2


def test_calls_inside_torch_cuda_graph(torch):
    """Molten's calls are stream-ordered and never synchronize, so torch can
    capture them among its own ops; new outputs come from torch's graph
    pool."""
    config = CONFIGS["llama3-8b"]
    layer = ZeroCompiler().compile(decoder_layer(config, 8, "bfloat16"))
    norm_graph = _rms_norm(8, config.hidden_size, "bfloat16")
    norm = ZeroCompiler().compile(norm_graph)
    inputs = [
        torch.randn(spec.shape, device="cuda").to(torch.bfloat16) * 0.05
        for spec in layer.executable().inputs
    ]
    w = torch.randn(config.hidden_size, device="cuda", dtype=torch.bfloat16)

    def step():
        hidden = layer(*inputs)
        return norm(hidden * 2, w)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up, as torch asks before a capture
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = step()
    for _ in range(2):
        for tensor in inputs:
            tensor.copy_(torch.randn_like(tensor) * 0.05)
        captured.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert _relative(captured, step().double().cpu().numpy()) < 1e-2


def test_graphed_calls_capture_once_per_input_addresses(torch):
    """`compiled.graphed()`: the first call with inputs at new addresses
    captures, later ones replay into the same outputs; a new address set
    is captured apart, the least recently used dropped past `max_graphs`."""
    graph = _rms_norm(4, 1024, "float32")
    compiled = ZeroCompiler().compile(graph)
    step = compiled.graphed(max_graphs=2)
    x = torch.randn(4, 1024, device="cuda")
    w = torch.randn(1024, device="cuda")
    first = step(x, w)
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        first.fill_(float("nan"))
        assert step(x, w) is first  # replayed into the captured output
        torch.cuda.synchronize()
        assert _relative(first, _interpreted(graph, x, w)) < 1e-5
    assert len(step) == 1
    others = [torch.randn(4, 1024, device="cuda") for _ in range(2)]
    for other in others:
        y = step(other, w)
        torch.cuda.synchronize()
        assert y is not first and _relative(y, _interpreted(graph, other, w)) < 1e-5
    assert len(step) == 2  # x's capture, the least recently used, dropped
    with pytest.raises(InputError, match=r"input 'x' .* has shape"):
        step(torch.randn(5, 1024, device="cuda"), w)


def test_calls_into_the_same_out_are_captured_and_replayed(torch):
    """A call with `out=` at addresses the call before used too is captured
    (running it) and replayed from then on; each call still computes the
    values its inputs hold then. New addresses run as usual until seen
    twice; `auto_graphs = 0` turns it off."""
    graph = _rms_norm(4, 1024, "float32")
    compiled = ZeroCompiler().compile(graph)
    executable = compiled.executable()
    x, w = torch.randn(4, 1024, device="cuda"), torch.randn(1024, device="cuda")
    out = torch.empty(4, 1024, device="cuda")
    for call in range(4):
        x.copy_(torch.randn_like(x))
        out.fill_(float("nan"))
        assert compiled(x, w, out=out) is out
        torch.cuda.synchronize()
        assert _relative(out, _interpreted(graph, x, w)) < 1e-5
        assert len(executable._graphs) == (0 if call == 0 else 1)
    other = torch.empty_like(out)
    compiled(x, w, out=other)  # new addresses: a plain call
    torch.cuda.synchronize()
    assert len(executable._graphs) == 1
    assert _relative(other, _interpreted(graph, x, w)) < 1e-5
    executable.auto_graphs = 0
    for _ in range(2):
        other.fill_(float("nan"))
        compiled(x, w, out=other)
        torch.cuda.synchronize()
        assert _relative(other, _interpreted(graph, x, w)) < 1e-5
    assert len(executable._graphs) == 1
