"""Building blocks of the random graphs the hypothesis tests generate: which
ops to draw, and how to apply them so that every value stays well-defined
(divisors, logarithms and roots of positive values, pow bases away from 0,
ids brought into a table's range)."""

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
    """`t` made at least 1: a tensor through abs + 1, a scalar likewise."""
    return g.abs(t) + 1.0 if isinstance(t, molten.Tensor) else abs(t) + 1.0


def apply_binary(g, op, a, b):
    if op == "div":
        return g.div(a, positive(g, b))
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


# --------------------------------------------------------------------------
# Whole random graphs for the differential test on the GPU
# (tests/test_random_graphs_gpu.py): one family each, at rank 0 to 4, odd
# sizes and three dtypes, drawn from a seed so a failure is replayed by its
# number.
# --------------------------------------------------------------------------

DTYPES = ["float32", "float16", "bfloat16"]
ODD_SIZES = [1, 2, 3, 5, 7, 13, 17, 31, 33, 63, 64, 65, 127, 129, 257, 1000, 4099]
MATMUL_SIZES = [1, 2, 3, 5, 7, 16, 17, 31, 33, 64, 65, 96, 127, 128, 129, 200, 257]
FAMILIES = ["elementwise", "reduction", "norm", "softmax", "matmul", "layout", "mask"]
GRAPHS = 600
"""How many random graphs the differential test runs."""
ELEMENT_BUDGET = 1 << 18
"""The most elements a tensor of a random graph has (the float64 interpreter
runs every graph)."""


class RandomGraph:
    """A drawn graph, the arch it compiles for, and how it was drawn."""

    def __init__(self, seed: int, graph, arch: str, family: str, dtype: str):
        self.seed, self.graph, self.arch = seed, graph, arch
        self.family, self.dtype = family, dtype

    @property
    def rank(self) -> int:
        return max(len(t.shape.dims) for t in self.graph.inputs)

    def __repr__(self) -> str:
        shapes = [list(t.shape.dims) for t in self.graph.inputs]
        return f"random graph {self.seed} ({self.family}, {self.dtype}, {shapes})"


def _shape(rng, rank: int, budget: int = ELEMENT_BUDGET) -> list[int]:
    dims: list[int] = []
    for _ in range(rank):
        room = budget // max(1, _prod(dims))
        dims.append(int(rng.choice([s for s in ODD_SIZES if s <= room] or [1])))
    rng.shuffle(dims)
    return dims


def _prod(dims) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


def _broadcastable(rng, shape: list[int]) -> list[int]:
    """A shape that broadcasts to `shape`: leading axes dropped, others set to 1."""
    keep = int(rng.integers(0, len(shape) + 1))
    suffix = shape[len(shape) - keep :]
    return [1 if rng.random() < 0.4 else d for d in suffix]


class _Builder:
    """Draws ops onto a graph from a pool of its values."""

    def __init__(self, rng, g, dtype: str):
        self.rng, self.g, self.dtype = rng, g, dtype
        self.n_inputs = 0

    def input(self, shape, dtype=None):
        self.n_inputs += 1
        return self.g.add_input(f"in_{self.n_inputs}", shape, dtype or self.dtype)

    def chain(self, x, steps: int, extra: list | None = None):
        """`steps` random unary and binary ops from `x`; binary operands are
        scalars, `extra` tensors (broadcast to x) or earlier values."""
        pool = [x, *(extra or [])]
        for _ in range(steps):
            if self.rng.random() < 0.5:
                x = apply_unary(self.g, str(self.rng.choice(UNARY)), x)
            else:
                op = str(self.rng.choice(BINARY))
                if self.rng.random() < 0.35:
                    other = float(self.rng.choice(SCALARS))
                else:
                    other = pool[int(self.rng.integers(len(pool)))]
                x = (
                    apply_binary(self.g, op, other, x)
                    if self.rng.random() < 0.3
                    else apply_binary(self.g, op, x, other)
                )
            pool.append(x)
        return x

    def maybe_cast(self, x):
        """Sometimes a round trip through another dtype, as mixed precision does."""
        if self.rng.random() < 0.25:
            other = str(self.rng.choice([d for d in DTYPES if d != self.dtype]))
            x = self.g.cast(self.g.cast(x, other), self.dtype)
        return x


