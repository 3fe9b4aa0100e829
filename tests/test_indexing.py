"""Indexing by integer tensors: molten.take (numpy.take, index_select,
embedding) and molten.gather (torch.gather, take_along_dim), against torch
where it is installed; an index out of range is an InputError naming it in
the interpreter; in a kernel the lookup fuses with what reads it (an
embedding times a scale plus a positional embedding is one kernel), reads
the table's rows in vectors, and clamps an index into range unless
MOLTEN_CHECK_INDICES=1 asks for a check that stops the kernel."""

import numpy as np
import pytest

import molten
from molten import DataflowGraph
from molten.errors import DTypeError, InputError, ShapeError


def _torch():
    return pytest.importorskip("torch")


def test_embedding_is_torchs(rng):
    torch = _torch()
    g = DataflowGraph("emb")
    ids = g.add_input("ids", [2, 7], "int64")
    table = g.add_input("table", [50, 16], "bfloat16")
    g.add_output(g.embedding(ids, table))
    x = rng.integers(0, 50, (2, 7))
    w = rng.standard_normal((50, 16)).astype(np.float32)
    want = torch.nn.functional.embedding(
        torch.from_numpy(x), torch.from_numpy(w).bfloat16()
    )
    got = molten.interpret(g, x, w)
    np.testing.assert_array_equal(got, want.float().numpy())


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_index_select_and_take_are_torchs_and_numpys(axis, rng):
    torch = _torch()
    x = rng.standard_normal((5, 6, 7)).astype(np.float32)
    size = x.shape[axis]
    idx = rng.integers(0, size, (4,)).astype(np.int32)
    g = DataflowGraph("sel")
    xs = g.add_input("x", x.shape)
    i = g.add_input("i", [4], "int32")
    g.add_output(g.index_select(xs, axis, i))
    want = torch.index_select(torch.from_numpy(x), axis, torch.from_numpy(idx).long())
    np.testing.assert_array_equal(molten.interpret(g, x, idx), want.numpy())
    g2 = DataflowGraph("take")
    xs = g2.add_input("x", x.shape)
    i2 = g2.add_input("i", [2, 3], "int64")
    g2.add_output(g2.take(xs, i2, axis))
    idx2 = rng.integers(0, size, (2, 3))
    np.testing.assert_array_equal(
        molten.interpret(g2, x, idx2), np.take(x, idx2, axis=axis)
    )


def test_gather_and_take_along_dim_are_torchs(rng):
    torch = _torch()
    x = rng.standard_normal((4, 9)).astype(np.float32)
    idx = rng.integers(0, 9, (3, 5))  # fewer rows than x: the first 3
    g = DataflowGraph("gather")
    xs = g.add_input("x", [4, 9])
    i = g.add_input("i", [3, 5], "int64")
    g.add_output(g.gather(xs, 1, i))
    want = torch.gather(torch.from_numpy(x), 1, torch.from_numpy(idx))
    np.testing.assert_array_equal(molten.interpret(g, x, idx), want.numpy())
    # take_along_dim broadcasts indices of size 1 (the argmax of each row).
    top = np.argmax(x, axis=1, keepdims=True)
    g2 = DataflowGraph("along")
    xs = g2.add_input("x", [4, 9])
    t = g2.add_input("t", [4, 1], "int64")
    g2.add_output(g2.take_along_dim(xs, t, 1))
    want = torch.take_along_dim(torch.from_numpy(x), torch.from_numpy(top), 1)
    np.testing.assert_array_equal(molten.interpret(g2, x, top), want.numpy())


def test_an_index_out_of_range_is_an_error_naming_it(rng):
    g = DataflowGraph("emb")
    ids = g.add_input("ids", [2, 3], "int64")
    table = g.add_input("table", [10, 4])
    g.add_output(g.embedding(ids, table))
    bad = np.array([[1, 2, 3], [4, -1, 5]])
    with pytest.raises(InputError) as info:
        molten.interpret(g, bad, np.zeros((10, 4)))
    message = str(info.value)
    assert "molten.take: index -1 at position [1, 1]" in message
    assert "out of range for axis 0 of input tensor<10x4xf32> (size 10)" in message
    assert "builtin.module" not in message and not getattr(info.value, "__notes__", [])


def test_bad_indexing_is_refused_by_name():
    g = DataflowGraph("g")
    x = g.add_input("x", [4, 8])
    f = g.add_input("f", [3])
    i = g.add_input("i", [3], "int8")
    with pytest.raises(DTypeError, match="indices are i64 or i32"):
        g.take(x, f)
    with pytest.raises(DTypeError, match="indices are i64 or i32"):
        g.take(x, i)
    j = g.add_input("j", [5, 2], "int64")
    with pytest.raises(ShapeError, match="along axis 0 \\(5\\) exceed input"):
        g.gather(x, 1, j)
    with pytest.raises(ShapeError, match="axis 2 is out of range"):
        g.take(x, g.add_input("k", [3], "int64"), 2)


def _embedding_graph() -> DataflowGraph:
    g = DataflowGraph("embed")
    ids = g.add_input("ids", [2, 7], "int64")
    table = g.add_input("table", [1000, 64], "bfloat16")
    pos = g.add_input("pos", [7, 64], "bfloat16")
    g.add_output(g.embedding(ids, table) * 8.0 + pos, "h")
    return g


