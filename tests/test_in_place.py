"""Graph inputs updated in place (a KV cache, a step counter): the graph
API's `copy_`, `index_copy_`, `index_add_`, `scatter_` and
`scatter_add_`, the `molten.updates` result attribute they make, what the
launcher does with it (the scatter writes into the input's own memory, no
copy; a value no scatter computes is copied in at the end; an input read
after its update keeps its old values for that read), the header and the
compiled graph's signature. tests/test_scatter_gpu.py runs them."""

import numpy as np
import pytest

import molten
from molten.ir import DataflowGraph


def _steps(compiled) -> list[str]:
    return [type(s).__name__ for s in compiled.program]


def _cache_graph() -> DataflowGraph:
    g = DataflowGraph("step")
    x = g.add_input("x", [2, 4, 1, 8], "float16")
    cache = g.add_input("cache", [2, 4, 16, 8], "float16")
    pos = g.add_input("pos", [1], "int64")
    new = g.index_copy_(cache, 2, pos, g.mul(x, 2.0))
    g.add_output(g.reduce_sum(new, [2]), "y")
    return g


def test_index_copy_in_place_writes_the_cache_itself():
    """The cache's update is a result `{molten.updates = 1}` named as the
    input; compiled, the scatter kernel stores into the cache's pointer:
    no output parameter for it, no copy, the parameter not const, the
    header saying so; the compiled graph's outputs are the others."""
    g = _cache_graph()
    text = g.to_mlir()
    assert '{molten.name = "cache", molten.updates = 1 : i64}' in text
    compiled = molten.ZeroCompiler().compile(g)
    assert compiled.updated == (1,)
    assert [o.name for o in compiled.outputs] == ["y"]
    assert "Copy" not in _steps(compiled)
    scatter = compiled.program[0]
    assert scatter.kernel == "step_scatter0"
    assert scatter.args[-1] == 1  # its output is the cache's slot
    assert (
        "cudaError_t step(const __half* x, __half* cache, const int64_t* pos, "
        "__half* y, cudaStream_t stream);" in compiled.header
    )
    assert "//   cache: input, updated in place, 2 x 4 x 16 x 8 __half" in (
        compiled.header
    )


def test_the_interpreter_gives_the_updated_input_after_the_outputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 1, 8)).astype(np.float16)
    cache = rng.standard_normal((2, 4, 16, 8)).astype(np.float16)
    y, new = molten.interpret(_cache_graph(), x, cache, np.array([5]))
    want = cache.astype(np.float32)
    want[:, :, 5:6] = 2 * x.astype(np.float32)
    np.testing.assert_array_equal(new, want.astype(np.float16))
    np.testing.assert_allclose(y, want.sum(2), rtol=2e-3, atol=2e-2)


def test_chained_updates_write_one_memory():
    """Two updates of one cache (the second of the first's result) and a
    read after: both scatters write the cache, nothing is copied."""
    g = DataflowGraph("twice")
    cache = g.add_input("cache", [2, 8, 4], "bfloat16")
    pos = g.add_input("pos", [1], "int64")
    kv = g.add_input("kv", [2, 1, 4], "bfloat16")
    first = g.index_copy_(cache, 1, pos, kv)
    second = g.index_copy_(first, 1, pos + 1, g.neg(kv))
    g.add_output(g.exp(second), "e")
    compiled = molten.ZeroCompiler().compile(g)
    assert _steps(compiled) == ["Launch", "Launch", "Launch"]
    assert compiled.program[0].args[-1] == compiled.program[1].args[-1] == 0
    rng = np.random.default_rng(1)
    caches, kvs = rng.standard_normal((2, 8, 4)), rng.standard_normal((2, 1, 4))
    e, new = molten.interpret(g, caches, np.array([3]), kvs, reference=True)
    want = caches.copy()
    want[:, 3:4], want[:, 4:5] = kvs, -kvs
    np.testing.assert_allclose(new, want)
    np.testing.assert_allclose(e, np.exp(want))


def test_a_stale_input_is_refused():
    """After an update, the input's tensor holds the old values: using it is
    an error that says to use the returned one; only inputs (or their
    latest update) are updated in place, and a refused call adds nothing."""
    g = DataflowGraph("stale")
    cache = g.add_input("cache", [2, 8, 4], "bfloat16")
    pos = g.add_input("pos", [1], "int64")
    kv = g.add_input("kv", [2, 1, 4], "bfloat16")
    before = len(list(g._block.ops))
    with pytest.raises(molten.GraphError, match="is not a graph input"):
        g.index_copy_(g.exp(kv), 1, pos, kv)
    assert len(list(g._block.ops)) == before + 1  # the exp alone
    g.index_copy_(cache, 1, pos, kv)
    with pytest.raises(
        molten.GraphError,
        match="holds the values from before molten.index_copy_ of input 'cache'",
    ):
        g.add_output(g.exp(cache))
    with pytest.raises(molten.GraphError, match="holds the values from before"):
        g.index_copy_(cache, 1, pos, kv)


