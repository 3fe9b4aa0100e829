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

The commonest call of all (`y = exe(x, w)`: torch tensors, new outputs,
no `stream=`) runs a function written for its executable
(`TorchPath.call_function`): the same checks with each spec a constant,
unrolled over the arrays, and the executable's launches after them in the
same frame. The Python interpreter then spends nothing on loops, tuple
unpacking and attribute lookups of its own: a third of the call's host
instructions with one kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
        self.device = torch.device("cuda", device_id)
        self.device_id = device_id
        raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.stream = raw_stream or (lambda d: torch.cuda.current_stream(d).cuda_stream)
        self.inputs = [_expected(torch, spec) for spec in inputs]
        self.outputs = [_expected(torch, spec) for spec in outputs]
        self.empty_like = torch.empty_like
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
        for `empty` on an H100 host). A contiguous input's strides are the
        contiguous ones but where a dimension's size is 1 (there any
        stride is contiguous), so its `empty_like` is contiguous as it is
        (`memory_format=` would cost a fifth more)."""
        self.prototypes = [
            None if like is not None else _prototype(torch, spec, self.device)
            for like, spec in zip(self.like, self.outputs, strict=True)
        ]
        """For each output of no input's shape and dtype, one element
        broadcast to its shape: `empty_like` of it (a view that is not
        dense) is a new contiguous tensor, for what `empty_like` of an
        input costs (a gemm's output: `empty` costs the host half as much
        again)."""

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
                for j, like in enumerate(self.like):
                    array = self.empty_like(
                        self.prototypes[j] if like is None else inputs[like]
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

    def call_function(
        self,
        body: Sequence[str],
        names: dict[str, Any],
        name: str = "graph",
        shapes_known: bool = False,
        into: bool = False,
    ) -> Callable[..., Any]:
        """`call(inputs)` for the call on new outputs: SLOW where `arguments`
        would answer SLOW (the same checks, in the same order), else the
        call's result (its one output, or a tuple of them) once `body` ran.
        `body` is Python source, a line a statement at the function's own
        indent, that reads `p0`, `p1`... (the inputs' then the outputs'
        addresses) and `stream` (the handle); `names` are its globals.
        With `shapes_known` the function leaves the inputs' shapes
        unchecked: for a caller that found it by them, equal to the specs'.
        With `into`, `call(inputs, out)` for the call into `out=` arrays,
        which it returns: checked as `arguments` checks them, and against
        overlapping the inputs and each other."""
        n = len(self.inputs)
        lines = [
            "def call(inputs, out):" if into else "def call(inputs):",
            f"    if len(inputs) != {n}:",
            "        return SLOW",
        ]
        if n:
            lines.append(f"    {', '.join(f'a{i}' for i in range(n))}, = inputs")
        constants: dict[str, Any] = {
            "SLOW": SLOW,
            "Tensor": self.tensor,
            "device": self.device_id,
            "current_stream": self.stream,
            "empty_like": self.empty_like,
        }
        for i, (shape, dtype, itemsize, _) in enumerate(self.inputs):
            constants[f"shape{i}"], constants[f"dtype{i}"] = shape, dtype
            checked = None if shapes_known else f"shape{i}"
            lines += _checks(f"a{i}", f"p{i}", f"dtype{i}", checked, itemsize)
        if into:
            m = len(self.outputs)
            lines += [
                "    given = out if isinstance(out, (tuple, list)) else (out,)",
                f"    if len(given) != {m}:",
                "        return SLOW",
            ]
            if m:
                lines.append(f"    {', '.join(f'o{j}' for j in range(m))}, = given")
        taken = [(f"p{i}", spec[3]) for i, spec in enumerate(self.inputs)]
        for j, (shape, dtype, itemsize, nbytes) in enumerate(self.outputs):
            constants[f"out_shape{j}"], constants[f"out_dtype{j}"] = shape, dtype
            pointer = f"p{n + j}"
            if into:
                lines += _checks(
                    f"o{j}", pointer, f"out_dtype{j}", f"out_shape{j}", itemsize
                )
                overlaps = [  # `_overlaps`, with every size a constant
                    f"({pointer} < {start} + {size} and {start} < {pointer} + {nbytes})"
                    for start, size in taken
                ]
                if overlaps:
                    lines += [f"    if {' or '.join(overlaps)}:", "        return SLOW"]
                taken.append((pointer, nbytes))
                continue
            like = self.like[j]
            constants[f"prototype{j}"] = self.prototypes[j]
            lines += [
                f"    r{j} = empty_like(a{like})"
                if like is not None
                else f"    r{j} = empty_like(prototype{j})",
                f"    {pointer} = r{j}.data_ptr()",
            ]
        lines.append("    stream = current_stream(device)")
        lines += [f"    {line}" for line in body]
        results = [f"r{j}" for j in range(len(self.outputs))]
        returned = results[0] if len(results) == 1 else f"({', '.join(results)},)"
        lines.append(
            "    return out"
            if into
            else f"    return {returned}"
            if results
            else "    return ()"
        )
        source = "\n".join(lines) + "\n"
        namespace = {**names, **constants}
        exec(compile(source, f"<molten call of {name}>", "exec"), namespace)
        call = namespace["call"]
        call.source = source  # for the curious and the tests
        return call

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


def _checks(
    array: str, pointer: str, dtype: str, shape: str | None, itemsize: int
) -> list[str]:
    """Source that returns SLOW unless `array` is a tensor as `arguments`
    takes it (of the dtype and shape named by the globals `dtype` and
    `shape`; any shape where None), with its address in `pointer`."""
    shape_checked = "" if shape is None else f"{array}.shape != {shape} or "
    lines = [
        f"    if (type({array}) is not Tensor or {array}.dtype is not {dtype}",
        f"            or {shape_checked}{array}.requires_grad",
        f"            or {array}.get_device() != device",
        f"            or not {array}.is_contiguous()):",
        "        return SLOW",
        f"    {pointer} = {array}.data_ptr()",
    ]
    if itemsize > 1:
        lines += [f"    if {pointer} % {itemsize}:", "        return SLOW"]
    return lines


def _prototype(torch: Any, spec: tuple, device: Any) -> Any:
    """One element on `device`, of the spec's dtype, broadcast to its shape
    (`TorchPath.prototypes`)."""
    shape, dtype, _, _ = spec
    one = torch.empty((1,) * len(shape), dtype=dtype, device=device)
    return one.expand(shape) if shape else one


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
