"""The runtime's parts that need no GPU: the launcher replayed as data, NVRTC
compilation of every kernel case, the on-disk cache, compile errors traced
back to the graph, array helpers, `molten.ops` and `@zero`'s refusals.

NVRTC runs on the CPU; its tests skip (with the reason) where cuda-python or
the NVRTC library is missing. The GPU half is tests/test_runtime_gpu.py.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_cases import (
    CASES,
    DTYPES,
    REPRESENTATIVES,
    WGMMA_ARCH,
    WGMMA_CASES,
    WGMMA_DTYPES,
    WGMMA_REPRESENTATIVES,
    case_params,
    compiled_case,
)

import molten
from molten import ZeroCompiler, ops
from molten.errors import CompileError, GraphError, InputError
from molten.ir import DataflowGraph
from molten.runtime import program as steps
from molten.runtime.arrays import (
    contiguous_strides,
    dtype_of,
    from_bfloat16_bits,
    is_contiguous,
    to_bfloat16_bits,
)
from molten.runtime.cache import MAGIC, frame, unframe


def _nvrtc_missing() -> str | None:
    try:
        from cuda.bindings import nvrtc

        from molten.runtime.nvrtc import cuda_include_dir

        nvrtc.nvrtcVersion()
        cuda_include_dir()
    except Exception as error:  # any missing piece: library, headers, bindings
        return f"NVRTC is not usable here: {error}"
    return None


NVRTC_MISSING = _nvrtc_missing()
needs_nvrtc = pytest.mark.skipif(NVRTC_MISSING is not None, reason=str(NVRTC_MISSING))


def _graph(case: str, dtype: str) -> DataflowGraph:
    g = DataflowGraph(case)
    CASES[case](g, dtype)
    return g


# -- the launcher as data -------------------------------------------------


def test_signature_names_shapes_and_dtypes():
    compiled = ZeroCompiler().compile(_graph("rms_norm_silu_3x2048", "bfloat16"))
    assert [str(s) for s in compiled.inputs] == [
        "'x' (3x2048 bfloat16)",
        "'w' (2048 bfloat16)",
        "'gate' (3x2048 bfloat16)",
    ]
    assert compiled.outputs == (molten.TensorSpec("y", (3, 2048), "bfloat16"),)
    assert compiled.outputs[0].nbytes == 3 * 2048 * 2


def test_program_of_a_single_kernel():
    compiled = ZeroCompiler().compile(_graph("rms_norm_7x4099", "float32"))
    (launch,) = compiled.program
    assert launch == steps.Launch(
        compiled.kernels[0].name,
        compiled.kernels[0].grid,
        compiled.kernels[0].block,
        (0, 1, 2),
    )


def test_program_gives_a_fallback_its_own_shared_memory():
    """The persistent TMA gemm takes most of an SM's shared memory; its SIMT
    fallback (for misaligned pointers) has static tiles and no dynamic
    shared memory: launched with the gemm's, it could not start (the two
    together are past the SM's limit)."""
    from molten.passes.schedule.common import wgmma_tile_schedule
    from molten.passes.schedule.cost import most_stages
    from molten.passes.schedule.target import target_named

    case = "wgmma_nk_persistent_160_520x1000x4100"
    graph = DataflowGraph(case)
    WGMMA_CASES[case](graph, "bfloat16")
    stages = most_stages((128, 160), target_named("sm_90a"))
    schedule = wgmma_tile_schedule(128, 160, stages, persistent=132)
    compiled = ZeroCompiler(arch=WGMMA_ARCH).compile(
        graph, schedules={f"{case}_gemm0": schedule}
    )
    (launch,) = [s for s in compiled.program if isinstance(s, steps.Launch)]
    assert launch.fallback is not None
    assert launch.shared_bytes >= stages * (128 + 160) * 64 * 2
    assert launch.fallback_shared_bytes == 0


def test_program_allocates_launches_in_order_and_frees():
    """softmax along axis 0 is several kernels with buffers between them;
    every buffer is allocated before its first use and freed after its last."""
    compiled = ZeroCompiler().compile(_graph("softmax_axis0", "float16"))
    program = compiled.program
    launches = [s for s in program if isinstance(s, steps.Launch)]
    assert [s.kernel for s in launches] == [k.name for k in compiled.kernels]
    assert len(launches) > 1
    allocated = {s.slot: i for i, s in enumerate(program) if isinstance(s, steps.Alloc)}
    freed = {s.slot: i for i, s in enumerate(program) if isinstance(s, steps.Free)}
    assert allocated and allocated.keys() == freed.keys()
    assert min(allocated) == 2  # after the input and the output
    for slot in allocated:
        uses = [
            i
            for i, s in enumerate(program)
            if isinstance(s, steps.Launch) and slot in s.args
        ]
        assert allocated[slot] < min(uses) and max(uses) < freed[slot]
    (alloc, *_) = (s for s in program if isinstance(s, steps.Alloc))
    assert alloc.nbytes % 2 == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 5000)), max_size=40))
