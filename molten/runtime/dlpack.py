"""DLPack export of a contiguous device array, by ctypes.

cuda.core's `StridedMemoryView.__dlpack__` refuses bfloat16, so Molten
builds the (unversioned) `DLManagedTensor` capsule itself: a `DLTensor` over
the array's pointer, shape and dtype, whose deleter drops the reference that
keeps the array's memory alive. A consumer (`torch.from_dlpack`,
`cupy.from_dlpack`, `jax.dlpack.from_dlpack`) renames the capsule and calls
the deleter when its tensor dies; a capsule never consumed calls it itself.
"""

from __future__ import annotations

import ctypes
from typing import Any

KDL_CUDA = 2
_DTYPE_CODES = {
    "float32": (2, 32),  # kDLFloat
    "float16": (2, 16),
    "bfloat16": (4, 16),  # kDLBfloat
    "int64": (0, 64),  # kDLInt
    "int32": (0, 32),
    "int8": (0, 8),
    "uint8": (1, 8),  # kDLUInt
    "bool": (6, 8),  # kDLBool, a byte each
}
_CAPSULE_NAME = b"dltensor"


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
    ]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [
    ("dl_tensor", _DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER),
]

_alive: dict[int, tuple[Any, ...]] = {}
"""Exported tensors by the address of their struct: the struct, its shape
array and the array whose memory it points at, until the deleter runs."""


@_DELETER
def _delete(managed: Any) -> None:
    _alive.pop(ctypes.addressof(managed.contents), None)


# The destructor gets the dying capsule as a raw pointer: as a py_object
# ctypes would take a reference to an object being deallocated.
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@_CAPSULE_DESTRUCTOR
def _destroy_capsule(capsule: Any) -> None:
    # Still named "dltensor": nobody consumed it, so nobody will delete it.
    if _capsule_is_valid(capsule, _CAPSULE_NAME):
        address = _capsule_pointer(capsule, _CAPSULE_NAME)
        _alive.pop(address, None)


def to_dlpack(
    owner: Any, ptr: int, shape: tuple[int, ...], dtype: str, device_id: int
) -> Any:
    """A "dltensor" capsule viewing `ptr` (contiguous `shape` of `dtype` on CUDA
    device `device_id`) that keeps `owner` alive while a consumer holds it."""
    code, bits = _DTYPE_CODES[dtype]
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    managed = _DLManagedTensor()
    managed.dl_tensor.data = ptr
    managed.dl_tensor.device = _DLDevice(KDL_CUDA, device_id)
    managed.dl_tensor.ndim = len(shape)
    managed.dl_tensor.dtype = _DLDataType(code, bits, 1)
    managed.dl_tensor.shape = ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64))
    managed.dl_tensor.strides = None  # compact row-major
    managed.dl_tensor.byte_offset = 0
    managed.manager_ctx = None
    managed.deleter = _delete
    address = ctypes.addressof(managed)
    _alive[address] = (managed, dims, owner)
    return _capsule_new(address, _CAPSULE_NAME, _destroy_capsule)
