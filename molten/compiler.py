"""The compiler driver: graph in, CUDA source out."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, TensorType

from molten.conventions import file_stem, graph_updates
from molten.errors import GraphError, MoltenError, StaticShapeNeeded
from molten.ir import dtype_name, input_name, output_name
from molten.pipeline import (
    DEFAULT_PIPELINE,
    KERNEL_LEVEL_PIPELINE,
    OUTLINE_PIPELINE,
    SCHEDULED_PIPELINE,
)
from molten.runtime.program import Step, TensorSpec, host_program
from molten.runtime.torch_path import SLOW


@dataclass(frozen=True)
class Kernel:
    """One generated kernel: its name, launch configuration, the molten ops
    it fuses, and its scalar variant (launched instead when a pointer is too
    misaligned for its vector accesses), if it has vector accesses."""

    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    fused_ops: tuple[str, ...]
    scalar_variant: str | None = None


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
    final: str | ModuleOp = field(repr=False, compare=False)
    """The final module (cuda level), or its text; `ir` prints it once, when
    first read (printing it takes a fifth of a large graph's compile)."""
    inputs: tuple[TensorSpec, ...] = ()
    outputs: tuple[TensorSpec, ...] = ()
    program: tuple[Step, ...] = ()
    """The launcher's steps, which the runtime replays (`molten.runtime.program`)."""
    origins: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)
    """Kernel -> {C++ variable -> graph value name}, for compile errors."""
    value_ops: dict[str, str] = field(default_factory=dict, repr=False)
    """Graph value name -> the molten op that computes it, for compile errors."""
    arch: str = "sm_90"
    """The arch it was compiled for; an arch-specific one (sm_90a) is what
    the runtime compiles the source for, on a device of that arch only."""
    retarget: Callable[[Any], CompiledGraph] | None = field(
        default=None, repr=False, compare=False
    )
    """The same graph compiled for another target, where none was pinned
    (`ZeroCompiler()`): the JIT runs the device's own target (`jit_target`)."""
    dims: tuple[str, ...] = ()
    """The named dimensions whose sizes the launcher takes (after its
    pointers), one compile serving every size."""
    updated: tuple[int, ...] = ()
    """The inputs a call writes in place (`molten.updates`), by position:
    their outputs are not in `outputs`, and a call does not return them."""
    _executables: dict[int, Any] = field(
        default_factory=dict, repr=False, compare=False
    )
    _retargeted: dict[Any, CompiledGraph] = field(
        default_factory=dict, repr=False, compare=False
    )
    target: Any = field(default=None, repr=False, compare=False)
    """The `Target` its schedules were chosen for (passes/schedule/target.py)."""

    @cached_property
    def ir(self) -> str:
        """The final IR (cuda level), as text."""
        return self.final if isinstance(self.final, str) else str(self.final)

    def jit_target(self, native: Any) -> CompiledGraph:
        """What the JIT runs on a device whose target is `native` (a
        `Target`, read off the device, or a target's name: sm_90a on an H100
        or H200 puts gemms and attention on wgmma, and the SMs and bandwidth
        are the device's own): this graph where its target was pinned or is
        that one, else the graph compiled for `native`, once. Should that
        compile fail, give other inputs or outputs (the graph changed
        since), need sizes this one does not, or generate this very source
        for a target of no arch of its own (sm_100), this one."""
        if isinstance(native, str):
            from molten.passes.schedule.target import target_named

            native = target_named(native)
        if self.retarget is None or native == self.target:
            return self
        if native not in self._retargeted:
            try:
                other = self.retarget(native)
            except (NotImplementedError, MoltenError):
                other = self
            differs = isinstance(other, CompiledGraph) and (
                (other.inputs, other.outputs) == (self.inputs, self.outputs)
                # an arch-specific target (sm_90a) builds only for itself
                and (other.source != self.source or other.arch.endswith("a"))
            )
            self._retargeted[native] = other if differs else self
        return self._retargeted[native]

    def __len__(self) -> int:
        """The number of kernels, so that `len(compiler.compile(g))` counts
        them as a user holding "the kernels" expects."""
        return len(self.kernels)

    def __iter__(self) -> Iterator[Kernel]:
        """The kernels, in launch order."""
        return iter(self.kernels)

    def __getitem__(self, index: int) -> Kernel:
        return self.kernels[index]

    def __bool__(self) -> bool:
        # A compiled graph is a value even when it launches no kernel (an
        # output that is an input is only copied): never falsy by length.
        return True

    def executable(self, device: int | None = None) -> Any:
        """The graph compiled by NVRTC for `device` (default: the current
        one) and loaded, as a `molten.runtime.Executable`; built once. Unless
        an arch was pinned, it is the graph for the device's best target
        (`jit_target`)."""
        from molten.passes.schedule.target import device_target
        from molten.runtime.device import current_device_id
        from molten.runtime.executable import Executable
        from molten.runtime.sized import SizedExecutable

        device_id = current_device_id() if device is None else device
        if device_id not in self._executables:
            target = self.jit_target(device_target(device_id))
            kind = SizedExecutable if target.dims else Executable
            self._executables[device_id] = kind(target, device_id)
        return self._executables[device_id]

    def __call__(self, *inputs: Any, out: Any = None, stream: Any = None) -> Any:
        """Runs the graph on device arrays (torch, CuPy, JAX, `DeviceArray`) on
        the device current at the first call: see
        `molten.runtime.Executable.__call__` (`executable(device=...)` picks
        another device)."""
        executable = self._executables.get(None)
        if executable is None:
            executable = self._current_executable()
        if out is None and stream is None:
            # The common call straight to the function written for it (the
            # executable's own __call__ would be a frame more, 0.2 us).
            call = executable._torch_call
            if call is not None:
                result = call(inputs)
                if result is not SLOW:
                    return result
        return executable(*inputs, out=out, stream=stream)

    def _current_executable(self) -> Any:
        """The executable of the device current at the first call."""
        executable = self._executables.get(None)
        if executable is None:
            executable = self._executables[None] = self.executable()
        return executable

    def graphed(self, max_graphs: int = 8) -> Any:
        """The graph called through CUDA graphs captured per set of input
        addresses: see `molten.runtime.Executable.graphed`."""
        return self._current_executable().graphed(max_graphs)

    def cuda_graph(self, *inputs: Any, out: Any = None, stream: Any = None) -> Any:
        """The graph's launches on these arrays captured as a CUDA graph, to
        replay with one driver call: see
        `molten.runtime.Executable.cuda_graph`."""
        return self._current_executable().cuda_graph(*inputs, out=out, stream=stream)


