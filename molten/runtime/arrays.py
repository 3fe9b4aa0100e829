"""Device arrays: Molten's own, and a view of anyone else's.

`DeviceArray` is a contiguous array in device memory owned by a cuda.core
`Buffer`. It speaks DLPack (`__dlpack__`, built by `molten.runtime.dlpack`,
so `torch.from_dlpack`, `cupy.from_dlpack` and `jax.dlpack.from_dlpack` take
it without a copy) and `__cuda_array_interface__` (f32 and f16; that
protocol has no bfloat16).
`view_of` reads any DLPack or CUDA-array-interface object through cuda.core's
`StridedMemoryView`, so torch, CuPy, JAX and Numba arrays all work without
Molten importing any of them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from molten.conventions import dtype_name, element_type
from molten.errors import DTypeError, InputError
from molten.interpreters.molten import round_to_bfloat16
from molten.runtime.device import framework_of
from molten.runtime.program import ITEMSIZES


def dtype_of(dtype: Any) -> str:
    """The dtype name ("float32", "bfloat16", "int64", "bool", ...) for a
    name, numpy dtype or framework dtype (the graph builder's
    `element_type` rules)."""
    try:
        return dtype_name(element_type(dtype))
    except DTypeError:
        raise InputError(
            f"Molten arrays are {', '.join(ITEMSIZES)}, not {dtype!r}"
        ) from None


def to_bfloat16_bits(values: Any) -> np.ndarray:
    """Values rounded to bfloat16 (nearest even), as uint16 bit patterns."""
    rounded = np.ascontiguousarray(round_to_bfloat16(values), dtype=np.float32)
    return (rounded.view(np.uint32) >> 16).astype(np.uint16)


def from_bfloat16_bits(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


@functools.cache  # a graph's few shapes, checked on every call
def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements."""
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...] | None) -> bool:
    """Whether elements are laid out row-major without gaps (strides of
    dimensions of size 1 do not matter)."""
    expected = contiguous_strides(shape)
    if strides is None or strides == expected:
        return True
    return all(
        dim == 1 or stride == want
        for dim, stride, want in zip(shape, strides, expected, strict=True)
    )


@dataclass(frozen=True)
class ArrayView:
    """What the runtime needs to know about an array it was given."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    dtype: str | None
    """None when the array's dtype is not one Molten knows (named in `dtype_text`)."""
    dtype_text: str
    device_id: int
    readonly: bool
    owner: Any


_view_from_any: Any = None
_dtype_names: dict[Any, tuple[str | None, str]] = {}
"""numpy dtype -> (Molten dtype or None, its name): `str(dtype)` is slow."""


def _dtype_of_view(view: Any) -> tuple[str | None, str]:
    try:
        numpy_type = view.dtype
    except NotImplementedError:
        return None, "bfloat16 (install ml_dtypes to read it)"
    known = _dtype_names.get(numpy_type)
    if known is None:
        text = str(numpy_type)
        try:
            known = (dtype_of(text), text)
        except InputError:
            known = (None, text)
        _dtype_names[numpy_type] = known
    return known


def view_of(array: Any, stream_handle: int) -> ArrayView:
    """A view of `array` (DLPack or CUDA array interface); stream-ordered
    after the producer's pending work on `stream_handle`."""
    global _view_from_any
    if isinstance(array, DeviceArray):
        return ArrayView(
            array.ptr,
            array.shape,
            None,
            array.dtype,
            array.dtype,
            array.device_id,
            False,
            array,
        )
    if _view_from_any is None:
        from cuda.core.utils import StridedMemoryView

        _view_from_any = StridedMemoryView.from_any_interface
    try:
        view = _view_from_any(array, stream_handle)
    except (BufferError, TypeError, AttributeError, RuntimeError) as error:
        raise _NotAnArray(f"{type(array).__name__}: {error}") from error
    dtype, dtype_text = _dtype_of_view(view)
    return ArrayView(
        int(view.ptr),
        tuple(view.shape),
        None if view.strides is None else tuple(view.strides),
        dtype,
        dtype_text,
        view.device_id if view.is_device_accessible else -1,
        bool(view.readonly),
        view,
    )