def test_an_embedding_times_a_scale_plus_positions_is_one_kernel():
    compiled = molten.ZeroCompiler().compile(_embedding_graph())
    (kernel,) = compiled.kernels
    assert kernel.fused_ops == ("take", "mul", "add")
    source = compiled.source
    # The id is read once per vector of 8 bf16 of its row, clamped into
    # the table: a bad id never reads out of bounds.
    assert "molten_vec<__nv_bfloat16, 8>*>(&table[" in source
    assert "molten_imin(" in source and ", 999)" in source
    assert "__trap()" not in source


def test_checked_indices_stop_the_kernel_with_the_index(monkeypatch):
    monkeypatch.setenv("MOLTEN_CHECK_INDICES", "1")
    source = molten.ZeroCompiler().compile(_embedding_graph()).source
    assert "__trap();" in source
    assert "molten: molten.take indices: index %lld at position %lld" in source
    assert "out of range [0, 1000)" in source


def test_scatter_writes_source_at_the_indices():
    """g.scatter (torch.scatter), scatter_add, index_copy and index_add:
    exact in the interpreter against numpy; an index out of range is an
    InputError naming it; each is one scatter kernel, its output a copy of
    x first (tests/test_scatter_gpu.py runs them)."""
    g = DataflowGraph("scatters")
    x = g.add_input("x", [4, 8])
    ids = g.add_input("ids", [4, 3], "int64")
    src = g.add_input("src", [4, 3])
    cache = g.add_input("cache", [2, 10, 4])
    at = g.add_input("at", [2], "int32")
    new = g.add_input("new", [2, 2, 4])
    g.add_output(g.scatter(x, 1, ids, src))
    g.add_output(g.scatter_add(x, -1, ids, src))
    g.add_output(g.index_copy(cache, 1, at, new))
    g.add_output(g.index_add(cache, 1, at, new, alpha=2.0))
    rng = np.random.default_rng(0)
    xs, srcs = rng.standard_normal((4, 8)), rng.standard_normal((4, 3))
    idss = rng.integers(0, 8, (4, 3))
    caches, news = rng.standard_normal((2, 10, 4)), rng.standard_normal((2, 2, 4))
    ats = np.array([7, 1], np.int32)
    got = molten.interpret(g, xs, idss, srcs, caches, ats, news)
    want = xs.copy()
    want[np.arange(4)[:, None], idss] = srcs
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    added = xs.copy()
    np.add.at(added, (np.arange(4)[:, None], idss), srcs)
    np.testing.assert_allclose(got[1], added, rtol=1e-6)
    copied = caches.copy()
    copied[:, ats] = news
    np.testing.assert_allclose(got[2], copied, rtol=1e-6)
    summed = caches.copy()
    summed[:, ats] += 2 * news
    np.testing.assert_allclose(got[3], summed, rtol=1e-6)
    bad = idss.copy()
    bad[2, 1] = 8
    with pytest.raises(
        molten.InputError, match=r"molten.scatter: index 8 at position \[2, 1\]"
    ):
        molten.interpret(g, xs, bad, srcs, caches, ats, news)
    compiled = molten.ZeroCompiler().compile(g)
    scatters = [k.name for k in compiled.kernels if "_scatter" in k.name]
    assert len(scatters) == 4
    copies = [s for s in compiled.program if type(s).__name__ == "Copy"]
    assert len(copies) == 4  # each output starts as x (or the cache)


def test_byte_sized_scatter_add_has_no_kernel():
    """CUDA adds 16-, 32- and 64-bit elements atomically: a scatter_add into
    int8 runs in the interpreter, and compiling it says so."""
    g = DataflowGraph("byte_add")
    x = g.add_input("x", [8], "int8")
    ids = g.add_input("ids", [4], "int64")
    g.add_output(g.scatter_add(x, 0, ids, g.add_input("src", [4], "int8")))
    with pytest.raises(
        molten.UnsupportedError, match="scatter_add into tensor<8xi8> has no kernel"
    ):
        molten.ZeroCompiler().compile(g)


def test_scatter_checks_its_operands():
    g = DataflowGraph("bad_scatter")
    x = g.add_input("x", [4, 8])
    ids = g.add_input("ids", [4, 3], "int64")
    with pytest.raises(
        molten.ShapeError, match="source .* must have the shape of indices"
    ):
        g.scatter(x, 1, ids, g.add_input("wide", [4, 4]))
    with pytest.raises(molten.DTypeError, match="element type of input"):
        g.scatter(x, 1, ids, g.add_input("half", [4, 3], "float16"))
    with pytest.raises(
        molten.GraphError, match="molten.index_copy: index must be a 1-D"
    ):
        g.index_copy(x, 0, ids, x)


def test_argmax_of_a_softmax_is_the_softmax_kernel():
    """The most probable token of a softmax is computed in the softmax's
    own row kernel (its max and sum, then the positions of its result),
    with the probabilities stored or not; the interpreter agrees with torch
    (the harness's indexing suite checks it on the GPU)."""
    torch = pytest.importorskip("torch")
    for store in (False, True):
        g = DataflowGraph("greedy")
        x = g.add_input("x", [32, 152064], "bfloat16")
        p = g.softmax(x)
        g.add_output(g.argmax(p, 1), "token")
        if store:
            g.add_output(p, "p")
        (kernel,) = molten.ZeroCompiler().compile(g).kernels
        assert {"reduce_max", "reduce_sum", "argmax"} <= set(kernel.fused_ops)
    g = DataflowGraph("small")
    x = g.add_input("x", [5, 70])
    g.add_output(g.argmax(g.softmax(x), 1))
    logits = torch.randn(5, 70)
    got = molten.interpret(g, logits.numpy())
    np.testing.assert_array_equal(got, torch.softmax(logits, 1).argmax(1).numpy())