class SizedPerCall:
    """A graph with named dimensions (`TensorShape(["T", 3584])`) that has a
    kernel which takes static sizes only (a gemm or an attention so far:
    `reason` says which), compiled for the sizes each call's arrays give.

    Each new set of sizes is compiled once, when first called, and kept
    (its cubin is cached on disk as any other). A graph of row and
    pointwise kernels compiles once for every size instead (a
    `CompiledGraph` whose launcher takes them). A call binds the names
    from its arrays' shapes first, so a mismatch names the dimension
    ("input 'x' and input 'gate' disagree on T: 17 vs 16").
    """

    def __init__(
        self,
        compiler: ZeroCompiler,
        graph: Any,
        schedules: dict[str, Any] | None = None,
        reason: str = "",
    ):
        self.reason = reason
        """Why the graph does not compile once for every size."""
        self.compiler = compiler
        self.graph = graph
        self.name = graph.name
        self.dims: tuple[str, ...] = graph.dims
        self.schedules = schedules
        self._inputs = [(f"input '{t.name}'", t.shape.dims) for t in graph.inputs]
        self._compiled: dict[tuple[int, ...], CompiledGraph] = {}

    def specialize(self, **sizes: int) -> CompiledGraph:
        """The graph compiled at these sizes (every name given), once."""
        missing = [d for d in self.dims if d not in sizes]
        if missing:
            raise GraphError(
                f"graph '{self.name}' needs sizes for {', '.join(missing)}"
            )
        key = tuple(sizes[d] for d in self.dims)
        compiled = self._compiled.get(key)
        if compiled is None:
            static = self.graph.specialize(**sizes)
            compiled = self.compiler.compile(static, self.schedules)
            self._compiled[key] = compiled
        return compiled

    def sizes_of(self, inputs: Sequence[Any]) -> dict[str, int]:
        """The named dimensions' sizes the arrays give (an InputError where
        they are not arrays of the inputs' ranks, or disagree)."""
        from molten.dims import sizes_of

        return sizes_of(self.name, self._inputs, inputs)

    def __call__(self, *inputs: Any, out: Any = None, stream: Any = None) -> Any:
        """Runs the graph compiled for the arrays' sizes: see
        `CompiledGraph.__call__`."""
        return self._for(inputs)(*inputs, out=out, stream=stream)

    def cuda_graph(self, *inputs: Any, out: Any = None, stream: Any = None) -> Any:
        """`CompiledGraph.cuda_graph` of the graph at the arrays' sizes."""
        return self._for(inputs).cuda_graph(*inputs, out=out, stream=stream)

    def _for(self, inputs: Sequence[Any]) -> CompiledGraph:
        """The graph compiled at the sizes `inputs` give."""
        return self.specialize(**self.sizes_of(inputs))

    def __repr__(self) -> str:
        sizes = (
            ", ".join("x".join(map(str, key)) for key in self._compiled) or "none yet"
        )
        return f"SizedPerCall('{self.name}', dims {self.dims}, compiled at {sizes})"