def test_arena_keeps_live_buffers_apart_and_reuses_freed_ones(moves):
    """Random programs of allocations and frees (a True move frees the
    oldest live buffer): every buffer starts aligned inside the arena, no
    two alive at once overlap, and the arena is no larger than the sum of
    the buffers, nor than it needs when each free space is reused."""
    program, live, slot = [], [], 2
    for free, nbytes in moves:
        if free and live:
            program.append(steps.Free(live.pop(0)))
        else:
            program.append(steps.Alloc(slot, nbytes))
            live.append(slot)
            slot += 1
    layout = steps.arena(tuple(program), excluded=frozenset({5}))
    padded = {
        s.slot: -(-s.nbytes // steps.ARENA_ALIGNMENT) * steps.ARENA_ALIGNMENT
        for s in program
        if isinstance(s, steps.Alloc)
    }
    assert 5 not in layout.offsets
    alive: set[int] = set()
    for step in program:
        if isinstance(step, steps.Free):
            alive.discard(step.slot)
            continue
        if step.slot == 5:
            continue
        start = layout.offsets[step.slot]
        assert start % steps.ARENA_ALIGNMENT == 0
        assert start + padded[step.slot] <= layout.size
        for other in alive:
            other_start = layout.offsets[other]
            assert (
                start + padded[step.slot] <= other_start
                or other_start + padded[other] <= start
            ), (step.slot, other)
        alive.add(step.slot)
    assert layout.size <= sum(n for s, n in padded.items() if s != 5)


def test_arena_of_a_chain_reuses_the_first_buffer():
    """a -> b -> c, each freed after the next is made: c takes a's place."""
    program = (
        steps.Alloc(2, 1000),
        steps.Alloc(3, 1000),
        steps.Free(2),
        steps.Alloc(4, 600),
        steps.Free(3),
        steps.Free(4),
    )
    layout = steps.arena(program)
    assert layout.offsets == {2: 0, 3: 1024, 4: 0} and layout.size == 2048


def test_program_copies_outputs_that_are_inputs_or_returned_twice():
    compiled = ZeroCompiler().compile(_graph("passthrough_1000", "float32"))
    copies = [s for s in compiled.program if isinstance(s, steps.Copy)]
    assert copies, compiled.program
    n_in = len(compiled.inputs)
    for copy in copies:
        # Into an output, from an input or an output written before it.
        assert copy.target >= n_in and copy.source < copy.target
        assert copy.nbytes == compiled.outputs[copy.target - n_in].nbytes


# -- NVRTC ------------------------------------------------


@pytest.mark.sweep
@needs_nvrtc
@pytest.mark.parametrize(
    ("case", "dtype", "arch"), case_params(REPRESENTATIVES, DTYPES, ["sm_90"])
)
def test_kernel_cases_compile_with_nvrtc(case, dtype, arch, monkeypatch):
    """The JIT compiles the same source nvcc does (tests/test_codegen.py
    compiles every case), and the cubin holds every kernel the program
    launches. What NVRTC adds, its headers and options, meets each device
    helper and runtime call in the representative cases
    (kernel_cases.REPRESENTATIVES). One arch: nvcc builds each case for
    sm_80 and sm_90 with the same headers."""
    from molten.runtime.nvrtc import compile_cubin

    monkeypatch.setenv("MOLTEN_DISABLE_CACHE", "1")
    compiled = compiled_case(case, dtype)
    cubin = compile_cubin(compiled.source, arch)
    assert cubin[:4] == b"\x7fELF"
    for launch in (s for s in compiled.program if isinstance(s, steps.Launch)):
        assert launch.kernel.encode() in cubin


@pytest.mark.sweep
@needs_nvrtc
@pytest.mark.parametrize(
    ("case", "dtype"), case_params(WGMMA_REPRESENTATIVES, WGMMA_DTYPES)
)
def test_wgmma_cases_compile_with_nvrtc(case, dtype, monkeypatch):
    """NVRTC builds the sm_90a gemms and attentions for sm_90a, the target
    the runtime takes for a graph compiled for it on an sm_90 device (the
    representative cases, as above)."""
    from molten.runtime.loaded_kernels import target_arch
    from molten.runtime.nvrtc import compile_cubin

    monkeypatch.setenv("MOLTEN_DISABLE_CACHE", "1")
    compiled = compiled_case(case, dtype, WGMMA_ARCH)
    assert target_arch(compiled.arch, "sm_90") == WGMMA_ARCH
    cubin = compile_cubin(compiled.source, WGMMA_ARCH)
    for launch in (s for s in compiled.program if isinstance(s, steps.Launch)):
        assert launch.kernel.encode() in cubin


def test_sm_90a_graph_refuses_other_devices():
    from molten.errors import LaunchError
    from molten.runtime.loaded_kernels import target_arch

    assert target_arch("sm_90", "sm_80") == "sm_80"
    with pytest.raises(LaunchError, match="sm_90a, which runs on sm_90 devices only"):
        target_arch("sm_90a", "sm_80")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MOLTEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MOLTEN_DISABLE_CACHE", raising=False)
    return tmp_path / "cache"


def _entries(directory) -> list:
    return sorted(
        p for p in directory.rglob("*") if p.is_file() and "entries" in p.parts
    )


@needs_nvrtc
def test_cache_hit_skips_nvrtc(cache_dir, monkeypatch):
    from molten.runtime import nvrtc

    source = ZeroCompiler().compile(_graph("rms_norm_5x31", "float32")).source
    first = nvrtc.compile_cubin(source, "sm_90")
    assert len(_entries(cache_dir)) == 1

    def no_compile(*args, **kwargs):
        raise AssertionError("NVRTC ran on a cache hit")

    monkeypatch.setattr("cuda.core.Program", no_compile)
    assert nvrtc.compile_cubin(source, "sm_90") == first
    # Another arch is another entry (and needs NVRTC).
    with pytest.raises(AssertionError, match="NVRTC ran"):
        nvrtc.compile_cubin(source, "sm_80")


@needs_nvrtc
def test_damaged_cache_entry_is_rebuilt(cache_dir):
    from molten.runtime import nvrtc

    source = ZeroCompiler().compile(_graph("rms_norm_5x31", "float16")).source
    good = nvrtc.compile_cubin(source, "sm_90")
    (entry,) = _entries(cache_dir)
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2])  # a truncated write
    assert nvrtc.compile_cubin(source, "sm_90") == good
    assert entry.read_bytes() == data
    entry.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # a flipped bit
    assert nvrtc.compile_cubin(source, "sm_90") == good
    assert entry.read_bytes() == data


