"""One GPU as the runtime uses it: cuda.core's `Device`, its memory pool,
streams, and the few driver calls cuda.core has no cheaper form of.

Streams are plain handles (ints) on the hot path. A caller's stream is
whatever they pass (`int`, cuda.core `Stream`, anything with
`__cuda_stream__`, torch's `cuda_stream` or CuPy's `ptr`), else the current
stream of the framework whose arrays they passed, else the device's default
stream. Frameworks are found by the module of their array type, never
imported.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import numpy as np

from molten.errors import LaunchError, RuntimeUnavailableError

_driver_module: Any = None
_SUCCESS: Any = None


def _driver() -> Any:
    global _driver_module, _SUCCESS
    if _driver_module is None:
        try:
            from cuda.bindings import driver
        except ImportError as error:
            raise RuntimeUnavailableError.no_cuda_python(error) from error
        _driver_module, _SUCCESS = driver, driver.CUresult.CUDA_SUCCESS
    return _driver_module


def check(result: Any, what: str) -> Any:
    """The values of a cuda.bindings call, or a LaunchError naming `what`."""
    driver = _driver()
    status, *values = result if isinstance(result, tuple) else (result,)
    if status != _SUCCESS:
        _, text = driver.cuGetErrorString(status)
        message = text.decode() if isinstance(text, bytes) else str(status)
        raise LaunchError(f"{what} failed: {message}")
    return values[0] if len(values) == 1 else values


def is_capturing(cu_stream: Any) -> bool:
    """Whether `cu_stream` is being captured into a CUDA graph."""
    driver = _driver()
    status = check(driver.cuStreamIsCapturing(cu_stream), "asking about a capture")
    return status != driver.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE


def current_device_id() -> int:
    """The CUDA device current on this thread (0 when none was chosen)."""
    try:
        from cuda.core import Device
    except ImportError as error:
        raise RuntimeUnavailableError.no_cuda_python(error) from error
    try:
        return int(Device().device_id)
    except Exception as error:
        raise RuntimeUnavailableError(f"no usable CUDA device: {error}") from error


class RuntimeDevice:
    """A device made current once, with its memory resource and streams."""

    def __init__(self, device_id: int):
        from cuda.core import Device

        try:
            self.device = Device(device_id)
            self.device.set_current()
        except Exception as error:
            raise RuntimeUnavailableError(
                f"cannot use CUDA device {device_id}: {error}"
            ) from error
        self.device_id = device_id
        major, minor = self.device.compute_capability
        self.arch = f"sm_{major}{minor}"
        self.memory = self.device.memory_resource
        self._graph_memory: Any = None
        self._streams: dict[int, Any] = {}

    def make_current(self) -> None:
        self.device.set_current()

    def stream(self, handle_or_stream: Any = None) -> Any:
        """The cuda.core `Stream` for a handle (cached: wrapping is not free)."""
        if handle_or_stream is None:
            return self.device.default_stream
        if not isinstance(handle_or_stream, int):
            return handle_or_stream
        stream = self._streams.get(handle_or_stream)
        if stream is None:
            from cuda.core import Stream

            stream = Stream.from_handle(handle_or_stream)
            self._streams[handle_or_stream] = stream
        return stream

    def allocate(self, nbytes: int, stream: Any) -> Any:
        """A cuda.core `Buffer`, allocated in order on `stream`."""
        return self.memory.allocate(max(nbytes, 1), stream=stream)

    def allocate_in_capture(self, nbytes: int, stream: Any) -> Any:
        """A buffer allocated in order on `stream` while it is being captured
        into a CUDA graph: a node of the graph, its memory the graph's."""
        if self._graph_memory is None:
            from cuda.core import GraphMemoryResource

            self._graph_memory = GraphMemoryResource(self.device_id)
        return self._graph_memory.allocate(max(nbytes, 1), stream=stream)

    def copy_from_host(self, target: int, host: np.ndarray) -> None:
        check(
            _driver().cuMemcpyHtoD(target, host.ctypes.data, host.nbytes),
            "copy to device",
        )

    def copy_to_host(self, host: np.ndarray, source: int) -> None:
        check(_driver().cuCtxSynchronize(), "waiting for the device")
        check(
            _driver().cuMemcpyDtoH(host.ctypes.data, source, host.nbytes),
            "copy to host",
        )


@functools.cache
def runtime_device(device_id: int | None = None) -> RuntimeDevice:
    return RuntimeDevice(current_device_id() if device_id is None else device_id)


def stream_handle(stream: Any) -> int:
    """The raw handle of a stream given in any of the usual forms."""
    if isinstance(stream, int):
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attribute in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attribute, None)
        if value is not None:
            return int(value)
    raise TypeError(
        f"stream= takes a CUDA stream (an int handle, a cuda.core Stream, a torch "
        f"or CuPy stream), not {type(stream).__name__}"
    )


def framework_of(array: Any) -> str | None:
    """The top-level module of an array's type ("torch", "cupy", "jaxlib"...)."""
    return type(array).__module__.partition(".")[0] or None


def current_stream(framework: str | None, device_id: int) -> int | None:
    """The current stream of `framework` on `device_id`, when it has one."""
    module = sys.modules.get(framework or "")
    if module is None:
        return None
    if framework == "torch":
        raw = getattr(module._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return int(raw(device_id))
        return int(module.cuda.current_stream(device_id).cuda_stream)
    if framework == "cupy":
        return int(module.cuda.get_current_stream().ptr)
    return None


def from_dlpack(framework: str | None, array: Any) -> Any:
    """`array` as the framework's own array type, without a copy (itself
    when the framework is unknown)."""
    if framework in ("jax", "jaxlib"):
        jax = sys.modules.get("jax")
        return array if jax is None else jax.dlpack.from_dlpack(array)
    module = sys.modules.get(framework or "")
    convert = getattr(module, "from_dlpack", None)
    return array if convert is None else convert(array)


_torch_devices: dict[int, Any] = {}


def empty_like_framework(framework: str | None, spec: Any, device_id: int) -> Any:
    """(array, pointer) of a new `spec`-shaped array from the framework's own
    allocator on `device_id`, or None where Molten allocates instead (no
    framework, JAX's immutable arrays, CuPy's missing bfloat16)."""
    module = sys.modules.get(framework or "")
    if module is None:
        return None
    if framework == "torch":
        device = _torch_devices.get(device_id)
        if device is None:
            device = _torch_devices[device_id] = module.device("cuda", device_id)
        array = module.empty(
            spec.shape, dtype=getattr(module, spec.dtype), device=device
        )
        return array, array.data_ptr()
    if framework == "cupy" and spec.dtype != "bfloat16":
        with module.cuda.Device(device_id):
            array = module.empty(spec.shape, dtype=spec.dtype)
        return array, array.data.ptr
    return None
