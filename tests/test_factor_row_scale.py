"""`factor-row-scale` keeps what a graph computes: rms_norm(x, w) @ W (two
matmuls sharing the normalized lhs, one with a bias) interpreted before and
after the pass, at the molten level and through the kernel level, in
float64 (the algebra is exact up to summation order) and natively (one
rounding moves: the product is rounded after its scale, not before)."""

import numpy as np
import pytest

import molten
from molten.dialects import kernel
from molten.dialects import molten as dialect
from molten.ir import DataflowGraph
from molten.pipeline import KERNEL_PIPELINE, MOLTEN_PIPELINE, run_pipeline

try:  # tests/ is a package (tests/__init__.py) or a plain directory
    from .conftest import NATIVE_TOL, REFERENCE_TOL, assert_close, rand
except ImportError:  # pragma: no cover
    from conftest import NATIVE_TOL, REFERENCE_TOL, assert_close, rand

FACTORED = f"{MOLTEN_PIPELINE},factor-row-scale,canonicalize,cse,dce"
SPECS = {"molten": FACTORED, "kernel": f"{FACTORED},{KERNEL_PIPELINE}"}


def norm_then_two_linears(dtype: str, rows: int = 5, hidden: int = 72) -> DataflowGraph:
    """rms_norm(x, w) @ up.T + b and rms_norm(x, w) @ gate.T: rows not a
    power of two, hidden not a multiple of 64."""
    g = DataflowGraph("norm_linears")
    x = g.add_input("x", [rows, hidden], dtype)
    w = g.add_input("w", [hidden], dtype)
    up = g.add_input("up", [40, hidden], dtype)
    gate = g.add_input("gate", [24, hidden], dtype)
    b = g.add_input("b", [40], dtype)
    h = g.rms_norm(x, w)
    g.add_output(g.matmul(h, up, transpose_b=True) + b, "y")
    g.add_output(g.matmul(h, gate, transpose_b=True), "z")
    return g


def _inputs(g: DataflowGraph, rng) -> list[np.ndarray]:
    return [rand(rng, t.shape.dims, t.dtype) for t in g.inputs]


@pytest.mark.parametrize("level", sorted(SPECS))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_factored_graph_computes_the_same(dtype, level, rng):
    g = norm_then_two_linears(dtype)
    module = run_pipeline(g.to_module(), SPECS[level])
    inputs = _inputs(g, rng)
    for reference, tol in ((True, REFERENCE_TOL), (False, NATIVE_TOL[dtype])):
        want = molten.interpret(g, *inputs, reference=reference)
        got = molten.interpret(module, *inputs, reference=reference)
        for w, o in zip(want, got, strict=True):
            assert o.shape == w.shape
            assert_close(o, w, tol)


def test_the_scale_leaves_the_lhs():
    """bf16: each matmul takes x * w and gives f32, scaled by the row's
    rsqrt before its one rounding; the kernels are the row reduction (the
    mean square, x * w) and a gemm per matmul whose epilogue applies the
    scale."""
    module = run_pipeline(norm_then_two_linears("bfloat16").to_module(), FACTORED)
    matmuls = [op for op in module.walk() if isinstance(op, dialect.MatmulOp)]
    assert len(matmuls) == 2
    for mm in matmuls:
        assert str(mm.result.type.element_type) == "f32"  # type: ignore[attr-defined]
        assert not isinstance(mm.lhs.owner, dialect.MulOp)
        (use,) = mm.result.uses
        assert isinstance(use.operation, dialect.MulOp)
    module = run_pipeline(
        norm_then_two_linears("bfloat16").to_module(), SPECS["kernel"]
    )
    kinds = sorted(
        op.kind.data.value for op in module.walk() if isinstance(op, kernel.FuncOp)
    )
    assert kinds == ["gemm", "gemm", "row_reduce"]


def test_f16_is_left_alone():
    """f16: x * w unscaled could overflow where the normalized product does
    not, so the pass does not apply."""
    g = norm_then_two_linears("float16")
    before = str(run_pipeline(g.to_module(), MOLTEN_PIPELINE))
    after = str(run_pipeline(g.to_module(), FACTORED))
    assert after == before