@needs_nvrtc
def test_disabled_cache_writes_nothing(cache_dir, monkeypatch):
    from molten.runtime import nvrtc

    monkeypatch.setenv("MOLTEN_DISABLE_CACHE", "1")
    source = ZeroCompiler().compile(_graph("rms_norm_5x31", "float32")).source
    nvrtc.compile_cubin(source, "sm_90")
    assert not cache_dir.exists() or not _entries(cache_dir)


@pytest.fixture
def fresh_cache_warnings(monkeypatch):
    """The cache warns once per directory and failure: forget earlier ones."""
    from molten.runtime import cache

    monkeypatch.setattr(cache, "_warned", set())


class _FailingStore:
    """A cache store whose every file operation fails as `error` does."""

    def __init__(self, error: OSError):
        self.error = error

    def get(self, key):
        raise self.error

    def __setitem__(self, key, value):
        raise self.error

    def __delitem__(self, key):
        raise self.error


@needs_nvrtc
def test_cache_dir_that_is_a_file_warns_and_compiles(
    cache_dir, fresh_cache_warnings, tmp_path, monkeypatch
):
    from molten.runtime import nvrtc
    from molten.runtime.cache import CacheWarning

    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("MOLTEN_CACHE_DIR", str(blocker))
    source = compiled_case("rms_norm_5x31", "float32").source
    with pytest.warns(CacheWarning, match=r"a_file could not be created.*in memory"):
        cubin = nvrtc.compile_cubin(source, "sm_90")
    assert cubin[:4] == b"\x7fELF"


@needs_nvrtc
def test_cache_entry_that_is_a_directory_warns_and_compiles(
    cache_dir, fresh_cache_warnings
):
    from molten.runtime import nvrtc
    from molten.runtime.cache import CacheWarning

    source = compiled_case("rms_norm_5x31", "float32").source
    good = nvrtc.compile_cubin(source, "sm_90")
    (entry,) = _entries(cache_dir)
    entry.unlink()
    entry.mkdir()
    with pytest.warns(CacheWarning) as caught:
        assert nvrtc.compile_cubin(source, "sm_90") == good
    messages = " ".join(str(w.message) for w in caught)
    assert "could not be read" in messages and "could not be written" in messages


