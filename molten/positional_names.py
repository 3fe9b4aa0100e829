"""The result's name given positionally, as Molten's first API spelled it.

The graph builder's methods take the result's name as `name=`, and their
options in torch's order (`rms_norm(x, w, 1e-5)`, `softmax(x, -1)`). Molten's
announcement wrote the name as the last positional argument instead
(`rms_norm(x, w, "norm")`), and both spellings must work. They never collide:

- a string that lands in an option no string can be (eps, an axis, keepdim),
  or past the last positional option, is the result's name, and nothing
  positional may follow it;
- in an option whose values include strings (gelu's `approximate`, a dtype),
  a string the option takes keeps its meaning, and any other string is an
  error naming both readings;
- an option that takes any string (a dimension name) keeps it.

What an option takes is read off its annotation, so a new builder method
needs nothing but a keyword-only `name` and honest annotations.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from molten.errors import GraphError


@dataclass(frozen=True)
class StringOption:
    """Marks an option whose values include some strings, for
    `Annotated[str, StringOption(...)]`: `describe` names them in errors,
    `accepts` tells them from other strings."""

    describe: str
    accepts: Callable[[str], bool]


@dataclass(frozen=True)
class _Slot:
    """A positional parameter: its name, and what a string given there is."""

    name: str
    takes_any_string: bool
    string_option: StringOption | None


def _string_reading(hint: Any) -> tuple[bool, StringOption | None]:
    """(takes any string, the StringOption of some strings) for an annotation."""
    if hint is Any or hint is str:
        return True, None
    origin = typing.get_origin(hint)
    if origin is Annotated:
        marks = [m for m in hint.__metadata__ if isinstance(m, StringOption)]
        if marks:
            return False, marks[0]
        return _string_reading(hint.__origin__)
    if origin is Literal:
        strings = tuple(v for v in typing.get_args(hint) if isinstance(v, str))
        if not strings:
            return False, None
        return False, StringOption(
            " or ".join(map(repr, strings)), strings.__contains__
        )
    if origin in (typing.Union, types.UnionType):
        readings = [_string_reading(arg) for arg in typing.get_args(hint)]
        if any(any_string for any_string, _ in readings):
            return True, None
        options = [option for _, option in readings if option is not None]
        return False, options[0] if options else None
    return False, None


def _slots(method: Callable[..., Any]) -> tuple[inspect.Signature, list[_Slot]]:
    hints = typing.get_type_hints(method, include_extras=True)
    signature = inspect.signature(method)
    slots = []
    for param in list(signature.parameters.values())[1:]:  # after self
        if param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        any_string, option = _string_reading(hints.get(param.name, Any))
        slots.append(_Slot(param.name, any_string, option))
    return signature, slots


def _split_name(
    op_name: str, slots: list[_Slot], args: tuple[Any, ...]
) -> tuple[tuple[Any, ...], str | None]:
    """The positional arguments before the name, and the name if one was given."""
    for index, value in enumerate(args):
        if not isinstance(value, str):
            continue
        if index < len(slots):
            slot = slots[index]
            option = slot.string_option
            if option is not None and not option.accepts(value):
                raise GraphError(
                    f"{op_name}: {value!r} is not a value of {slot.name} "
                    f"({option.describe}); if it is the result's name, give it "
                    f"as name={value!r}"
                )
            if slot.takes_any_string or option is not None:
                continue  # the option's own value
        if index + 1 < len(args):
            where = slots[index].name if index < len(slots) else "no option"
            raise GraphError(
                f"{op_name}: {value!r}, a string where {where} goes, is read as the "
                "result's name, which comes last; give the options after it "
                f"by keyword, or the name as name={value!r}"
            )
        return args[:index], value
    return args, None


def _plain(name: str, signature: inspect.Signature) -> str:
    """`rms_norm(x, weight, eps=1e-06, *, name=None)`: the call, no annotations."""
    params = list(signature.parameters.values())[1:]
    plain = [p.replace(annotation=inspect.Parameter.empty) for p in params]
    return f"{name}{inspect.Signature(plain)}"


def accepts_positional_names(cls: type) -> type:
    """Lets every public method of `cls` with a keyword-only `name` take the
    name positionally too (see the module's docstring)."""
    for attr, method in list(vars(cls).items()):
        if attr.startswith("_") or not callable(method):
            continue
        name_param = inspect.signature(method).parameters.get("name")
        if name_param is None or name_param.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        setattr(cls, attr, _taking_positional_name(method))
    return cls


def _taking_positional_name(method: Callable[..., Any]) -> Callable[..., Any]:
    op_name = f"molten.{method.__name__}"
    resolved: list[tuple[inspect.Signature, list[_Slot]]] = []

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not resolved:  # the annotations name classes defined after `cls`
            resolved.append(_slots(method))
        signature, slots = resolved[0]
        args, name = _split_name(op_name, slots, args)
        if name is not None:
            if "name" in kwargs:
                raise GraphError(
                    f"{op_name}: the result's name is given twice: {name!r} "
                    f"positionally and name={kwargs['name']!r}"
                )
            kwargs["name"] = name
        try:
            signature.bind(self, *args, **kwargs)
        except TypeError as error:
            read = f"; {name!r} is read as the result's name" if name else ""
            raise GraphError(
                f"{op_name}: {error} (it takes {_plain(method.__name__, signature)})"
                f"{read}"
            ) from None
        return method(self, *args, **kwargs)

    return call
