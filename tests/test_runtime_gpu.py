"""The runtime on a GPU: compiled graphs called on torch tensors, CuPy and JAX
arrays and DeviceArrays, checked against the float64 interpreter; bad inputs
refused with errors naming them; streams, `out=`, `@zero`, and a process
that never imports torch.

Marker `gpu`: skipped, with the reason, without a usable GPU and driver.
Frameworks other than torch are tested when installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import molten
from molten import DeviceArray, InputError, ZeroCompiler, ops
from molten.ir import DataflowGraph

try:  # tests/ is a package (tests/__init__.py) or a plain directory
    from .conftest import split_k_linear
except ImportError:  # pragma: no cover
    from conftest import split_k_linear

ROOT = Path(__file__).resolve().parents[1]


def _gpu_missing() -> str | None:
    try:
        from cuda.bindings import driver

        (status,) = driver.cuInit(0)
        if status != driver.CUresult.CUDA_SUCCESS:
            return f"no CUDA driver or GPU ({status.name})"
        status, count = driver.cuDeviceGetCount()
        if status != driver.CUresult.CUDA_SUCCESS or count == 0:
            return "no CUDA GPU"
    except Exception as error:
        return f"cuda-python or the driver is missing: {error}"
    return None


GPU_MISSING = _gpu_missing()
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(GPU_MISSING is not None, reason=str(GPU_MISSING)),
]
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}


def _seed(rows: int = 2048, hidden: int = 5120, dtype: str = "float32"):
    g = DataflowGraph("fused_rmsnorm")
    x = g.add_input("x", [rows, hidden], dtype)
    w = g.add_input("w", [hidden], dtype)
    g.add_output(g.rms_norm(x, w, name="norm"))
    return g


@pytest.fixture(scope="module")
def seed():
    graph = _seed()
    return graph, ZeroCompiler().compile(graph)


def _reference(graph, *arrays):
    rounded = [
        molten.interpreters.round_to(a, t.type.element_type)
        for a, t in zip(arrays, graph.inputs, strict=True)
    ]
    return molten.interpret(graph, *rounded, reference=True)


def _check(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    got = np.asarray(got, dtype=np.float64)
    assert not np.isnan(got).any(), "NaN in the output"
    error = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
    assert error < TOLERANCE[dtype], f"relative L2 error {error:.2e}"


def _host_inputs(graph, rng):
    return [rng.uniform(-2.0, 2.0, t.shape.dims) for t in graph.inputs]


def _seed_on_torch(graph):
    """Fresh seed inputs: (torch, host x, host w, device x, device w)."""
    torch = pytest.importorskip("torch")
    xs, ws = _host_inputs(graph, np.random.default_rng())
    x = torch.tensor(xs, dtype=torch.float32, device="cuda")
    w = torch.tensor(ws, dtype=torch.float32, device="cuda")
    return torch, xs, ws, x, w


# -- the seed example on every kind of array -------------------------------------


def test_seed_on_torch_tensors(seed):
    graph, compiled = seed
    torch, xs, ws, x, w = _seed_on_torch(graph)
    y = compiled(x, w)
    assert isinstance(y, torch.Tensor) and y.device == x.device
    assert y.shape == (2048, 5120) and y.dtype == torch.float32
    _check(y.cpu().numpy(), _reference(graph, xs, ws), "float32")


def test_seed_on_device_arrays(seed):
    graph, compiled = seed
    xs, ws = _host_inputs(graph, np.random.default_rng())
    y = compiled(
        DeviceArray.from_numpy(xs, "float32"), DeviceArray.from_numpy(ws, "f32")
    )
    assert isinstance(y, DeviceArray) and y.shape == (2048, 5120)
    _check(y.numpy(), _reference(graph, xs, ws), "float32")


def test_seed_on_cupy_arrays(seed):
    cupy = pytest.importorskip("cupy")
    graph, compiled = seed
    xs, ws = _host_inputs(graph, np.random.default_rng())
    y = compiled(
        cupy.asarray(xs, dtype=cupy.float32), cupy.asarray(ws, dtype=cupy.float32)
    )
    assert isinstance(y, cupy.ndarray)
    _check(cupy.asnumpy(y), _reference(graph, xs, ws), "float32")


def _jax_gpu():
    """jax and its first GPU, or the test skipped saying which is missing."""
    # JAX takes 75% of the GPU's memory when it starts; beside the other
    # pytest workers on the same GPU, it should take what it uses.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    try:
        return jax, jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("jax has no GPU backend here")


def test_seed_on_jax_arrays(seed):
    jax, device = _jax_gpu()
    graph, compiled = seed
    xs, ws = _host_inputs(graph, np.random.default_rng())
    x = jax.device_put(xs.astype(np.float32), device)
    w = jax.device_put(ws.astype(np.float32), device)
    y = compiled(x, w)
    assert isinstance(y, jax.Array)
    _check(np.asarray(y), _reference(graph, xs, ws), "float32")


@pytest.mark.parametrize("made_by", ["device_put", "from_dlpack_of_torch"])
def test_jax_arrays_through_compiled_and_zero(seed, made_by):
    """JAX arrays, put on the GPU by JAX or taken from torch by DLPack, run
    through a compiled graph and through @zero (which once refused them:
    JAX rejects DLPack's stream -1)."""
    jax, device = _jax_gpu()
    graph, compiled = seed
    xs, ws = _host_inputs(graph, np.random.default_rng())
    xs, ws = xs.astype(np.float32), ws.astype(np.float32)
    if made_by == "device_put":
        x, w = jax.device_put(xs, device), jax.device_put(ws, device)
    else:
        torch = pytest.importorskip("torch")
        x = jax.dlpack.from_dlpack(torch.tensor(xs).cuda())
        w = jax.dlpack.from_dlpack(torch.tensor(ws).cuda())
    want = _reference(graph, xs, ws)
    _check(np.asarray(compiled(x, w)), want, "float32")

    @molten.zero
    def rms(x, w):
        return ops.rms_norm(x, w, eps=1e-6)

    y = rms(x, w)
    assert isinstance(y, jax.Array)
    _check(np.asarray(y), want, "float32")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_seed_in_half_precision_on_device_arrays(dtype):
    graph = _seed(3, 4099, dtype)
    compiled = ZeroCompiler().compile(graph)
    xs, ws = _host_inputs(graph, np.random.default_rng())
    y = compiled(DeviceArray.from_numpy(xs, dtype), DeviceArray.from_numpy(ws, dtype))
    assert y.dtype == dtype
    _check(y.numpy(), _reference(graph, xs, ws), dtype)


def test_device_array_round_trip_and_dlpack():
    torch = pytest.importorskip("torch")
    values = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    array = DeviceArray.from_numpy(values)
    np.testing.assert_array_equal(array.numpy(), values)
    shared = torch.from_dlpack(array)  # no copy: the same memory
    assert shared.data_ptr() == array.ptr and shared.shape == (3, 4)
    shared.mul_(2)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(array.numpy(), values * 2)
    bf16 = DeviceArray.from_numpy(values, "bfloat16")
    assert torch.from_dlpack(bf16).dtype == torch.bfloat16


# -- bad inputs ------------------------------------------------


class _CudaArrayInterface:
    """An array known only through __cuda_array_interface__ (as Numba's)."""

    def __init__(self, ptr, shape, typestr="<f4"):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (ptr, False),
            "version": 3,
            "strides": None,
        }