@needs_nvrtc
@pytest.mark.parametrize(
    "error",
    [PermissionError(13, "Permission denied"), OSError(28, "No space left on device")],
    ids=["unwritable", "full"],
)
def test_unusable_cache_store_warns_once_and_compiles(
    cache_dir, fresh_cache_warnings, monkeypatch, error
):
    """Reads, writes and the dropping of a damaged entry that fail (no
    permission, a full disk) never fail the call."""
    from molten.runtime import cache, nvrtc
    from molten.runtime.cache import CacheWarning

    def failing_cache(self, directory=None):
        self.directory, self._store = cache_dir, _FailingStore(error)

    monkeypatch.setattr(cache.ProgramCache, "__init__", failing_cache)
    source = compiled_case("rms_norm_5x31", "float16").source
    with pytest.warns(CacheWarning) as caught:
        first = nvrtc.compile_cubin(source, "sm_90")
        again = nvrtc.compile_cubin(source, "sm_90")
    assert first == again and first[:4] == b"\x7fELF"
    messages = [str(w.message) for w in caught]
    # one warning for reads and one for writes, not one a call
    assert sum("could not be read" in m for m in messages) == 1, messages
    assert sum("could not be written" in m for m in messages) == 1, messages
    store = cache.ProgramCache()
    with pytest.warns(CacheWarning, match="drop a damaged entry"):
        store.discard(b"key")


@pytest.mark.parametrize(
    ("value", "enabled"),
    [("", True), ("0", True), ("false", True), ("No", True), ("OFF", True),
     ("1", False), ("true", False), ("YES", False), ("on", False)],
)  # fmt: skip
def test_disable_cache_accepts_the_usual_spellings(value, enabled, monkeypatch):
    from molten.runtime.cache import cache_enabled

    monkeypatch.setenv("MOLTEN_DISABLE_CACHE", value)
    assert cache_enabled() is enabled


def test_disable_cache_with_an_unknown_value_warns_and_disables(monkeypatch):
    from molten.runtime.cache import CacheWarning, cache_enabled

    monkeypatch.setenv("MOLTEN_DISABLE_CACHE", "maybe")
    with pytest.warns(CacheWarning, match="'maybe' is neither true"):
        assert cache_enabled() is False


def _compile_in_child(args) -> bytes:
    source, directory = args
    os.environ["MOLTEN_CACHE_DIR"] = directory
    from molten.runtime.nvrtc import compile_cubin

    return compile_cubin(source, "sm_90")


@needs_nvrtc
def test_concurrent_processes_share_the_cache(cache_dir):
    """Processes compiling the same source at once all get the same, whole
    cubin, and leave one entry."""
    source = ZeroCompiler().compile(_graph("softmax_6x1023", "float32")).source
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        cubins = pool.map(_compile_in_child, [(source, str(cache_dir))] * 8)
    assert len(set(cubins)) == 1 and cubins[0][:4] == b"\x7fELF"
    (entry,) = _entries(cache_dir)
    assert unframe(entry.read_bytes()) == cubins[0]


def test_cache_frame_detects_damage():
    payload = b"\x7fELF" + bytes(range(200))
    framed = frame(payload)
    assert framed.startswith(MAGIC) and unframe(framed) == payload
    assert unframe(framed[:-1]) is None
    assert unframe(b"garbage" + framed) is None
    assert unframe(framed[:10]) is None


@needs_nvrtc
def test_compile_error_points_at_the_line_kernel_and_graph_value(monkeypatch):
    """A source NVRTC rejects (here made so by hand: generated code is
    meant to compile) gets an error naming the line, its kernel, the ops the
    kernel fuses and the graph value the line computes."""
    from molten.runtime.nvrtc import SourceMap, compile_cubin

    monkeypatch.setenv("MOLTEN_DISABLE_CACHE", "1")
    g = DataflowGraph("seed")
    x = g.add_input("x", [4, 96])
    w = g.add_input("w", [96])
    g.add_output(g.rms_norm(x, w, name="norm"))
    compiled = ZeroCompiler().compile(g)
    assert "rsqrtf(" in compiled.source
    broken = compiled.source.replace("rsqrtf(", "rsqrt_typo(", 1)
    line = next(
        i + 1 for i, text in enumerate(broken.splitlines()) if "rsqrt_typo(" in text
    )
    kernel = compiled.program[0].kernel
    source_map = SourceMap(
        "seed",
        {kernel: compiled.kernels[0].fused_ops},
        compiled.origins,
        {"rsqrt": "molten.rsqrt"},
    )
    with pytest.raises(CompileError) as caught:
        compile_cubin(broken, "sm_90", source_map)
    message = str(caught.value)
    assert "NVRTC could not compile graph 'seed' for sm_90" in message
    assert f"line {line}: error:" in message and "rsqrt_typo" in message
    assert f"in kernel {kernel}, which fuses square, reduce_mean" in message
    assert "the line computes the graph value 'rsqrt' (molten.rsqrt)" in message


# -- arrays ------------------------------------------------