def _elementwise(b: _Builder):
    shape = _shape(b.rng, int(b.rng.integers(0, 5)))
    x = b.input(shape)
    extra = [b.input(_broadcastable(b.rng, shape)) for _ in range(b.rng.integers(3))]
    y = b.maybe_cast(b.chain(x, int(b.rng.integers(2, 9)), extra))
    outputs = [y]
    if b.rng.random() < 0.3:
        outputs.append(b.chain(y, 2))
    return outputs


def _reduction(b: _Builder):
    rank = int(b.rng.integers(1, 5))
    shape = _shape(b.rng, rank)
    x = b.chain(b.input(shape), int(b.rng.integers(0, 3)))
    n_axes = int(b.rng.integers(1, rank + 1))
    axes = sorted(b.rng.choice(rank, n_axes, replace=False).tolist())
    axes = [a - rank if b.rng.random() < 0.3 else a for a in axes]
    keepdim = bool(b.rng.random() < 0.5)
    kind = str(b.rng.choice(["reduce_sum", "reduce_max", "reduce_mean"]))
    r = getattr(b.g, kind)(x, axes, keepdim)
    if keepdim and b.rng.random() < 0.6:  # a norm-like x - f(x) over the axes
        r = apply_binary(b.g, str(b.rng.choice(["sub", "mul", "div"])), x, r)
    return [b.chain(r, int(b.rng.integers(0, 3)))]


def _norm(b: _Builder):
    rank = int(b.rng.integers(1, 5))
    shape = _shape(b.rng, rank)
    x = b.input(shape)
    if b.rng.random() < 0.5:  # a residual added first
        x = b.g.add(x, b.input(shape))
    w = b.input([shape[-1]])
    eps = float(b.rng.choice([1e-6, 1e-5, 1e-3]))
    if b.rng.random() < 0.5:
        y = b.g.rms_norm(x, w, eps)
    else:
        y = b.g.layer_norm(x, w, b.input([shape[-1]]), eps)
    if b.rng.random() < 0.5:  # a gated epilogue, as in an MLP
        y = b.g.mul(y, b.g.silu(b.input(shape)))
    return [b.maybe_cast(b.chain(y, int(b.rng.integers(0, 3))))]


def _softmax(b: _Builder):
    rank = int(b.rng.integers(1, 5))
    shape = _shape(b.rng, rank)
    axis = int(b.rng.integers(-rank, rank))
    x = b.g.mul(b.input(shape), float(b.rng.choice([0.5, 1.0, 4.0])))
    if b.rng.random() < 0.3:  # log_softmax written out
        m = b.g.reduce_max(x, axis, True)
        shifted = b.g.sub(x, m)
        y = b.g.sub(shifted, b.g.log(b.g.reduce_sum(b.g.exp(shifted), axis, True)))
    else:
        y = b.g.softmax(x, axis)
    if b.rng.random() < 0.4:
        y = b.g.mul(y, b.input(_broadcastable(b.rng, shape)))
    return [y]


def _matmul(b: _Builder):
    m, n, k = (int(b.rng.choice(MATMUL_SIZES)) for _ in range(3))
    batch = [int(b.rng.choice([2, 3])) for _ in range(b.rng.integers(0, 3))]
    transpose_b = bool(b.rng.random() < 0.4)
    a = b.input([*batch, m, k])
    w_batch = batch if b.rng.random() < 0.5 else []
    w = b.input([*w_batch, n, k] if transpose_b else [*w_batch, k, n])
    y = b.g.matmul(a, w, transpose_b=transpose_b)
    if b.rng.random() < 0.6:
        y = b.g.add(y, b.input([n]))
    if b.rng.random() < 0.6:
        act = str(b.rng.choice(["gelu", "gelu_tanh", "silu", "relu", "tanh"]))
        y = apply_unary(b.g, act, y)
    if b.rng.random() < 0.3:
        y = b.g.add(y, b.input([*batch, m, n]))
    return [b.maybe_cast(y)]