def test_bad_inputs_are_named(seed):
    torch = pytest.importorskip("torch")
    _, compiled = seed
    x = torch.randn(2048, 5120, device="cuda")
    w = torch.randn(5120, device="cuda")
    cases = [
        ((x.double(), w), r"input 'x' \(2048x5120 float32\) has dtype float64"),
        (
            (x[:100], w),
            r"input 'x' .* has shape \(100, 5120\); expected \(2048, 5120\)",
        ),
        ((x, w.cpu()), r"input 'w' .* is in host memory"),
        ((x, w.cpu().numpy()), r"input 'w' .* is in host memory"),
        ((x, [1.0] * 5120), r"input 'w' .* is a list, not a device array"),
        (
            (torch.randn(5120, 2048, device="cuda").t(), w),
            r"input 'x' .* is not contiguous",
        ),
        ((x,), r"graph 'fused_rmsnorm' takes 2 inputs .*, got 1"),
    ]
    raw = torch.empty(5120 * 4 + 16, dtype=torch.uint8, device="cuda")
    misaligned = _CudaArrayInterface(raw.data_ptr() + 2, (5120,))
    cases.append(((x, misaligned), r"input 'w' .* not aligned to its 4-byte elements"))
    for args, message in cases:
        with pytest.raises(InputError, match=message):
            compiled(*args)


