"""A compiled graph, loaded on one GPU and callable on device arrays.

`Executable(compiled, device_id)` JIT-compiles `compiled.source` with NVRTC
for the device's arch (cached on disk), loads the cubin, and prepares each
launch once: the kernel's function handle, a parameter block whose
pointer slots are overwritten in place on every call, and the driver
call's arguments (`launch.KernelLaunch`), so a call costs the input
checks, the output allocations and one `cuLaunchKernelEx` per kernel
(cuda.core's own `launch` packs its arguments anew each time, and
cuda.bindings converts each argument of a call).
"""

from __future__ import annotations

import ctypes
import operator
import struct
import sys
from collections import OrderedDict
from collections.abc import Sequence
from math import gcd
from typing import Any

from molten.dialects.cuda import VECTOR_BYTES
from molten.errors import InputError, LaunchError
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
    native_arch,
    runtime_device,
    stream_handle,
)
from molten.runtime.launch import (
    KernelLaunch,
    failed,
    graph_launch,
    kernel_launch,
)
from molten.runtime.nvrtc import SourceMap, compile_cubin
from molten.runtime.program import ITEMSIZES, TensorSpec
from molten.runtime.torch_path import SLOW, TorchPath

AUTO_GRAPHS = 4
"""How many sets of `out=` and input addresses an Executable keeps captured
as CUDA graphs (`Executable.auto_graphs`; 0 turns the capture off)."""
AUTO_SEEN = 64
"""How many sets of addresses it remembers having seen once."""