def _mask(b: _Builder):
    """Integer ids and bool masks as transformers builds them: ids compared
    with positions (iota) and scalars, the masks combined (and, or, not),
    the float values selected by them (where, masked_fill), ids cast into
    the values, rows of a table looked up by ids brought into range
    (remainder), and the masks counted and the kept ids' argmax along an
    axis."""
    rank = int(b.rng.integers(1, 4))
    shape = _shape(b.rng, rank, ELEMENT_BUDGET // 4)
    g = b.g
    x = b.chain(b.input(shape), int(b.rng.integers(0, 3)))
    ids = b.input(shape, str(b.rng.choice(["int64", "int32"])))
    positions = g.iota(shape, int(b.rng.integers(rank)))
    keep = getattr(g, str(b.rng.choice(["lt", "le", "ge", "ne"])))(ids, positions)
    if b.rng.random() < 0.5:
        other = g.gt(ids, int(b.rng.integers(-20, 20)))
        keep = getattr(g, str(b.rng.choice(["logical_and", "logical_or"])))(keep, other)
    if b.rng.random() < 0.3:
        keep = ~keep
    if b.rng.random() < 0.5:
        y = g.where(keep, x, float(b.rng.choice(SCALARS)))
    else:
        y = g.masked_fill(x, keep, float(b.rng.choice(SCALARS)))
    if b.rng.random() < 0.5:
        scaled = g.mul(g.cast(g.remainder(ids, 7), b.dtype), 0.25)
        y = g.add(y, scaled)
    outputs = [b.maybe_cast(b.chain(y, int(b.rng.integers(0, 3))))]
    if b.rng.random() < 0.5:
        vocab = int(b.rng.choice([1, 5, 33, 1000]))
        table = b.input([vocab, shape[-1]])
        rows = g.take(table, g.remainder(ids, vocab), 0)
        outputs.append(b.chain(rows, int(b.rng.integers(0, 2))))
    if b.rng.random() < 0.5:
        # Each row's count of kept positions (int64) and the position of its
        # greatest kept id (exact: integers compare exactly).
        axis = int(b.rng.integers(rank))
        outputs.append(g.reduce_sum(keep, axis))
        kept = g.cast(g.where(keep, ids, 0), "int32")
        outputs.append(g.argmax(kept, axis, bool(b.rng.random() < 0.5)))
    return outputs


def _layout(b: _Builder):
    rank = int(b.rng.integers(2, 5))
    shape = _shape(b.rng, rank)
    x = b.chain(b.input(shape), int(b.rng.integers(1, 3)))
    perm = b.rng.permutation(rank).tolist()
    y = b.g.transpose(x, perm)
    if b.rng.random() < 0.5:
        y = b.g.reshape(y, [-1, y.shape.dims[-1]])
    if b.rng.random() < 0.3:
        y = b.g.broadcast_to(y, [2, *y.shape.dims])
    return [b.chain(y, int(b.rng.integers(1, 3)))]


_FAMILY_BUILDERS = {
    "elementwise": _elementwise,
    "reduction": _reduction,
    "norm": _norm,
    "softmax": _softmax,
    "matmul": _matmul,
    "layout": _layout,
    "mask": _mask,
}


def random_inputs(g, rng) -> list:
    """Fresh inputs of a random graph: floats in [-2, 2] rounded to their
    dtype, integers in [-50, 50), bools half true."""

    from molten.dialects.molten import BOOL, FLOAT, element_kind
    from molten.interpreters import round_to

    arrays = []
    for t in g.inputs:
        element = t.type.element_type
        if element == BOOL:
            arrays.append(rng.random(t.shape.dims) < 0.5)
        elif element_kind(element) == FLOAT:
            arrays.append(round_to(rng.uniform(-2.0, 2.0, t.shape.dims), element))
        else:
            arrays.append(rng.integers(-50, 50, t.shape.dims).astype(t.dtype))
    return arrays


def random_graph(seed: int) -> RandomGraph:
    """Graph number `seed`: its family, dtype and shapes drawn from the seed."""
    import numpy as np

    rng = np.random.default_rng(seed)
    family = FAMILIES[seed % len(FAMILIES)]
    dtype = DTYPES[(seed // len(FAMILIES)) % len(DTYPES)]
    g = molten.DataflowGraph(f"random_{seed}")
    outputs = _FAMILY_BUILDERS[family](_Builder(rng, g, dtype))
    for y in outputs:
        g.add_output(y)
    # The tensor-core kernels for sm_90a (wgmma) take f16 and bf16 matmuls.
    arch = "sm_90a" if family == "matmul" and rng.random() < 0.5 else "sm_90"
    return RandomGraph(seed, g, arch, family, dtype)