def test_bad_out_arrays_are_named(seed):
    torch = pytest.importorskip("torch")
    _, compiled = seed
    x = torch.randn(2048, 5120, device="cuda")
    w = torch.randn(5120, device="cuda")
    with pytest.raises(InputError, match=r"out= array for output 'norm' .* has shape"):
        compiled(x, w, out=torch.empty(2048, 5121, device="cuda"))
    with pytest.raises(InputError, match=r"overlaps input 'x'"):
        compiled(x, w, out=x)
    with pytest.raises(InputError, match=r"has 1 outputs .*; out= gave 2"):
        compiled(x, w, out=(torch.empty_like(x), torch.empty_like(x)))


# -- out=, outputs, streams ---------------------------------------------------


def test_out_buffers_are_written_and_returned(seed):
    graph, compiled = seed
    torch, xs, ws, x, w = _seed_on_torch(graph)
    y = torch.full_like(x, float("nan"))
    assert compiled(x, w, out=y) is y
    _check(y.cpu().numpy(), _reference(graph, xs, ws), "float32")


def test_each_call_returns_fresh_outputs(seed):
    torch = pytest.importorskip("torch")
    _, compiled = seed
    x = torch.randn(2048, 5120, device="cuda")
    w = torch.randn(5120, device="cuda")
    first = compiled(x, w)
    second = compiled(x * 2, w)
    assert first.data_ptr() != second.data_ptr()
    torch.testing.assert_close(second, compiled(x, w), rtol=1e-5, atol=1e-5)


def test_runs_on_the_current_torch_stream_and_on_stream_arg(seed):
    """Inputs produced on a side stream are read after they are written: the
    kernels run on that stream (torch's current one, or the one passed)."""
    torch = pytest.importorskip("torch")
    graph, compiled = seed
    xs, ws = _host_inputs(graph, np.random.default_rng())
    want = _reference(graph, xs, ws)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        x = torch.tensor(xs, dtype=torch.float32, device="cuda")
        w = torch.tensor(ws, dtype=torch.float32, device="cuda")
        for _ in range(20):  # keep the stream busy so a wrong order shows
            x = x * 1.0
        y = compiled(x, w)
    side.synchronize()
    _check(y.cpu().numpy(), want, "float32")
    other = torch.cuda.Stream()
    other.wait_stream(side)
    y2 = compiled(x, w, stream=other)
    other.synchronize()
    _check(y2.cpu().numpy(), want, "float32")


