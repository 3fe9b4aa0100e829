"""A compiled graph, loaded on one GPU and callable on device arrays.

`Executable(compiled, device_id)` has the graph's kernels compiled with
NVRTC for the device's arch and loaded (`LoadedKernels`), and prepares each
launch once (`PreparedLaunch`), so a call costs the input checks, the
output allocations and one driver call per kernel. It binds a call's
arrays to the program's slots, picks the stream, runs the program's steps,
and captures calls into `out=` as CUDA graphs (`auto_graphs`).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from molten.errors import InputError
from molten.runtime import program as steps
from molten.runtime.arrays import (
    ArrayView,
    DeviceArray,
    _NotAnArray,
    framework_of_inputs,
    is_contiguous,
    view_of,
)
from molten.runtime.cuda_graph import CudaGraph, GraphedCall
from molten.runtime.device import (
    _driver,
    check,
    current_stream,
    empty_like_framework,
    from_dlpack,
    runtime_device,
    stream_handle,
)
from molten.runtime.launch import failed, graph_launch
from molten.runtime.loaded_kernels import LoadedKernels
from molten.runtime.prepared_launch import PreparedLaunch
from molten.runtime.program import ITEMSIZES, TensorSpec
from molten.runtime.tensor_maps import PreparedTensorMap
from molten.runtime.torch_path import SLOW, TorchPath

AUTO_GRAPHS = 4
"""How many sets of `out=` and input addresses an Executable keeps captured
as CUDA graphs (`Executable.auto_graphs`; 0 turns the capture off)."""
AUTO_SEEN = 64
"""How many sets of addresses it remembers having seen once."""


class Executable:
    """`compiled` on device `device_id`: call it with the graph's inputs.

    A graph whose launcher takes sizes (named dimensions) runs as one
    Executable per set of sizes (`SizedExecutable`), all sharing one
    compile and load (`loaded`); `sizes` are then their values, which a
    call passes in their slots."""

    def __init__(
        self,
        compiled: Any,
        device_id: int,
        loaded: LoadedKernels | None = None,
        sizes: Sequence[int] = (),
    ):
        self.compiled = compiled
        self.name = compiled.name
        self.inputs: tuple[TensorSpec, ...] = compiled.inputs
        self.outputs: tuple[TensorSpec, ...] = compiled.outputs
        self.device = runtime_device(device_id)
        self.device_id = device_id
        self.device.make_current()
        self.loaded = loaded or LoadedKernels(compiled, self.device)
        self.source_map = self.loaded.source_map
        functions = self.loaded.functions
        maps = {s.slot for s in compiled.program if isinstance(s, steps.TensorMap)}
        allocations = sum(isinstance(s, steps.Alloc) for s in compiled.program)
        self._template = [0] * (len(self.inputs) + len(self.outputs))
        self._template += sizes
        # Slots past the sizes: buffers and maps (those of variants not run
        # at these sizes are gone, their slots left unused).
        made = [
            s.slot
            for s in compiled.program
            if isinstance(s, steps.Alloc | steps.TensorMap)
        ]
        self._template += [0] * max(0, max(made, default=-1) + 1 - len(self._template))
        """A call's slots before its arrays: the sizes in theirs."""
        self._steps: list[Any] = [
            PreparedLaunch(
                functions[s.kernel],
                functions.get(s.fallback),
                s,
                self.device,
                maps,
                len(self._template),
            )
            if isinstance(s, steps.Launch)
            else PreparedTensorMap(s)
            if isinstance(s, steps.TensorMap)
            else s
            for s in compiled.program
        ]
        self._launches_only = all(isinstance(s, PreparedLaunch) for s in self._steps)
        """Whether a call is its launches alone (no buffers, maps or copies)."""
        self._has_buffers = allocations > 0
        self._cu_streams: dict[int, Any] = {}
        self._kept_slots = frozenset(
            s.slot for s in compiled.program if isinstance(s, steps.Zero) and s.restored
        )
        self._arena = steps.arena(compiled.program, self._kept_slots)
        """The buffers between kernels, in one allocation a call."""
        self._capture_arena = steps.arena(compiled.program)
        """The same with the kept buffers, as a capture makes them."""
        self._torch_path: TorchPath | None = None
        self._torch_call: Any = None
        """The call on torch tensors and new outputs, written for this
        executable (`TorchPath.call_function`), once torch is imported."""
        self._torch_call_of_shapes: Any = None
        """The same without the shapes' checks, for a `SizedExecutable`
        that finds this executable by the arrays' shapes (one of sizes)."""
        self._torch_call_into: Any = None
        """The call on torch tensors into `out=` tensors, written likewise
        (made with `_torch_call`)."""
        self._of_sizes = bool(sizes)
        self.auto_graphs = AUTO_GRAPHS
        """A call with `out=` whose arrays (and stream) were all seen at the
        same addresses by the call before is captured as a CUDA graph and
        replayed from then on: the same launches on the same memory, for one
        driver call (the most recently used `auto_graphs` kept)."""
        self._graphs: OrderedDict[tuple[int, ...], tuple[Any, int]] = OrderedDict()
        """(stream, arrays' addresses) -> (their CudaGraph, its CUgraphExec
        handle)."""
        self._seen: OrderedDict[tuple[int, ...], None] = OrderedDict()
        self._kept: dict[tuple[int, int], Any] = {}
        """(slot, stream) -> a buffer the kernels leave zeroed (counters),
        allocated and zeroed at its first call on the stream."""

    # -- calling -----------------------------------------------------------

    def __call__(self, *inputs: Any, out: Any = None, stream: Any = None) -> Any:
        """Runs the graph: `inputs` are device arrays (torch, CuPy, JAX, Numba,
        `DeviceArray`) of the graph's input shapes and dtypes, contiguous and
        on this executable's device. All kernels launch in order on `stream`
        (default: the current stream of the inputs' framework, else the
        device's default stream). Outputs are new arrays of the inputs'
        framework (`DeviceArray` when there is none), or the arrays in `out`;
        one output is returned as itself, several as a tuple. An input the
        graph updates in place (`molten.updates`: `g.index_copy_`) is
        written where it is, and is neither an output nor returned."""
        if stream is None and self._torch_call is not None:
            # The common calls (torch tensors, new outputs or out=): checked
            # and run by the functions written for them (`_make_torch_path`).
            result = (
                self._torch_call(inputs)
                if out is None
                else self._torch_call_into(inputs, out)
            )
            if result is not SLOW:
                return result
            slots, handle, results = self._bind_general(inputs, out, stream)
        else:
            slots, handle, results = self.bind(inputs, out, stream)
        if out is None or not self.auto_graphs:
            self.run(slots, handle)
            return _returned(out, results)
        self._run_captured(slots, handle)
        return out

    def _run_captured(self, slots: list[int], handle: int) -> None:
        """The call on `slots` (every array given) as a CUDA graph: replayed
        where one was captured at these addresses, captured (running it)
        where the addresses were seen before, else run as usual. Only the
        addresses and the stream decide, never the arrays' lifetimes: a
        replay does what a call at those addresses does."""
        key = (handle, *slots[: len(self.inputs) + len(self.outputs)])
        captured = self._graphs.get(key)
        if (captured is not None or key in self._seen) and self._capturing(
            handle
        ):  # within someone's capture: launch into it, as a call does
            self.run(slots, handle)
            return
        if captured is not None:
            self._graphs.move_to_end(key)
            graph, graph_exec = captured
            status = graph_launch(graph_exec, handle)
            if status is None:  # no ctypes function: cuda.bindings
                graph.replay(handle)
            elif status:
                failed(status, "replaying a CUDA graph")
            return
        if key not in self._seen:
            self._seen[key] = None
            if len(self._seen) > AUTO_SEEN:
                self._seen.popitem(last=False)
            self.run(slots, handle)
            return
        del self._seen[key]
        graph = CudaGraph(self, slots, handle, (), None)  # runs it
        self._graphs[key] = (graph, int(graph._exec))
        while len(self._graphs) > self.auto_graphs:
            self._graphs.popitem(last=False)

    def _capturing(self, handle: int) -> bool:
        """Whether the stream `handle` is being captured into a CUDA graph
        (`device.is_capturing` without its generic checks: half the cost)."""
        cu_stream = self._cu_streams.get(handle) or self._cu_stream(handle)
        status, capture = _driver().cuStreamIsCapturing(cu_stream)
        if status:
            check((status,), "asking about a capture")
        return capture != 0  # CU_STREAM_CAPTURE_STATUS_NONE

    def _cu_stream(self, handle: int) -> Any:
        """The driver's stream object of a stream handle (made once)."""
        cu_stream = self._cu_streams.get(handle)
        if cu_stream is None:
            cu_stream = self._cu_streams[handle] = _driver().CUstream(handle)
        return cu_stream

    def for_inputs(self, inputs: Sequence[Any]) -> Executable:
        """The executable that runs `inputs`: this one (a `SizedExecutable`
        picks the one of their sizes)."""
        return self

    def graphed(self, max_graphs: int = 8) -> Any:
        """This graph called through CUDA graphs, captured once per set of
        input addresses and replayed after (`molten.runtime.GraphedCall`:
        its outputs are reused, as torch's "reduce-overhead" does)."""
        return GraphedCall(self, max_graphs)

    def cuda_graph(self, *inputs: Any, out: Any = None, stream: Any = None) -> Any:
        """This graph's launches on these arrays, captured once as a CUDA graph
        (a `molten.runtime.CudaGraph`): `replay()` runs them all with one
        driver call, reading the same input arrays (write new values into
        them) and writing the same outputs (`out`, or new arrays made here).
        The arguments are checked as a call's are; the graph runs once here,
        on `stream`, before it is captured."""
        slots, handle, results = self.bind(inputs, out, stream)
        return CudaGraph(self, slots, handle, inputs, _returned(out, results))

    def bind(
        self, inputs: Sequence[Any], out: Any, stream: Any, allocate: bool = True
    ) -> tuple[list[int], int, list[Any]]:
        """(slots, stream handle, new outputs) of a call: the arrays checked,
        their addresses in the slots, the outputs made where `out` is None
        (unless not `allocate`: the inputs' checks alone)."""
        path = self._torch_path or self._make_torch_path()
        if path is not None and stream is None and inputs:
            slots = self._template.copy()
            prepared = path.arguments(inputs, out, slots, allocate)
            if prepared is not SLOW:
                handle, results = prepared
                return slots, handle, results
        return self._bind_general(inputs, out, stream, allocate)

    def _bind_general(
        self, inputs: Sequence[Any], out: Any, stream: Any, allocate: bool = True
    ) -> tuple[list[int], int, list[Any]]:
        """`bind` of arrays that the torch path does not take as they are:
        read through DLPack (or the CUDA array interface), which accepts them
        or names what is wrong."""
        if len(inputs) != len(self.inputs):
            raise InputError(
                f"graph '{self.name}' takes {len(self.inputs)} inputs "
                f"({', '.join(map(str, self.inputs))}), got {len(inputs)}"
            )
        framework = framework_of_inputs(inputs)
        handle = self.call_stream(stream, framework)
        slots = self._template.copy()
        views = []
        for i, (array, spec) in enumerate(zip(inputs, self.inputs, strict=True)):
            view = self._checked(array, spec, f"input {spec}", handle)
            if view.readonly and i in self.compiled.updated:
                raise InputError(
                    f"input {spec} is updated in place by the graph, and this array "
                    "is read-only"
                )
            slots[i] = view.ptr
            views.append((spec, view))
        native = framework if stream is None else None
        if out is None and not allocate:
            return slots, handle, []
        results = self._outputs(out, handle, slots, views, native)
        converted = [
            from_dlpack(framework, r) if isinstance(r, DeviceArray) else r
            for r in results
        ]
        return slots, handle, converted

    def _make_torch_path(self) -> TorchPath | None:
        """The call path for torch tensors, once torch is imported."""
        torch = sys.modules.get("torch")
        if torch is None:
            return None
        path = TorchPath(torch, self.inputs, self.outputs, self.device_id)
        if self.inputs:  # without arrays no framework is called: the general way
            body, names = self._call_body()
            name = repr(self.name)
            self._torch_call = path.call_function(body, names, name)
            if self._of_sizes:
                self._torch_call_of_shapes = path.call_function(
                    body, names, name, shapes_known=True
                )
            # Into out=: replayed as a CUDA graph where `_run_captured` has
            # one (`auto_graphs`), else as a call.
            arrays = len(self.inputs) + len(self.outputs)
            slots = ", ".join([f"p{i}" for i in range(arrays)])
            slots += "".join(f", {value!r}" for value in self._template[arrays:])
            into = [
                "if executable.auto_graphs:",
                f"    run_captured([{slots}], stream)",
                "else:",
                *(f"    {line}" for line in body),
            ]
            names = {**names, "executable": self, "run_captured": self._run_captured}
            self._torch_call_into = path.call_function(into, names, name, into=True)
        self._torch_path = path
        return path

    def _call_body(self) -> tuple[list[str], dict[str, Any]]:
        """What a call runs once its arrays are checked, as source for
        `TorchPath.call_function`: the launches themselves where the call
        is launches through ctypes alone (one kernel, as a rule), else
        `run` on the slots."""
        arrays = len(self.inputs) + len(self.outputs)
        values = [f"p{i}" for i in range(arrays)]
        values += [repr(value) for value in self._template[arrays:]]
        if self._launches_only and all(s.inlinable for s in self._steps):
            body: list[str] = []
            names: dict[str, Any] = {}
            for index, launch in enumerate(self._steps):
                lines, more = launch.inline(index, values)
                body += lines
                names |= more
            return body, names
        return [f"run([{', '.join(values)}], stream)"], {"run": self.run}

    def call_stream(self, stream: Any, framework: str | None) -> int:
        """The handle of the stream a call runs on: `stream`, else the current
        stream of the arrays' `framework` on this device, else the device's
        default stream."""
        if stream is not None:
            return stream_handle(stream)
        handle = current_stream(framework, self.device_id)
        if handle is not None:
            return handle
        return stream_handle(self.device.device.default_stream)

    def _outputs(
        self,
        out: Any,
        handle: int,
        slots: list[int],
        views: list[tuple[TensorSpec, ArrayView]],
        framework: str | None,
    ) -> list[Any]:
        """New outputs, or the checked `out=` arrays. With a framework's arrays
        on its current stream, new outputs come from that framework's own
        allocator (its memory pool, its accounting, no conversion); otherwise
        they are DeviceArrays, handed to the framework through DLPack."""
        first = len(self.inputs)
        if out is None:
            stream = None
            results = []
            for j, spec in enumerate(self.outputs):
                native = empty_like_framework(framework, spec, self.device_id)
                if native is not None:
                    array, slots[first + j] = native
                else:
                    stream = stream or self.device.stream(handle)
                    buffer = self.device.allocate(spec.nbytes, stream)
                    array = DeviceArray(buffer, spec.shape, spec.dtype, self.device_id)
                    slots[first + j] = array.ptr
                results.append(array)
            return results
        given = (
            list(out)
            if isinstance(out, Sequence) and not hasattr(out, "shape")
            else [out]
        )
        if len(given) != len(self.outputs):
            raise InputError(
                f"graph '{self.name}' has {len(self.outputs)} outputs "
                f"({', '.join(map(str, self.outputs))}); out= gave {len(given)}"
            )
        for j, (array, spec) in enumerate(zip(given, self.outputs, strict=True)):
            view = self._checked(array, spec, f"out= array for output {spec}", handle)
            if view.readonly:
                raise InputError(f"out= array for output {spec} is read-only")
            for other_spec, other in views:
                if _overlap(view, spec, other, other_spec):
                    raise InputError(
                        f"out= array for output {spec} overlaps input {other_spec}; "
                        "Molten kernels do not work in place"
                    )
            slots[first + j] = view.ptr
            views.append((spec, view))
        return []

    def _checked(
        self, array: Any, spec: TensorSpec, role: str, handle: int
    ) -> ArrayView:
        try:
            view = view_of(array, handle)
        except _NotAnArray as error:
            raise InputError(
                f"{role} is a {type(array).__name__}, not a device array ({error}); "
                "pass a torch, CuPy or JAX array on the GPU, or a molten DeviceArray "
                "(DeviceArray.from_numpy copies a host array over)"
            ) from None
        if view.device_id < 0:
            raise InputError(
                f"{role} is in host memory; Molten runs on device arrays "
                "(move it to the GPU, or use DeviceArray.from_numpy)"
            )
        if view.device_id != self.device_id:
            raise InputError(
                f"{role} is on CUDA device {view.device_id}; this executable runs on "
                f"device {self.device_id} (compiled.executable(device=...) picks one)"
            )
        if view.dtype != spec.dtype:
            raise InputError(
                f"{role} has dtype {view.dtype_text}; expected {spec.dtype}"
            )
        if view.shape != spec.shape:
            raise InputError(f"{role} has shape {view.shape}; expected {spec.shape}")
        if not is_contiguous(view.shape, view.strides):
            raise InputError(
                f"{role} is not contiguous (strides {view.strides} for shape "
                f"{view.shape}); pass a contiguous copy (e.g. .contiguous())"
            )
        alignment = ITEMSIZES[spec.dtype]
        if view.ptr % alignment:
            raise InputError(
                f"{role} starts at address {view.ptr:#x}, which is not aligned to "
                f"its {alignment}-byte elements"
            )
        return view

    @staticmethod
    def _zero(pointer: int, nbytes: int, cu_stream: Any) -> None:
        check(
            _driver().cuMemsetD8Async(pointer, 0, nbytes, cu_stream),
            "zeroing a buffer",
        )

    def run(self, slots: list[int], handle: int, capturing: bool = False) -> None:
        """The program's steps on stream `handle`. While the stream is being
        captured into a CUDA graph (ours, `capturing`, or anyone's), buffers
        come from the graph's memory, and those the kernels leave zeroed are
        made and zeroed within the capture like any other: one kept across
        calls would not be the graph's."""
        if self._launches_only:
            for launch in self._steps:
                launch(slots, handle)
            return
        driver = _driver()
        cu_stream = self._cu_stream(handle)
        kept_slots, layout = self._kept_slots, self._arena
        allocate = self.device.allocate
        if self._has_buffers and (capturing or self._capturing(handle)):
            kept_slots, layout = frozenset(), self._capture_arena
            allocate = self.device.allocate_in_capture
        stream = self.device.stream(handle) if self._has_buffers else None
        arena = allocate(layout.size, stream) if layout.size else None
        base = 0 if arena is None else int(arena.handle)
        try:
            for step in self._steps:
                if isinstance(step, PreparedLaunch):
                    step(slots, handle)
                elif isinstance(step, PreparedTensorMap):
                    slots[step.step.slot] = step.encode(slots[step.step.source])
                elif isinstance(step, steps.Alloc):
                    if step.slot not in kept_slots:
                        slots[step.slot] = base + layout.offsets[step.slot]
                        continue
                    kept = self._kept.get((step.slot, handle))
                    if kept is None:  # zeroed once, when made
                        kept = self.device.allocate(step.nbytes, stream)
                        self._zero(int(kept.handle), step.nbytes, cu_stream)
                        self._kept[step.slot, handle] = kept
                    slots[step.slot] = int(kept.handle)
                elif isinstance(step, steps.Copy):
                    check(
                        driver.cuMemcpyDtoDAsync(
                            slots[step.target],
                            slots[step.source],
                            step.nbytes,
                            cu_stream,
                        ),
                        "copying an output",
                    )
                elif isinstance(step, steps.Zero) and (
                    not step.restored or step.slot not in kept_slots
                ):
                    self._zero(slots[step.slot], step.nbytes, cu_stream)
        finally:  # after the launches in stream order, or left by an error
            if arena is not None:
                arena.close(stream)


def _returned(out: Any, results: list[Any]) -> Any:
    """What a call returns: `out` where given, else its one new output or a
    tuple of them."""
    if out is not None:
        return out
    return results[0] if len(results) == 1 else tuple(results)


def _overlap(
    a: ArrayView, a_spec: TensorSpec, b: ArrayView, b_spec: TensorSpec
) -> bool:
    """Whether the arrays `a` and `b` (of specs `a_spec`, `b_spec`) share
    any byte."""
    return a.ptr < b.ptr + b_spec.nbytes and b.ptr < a.ptr + a_spec.nbytes
