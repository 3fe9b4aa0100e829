"""`@zero`: a Python function of graph ops, compiled per input signature.

```python
import molten
from molten import ops

@molten.zero
def rms_gate(x, w, gate):
    return ops.rms_norm(x, w, eps=1e-6) * ops.silu(gate)

y = rms_gate(x, w, gate)      # torch / CuPy / JAX arrays or DeviceArrays
```

On a call, the function runs once on graph tensors of the arrays' shapes and
dtypes (named after its parameters); the graph is compiled and cached per
(shapes, dtypes, device, keyword constants), and later calls with the same
signature only launch. Keyword arguments are passed through as Python
constants (part of the cache key, so they must be hashable).

Nothing is hidden: an input Molten cannot take, or a graph it cannot compile
yet, raises. Only with an explicit `fallback=` does the call run that
function instead, and it warns (`ZeroFallbackWarning`) each time saying why.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from molten.compiler import ZeroCompiler
from molten.errors import InputError, MoltenError
from molten.ir import DataflowGraph
from molten.passes.schedule.target import current_native_arch
from molten.runtime.arrays import _NotAnArray, view_of
from molten.runtime.program import ITEMSIZES

LEGACY_DEFAULT_STREAM = 1
"""DLPack's name for CUDA's legacy default stream."""


def _metadata_view(array: Any) -> Any:
    """`array`'s shape, dtype and device, read without ordering any stream
    (DLPack's stream -1: the call itself orders the streams). JAX refuses
    stream -1 (CUDA_ERROR_INVALID_HANDLE, jax 0.11); it is then asked on the
    legacy default stream, which every producer can order work against."""
    try:
        return view_of(array, -1)
    except _NotAnArray:
        if not hasattr(array, "__dlpack__"):
            raise
        return view_of(array, LEGACY_DEFAULT_STREAM)


class ZeroFallbackWarning(UserWarning):
    """A `@zero(fallback=...)` function ran its fallback instead of Molten."""


class ZeroFunction:
    """What `@zero` makes of a function."""

    def __init__(self, fn: Callable[..., Any], fallback: Callable[..., Any] | None):
        self.fn = fn
        self.fallback = fallback
        self.compiled: dict[tuple[Any, ...], Any] = {}
        """Each signature's `CompiledGraph`."""
        self._parameters = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        functools.update_wrapper(self, fn)

    def __call__(self, *arrays: Any, **constants: Any) -> Any:
        try:
            return self._run(arrays, constants)
        except (MoltenError, NotImplementedError) as error:
            if self.fallback is None:
                raise
            warnings.warn(
                f"@zero {self.fn.__name__}: Molten could not run this call "
                f"({type(error).__name__}: {error}); ran the fallback "
                f"{getattr(self.fallback, '__name__', repr(self.fallback))} instead",
                ZeroFallbackWarning,
                stacklevel=2,
            )
            return self.fallback(*arrays, **constants)

    def _run(self, arrays: tuple[Any, ...], constants: dict[str, Any]) -> Any:
        signature = tuple(self._describe(i, a) for i, a in enumerate(arrays))
        devices = {device for _, _, _, device in signature}
        if len(devices) > 1:
            raise InputError(
                f"@zero {self.fn.__name__}: inputs are on different devices "
                f"({', '.join(f'{n}: {d}' for n, _, _, d in signature)})"
            )
        try:
            key = (signature, tuple(sorted(constants.items())))
            hash(key)
        except TypeError:
            raise InputError(
                f"@zero {self.fn.__name__}: keyword constants must be hashable, got "
                f"{constants!r}"
            ) from None
        compiled = self.compiled.get(key)
        if compiled is None:
            compiled = self.compiled[key] = self._compile(signature, constants)
        device = next(iter(devices), None)
        return compiled.executable(device)(*arrays)

    def _describe(
        self, index: int, array: Any
    ) -> tuple[str, tuple[int, ...], str, int]:
        name = self._name(index)
        try:
            view = _metadata_view(array)
        except _NotAnArray:
            raise InputError(
                f"@zero {self.fn.__name__}: argument '{name}' is a "
                f"{type(array).__name__}, not a device array (torch, CuPy, JAX or "
                "molten DeviceArray); pass Python constants as keyword arguments"
            ) from None
        if view.dtype is None:
            raise InputError(
                f"@zero {self.fn.__name__}: argument '{name}' has dtype "
                f"{view.dtype_text}; Molten takes {', '.join(ITEMSIZES)}"
            )
        if view.device_id < 0:
            raise InputError(
                f"@zero {self.fn.__name__}: argument '{name}' is in host memory; "
                "Molten runs on device arrays"
            )
        return name, view.shape, view.dtype, view.device_id

    def _name(self, index: int) -> str:
        if index < len(self._parameters):
            return self._parameters[index]
        return f"arg{index}"

    def _compile(
        self,
        signature: tuple[tuple[str, tuple[int, ...], str, int], ...],
        constants: dict[str, Any],
    ) -> Any:
        graph = DataflowGraph.trace(
            self.fn,
            [(name, shape, dtype) for name, shape, dtype, _ in signature],
            **constants,
        )
        return ZeroCompiler(arch=current_native_arch()).compile(graph)


def zero(
    fn: Callable[..., Any] | None = None, *, fallback: Callable[..., Any] | None = None
) -> Any:
    """Compiles `fn`, a function of graph ops, on first call per input
    signature (see the module docstring). `fallback=`, when given, runs
    instead (with a warning) on inputs or graphs Molten cannot handle."""
    if fn is None:
        return lambda f: ZeroFunction(f, fallback)
    return ZeroFunction(fn, fallback)
