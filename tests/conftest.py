"""Shared helpers for Molten's test suite.

Everything numeric here is written independently of molten: the rounding to
f16/bf16 is done with frexp/ldexp and numpy's round-half-even, never with
molten.interpreters' own helpers, so the tests check molten against numpy
rather than against itself.
"""

from __future__ import annotations

import gc
import hashlib
import math

import numpy as np
import pytest

from molten.ir import DataflowGraph

DTYPES = ("float32", "float16", "bfloat16")

# Relative L2 error allowed between a native-precision result and a float64
# formula evaluated on the same (exactly representable) inputs.
NATIVE_TOL = {"float32": 1e-5, "float16": 1e-3, "bfloat16": 1e-2}
# Reference mode computes in float64: only summation order may differ.
REFERENCE_TOL = 1e-12

STORAGE = {"float32": np.float32, "float16": np.float16, "bfloat16": np.float32}
_SIGNIFICAND_BITS = {"float32": 24, "float16": 11, "bfloat16": 8}


def seed_from(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A numpy Generator seeded from the test's node id (fresh per test)."""
    return np.random.default_rng(seed_from(request.node.nodeid))


def round_to_dtype(x, dtype: str) -> np.ndarray:
    """float64 values rounded (nearest, ties to even) to `dtype`'s significand.

    Independent of molten: frexp/ldexp and numpy's round-half-even. Valid for
    values in the dtype's normal range, which is all the tests generate.
    """
    x = np.asarray(x, dtype=np.float64)
    bits = _SIGNIFICAND_BITS[dtype]
    mantissa, exponent = np.frexp(x)
    return np.ldexp(np.round(np.ldexp(mantissa, bits)), exponent - bits)


def rand(rng, shape, dtype="float32", low=-2.0, high=2.0) -> np.ndarray:
    """Uniform float64 values in [low, high), exactly representable in `dtype`."""
    return round_to_dtype(rng.uniform(low, high, size=shape), dtype)


def rand_signed_away_from_zero(rng, shape, dtype="float32", low=0.5, high=2.0):
    """Values with |v| in [low, high) and a random sign (divisors, reciprocals)."""
    sign = rng.choice([-1.0, 1.0], size=shape)
    return rand(rng, shape, dtype, low, high) * sign


def rel_l2(got, want) -> float:
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.all(np.isfinite(got)), "result has non-finite values"
    denom = np.linalg.norm(want)
    diff = np.linalg.norm(got - want)
    return float(diff / denom) if denom > 0 else float(diff)


def assert_close(got, want, tol: float) -> None:
    err = rel_l2(got, want)
    assert err <= tol, f"relative L2 error {err:.3e} > {tol:.1e}"


def assert_storage(result: np.ndarray, dtype: str) -> None:
    """A native result is held in the dtype's storage and representable in it."""
    assert result.dtype == STORAGE[dtype], (result.dtype, dtype)
    if dtype == "bfloat16":
        bits = np.ascontiguousarray(result, dtype=np.float32).view(np.uint32)
        assert np.all((bits & 0xFFFF) == 0), "bf16 result has non-zero low 16 bits"


def one_op_graph(dtype, shapes, build, name="g"):
    """A graph with one input per shape (all of `dtype`) and build(g, *inputs) out."""
    g = DataflowGraph(name)
    inputs = [g.add_input(f"in{i}", s, dtype) for i, s in enumerate(shapes)]
    g.add_output(build(g, *inputs))
    return g


def split_k_linear():
    """x @ w.T of 16 x 8192 by 1024 x 8192 in bf16, compiled for sm_90a: a
    wgmma gemm that splits K, its tile counters kept per stream (`cuda.zero
    ... restored`)."""
    from molten import ZeroCompiler

    g = DataflowGraph("split_linear")
    x = g.add_input("x", [16, 8192], "bfloat16")
    w = g.add_input("w", [1024, 8192], "bfloat16")
    g.add_output(g.matmul(x, w, transpose_b=True), "y")
    compiled = ZeroCompiler(arch="sm_90a").compile(g)
    assert "restored" in compiled.ir, "the gemm is expected to split K"
    return compiled


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


def module_op_names(module) -> list[str]:
    """Op names of the (only) function body, in order, without func.return."""
    (func,) = list(module.ops)
    return [op.name for op in func.body.block.ops if op.name != "func.return"]


def pytest_configure(config):
    # xDSL 0.74 deprecates PatternRewriter.replace_matched_op, which molten's
    # passes still call; the warning is reported once in the suite's notes,
    # not on every test.
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Use .replace\\(op, new_op\\) instead:DeprecationWarning",
    )
    # A compile makes millions of IR objects, in cycles (op, block, region):
    # the youngest generation collected every 20,000 new objects, not 700,
    # is a twentieth as many collections, and took the collector's share of
    # a sweep of benchmark compiles from 7% to 4%.
    gc.set_threshold(20_000, 10, 10)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After each test, collect its garbage and freeze what lives on.

    A worker keeps every kernel case it compiled (kernel_cases.compiled_case
    and the other per-process caches: xDSL modules, hundreds of MB of
    objects), and Python's full collections walk all of them, again and
    again as the heap grows: a fifth of the CPU time of the golden-digest
    sweep went to the garbage collector. Frozen objects (gc.freeze) are left
    out of later collections; the collection before it frees this test's
    cyclic garbage, so nothing but what is still referenced is frozen. Tests
    that call gc.collect() themselves collect their own objects as before."""
    gc.collect()
    gc.freeze()