def test_dtype_names():
    assert dtype_of("f16") == dtype_of(np.float16) == "float16"
    assert dtype_of(np.dtype("float32")) == "float32"
    assert dtype_of("bf16") == "bfloat16"

    class TorchLike:  # torch.bfloat16 prints as "torch.bfloat16"
        def __str__(self):
            return "torch.bfloat16"

    assert dtype_of(TorchLike()) == "bfloat16"
    assert dtype_of(np.int8) == "int8" and dtype_of("bool") == "bool"
    with pytest.raises(InputError, match="float32, float16, bfloat16, int64, .*, not"):
        dtype_of(np.float64)


def test_bfloat16_bits_round_to_nearest_even():
    values = np.array([1.0, 1.00390625, 1.01171875, -2.5, 3.0e38, np.inf, np.nan])
    bits = to_bfloat16_bits(values)
    back = from_bfloat16_bits(bits)
    # 1 + 2^-8 is a tie: to even (1.0); 1 + 3 * 2^-8 ties up to 1 + 2^-6.
    assert back[0] == 1.0 and back[1] == 1.0 and back[2] == 1.015625
    assert back[3] == -2.5 and np.isinf(back[5]) and np.isnan(back[6])
    assert bits.dtype == np.uint16


def test_contiguity():
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert is_contiguous((2, 3), None)
    assert is_contiguous((2, 3), (3, 1))
    assert is_contiguous((1, 3), (999, 1))  # a size-1 dim's stride is free
    assert not is_contiguous((2, 3), (1, 2))  # a transposed view
    assert not is_contiguous((2, 3), (6, 2))  # every other element


# -- molten.ops ------------------------------------------------


def test_ops_build_the_same_graph_as_the_methods():
    def spec(use_ops: bool) -> str:
        g = DataflowGraph("spec")
        x = g.add_input("x", [4, 64])
        w = g.add_input("w", [64])
        gate = g.add_input("gate", [4, 64])
        if use_ops:
            y = ops.rms_norm(x, w, eps=1e-5) * ops.silu(gate)
        else:
            y = g.rms_norm(x, w, eps=1e-5) * g.silu(gate)
        g.add_output(y, "y")
        return g.to_mlir()

    assert spec(True) == spec(False)
    assert ops.softmax.__doc__ == DataflowGraph.softmax.__doc__


def test_ops_need_a_tensor():
    with pytest.raises(
        GraphError, match=r"molten.ops.exp needs at least one graph tensor"
    ):
        ops.exp(1.0)


# -- @zero without a GPU --------------------------------------------------------


