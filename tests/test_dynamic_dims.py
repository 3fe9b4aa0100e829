"""Named dimensions (`TensorShape(["T", 3584])`, `tensor<?x3584xf32, ["T"]>`):
the graph API and the dialect's rules, the interpreter at any size against
the same graph built at that size, specialization, and the compiler's
per-call sizes, with an error per misuse."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import molten
from molten import GraphError, InputError, ShapeError, ZeroCompiler, ops
from molten.ir import DataflowGraph, TensorShape


def _gated_norm(rows, hidden: int = 64, dtype: str = "float32") -> DataflowGraph:
    g = DataflowGraph("gated_norm")
    x = g.add_input("x", [rows, hidden], dtype)
    w = g.add_input("w", [hidden], dtype)
    gate = g.add_input("gate", [rows, hidden], dtype)
    g.add_output(ops.rms_norm(x, w) * ops.silu(gate), "y")
    return g


def _attention_block(tokens, dtype: str = "float32") -> DataflowGraph:
    """x @ wq.T into two heads, causal self-attention, merged back: every
    kind of op a named dimension passes through (matmul, reshape,
    transpose, attention with its mask, a reduction over T)."""
    g = DataflowGraph("attention_block")
    x = g.add_input("x", [tokens, 32], dtype)
    wq = g.add_input("wq", [32, 32], dtype)
    q = g.matmul(x, wq, transpose_b=True)
    heads = g.transpose(g.reshape(q, [tokens, 2, 16]), [1, 0, 2])
    o = g.attention(heads, heads, heads, causal=True)
    merged = g.reshape(g.transpose(o, [1, 0, 2]), [tokens, 32])
    g.add_output(merged + g.reduce_mean(x, [0], True), "y")
    return g


def test_shapes_take_names():
    shape = TensorShape(["T", 3584])
    assert shape.dims == ("T", 3584) and shape.names == ("T",)
    assert not shape.is_static and TensorShape([2, 3]).is_static
    g = _gated_norm("T")
    assert g.dims == ("T",)
    assert g.inputs[0].shape == TensorShape(["T", 64])
    assert g.outputs[0].shape.dims == ("T", 64)
    assert 'tensor<?x64xf32, ["T"]>' in g.to_mlir()


@pytest.mark.parametrize("bad", ["3T", "", "T-1", 0, -2, 1.5, None])
def test_a_dimension_is_a_positive_size_or_an_identifier(bad):
    with pytest.raises(ShapeError, match="positive integers or names"):
        TensorShape([bad, 8])


def test_the_ir_round_trips_with_its_names():
    for graph in (_gated_norm("T"), _attention_block("T")):
        again = DataflowGraph.from_mlir(graph.to_mlir())
        assert again.to_mlir() == graph.to_mlir()
        assert again.dims == ("T",)


def test_rules_hold_between_names():
    g = DataflowGraph("g")
    x = g.add_input("x", ["T", 8])
    s = g.add_input("s", ["S", 8])
    four = g.add_input("four", [4, 8])
    row = g.add_input("row", [1, 8])
    assert (x + row).shape.dims == ("T", 8)  # 1 broadcasts to T
    assert (x * x).shape.dims == ("T", 8)
    with pytest.raises(ShapeError, match=r"dimension -2: T vs S"):
        x + s
    with pytest.raises(ShapeError, match=r"dimension -2: T vs 4"):
        x * four
    with pytest.raises(ShapeError, match=r"has T\*8 elements but result .* has 8"):
        g.reshape(x, [8])
    assert g.reshape(x, ["T", 2, 4]).shape.dims == ("T", 2, 4)
    assert g.reshape(x, ["T", -1]).shape.dims == ("T", 8)
    with pytest.raises(ShapeError, match="fixed size, not D"):
        g.rotate_half(g.add_input("d", [2, "D"]))
    with pytest.raises(ShapeError, match="named head dimension D; give scale="):
        q = g.add_input("q", [2, "D"])
        g.attention(q, q, q)
    mask = g.causal_mask("T", "T")
    assert mask.shape.dims == ("T", "T")


@settings(max_examples=15, deadline=None)
@given(tokens=st.integers(1, 40), seed=st.integers(0, 2**31))
def test_interpreter_runs_any_size_as_the_static_graph(tokens, seed):
    """The graph with T interpreted at `tokens` rows is the graph built at
    that size, to the last bit (both in float64)."""
    rng = np.random.default_rng(seed)
    for build in (_gated_norm, _attention_block):
        dynamic, static = build("T"), build(tokens)
        arrays = [rng.standard_normal(t.shape.dims) for t in static.inputs]
        got = molten.interpret(dynamic, *arrays, reference=True)
        want = molten.interpret(static, *arrays, reference=True)
        np.testing.assert_array_equal(got, want)


def test_interpreter_names_the_dimension_in_its_errors():
    g = _gated_norm("T")
    x, w = np.ones((3, 64)), np.ones(64)
    with pytest.raises(
        InputError, match=r"'x'\) and input 2 \('gate'\) disagree on T: 3 vs 4"
    ):
        molten.interpret(g, x, w, np.ones((4, 64)))
    with pytest.raises(InputError, match=r"'x'\) has T = 0; T must be at least 1"):
        molten.interpret(g, np.ones((0, 64)), w, np.ones((0, 64)))
    with pytest.raises(InputError, match=r"has shape \(3, 65\); expected \(T, 64\)"):
        molten.interpret(g, np.ones((3, 65)), w, np.ones((3, 65)))


def test_specialize_gives_the_graph_built_at_that_size():
    dynamic = _attention_block("T")
    assert dynamic.specialize(T=9).to_mlir() == _attention_block(9).to_mlir()
    with pytest.raises(GraphError, match="no dimension named S"):
        dynamic.specialize(S=3)
    with pytest.raises(ShapeError, match="T = 0: a dimension name takes a positive"):
        dynamic.specialize(T=0)


def test_compile_of_a_named_graph_compiles_per_call_sizes():
    compiled = ZeroCompiler().compile(_gated_norm("T"))
    assert compiled.dims == ("T",)
    at_17 = compiled.specialize(T=17)
    assert at_17 is compiled.specialize(T=17)  # compiled once
    assert at_17.source == ZeroCompiler().compile(_gated_norm(17)).source
    x, w = np.ones((3, 64)), np.ones(64)
    with pytest.raises(InputError, match=r"input 'x' and input 'gate' disagree on T"):
        compiled.sizes_of([x, w, np.ones((4, 64))])
    with pytest.raises(InputError, match=r"input 'w' is a list, not a device array"):
        compiled.sizes_of([x, [1.0] * 64, x])
    assert compiled.sizes_of([x, w, x]) == {"T": 3}
    with pytest.raises(GraphError, match="needs sizes for T"):
        compiled.specialize()
    with pytest.raises(NotImplementedError, match=r"save compiled.specialize\(T=...\)"):
        ZeroCompiler().save(compiled, "unused")


def _layer_norm(rows) -> DataflowGraph:
    g = DataflowGraph("layer_norm")
    x = g.add_input("x", [rows, 96])
    w, b = g.add_input("w", [96]), g.add_input("b", [96])
    g.add_output(g.layer_norm(x, w, b), "y")
    return g


def _softmax_heads(rows) -> DataflowGraph:
    """softmax over the last axis of x reshaped into heads, transposed back."""
    g = DataflowGraph("softmax_heads")
    x = g.add_input("x", [rows, 64])
    heads = g.transpose(g.reshape(x, [rows, 4, 16]), [0, 2, 1])
    g.add_output(g.softmax(heads, -1), "p")
    return g


def _rope(rows) -> DataflowGraph:
    g = DataflowGraph("rope")
    x = g.add_input("x", [2, rows, 16])
    cos, sin = g.add_input("cos", [rows, 16]), g.add_input("sin", [rows, 16])
    g.add_output(g.rope(x, cos, sin), "y")
    return g


def _affine_gelu(rows) -> DataflowGraph:
    g = DataflowGraph("affine_gelu")
    x = g.add_input("x", [rows, 40])
    a, b = g.add_input("a", [40]), g.add_input("b", [rows, 1])
    g.add_output(ops.gelu(x * a + b) * x, "y")
    return g


KERNEL_LEVEL_GRAPHS = [_gated_norm, _layer_norm, _softmax_heads, _rope, _affine_gelu]


@pytest.mark.parametrize("build", KERNEL_LEVEL_GRAPHS, ids=lambda b: b.__name__)
def test_kernel_level_keeps_the_meaning_at_every_size(build):
    """Row and pointwise graphs with T fused, outlined and scheduled once,
    with T in the kernels' types, then interpreted at several sizes against
    the molten-level graph; the same kernels as the graph built at a size."""
    from molten.dialects import kernel
    from molten.pipeline import KERNEL_LEVEL_PIPELINE, run_pipeline

    graph = build("T")
    module = run_pipeline(graph.to_module(), KERNEL_LEVEL_PIPELINE)
    kernels = [op for op in module.walk() if isinstance(op, kernel.FuncOp)]
    assert any(
        molten.dialects.molten.is_dynamic(t)
        for k in kernels
        for t in k.function_type.inputs.data
    )
    static = run_pipeline(build(64).to_module(), KERNEL_LEVEL_PIPELINE)
    assert [k.kind for k in kernels] == [
        op.kind for op in static.walk() if isinstance(op, kernel.FuncOp)
    ]
    rng = np.random.default_rng(7)
    for tokens in (1, 3, 17, 64):
        arrays = [rng.standard_normal(t.shape.dims) for t in build(tokens).inputs]
        got = molten.interpret(module, *arrays, reference=True)
        want = molten.interpret(graph, *arrays, reference=True)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_cli_compiles_a_named_spec_at_given_sizes(tmp_path):
    from molten.tools.cli import main

    spec = tmp_path / "norm.mlir"
    spec.write_text(_gated_norm("T").to_mlir())
    assert main(["compile", str(spec), "-o", str(tmp_path), "--sizes", "T=5"]) == 0
    assert "GATED_NORM_X_SHAPE {5, 64}" in (tmp_path / "gated_norm.h").read_text()
    assert main(["compile", str(spec), "-o", str(tmp_path), "--sizes", "S=5"]) != 0


@pytest.mark.gpu
def test_one_compiled_graph_runs_every_token_count_on_the_gpu():
    """The issue's token counts through one compiled graph (compiled per
    size on first sight), outputs poisoned first, against the float64
    interpreter."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")
    graph = _gated_norm("T", hidden=3584, dtype="bfloat16")
    compiled = ZeroCompiler().compile(graph)
    for tokens in (1, 2, 17, 128, 4099, 8192):
        x = torch.randn(tokens, 3584, device="cuda").to(torch.bfloat16)
        w = (1 + 0.1 * torch.randn(3584, device="cuda")).to(torch.bfloat16)
        gate = torch.randn(tokens, 3584, device="cuda").to(torch.bfloat16)
        out = torch.full_like(x, float("nan"))
        compiled(x, w, gate, out=out)
        want = molten.interpret(
            graph, *(t.double().cpu().numpy() for t in (x, w, gate)), reference=True
        )
        got = out.double().cpu().numpy()
        assert not np.isnan(got).any(), tokens
        error = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert error < 1e-2, (tokens, error)
    assert len(compiled._compiled) == 6
    with pytest.raises(InputError, match="disagree on T: 3 vs 4"):
        compiled(x[:3], w, gate[:4])
