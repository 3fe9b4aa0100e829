"""Matmuls of one lhs that no op reads together (q, k and v), fused
horizontally on sm_90a: one persistent gemm kernel whose tiles are each
one matmul's, where the estimate finds it no slower than a kernel each.

On the CPU, for drawn shapes and widths, the kernel-level IR computes what
the graph computes (float64 interpreter) and the whole compile reaches
CUDA source; on an sm_90 GPU, fixed awkward shapes (ragged tiles of each
matmul, 9 to 300 rows) run through the runtime against the interpreter,
outputs poisoned."""

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import molten
from molten import ZeroCompiler
from molten.interpreters import round_to
from molten.ir import DataflowGraph


def projections(m: int, k: int, widths: list[int], dtype: str) -> DataflowGraph:
    """x @ w_i.T for each width, every other one with a bias: each an output."""
    g = DataflowGraph("projections")
    x = g.add_input("x", [m, k], dtype)
    for i, width in enumerate(widths):
        y = g.matmul(x, g.add_input(f"w{i}", [width, k], dtype), transpose_b=True)
        if i % 2 == 0:
            y = y + g.add_input(f"b{i}", [width], dtype)
        g.add_output(y, f"y{i}")
    return g


def matmuls_per_kernel(compiled) -> list[int]:
    return [k.fused_ops.count("matmul") for k in compiled.kernels]


@pytest.mark.sweep
@settings(max_examples=12, deadline=None)
@given(
    m=st.integers(9, 300),
    k=st.sampled_from([64, 128, 320, 1024]),
    widths=st.lists(st.integers(1, 160).map(lambda w: 8 * w), min_size=2, max_size=3),
    dtype=st.sampled_from(["float16", "bfloat16"]),
)
def test_horizontal_fusion_keeps_the_graphs_meaning(m, k, widths, dtype):
    g = projections(m, k, widths, dtype)
    compiler = ZeroCompiler(arch="sm_90a")
    compiled = compiler.compile(g)
    note(f"matmuls per kernel: {matmuls_per_kernel(compiled)}")
    assert sum(matmuls_per_kernel(compiled)) == len(widths)
    rng = np.random.default_rng(m * 7 + k)
    arrays = [
        round_to(rng.uniform(-2.0, 2.0, t.shape.dims), t.type.element_type)
        for t in g.inputs
    ]
    want = molten.interpret(g, *arrays, reference=True)
    got = molten.interpret(compiler.optimize(g), *arrays, reference=True)
    for w, o in zip(want, got, strict=True):
        np.testing.assert_allclose(o, w, rtol=1e-9, atol=1e-12)


SHAPES = [
    # (rows, K, widths, one kernel on the H100 by the estimate)
    (65, 320, [1000, 24, 200], True),  # ragged last tiles of each matmul
    (300, 64, [256, 64, 64], True),  # 3 row tiles, one K step
    (9, 256, [512, 128], False),
    (130, 1024, [520, 136], False),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(("m", "k", "widths", "together"), SHAPES)
def test_projections_on_the_gpu_match_the_interpreter(m, k, widths, together, dtype):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the persistent TMA kernel is sm_90a's: needs an H100 or H200")
    g = projections(m, k, widths, dtype)
    compiled = ZeroCompiler(arch="sm_90a").compile(g)
    expected = [len(widths)] if together else [1] * len(widths)
    assert matmuls_per_kernel(compiled) == expected
    rng = np.random.default_rng()
    hosts = [
        round_to(rng.uniform(-2.0, 2.0, t.shape.dims), t.type.element_type)
        for t in g.inputs
    ]
    torch_dtype = getattr(torch, dtype)
    devices = [torch.tensor(h, dtype=torch_dtype, device="cuda") for h in hosts]
    outs = [
        torch.full(t.shape.dims, float("nan"), dtype=torch_dtype, device="cuda")
        for t in g.outputs
    ]
    compiled(*devices, out=outs)
    torch.cuda.synchronize()
    want = molten.interpret(g, *hosts, reference=True)
    tolerance = {"float16": 2e-3, "bfloat16": 1.6e-2}[dtype]
    for got, w in zip(outs, want, strict=True):
        got = got.float().cpu().numpy().astype(np.float64)
        assert not np.isnan(got).any(), "an element was not written"
        error = np.linalg.norm(got - w) / max(np.linalg.norm(w), 1e-30)
        assert error < tolerance, f"relative L2 error {error:.2e}"
