"""The values of the graph API: `TensorShape` (sizes and named dimensions)
and `Tensor` (an SSA value of a `DataflowGraph`, with Python's operators
building the graph's ops)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from molten.conventions import dtype_name
from molten.dialects import molten
from molten.errors import ShapeError

if TYPE_CHECKING:
    from molten.ir import DataflowGraph


@dataclass(frozen=True, init=False)
class TensorShape:
    """A tensor shape, outermost first: positive sizes, and names for sizes
    given only when the graph runs (`TensorShape(["T", 3584])`: one compiled
    graph for any T). Two dimensions of one name are one size."""

    dims: tuple[molten.Dim, ...]

    def __init__(self, dims: Sequence[molten.Dim] | int):
        if isinstance(dims, int | np.integer) and not isinstance(dims, bool):
            dims = (dims,)
        elif isinstance(dims, str | bytes) or not isinstance(
            dims, Sequence | np.ndarray | TensorShape
        ):
            raise ShapeError(
                f"TensorShape({dims!r}): expected a sequence of positive integers "
                f"and dimension names, got {type(dims).__name__}"
            )
        dims = tuple(dims)
        for d in dims:
            if molten.is_dim_name(d):
                continue
            if isinstance(d, bool) or not isinstance(d, int | np.integer) or d < 1:
                raise ShapeError(
                    f"TensorShape({list(dims)}): dimensions must be positive integers "
                    "or names (identifiers such as T)"
                )
        object.__setattr__(
            self, "dims", tuple(d if isinstance(d, str) else int(d) for d in dims)
        )

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_static(self) -> bool:
        """Whether every dimension is a fixed size."""
        return all(isinstance(d, int) for d in self.dims)

    @property
    def names(self) -> tuple[str, ...]:
        """The named dimensions, in order."""
        return tuple(d for d in self.dims if isinstance(d, str))

    def __iter__(self) -> Iterator[molten.Dim]:
        return iter(self.dims)

    def __len__(self) -> int:
        return len(self.dims)

    def __getitem__(self, index: int) -> molten.Dim:
        return self.dims[index]

    def __repr__(self) -> str:
        return f"TensorShape({list(self.dims)})"


Operand = "Tensor | float | int"


class Tensor:
    """A value of a `DataflowGraph`: an SSA value with a shape and a dtype."""

    def __init__(self, graph: DataflowGraph, value: SSAValue):
        self.graph = graph
        self.value = value

    @property
    def type(self) -> TensorType:
        assert isinstance(self.value.type, TensorType)
        return self.value.type

    @property
    def shape(self) -> TensorShape:
        return TensorShape(molten.dims_of(self.type))

    @property
    def dtype(self) -> str:
        return dtype_name(self.type.element_type)

    @property
    def name(self) -> str | None:
        return self.graph._names.get(self.value) or self.value.name_hint

    def __repr__(self) -> str:
        return f"Tensor(%{self.name or '?'}: {self.type})"

    def __add__(self, other: Operand) -> Tensor:
        return self.graph.add(self, other)

    def __radd__(self, other: Operand) -> Tensor:
        return self.graph.add(other, self)

    def __sub__(self, other: Operand) -> Tensor:
        return self.graph.sub(self, other)

    def __rsub__(self, other: Operand) -> Tensor:
        return self.graph.sub(other, self)

    def __mul__(self, other: Operand) -> Tensor:
        return self.graph.mul(self, other)

    def __rmul__(self, other: Operand) -> Tensor:
        return self.graph.mul(other, self)

    def __truediv__(self, other: Operand) -> Tensor:
        return self.graph.div(self, other)

    def __rtruediv__(self, other: Operand) -> Tensor:
        return self.graph.div(other, self)

    def __pow__(self, other: Operand) -> Tensor:
        return self.graph.pow(self, other)

    def __rpow__(self, other: Operand) -> Tensor:
        return self.graph.pow(other, self)

    def __neg__(self) -> Tensor:
        return self.graph.neg(self)

    def __abs__(self) -> Tensor:
        return self.graph.abs(self)

    def __floordiv__(self, other: Operand) -> Tensor:
        return self.graph.floor_divide(self, other)

    def __rfloordiv__(self, other: Operand) -> Tensor:
        return self.graph.floor_divide(other, self)

    def __mod__(self, other: Operand) -> Tensor:
        return self.graph.remainder(self, other)

    def __rmod__(self, other: Operand) -> Tensor:
        return self.graph.remainder(other, self)

    def __and__(self, other: Operand) -> Tensor:
        return self.graph.bitwise_and(self, other)

    def __rand__(self, other: Operand) -> Tensor:
        return self.graph.bitwise_and(other, self)

    def __or__(self, other: Operand) -> Tensor:
        return self.graph.bitwise_or(self, other)

    def __ror__(self, other: Operand) -> Tensor:
        return self.graph.bitwise_or(other, self)

    def __xor__(self, other: Operand) -> Tensor:
        return self.graph.bitwise_xor(self, other)

    def __rxor__(self, other: Operand) -> Tensor:
        return self.graph.bitwise_xor(other, self)

    def __lshift__(self, other: Operand) -> Tensor:
        return self.graph.shift_left(self, other)

    def __rshift__(self, other: Operand) -> Tensor:
        return self.graph.shift_right(self, other)

    def __invert__(self) -> Tensor:
        """~x: bitwise not, which on a bool is logical not (as torch's)."""
        return self.graph.bitwise_not(self)

    # Comparisons build bool tensors, as torch's and numpy's do; a Tensor is
    # still hashed by identity, so it can key a dict.
    def __eq__(self, other: object) -> Tensor:  # type: ignore[override]
        return self.graph.eq(self, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> Tensor:  # type: ignore[override]
        return self.graph.ne(self, other)  # type: ignore[arg-type]

    def __lt__(self, other: Operand) -> Tensor:
        return self.graph.lt(self, other)

    def __le__(self, other: Operand) -> Tensor:
        return self.graph.le(self, other)

    def __gt__(self, other: Operand) -> Tensor:
        return self.graph.gt(self, other)

    def __ge__(self, other: Operand) -> Tensor:
        return self.graph.ge(self, other)

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        raise TypeError(
            "a molten Tensor has no truth value (it is a value of the graph, "
            "computed when the graph runs); use g.where or the comparison ops"
        )

    def __matmul__(self, other: Tensor) -> Tensor:
        return self.graph.matmul(self, other)
