"""Torch's type promotion, for the graph API: the element type an op on
tensors and Python numbers computes in (`torch.result_type`).

Categories rank bool < integer < float. Tensors promote among themselves
(`torch.promote_types`: the higher category, else the wider type; f16 with
bf16 is f32); a Python number counts only where its category is higher
than every tensor's, and then gives that category's default (int64 for an
int, float32 for a float). So `int64 + float16` is float16, an int8 tensor
plus 1 stays int8, and an int tensor times 0.5 is float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float32Type, i8, i64
from xdsl.ir import Attribute

from molten.dialects.molten import (
    BOOL,
    BOOLEAN,
    FLOAT,
    INTEGER,
    UI8,
    element_kind,
)
from molten.errors import DTypeError

_RANK = {BOOLEAN: 0, INTEGER: 1, FLOAT: 2}
F32 = Float32Type()


def category(element: Attribute) -> int:
    return _RANK[element_kind(element)]


def number_category(value: Any) -> int:
    """The category of a Python (or numpy) number."""
    if isinstance(value, bool | np.bool_):
        return 0
    if isinstance(value, int | np.integer):
        return 1
    return 2


def promote_types(a: Attribute, b: Attribute) -> Attribute:
    """The type two tensors of `a` and `b` compute in."""
    if a == b:
        return a
    if category(a) != category(b):
        return a if category(a) > category(b) else b
    if element_kind(a) == FLOAT:
        return F32  # f32 with a narrower one; f16 with bf16 (neither holds the other)
    if {a, b} == {UI8, i8}:
        raise DTypeError(
            "uint8 and int8 promote to int16 in torch, which Molten does not "
            "have; cast one of them first"
        )
    width = max(a.bitwidth, b.bitwidth)  # type: ignore[attr-defined]
    return next(t for t in (a, b) if t.bitwidth == width and t != UI8)  # type: ignore[attr-defined]


def result_element(operands: Sequence[Any]) -> Attribute:
    """The element type of an op's operands together (tensors, numbers)."""
    elements = [o.type.element_type for o in operands if hasattr(o, "type")]
    if not elements:
        raise DTypeError("at least one operand must be a Tensor")
    result = elements[0]
    for element in elements[1:]:
        result = promote_types(result, element)
    numbers = [number_category(o) for o in operands if not hasattr(o, "type")]
    if numbers and max(numbers) > category(result):
        return {1: i64, 2: F32}[max(numbers)]
    return result


def default_element(value: Any) -> Attribute:
    """The element type torch gives a tensor of `value` (torch.full)."""
    return {0: BOOL, 1: i64, 2: F32}[number_category(value)]
