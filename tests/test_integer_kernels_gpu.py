"""Integer and bool tensors on the GPU: every case of tests/integer_cases.py
(each op at each element type it takes, every cast, shifts past the width,
the mask and position-id chains, argmax and argmin with ties and NaNs,
integer sums and maxima) runs two ways, the `.cu` built by nvcc
with its launcher called through ctypes, and the runtime (NVRTC), on fresh
random inputs into outputs poisoned with 0xff bytes (NaN, -1, 255 and a
bool that is neither true nor false). Integer and bool results equal the
interpreter's bit for bit; float results (the math functions, floats made
from integers) are within a few ulps of its float32 ones.

Marker `gpu`: skipped where nvcc, a GPU or torch is missing."""

import ctypes
import shutil
import subprocess

import numpy as np
import pytest
from integer_cases import CASES as POINTWISE_CASES
from integer_cases import REDUCTIONS
from test_codegen import split_includes

import molten
from molten.ir import DataflowGraph
from molten.targets.cuda.names import c_identifier

torch = pytest.importorskip("torch", reason="the GPU tests hold device memory in torch")

NVCC = shutil.which("nvcc")
CASES = {**POINTWISE_CASES, **REDUCTIONS}
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(NVCC is None, reason="nvcc is not installed"),
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU or driver"),
]

TORCH = {
    "i64": torch.int64,
    "i32": torch.int32,
    "i8": torch.int8,
    "ui8": torch.uint8,
    "i1": torch.bool,
    "f32": torch.float32,
    "f16": torch.float16,
    "bf16": torch.bfloat16,
}
RTOL = {"f32": 2e-6, "f16": 1e-3, "bf16": 8e-3}
"""A few ulps of the result's type (float32 math functions are within 2)."""


def _element(t) -> str:
    return str(t.type.element_type)


