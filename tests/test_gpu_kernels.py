"""Generated kernels run on the GPU and match the float64 interpreter.

Marker `gpu`: skipped with the reason when nvcc, a GPU or torch (which holds
the device memory here; tests/test_runtime_gpu.py runs without it) is
missing. Each case runs two ways: the graph's `.cu` built by nvcc into a
shared library whose `extern "C"` launcher is called through ctypes, and
the runtime (NVRTC, the launcher replayed from Python). Inputs are fresh
random values, outputs are poisoned (NaN) before the launch, and every
output is compared with `molten.interpret(..., reference=True)` by relative
L2 error.
"""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest
from kernel_cases import (
    CASES,
    DTYPES,
    WGMMA_ARCH,
    WGMMA_CASES,
    WGMMA_DTYPES,
    hand_schedules,
)

import molten
from molten import ZeroCompiler
from molten.ir import DataflowGraph

torch = pytest.importorskip("torch", reason="the GPU tests hold device memory in torch")

NVCC = shutil.which("nvcc")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(NVCC is None, reason="nvcc is not installed"),
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU or driver"),
]

TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
TORCH_DTYPE = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


def _arch() -> str:
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


def _inputs(g: DataflowGraph, rng: np.random.Generator, case: str) -> list[np.ndarray]:
    arrays = []
    for t in g.inputs:
        x = rng.uniform(-2.0, 2.0, t.shape.dims)
        if case.startswith("softmax") or case.startswith("log_softmax"):
            x = x * 8.0  # large logits: the max-subtraction must hold
        arrays.append(x)
    return arrays


def _device_arrays(g: DataflowGraph, arrays: list[np.ndarray], dtype: str):
    """The inputs on the GPU in `dtype`, and NaN-poisoned outputs."""
    inputs = [
        torch.tensor(a, dtype=torch.float64).to(TORCH_DTYPE[dtype]).cuda()
        for a in arrays
    ]
    outputs = [
        torch.full(
            t.shape.dims, float("nan"), dtype=TORCH_DTYPE[t.dtype], device="cuda"
        )
        for t in g.outputs
    ]
    return inputs, outputs