def _numpy_rms(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def test_zero_refuses_host_arrays_naming_the_argument():
    @molten.zero
    def rms(x, w):
        return ops.rms_norm(x, w)

    x = np.ones((2, 8), np.float32)
    with pytest.raises(InputError, match="argument 'x' is in host memory"):
        rms(x, np.ones(8, np.float32))
    with pytest.raises(InputError, match="argument 'x' is a list, not a device array"):
        rms([1.0, 2.0], x)


def test_zero_fallback_runs_and_says_so():
    @molten.zero(fallback=_numpy_rms)
    def rms(x, w):
        return ops.rms_norm(x, w)

    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    w = np.ones(8, np.float32)
    with pytest.warns(molten.ZeroFallbackWarning, match=r"ran the fallback _numpy_rms"):
        got = rms(x, w)
    np.testing.assert_allclose(got, _numpy_rms(x, w))
    assert not rms.compiled  # nothing was compiled for host arrays


def test_zero_rejects_a_function_that_returns_no_tensor():
    from molten.decorator import ZeroFunction

    def not_a_graph(x):
        return 3

    with pytest.raises(GraphError, match="must return a graph tensor"):
        ZeroFunction(not_a_graph, None)._compile((("x", (4,), "float32", 0),), {})


def test_import_molten_needs_no_torch_or_cuda():
    code = (
        "import sys, molten; "
        "g = molten.DataflowGraph('g'); x = g.add_input('x', [4]); "
        "g.add_output(molten.ops.exp(x), 'y'); molten.ZeroCompiler().compile(g); "
        "roots = {m.split('.')[0] for m in sys.modules}; "
        "bad = roots & {'torch', 'cuda', 'cupy', 'jax'}; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unconsumed_dlpack_capsule_releases_its_owner():
    """A DLPack capsule holds its array alive; dropped unconsumed, it lets go."""
    import gc
    import weakref

    from molten.runtime import dlpack

    class Owner:
        pass

    owner = Owner()
    alive = weakref.ref(owner)
    capsule = dlpack.to_dlpack(owner, 0x1000, (3, 4), "bfloat16", 0)
    del owner
    gc.collect()
    assert alive() is not None  # the capsule keeps it
    assert type(capsule).__name__ == "PyCapsule"
    del capsule
    gc.collect()
    assert alive() is None


# -- the target the JIT runs -----------------------------------------------------


def _matmul_graph():
    from molten.ir import DataflowGraph

    g = DataflowGraph("mm")
    x = g.add_input("x", [128, 64], "float16")
    w = g.add_input("w", [64, 128], "float16")
    g.add_output(g.matmul(x, w))
    return g


def test_an_unpinned_compile_runs_the_devices_best_target():
    """ZeroCompiler() writes the portable sm_90 source; on a device whose best
    target is sm_90a the JIT runs the graph compiled for it (wgmma), made
    once; on an sm_90-only target, or with an arch pinned, the graph as
    compiled."""
    compiled = ZeroCompiler().compile(_matmul_graph())
    assert compiled.arch == "sm_90" and "wgmma" not in compiled.source
    native = compiled.jit_target("sm_90a")
    assert native.arch == "sm_90a" and "wgmma.mma_async" in native.source
    assert (native.inputs, native.outputs) == (compiled.inputs, compiled.outputs)
    assert compiled.jit_target("sm_90a") is native
    assert compiled.jit_target("sm_90") is compiled
    assert compiled.jit_target("sm_100") is compiled  # generates what sm_90 does
    pinned = ZeroCompiler(arch="sm_90").compile(_matmul_graph())
    assert pinned.jit_target("sm_90a") is pinned


def test_a_graph_changed_after_compiling_runs_as_compiled():
    """The JIT's recompile for the device sees the graph as it is then: one
    with another output keeps the compiled graph."""
    g = _matmul_graph()
    compiled = ZeroCompiler().compile(g)
    g.add_output(g.matmul(g.inputs[0], g.inputs[1]))
    assert compiled.jit_target("sm_90a") is compiled


class _FakeTensor:
    """Just the attributes the torch call path reads."""

    def __init__(self, shape, dtype, ptr, device=0, contiguous=True, grad=False):
        self.shape, self.dtype, self._ptr = tuple(shape), dtype, ptr
        self._device, self._contiguous, self.requires_grad = device, contiguous, grad

    def data_ptr(self):
        return self._ptr

    def get_device(self):
        return self._device

    def is_contiguous(self):
        return self._contiguous

    def expand(self, shape):
        return _FakeTensor(shape, self.dtype, self._ptr, contiguous=False)


class _FakeSubclass(_FakeTensor):
    pass


def _fake_torch():
    import types

    made = []

    def empty_like(like, memory_format=None):
        made.append(("empty_like", like))
        return _FakeTensor(like.shape, like.dtype, 1 << 20)

    def empty(shape, dtype=None, device=None):
        made.append(("empty", shape))
        return _FakeTensor(shape, dtype, 2 << 20)

    torch = types.SimpleNamespace(
        Tensor=_FakeTensor,
        empty=empty,
        empty_like=empty_like,
        device=lambda kind, index: (kind, index),
        contiguous_format="contiguous",
        float32="f32",
        bfloat16="bf16",
        _C=types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 77),
    )
    return torch, made


def _refused_as_x() -> list[_FakeTensor]:
    """Stand-ins for a (4, 8) float32 input on device 0 that the torch path
    leaves to the general one, each for one reason."""
    return [
        _FakeTensor((4, 9), "f32", 4096),  # shape
        _FakeTensor((4, 8), "bf16", 4096),  # dtype
        _FakeTensor((4, 8), "f32", 4096, device=1),  # another device
        _FakeTensor((4, 8), "f32", 4096, device=-1),  # host memory
        _FakeTensor((4, 8), "f32", 4096, contiguous=False),
        _FakeTensor((4, 8), "f32", 4096, grad=True),
        _FakeTensor((4, 8), "f32", 4098),  # not aligned to its elements
        _FakeSubclass((4, 8), "f32", 4096),
    ]


def test_the_torch_path_takes_only_what_the_general_path_accepts():
    """The torch call path (checked without a GPU, on stand-in tensors):
    arrays as the specs say are taken, with outputs made like a matching
    input; anything else goes the general way (SLOW), which names it."""
    from molten.runtime.program import TensorSpec
    from molten.runtime.torch_path import SLOW, TorchPath

    torch, made = _fake_torch()
    specs = [TensorSpec("x", (4, 8), "float32"), TensorSpec("w", (8,), "float32")]
    outs = [TensorSpec("y", (4, 8), "float32"), TensorSpec("m", (4, 1), "float32")]
    path = TorchPath(torch, specs, outs, device_id=0)
    x = _FakeTensor((4, 8), "f32", 4096)
    w = _FakeTensor((8,), "f32", 8192)
    slots = [0] * 4
    handle, results = path.arguments([x, w], None, slots)
    assert handle == 77 and slots[:2] == [4096, 8192]
    # The (4, 1) output, of no input's shape, is made like its prototype:
    # one element, made once, broadcast to (4, 1).
    prototype = path.prototypes[1]
    assert prototype.shape == (4, 1) and path.prototypes[0] is None
    assert made == [("empty", (1, 1)), ("empty_like", x), ("empty_like", prototype)]
    assert slots[2:] == [r.data_ptr() for r in results]
    for array in _refused_as_x():
        assert path.arguments([array, w], None, [0] * 4) is SLOW
    assert path.arguments([x], None, [0] * 4) is SLOW  # too few
    y = _FakeTensor((4, 8), "f32", 1 << 16)
    m = _FakeTensor((4, 1), "f32", 1 << 17)
    assert path.arguments([x, w], (y, m), [0] * 4) == (77, [])
    assert path.arguments([x, w], (x, m), [0] * 4) is SLOW  # out= is an input
    inside_y = _FakeTensor((4, 1), "f32", (1 << 16) + 64)
    assert path.arguments([x, w], (y, inside_y), [0] * 4) is SLOW  # outs overlap
    assert path.arguments([x, w], y, [0] * 4) is SLOW  # one out= for two outputs
    slots = [0] * 4
    assert path.arguments([x, w], None, slots, allocate=False) == (77, [])
    assert slots == [4096, 8192, 0, 0]


@pytest.mark.parametrize("outputs", [1, 2])
def test_the_call_function_takes_what_the_torch_path_takes(outputs):
    """The function written for a call on new outputs checks the arrays as
    `TorchPath.arguments` does (SLOW for each array it refuses), makes the
    same outputs, then runs its body on their addresses and torch's
    stream, and returns the one output or a tuple of them."""
    from molten.runtime.program import TensorSpec
    from molten.runtime.torch_path import SLOW, TorchPath

    torch, made = _fake_torch()
    specs = [TensorSpec("x", (4, 8), "float32"), TensorSpec("w", (8,), "float32")]
    outs = [TensorSpec("y", (4, 8), "float32"), TensorSpec("m", (4, 1), "float32")]
    path = TorchPath(torch, specs, outs[:outputs], device_id=0)
    ran = []
    call = path.call_function(
        [f"ran.append(({', '.join(f'p{i}' for i in range(2 + outputs))}, stream))"],
        {"ran": ran},
    )
    x = _FakeTensor((4, 8), "f32", 4096)
    w = _FakeTensor((8,), "f32", 8192)
    result = call((x, w))
    results = (result,) if outputs == 1 else result
    assert isinstance(results, tuple) and len(results) == outputs
    made_here = [("empty_like", x), ("empty_like", path.prototypes[-1])]
    assert made == [("empty", (1, 1))] * (outputs - 1) + made_here[:outputs]
    assert ran == [(4096, 8192, *(r.data_ptr() for r in results), 77)]
    for array in _refused_as_x():
        assert path.arguments([array, w], None, [0] * 4) is SLOW
        assert call((array, w)) is SLOW
        assert call((x, array)) is SLOW  # w's spec refuses it too
    assert call((x,)) is SLOW and call((x, w, w)) is SLOW and call(()) is SLOW
    assert len(ran) == 1  # nothing ran for what it refused


def test_the_call_function_into_out_takes_what_the_torch_path_takes():
    """The function written for a call into `out=` arrays checks them as
    `TorchPath.arguments` does, their overlaps with the inputs and each
    other too (SLOW where it refuses them, having run nothing), runs its
    body on the arrays' addresses and returns `out` as given."""
    from molten.runtime.program import TensorSpec
    from molten.runtime.torch_path import SLOW, TorchPath

    torch, made = _fake_torch()
    specs = [TensorSpec("x", (4, 8), "float32"), TensorSpec("w", (8,), "float32")]
    outs = [TensorSpec("y", (4, 8), "float32"), TensorSpec("m", (4, 1), "float32")]
    ran = []
    x = _FakeTensor((4, 8), "f32", 4096)
    w = _FakeTensor((8,), "f32", 8192)
    y = _FakeTensor((4, 8), "f32", 1 << 16)
    m = _FakeTensor((4, 1), "f32", 1 << 17)
    path = TorchPath(torch, specs, outs[:1], device_id=0)
    into = path.call_function(
        ["ran.append((p0, p1, p2, stream))"], {"ran": ran}, into=True
    )
    assert into((x, w), y) is y and into((x, w), [y]) == [y]
    assert ran == [(4096, 8192, 1 << 16, 77)] * 2 and made == []
    for array in _refused_as_x():  # each refused as y: y's spec is x's
        assert path.arguments([x, w], array, [0] * 3) is SLOW
        assert into((x, w), array) is SLOW
    assert into((x, w), x) is SLOW  # is an input
    assert into((x, w), _FakeTensor((4, 8), "f32", 8192 - 4)) is SLOW  # into w
    assert into((x, w), (y, y)) is SLOW and into((x, w), ()) is SLOW
    assert into((x,), y) is SLOW
    path = TorchPath(torch, specs, outs, device_id=0)
    into = path.call_function(["ran.append((p2, p3))"], {"ran": ran}, into=True)
    assert into((x, w), (y, m)) == (y, m) and ran[-1] == (1 << 16, 1 << 17)
    inside_y = _FakeTensor((4, 1), "f32", (1 << 16) + 64)
    assert path.arguments([x, w], (y, inside_y), [0] * 4) is SLOW
    assert into((x, w), (y, inside_y)) is SLOW and into((x, w), y) is SLOW
    assert len(ran) == 3


_SIZED_LAUNCHERS = (
    Path(__file__).parent.parent
    / "lit_tests"
    / "passes"
    / "lower-kernel-to-cuda"
    / "dynamic.mlir"
)
"""Two kernel-level graphs over T (lit's input): @normalize, a row kernel
whose result a pointwise kernel reads through a buffer; @both, returning
its input as an output too (a copy)."""


def _sized_program(section: int) -> tuple[steps.Step, ...]:
    from molten.context import parse_module
    from molten.dialects import cuda
    from molten.pipeline import run_pipeline
    from molten.targets.cuda import print_cuda

    text = _SIZED_LAUNCHERS.read_text().split("// -----")[section]
    module = run_pipeline(parse_module(text), "lower-kernel-to-cuda")
    (launcher,) = (op for op in module.ops if isinstance(op, cuda.HostFuncOp))
    return steps.host_program(launcher, print_cuda(module).kernel_names)


@pytest.mark.parametrize("tokens", [1, 5, 4099])
def test_program_of_a_launcher_taking_sizes(tokens):
    """A launcher over T: its buffer and copy are sized by T's slot (after
    the pointers), its grids computed from it; at a size, `sized_program`
    leaves nothing that depends on it, and the arena fits."""
    program = _sized_program(0)  # x, y, then T
    (alloc,) = (s for s in program if isinstance(s, steps.Alloc))
    norm, scale = (s for s in program if isinstance(s, steps.Launch))
    assert (alloc.nbytes, alloc.factors) == (4, (2,))  # T x 1 floats
    assert norm.grid_of == scale.grid_of == (2,) and 2 in norm.args
    sized = steps.sized_program(program, [0, 0, tokens])
    (alloc,) = (s for s in sized if isinstance(s, steps.Alloc))
    norm, scale = (s for s in sized if isinstance(s, steps.Launch))
    assert (alloc.nbytes, alloc.factors) == (4 * tokens, ())
    assert norm.grid == (-(-tokens // 4), 1, 1) and not norm.grid_of  # 4 rows a block
    assert scale.grid == (-(-tokens * 32 // 128), 1, 1)  # 64 threads x 2 elements
    assert steps.arena(sized).size >= 4 * tokens
    program = _sized_program(1)  # x, y, the returned x, then T
    (copy,) = (s for s in program if isinstance(s, steps.Copy))
    assert (copy.nbytes, copy.factors) == (8 * 4, (3,))
    (copy,) = (
        s
        for s in steps.sized_program(program, [0, 0, 0, tokens])
        if isinstance(s, steps.Copy)
    )
    assert (copy.nbytes, copy.factors) == (8 * 4 * tokens, ())


@pytest.mark.parametrize(
    "tokens,kernel,grid_y",
    [
        (1, "upto1", 1),
        (3, "upto4", 1),
        (8, "upto8", 1),
        (9, "rest", 1),
        (4099, "rest", 65),
    ],
)
def test_program_of_a_gemm_with_a_variant_per_size_class(tokens, kernel, grid_y):
    """A gemm over T with a kernel per size class: at a size, the launch of
    its class alone is left, its grid along y (M tiles) computed from T."""
    program = _sized_program(2)  # x, w, y, then T
    launches = [s for s in program if isinstance(s, steps.Launch)]
    assert [s.when for s in launches] == [
        (3, 1, 1),
        (3, 2, 4),
        (3, 5, 8),
        (3, 9, 0),
    ]
    (launch,) = (
        s
        for s in steps.sized_program(program, [0, 0, 0, tokens])
        if isinstance(s, steps.Launch)
    )
    assert launch.kernel.endswith(kernel) and launch.when is None
    assert launch.grid[1] == grid_y and not launch.grid_of
