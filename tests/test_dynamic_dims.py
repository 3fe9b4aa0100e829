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
from molten.compiler import SizedPerCall
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


def test_a_row_graph_compiles_once_for_every_size(tmp_path):
    """Row and pointwise kernels take T at run time: one CompiledGraph whose
    launcher takes T after its pointers, with grids and buffers computed
    from it; saved as a .cu whose header states the shapes by name."""
    from molten.runtime.program import Launch, sized_program

    compiled = ZeroCompiler().compile(_gated_norm("T", hidden=3584))
    assert isinstance(compiled, molten.CompiledGraph) and compiled.dims == ("T",)
    assert [spec.shape for spec in compiled.inputs] == [("T", 3584), (3584,)] + [
        ("T", 3584)
    ]
    assert "const int64_t T, cudaStream_t stream)" in compiled.source
    assert "if (T < 1) return cudaErrorInvalidValue;" in compiled.source
    (launch,) = compiled.program
    assert isinstance(launch, Launch) and launch.grid_of == (4,)  # T's slot
    for tokens in (1, 17, 4099):
        (sized,) = sized_program(compiled.program, [0, 0, 0, 0, tokens])
        scale, divisor = launch.grid_scale
        assert sized.grid == (-(-tokens * scale // divisor), 1, 1)
    paths = ZeroCompiler().save(compiled, tmp_path)
    header = (tmp_path / "gated_norm.h").read_text()
    assert "#define GATED_NORM_X_SHAPE(T) {(T), 3584}" in header
    assert "#define GATED_NORM_X_ELEMENTS(T) ((T) * 3584LL)" in header
    assert '#define GATED_NORM_DIMS "T"' in header
    assert len(paths) == 3


def test_a_graph_with_static_kernels_compiles_per_call_sizes():
    """A reduction over a named dimension takes static sizes so far (here an
    f32 attention's softmax over T: the attention kernel multiplies f16 and
    bf16): such a graph is compiled once per set of sizes a call brings
    (SizedPerCall, saying why)."""
    compiled = ZeroCompiler().compile(_attention_block("T"))
    assert isinstance(compiled, SizedPerCall) and compiled.dims == ("T",)
    assert "a reduction over a named dimension" in compiled.reason
    at_5 = compiled.specialize(T=5)
    assert at_5 is compiled.specialize(T=5)  # compiled once
    assert at_5.source == ZeroCompiler().compile(_attention_block(5)).source
    x, wq = np.ones((3, 32)), np.ones((32, 32))
    with pytest.raises(InputError, match=r"input 'x' has shape \(3, 31\)"):
        compiled.sizes_of([np.ones((3, 31)), wq])
    with pytest.raises(InputError, match=r"input 'wq' is a list, not a device array"):
        compiled.sizes_of([x, [1.0] * 32])
    assert compiled.sizes_of([x, wq]) == {"T": 3}
    with pytest.raises(GraphError, match="needs sizes for T"):
        compiled.specialize()
    with pytest.raises(NotImplementedError, match=r"save compiled.specialize\(T=...\)"):
        ZeroCompiler().save(compiled, "unused")


def test_sizes_of_names_the_dimension_two_inputs_disagree_on():
    from molten.dims import sizes_of

    named = [
        ("input 'x'", ("T", 64)),
        ("input 'w'", (64,)),
        ("input 'gate'", ("T", 64)),
    ]
    x, w = np.ones((3, 64)), np.ones(64)
    with pytest.raises(InputError, match=r"input 'x' and input 'gate' disagree on T"):
        sizes_of("g", named, [x, w, np.ones((4, 64))])
    with pytest.raises(InputError, match=r"input 'x' has T = 0"):
        sizes_of("g", named, [np.ones((0, 64)), w, np.ones((0, 64))])
    with pytest.raises(InputError, match=r"graph 'g' takes 3 inputs, got 2"):
        sizes_of("g", named, [x, w])


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


@pytest.mark.parametrize("build", KERNEL_LEVEL_GRAPHS, ids=lambda b: b.__name__)
def test_row_and_pointwise_graphs_compile_once_through_nvcc(build, tmp_path):
    """Each graph of row and pointwise kernels compiles once with T taken at
    run time (the kernels and the launcher), and nvcc builds the .cu with
    every warning an error."""
    from test_codegen import NVCC, compile_unit

    compiled = ZeroCompiler().compile(build("T"))
    assert isinstance(compiled, molten.CompiledGraph) and compiled.dims == ("T",)
    assert "const int64_t T" in compiled.source
    if NVCC is None:
        pytest.skip("nvcc is not installed")
    compile_unit(compiled.source, tmp_path, archs=("sm_90",))


def test_the_cli_compiles_a_named_spec_at_given_sizes(tmp_path):
    from molten.tools.cli import main

    spec = tmp_path / "norm.mlir"
    spec.write_text(_gated_norm("T").to_mlir())
    assert main(["compile", str(spec), "-o", str(tmp_path), "--sizes", "T=5"]) == 0
    assert "GATED_NORM_X_SHAPE {5, 64}" in (tmp_path / "gated_norm.h").read_text()
    assert main(["compile", str(spec), "-o", str(tmp_path), "--sizes", "S=5"]) != 0


@pytest.mark.gpu
def test_one_compiled_graph_runs_every_token_count_on_the_gpu():
    """The issue's token counts through one compiled graph (one NVRTC
    compile, the kernels taking T), outputs poisoned first, against the
    float64 interpreter."""
    from molten.runtime.sized import SizedExecutable

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
    executable = compiled.executable()
    assert isinstance(executable, SizedExecutable)
    sized = [executable.at(T=t) for t in (1, 2, 17, 128, 4099, 8192)]
    assert all(e.loaded is executable.loaded for e in sized)  # compiled once
    with pytest.raises(InputError, match="disagree on T: 3 vs 4"):
        compiled(x[:3], w, gate[:4])
    with pytest.raises(InputError, match="has T = 0"):
        compiled(x[:0], w, gate[:0])


@pytest.mark.gpu
@pytest.mark.parametrize("build", KERNEL_LEVEL_GRAPHS, ids=lambda b: b.__name__)
def test_row_and_pointwise_graphs_run_any_size_on_the_gpu(build):
    """Each graph compiled once, run at several T (one input misaligned by
    an element at one of them: the scalar variants), outputs poisoned
    first, against the float64 interpreter; then through CUDA graphs at two
    sizes, each its own capture."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")
    graph = build("T")
    compiled = ZeroCompiler().compile(graph)
    assert isinstance(compiled, molten.CompiledGraph)

    def inputs_at(tokens: int, misaligned: bool = False) -> list:
        shapes = [t.shape.dims for t in build(tokens).inputs]
        arrays = [torch.randn(s, device="cuda") for s in shapes]
        if misaligned:
            flat = torch.randn(arrays[0].numel() + 1, device="cuda")
            arrays[0] = flat[1:].view(arrays[0].shape)
        return arrays

    def check(arrays: list, got) -> None:
        want = molten.interpret(graph, *(a.double().cpu().numpy() for a in arrays))
        np.testing.assert_allclose(
            got.double().cpu().numpy(), want, rtol=1e-4, atol=1e-4
        )

    for tokens, misaligned in ((1, False), (2, False), (17, True), (130, False)):
        arrays = inputs_at(tokens, misaligned)
        out = torch.full(
            compiled.executable().at(T=tokens).outputs[0].shape,
            float("nan"),
            device="cuda",
        )
        compiled(*arrays, out=out)
        check(arrays, out)
    graphed = compiled.graphed()
    for tokens in (3, 40, 3):
        arrays = inputs_at(tokens)
        check(arrays, graphed(*arrays))


def _linear_gelu(
    rows, k: int = 256, n: int = 192, dtype: str = "float32", nk: bool = False
) -> DataflowGraph:
    """gelu(x @ w + b), w stored [K, N] or (`nk`, nn.Linear's) [N, K]."""
    g = DataflowGraph("linear_gelu")
    x = g.add_input("x", [rows, k], dtype)
    w = g.add_input("w", [n, k] if nk else [k, n], dtype)
    b = g.add_input("b", [n], dtype)
    g.add_output(ops.gelu(g.matmul(x, w, transpose_b=nk) + b), "y")
    return g


GEMM_TOKENS = (1, 2, 3, 4, 5, 8, 9, 17, 64, 100, 128, 129, 512, 513, 1100)
"""Token counts at and around each size class's bounds
(schedule.size_classes.GEMM_SIZE_CLASSES)."""


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("nk", [False, True], ids=["kn", "nk"])
def test_a_gemm_over_named_rows_compiles_once_a_kernel_per_size_class(
    arch, nk, tmp_path
):
    """A gemm whose M is named compiles once: a kernel per size class (a
    GEMV up to 8 rows, then tiled kernels), each launched where T is in its
    class, and nvcc builds it with every warning an error."""
    from test_codegen import NVCC, compile_unit

    compiled = ZeroCompiler(arch=arch).compile(
        _linear_gelu("T", dtype="bfloat16", nk=nk)
    )
    assert isinstance(compiled, molten.CompiledGraph) and compiled.dims == ("T",)
    source = compiled.source
    assert "if (T == 1) {  // this variant's sizes" in source
    assert "if (T >= 2 && T <= 4) {" in source
    assert "linear_gelu_gemm0_rest<<<" in source
    if NVCC is None:
        pytest.skip("nvcc is not installed")
    compile_unit(source, tmp_path, archs=(arch,), device_only=True)


GEMM_CASES = [
    ("bfloat16", False, 256, 192),
    ("bfloat16", True, 256, 192),
    ("float32", False, 256, 192),
    ("bfloat16", False, 1024, 4096),  # the persistent TMA kernel above 128 rows
    ("bfloat16", True, 1024, 4096),
]
"""(dtype, B stored [N, K], K, N) of the gemms over a named M run on the GPU."""


@pytest.mark.gpu
@pytest.mark.parametrize("dtype,nk,k,n", GEMM_CASES)
def test_a_gemm_over_named_rows_runs_every_size_class_on_the_gpu(dtype, nk, k, n):
    """One compile of gelu(x @ w + b) over T, run at and around each size
    class's bounds (at one, x misaligned: the SIMT variants), outputs
    poisoned first, against the float64 interpreter."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")
    graph = _linear_gelu("T", k=k, n=n, dtype=dtype, nk=nk)
    compiled = ZeroCompiler().compile(graph)
    assert isinstance(compiled, molten.CompiledGraph)
    kind = getattr(torch, dtype)
    w = (0.1 * torch.randn(*graph.inputs[1].shape.dims, device="cuda")).to(kind)
    b = torch.randn(graph.inputs[2].shape.dims[0], device="cuda").to(kind)
    for tokens in GEMM_TOKENS:
        x = torch.randn(tokens * k + 1, device="cuda").to(kind)
        # at 17 tokens misaligned by an element: the SIMT variants
        x = (x[1:] if tokens == 17 else x[:-1]).view(tokens, k)
        out = torch.full((tokens, n), float("nan"), device="cuda").to(kind)
        compiled(x, w, b, out=out)
        want = molten.interpret(
            graph, *(t.double().cpu().numpy() for t in (x, w, b)), reference=True
        )
        got = out.double().cpu().numpy()
        assert not np.isnan(got).any(), tokens
        error = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert error < (1e-2 if dtype != "float32" else 1e-5), (tokens, error)
    # A new output (of no input's shape: made like a broadcast prototype) is
    # a contiguous tensor of the output's shape, holding the same values.
    made = compiled(x, w, b)
    assert made.shape == out.shape and made.is_contiguous()
    assert torch.equal(made, out)


def _self_attention(
    rows, causal: bool, heads: int = 4, kv_heads: int = 2, dim: int = 64
) -> DataflowGraph:
    """softmax(q kᵀ / sqrt(d) [+ the causal mask]) v over [heads, T, dim] in
    bf16, each of the `kv_heads` K and V heads repeated for the query heads
    that share it (Hugging Face's repeat_kv: a broadcast and reshapes)."""
    g = DataflowGraph("self_attention")
    q = g.add_input("q", [heads, rows, dim], "bfloat16")
    k = g.add_input("k", [kv_heads, rows, dim], "bfloat16")
    v = g.add_input("v", [kv_heads, rows, dim], "bfloat16")
    groups = heads // kv_heads

    def repeated(x):
        spread = g.broadcast_to(
            g.reshape(x, [kv_heads, 1, rows, dim]), [kv_heads, groups, rows, dim]
        )
        return g.reshape(spread, [heads, rows, dim])

    g.add_output(g.attention(q, repeated(k), repeated(v), causal=causal), "o")
    return g


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_an_attention_over_a_named_sequence_compiles_once(arch, causal, tmp_path):
    """Self-attention over T compiles once into the attention kernel, its
    grid counted at launch from T. Not causal, few tokens pack the query
    heads that share K and V into a block's rows: a variant of its own up
    to 32 tokens; causal, one kernel serves every T. nvcc builds it with
    every warning an error."""
    from test_codegen import NVCC, compile_unit

    compiled = ZeroCompiler(arch=arch).compile(_self_attention("T", causal))
    assert isinstance(compiled, molten.CompiledGraph) and compiled.dims == ("T",)
    names = [k.name for k in compiled.kernels]
    if causal:
        assert names == ["self_attention_attention0"]
    else:
        assert names == [
            "self_attention_attention0_upto32",
            "self_attention_attention0_rest",
        ]
        assert "if (T >= 1 && T <= 32) {  // this variant's sizes" in compiled.source
    # The blocks along x: ceil(T x the rows' heads packed / 64 rows a block).
    assert "molten_grid(T" in compiled.source
    if NVCC is None:
        pytest.skip("nvcc is not installed")
    compile_unit(compiled.source, tmp_path, archs=(arch,), device_only=True)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_an_attention_kernel_over_t_keeps_the_meaning_at_every_size(causal):
    """The attention kernel over T, fused, outlined and scheduled once, then
    interpreted at sizes in either variant against the molten-level graph."""
    from molten.dialects import kernel
    from molten.pipeline import KERNEL_LEVEL_PIPELINE, run_pipeline

    graph = _self_attention("T", causal)
    module = run_pipeline(graph.to_module(), KERNEL_LEVEL_PIPELINE)
    kernels = [op for op in module.walk() if isinstance(op, kernel.FuncOp)]
    assert [k.kind.data for k in kernels] == [kernel.KernelKind.ATTENTION]
    rng = np.random.default_rng(11)
    for tokens in (1, 5, 33, 70):
        arrays = [
            rng.standard_normal(t.shape.dims)
            for t in _self_attention(tokens, causal).inputs
        ]
        got = molten.interpret(module, *arrays, reference=True)
        want = molten.interpret(graph, *arrays, reference=True)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


ATTENTION_TOKENS = (1, 2, 17, 31, 32, 33, 64, 65, 128, 129, 700, 2049)
"""Sequence lengths at and around the attention's size class (32), its
tiles of 64 query rows and 64 or 128 keys."""


@pytest.mark.gpu
@pytest.mark.parametrize("dim", [16, 64, 128])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_an_attention_over_a_named_sequence_runs_every_size_on_the_gpu(causal, dim):
    """One compile of self-attention over T (on sm_90a, wgmma above head
    dimension 16), run at and around its tiles' and classes' bounds,
    outputs poisoned first, against the float64 interpreter."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")
    graph = _self_attention("T", causal, dim=dim)
    compiled = ZeroCompiler().compile(graph)
    assert isinstance(compiled, molten.CompiledGraph)
    for tokens in ATTENTION_TOKENS:
        shapes = [t.shape.dims for t in _self_attention(tokens, causal, dim=dim).inputs]
        q, k, v = (torch.randn(s, device="cuda").to(torch.bfloat16) for s in shapes)
        out = torch.full(
            (4, tokens, dim), float("nan"), device="cuda", dtype=torch.bfloat16
        )
        compiled(q, k, v, out=out)
        want = molten.interpret(
            graph, *(t.double().cpu().numpy() for t in (q, k, v)), reference=True
        )
        got = out.double().cpu().numpy()
        assert not np.isnan(got).any(), tokens
        error = np.linalg.norm(got - want) / np.linalg.norm(want)
        assert error < 1e-2, (tokens, error)
