"""TMA tensor maps on a GPU (sm_90): a launcher's `cuda.make_tensor_map`
encoded on the host, by the nvcc-built launcher and by the runtime, and a
box of it loaded into shared memory by `cuda.tma_load` on an mbarrier.
Marker `gpu`."""

from __future__ import annotations

import ctypes
import shutil
import subprocess

import numpy as np
import pytest
from test_runtime_gpu import TOLERANCE, _reference
from test_tuning_gpu import SM_90_MISSING

from molten import ZeroCompiler
from molten.compiler import CompiledGraph, Kernel
from molten.context import parse_module
from molten.dialects import cuda, kernel
from molten.ir import DataflowGraph
from molten.runtime import DeviceArray
from molten.runtime.program import TensorSpec, host_program
from molten.targets.cuda import print_cuda

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(SM_90_MISSING is not None, reason=str(SM_90_MISSING)),
]
NVCC = shutil.which("nvcc")
ROWS, COLS, BOX, FIRST_ROW = 100, 64, 64, 50

# Each thread copies elements of the 64x64 box (rows 50 to 113 of a 100x64
# matrix: past row 99, zeros) from its 128-byte swizzled tile: element (r, c)
# lies at chunk (c / 8) ^ (r % 8) of row r.
TMA_COPY = f"""
cuda.kernel @tma_copy(%map: !cuda.tensor_map<bf16>, %y: !cuda.ptr<bf16>)
    block 128 min_blocks 1 {{
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %first_row = arith.constant {FIRST_ROW} : index
  %tile = cuda.shared_alloc 4096 : !cuda.ptr<bf16, shared>
  %bars = cuda.shared_alloc 1 : !cuda.ptr<i64, shared>
  %t = cuda.thread_idx x
  %first = arith.cmpi eq, %t, %c0 : index
  scf.if %first {{
    cuda.mbarrier_init %bars[%c0], 1 : !cuda.ptr<i64, shared>
    cuda.fence_mbarrier_init
  }}
  cuda.sync_threads
  scf.if %first {{
    cuda.mbarrier_arrive %bars[%c0] expect_tx 8192 : !cuda.ptr<i64, shared>
    cuda.tma_load %map, %tile[%c0], %bars[%c0], [%c0, %first_row]
        : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<i64, shared>
  }}
  cuda.mbarrier_wait %bars[%c0], %c0 : !cuda.ptr<i64, shared>
  scf.for %i = %t to %c4096 step %c128 {{
    %r = arith.divsi %i, %c64 : index
    %c = arith.remsi %i, %c64 : index
    %chunk = arith.divsi %c, %c8 : index
    %row8 = arith.remsi %r, %c8 : index
    %swizzled = arith.xori %chunk, %row8 : index
    %within = arith.remsi %c, %c8 : index
    %row_start = arith.muli %r, %c64 : index
    %chunk_start = arith.muli %swizzled, %c8 : index
    %at_chunk = arith.addi %row_start, %chunk_start : index
    %at = arith.addi %at_chunk, %within : index
    %v = cuda.load %tile[%at] : !cuda.ptr<bf16, shared> -> bf16
    cuda.store %v, %y[%i] : bf16, !cuda.ptr<bf16>
  }}
  cuda.return
}}
cuda.host_func @tma_copy_graph(%x: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 {{
  %m = cuda.make_tensor_map %x [{ROWS}, {COLS}] box [{BOX}, {BOX}]
      : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
  cuda.launch @tma_copy grid [1, 1, 1] block [128, 1, 1](%m, %y)
      : !cuda.tensor_map<bf16>, !cuda.ptr<bf16>
  cuda.return
}}
"""


def _compiled() -> CompiledGraph:
    module = parse_module(TMA_COPY)
    unit = print_cuda(module)
    (launcher,) = [op for op in module.ops if isinstance(op, cuda.HostFuncOp)]
    return CompiledGraph(
        "tma_copy_graph",
        unit.source,
        unit.header,
        (Kernel("tma_copy", (1, 1, 1), (128, 1, 1), ()),),
        str(module),
        (TensorSpec("x", (ROWS, COLS), "bfloat16"),),
        (TensorSpec("y", (BOX, BOX), "bfloat16"),),
        host_program(launcher, unit.kernel_names),
        arch="sm_90a",
    )


def _expected(x: np.ndarray) -> np.ndarray:
    want = np.zeros((BOX, BOX), np.float32)
    inside = ROWS - FIRST_ROW
    want[:inside] = x[FIRST_ROW:]
    return want


