"""The driver calls a call makes every time (a kernel launch, a CUDA
graph's launch), through ctypes.

cuda.bindings converts every argument of a call in Python: its
`cuLaunchKernel` takes eleven, which costs 1.8 times the host instructions
of a ctypes call of `cuLaunchKernelEx`, whose four arguments (the launch
configuration, the function, the parameter block, no extras) are made
once, as ctypes objects, when the launch is prepared: a launch then writes
its stream into the configuration (when it changed) and calls the driver.
(ctypes' own conversions cost more than cuda.bindings': `cuLaunchKernel`'s
eleven arguments through ctypes cost 1.2 to 2.3 times cuda.bindings' call.
Counted with callgrind on a stand-in driver, tests/data/fake_libcuda.c.)

The functions are the very ones cuda.bindings calls: asked of the driver it
loaded (`cuGetProcAddress`) for the same CUDA versions and with the same
default-stream mode (`CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM`), so no
library is looked for here. Where the driver has no such function, or
cannot be asked, `driver_function` answers None and the callers go through
cuda.bindings as before. A failed call raises what `device.check` raises
for it (`failed`).
"""

from __future__ import annotations

import ctypes
import os
from typing import Any, NoReturn

from molten.errors import LaunchError
from molten.runtime.device import _driver, check

COOPERATIVE = 2
"""CU_LAUNCH_ATTRIBUTE_COOPERATIVE: a launch with the attribute set is a
cooperative launch (`cuLaunchCooperativeKernel`'s usage and semantics)."""

_uint = ctypes.c_uint
_pointer = ctypes.c_void_p


class LaunchAttribute(ctypes.Structure):
    """CUlaunchAttribute (cuda.h): the attribute's id, padded to 8 bytes, and
    a 64-byte union of values (an int for COOPERATIVE)."""

    _fields_ = [
        ("id", ctypes.c_int),
        ("pad", ctypes.c_int),
        ("value", ctypes.c_int),
        ("value_pad", ctypes.c_int),
        ("rest", ctypes.c_uint64 * 7),  # the union holds 64-bit fields too
    ]


class LaunchConfig(ctypes.Structure):
    """CUlaunchConfig (cuda.h): grid, block, dynamic shared bytes, stream and
    the attributes."""

    _fields_ = [
        ("gridDimX", _uint),
        ("gridDimY", _uint),
        ("gridDimZ", _uint),
        ("blockDimX", _uint),
        ("blockDimY", _uint),
        ("blockDimZ", _uint),
        ("sharedMemBytes", _uint),
        ("hStream", _pointer),
        ("attrs", ctypes.POINTER(LaunchAttribute)),
        ("numAttrs", _uint),
    ]


_SIGNATURES: dict[str, tuple[int, tuple[Any, ...] | None]] = {
    # name: (the CUDA version cuda.bindings asks for, argtypes). A launch's
    # arguments are ctypes objects made once: no argtypes to convert them.
    "cuLaunchKernelEx": (11060, None),
    "cuGraphLaunch": (10000, (_pointer, _pointer)),
}
_functions: dict[str, Any] = {}

enabled = True
"""Whether the driver calls go through ctypes at all (False: through
cuda.bindings, as everywhere else; for comparing the two)."""


def driver_function(name: str) -> Any:
    """The driver's `name` (one of `_SIGNATURES`) as a ctypes function
    returning the CUresult as an int, found once; None where it cannot be
    had (the caller then calls cuda.bindings)."""
    if not enabled:
        return None
    if name not in _functions:
        _functions[name] = _resolve(name)
    return _functions[name]


def _resolve(name: str) -> Any:
    driver = _driver()
    version, argtypes = _SIGNATURES[name]
    flags = driver.CUdriverProcAddress_flags
    try:
        per_thread = bool(
            int(os.getenv("CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM", "0"))
        )
        mode = (
            flags.CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
            if per_thread
            else flags.CU_GET_PROC_ADDRESS_DEFAULT
        )
        status, address, found = driver.cuGetProcAddress(name.encode(), version, mode)
        address = int(address or 0)
    except Exception:  # an older driver or binding: cuda.bindings does it
        return None
    if status != driver.CUresult.CUDA_SUCCESS or not address or int(found) != 0:
        return None
    function = ctypes.CFUNCTYPE(ctypes.c_int)(address)  # releases the GIL
    if argtypes is not None:
        function.argtypes = argtypes
    return function


def failed(status: int, what: str) -> NoReturn:
    """Raises the LaunchError `device.check` raises for a call that returned
    `status` (a CUresult as an int): "<what> failed: <the driver's text>"."""
    driver = _driver()
    try:
        code = driver.CUresult(status)
    except ValueError:  # a code newer than the bindings
        raise LaunchError(f"{what} failed: CUresult {status}") from None
    check((code,), what)
    raise AssertionError(f"{what}: CUresult {status} is not an error")


class KernelLaunch:
    """One kernel's launch through `cuLaunchKernelEx`: its configuration
    (grid, block, shared bytes; cooperative or not) and arguments made once.
    `start(stream)` launches it on a stream handle and returns the CUresult
    (0 on success). Made by `kernel_launch`, which answers None where the
    driver's function cannot be had."""

    def __init__(
        self,
        function: Any,
        handle: int,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        shared_bytes: int,
        parameters: int,
        cooperative: bool,
    ):
        self.function = function
        self.config = config = LaunchConfig(*grid, *block, shared_bytes, None)
        if cooperative:
            self.attributes = (LaunchAttribute * 1)()
            self.attributes[0].id = COOPERATIVE
            self.attributes[0].value = 1
            config.attrs = self.attributes
            config.numAttrs = 1
        self.stream = 0
        """The stream handle in the configuration."""
        self.arguments = (
            _pointer(ctypes.addressof(config)),
            _pointer(handle),
            _pointer(parameters),
            _pointer(None),  # no extra options
        )

    def use_stream(self, stream: int) -> None:
        """Makes the next launches go to `stream` (a handle)."""
        self.config.hStream = stream
        self.stream = stream

    def start(self, stream: int) -> int:
        """Launches on `stream` (a handle); the CUresult as an int. (A
        caller on the hot path inlines this: `function(*arguments)` once
        `stream` is the configuration's.)"""
        if stream != self.stream:
            self.use_stream(stream)
        return self.function(*self.arguments)


def kernel_launch(
    handle: int,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_bytes: int,
    parameters: int,
    cooperative: bool,
) -> KernelLaunch | None:
    """The launch of the function `handle` (a CUfunction as an int) with the
    parameter block at address `parameters`, or None where the driver's
    `cuLaunchKernelEx` cannot be had."""
    function = driver_function("cuLaunchKernelEx")
    if function is None:
        return None
    return KernelLaunch(
        function, handle, grid, block, shared_bytes, parameters, cooperative
    )


def graph_launch(graph_exec: int, stream: int) -> int | None:
    """Launches the instantiated CUDA graph `graph_exec` on stream `stream`
    (handles): the CUresult as an int, or None where the driver's function
    cannot be had."""
    function = driver_function("cuGraphLaunch")
    if function is None:
        return None
    return function(graph_exec, stream)