def test_updates_survive_the_text_round_trip():
    g = _cache_graph()
    again = DataflowGraph.from_mlir(g.to_mlir())
    assert again.to_mlir() == g.to_mlir()


def test_a_value_no_scatter_computes_is_copied_in_at_the_end():
    """copy_ of a computed value (a step counter plus one): computed into a
    buffer, copied into the input after every kernel; a graph with updates
    alone has no output pointer at all."""
    g = DataflowGraph("counter")
    step = g.add_input("step", [1], "int64")
    h = g.add_input("h", [3], "float32")
    g.add_output(g.mul(h, g.cast(step, "float32")), "y")
    g.copy_(step, g.add(step, 1))
    compiled = molten.ZeroCompiler().compile(g)
    assert _steps(compiled) == ["Launch", "Alloc", "Launch", "Copy", "Free"]
    assert compiled.program[3].target == 0  # into the input's slot
    assert molten.interpret(g, np.array([3]), np.ones(3))[1].tolist() == [4]

    only = DataflowGraph("only_updates")
    cache = only.add_input("cache", [2, 8, 4], "float32")
    pos = only.add_input("pos", [1], "int64")
    only.index_copy_(cache, 1, pos, only.add_input("kv", [2, 1, 4], "float32"))
    compiled = molten.ZeroCompiler().compile(only)
    assert compiled.outputs == () and _steps(compiled) == ["Launch"]
    assert (
        "cudaError_t only_updates(float* cache, const int64_t* pos, const float* kv, "
        "cudaStream_t stream);" in compiled.header
    )


def test_copy_broadcasts_and_casts_like_torch():
    """x.copy_(value): value broadcast to x's shape and cast to its dtype."""
    g = DataflowGraph("fill")
    x = g.add_input("x", [3, 4], "float16")
    row = g.add_input("row", [4], "float32")
    g.copy_(x, row)
    g.add_output(row + 1.0, "r")
    _, new = molten.interpret(g, np.zeros((3, 4)), np.arange(4.0))
    assert new.dtype == np.float16
    np.testing.assert_array_equal(new, np.tile(np.arange(4.0), (3, 1)))


def test_a_read_after_the_update_keeps_the_old_values():
    """In text, a function may read an input after the scatter that updates
    it: that scatter then writes a buffer of its own, copied into the input
    at the end, so the later read sees the values from before."""
    text = """
func.func @late_read(%cache: tensor<8xf32>, %ids: tensor<2xi64>, %src: tensor<2xf32>) -> (tensor<8xf32>, tensor<8xf32> {molten.updates = 0 : i64}) {
  %new = molten.scatter %cache, %ids, %src axis = 0 : (tensor<8xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<8xf32>
  %old = molten.exp %cache : tensor<8xf32>
  func.return %old, %new : tensor<8xf32>, tensor<8xf32>
}
"""  # noqa: E501
    g = DataflowGraph.from_mlir(text)
    compiled = molten.ZeroCompiler().compile(g)
    steps = _steps(compiled)
    assert steps.count("Copy") == 2  # into the scatter's buffer, then back
    assert steps.index("Copy", steps.index("Launch") + 1) > max(
        i for i, s in enumerate(steps) if s == "Launch"
    )
    old, new = molten.interpret(g, np.zeros(8), np.array([1, 5]), np.array([2.0, 3.0]))
    np.testing.assert_array_equal(old, np.ones(8))
    assert new.tolist() == [0, 2, 0, 0, 0, 3, 0, 0]


def test_a_scatter_reading_its_destination_writes_elsewhere_first():
    """x.scatter_(0, ids, x) on an input: the kernel reads x while writing,
    so it writes a buffer of its own, copied into x at the end."""
    g = DataflowGraph("permute")
    x = g.add_input("x", [8], "int64")
    ids = g.add_input("ids", [8], "int64")
    g.scatter_(x, 0, ids, x)
    compiled = molten.ZeroCompiler().compile(g)
    assert _steps(compiled) == ["Alloc", "Copy", "Launch", "Copy", "Free"]
    new = molten.interpret(g, np.arange(8) * 10, np.arange(8)[::-1].copy())
    assert new.tolist() == [70, 60, 50, 40, 30, 20, 10, 0]
