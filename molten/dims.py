"""Named dimensions bound to sizes from the arrays a graph is called with.

A graph's input `x: tensor<?x3584xbf16, ["T"]>` takes any T; a call gives
T by the arrays it passes, and every input naming T must agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from molten.dialects.molten import Dim
from molten.errors import InputError


def bind(arrays: Iterable[tuple[str, Sequence[Dim], Sequence[int]]]) -> dict[str, int]:
    """The sizes of the names in the (what, dims, shape) of each array given:
    `what` names the array in errors, `dims` are its input's dimensions and
    `shape` the array's. An InputError names the array, its input's shape
    and the dimension where a rank or fixed size differs, a named one is
    below 1, or two arrays disagree on a name."""
    sizes: dict[str, int] = {}
    first: dict[str, str] = {}
    for what, dims, shape in arrays:
        shape = tuple(shape)
        if len(shape) != len(dims):
            raise InputError(f"{what} has shape {shape}; expected {_text(dims)}")
        for dim, size in zip(dims, shape, strict=True):
            if isinstance(dim, int):
                if dim != size:
                    raise InputError(
                        f"{what} has shape {shape}; expected {_text(dims)}"
                    )
                continue
            if size < 1:
                raise InputError(f"{what} has {dim} = {size}; {dim} must be at least 1")
            if dim in sizes and sizes[dim] != size:
                raise InputError(
                    f"{first[dim]} and {what} disagree on {dim}: {sizes[dim]} vs {size}"
                )
            sizes.setdefault(dim, size)
            first.setdefault(dim, what)
    return sizes


def _text(dims: Sequence[Dim]) -> str:
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def sizes_of(
    graph: str, inputs: Sequence[tuple[str, Sequence[Dim]]], arrays: Sequence[Any]
) -> dict[str, int]:
    """The sizes of the names that `arrays` (a call of graph `graph`) give
    the `inputs` ((what, dims) each): an InputError where they are not
    arrays of the inputs' ranks and fixed sizes, or disagree."""
    if len(arrays) != len(inputs):
        raise InputError(
            f"graph '{graph}' takes {len(inputs)} inputs, got {len(arrays)}"
        )
    shapes = []
    for (what, dims), array in zip(inputs, arrays, strict=True):
        shape = getattr(array, "shape", None)
        if shape is None:
            raise InputError(f"{what} is a {type(array).__name__}, not a device array")
        shapes.append((what, dims, tuple(shape)))
    return bind(shapes)