AUTOTUNE_CANDIDATES = 8
"""The candidate schedules `ZeroCompiler(autotune=True)` times per kernel."""
PORTABLE_ARCH = "sm_90"
"""The target of a `ZeroCompiler()` that pins none: its `.cu` builds for any
sm_90 or later device."""


class ZeroCompiler:
    """Compiles `DataflowGraph`s into fused CUDA kernels for a target: a device
    (`target="h200"`, or a `Target`) or an arch (`arch="sm_90a"`), whose facts
    the schedules read (passes/schedule/target.py; `sm_count` overrides its
    SMs).

    `compile` runs `molten.DEFAULT_PIPELINE` and prints the result with the
    `-t cuda` target; `save` writes it out. A kernel the lowering does not
    cover raises NotImplementedError naming what is missing.

    Without a target or arch, the source is the portable sm_90's, and
    calling the compiled graph runs it compiled for the device at hand (its
    own facts, read off it; sm_90a on an H100 or H200: gemms and attention
    on wgmma). A pinned target or arch is what the JIT runs too.

    With `autotune=True` (or a number: the candidates a kernel may have,
    default AUTOTUNE_CANDIDATES), each kernel with several candidate
    schedules (the sm_90a gemm) takes the one fastest on the current GPU
    (`molten.tuning`): timed there once, each candidate checked against
    the float64 interpreter first, then kept in the tuning database next
    to the kernel cache, so later compiles take it without timing. The
    tuned schedules are listed in the final IR's `molten.tuned` module
    attribute. Without it, the heuristics schedule every kernel.

    With `prologue=True` (sm_90a), rms_norm(x, w) @ W.T becomes one gemm
    kernel where `fuse-prologue` takes it (at most 128 rows). Off by
    default: measured on the H100 it ran slower than the norm's own kernel
    and the gemm (benchmarks/experiments/prologue_profile.py).
    """

    def __init__(
        self,
        arch: str | None = None,
        sm_count: int | None = None,
        autotune: bool | int = False,
        progress: bool = True,
        prologue: bool = False,
        target: Any = None,
        **options: Any,
    ):
        from molten.passes.schedule.target import Target, target_named

        self.pinned = arch is not None or target is not None
        """Whether the JIT runs this target whatever the device (else the
        device's own)."""
        if isinstance(target, Target):
            chosen = target
        else:
            try:
                chosen = target_named(target or arch or PORTABLE_ARCH)
            except ValueError as error:
                raise MoltenError(f"ZeroCompiler: {error}") from None
        if arch is not None and target is not None and chosen.arch != arch:
            raise MoltenError(
                f"ZeroCompiler: target {chosen.device} is {chosen.arch}, not "
                f"arch={arch!r}"
            )
        self.target = chosen.with_sm_count(sm_count)
        """The device the schedules are chosen for (its facts)."""
        self.arch = self.target.arch
        self.sm_count = sm_count
        self.autotune = AUTOTUNE_CANDIDATES if autotune is True else int(autotune)
        """The candidate schedules a kernel may have when tuned (0: no tuning)."""
        self.progress = progress
        """Whether tuning shows its progress on stderr."""
        self.prologue = prologue
        """Whether `fuse-prologue` runs (sm_90a)."""
        self.options = options
        self.tuned: dict[str, Any] = {}
        """The schedules the last compile took from tuning, by kernel."""
        self.trials: dict[str, list[Any]] = {}
        """Per kernel timed by the last compile, its candidates as timed
        (`molten.tuning.Trial`); none for a kernel the database had."""

    def _pipeline(self, spec: str) -> str:
        """`spec` with the passes this compiler's options add: `fuse-prologue`
        where asked for and the target has wgmma. (The target itself travels
        on the module: `_module`.)"""
        if self.prologue and self.target.wgmma:
            spec = spec.replace("fuse-reduction", "fuse-prologue,fuse-reduction", 1)
        return spec

    def _module(self, graph: Any) -> ModuleOp:
        """The graph's module, carrying this compiler's target."""
        from molten.passes.schedule.target import attach_target

        module = graph.to_module()
        attach_target(module, self.target)
        return module

    def optimize(self, graph: Any) -> ModuleOp:
        """The graph's module at the kernel level: fused, outlined, scheduled."""
        from molten.pipeline import run_pipeline

        return run_pipeline(self._module(graph), self._pipeline(KERNEL_LEVEL_PIPELINE))

    def compile(
        self, graph: Any, schedules: dict[str, Any] | None = None
    ) -> CompiledGraph:
        """The graph's `.cu` source, header and kernels. `schedules` gives
        kernels (by name, as `optimize` outlines them) a `#kernel.schedule`
        of your own instead of the heuristics' or the tuner's."""
        if getattr(graph, "dims", ()):
            try:
                return self._compile(graph, schedules)
            except StaticShapeNeeded as error:
                return SizedPerCall(self, graph, schedules, str(error))
        return self._compile(graph, schedules)

    def _compile(
        self, graph: Any, schedules: dict[str, Any] | None = None
    ) -> CompiledGraph:
        from molten.pipeline import run_pipeline

        if schedules:
            outlined = run_pipeline(
                self._module(graph), self._pipeline(OUTLINE_PIPELINE)
            )
            _give_schedules(outlined, schedules)
            return self._compiled_module(graph, outlined, schedules=schedules)
        if not self.autotune:
            module = run_pipeline(self._module(graph), self._pipeline(DEFAULT_PIPELINE))
            return self._packaged(graph, module)
        outlined = run_pipeline(self._module(graph), self._pipeline(OUTLINE_PIPELINE))
        from molten.tuning import Autotuner

        tuner = Autotuner(self.autotune, self.target, self.progress)
        self.tuned = tuner.tune(
            graph, outlined, lambda module: self._compiled_module(graph, module)
        )
        self.trials = tuner.trials
        return self._compiled_module(graph, outlined, self.tuned)

    def _compiled_module(
        self,
        graph: Any,
        outlined: ModuleOp,
        tuned: dict[str, Any] | None = None,
        schedules: dict[str, Any] | None = None,
    ) -> CompiledGraph:
        """The graph compiled from its outlined module (kernels not yet
        scheduled, or some scheduled by the tuner: `tuned`, which the final
        IR lists, or by hand: `schedules`, which the JIT's compile for
        another target keeps)."""
        from molten.pipeline import run_pipeline

        module = run_pipeline(outlined, self._pipeline(SCHEDULED_PIPELINE))
        if tuned:
            module.attributes["molten.tuned"] = DictionaryAttr(tuned)
        return self._packaged(graph, module, schedules)

    def _packaged(
        self, graph: Any, module: ModuleOp, schedules: dict[str, Any] | None = None
    ) -> CompiledGraph:
        """The compiled graph of its module at the cuda level."""
        from molten.dialects import cuda
        from molten.targets.cuda import print_cuda

        source_module = graph.to_module()
        signature = _signature(source_module)
        value_ops = {
            result.name_hint: op.name
            for op in source_module.walk()
            for result in op.results
            if result.name_hint
        }
        unit = print_cuda(module)
        (launcher,) = (op for op in module.ops if isinstance(op, cuda.HostFuncOp))
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
                scalar_variant=launch.fallback.string_value()
                if launch.fallback
                else None,
            )
            for launch in launches
        )
        return CompiledGraph(
            graph.name,
            unit.source,
            unit.header,
            infos,
            module,
            *signature,
            host_program(launcher, unit.kernel_names),
            unit.origins,
            value_ops,
            arch=self.arch,
            retarget=None if self.pinned else self._retarget(graph, schedules),
            dims=launcher.dim_names(),
            updated=launcher.updated_inputs(),
            target=self.target,
        )

    def _retarget(
        self, graph: Any, schedules: dict[str, Any] | None = None
    ) -> Retarget:
        return Retarget(self, graph, schedules)

    def save(self, compiled: CompiledGraph, directory: str | Path) -> list[Path]:
        """Writes `<graph>.cu`, `<graph>.h` and the final IR, `<graph>.final.mlir`,
        into `directory`."""
        if isinstance(compiled, SizedPerCall):
            raise NotImplementedError(
                f"graph '{compiled.name}' has named dimensions "
                f"({', '.join(compiled.dims)}) and a kernel that takes static sizes "
                "(a .cu takes them at run time for row and pointwise kernels "
                "only so far): save compiled.specialize("
                + ", ".join(f"{d}=..." for d in compiled.dims)
                + ")"
            )
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        stem = file_stem(compiled.name)
        header_name = f"{stem}.h"
        files = {
            out / f"{stem}.cu": f'#include "{header_name}"\n\n{compiled.source}',
            out / header_name: compiled.header,
            out / f"{stem}.final.mlir": compiled.ir + "\n",
        }
        for path, text in files.items():
            path.write_text(text)
        return list(files)


