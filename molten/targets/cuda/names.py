"""C++ identifiers for the names of a graph: every name that reaches C++
(kernel, launcher, parameter and variable names) is reduced to
`[A-Za-z0-9_]`, kept clear of C++ keywords, reserved names and the names the
generated code uses, and made unique in its scope (`Scope`), so no name in a
graph can inject code."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

CPP_KEYWORDS = frozenset(
    [
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "requires",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
    ]
)

GENERATED_NAMES = frozenset(
    [
        "int64_t",
        "uintptr_t",
        "size_t",
        "dim3",
        "threadIdx",
        "blockIdx",
        "blockDim",
        "gridDim",
        "warpSize",
        "stream",
        "err",
        "min",
        "max",
        "expf",
        "logf",
        "sqrtf",
        "rsqrtf",
        "tanhf",
        "erff",
        "powf",
        "fabsf",
        "fmaxf",
        "fminf",
        "cudaError_t",
        "cudaStream_t",
        "cudaSuccess",
        "cudaGetLastError",
        "cudaMallocAsync",
        "cudaFreeAsync",
        "cudaMemcpyAsync",
        "cudaMemcpyDeviceToDevice",
        "cudaFuncSetAttribute",
        "cudaFuncAttributeMaxDynamicSharedMemorySize",
    ]
)
"""Names the generated code refers to, which a graph's name must not shadow."""

LOWERCASE_MACROS = frozenset(
    ["linux", "unix", "i386", "errno", "stdin", "stdout", "stderr", "assert"]
)
"""Predefined or library macros without capitals (capitalized names are all
treated as possible macros)."""

GLOBAL_NAMES = frozenset(
    [
        "main",
        "malloc",
        "calloc",
        "realloc",
        "free",
        "exit",
        "abort",
        "printf",
        "puts",
        "memcpy",
        "memset",
        "strlen",
        "exp",
        "log",
        "sqrt",
        "tanh",
        "erf",
        "pow",
        "fabs",
        "abs",
    ]
)
"""Library functions a kernel or launcher (a global symbol) must not be named."""

_BAD_CHARS = re.compile(r"[^A-Za-z0-9_]")


def c_identifier(name: str, *, is_global: bool = False) -> str:
    """`name` as a C++ identifier that is no keyword, reserved name (no leading
    `_`, no `__`), possible macro (all capitals), name the generated code uses,
    or, for a global symbol, library function or `cuda*` name."""
    cleaned = re.sub(r"_{2,}", "_", _BAD_CHARS.sub("_", name)).lstrip("_")
    if not cleaned or cleaned[0].isdigit():
        cleaned = "v" + cleaned
    clashes = (
        cleaned in CPP_KEYWORDS
        or cleaned in GENERATED_NAMES
        or cleaned in LOWERCASE_MACROS
        or cleaned.startswith("molten_")
        or (cleaned.upper() == cleaned and any(c.isalpha() for c in cleaned[1:]))
        or (is_global and (cleaned in GLOBAL_NAMES or cleaned.startswith("cu")))
    )
    return cleaned + "_" if clashes else cleaned


@dataclass
class Scope:
    """Unique C++ names for the values of one function (or for globals)."""

    taken: set[str] = field(default_factory=set)
    is_global: bool = False
    next_suffix: dict[str, int] = field(default_factory=dict)
    """Per base name, the suffix to try first: every smaller one is taken
    (names are never released), so each name costs O(1), not a scan."""

    def fresh(self, hint: str | None, default: str = "v") -> str:
        base = c_identifier(hint, is_global=self.is_global) if hint else default
        if base not in self.taken:
            self.taken.add(base)
            return base
        suffix = self.next_suffix.get(base, 1)
        while True:
            # "int_" + "_1" would be a reserved "__": join on one underscore;
            # and "M_PI_" + "2" a macro again: the result is checked anew.
            name = c_identifier(
                f"{base.rstrip('_')}_{suffix}", is_global=self.is_global
            )
            suffix += 1
            if name not in self.taken:
                break
        self.next_suffix[base] = suffix
        self.taken.add(name)
        return name