def _run_launcher(
    g: DataflowGraph, arrays: list[np.ndarray], dtype: str, tmp_path, arch=None
):
    """Through nvcc: the `.cu` built into a library, its launcher called."""
    arch = arch or _arch()
    compiler = ZeroCompiler(arch=arch)
    compiled = compiler.compile(g, schedules=hand_schedules(g.name))
    compiler.save(compiled, tmp_path)
    library = tmp_path / f"lib{g.name}.so"
    build = subprocess.run(
        [
            NVCC,
            f"-gencode=arch=compute_{arch[3:]},code={arch}",
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-o",
            str(library),
            str(tmp_path / f"{g.name}.cu"),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    launcher = getattr(ctypes.CDLL(str(library)), g.name)
    launcher.restype = ctypes.c_int
    device_inputs, outputs = _device_arrays(g, arrays, dtype)
    pointers = [ctypes.c_void_p(t.data_ptr()) for t in (*device_inputs, *outputs)]
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    status = launcher(*pointers, stream)
    torch.cuda.synchronize()
    assert status == 0, f"launcher returned cudaError {status}"
    return outputs, compiled


def _run_runtime(
    g: DataflowGraph, arrays: list[np.ndarray], dtype: str, tmp_path, arch=None
):
    """Through the runtime: NVRTC, the launcher replayed from Python."""
    compiler = ZeroCompiler(**({"arch": arch} if arch else {}))
    compiled = compiler.compile(g, schedules=hand_schedules(g.name))
    device_inputs, outputs = _device_arrays(g, arrays, dtype)
    assert compiled(*device_inputs, out=outputs) is outputs
    torch.cuda.synchronize()
    return outputs, compiled


def _check_against_interpreter(case, dtype, run, tmp_path, arch=None):
    rng = np.random.default_rng()
    g = DataflowGraph(case)
    (WGMMA_CASES if arch == WGMMA_ARCH else CASES)[case](g, dtype)
    arrays = _inputs(g, rng, case)
    outputs, compiled = run(g, arrays, dtype, tmp_path, arch)
    got = [o.float().cpu().numpy().astype(np.float64) for o in outputs]
    # The reference sees the inputs as the GPU does: rounded to their dtype.
    rounded = [
        molten.interpreters.round_to(a, t.type.element_type)
        for a, t in zip(arrays, g.inputs, strict=True)
    ]
    want = molten.interpret(g, *rounded, reference=True)
    want = want if isinstance(want, tuple) else (want,)
    for out, (g_out, w_out) in enumerate(zip(got, want, strict=True)):
        assert not np.isnan(g_out).any(), f"output {out} has NaN (unwritten or wrong)"
        error = np.linalg.norm(g_out - w_out) / max(np.linalg.norm(w_out), 1e-30)
        assert error < TOLERANCE[dtype], (
            f"{case} {dtype} output {out}: relative L2 error {error:.2e} "
            f"(kernels: {[k.name for k in compiled.kernels]})"
        )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_matches_interpreter(case, dtype, tmp_path):
    _check_against_interpreter(case, dtype, _run_launcher, tmp_path)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_runtime_matches_interpreter(case, dtype, tmp_path):
    """The same graphs through the runtime, into poisoned `out=` buffers."""
    _check_against_interpreter(case, dtype, _run_runtime, tmp_path)


needs_sm_90 = pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
    reason="wgmma (sm_90a) needs an sm_90 GPU",
)


@needs_sm_90
@pytest.mark.parametrize("run", [_run_launcher, _run_runtime], ids=["nvcc", "runtime"])
@pytest.mark.parametrize("dtype", WGMMA_DTYPES)
@pytest.mark.parametrize("case", sorted(WGMMA_CASES))
def test_wgmma_kernel_matches_interpreter(case, dtype, run, tmp_path):
    """The sm_90a gemms (wgmma), built by nvcc and by the runtime."""
    _check_against_interpreter(case, dtype, run, tmp_path, WGMMA_ARCH)


@pytest.mark.parametrize("transpose_b", [True, False], ids=["nk", "kn"])
def test_f32_gemm_on_tensor_cores_keeps_f32_precision(transpose_b):
    """f32 on tensor cores (3xTF32) at a long K and the sum of a whole row of
    outputs, as KernelBench's Gemm_Divide_Sum_Scaling takes it: each output
    within 3e-6 (relative L2) of float64, where one tf32 product (4e-4) or
    tf32 mmas chained through the accumulators (1e-4: the tensor cores
    round their sums toward zero) are far off, and the row sums within
    what f32 itself gives."""
    m, k, n = 256, 8192, 512
    g = DataflowGraph("long_k")
    x = g.add_input("x", [m, k], "float32")
    w = g.add_input("w", [n, k] if transpose_b else [k, n], "float32")
    y = g.matmul(x, w, transpose_b=transpose_b)
    g.add_output(y, "y")
    g.add_output(g.reduce_sum(y, 1, keepdim=True), "row_sum")
    compiled = ZeroCompiler().compile(g)
    assert "molten_mma_tf32" in compiled.source
    xs = torch.rand(m, k, dtype=torch.float64)
    ws = torch.randn(*((n, k) if transpose_b else (k, n)), dtype=torch.float64)
    got_y, got_sum = compiled(xs.float().cuda(), ws.float().cuda())
    want_y = xs.float().double() @ (
        ws.float().double().T if transpose_b else ws.float().double()
    )
    error = torch.linalg.norm(got_y.double().cpu() - want_y) / torch.linalg.norm(want_y)
    assert error < 3e-6, f"relative L2 error of the products {error:.2e}"
    want_sum = want_y.sum(1, keepdim=True)
    f32_sum = want_y.float().cuda().sum(1, keepdim=True).double().cpu()
    allowed = 8 * (f32_sum - want_sum).abs().max() + 1e-3
    worst = (got_sum.double().cpu() - want_sum).abs().max()
    assert worst <= allowed, f"row sums off by {worst:.3g} (f32 itself: {allowed:.3g})"
