"""Scatter kernels and inputs updated in place, on the GPU: torch.scatter,
scatter_add, index_copy, index_add and index_put as Molten builds them,
at every element type they take, against torch itself (bit for bit where
no float is added; within the adds' rounding where one is), into outputs
poisoned first; a KV cache updated in place over several steps, through
the runtime and through the nvcc-built launcher (which takes no output
pointer for the cache); indices out of range skipped, or stopping the
kernel where MOLTEN_CHECK_INDICES=1.

Marker `gpu`: skipped where nvcc, a GPU or torch is missing."""

import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import molten
from molten.ir import DataflowGraph

torch = pytest.importorskip("torch", reason="the GPU tests hold device memory in torch")

NVCC = shutil.which("nvcc")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(NVCC is None, reason="nvcc is not installed"),
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU or driver"),
]

DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
ADDED = ("float32", "float16", "bfloat16", "int64", "int32")
"""What CUDA adds atomically (scatter_add's kernels)."""


def _values(shape, dtype, generator):
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=generator).bool().cuda()
    if dtype in ("int8", "uint8", "int32", "int64"):
        low = 0 if dtype == "uint8" else -50
        return (
            torch.randint(low, 50, shape, generator=generator).to(DTYPES[dtype]).cuda()
        )
    return torch.randn(shape, generator=generator).to(DTYPES[dtype]).cuda()


def _poisoned(shape, dtype):
    """An output of NaN, -1 (255), or bools that are neither (0xff bytes)."""
    t = DTYPES[dtype]
    if t == torch.bool:
        return torch.full(shape, 0xFF, dtype=torch.uint8, device="cuda").view(t)
    fill = float("nan") if t.is_floating_point else 255 if t == torch.uint8 else -1
    return torch.full(shape, fill, dtype=t, device="cuda")


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_scatter_matches_torch(dtype, index_dtype):
    """torch.scatter along the middle axis, every index distinct per row
    (torch leaves duplicates' order undefined), a source computed in the
    kernel (negated, cast), at an odd size: the untouched elements keep x's
    values, the others take the source's, bit for bit."""
    generator = torch.Generator().manual_seed(1)
    shape, taken = (3, 37, 5), 11
    g = DataflowGraph("scatter_mid")
    x = g.add_input("x", list(shape), dtype)
    ids = g.add_input("ids", [3, taken, 5], index_dtype)
    src = g.add_input("src", [3, taken, 5], dtype)
    made = src if dtype in ("bool", "uint8") else g.neg(src)
    g.add_output(g.scatter(x, 1, ids, made), "y")
    compiled = molten.ZeroCompiler().compile(g)
    assert [k.name for k in compiled.kernels] == ["scatter_mid_scatter0"]
    xs = _values(shape, dtype, generator)
    index = torch.stack(
        [torch.randperm(shape[1], generator=generator)[:taken] for _ in range(15)]
    )
    index = index.reshape(3, 5, taken).transpose(1, 2).contiguous()
    index = index.to(DTYPES[index_dtype]).cuda()
    sources = _values((3, taken, 5), dtype, generator)
    out = _poisoned(shape, dtype)
    compiled(xs, index, sources, out=out)
    made_torch = sources if dtype in ("bool", "uint8") else -sources
    want = xs.scatter(1, index.long(), made_torch)
    assert torch.equal(out, want)


@pytest.mark.parametrize("dtype", ADDED)
def test_scatter_add_adds_every_duplicate(dtype):
    """scatter_add of 300 values into 7 places a row, so each place takes
    dozens of atomic adds: integers exact, floats within their order of
    addition's rounding (torch's CUDA scatter_add adds atomically too)."""
    generator = torch.Generator().manual_seed(2)
    g = DataflowGraph("scatter_add_dups")
    x = g.add_input("x", [5, 7], dtype)
    ids = g.add_input("ids", [5, 300], "int64")
    src = g.add_input("src", [5, 300], dtype)
    g.add_output(g.scatter_add(x, 1, ids, src), "y")
    compiled = molten.ZeroCompiler().compile(g)
    xs = _values((5, 7), dtype, generator)
    index = torch.randint(0, 7, (5, 300), generator=generator).cuda()
    sources = _values((5, 300), dtype, generator)
    got = compiled(xs, index, sources)
    if dtype.startswith("int"):
        assert torch.equal(got, xs.scatter_add(1, index, sources))
        return
    want = xs.double().scatter_add(1, index, sources.double())
    tolerance = {"float32": 1e-4, "float16": 0.1, "bfloat16": 0.5}[dtype]
    torch.testing.assert_close(got.double(), want, rtol=0, atol=tolerance)