@dataclass(frozen=True)
class Retarget:
    """The graph compiled again for another target (the device's, at JIT
    time: `CompiledGraph.jit_target`) with the compiler's other options and
    the hand schedules it was given."""

    compiler: ZeroCompiler
    graph: Any
    schedules: dict[str, Any] | None = None

    def __call__(self, target: Any) -> CompiledGraph:
        given = self.compiler
        compiler = ZeroCompiler(
            autotune=given.autotune,
            progress=given.progress,
            prologue=given.prologue,
            target=target.with_sm_count(given.sm_count),
            **given.options,
        )
        return compiler.compile(self.graph, self.schedules)


def _give_schedules(outlined: ModuleOp, schedules: dict[str, Any]) -> None:
    """Sets the given schedules on the outlined kernels they name."""
    from molten.dialects import kernel

    kernels = {
        op.sym_name.data: op for op in outlined.walk() if isinstance(op, kernel.FuncOp)
    }
    for name, schedule in schedules.items():
        if name not in kernels:
            raise MoltenError(
                f"compile: no kernel @{name} to schedule; the graph's kernels are "
                f"{', '.join('@' + k for k in kernels) or 'none'}"
            )
        if not isinstance(schedule, kernel.ScheduleAttr):
            raise MoltenError(
                f"compile: the schedule of @{name} is a {type(schedule).__name__}, "
                "not a #kernel.schedule (molten.dialects.kernel.ScheduleAttr)"
            )
        kernels[name].schedule = schedule


def _signature(
    module: ModuleOp,
) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
    """The graph's inputs and outputs (names as the graph gave them)."""
    # The first copy of a graph split by size class: all share its signature.
    graph = next(op for op in module.ops if isinstance(op, func.FuncOp))
    args = graph.body.block.args
    inputs = tuple(
        _spec(input_name(graph, i) or f"in{i}", a.type) for i, a in enumerate(args)
    )
    returned = graph.body.block.last_op
    assert isinstance(returned, func.ReturnOp)
    # An output that updates an input in place is that input's memory.
    updates = graph_updates(graph)
    outputs = tuple(
        _spec(output_name(graph, i) or value.name_hint or f"out{i}", value.type)
        for i, value in enumerate(returned.arguments)
        if i not in updates
    )
    return inputs, outputs


def _spec(name: str, tensor_type: Any) -> TensorSpec:
    from molten.dialects.molten import dims_of

    assert isinstance(tensor_type, TensorType)
    return TensorSpec(name, dims_of(tensor_type), dtype_name(tensor_type.element_type))
