"""The graph builder's ops as free functions, so a spec reads like the math:

```python
from molten import ops

def rms_gate(x, w, gate):
    return ops.rms_norm(x, w, eps=1e-6) * ops.silu(gate)
```

Each function forwards to the `DataflowGraph` of its first tensor argument
(`ops.gelu(x)` is `x.graph.gelu(x)`), with the same parameters and
docstring. Constants and masks, which have no tensor argument, stay on the
graph (`g.constant`, `g.causal_mask`, `g.iota`, `g.arange`, `g.full`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from molten.errors import GraphError
from molten.ir import DataflowGraph, Tensor

OPS = (
    "add", "sub", "mul", "div", "max", "min", "pow",
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "square", "tanh",
    "sigmoid", "relu", "silu", "gelu", "rotate_half", "triu", "tril", "cast",
    "reduce_sum", "reduce_max", "reduce_mean", "cumsum", "flip", "slice", "pad",
    "broadcast_to", "reshape", "transpose", "matmul",
    "rms_norm", "layer_norm", "softmax", "rope", "attention",
    "floor_divide", "remainder", "fmod", "atan2", "bitwise_and", "bitwise_or",
    "bitwise_xor", "shift_left", "shift_right", "logical_and", "logical_or",
    "logical_xor", "logical_not", "bitwise_not", "eq", "ne", "lt", "le", "gt",
    "ge", "sign", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "erf", "log1p", "expm1", "log2", "log10", "exp2", "floor", "ceil", "round",
    "trunc", "isnan", "isinf", "where", "masked_fill", "take", "index_select",
    "embedding", "gather", "take_along_dim", "full_like", "zeros_like",
    "ones_like", "argmax", "argmin", "max_with_indices", "min_with_indices",
    "scatter", "scatter_add", "index_copy", "index_add", "cumprod", "cummax",
    "cummin",
)  # fmt: skip


def _forwarding(name: str) -> Callable[..., Tensor]:
    method = getattr(DataflowGraph, name)

    @functools.wraps(method)
    def op(*args: Any, **kwargs: Any) -> Tensor:
        graph = next((a.graph for a in args if isinstance(a, Tensor)), None)
        if graph is None:
            raise GraphError(
                f"molten.ops.{name} needs at least one graph tensor among its "
                f"operands, got {', '.join(type(a).__name__ for a in args) or 'none'}"
            )
        return getattr(graph, name)(*args, **kwargs)

    op.__qualname__ = name
    op.__module__ = __name__
    del op.__wrapped__  # its signature is the method's, with `self`
    return op


for _name in OPS:
    globals()[_name] = _forwarding(_name)

__all__ = list(OPS)