class _NotAnArray(Exception):
    """`view_of` was given something that is neither DLPack nor CAI."""


class DeviceArray:
    """A contiguous row-major array on a GPU (float32, float16, bfloat16,
    int64, int32, int8, uint8 or bool).

    `DeviceArray.from_numpy(a)` copies a host array over, `.numpy()` copies it
    back (bfloat16 comes back as float32, exactly). Frameworks take it
    without a copy: `torch.from_dlpack(arr)`, `cupy.from_dlpack(arr)`.
    """

    def __init__(self, buffer: Any, shape: tuple[int, ...], dtype: str, device_id: int):
        self._buffer = buffer
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype_of(dtype)
        self.device_id = device_id

    # -- construction ------------------------------------------------------

    @classmethod
    def empty(
        cls,
        shape: tuple[int, ...],
        dtype: Any = "float32",
        *,
        device: int | None = None,
        stream: Any = None,
    ) -> DeviceArray:
        """Uninitialized memory of `shape` and `dtype` on `device`, allocated in
        order on `stream` (default: the device's default stream)."""
        from molten.runtime.device import runtime_device

        rt = runtime_device(device)
        dtype = dtype_of(dtype)
        nbytes = max(int(np.prod(shape, dtype=np.int64)) * ITEMSIZES[dtype], 1)
        buffer = rt.allocate(nbytes, rt.stream(stream))
        return cls(buffer, tuple(shape), dtype, rt.device_id)

    @classmethod
    def from_numpy(
        cls, array: Any, dtype: Any = None, *, device: int | None = None
    ) -> DeviceArray:
        """A device copy of a host array, converted to `dtype` (default: the
        array's own; bfloat16 rounds to nearest even). Returns when the copy is done."""
        host = np.asarray(array)
        target = dtype_of(dtype if dtype is not None else host.dtype)
        if target == "bfloat16":
            data = to_bfloat16_bits(host)
        else:
            data = np.ascontiguousarray(host, dtype=target)
        result = cls.empty(host.shape, target, device=device)
        if data.nbytes:
            from molten.runtime.device import runtime_device

            runtime_device(result.device_id).copy_from_host(result.ptr, data)
        return result

    # -- access ------------------------------------------------------------

    @property
    def ptr(self) -> int:
        return int(self._buffer.handle)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * ITEMSIZES[self.dtype]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def numpy(self) -> np.ndarray:
        """A host copy (waits for the device); bfloat16 as float32."""
        from molten.runtime.device import runtime_device

        storage = np.uint16 if self.dtype == "bfloat16" else np.dtype(self.dtype)
        host = np.empty(self.shape, dtype=storage)
        if host.nbytes:
            runtime_device(self.device_id).copy_to_host(host, self.ptr)
        return from_bfloat16_bits(host) if self.dtype == "bfloat16" else host

    def __repr__(self) -> str:
        return (
            f"DeviceArray(shape={self.shape}, dtype={self.dtype}, "
            f"device={self.device_id})"
        )

    # -- protocols ---------------------------------------------------------

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: Any = None,
        dl_device: Any = None,
        copy: Any = None,
    ) -> Any:
        # Molten's work is ordered on the stream of the call that made this
        # array; frameworks import on their current stream, which is that
        # stream whenever the call was made with their arrays.
        if copy:
            raise BufferError("DeviceArray exports its memory without copying")
        from molten.runtime.dlpack import to_dlpack

        return to_dlpack(self, self.ptr, self.shape, self.dtype, self.device_id)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self.device_id)  # kDLCUDA

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self.dtype == "bfloat16":
            raise AttributeError("the CUDA array interface has no bfloat16; use DLPack")
        return {
            "shape": self.shape,
            "typestr": np.dtype(self.dtype).str,
            "data": (self.ptr, False),
            "version": 3,
            "strides": None,
            "stream": None,
        }


def framework_of_inputs(inputs: Sequence[Any]) -> str | None:
    """The framework of a call's arrays: the first that is not a
    DeviceArray's (None where all are)."""
    return next(
        (framework_of(a) for a in inputs if not isinstance(a, DeviceArray)), None
    )
