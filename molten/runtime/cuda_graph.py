"""A compiled graph's launches captured once as a CUDA graph, and replayed.

A call of an `Executable` costs a driver launch per kernel (about 4 us of
host time each on an H100 host): a decoder layer's twelve kernels at one
token cost the host 95-138 us a call, most of the GPU's 180 us. Captured,
the same launches (with their buffers, zeroing and copies) replay with one
`cuGraphLaunch`, 4-6 us.

The capture is taken on a stream of its own, after one ordinary run on
the caller's stream (which loads the kernels and sizes what is sized
lazily). A replay reads the arrays the graph was captured with and writes
the same outputs, as torch's CUDA graphs do: to run it on new values,
write them into those inputs first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from molten.runtime.arrays import framework_of_inputs
from molten.runtime.device import _driver, check


class CudaGraph:
    """The launches of `executable` on fixed arrays, as an instantiated CUDA
    graph (see the module docstring). `replay()` runs it and returns the
    outputs, as the call would; `outputs` holds them."""

    def __init__(
        self,
        executable: Any,
        slots: list[int],
        handle: int,
        inputs: Sequence[Any],
        outputs: Any,
    ):
        """`outputs` is what a call returns: one array, or a tuple (or the
        caller's `out=`)."""
        self.executable = executable
        self.inputs = tuple(inputs)
        """Kept alive: the graph reads their memory."""
        self.outputs = outputs
        self._framework = framework_of_inputs(self.inputs)
        self._exec: Any = None
        self._graph: Any = None
        executable.run(list(slots), handle)
        driver = _driver()
        capture = check(
            driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING),
            "creating a stream to capture on",
        )
        try:
            self._graph = _captured(executable, slots, capture)
            self._exec = check(
                driver.cuGraphInstantiate(self._graph, 0),
                f"instantiating the CUDA graph of '{executable.name}'",
            )
            check(driver.cuGraphUpload(self._exec, handle), "uploading a CUDA graph")
        finally:
            check(driver.cuStreamDestroy(capture), "destroying the capture stream")

    def replay(self, stream: Any = None) -> Any:
        """Runs the captured launches on `stream` (default: as a call picks
        it: the current stream of the inputs' framework, else the device's
        default) and returns the outputs."""
        handle = self.executable.call_stream(stream, self._framework)
        check(_driver().cuGraphLaunch(self._exec, handle), "replaying a CUDA graph")
        return self.outputs

    __call__ = replay

    def __del__(self) -> None:
        driver = _driver()
        if self._exec is not None:
            driver.cuGraphExecDestroy(self._exec)
        if self._graph is not None:
            driver.cuGraphDestroy(self._graph)

    def __repr__(self) -> str:
        return (
            f"CudaGraph('{self.executable.name}', "
            f"{len(self.executable.compiled.kernels)} kernels)"
        )


def _captured(executable: Any, slots: list[int], capture: Any) -> Any:
    """The CUDA graph of `executable`'s steps on `slots`, captured on stream
    `capture`."""
    driver = _driver()
    mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
    check(driver.cuStreamBeginCapture(capture, mode), "beginning a capture")
    try:
        executable.run(list(slots), int(capture), capturing=True)
    except BaseException:
        _, graph = driver.cuStreamEndCapture(capture)
        if graph is not None and int(graph):
            driver.cuGraphDestroy(graph)
        raise
    return check(driver.cuStreamEndCapture(capture), "ending a capture")


class GraphedCall:
    """A compiled graph called through CUDA graphs, captured once per set of
    input addresses: the first call with arrays at new addresses is checked
    and captured (running once), every later call with arrays at those
    addresses is checked and replayed with one driver call. As with torch's
    CUDA graphs ("reduce-overhead"), each capture owns its outputs: a call
    returns the same arrays as the last call with those inputs, overwritten.
    At most `max_graphs` captures are kept (the least recently used is
    dropped with its memory)."""

    def __init__(self, executable: Any, max_graphs: int = 8):
        if max_graphs < 1:
            raise ValueError(f"max_graphs must be at least 1, got {max_graphs}")
        self.executable = executable
        self.max_graphs = max_graphs
        self._graphs: dict[tuple, CudaGraph] = {}

    def __call__(self, *inputs: Any, stream: Any = None) -> Any:
        executable = self.executable.for_inputs(inputs)
        slots, handle, _ = executable.bind(inputs, None, stream, allocate=False)
        # The executable (of the inputs' sizes, where the graph takes sizes)
        # is part of the key: arrays at the same addresses may differ in size.
        key = (executable, handle, *slots[: len(inputs)])
        graph = self._graphs.pop(key, None)
        if graph is None:
            graph = executable.cuda_graph(*inputs, stream=stream)
            if len(self._graphs) >= self.max_graphs:
                self._graphs.pop(next(iter(self._graphs)))
        else:
            graph.replay(stream=handle)
        self._graphs[key] = graph  # the most recently used last
        return graph.outputs

    def __len__(self) -> int:
        """How many captures are kept."""
        return len(self._graphs)