def test_graph_with_temporaries_and_copies():
    """softmax along axis 0 (several kernels, buffers between them) and a graph
    returning an input: the replayed launcher allocates, copies and frees."""
    torch = pytest.importorskip("torch")
    from kernel_cases import CASES

    for case in ("softmax_axis0", "passthrough_1000"):
        graph = DataflowGraph(case)
        CASES[case](graph, "float32")
        compiled = ZeroCompiler().compile(graph)
        arrays = _host_inputs(graph, np.random.default_rng())
        got = compiled(
            *(torch.tensor(a, dtype=torch.float32, device="cuda") for a in arrays)
        )
        got = got if isinstance(got, tuple) else (got,)
        want = _reference(graph, *arrays)
        want = want if isinstance(want, tuple) else (want,)
        for g_out, w_out in zip(got, want, strict=True):
            _check(g_out.cpu().numpy(), w_out, "float32")


def test_split_k_counters_kept_across_calls_and_streams():
    """A split-K gemm's tile counters (`cuda.zero ... restored`) are zeroed
    once per stream and reset by each tile's last arrival: calls back to
    back on one stream, then on a second stream, each add their parts right
    (a counter left at a wrong count would give a tile no epilogue, or two)."""
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("the wgmma gemm (sm_90a) runs on sm_90 devices only")
    compiled = split_k_linear()
    executable = compiled.executable()
    assert executable._kept_slots
    streams = [torch.cuda.current_stream(), torch.cuda.Stream()]
    for stream in streams:
        for _ in range(4):
            xs = torch.randn(16, 8192, device="cuda", dtype=torch.bfloat16)
            ws = torch.randn(1024, 8192, device="cuda", dtype=torch.bfloat16)
            with torch.cuda.stream(stream):
                out = torch.full((16, 1024), float("nan"), device="cuda")
                out = out.to(torch.bfloat16)
                compiled(xs, ws, out=out)
            stream.synchronize()
            want = (xs.double() @ ws.double().T).cpu().numpy()
            _check(out.float().cpu().numpy(), want, "bfloat16")
    assert len(executable._kept) == len(executable._kept_slots) * len(streams)


# -- @zero ------------------------------------------------


def test_zero_compiles_once_per_signature():
    torch = pytest.importorskip("torch")

    @molten.zero
    def rms_gate(x, w, gate):
        return ops.rms_norm(x, w, eps=1e-6) * ops.silu(gate)

    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(4, 1000, device="cuda", dtype=dtype)
        w = torch.randn(1000, device="cuda", dtype=dtype)
        gate = torch.randn(4, 1000, device="cuda", dtype=dtype)
        got = rms_gate(x, w, gate)
        again = rms_gate(x, w, gate)
        assert got.dtype == dtype
        torch.testing.assert_close(got, again)
        name = "float32" if dtype == torch.float32 else "bfloat16"
        graph = DataflowGraph("ref")
        gx, gw, gg = (
            graph.add_input(n, t.shape, name)
            for n, t in zip("xwg", (x, w, gate), strict=True)
        )
        graph.add_output(graph.rms_norm(gx, gw, eps=1e-6) * graph.silu(gg), "y")
        want = _reference(graph, *(t.float().cpu().numpy() for t in (x, w, gate)))
        _check(got.float().cpu().numpy(), want, name)
    assert len(rms_gate.compiled) == 2
    rms_gate(
        torch.randn(2, 8, device="cuda"),
        torch.randn(8, device="cuda"),
        torch.randn(2, 8, device="cuda"),
    )
    assert len(rms_gate.compiled) == 3


def test_zero_without_fallback_raises_for_unsupported_dtypes():
    torch = pytest.importorskip("torch")

    @molten.zero
    def double(x):
        return x * 2

    with pytest.raises(InputError, match="argument 'x' has dtype float64"):
        double(torch.randn(4, device="cuda", dtype=torch.float64))


# -- no torch ------------------------------------------------