class _PreparedLaunch:
    """One kernel launch with its parameter block built once, and the scalar
    variant's function for calls whose pointers are too misaligned for the
    kernel's vector accesses. Calling it writes a call's pointers into the
    block and launches: the per-call work is those writes and one driver
    call (`launch.KernelLaunch`: ctypes, its arguments made here)."""

    def __init__(
        self,
        function: Any,
        fallback: Any,
        step: steps.Launch,
        device,
        map_slots: set[int] = frozenset(),  # type: ignore[assignment]
        slot_count: int | None = None,
    ):
        self.maps = [i for i, slot in enumerate(step.args) if slot in map_slots]
        """The positions of the tensor maps among the arguments."""
        self.fallback = fallback
        self.step = step
        self.device = device
        # One C call gathers the arguments' addresses from the slots and one
        # writes them into the parameter block (a Python loop costs 1 us);
        # itemgetter of one item returns it bare, so one is gathered twice.
        # Where the arguments are the slots, all and in order (a one-kernel
        # graph's inputs and outputs), the slots are the values as they are.
        padded = step.args * 2 if len(step.args) == 1 else step.args
        whole = len(padded) == slot_count and padded == tuple(range(len(padded)))
        self.gather = (
            None
            if whole
            else operator.itemgetter(*padded)
            if padded
            else (lambda _: ())
        )
        self.pack = struct.Struct(f"={len(padded)}Q").pack_into
        self.aligned = step.aligned
        self._aligned_of: Any = (
            None
            if not step.aligned
            else True
            if set(step.aligned) == set(range(len(step.args)))
            else operator.itemgetter(*(step.aligned * 2)[: max(2, len(step.aligned))])
        )
        """How a call finds the values that must be vector-aligned: None
        (none), True (all of them), or an itemgetter of at least two."""
        self._fallback_grid = step.fallback_grid or (
            step.grid if step.cooperative is None else None
        )
        driver = _driver()
        # cuLaunchCooperativeKernel takes no `extra` argument after the params.
        self.start, self.extra = driver.cuLaunchKernel, (0,)
        grid = step.grid
        if step.cooperative is not None:
            grid = _cooperative_grid(function, step, device)
            self.start, self.extra = driver.cuLaunchCooperativeKernel, ()
        self.grid = grid
        self.dimensions = (*grid, *step.block, step.shared_bytes)
        """The launch's grid, block and dynamic shared bytes, as the driver
        takes them."""
        # Above 48 KiB a kernel must opt in to its dynamic shared memory.
        attributes = driver.CUfunction_attribute
        attribute = attributes.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        for f, name, shared in (
            (function, step.kernel, step.shared_bytes),
            (fallback, step.fallback, step.fallback_shared_bytes),
        ):
            if f is not None and shared:
                check(
                    driver.cuFuncSetAttribute(f, attribute, shared),
                    f"giving {name} {shared} bytes of shared memory",
                )
        self.handle = int(function)
        self.what = f"launching {step.kernel}"

        # cuLaunchKernel takes an array of pointers to the parameter values;
        # both arrays live as long as this object, the values change per call.
        count = max(len(padded), 1)
        self.values = (ctypes.c_uint64 * count)()
        base = ctypes.addressof(self.values)
        self.pointers = (ctypes.c_uint64 * count)(*(base + 8 * i for i in range(count)))
        self.pointers_address = ctypes.addressof(self.pointers)
        self.launch = kernel_launch(
            self.handle,
            grid,
            step.block,
            step.shared_bytes,
            self.pointers_address,
            step.cooperative is not None,
        )
        """The launch through ctypes, or None where the driver's function
        cannot be had: then through cuda.bindings (`start`)."""
        self._fallback_launch: KernelLaunch | None = None

    def __call__(self, slots: list[int], stream: int) -> None:
        """Launches on `stream` with the buffers in `slots`."""
        gather = self.gather
        values = slots if gather is None else gather(slots)
        self.pack(self.values, 0, *values)
        if self.maps:
            for i in self.maps:  # passed by value: the map's own bytes
                self.pointers[i] = values[i]
        aligned = self._aligned_of
        # All aligned to the vector width iff their gcd is: one C call.
        if (
            aligned is not None
            and gcd(*(values if aligned is True else aligned(values))) % VECTOR_BYTES
        ):
            self._launch_fallback(stream)
            return
        launch = self.launch
        if launch is not None:
            if stream != launch.stream:
                launch.use_stream(stream)
            status = launch.function(*launch.arguments)
            if status:  # CUDA_SUCCESS is 0
                failed(status, self.what)
            return
        result = self.start(
            self.handle, *self.dimensions, stream, self.pointers_address, *self.extra
        )
        if result[0]:  # a CUresult is an int, CUDA_SUCCESS is 0
            check(result, self.what)

    def inline(
        self, index: int, slot_values: Sequence[str]
    ) -> tuple[list[str], dict[str, Any]]:
        """This launch as Python source for a call function (see
        `TorchPath.call_function`): the statements of `__call__` on slots
        whose values are the expressions `slot_values` and the handle
        `stream`, and the globals they read (suffixed with `index`, one
        launch's apart from another's). Only for a launch through ctypes
        that passes no tensor map (`inlinable`)."""
        assert self.inlinable
        padded = self.step.args * 2 if len(self.step.args) == 1 else self.step.args
        values = [slot_values[slot] for slot in padded]
        lines = [f"pack{index}(values{index}, 0, {', '.join(values)})"]
        aligned = self.step.aligned
        launch = [
            f"if stream != config{index}.stream:",
            f"    config{index}.use_stream(stream)",
            f"status = start{index}(*arguments{index})",
            "if status:",
            f"    failed(status, what{index})",
        ]
        if aligned:  # all aligned to the vector width iff their gcd is
            checked = ", ".join(values[i] for i in sorted(set(aligned)))
            lines += [
                f"if gcd({checked}) % {VECTOR_BYTES}:",
                f"    fallback{index}(stream)",
                "else:",
                *(f"    {line}" for line in launch),
            ]
        else:
            lines += launch
        names = {
            f"pack{index}": self.pack,
            f"values{index}": self.values,
            f"config{index}": self.launch,
            f"start{index}": self.launch.function,
            f"arguments{index}": self.launch.arguments,
            f"what{index}": self.what,
            f"fallback{index}": self._launch_fallback,
            "gcd": gcd,
            "failed": failed,
        }
        return lines, names

    @property
    def inlinable(self) -> bool:
        """Whether `inline` writes this launch: through ctypes, no maps."""
        return self.launch is not None and not self.maps

    def _launch_fallback(self, stream: int) -> None:
        step = self.step
        what = f"launching {step.fallback}"
        block = step.fallback_block or step.block
        if self.launch is not None:
            launch = self._fallback_launch
            if launch is None:
                launch = self._fallback_launch = kernel_launch(
                    int(self.fallback),
                    self.fallback_grid,
                    block,
                    step.fallback_shared_bytes,
                    self.pointers_address,
                    step.cooperative is not None,
                )
            if launch is not None:
                status = launch.start(stream)
                if status:
                    failed(status, what)
                return
        check(
            self.start(
                int(self.fallback),
                *self.fallback_grid,
                *block,
                step.fallback_shared_bytes,
                stream,
                self.pointers_address,
                *self.extra,
            ),
            what,
        )

    @property
    def fallback_grid(self) -> tuple[int, int, int]:
        """The scalar variant's grid (sized when first needed: its own
        registers decide how many of its blocks are resident)."""
        if self._fallback_grid is None:
            self._fallback_grid = _cooperative_grid(
                self.fallback, self.step, self.device
            )
        return self._fallback_grid