def _graph(name: str) -> DataflowGraph:
    return DataflowGraph.from_mlir(CASES[name].text)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """Every case's `.cu` in one shared library (the #include block once,
    each case in a namespace; the launchers are extern "C")."""
    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    compiler = molten.ZeroCompiler(arch=arch)
    sources = [compiler.compile(_graph(name)).source for name in sorted(CASES)]
    heads, bodies = zip(*map(split_includes, sources), strict=True)
    unit = heads[0] + "".join(
        f"namespace molten_unit{i} {{\n{body}}}\n" for i, body in enumerate(bodies)
    )
    directory = tmp_path_factory.mktemp("integer-kernels")
    (directory / "unit.cu").write_text(unit)
    built = subprocess.run(
        [
            NVCC,
            f"-gencode=arch=compute_{arch[3:]},code={arch}",
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-o",
            str(directory / "libunit.so"),
            str(directory / "unit.cu"),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    return ctypes.CDLL(str(directory / "libunit.so"))


def _on_device(g: DataflowGraph, arrays):
    inputs = [
        # (np.ascontiguousarray makes a 0-d array 1-d.)
        torch.from_numpy(np.array(a, order="C")).to(TORCH[_element(t)]).cuda()
        for a, t in zip(arrays, g.inputs, strict=True)
    ]
    outputs = []
    for t in g.outputs:
        out = torch.empty(t.shape.dims, dtype=TORCH[_element(t)], device="cuda")
        out.view(torch.uint8).fill_(0xFF)
        outputs.append(out)
    return inputs, outputs


def _check(name, g, outputs, want):
    for out, w, t in zip(outputs, want, g.outputs, strict=True):
        element = _element(t)
        if element == "i1":
            raw = out.view(torch.uint8).cpu().numpy()
            assert raw.max(initial=0) <= 1, f"{name}: a bool that is not 0 or 1"
            np.testing.assert_array_equal(raw.astype(bool), w, err_msg=name)
        elif element in RTOL:
            got = out.float().cpu().numpy()
            assert not np.isnan(got).any() or np.isnan(w).any(), f"{name}: unwritten"
            np.testing.assert_allclose(
                got, w, rtol=RTOL[element], atol=1e-6, err_msg=name
            )
        else:
            np.testing.assert_array_equal(out.cpu().numpy(), w, err_msg=name)


def _run(name: str, library, way: str):
    g = _graph(name)
    arrays = CASES[name].inputs(np.random.default_rng())
    want = molten.interpret(g, *arrays)
    want = want if isinstance(want, tuple) else (want,)
    inputs, outputs = _on_device(g, arrays)
    if way == "nvcc":
        launcher = getattr(library, c_identifier(g.name, is_global=True))
        launcher.restype = ctypes.c_int
        pointers = [ctypes.c_void_p(x.data_ptr()) for x in (*inputs, *outputs)]
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        assert launcher(*pointers, stream) == 0
    else:
        compiled = molten.ZeroCompiler().compile(g)
        assert compiled(*inputs, out=outputs) is outputs
    torch.cuda.synchronize()
    _check(name, g, outputs, want)


@pytest.mark.parametrize("way", ["nvcc", "runtime"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_integer_kernel_matches_interpreter(name, way, library):
    _run(name, library, way)


def test_torch_takes_integer_results_by_dlpack():
    """An integer graph's output, allocated by the runtime, is an int64
    torch tensor without a copy (DLPack's kDLInt)."""
    g = _graph("position_ids_from_mask")
    arrays = CASES["position_ids_from_mask"].inputs(np.random.default_rng())
    inputs, _ = _on_device(g, arrays)
    result = molten.ZeroCompiler().compile(g)(*inputs)
    assert result.dtype == torch.int32 and result.is_cuda
    np.testing.assert_array_equal(result.cpu().numpy(), molten.interpret(g, *arrays))


CHECKED = """
import numpy as np, torch, molten
from molten.ir import DataflowGraph
g = DataflowGraph("lookup")
ids = g.add_input("ids", [4], "int64")
table = g.add_input("table", [10, 8])
g.add_output(g.embedding(ids, table) * 2.0)
compiled = molten.ZeroCompiler().compile(g)
ids = torch.tensor([1, 2, 12, 3], device="cuda")
try:
    compiled(ids, torch.zeros(10, 8, device="cuda"))
    torch.cuda.synchronize()
except Exception as error:
    print("RAISED", type(error).__name__)
"""


def test_checked_indices_stop_the_kernel_at_the_bad_index(tmp_path):
    """With MOLTEN_CHECK_INDICES=1 a bad id stops the kernel, which prints
    it, its position and the table's size (the launch then fails, as a
    device assert does; in a process of its own: the context is lost)."""
    import os
    import sys

    script = tmp_path / "checked.py"
    script.write_text(CHECKED)
    env = {**os.environ, "MOLTEN_CHECK_INDICES": "1"}
    ran = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env
    )
    output = ran.stdout + ran.stderr
    assert "molten: molten.take indices: index 12 at position 2" in output, output
    assert "out of range [0, 10)" in output
    assert "RAISED" in output or ran.returncode != 0


def test_unchecked_indices_read_the_nearest_row():
    """The default: an id out of range reads the nearest row of the table,
    never memory outside it (compute-sanitizer checks the kernels)."""
    g = DataflowGraph("lookup")
    ids = g.add_input("ids", [4], "int64")
    table = g.add_input("table", [10, 8])
    g.add_output(g.embedding(ids, table))
    rows = torch.arange(80, dtype=torch.float32, device="cuda").reshape(10, 8)
    got = molten.ZeroCompiler().compile(g)(
        torch.tensor([-5, 3, 10, 99], device="cuda"), rows
    )
    np.testing.assert_array_equal(got.cpu().numpy(), rows[[0, 3, 9, 9]].cpu().numpy())


def test_positions_over_a_named_row_count():
    """Rows counted at run time are walked by a block each (never split):
    the thread's first run starts its best element, the loop the rest; one
    compile for every count, positions equal to torch's, ties and NaNs."""
    g = DataflowGraph("walked_positions")
    x = g.add_input("x", ["B", 40000], "bfloat16")
    g.add_output(g.argmax(x, 1))
    g.add_output(g.argmin(x, 1))
    compiled = molten.ZeroCompiler().compile(g)
    for rows in (1, 3, 130):
        logits = torch.randint(-3, 4, (rows, 40000), device="cuda").bfloat16()
        logits[0, 7] = float("nan")
        logits[rows - 1, 39999] = 100
        top, bottom = compiled(logits)
        torch.testing.assert_close(top, logits.argmax(1), rtol=0, atol=0)
        torch.testing.assert_close(bottom, logits.argmin(1), rtol=0, atol=0)