def _matrix() -> np.ndarray:
    rng = np.random.default_rng()
    # Values a bf16 holds exactly, so that the copy compares bit for bit.
    return rng.integers(-100, 100, (ROWS, COLS)).astype(np.float32)


def test_runtime_encodes_the_map_and_tma_loads_the_box():
    x = _matrix()
    compiled = _compiled()
    device_x = DeviceArray.from_numpy(x, "bfloat16")
    y = DeviceArray.from_numpy(np.full((BOX, BOX), np.nan, np.float32), "bfloat16")
    compiled(device_x, out=y)
    np.testing.assert_array_equal(y.numpy(), _expected(x))
    # Another input: the map is encoded again for its pointer.
    x2 = _matrix()
    compiled(DeviceArray.from_numpy(x2, "bfloat16"), out=y)
    np.testing.assert_array_equal(y.numpy(), _expected(x2))


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_launcher_encodes_the_map_and_tma_loads_the_box(tmp_path):
    compiled = _compiled()
    source = tmp_path / "tma_copy.cu"
    source.write_text(compiled.source)
    library = tmp_path / "libtma_copy.so"
    build = subprocess.run(
        [
            NVCC,
            "-gencode=arch=compute_90a,code=sm_90a",
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-o",
            str(library),
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    launcher = ctypes.CDLL(str(library)).tma_copy_graph
    launcher.restype = ctypes.c_int
    x = _matrix()
    device_x = DeviceArray.from_numpy(x, "bfloat16")
    y = DeviceArray.from_numpy(np.full((BOX, BOX), np.nan, np.float32), "bfloat16")
    status = launcher(ctypes.c_void_p(device_x.ptr), ctypes.c_void_p(y.ptr), None)
    assert status == 0, f"launcher returned cudaError {status}"
    np.testing.assert_array_equal(y.numpy(), _expected(x))


# --------------------------------------------------------------------------
# The persistent TMA gemm (a schedule's `persistent` blocks).
# --------------------------------------------------------------------------

TMA_GEMMS = {
    # case: (M, N, K, B stored [N, K], tile rows, tile columns, epilogue)
    "nk_128x256_partial_300x1000x520": (300, 1000, 520, True, 128, 256, "bias_gelu"),
    "kn_128x256_partial_300x1000x520": (300, 1000, 520, False, 128, 256, "bias_gelu"),
    "nk_64x128_residual_70x384x4096": (70, 384, 4096, True, 64, 128, "residual"),
    "kn_128x128_many_tiles_1100x640x200": (1100, 640, 200, False, 128, 128, "none"),
}


def _tma_gemm_graph(case: str, dtype: str) -> DataflowGraph:
    m, n, k, nk, _, _, tail = TMA_GEMMS[case]
    g = DataflowGraph(case)
    x = g.add_input("x", [m, k], dtype)
    w = g.add_input("w", [n, k] if nk else [k, n], dtype)
    y = g.matmul(x, w, transpose_b=nk)
    if tail == "bias_gelu":
        y = g.gelu(y + g.add_input("b", [n], dtype))
    elif tail == "residual":
        y = y + g.add_input("r", [m, n], dtype)
    g.add_output(y, "y")
    return g


def _tma_schedule(case: str, blocks: int) -> kernel.ScheduleAttr:
    *_, rows, cols, _ = TMA_GEMMS[case]
    return kernel.ScheduleAttr(
        128 * (rows // 64 + 1),
        tile=(rows, cols, 64),
        warp=(64, cols),
        stages=4,
        mma_warps=4,
        persistent=blocks,
    )


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", sorted(TMA_GEMMS))
def test_tma_gemm_matches_interpreter(case, dtype):
    """Partial tiles along M, N and K, B stored either way, 64- and 128-row
    tiles, epilogues, blocks that loop over several tiles (7 blocks)."""
    g = _tma_gemm_graph(case, dtype)
    name = f"{case}_gemm0"
    compiled = ZeroCompiler(arch="sm_90a").compile(
        g, schedules={name: _tma_schedule(case, 7)}
    )
    assert compiled.kernels[0].block[0] in (256, 384)
    rng = np.random.default_rng()
    arrays = [rng.uniform(-2, 2, t.shape.dims) for t in g.inputs]
    inputs = [DeviceArray.from_numpy(a, dtype) for a in arrays]
    out = DeviceArray.from_numpy(
        np.full(g.outputs[0].shape.dims, np.nan, np.float32), dtype
    )
    compiled(*inputs, out=out)
    got = out.numpy().astype(np.float64)
    want = _reference(g, *arrays)
    error = np.linalg.norm(got - want) / np.linalg.norm(want)
    assert error < TOLERANCE[dtype], f"relative L2 error {error:.2e}"
