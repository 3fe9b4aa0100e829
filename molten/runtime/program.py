"""A graph's launcher as data, for the runtime to replay.

`cuda.host_func` is what the `extern "C"` launcher of the `.cu` file does:
allocate the buffers passed between kernels (and zero those that start at
zero), launch the kernels in order, copy outputs that are inputs, free the
buffers. Under NVRTC only the kernels
are compiled, so the runtime replays the same steps itself; `host_program`
turns the op into a list of them. Buffers are numbered slots: the graph's
inputs, then its outputs, then one per allocation.

Nothing here needs a GPU or cuda-python.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from xdsl.ir import Attribute, SSAValue
from xdsl.traits import SymbolTable

from molten.conventions import dtype_name
from molten.dialects import cuda
from molten.dialects.cuda import element_bytes

ITEMSIZES = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "int64": 8,
    "int32": 4,
    "int8": 1,
    "uint8": 1,
    "bool": 1,
}


def _nbytes(element_type: Attribute, count: int) -> int:
    return count * element_bytes(element_type)


@dataclass(frozen=True)
class TensorSpec:
    """One graph input or output as the runtime sees it: a contiguous
    row-major array of `shape` (sizes, and names where a dimension's size
    comes with each call) and `dtype`."""

    name: str
    shape: tuple[int | str, ...]
    dtype: str

    def sized(self, sizes: Mapping[str, int]) -> TensorSpec:
        """The spec with its named dimensions at `sizes`."""
        shape = tuple(sizes[d] if isinstance(d, str) else d for d in self.shape)
        return replace(self, shape=shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * ITEMSIZES[self.dtype]

    def __str__(self) -> str:
        return (
            f"'{self.name}' ({'x'.join(map(str, self.shape)) or 'scalar'} {self.dtype})"
        )


@dataclass(frozen=True)
class Alloc:
    """A new device buffer of `nbytes` in `slot` (times the sizes in the
    `factors` slots, where the program takes sizes)."""

    slot: int
    nbytes: int
    factors: tuple[int, ...] = ()


@dataclass(frozen=True)
class Launch:
    """A launch of `kernel` (its C++ name) with the buffers in `args`; when
    one of the buffers at positions `aligned` is not aligned to
    `cuda.VECTOR_BYTES`, of `fallback` (the kernel's scalar variant). A
    `cooperative` launch runs groups of that many blocks, all resident at
    once: as many whole groups as the device holds, at most `grid`."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[int, ...]
    aligned: tuple[int, ...] = ()
    fallback: str | None = None
    cooperative: int | None = None
    shared_bytes: int = 0
    """The dynamic shared memory each block of the kernel is launched with."""
    fallback_grid: tuple[int, int, int] | None = None
    fallback_block: tuple[int, int, int] | None = None
    """The fallback's own grid and block, where they differ from the kernel's."""
    fallback_shared_bytes: int = 0
    """The fallback's own dynamic shared memory."""
    grid_of: tuple[int, ...] = ()
    grid_scale: tuple[int, ...] = (1, 1)
    """Where the grid grows with sizes: the slots of those sizes, and
    (scale, divisor[, times, axis]): ceil(their product x scale / divisor)
    x times blocks along the axis (x unless given), at most `grid`'s there
    (`cuda.launch`'s `grid_of`)."""
    fallback_scale: tuple[int, ...] = ()
    """The fallback's own scale of the same sizes, where it has one."""
    when: tuple[int, int, int] | None = None
    """(slot of a size, least, most): the launch runs only at those sizes
    (most 0: no bound), one variant of several."""


@dataclass(frozen=True)
class Copy:
    """A device-to-device copy of `nbytes` from `source` into `target`."""

    target: int
    source: int
    nbytes: int
    factors: tuple[int, ...] = ()
    """The slots of sizes `nbytes` is multiplied by."""


@dataclass(frozen=True)
class Zero:
    """The `nbytes` of the buffer in `slot` are set to zero. `restored`: the
    kernels leave it zero again, so the runtime keeps the buffer (allocated
    and zeroed once per stream) instead of allocating and zeroing it at
    each call."""

    slot: int
    nbytes: int
    restored: bool = False


@dataclass(frozen=True)
class Free:
    """The buffer in `slot` is released."""

    slot: int


@dataclass(frozen=True)
class TensorMap:
    """The TMA tensor map of the matrix at the buffer in `source` (row-major
    `shape`, read in `box`es, 128-byte swizzled, of `dtype` elements), made
    on the host into `slot` and passed to kernels by value."""

    slot: int
    source: int
    dtype: str
    shape: tuple[int, int]
    box: tuple[int, int]
    rows: int | None = None
    """The slot of a size the rows are `shape`'s first times, where they
    are known at run time only."""


Step = Alloc | Launch | Copy | Zero | Free | TensorMap


def host_program(
    launcher: cuda.HostFuncOp, kernel_names: dict[str, str]
) -> tuple[Step, ...]:
    """The steps of `launcher`; `kernel_names` maps kernel symbols to the C++
    names the printer gave them."""
    slots: dict[SSAValue, int] = {
        arg: i for i, arg in enumerate(launcher.body.block.args)
    }
    steps: list[Step] = []
    for op in launcher.body.block.ops:
        if isinstance(op, cuda.AllocOp):
            slots[op.result] = len(slots)
            nbytes = _nbytes(op.result.type.element_type, op.size.value.data)
            factors = tuple(slots[f] for f in op.factors)
            steps.append(Alloc(slots[op.result], nbytes, factors))
        elif isinstance(op, cuda.LaunchOp):
            steps.append(
                Launch(
                    kernel_names[op.callee.string_value()],
                    tuple(op.grid.get_values()),  # type: ignore[arg-type]
                    tuple(op.block.get_values()),  # type: ignore[arg-type]
                    tuple(slots[a] for a in op.args),
                    tuple(op.aligned.get_values()) if op.aligned else (),
                    kernel_names[op.fallback.string_value()] if op.fallback else None,
                    op.cooperative.get_values()[0] if op.cooperative else None,
                    _dynamic_shared_bytes(op, op.callee),
                    *(
                        (
                            tuple(op.fallback_grid.get_values()),
                            tuple(op.fallback_block.get_values()),
                        )
                        if op.fallback_grid is not None and op.fallback_block
                        else (None, None)
                    ),
                    _dynamic_shared_bytes(op, op.fallback) if op.fallback else 0,
                    tuple(slots[v] for v in op.grid_sizes()),
                    tuple(op.grid_scale.get_values()) if op.grid_scale else (1, 1),
                    tuple(op.fallback_scale.get_values()) if op.fallback_scale else (),
                    _when(op, slots),
                )
            )
        elif isinstance(op, cuda.MakeTensorMapOp):
            slots[op.result] = len(slots)
            element = op.result.type.element_type
            steps.append(
                TensorMap(
                    slots[op.result],
                    slots[op.source],
                    dtype_name(element),
                    tuple(op.shape.get_values()),  # type: ignore[arg-type]
                    tuple(op.box.get_values()),  # type: ignore[arg-type]
                    slots[op.rows] if op.rows is not None else None,
                )
            )
        elif isinstance(op, cuda.ZeroOp):
            nbytes = _nbytes(op.target.type.element_type, op.size.value.data)
            steps.append(Zero(slots[op.target], nbytes, op.restored is not None))
        elif isinstance(op, cuda.CopyOp):
            nbytes = _nbytes(op.target.type.element_type, op.size.value.data)
            factors = tuple(slots[f] for f in op.factors)
            steps.append(Copy(slots[op.target], slots[op.source], nbytes, factors))
        elif isinstance(op, cuda.FreeOp):
            steps.append(Free(slots[op.ptr]))
        elif isinstance(op, cuda.ReturnOp):
            break
        else:
            raise NotImplementedError(f"runtime: cannot replay {op.name} in a launcher")
    return tuple(steps)


def sized_program(program: Sequence[Step], values: Sequence[int]) -> tuple[Step, ...]:
    """`program` at the sizes in `values` (a call's slots, sizes filled in):
    buffer sizes and grids computed, nothing left that depends on them."""

    def product(factors: tuple[int, ...]) -> int:
        return math.prod(values[f] for f in factors)

    sized: list[Step] = []
    for step in program:
        if isinstance(step, Alloc | Copy) and step.factors:
            step = replace(step, nbytes=step.nbytes * product(step.factors), factors=())
        elif isinstance(step, TensorMap) and step.rows is not None:
            rows, cols = step.shape
            step = replace(step, shape=(rows * values[step.rows], cols), rows=None)
        elif isinstance(step, Launch):
            if step.when is not None:
                slot, least, most = step.when
                if not least <= values[slot] <= (most or values[slot]):
                    continue  # another variant's sizes
                step = replace(step, when=None)
            if step.grid_of:
                work = product(step.grid_of)
                fallback_grid = step.fallback_grid
                if step.fallback_scale:
                    assert fallback_grid is not None
                    fallback_grid = computed_grid(
                        fallback_grid, work, step.fallback_scale
                    )
                step = replace(
                    step,
                    grid=computed_grid(step.grid, work, step.grid_scale),
                    fallback_grid=fallback_grid,
                    grid_of=(),
                    grid_scale=(1, 1),
                    fallback_scale=(),
                )
        sized.append(step)
    # The tensor maps of variants not launched at these sizes are not made.
    passed = {a for step in sized if isinstance(step, Launch) for a in step.args}
    return tuple(
        step for step in sized if not isinstance(step, TensorMap) or step.slot in passed
    )


def computed_grid(
    grid: tuple[int, int, int], work: int, scale: tuple[int, ...]
) -> tuple[int, int, int]:
    """`grid` with ceil(work x scale / divisor) x times blocks along the
    axis, at most `grid`'s there (`Launch.grid_scale`)."""
    factor, divisor, times, axis = (*scale, 1, 0) if len(scale) == 2 else scale
    blocks = -(-work * factor // divisor) * times
    sized = list(grid)
    sized[axis] = min(blocks, grid[axis])
    return tuple(sized)  # type: ignore[return-value]


def _when(op: cuda.LaunchOp, slots: dict) -> tuple[int, int, int] | None:
    """A variant's launch's (slot of its size, least, most)."""
    if op.when is None:
        return None
    position, least, most = op.when.get_values()
    return slots[op.args[position]], least, most


def _dynamic_shared_bytes(launch: cuda.LaunchOp, callee) -> int:
    """The dynamic shared memory of the kernel `callee` that `launch` names."""
    return cuda.dynamic_shared_bytes(SymbolTable.lookup_symbol(launch, callee))


ARENA_ALIGNMENT = 256
"""Where each buffer of an arena starts: cudaMalloc's alignment, which
every vector and TMA access the kernels make is content with."""


@dataclass(frozen=True)
class Arena:
    """The buffers of a program laid out in one allocation: `offsets` of each
    buffer's slot, `size` in all. Buffers alive at the same time never
    overlap; one freed is reused by a later one that fits."""

    size: int
    offsets: dict[int, int]


def arena(program: tuple[Step, ...], excluded: frozenset[int] = frozenset()) -> Arena:
    """The arena of the buffers `program` allocates (except the slots in
    `excluded`), first fit in the order of its Alloc and Free steps: one
    allocation a call instead of one per buffer (a pool allocation and its
    free cost the host some 12 us)."""
    free: list[tuple[int, int]] = []  # (offset, size), sorted, merged
    live: dict[int, tuple[int, int]] = {}
    offsets: dict[int, int] = {}
    end = 0
    for step in program:
        if isinstance(step, Alloc) and step.slot not in excluded:
            size = -(-max(step.nbytes, 1) // ARENA_ALIGNMENT) * ARENA_ALIGNMENT
            fit = next((i for i, (_, s) in enumerate(free) if s >= size), None)
            if fit is None:
                offset, end = end, end + size
            else:
                offset, room = free[fit]
                free[fit : fit + 1] = (
                    [(offset + size, room - size)] if room > size else []
                )
            offsets[step.slot] = offset
            live[step.slot] = offset, size
        elif isinstance(step, Free) and step.slot in live:
            free = _merged([*free, live.pop(step.slot)])
    return Arena(end, offsets)


def _merged(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(offset, size) intervals sorted, adjacent ones joined."""
    merged: list[tuple[int, int]] = []
    for offset, size in sorted(intervals):
        if merged and merged[-1][0] + merged[-1][1] == offset:
            merged[-1] = (merged[-1][0], merged[-1][1] + size)
        else:
            merged.append((offset, size))
    return merged
