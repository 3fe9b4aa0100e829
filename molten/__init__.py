"""Molten: write the math, get the kernel.

Math specs (a small dataflow graph) compile through xDSL dialects into fused
CUDA kernels. This package holds the graph API, the reference interpreter,
the compiler driver and the command-line tools.
"""

# Gives the molten dialect's ops their canonicalization patterns, whatever
# Molten module is imported first (see `MoltenCanonicalization`).
import molten.passes  # noqa: F401
from molten import ops
from molten.compiler import CompiledGraph, ZeroCompiler
from molten.errors import (
    CompileError,
    DTypeError,
    GraphError,
    InputError,
    LaunchError,
    MoltenError,
    RuntimeUnavailableError,
    ShapeError,
    UnsupportedError,
)
from molten.from_torch import from_torch, torch_arguments
from molten.interpreters import interpret
from molten.ir import DataflowGraph, Tensor, TensorShape
from molten.pipeline import DEFAULT_PIPELINE, KERNEL_LEVEL_PIPELINE
from molten.runtime import TensorSpec
from molten.torch_backend import explain

__all__ = [
    "CompileError",
    "CompiledGraph",
    "DeviceArray",
    "LaunchError",
    "RuntimeUnavailableError",
    "TensorSpec",
    "ZeroFallbackWarning",
    "explain",
    "from_torch",
    "ops",
    "torch_arguments",
    "zero",
    "DEFAULT_PIPELINE",
    "KERNEL_LEVEL_PIPELINE",
    "DTypeError",
    "DataflowGraph",
    "GraphError",
    "InputError",
    "MoltenError",
    "ShapeError",
    "UnsupportedError",
    "Tensor",
    "TensorShape",
    "ZeroCompiler",
    "interpret",
]


def __getattr__(name: str) -> object:
    # The runtime's GPU-facing parts load cuda-python on first use only.
    if name == "DeviceArray":
        import molten.runtime

        return molten.runtime.DeviceArray
    if name in ("ZeroFallbackWarning", "zero"):
        import molten.decorator

        return getattr(molten.decorator, name)
    raise AttributeError(f"module 'molten' has no attribute '{name}'")