def test_histogram_adds_into_zeros():
    """zeros(...).scatter_add(...): the zeros are made by a kernel of their
    own, then added into (a bincount with weights)."""
    g = DataflowGraph("histogram")
    ids = g.add_input("ids", [10000], "int64")
    w = g.add_input("w", [10000], "float32")
    g.add_output(g.scatter_add(g.zeros([64], "float32"), 0, ids, w), "h")
    compiled = molten.ZeroCompiler().compile(g)
    index = torch.randint(0, 64, (10000,), device="cuda")
    weights = torch.rand(10000, device="cuda")
    got = compiled(index, weights)
    want = torch.bincount(index, weights.double(), minlength=64)
    torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-3)


def test_index_add_and_index_put_match_torch():
    """index_add (alpha 0.5) and index_put with one index tensor, the
    functional forms: x is copied, then written."""
    g = DataflowGraph("index_ops")
    x = g.add_input("x", [9, 33, 8], "bfloat16")
    index = g.add_input("index", [4], "int64")
    src = g.add_input("src", [9, 4, 8], "bfloat16")
    g.add_output(g.index_add(x, 1, index, src, alpha=0.5), "added")
    g.add_output(g.index_copy(x, 1, index, src), "copied")
    compiled = molten.ZeroCompiler().compile(g)
    xs = torch.randn(9, 33, 8, device="cuda").bfloat16()
    positions = torch.tensor([3, 30, 0, 17], device="cuda")
    sources = torch.randn(9, 4, 8, device="cuda").bfloat16()
    added, copied = compiled(xs, positions, sources)
    assert torch.equal(copied, xs.index_copy(1, positions, sources))
    want = xs.float().index_add(1, positions, sources.float(), alpha=0.5)
    torch.testing.assert_close(added.float(), want, rtol=8e-3, atol=8e-3)


def _cache_step() -> DataflowGraph:
    """One decode step's cache write: rope-like scaled keys written into the
    cache at the step's position (in place), and a read of the updated cache
    (a sum over its positions)."""
    g = DataflowGraph("cache_step")
    k = g.add_input("k", [2, 4, 1, 16], "bfloat16")
    cache = g.add_input("cache", [2, 4, 64, 16], "bfloat16")
    pos = g.add_input("pos", [1], "int64")
    updated = g.index_copy_(cache, 2, pos, g.mul(k, 2.0))
    g.add_output(g.reduce_sum(g.cast(updated, "float32"), 2), "total")
    return g


def _cache_reference(cache, k, position):
    cache.index_copy_(2, torch.tensor([position], device="cuda"), k * 2)
    return cache.float().sum(2)


def test_a_cache_is_updated_in_place_step_after_step():
    """Through the runtime: each call writes the step's keys into the
    caller's cache tensor (the same memory: a CUDA graph replays it), the
    other output is returned, and after 5 steps the cache equals torch's."""
    compiled = molten.ZeroCompiler().compile(_cache_step())
    assert compiled.updated == (1,)
    assert [o.name for o in compiled.outputs] == ["total"]
    assert not any(type(s).__name__ == "Copy" for s in compiled.program)
    cache = torch.randn(2, 4, 64, 16, device="cuda").bfloat16()
    reference = cache.clone()
    pointer = cache.data_ptr()
    for position in (0, 1, 2, 63, 7):
        k = torch.randn(2, 4, 1, 16, device="cuda").bfloat16()
        total = compiled(k, cache, torch.tensor([position], device="cuda"))
        want = _cache_reference(reference, k, position)
        assert cache.data_ptr() == pointer
        assert torch.equal(cache, reference)
        torch.testing.assert_close(total, want, rtol=1e-5, atol=1e-4)


def test_the_interpreter_returns_the_updated_input():
    """The interpreter is functional: the updated cache comes back after the
    graph's outputs, the caller's array untouched; its values are the
    GPU's."""
    g = _cache_step()
    cache = torch.randn(2, 4, 64, 16, device="cuda").bfloat16()
    k = torch.randn(2, 4, 1, 16, device="cuda").bfloat16()
    as_numpy = [t.float().cpu().numpy() for t in (k, cache)]
    total, new_cache = molten.interpret(g, *as_numpy, np.array([5]))
    np.testing.assert_array_equal(as_numpy[1], cache.float().cpu().numpy())
    molten.ZeroCompiler().compile(g)(k, cache, torch.tensor([5], device="cuda"))
    np.testing.assert_array_equal(new_cache, cache.float().cpu().numpy())


