"""The random graphs of the GPU differential test (test_random_graphs_gpu.py),
checked where there is no GPU: each compiles to CUDA source, and its
kernel-level IR (fused, outlined, scheduled) computes what its molten-level
IR computes, in the float64 interpreter."""

import numpy as np
import pytest
from random_graphs import GRAPHS, random_graph, random_inputs

import molten
from molten import ZeroCompiler

QUICK = 60
"""The first graphs, ten of each family, run without the `sweep` marker."""


def _seeds():
    for seed in range(GRAPHS):
        marks = [] if seed < QUICK else [pytest.mark.sweep]
        yield pytest.param(seed, marks=marks, id=str(seed))


@pytest.mark.parametrize("seed", list(_seeds()))
def test_random_graph_compiles_and_its_kernels_compute_the_graph(seed):
    drawn = random_graph(seed)
    g = drawn.graph
    compiler = ZeroCompiler(arch=drawn.arch)
    compiled = compiler.compile(g)
    assert len(compiled) >= 1 and "__global__" in compiled.source
    arrays = random_inputs(g, np.random.default_rng(seed))
    want = molten.interpret(g, *arrays, reference=True)
    got = molten.interpret(compiler.optimize(g), *arrays, reference=True)
    for w, k in zip(
        want if isinstance(want, tuple) else (want,),
        got if isinstance(got, tuple) else (got,),
        strict=True,
    ):
        np.testing.assert_allclose(k, w, rtol=1e-9, atol=1e-12, err_msg=repr(drawn))
