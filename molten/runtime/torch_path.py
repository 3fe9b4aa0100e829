"""The call path for torch tensors on torch's current stream: the common
case, checked with the tensors' own attributes instead of DLPack.

Reading an array through DLPack (`arrays.view_of`) costs 4-5 us a tensor
on an H100 host: a capsule, a view object, its fields. A torch tensor
answers the same questions (address, shape, dtype, device, contiguity) in
about 1 us, and on torch's current stream there is no producer stream to
order after. Any tensor this path does not accept as it is (a wrong shape,
a view that is not contiguous, one that requires grad, a subclass) goes
the general way, which accepts it or names what is wrong: so this path
never raises, and never accepts what the general one would refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from molten.runtime.program import ITEMSIZES, TensorSpec

SLOW = object()
"""What `TorchPath.arguments` returns for a call it leaves to the general path."""


class TorchPath:
    """The checks and allocations of one executable's calls on torch tensors,
    prepared once from its specs and torch's module."""

    def __init__(
        self,
        torch: Any,
        inputs: Sequence[TensorSpec],
        outputs: Sequence[TensorSpec],
        device_id: int,
    ):
        self.tensor = torch.Tensor
        self.empty = torch.empty
        self.device = torch.device("cuda", device_id)
        self.device_id = device_id
        raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.stream = raw_stream or (lambda d: torch.cuda.current_stream(d).cuda_stream)
        self.inputs = [_expected(torch, spec) for spec in inputs]
        self.outputs = [_expected(torch, spec) for spec in outputs]
        self.empty_like = torch.empty_like
        self.contiguous = torch.contiguous_format
        self.like = [
            next(
                (
                    i
                    for i, other in enumerate(inputs)
                    if other.shape == spec.shape and other.dtype == spec.dtype
                ),
                None,
            )
            for spec in outputs
        ]
        """For each output, an input of its shape and dtype: `empty_like`
        of it is the cheapest new tensor torch makes (2 us against 3.4 us
        for `empty` on an H100 host)."""

    def arguments(
        self, inputs: Sequence[Any], out: Any, slots: list[int], allocate: bool = True
    ) -> tuple[int, list[Any]] | Any:
        """(stream handle, new outputs) with the arrays' addresses in `slots`
        (inputs, then outputs; none made unless `allocate`), or SLOW where any
        array is not one this path takes."""
        if len(inputs) != len(self.inputs):
            return SLOW
        tensor, device = self.tensor, self.device_id
        for i, array in enumerate(inputs):  # _pointer, inlined: 0.1 us a tensor
            shape, dtype, itemsize, _ = self.inputs[i]
            if (
                type(array) is not tensor
                or array.dtype is not dtype
                or array.shape != shape
                or array.requires_grad
                or array.get_device() != device
                or not array.is_contiguous()
            ):
                return SLOW
            pointer = array.data_ptr()
            if pointer % itemsize:
                return SLOW
            slots[i] = pointer
        first = len(inputs)
        results: list[Any] = []
        if out is None:
            if allocate:
                for j, (shape, dtype, _, _) in enumerate(self.outputs):
                    like = self.like[j]
                    if like is None:
                        array = self.empty(shape, dtype=dtype, device=self.device)
                    else:
                        array = self.empty_like(
                            inputs[like], memory_format=self.contiguous
                        )
                    slots[first + j] = array.data_ptr()
                    results.append(array)
        else:
            given = out if isinstance(out, (tuple, list)) else (out,)
            if len(given) != len(self.outputs):
                return SLOW
            taken = [(slots[i], spec[3]) for i, spec in enumerate(self.inputs)]
            for j, array in enumerate(given):
                expected = self.outputs[j]
                pointer = self._pointer(array, expected)
                if pointer is None or _overlaps(pointer, expected[3], taken):
                    return SLOW
                slots[first + j] = pointer
                taken.append((pointer, expected[3]))
        return self.stream(self.device_id), results

    def _pointer(self, array: Any, expected: tuple) -> int | None:
        shape, dtype, itemsize, _ = expected
        if (
            type(array) is not self.tensor
            or array.dtype is not dtype
            or array.shape != shape
            or array.requires_grad
            or array.get_device() != self.device_id
            or not array.is_contiguous()
        ):
            return None
        pointer = array.data_ptr()
        return None if pointer % itemsize else pointer


def _overlaps(pointer: int, nbytes: int, taken: list[tuple[int, int]]) -> bool:
    """Whether `nbytes` at `pointer` share memory with any (start, nbytes) in
    `taken`: the inputs and the outputs before it (the general path names
    which)."""
    return any(
        pointer < start + size and start < pointer + nbytes for start, size in taken
    )


def _expected(torch: Any, spec: TensorSpec) -> tuple[tuple[int, ...], Any, int, int]:
    """(shape, torch dtype, itemsize, nbytes) of a spec."""
    return spec.shape, getattr(torch, spec.dtype), ITEMSIZES[spec.dtype], spec.nbytes