class LoadedKernels:
    """A compiled graph's kernels, compiled by NVRTC for a device and loaded:
    each kernel's function handle by its C++ name."""

    def __init__(self, compiled: Any, device: Any):
        launches = [s for s in compiled.program if isinstance(s, steps.Launch)]
        fused_ops = {}
        for s, k in zip(launches, compiled.kernels, strict=True):
            fused_ops[s.kernel] = k.fused_ops
            if s.fallback:
                fused_ops[s.fallback] = k.fused_ops
        self.source_map = SourceMap(
            compiled.name, fused_ops, compiled.origins, compiled.value_ops
        )
        self.functions = self._load(compiled, device, set(fused_ops))

    def _load(self, compiled: Any, device: Any, names: set[str]) -> dict[str, Any]:
        from cuda.core import ObjectCode

        arch = target_arch(compiled.arch, device.arch)
        driver = _driver()
        for refresh in (False, True):
            cubin = compile_cubin(
                compiled.source, arch, self.source_map, refresh=refresh
            )
            try:
                module = ObjectCode.from_cubin(cubin)
                kernels = {name: module.get_kernel(name) for name in sorted(names)}
            except Exception:
                if refresh:
                    raise
                continue  # a cached cubin the driver refuses: rebuild it
            self._module = module  # keeps the kernels loaded
            return {
                name: check(
                    driver.cuKernelGetFunction(kernel.handle), f"loading {name}"
                )
                for name, kernel in kernels.items()
            }
        raise AssertionError("unreachable")


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
            _PreparedLaunch(
                functions[s.kernel],
                functions.get(s.fallback),
                s,
                self.device,
                maps,
                len(self._template),
            )
            if isinstance(s, steps.Launch)
            else _PreparedTensorMap(s)
            if isinstance(s, steps.TensorMap)
            else s
            for s in compiled.program
        ]
        self._launches_only = all(isinstance(s, _PreparedLaunch) for s in self._steps)
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
        one output is returned as itself, several as a tuple."""
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
                if isinstance(step, _PreparedLaunch):
                    step(slots, handle)
                elif isinstance(step, _PreparedTensorMap):
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


class _PreparedTensorMap:
    """A launcher's tensor map, encoded on the host for the matrix at a device
    pointer (again only when the pointer changes); its slot holds the
    address of the map's 128 bytes, which a launch passes by value."""

    def __init__(self, step: steps.TensorMap):
        self.step = step
        self._source: int | None = None
        self._map: Any = None
        driver = _driver()
        types = driver.CUtensorMapDataType
        self._type = (
            types.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
            if step.dtype == "bfloat16"
            else types.CU_TENSOR_MAP_DATA_TYPE_FLOAT16
        )
        self._zeros = driver.CUtensorMap()

    def encode(self, source: int) -> int:
        """The address of the map of the matrix at `source` (zeros where the
        pointer is not 16-byte aligned: the launch then takes the variant for
        misaligned pointers, which does not read it)."""
        if source == self._source:
            return int(self._map.getPtr())
        if source % 16:
            self._source, self._map = source, self._zeros
            return int(self._map.getPtr())
        driver = _driver()
        (rows, cols), (box_rows, box_cols) = self.step.shape, self.step.box
        itemsize = ITEMSIZES[self.step.dtype]
        self._map = check(
            driver.cuTensorMapEncodeTiled(
                self._type,
                2,
                source,
                [driver.cuuint64_t(cols), driver.cuuint64_t(rows)],
                [driver.cuuint64_t(cols * itemsize)],
                [driver.cuuint32_t(box_cols), driver.cuuint32_t(box_rows)],
                [driver.cuuint32_t(1), driver.cuuint32_t(1)],
                driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
                driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            ),
            "encoding a TMA tensor map",
        )
        self._source = source
        return int(self._map.getPtr())


def _returned(out: Any, results: list[Any]) -> Any:
    """What a call returns: `out` where given, else its one new output or a
    tuple of them."""
    if out is not None:
        return out
    return results[0] if len(results) == 1 else tuple(results)


def target_arch(compiled_for: str, device_arch: str) -> str:
    """The arch NVRTC compiles a graph for: the device's, unless the graph was
    compiled for that device's arch-specific target (sm_90a on an sm_90
    device: wgmma), which runs there only."""
    if not compiled_for.endswith("a"):
        return device_arch
    if compiled_for[:-1] != device_arch:
        raise LaunchError(
            f"this graph was compiled for {compiled_for}, which runs on "
            f"{compiled_for[:-1]} devices only, not on this {device_arch} device; "
            f"compile it with ZeroCompiler(arch={native_arch(device_arch)!r})"
        )
    return compiled_for


def _cooperative_grid(
    function: Any, step: steps.Launch, device: Any
) -> tuple[int, int, int]:
    """The grid of a cooperative launch: as many whole groups of
    `step.cooperative` blocks as the device holds at once, at most the
    step's grid; a LaunchError when it holds not even one group."""
    driver = _driver()
    block = step.block[0] * step.block[1] * step.block[2]
    per_sm = check(
        driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(function, block, 0),
        f"sizing {step.kernel}",
    )
    sms = device.device.properties.multiprocessor_count
    group = step.cooperative
    groups = min(sms * per_sm // group, step.grid[0] // group)
    if groups < 1:
        raise LaunchError(
            f"kernel {step.kernel} needs {group} blocks of {block} threads resident "
            f"at once, and this device holds {sms * per_sm} ({per_sm} on each of "
            f"its {sms} SMs); compile the graph for this device "
            f"(ZeroCompiler(sm_count={sms}))"
        )
    return (groups * group, 1, 1)


def _overlap(
    a: ArrayView, a_spec: TensorSpec, b: ArrayView, b_spec: TensorSpec
) -> bool:
    return a.ptr < b.ptr + b_spec.nbytes and b.ptr < a.ptr + a_spec.nbytes
