"""A compiled graph whose launcher takes sizes: one compile, any T.

A graph with named dimensions (`TensorShape(["T", 3584])`) compiles to
kernels and a launcher that take the sizes at run time. NVRTC compiles it
once; each call binds the names from its arrays' shapes ("input 'x' and
input 'gate' disagree on T: 17 vs 16" where they differ) and runs the
`Executable` of those sizes: the same kernels, with the buffers' sizes,
the grids and the sizes' own parameter slots worked out once per set of
sizes and kept (the most recently used `MAX_SIZES` of them).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from operator import attrgetter
from typing import Any

from molten.dims import sizes_of
from molten.runtime.device import runtime_device
from molten.runtime.executable import Executable
from molten.runtime.loaded_kernels import LoadedKernels
from molten.runtime.program import sized_program
from molten.runtime.torch_path import SLOW

_shape = attrgetter("shape")  # an array's shape, without a Python frame

MAX_SIZES = 256
"""How many sets of sizes a SizedExecutable keeps prepared."""


class SizedExecutable:
    """`compiled` (a launcher taking the sizes `compiled.dims`) on device
    `device_id`: call it as an `Executable`, with arrays of any sizes."""

    def __init__(self, compiled: Any, device_id: int):
        self.compiled = compiled
        self.name = compiled.name
        self.dims: tuple[str, ...] = compiled.dims
        self.inputs = compiled.inputs
        self.outputs = compiled.outputs
        self.device_id = device_id
        device = runtime_device(device_id)
        device.make_current()
        self.loaded = LoadedKernels(compiled, device)
        self._sized: OrderedDict[tuple[int, ...], Executable] = OrderedDict()
        self._by_shapes: dict[tuple, Executable] = {}
        """The executable of each tuple of input shapes seen (a call's
        lookup: one dict access, the names bound once)."""
        self._named = [(f"input '{spec.name}'", spec.shape) for spec in self.inputs]
        self._torch_call = self._call_by_shapes
        """As `Executable._torch_call` (a bound method made once: reading
        it makes none)."""

    def at(self, **sizes: int) -> Executable:
        """The executable of these sizes (every name given), prepared once."""
        key = tuple(sizes[d] for d in self.dims)
        executable = self._sized.get(key)
        if executable is not None:
            self._sized.move_to_end(key)
            return executable
        compiled = self.compiled
        values = [0] * (len(self.inputs) + len(self.outputs)) + list(key)
        concrete = replace(
            compiled,
            inputs=tuple(spec.sized(sizes) for spec in self.inputs),
            outputs=tuple(spec.sized(sizes) for spec in self.outputs),
            program=sized_program(compiled.program, values),
            dims=(),
        )
        executable = Executable(concrete, self.device_id, self.loaded, key)
        if len(self._sized) >= MAX_SIZES:
            self._sized.popitem(last=False)
            self._by_shapes.clear()
        self._sized[key] = executable
        return executable

    def for_inputs(self, inputs: Sequence[Any]) -> Executable:
        """The executable of the sizes `inputs` give (an InputError naming the
        dimension where they disagree or an array is not one)."""
        try:
            return self._by_shapes[tuple(map(_shape, inputs))]
        except (AttributeError, KeyError, TypeError):
            pass
        sizes = sizes_of(self.name, self._named, inputs)
        executable = self.at(**sizes)
        self._by_shapes[tuple(tuple(a.shape) for a in inputs)] = executable
        return executable

    def __call__(self, *inputs: Any, out: Any = None, stream: Any = None) -> Any:
        """Runs the graph at the sizes of `inputs`: see `Executable.__call__`."""
        if out is None and stream is None:
            result = self._torch_call(inputs)
            if result is not SLOW:
                return result
        return self.for_inputs(inputs)(*inputs, out=out, stream=stream)

    def _call_by_shapes(self, inputs: tuple[Any, ...]) -> Any:
        """The common call (torch tensors, new outputs) by the function
        written for the executable of these shapes, where a call of them
        made it; else SLOW. The shapes found it: it checks all but them."""
        try:
            call = self._by_shapes[tuple(map(_shape, inputs))]._torch_call_of_shapes
        except (AttributeError, KeyError, TypeError):
            return SLOW
        return SLOW if call is None else call(inputs)

    def cuda_graph(self, *inputs: Any, out: Any = None, stream: Any = None) -> Any:
        """`Executable.cuda_graph` at the sizes of `inputs`."""
        return self.for_inputs(inputs).cuda_graph(*inputs, out=out, stream=stream)

    def graphed(self, max_graphs: int = 8) -> Any:
        """`Executable.graphed`, a capture per set of sizes and addresses."""
        from molten.runtime.cuda_graph import GraphedCall

        return GraphedCall(self, max_graphs)

    def __repr__(self) -> str:
        return (
            f"SizedExecutable('{self.name}', dims {self.dims}, "
            f"{len(self._sized)} sizes prepared)"
        )
