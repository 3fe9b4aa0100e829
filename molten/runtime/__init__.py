"""Molten's runtime: compiled graphs run on device arrays, without PyTorch.

`ZeroCompiler().compile(graph)` gives a `CompiledGraph`; calling it compiles
the source with NVRTC for the current GPU (once, cached on disk), then
launches its kernels on the caller's arrays (torch, CuPy, JAX or
`DeviceArray`). `molten.zero` (molten/decorator.py, above the compiler)
makes a Python function of graph ops into such a callable. Everything
needing cuda-python is imported on first use, so `import molten` works
without it.
"""

from __future__ import annotations

import importlib
from typing import Any

from molten.runtime.program import TensorSpec

_LAZY = {
    "CudaGraph": "molten.runtime.cuda_graph",
    "DeviceArray": "molten.runtime.arrays",
    "GraphedCall": "molten.runtime.cuda_graph",
    "Executable": "molten.runtime.executable",
    "compile_cubin": "molten.runtime.nvrtc",
    "current_device_id": "molten.runtime.device",
}

__all__ = ["TensorSpec", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'molten.runtime' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)