def test_runtime_runs_without_torch():
    code = """
import sys
import numpy as np
import molten
g = molten.DataflowGraph("seed")
x = g.add_input("x", [7, 4099]); w = g.add_input("w", [4099])
g.add_output(g.rms_norm(x, w, name="norm"))
compiled = molten.ZeroCompiler().compile(g)
xs = np.random.default_rng().standard_normal((7, 4099)).astype(np.float32)
ws = np.random.default_rng().standard_normal(4099).astype(np.float32)
y = compiled(molten.DeviceArray.from_numpy(xs), molten.DeviceArray.from_numpy(ws))
want = molten.interpret(g, xs.astype(np.float64), ws.astype(np.float64), reference=True)
err = np.linalg.norm(y.numpy() - want) / np.linalg.norm(want)
assert err < 1e-5, err
assert "torch" not in sys.modules, "the runtime imported torch"
print("ok", err)
"""
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok")


# -- vector accesses and misaligned pointers -------------------------------------


@pytest.mark.parametrize("hidden", [1024, 40000])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("misaligned", ["x", "w", "out"])
def test_a_misaligned_pointer_takes_the_scalar_variant(dtype, misaligned, hidden):
    """Views one element into a buffer are contiguous but not 16-byte aligned:
    the vectorized kernel would fault on them (misaligned address), so a
    correct result shows that its scalar variant ran. Rows of 40000 are
    split across blocks that wait for each other: the scalar variant's
    cooperative grid is its own."""
    torch = pytest.importorskip("torch")
    graph = _seed(rows=4, hidden=hidden, dtype=dtype)
    compiled = ZeroCompiler().compile(graph)
    assert compiled.kernels[0].scalar_variant is not None
    xs, ws = _host_inputs(graph, np.random.default_rng())
    tdtype = getattr(torch, dtype)

    def placed(host, name):
        n = host.size
        buffer = torch.empty(n + 1, dtype=tdtype, device="cuda")
        view = buffer[1:] if name == misaligned else buffer[:n]
        view.copy_(torch.tensor(host.ravel(), dtype=tdtype))
        return view.view(host.shape)

    x, w = placed(xs, "x"), placed(ws, "w")
    out = placed(np.full(xs.shape, np.nan), "out")
    assert {"x": x, "w": w, "out": out}[misaligned].data_ptr() % 16
    compiled(x, w, out=out)
    torch.cuda.synchronize()
    _check(out.float().cpu().numpy(), _reference(graph, xs, ws), dtype)
    aligned = compiled(x.clone(), w.clone())  # fresh, aligned: the vector kernel
    _check(aligned.float().cpu().numpy(), _reference(graph, xs, ws), dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("misaligned", ["x", "w"])
def test_a_misaligned_gemm_operand_takes_the_simt_variant(dtype, misaligned):
    """cp.async copies 16 aligned bytes: a tensor-core gemm's operand one
    element into its buffer would fault (misaligned address), so a correct
    result shows the SIMT variant ran, with its own grid and block."""
    torch = pytest.importorskip("torch")
    g = DataflowGraph("gemm")
    x = g.add_input("x", [130, 64], dtype)
    w = g.add_input("w", [64, 72], dtype)
    g.add_output(g.relu(x @ w), "y")
    compiled = ZeroCompiler().compile(g)
    assert compiled.kernels[0].scalar_variant is not None
    rng = np.random.default_rng()
    xs, ws = rng.standard_normal((130, 64)), rng.standard_normal((64, 72))
    tdtype = getattr(torch, dtype)

    def placed(host, name):
        buffer = torch.empty(host.size + 1, dtype=tdtype, device="cuda")
        view = buffer[1:] if name == misaligned else buffer[: host.size]
        view.copy_(torch.tensor(host.ravel(), dtype=tdtype))
        return view.view(host.shape)

    xd, wd = placed(xs, "x"), placed(ws, "w")
    assert {"x": xd, "w": wd}[misaligned].data_ptr() % 16
    rounded = [
        molten.interpreters.round_to(a, t.type.element_type)
        for a, t in zip((xs, ws), g.inputs, strict=True)
    ]
    want = molten.interpret(g, *rounded, reference=True)
    for got in (compiled(xd, wd), compiled(xd.clone(), wd.clone())):
        torch.cuda.synchronize()
        _check(got.float().cpu().numpy(), want, dtype)


def _check_with_one_misaligned(torch, g, compiled, misaligned: str) -> None:
    """Runs a bf16 graph on random inputs with input `misaligned` one
    element into its buffer (the others aligned), then on aligned copies,
    each against the float64 interpreter."""
    rng = np.random.default_rng()
    hosts = [rng.standard_normal(t.shape.dims) / 8 for t in g.inputs]

    def placed(host, name):
        buffer = torch.empty(host.size + 1, dtype=torch.bfloat16, device="cuda")
        view = buffer[1:] if name == misaligned else buffer[: host.size]
        view.copy_(torch.tensor(host.ravel(), dtype=torch.bfloat16))
        return view.view(host.shape)

    devices = [placed(h, t.name) for h, t in zip(hosts, g.inputs, strict=True)]
    names = [t.name for t in g.inputs]
    assert devices[names.index(misaligned)].data_ptr() % 16
    rounded = [
        molten.interpreters.round_to(a, t.type.element_type)
        for a, t in zip(hosts, g.inputs, strict=True)
    ]
    want = molten.interpret(g, *rounded, reference=True)
    wants = want if isinstance(want, tuple) else (want,)
    for got in (compiled(*devices), compiled(*(d.clone() for d in devices))):
        torch.cuda.synchronize()
        gots = got if isinstance(got, tuple) else (got,)
        assert len(gots) == len(wants)
        for one, expected in zip(gots, wants, strict=True):
            _check(one.float().cpu().numpy(), expected, "bfloat16")


@pytest.mark.parametrize("misaligned", ["x", "up"])
def test_a_misaligned_sibling_operand_takes_the_simt_variant(misaligned):
    """A gemm kernel of two sibling matmuls (silu(x @ gate.T) * (x @ up.T),
    one persistent TMA kernel on sm_90a): TMA needs 16-byte aligned
    matrices, so with one operand a bf16 element into its buffer the SIMT
    variant, which computes both products too, must give the result."""
    torch = pytest.importorskip("torch")
    from molten.passes.schedule.target import current_native_arch

    if current_native_arch() != "sm_90a":
        pytest.skip("the sibling kernel is sm_90a's")
    m, k, n = 300, 520, 1000
    g = DataflowGraph("siblings")
    x = g.add_input("x", [m, k], "bfloat16")
    gate = g.add_input("gate", [n, k], "bfloat16")
    up = g.add_input("up", [n, k], "bfloat16")
    products = [g.matmul(x, w, transpose_b=True) for w in (gate, up)]
    g.add_output(g.silu(products[0]) * products[1], "y")
    compiled = ZeroCompiler(arch="sm_90a").compile(g)
    assert [k.fused_ops for k in compiled.kernels] == [
        ("matmul", "matmul", "silu", "mul")
    ]
    assert compiled.kernels[0].scalar_variant is not None
    _check_with_one_misaligned(torch, g, compiled, misaligned)


@pytest.mark.parametrize("misaligned", ["x", "wk"])
def test_a_misaligned_projection_operand_takes_the_simt_variant(misaligned):
    """q, k and v of one x as one persistent TMA kernel on sm_90a (each
    tile one projection's): with x or k's weight a bf16 element into its
    buffer, the SIMT variant, whose blocks likewise take one projection's
    tile each, must give all three results."""
    torch = pytest.importorskip("torch")
    from kernel_cases import qkv_heads

    from molten.passes.schedule.target import current_native_arch

    if current_native_arch() != "sm_90a":
        pytest.skip("the kernel of q, k and v is sm_90a's")
    g = DataflowGraph("qkv")
    qkv_heads(130, 1024, 8, 2, 128)(g, "bfloat16")
    compiled = ZeroCompiler(arch="sm_90a").compile(g)
    assert [k.fused_ops.count("matmul") for k in compiled.kernels] == [3]
    assert compiled.kernels[0].scalar_variant is not None
    _check_with_one_misaligned(torch, g, compiled, misaligned)


@pytest.mark.parametrize("misaligned", ["x", "w"])
def test_a_misaligned_prologue_operand_takes_the_simt_variant(misaligned):
    """rms_norm(x, w) @ W.T as one persistent TMA kernel on sm_90a
    (fuse-prologue, opt-in: the norm computed from x's tiles): with x or
    w a bf16 element into its buffer, the SIMT variant,
    which computes the norm too (its row reduction a loop over K in the
    epilogue), must give the result."""
    torch = pytest.importorskip("torch")
    from molten.passes.schedule.target import current_native_arch

    try:  # tests/ is a package or a plain directory
        from .kernel_cases import rms_norm_linear
    except ImportError:  # pragma: no cover
        from kernel_cases import rms_norm_linear

    if current_native_arch() != "sm_90a":
        pytest.skip("the prologue kernel is sm_90a's")
    g = DataflowGraph("prologue")
    rms_norm_linear(70, 2048, 5000)(g, "bfloat16")
    compiled = ZeroCompiler(arch="sm_90a", prologue=True).compile(g)
    (gemm,) = compiled.kernels
    assert "reduce_mean" in gemm.fused_ops and "matmul" in gemm.fused_ops
    assert gemm.scalar_variant is not None
    _check_with_one_misaligned(torch, g, compiled, misaligned)


def test_an_unpinned_compile_runs_on_the_devices_best_target():
    """ZeroCompiler() pins no arch: the JIT runs the graph compiled for the
    device's best target (sm_90a on an H100: the gemm on wgmma), and gets
    the graph's result."""
    torch = pytest.importorskip("torch")
    from molten.passes.schedule.target import current_native_arch

    g = DataflowGraph("mm")
    x = g.add_input("x", [200, 64], "float16")
    w = g.add_input("w", [64, 136], "float16")
    g.add_output(g.matmul(x, w))
    compiled = ZeroCompiler().compile(g)
    assert compiled.arch == "sm_90"
    native = current_native_arch()
    ran = compiled.executable().compiled
    assert ran.arch == (native if native.endswith("a") else "sm_90")
    rng = np.random.default_rng()
    xs, ws = _host_inputs(g, rng)
    out = compiled(
        torch.tensor(xs, dtype=torch.float16, device="cuda"),
        torch.tensor(ws, dtype=torch.float16, device="cuda"),
    )
    _check(out.float().cpu().numpy(), _reference(g, xs, ws), "float16")


def test_the_jit_schedules_for_the_device_at_hand():
    """The device's target is read off it (its SMs, shared memory, registers,
    L2; its best arch), the named device's other facts where Molten names
    it; an unpinned compile runs the graph compiled for that target."""
    from cuda.core import Device

    from molten.passes.schedule.target import TARGETS, device_target
    from molten.runtime.device import current_device_id

    device = Device(current_device_id())
    target = device_target(current_device_id())
    assert target.sm_count == device.properties.multiprocessor_count
    assert (
        target.shared_per_block == device.properties.max_shared_memory_per_block_optin
    )
    major, minor = device.compute_capability
    assert target.arch.rstrip("a") == f"sm_{major}{minor}"
    for word, name in (("H200", "h200"), ("H100", "h100")):
        if word in device.name.split() or f"{word} " in device.name:
            named = TARGETS[name]
            assert (target.device, target.copy_bytes_per_s) == (
                name,
                named.copy_bytes_per_s,
            )
    g = DataflowGraph("g")
    x = g.add_input("x", [4, 64])
    g.add_output(g.exp(x))
    compiled = ZeroCompiler().compile(g)
    assert compiled.executable().compiled.target in (target, compiled.target)
