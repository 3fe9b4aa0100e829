"""Building blocks of the random graphs the hypothesis tests generate: which
ops to draw, and how to apply them so that every value stays well-defined
(divisors, logarithms and roots of positive values, pow bases away from 0)."""

import molten

BINARY = ["add", "sub", "mul", "div", "max", "min", "pow"]
UNARY = [
    "neg",
    "abs",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "square",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "gelu_tanh",
    "silu",
]
SCALARS = [0.0, 1.0, 2.0, 0.5, -1.5, 3.0]


def positive(g, t):
    return g.abs(t) + 1.0


def apply_binary(g, op, a, b):
    if op == "div":
        return g.div(a, positive(g, b) if isinstance(b, molten.Tensor) else b)
    if op == "pow":
        base = g.abs(a) + 0.5 if isinstance(a, molten.Tensor) else abs(a) + 0.5
        exponent = g.tanh(b) if isinstance(b, molten.Tensor) else b
        return g.pow(base, exponent)
    return getattr(g, op)(a, b)


def apply_unary(g, op, t):
    if op in ("log", "sqrt", "rsqrt", "reciprocal"):
        return getattr(g, op)(positive(g, t))
    if op == "gelu_tanh":
        return g.gelu(t, approximate="tanh")
    return getattr(g, op)(t)