def test_the_launcher_writes_the_callers_cache(tmp_path):
    """The `.cu` built by nvcc: the launcher takes the cache as a non-const
    input and no output for it, and writes the caller's buffer."""
    compiler = molten.ZeroCompiler()
    g = _cache_step()
    compiled = compiler.compile(g)
    assert "__nv_bfloat16* cache" in compiled.header
    assert "const __nv_bfloat16* cache" not in compiled.header
    compiler.save(compiled, tmp_path)
    major, minor = torch.cuda.get_device_capability()
    library = tmp_path / "libcache_step.so"
    built = subprocess.run(
        [
            NVCC,
            f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}",
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-o",
            str(library),
            str(tmp_path / "cache_step.cu"),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    launcher = ctypes.CDLL(str(library)).cache_step
    launcher.restype = ctypes.c_int
    cache = torch.randn(2, 4, 64, 16, device="cuda").bfloat16()
    reference = cache.clone()
    k = torch.randn(2, 4, 1, 16, device="cuda").bfloat16()
    position = torch.tensor([9], device="cuda")
    total = torch.full((2, 4, 16), float("nan"), device="cuda")
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    pointers = [ctypes.c_void_p(t.data_ptr()) for t in (k, cache, position, total)]
    assert launcher(*pointers, stream) == 0
    torch.cuda.synchronize()
    want = _cache_reference(reference, k, 9)
    assert torch.equal(cache, reference)
    torch.testing.assert_close(total, want, rtol=1e-5, atol=1e-4)


def test_a_step_counter_is_copied_in_at_the_end():
    """copy_ of a value no scatter computes (a counter plus one) writes the
    input after every kernel has read its old value."""
    g = DataflowGraph("counter")
    step = g.add_input("step", [1], "int64")
    h = g.add_input("h", [3], "float32")
    g.add_output(g.mul(h, g.cast(step, "float32")), "scaled")
    g.copy_(step, g.add(step, 1))
    compiled = molten.ZeroCompiler().compile(g)
    counter = torch.tensor([3], device="cuda")
    values = torch.ones(3, device="cuda")
    first = compiled(counter, values)
    second = compiled(counter, values)
    assert first.tolist() == [3.0, 3.0, 3.0]
    assert second.tolist() == [4.0, 4.0, 4.0]
    assert counter.item() == 5


def test_indices_out_of_range_are_skipped():
    """The default: a write to an index out of range is dropped (never a
    write outside the output: compute-sanitizer checks the kernels)."""
    g = DataflowGraph("skipped")
    x = g.add_input("x", [10], "float32")
    ids = g.add_input("ids", [4], "int64")
    src = g.add_input("src", [4], "float32")
    g.add_output(g.scatter(x, 0, ids, src))
    compiled = molten.ZeroCompiler().compile(g)
    got = compiled(
        torch.zeros(10, device="cuda"),
        torch.tensor([-1, 3, 10, 99], device="cuda"),
        torch.tensor([1.0, 2.0, 3.0, 4.0], device="cuda"),
    )
    assert got.tolist() == [0, 0, 0, 2.0, 0, 0, 0, 0, 0, 0]


CHECKED = """
import torch, molten
from molten.ir import DataflowGraph
g = DataflowGraph("checked")
x = g.add_input("x", [10], "float32")
ids = g.add_input("ids", [4], "int64")
g.add_output(g.scatter(x, 0, ids, 1.0))
compiled = molten.ZeroCompiler().compile(g)
try:
    compiled(torch.zeros(10, device="cuda"), torch.tensor([1, 2, 12, 3], device="cuda"))
    torch.cuda.synchronize()
except Exception as error:
    print("RAISED", type(error).__name__)
"""


def test_checked_indices_stop_the_scatter_at_the_bad_index(tmp_path):
    """MOLTEN_CHECK_INDICES=1: the bad index, its position and the size are
    printed, and the kernel stops (in a process of its own)."""
    script = tmp_path / "checked.py"
    script.write_text(CHECKED)
    env = {**os.environ, "MOLTEN_CHECK_INDICES": "1"}
    ran = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env
    )
    output = ran.stdout + ran.stderr
    assert "molten: molten.scatter indices: index 12 at position 2" in output, output
    assert "out of range [0, 10)" in output
