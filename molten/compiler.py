"""The compiler driver: graph in, CUDA source out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from molten.pipeline import DEFAULT_PIPELINE, KERNEL_LEVEL_PIPELINE


@dataclass(frozen=True)
class Kernel:
    """One generated kernel: its name, launch configuration and the molten ops
    it fuses."""

    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    fused_ops: tuple[str, ...]


@dataclass(frozen=True)
class CompiledGraph:
    """What `ZeroCompiler.compile` gives: the translation unit of one graph."""

    name: str
    source: str
    """The `.cu` file: kernels and the `extern "C"` launcher."""
    header: str
    """The `.h` file declaring the launcher."""
    kernels: tuple[Kernel, ...]
    """The kernels, in launch order."""
    ir: str
    """The final IR (cuda level)."""


class ZeroCompiler:
    """Compiles `DataflowGraph`s into fused CUDA kernels for `arch` (e.g. "sm_90").

    `compile` runs `molten.DEFAULT_PIPELINE` and prints the result with the
    `-t cuda` target; `save` writes it out. Matmul (gemm) and attention
    kernels are not lowered yet and raise NotImplementedError.
    """

    def __init__(self, arch: str = "sm_90", **options: Any):
        self.arch = arch
        self.options = options

    def optimize(self, graph: Any) -> ModuleOp:
        """The graph's module at the kernel level: fused, outlined, scheduled."""
        from molten.pipeline import run_pipeline

        return run_pipeline(graph.to_module(), KERNEL_LEVEL_PIPELINE)

    def compile(self, graph: Any) -> CompiledGraph:
        """The graph's `.cu` source, header and kernels."""
        from molten.dialects import cuda
        from molten.pipeline import run_pipeline
        from molten.targets.cuda import print_cuda

        module = run_pipeline(graph.to_module(), DEFAULT_PIPELINE)
        unit = print_cuda(module)
        launches = [op for op in module.walk() if isinstance(op, cuda.LaunchOp)]
        kernels = {
            op.sym_name.data: op for op in module.ops if isinstance(op, cuda.KernelOp)
        }
        infos = tuple(
            Kernel(
                name=launch.callee.string_value(),
                grid=tuple(launch.grid.get_values()),  # type: ignore[arg-type]
                block=tuple(launch.block.get_values()),  # type: ignore[arg-type]
                fused_ops=tuple(
                    s.data
                    for s in (kernels[launch.callee.string_value()].fused_ops or [])
                ),
            )
            for launch in launches
        )
        return CompiledGraph(graph.name, unit.source, unit.header, infos, str(module))

    def save(self, compiled: CompiledGraph, directory: str | Path) -> list[Path]:
        """Writes `<graph>.cu`, `<graph>.h` and the final IR, `<graph>.final.mlir`,
        into `directory`."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        header_name = f"{compiled.name}.h"
        files = {
            out
            / f"{compiled.name}.cu": f'#include "{header_name}"\n\n{compiled.source}',
            out / header_name: compiled.header,
            out / f"{compiled.name}.final.mlir": compiled.ir + "\n",
        }
        for path, text in files.items():
            path.write_text(text)
        return list(files)
