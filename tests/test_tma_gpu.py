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
from test_tuning_gpu import SM_90_MISSING

from molten.compiler import CompiledGraph, Kernel
from molten.context import parse_module
from molten.dialects import cuda
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
  %bars = cuda.shared_alloc 1 : !cuda.ptr<ui64, shared>
  %t = cuda.thread_idx x
  %first = arith.cmpi eq, %t, %c0 : index
  scf.if %first {{
    cuda.mbarrier_init %bars[%c0], 1 : !cuda.ptr<ui64, shared>
    cuda.fence_mbarrier_init
  }}
  cuda.sync_threads
  scf.if %first {{
    cuda.mbarrier_arrive %bars[%c0] expect_tx 8192 : !cuda.ptr<ui64, shared>
    cuda.tma_load %map, %tile[%c0], %bars[%c0], [%c0, %first_row]
        : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
  }}
  cuda.mbarrier_wait %bars[%c0], %c0 : !cuda.ptr<ui64, shared>
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
