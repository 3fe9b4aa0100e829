"""The compiler driver: graph in, CUDA kernels out."""

from __future__ import annotations

from typing import Any

from molten.pipeline import DEFAULT_PIPELINE


class ZeroCompiler:
    """Compiles `DataflowGraph`s into fused CUDA kernels for `arch` (e.g. "sm_90").

    The pipeline reaches the kernel level today (fused, outlined, scheduled
    kernels); lowering to the cuda dialect and `.cu` emission are not
    implemented yet, and `compile` and `save` say so. `optimize` runs the
    part of the pipeline that exists.
    """

    def __init__(self, arch: str = "sm_90", **options: Any):
        self.arch = arch
        self.options = options

    def optimize(self, graph: Any):
        """The graph's module after the default pipeline (kernel level today)."""
        from molten.pipeline import run_pipeline

        return run_pipeline(graph.to_module(), DEFAULT_PIPELINE)

    def compile(self, graph: Any):
        raise NotImplementedError(
            "ZeroCompiler.compile: CUDA code generation is not implemented yet "
            "(missing: the cuda dialect, lower-kernel-to-cuda and the -t cuda "
            "target). Use ZeroCompiler.optimize(graph) for the fused, scheduled "
            "kernels at the kernel level, or molten.interpret(graph, *arrays) "
            "to run the graph on the CPU."
        )

    def save(self, kernels: Any, directory: str):
        raise NotImplementedError(
            "ZeroCompiler.save: .cu/.h emission is not implemented yet "
            "(missing: the cuda dialect and its -t cuda printer)."
        )
