"""Molten: write the math, get the kernel.

Math specs (a small dataflow graph) compile through xDSL dialects into fused
CUDA kernels. This package holds the graph API, the reference interpreter,
the compiler driver and the command-line tools.
"""

from molten.compiler import ZeroCompiler
from molten.errors import (
    DTypeError,
    GraphError,
    InputError,
    MoltenError,
    ShapeError,
)
from molten.interpreters import interpret
from molten.ir import DataflowGraph, Tensor, TensorShape
from molten.pipeline import DEFAULT_PIPELINE, KERNEL_LEVEL_PIPELINE

__all__ = [
    "DEFAULT_PIPELINE",
    "KERNEL_LEVEL_PIPELINE",
    "DTypeError",
    "DataflowGraph",
    "GraphError",
    "InputError",
    "MoltenError",
    "ShapeError",
    "Tensor",
    "TensorShape",
    "ZeroCompiler",
    "interpret",
]
