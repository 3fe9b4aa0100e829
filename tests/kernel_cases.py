"""Graphs whose generated kernels the compile checks and GPU tests exercise:
every fusion pattern and kernel kind that lowers today, at awkward sizes."""

import functools
import gc
import itertools
from collections.abc import Callable

from molten.ir import DataflowGraph

Builder = Callable[[DataflowGraph, str], None]


def rms_norm(rows: int, hidden: int) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, hidden], dtype)
        w = g.add_input("w", [hidden], dtype)
        g.add_output(g.rms_norm(x, w, name="norm"))

    return build


def layer_norm(shape: list[int], normalized: int) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", shape, dtype)
        w = g.add_input("w", shape[-normalized:], dtype)
        b = g.add_input("b", shape[-normalized:], dtype)
        g.add_output(g.layer_norm(x, w, b, name="y"))

    return build


def softmax(shape: list[int], axis: int = -1) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", shape, dtype)
        g.add_output(g.softmax(x, name="p", axis=axis))

    return build


def masked_softmax(rows: int, cols: int) -> Builder:
    """softmax(x + causal mask): row r sees its first r + 1 columns only, so
    that most parts of a split row are all -inf."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, cols], dtype)
        g.add_output(g.softmax(x + g.causal_mask(rows, cols, dtype=dtype), name="p"))

    return build


def log_softmax(rows: int, cols: int) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, cols], dtype)
        shifted = x - g.reduce_max(x, -1, keepdim=True)
        total = g.reduce_sum(g.exp(shifted), -1, keepdim=True)
        g.add_output(shifted - g.log(total), "y")

    return build


def rms_norm_silu(rows: int, hidden: int) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, hidden], dtype)
        w = g.add_input("w", [hidden], dtype)
        gate = g.add_input("gate", [rows, hidden], dtype)
        g.add_output(g.rms_norm(x, w) * g.silu(gate), "y")

    return build


def gelu_affine(n: int) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        x, a, b, c = (g.add_input(name, [n], dtype) for name in "xabc")
        g.add_output(g.gelu(x * a + b) * c, "y")

    return build


def broadcast_mix(rows: int, cols: int) -> Builder:
    """Row vector, column vector and scalar operands, tanh gelu, relu, a max."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, cols], dtype)
        row = g.add_input("row", [cols], dtype)
        col = g.add_input("col", [rows, 1], dtype)
        y = g.gelu(x * row + col, approximate="tanh") - 0.5
        g.add_output(g.max(g.relu(y), x * 0.25), "y")

    return build


def rope(batch: int, seq: int, dim: int) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [batch, seq, dim], dtype)
        cos = g.add_input("cos", [seq, dim], dtype)
        sin = g.add_input("sin", [seq, dim], dtype)
        g.add_output(g.rope(x, cos, sin, name="y"))

    return build


def transpose_cast(rows: int, cols: int) -> Builder:
    """A transpose and a cast to f32 (a pointwise kernel with an index map)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, cols], dtype)
        g.add_output(g.cast(g.transpose(x, [1, 0]), "float32") * 2.0, "y")

    return build


def gemm_bias_gelu(m: int, k: int, n: int) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [m, k], dtype)
        w = g.add_input("w", [k, n], dtype)
        b = g.add_input("b", [n], dtype)
        g.add_output(g.gelu(x @ w + b), "y")

    return build


def gemm_nk_bias_gelu(m: int, k: int, n: int) -> Builder:
    """gelu(x @ w.T + b) with w stored [N, K], as nn.Linear stores it."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [m, k], dtype)
        w = g.add_input("w", [n, k], dtype)
        b = g.add_input("b", [n], dtype)
        g.add_output(g.gelu(g.matmul(x, w, transpose_b=True) + b), "y")

    return build


def gemm_nk_residual(m: int, k: int, n: int) -> Builder:
    """x @ w.T + r, w stored [N, K]: a linear layer and its residual add."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [m, k], dtype)
        w = g.add_input("w", [n, k], dtype)
        r = g.add_input("r", [m, n], dtype)
        g.add_output(g.matmul(x, w, transpose_b=True) + r, "y")

    return build


def gemm_siblings(m: int, k: int, n: int, nk: bool, keep_up: bool = False) -> Builder:
    """silu(x @ gate) * (x @ up), the weights stored [N, K] (`nk`, as
    nn.Linear stores them: x @ gate.T) or [K, N]: on sm_90a one gemm kernel
    of both products; with `keep_up`, x @ up an output as well."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [m, k], dtype)
        shape = [n, k] if nk else [k, n]
        gate, up = g.add_input("gate", shape, dtype), g.add_input("up", shape, dtype)
        up_product = g.matmul(x, up, transpose_b=nk)
        g.add_output(g.silu(g.matmul(x, gate, transpose_b=nk)) * up_product, "y")
        if keep_up:
            g.add_output(up_product, "up_product")

    return build


def rms_norm_linear(m: int, k: int, n: int, siblings: bool = False) -> Builder:
    """rms_norm(x, w) @ W.T + b, W stored [N, K]: on sm_90a one gemm kernel
    that normalizes the tiles of x it reads (fuse-prologue). With
    `siblings`, h = rms_norm(a + r, w) and silu(h @ gate.T) * (h @ up.T),
    a + r an output too (a residual stream: the kernel's source is a
    value of the graph, not its input)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [m, k], dtype)
        w = g.add_input("w", [k], dtype)
        if siblings:
            r = g.add_input("r", [m, k], dtype)
            stream = x + r
            g.add_output(stream, "stream")
            h = g.rms_norm(stream, w)
            gate = g.add_input("gate", [n, k], dtype)
            up = g.add_input("up", [n, k], dtype)
            gated = g.silu(g.matmul(h, gate, transpose_b=True))
            g.add_output(gated * g.matmul(h, up, transpose_b=True), "y")
            return
        weight = g.add_input("weight", [n, k], dtype)
        b = g.add_input("b", [n], dtype)
        g.add_output(g.matmul(g.rms_norm(x, w), weight, transpose_b=True) + b, "y")

    return build


def gemm_plain(m: int, k: int, n: int) -> Builder:
    """x @ w alone, w stored [K, N]."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [m, k], dtype)
        w = g.add_input("w", [k, n], dtype)
        g.add_output(g.matmul(x, w), "y")

    return build


def gemm_batched(batch: list[int], m: int, k: int, n: int) -> Builder:
    """A batched matmul with a broadcast weight, transposed, a residual add, and
    the matmul result also an output."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [*batch, m, k], dtype)
        w = g.add_input("w", [n, k], dtype)
        r = g.add_input("r", [*batch, m, n], dtype)
        y = g.matmul(x, w, name="xw", transpose_b=True)
        g.add_output(y)
        g.add_output(g.silu(y) + r, "out")

    return build


def gemm_transpose_a(m: int, k: int, n: int) -> Builder:
    def build(g: DataflowGraph, dtype: str) -> None:
        a = g.add_input("a", [k, m], dtype)
        b = g.add_input("b", [k, n], dtype)
        g.add_output(g.matmul(a, b, name="y", transpose_a=True) * 0.5)

    return build


def matvec(m: int, k: int, transpose_a: bool = False) -> Builder:
    """A @ b of one column (torch.matmul(A, b) with b [K, 1]): the GEMV of
    its transpose (transpose-matvec); A stored [M, K] or [K, M]."""

    def build(g: DataflowGraph, dtype: str) -> None:
        a = g.add_input("a", [k, m] if transpose_a else [m, k], dtype)
        b = g.add_input("b", [k, 1], dtype)
        g.add_output(g.matmul(a, b, transpose_a=transpose_a), "y")

    return build


def gemv_batched(batch: list[int], m: int, k: int, n: int) -> Builder:
    """A batched matmul of few rows, its weight broadcast over the first batch
    axis, with silu and a residual add."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [*batch, m, k], dtype)
        w = g.add_input("w", [batch[-1], k, n], dtype)
        r = g.add_input("r", [*batch, m, n], dtype)
        g.add_output(g.silu(x @ w) + r, "out")

    return build


def attention(
    batch: int, seq: int, dim: int, causal: bool, keys: int | None = None
) -> Builder:
    """softmax(q @ kᵀ / sqrt(dim) [+ causal mask]) @ v, `keys` keys (default:
    `seq`); one attention kernel in f16 and bf16, gemm kernels in f32."""

    def build(g: DataflowGraph, dtype: str) -> None:
        q = g.add_input("q", [batch, seq, dim], dtype)
        k, v = (g.add_input(n, [batch, keys or seq, dim], dtype) for n in "kv")
        g.add_output(g.attention(q, k, v, name="o", causal=causal))

    return build


def attention_decode(
    batch: int, heads: int, kv_heads: int, queries: int, keys: int, dim: int
) -> Builder:
    """Grouped-query decode: a few queries against many keys, the KV heads
    repeated as repeat_kv writes it; the keys split across blocks."""

    def build(g: DataflowGraph, dtype: str) -> None:
        group = heads // kv_heads
        q = g.add_input("q", [batch, heads, queries, dim], dtype)
        k, v = (
            g.reshape(
                g.broadcast_to(
                    g.reshape(
                        g.add_input(n, [batch, kv_heads, keys, dim], dtype),
                        [batch, kv_heads, 1, keys, dim],
                    ),
                    [batch, kv_heads, group, keys, dim],
                ),
                [batch, heads, keys, dim],
            )
            for n in "kv"
        )
        g.add_output(g.attention(q, k, v, name="o"))

    return build


def attention_bias_grouped(
    heads: int, kv_heads: int, seq: int, keys: int, dim: int
) -> Builder:
    """Grouped-query attention as Hugging Face writes it (KV heads repeated
    by repeat_kv), with an additive bias per head, query and key, causal."""

    def build(g: DataflowGraph, dtype: str) -> None:
        group = heads // kv_heads
        q = g.add_input("q", [2, heads, seq, dim], dtype)
        k, v = (
            g.reshape(
                g.broadcast_to(
                    g.reshape(
                        g.add_input(n, [2, kv_heads, keys, dim], dtype),
                        [2, kv_heads, 1, keys, dim],
                    ),
                    [2, kv_heads, group, keys, dim],
                ),
                [2, heads, keys, dim],
            )
            for n in "kv"
        )
        bias = g.add_input("bias", [heads, seq, keys], dtype)
        scores = g.matmul(q, k, transpose_b=True) * (1 / dim**0.5) + bias
        scores = scores + g.causal_mask(seq, keys, dtype)
        g.add_output(g.matmul(g.softmax(scores), v, name="o"))

    return build


def linear_heads(tokens: int, k: int, heads: int, dim: int) -> Builder:
    """x @ w.T + b split into heads, [T, H * D] -> [H, T, D], as a decoder
    layer's projections are: the gemm kernel stores its result through the
    layout (w stored [N, K])."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [tokens, k], dtype)
        w = g.add_input("w", [heads * dim, k], dtype)
        b = g.add_input("b", [heads * dim], dtype)
        y = g.matmul(x, w, transpose_b=True) + b
        heads_y = g.transpose(g.reshape(y, [tokens, heads, dim]), [1, 0, 2])
        g.add_output(heads_y, "y")

    return build


def qkv_heads(tokens: int, k: int, heads: int, kv_heads: int, dim: int) -> Builder:
    """A decoder layer's q, k and v projections of one x, with biases, each
    split into heads ([T, H * D] -> [H, T, D]), k and v of fewer heads than
    q (grouped KV heads): on sm_90a one gemm kernel whose tiles are each one
    projection's, where the estimate finds that no slower."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [tokens, k], dtype)
        for name, count in (("q", heads), ("k", kv_heads), ("v", kv_heads)):
            w = g.add_input(f"w{name}", [count * dim, k], dtype)
            b = g.add_input(f"b{name}", [count * dim], dtype)
            y = g.matmul(x, w, transpose_b=True) + b
            split = g.transpose(g.reshape(y, [tokens, count, dim]), [1, 0, 2])
            g.add_output(split, name)

    return build


def attention_merged_heads(heads: int, seq: int, dim: int) -> Builder:
    """Causal attention whose heads are put back side by side, [H, T, D] ->
    [T, H * D], for the output projection: the kernel stores through the
    layout."""

    def build(g: DataflowGraph, dtype: str) -> None:
        q, k, v = (g.add_input(n, [heads, seq, dim], dtype) for n in "qkv")
        o = g.attention(q, k, v, causal=True)
        g.add_output(g.reshape(g.transpose(o, [1, 0, 2]), [seq, heads * dim]), "o")

    return build


def passthrough(n: int) -> Builder:
    """Outputs that are an input and a value returned twice (copies)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [n], dtype)
        y = g.exp(x, name="y")
        g.add_output(x, "x_again")
        g.add_output(y)
        g.add_output(y, "y_again")

    return build


def unary_ops(rows: int, cols: int) -> Builder:
    """Every unary op, on domains where each is defined, in three outputs."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, cols], dtype)
        positive = g.abs(x) + 0.5
        g.add_output(g.neg(x) + g.exp(x) + g.log(positive) + g.sqrt(positive), "a")
        g.add_output(g.rsqrt(positive) + g.reciprocal(positive) + g.square(x), "b")
        g.add_output(g.tanh(x) + g.sigmoid(x) + g.relu(x) + g.silu(x) + g.gelu(x), "c")

    return build


def binary_ops(rows: int, cols: int) -> Builder:
    """div, min, max, pow (a positive base) and sub, with broadcasting."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, cols], dtype)
        y = g.add_input("y", [cols], dtype)
        base = g.abs(x) + 0.5
        g.add_output(g.div(x, g.abs(y) + 0.5) - g.min(x, y), "q")
        g.add_output(g.pow(base, y) + g.max(x, 0.25), "p")

    return build


def reshape_reduce(rows: int, cols: int, split: int) -> Builder:
    """reshape, reduce_sum and reduce_max without keepdim, broadcast_to back."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, cols], dtype)
        parts = g.reshape(x, [rows * split, cols // split])
        total = g.reduce_sum(parts, -1)
        peak = g.reduce_max(parts, 1, keepdim=True)
        spread = g.broadcast_to(peak, [rows * split, cols // split]) - parts
        g.add_output(total, "total")
        g.add_output(spread, "spread")

    return build


def rank0_mix(rows: int, cols: int) -> Builder:
    """Rank-0 tensors: an input, a full reduction to a scalar, scalar outputs
    and a scalar broadcast into a row reduction."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [], dtype)
        y = g.add_input("y", [rows, cols], dtype)
        total = g.reduce_sum(y, [0, 1])
        g.add_output(g.exp(x) * total, "scaled_total")
        g.add_output(g.tanh(x), "scalar")
        g.add_output(g.softmax(y * x), "probs")

    return build


def channel_reduce(shape: list[int]) -> Builder:
    """Reductions over axis 1 with axes after it (strided rows): RMSNorm over
    the channels (keepdim), their mean and their max (without)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", shape, dtype)
        mean_square = g.reduce_mean(g.square(x), 1, keepdim=True)
        g.add_output(x * g.rsqrt(mean_square + 1e-5), "normed")
        g.add_output(g.reduce_mean(x, 1), "mean")
        g.add_output(g.reduce_max(x, 1), "peak")

    return build


def group_norm(shape: list[int], groups: int) -> Builder:
    """GroupNorm over NCHW: the rows are groups of channels, reshaped
    [N, G, C / G * H * W] (read through the reshape, not copied)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        n, c = shape[0], shape[1]
        x = g.add_input("x", shape, dtype)
        w = g.add_input("w", [c, 1, 1], dtype)
        rows = g.reshape(x, [n, groups, -1])
        mean = g.reduce_mean(rows, -1, keepdim=True)
        centred = rows - mean
        var = g.reduce_mean(g.square(centred), -1, keepdim=True)
        normed = g.reshape(centred * g.rsqrt(var + 1e-5), shape)
        g.add_output(normed * w, "y")

    return build


def batch_norm(shape: list[int]) -> Builder:
    """Training BatchNorm over NCHW: mean and variance over [0, 2, 3]
    (a run at a time: H x W rows, then the batch axis as strided rows)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", shape, dtype)
        mean = g.reduce_mean(x, [0, 2, 3], keepdim=True)
        centred = x - mean
        var = g.reduce_mean(g.square(centred), [0, 2, 3], keepdim=True)
        g.add_output(centred * g.rsqrt(var + 1e-5), "y")

    return build


def scans(shape: list[int]) -> Builder:
    """Scans along the last axis (contiguous rows) with a prologue and an
    epilogue, and reverse and exclusive; along the first (strided rows),
    exclusive, and reversed by flips (which fold into a reverse scan)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", shape, dtype)
        g.add_output(g.cumsum(x * 0.5, -1) + 1.0, "running")
        g.add_output(g.cumsum(x, -1, reverse=True, exclusive=True), "after")
        g.add_output(g.cumsum(x, 0, exclusive=True), "down")
        g.add_output(g.flip(g.cumsum(g.flip(x, 0), 0), 0), "up")

    return build


def running_extremes(shape: list[int]) -> Builder:
    """The other scans: a running product along the rows, cummax along them
    and cummin down the columns (strided), each with its positions (an
    int64 scan of where the extreme is, cast to the dtype)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", shape, dtype)
        g.add_output(g.cumprod(x * 0.02 + 1.0, -1), "product")
        top, at = g.cummax(x, -1)
        g.add_output(top, "top")
        g.add_output(g.cast(at, dtype), "top_at")
        bottom, at = g.cummin(x, 0)
        g.add_output(bottom * 2.0, "bottom")
        g.add_output(g.cast(at, dtype), "bottom_at")

    return build


def scan_edges(length: int) -> Builder:
    """Scans at awkward sizes: two long rows of odd length (vector 1, many
    steps, the last partial), rows of one element, a column of them (a
    strided scan of one row), a 1-D tensor (one row)."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [2, length], dtype)
        y = g.add_input("y", [5, 1], dtype)
        z = g.add_input("z", [777], dtype)
        g.add_output(g.cumsum(x, 1, reverse=True), "long")
        g.add_output(g.cumsum(y, 1) + g.cumsum(y, 0, exclusive=True), "ones")
        g.add_output(g.cumsum(z, 0), "flat")

    return build


def triangles(m: int, n: int, k: int) -> Builder:
    """triu of a product (in the gemm's epilogue) and tril in a pointwise
    kernel, on diagonals off the main one; batched."""

    def build(g: DataflowGraph, dtype: str) -> None:
        a = g.add_input("a", [2, m, k], dtype)
        b = g.add_input("b", [k, n], dtype)
        g.add_output(g.triu(a @ b, 1), "upper")
        g.add_output(g.tril(g.exp(a), -2) * 2.0, "lower")

    return build


def scatters(rows: int, cols: int, places: int) -> Builder:
    """scatter_add of exp(src) into x, `cols` values a row into `places`
    places (indices made in the kernel, each place taking several adds);
    index_copy of scaled rows into a cache along its middle axis, its
    positions an arange."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, places], dtype)
        src = g.add_input("src", [rows, cols], dtype)
        spread = g.iota([rows, cols], 1) * 7 + g.iota([rows, cols], 0)
        ids = g.remainder(spread, places)
        g.add_output(g.scatter_add(x, 1, ids, g.exp(src)), "added")
        cache = g.add_input("cache", [2, places, 3], dtype)
        new = g.add_input("new", [2, 4, 3], dtype)
        positions = g.iota([4], 0) * ((places - 1) // 4) + 1
        g.add_output(g.index_copy(cache, 1, positions, new * 2.0), "copied")

    return build


def windows(rows: int, cols: int) -> Builder:
    """Index maps of windows: a concat of a slice and a computed part (the
    sum of the parts padded), a pad along the rows, a slice of one column
    (torch's select), a flip."""

    def build(g: DataflowGraph, dtype: str) -> None:
        x = g.add_input("x", [rows, cols], dtype)
        y = g.add_input("y", [rows, 3], dtype)
        part = g.slice(x, 1, 3, cols - 5)
        g.add_output(g.concat([part, g.exp(y), x], 1), "joined")
        g.add_output(g.pad(x, 0, 2, 1) * 2.0, "padded")
        g.add_output(g.flip(x, 1) - g.slice(x, 1, cols - 1, 1), "flipped")

    return build


CASES: dict[str, Builder] = {
    "rms_norm_1x5120": rms_norm(1, 5120),
    "rms_norm_7x4099": rms_norm(7, 4099),
    "rms_norm_3x65536": rms_norm(3, 65536),
    "rms_norm_5x31": rms_norm(5, 31),
    "layer_norm_5x1000": layer_norm([5, 1000], 1),
    "layer_norm_3axes": layer_norm([2, 3, 16, 16], 3),
    "softmax_6x1023": softmax([6, 1023]),
    "softmax_2x70000": softmax([2, 70000]),
    "softmax_axis0": softmax([9, 5], axis=0),
    "log_softmax_4x257": log_softmax(4, 257),
    "rms_norm_silu_3x2048": rms_norm_silu(3, 2048),
    "gelu_affine_100003": gelu_affine(100003),
    "broadcast_mix_33x65": broadcast_mix(33, 65),
    "rope_2x7x64": rope(2, 7, 64),
    "transpose_cast_17x9": transpose_cast(17, 9),
    "gemm_bias_gelu_100x70x130": gemm_bias_gelu(100, 70, 130),
    "gemm_bias_gelu_decode_1x64x300": gemm_bias_gelu(1, 64, 300),
    "gemm_batched_2x3x33x20x17": gemm_batched([2, 3], 33, 20, 17),
    "gemm_transpose_a_50x31x40": gemm_transpose_a(50, 31, 40),
    # Tensor cores (f16 and bf16; f32 as 3xTF32): tiles that divide the
    # matrices, partial tiles along M, N and K, K shorter than the copy
    # pipeline, K longer than it (17 steps through 4 stages), a batched
    # product with a broadcast transposed weight, a transposed A.
    "gemm_bias_gelu_256x64x128": gemm_bias_gelu(256, 64, 128),
    "gemm_bias_gelu_300x520x264": gemm_bias_gelu(300, 520, 264),
    "gemm_bias_gelu_200x72x136": gemm_bias_gelu(200, 72, 136),
    "gemm_bias_gelu_64x16x8": gemm_bias_gelu(64, 16, 8),
    "gemm_batched_2x80x40x24": gemm_batched([2], 80, 40, 24),
    "gemm_transpose_a_136x48x64": gemm_transpose_a(136, 48, 64),
    # Enough 128x128 tiles for the SIMT kernel's large tiles (8x8 a
    # thread); K = 23 keeps f16 and bf16 off tensor cores; partial tiles.
    "gemm_simt_large_1537x23x1409": gemm_bias_gelu(1537, 23, 1409),
    # GEMV (at most 8 rows, B stored [K, N]): K longer than a loop trip of
    # every lane, N not a whole number of blocks, odd N (runs of one
    # column) with K not a multiple of the lanes, 8 rows (256 threads for
    # f16 and bf16, 512 for f32), batches, A transposed.
    "gemv_bias_gelu_1x4096x520": gemm_bias_gelu(1, 4096, 520),
    "gemv_bias_gelu_5x300x1001": gemm_bias_gelu(5, 300, 1001),
    "gemv_bias_gelu_8x264x104": gemm_bias_gelu(8, 264, 104),
    "gemv_batched_2x3x1x200x72": gemv_batched([2, 3], 1, 200, 72),
    "gemv_transpose_a_2x33x48": gemm_transpose_a(2, 33, 48),
    # A matrix times a column vector: the GEMV of its transpose, A read as a
    # weight stored [N, K] (K a partial round of vectors) or [K, N].
    "matvec_1100x1000": matvec(1100, 1000),
    "matvec_transpose_a_300x72": matvec(300, 72, transpose_a=True),
    # GEMV with B stored [N, K] (x @ w.T): a warp a column, K in 16-byte
    # vectors (a partial last round: K not a whole 32 vectors), the last
    # block's columns past N; 6 and 8 rows: two columns a warp (1001: a
    # warp whose second column lies past N); K odd (one element a lane);
    # batched with the weight broadcast, the matmul also an output.
    "gemv_nk_bias_gelu_1x1000x517": gemm_nk_bias_gelu(1, 1000, 517),
    "gemv_nk_bias_gelu_8x264x104": gemm_nk_bias_gelu(8, 264, 104),
    "gemv_nk_residual_6x520x1001": gemm_nk_residual(6, 520, 1001),
    "gemv_nk_bias_gelu_3x17x33": gemm_nk_bias_gelu(3, 17, 33),
    "gemv_nk_batched_2x3x40x24": gemm_batched([2], 3, 40, 24),
    "attention_causal_2x37x16": attention(2, 37, 16, True),
    "attention_2x17x1000x80": attention(2, 17, 80, False, keys=1000),
    "attention_causal_1x130x100x64": attention(1, 130, 64, True, keys=100),
    "attention_bias_grouped_8x4x40x70x64": attention_bias_grouped(8, 4, 40, 70, 64),
    "attention_decode_2x8x2x3x1000x64": attention_decode(2, 8, 2, 3, 1000, 64),
    # Outputs stored through a layout: a projection split into heads (a
    # tiled gemm, partial along M; a GEMV) and attention's heads merged.
    "linear_heads_37x64x4x16": linear_heads(37, 64, 4, 16),
    "linear_heads_decode_2x256x4x32": linear_heads(2, 256, 4, 32),
    "attention_merged_heads_4x37x32": attention_merged_heads(4, 37, 32),
    "passthrough_1000": passthrough(1000),
    "unary_ops_3x517": unary_ops(3, 517),
    "binary_ops_5x129": binary_ops(5, 129),
    "reshape_reduce_6x40": reshape_reduce(6, 40, 4),
    "rank0_mix_5x7": rank0_mix(5, 7),
    # Vector accesses: runs of 4 f32 or 8 f16/bf16 along the innermost axis,
    # with row/column broadcasts, a partial last run, a transposed read
    # (scalar loads, vector stores) and a 1-D stream.
    "broadcast_mix_6x40": broadcast_mix(6, 40),
    "rms_norm_silu_3x2056": rms_norm_silu(3, 2056),
    "transpose_cast_16x8": transpose_cast(16, 8),
    "gelu_affine_4096": gelu_affine(4096),
    "gelu_affine_12": gelu_affine(12),
    # Row schedules at their switch points (f32; f16 and bf16 switch at twice
    # the length): up to 256 elements a power of two of threads per row and
    # several rows per block (the last block's rows partly past the end),
    # then a block per row up to 1024 x 8 and 1024 x 32 elements, then
    # blocks of a row that exchange partial results (a partial last part,
    # dependent reductions, more rows than groups of blocks at once).
    "softmax_5x256": softmax([5, 256]),
    "softmax_5x260": softmax([5, 260]),
    "softmax_3x8192": softmax([3, 8192]),
    "softmax_3x8200": softmax([3, 8200]),
    "softmax_2x32768": softmax([2, 32768]),
    "softmax_2x32772": softmax([2, 32772]),
    "layer_norm_3x40000": layer_norm([3, 40000], 1),
    "softmax_300x33000": softmax([300, 33000]),
    # Rows whose groups would not all be resident (100 x 3 blocks > 264):
    # 2 blocks a row, each walking its part in two passes, one round.
    "softmax_100x40000": softmax([100, 40000]),
    "masked_softmax_3x70000": masked_softmax(3, 70000),
    # More rows than a grid's y or z dimension holds (65535).
    "rms_norm_70000x8": rms_norm(70000, 8),
    "softmax_66000x5": softmax([66000, 5]),
    # Strided rows (a thread a row): held in registers, the last block's
    # rows partly past the end; walked in passes (70 elements, 16400 rows).
    "channel_reduce_3x24x5x7": channel_reduce([3, 24, 5, 7]),
    "channel_reduce_1x70x16400": channel_reduce([1, 70, 16400]),
    "group_norm_3x8x5x7": group_norm([3, 8, 5, 7], 4),
    "batch_norm_5x40x3x7": batch_norm([5, 40, 3, 7]),
    # Scans: rows of 37 on 16 lanes, several rows a block (the last block's
    # partly past the end), strided rows in 9 steps (the last partial);
    # rows of 1000 a block each in one partial step; rows of 20000 in 5
    # steps of 256 threads (3 in f16/bf16), the last partial; 98 steps of
    # an odd row, rows of one element, one strided row, a 1-D tensor.
    "scans_71x37": scans([71, 37]),
    "scans_5x1000": scans([5, 1000]),
    "scans_3x20000": scans([3, 20000]),
    "scan_edges_100003": scan_edges(100003),
    "running_extremes_9x37": running_extremes([9, 37]),
    "running_extremes_3x5000": running_extremes([3, 5000]),
    "windows_5x37": windows(5, 37),
    # Scatters: atomic adds, several to a place; an index_copy at positions.
    "scatters_37x100x33": scatters(37, 100, 33),
    "triangles_70x33x24": triangles(70, 33, 24),
}

DTYPES = ("float32", "float16", "bfloat16")

WGMMA_ARCH = "sm_90a"
WGMMA_DTYPES = ("float16", "bfloat16")
WGMMA_CASES: dict[str, Builder] = {
    # Compiled for sm_90a, where tensor-core gemms run on wgmma: 128x256
    # tiles that divide the matrices; partial tiles along M, N and K (K not
    # a whole 64-element step, N not a whole 64-column block); a 128x128
    # tile (N <= 128); K much longer than the pipeline (16 steps through 4
    # stages); a batched product with a broadcast transposed weight (B
    # K-major), both outputs stored through shared memory, and again with N
    # not whole 16-byte rows (stored directly); a transposed A (A MN-major),
    # partial along M.
    "wgmma_bias_gelu_256x128x512": gemm_bias_gelu(256, 128, 512),
    "wgmma_bias_gelu_300x264x520": gemm_bias_gelu(300, 264, 520),
    "wgmma_bias_gelu_200x136x72": gemm_bias_gelu(200, 136, 72),
    "wgmma_bias_gelu_130x1000x264": gemm_bias_gelu(130, 1000, 264),
    "wgmma_batched_2x80x40x24": gemm_batched([2], 80, 40, 24),
    "wgmma_batched_2x80x40x21": gemm_batched([2], 80, 40, 21),
    "wgmma_transpose_a_136x48x264": gemm_transpose_a(136, 48, 264),
    # The schedule classes kernel-schedule picks by shape (WGMMA_SCHEDULES):
    # 64-row tiles of one warpgroup, 64 to 256 columns, and split-K (parts
    # of K added in order by the last block of a tile), at partial tiles
    # along M, N and K, for B stored [N, K] (x @ w.T) and [K, N], with few
    # rows (9 and 20: the small-M path), batched, unequal parts.
    "wgmma_nk_split_20x3000x1500": gemm_nk_bias_gelu(20, 3000, 1500),
    "wgmma_split_9x4096x64": gemm_bias_gelu(9, 4096, 64),
    "wgmma_nk_70x1024x4000": gemm_nk_bias_gelu(70, 1024, 4000),
    "wgmma_nk_split_130x4000x1500": gemm_nk_bias_gelu(130, 4000, 1500),
    "wgmma_nk_split_130x6000x3000": gemm_nk_bias_gelu(130, 6000, 3000),
    "wgmma_nk_split_200x8192x1536": gemm_nk_bias_gelu(200, 8192, 1536),
    "wgmma_bias_gelu_1030x512x2048": gemm_bias_gelu(1030, 512, 2048),
    "wgmma_batched_split_3x20x2048x64": gemm_batched([3], 20, 2048, 64),
    # The persistent TMA kernel as kernel-schedule picks it, partial along
    # M, N and K: 128-row tiles 208, 160 and 128 wide (5 x 25, 5 x 26 and
    # 4 x 32 tiles); 66 tiles of 128x144 with 128 K steps: split-K, two
    # parts of 64 steps; few rows (20 and 100): 64-row tiles of one
    # consumer warpgroup, narrow enough to give most SMs a tile (125 of
    # 64x72, 2 x 63 of 64x80), and as many stages as fit (13, 12).
    "wgmma_nk_persistent_split_144_384x8192x3072": gemm_nk_bias_gelu(384, 8192, 3072),
    "wgmma_nk_persistent_208_520x2000x5200": gemm_nk_bias_gelu(520, 2000, 5200),
    "wgmma_nk_persistent_160_520x1000x4100": gemm_nk_bias_gelu(520, 1000, 4100),
    "wgmma_nk_persistent_128_400x8320x4000": gemm_nk_residual(400, 8320, 4000),
    "wgmma_nk_persistent_72_20x1000x9000": gemm_nk_bias_gelu(20, 1000, 9000),
    "wgmma_nk_persistent_80_100x2000x5000": gemm_nk_residual(100, 2000, 5000),
    # 64-row tiles under 64 columns (32 and 48), above NARROW_MIN_ROWS
    # rows: partial N and K (4100 columns, 47 K steps), two row tiles.
    "wgmma_nk_persistent_32_50x3000x4100": gemm_nk_residual(50, 3000, 4100),
    "wgmma_nk_persistent_48_100x3000x3000": gemm_nk_bias_gelu(100, 3000, 3000),
    # Decode on sm_90a, B stored [N, K]: from 2 rows wgmma where its
    # estimate beats the GEMV's, its 64-row tiles mostly rows past M (the
    # persistent kernel at 3 rows, partial N and K; the cp.async kernel).
    # (Where the GEMV wins, it is the GEMV of the other targets: the
    # gemv_nk_* cases; lit's kernel-schedule.mlir has the choice.)
    "wgmma_nk_persistent_64_3x4000x8200": gemm_nk_bias_gelu(3, 4000, 8200),
    "wgmma_nk_3x6000x6000": gemm_nk_residual(3, 6000, 6000),
    # Attention on wgmma: partial tiles of queries and keys with the causal
    # mask (head dim 128); keys split across blocks (flash-decoding's
    # combine, head dim 64); repeat_kv's grouped heads with a bias per head.
    "wgmma_attention_causal_2x300x257x128": attention(2, 300, 128, True, keys=257),
    "wgmma_attention_1x200x2000x64": attention(1, 200, 64, False, keys=2000),
    "wgmma_attention_bias_grouped_8x4x40x70x64": attention_bias_grouped(
        8, 4, 40, 70, 64
    ),
    # Sibling matmuls of one lhs (gate and up): one persistent TMA kernel,
    # as kernel-schedule picks it and by hand (split-K; B stored [K, N] in
    # clusters, the up product an output too; 64-row tiles in clusters).
    "wgmma_siblings_nk_300x520x1000": gemm_siblings(300, 520, 1000, True),
    "wgmma_tma_siblings_nk_cluster_70x384x4096": gemm_siblings(70, 384, 4096, True),
    # Projections split into heads of 128 ([T, H * D] -> [H, T, D]) as
    # kernel-schedule picks their kernel: the persistent TMA kernel
    # (partial along M), split-K, the cp.async kernel; attention's heads
    # merged back ([H, T, D] -> [T, H * D]), staged through shared memory.
    "wgmma_nk_persistent_linear_heads_100x2048x40x128": linear_heads(
        100, 2048, 40, 128
    ),
    "wgmma_nk_split_linear_heads_20x3072x12x128": linear_heads(20, 3072, 12, 128),
    "wgmma_nk_linear_heads_70x1024x32x128": linear_heads(70, 1024, 32, 128),
    "wgmma_attention_merged_heads_4x300x128": attention_merged_heads(4, 300, 128),
    # q, k and v of one x, with grouped KV heads, as one persistent TMA
    # kernel whose tiles are each one projection's, as kernel-schedule
    # picks it (Qwen2.5-7B's widths at 130 tokens: partial along M; 300
    # tokens, 3 row tiles) and by hand (TMA_GEMMS: tiles 80 wide of
    # projections 240 and 144 wide, each sibling's last tile partial, 4
    # blocks looping over 21 tiles; clusters of two).
    "wgmma_nk_persistent_qkv_heads_130x3584x28x4x128": qkv_heads(130, 3584, 28, 4, 128),
    "wgmma_nk_persistent_qkv_heads_300x1024x8x2x128": qkv_heads(300, 1024, 8, 2, 128),
    "wgmma_tma_qkv_heads_partial_100x512x5x3x48": qkv_heads(100, 512, 5, 3, 48),
    "wgmma_tma_qkv_heads_cluster_200x512x4x2x64": qkv_heads(200, 512, 4, 2, 64),
    # The persistent TMA gemm, by the hand schedules of TMA_GEMMS.
    "wgmma_tma_kn_partial_300x520x1000": gemm_bias_gelu(300, 520, 1000),
    "wgmma_tma_nk_residual_70x4096x384": gemm_nk_residual(70, 4096, 384),
    "wgmma_tma_nk_cluster_300x520x1000": gemm_nk_bias_gelu(300, 520, 1000),
    "wgmma_tma_kn_cluster_1100x200x640": gemm_plain(1100, 200, 640),
    "wgmma_tma_nk_cluster_residual_70x4096x384": gemm_nk_residual(70, 4096, 384),
    "wgmma_tma_nk_split_300x520x1000": gemm_nk_bias_gelu(300, 520, 1000),
    "wgmma_tma_kn_cluster_split_1100x200x640": gemm_plain(1100, 200, 640),
    "wgmma_tma_nk_narrow_1030x520x2000": gemm_nk_bias_gelu(1030, 520, 2000),
    "wgmma_tma_nk_cluster_narrow_300x520x1000": gemm_nk_residual(300, 520, 1000),
}


WGMMA_SCHEDULES = {
    # case: (tile M, tile N, stages, split, persistent blocks) that
    # kernel-schedule gives it
    "wgmma_nk_split_20x3000x1500": (64, 64, 8, 4, 0),
    "wgmma_split_9x4096x64": (64, 64, 8, 16, 0),
    "wgmma_nk_70x1024x4000": (64, 64, 8, 1, 0),
    "wgmma_nk_split_130x4000x1500": (64, 128, 8, 3, 0),
    "wgmma_nk_split_130x6000x3000": (64, 256, 4, 3, 0),
    "wgmma_nk_split_200x8192x1536": (128, 128, 6, 5, 0),
    "wgmma_nk_persistent_split_144_384x8192x3072": (128, 144, 6, 2, 132),
    "wgmma_nk_persistent_linear_heads_100x2048x40x128": (64, 80, 12, 1, 132),
    "wgmma_nk_split_linear_heads_20x3072x12x128": (64, 64, 8, 4, 0),
    "wgmma_nk_linear_heads_70x1024x32x128": (64, 64, 8, 1, 0),
    "wgmma_bias_gelu_1030x512x2048": (128, 256, 4, 1, 0),
    "wgmma_batched_split_3x20x2048x64": (64, 64, 8, 8, 0),
    "wgmma_nk_persistent_208_520x2000x5200": (128, 208, 5, 1, 132),
    "wgmma_nk_persistent_160_520x1000x4100": (128, 160, 6, 1, 132),
    "wgmma_nk_persistent_128_400x8320x4000": (128, 128, 7, 1, 132),
    "wgmma_nk_persistent_72_20x1000x9000": (64, 72, 13, 1, 132),
    "wgmma_nk_persistent_80_100x2000x5000": (64, 80, 12, 1, 132),
    "wgmma_nk_persistent_32_50x3000x4100": (64, 32, 16, 1, 132),
    "wgmma_nk_persistent_48_100x3000x3000": (64, 48, 16, 1, 132),
    "wgmma_nk_persistent_64_3x4000x8200": (64, 64, 14, 1, 132),
    "wgmma_nk_3x6000x6000": (64, 64, 8, 1, 0),
    "wgmma_siblings_nk_300x520x1000": (128, 64, 7, 1, 132),
    "wgmma_nk_persistent_qkv_heads_130x3584x28x4x128": (128, 128, 7, 1, 132),
    "wgmma_nk_persistent_qkv_heads_300x1024x8x2x128": (128, 128, 7, 1, 132),
}
"""The schedule class each case stands for (test_tile checks they keep it)."""


TMA_GEMMS = {
    # case: (tile M, tile N, stages, persistent blocks, cluster, split) by hand
    "wgmma_tma_kn_partial_300x520x1000": (128, 256, 4, 7, 1, 1),
    "wgmma_tma_nk_residual_70x4096x384": (64, 128, 4, 7, 1, 1),
    "wgmma_tma_nk_cluster_300x520x1000": (128, 256, 4, 8, 2, 1),
    "wgmma_tma_kn_cluster_1100x200x640": (128, 128, 6, 6, 2, 1),
    "wgmma_tma_nk_cluster_residual_70x4096x384": (64, 128, 4, 4, 2, 1),
    "wgmma_tma_nk_split_300x520x1000": (128, 256, 4, 5, 1, 3),
    "wgmma_tma_kn_cluster_split_1100x200x640": (128, 128, 6, 6, 2, 2),
    "wgmma_tma_nk_narrow_1030x520x2000": (128, 144, 6, 5, 1, 1),
    "wgmma_tma_nk_cluster_narrow_300x520x1000": (128, 176, 5, 6, 2, 1),
    "wgmma_tma_siblings_nk_cluster_70x384x4096": (64, 64, 6, 4, 2, 1),
    "wgmma_tma_qkv_heads_partial_100x512x5x3x48": (64, 80, 8, 4, 1, 1),
    "wgmma_tma_qkv_heads_cluster_200x512x4x2x64": (128, 64, 6, 4, 2, 1),
}
"""The persistent TMA gemm by hand schedules: each case (in WGMMA_CASES)
compiles with this schedule for its gemm kernel (`hand_schedules`). Blocks
that loop over several tiles (4 to 8 blocks), partial tiles along M, N and
K, B stored either way, epilogues; clusters of two blocks multicasting
B's tile, among them blocks whose rows lie wholly past M (300 and 70
rows in cluster tiles of 256 and 128); split-K, each tile's K steps in 2
or 3 parts (36 parts of tiles for 5 blocks; a cluster's two blocks taking
the same part of their row tiles); tiles 144 and 176 wide (not whole
64-column blocks; the 176 ones in a cluster, each block loading 88 rows
of B). The kernel as kernel-schedule picks it, B stored [N, K] in tiles
128, 160 and 208 wide, is in the cases wgmma_nk_persistent_*
(WGMMA_SCHEDULES)."""


def hand_schedules(case: str) -> dict | None:
    """The schedules `compile(graph, schedules=...)` takes for a case: a
    TMA_GEMMS case's, else None (kernel-schedule's)."""
    if case not in TMA_GEMMS:
        return None
    from molten.passes.schedule.common import wgmma_tile_schedule

    rows, cols, stages, blocks, cluster, split = TMA_GEMMS[case]
    schedule = wgmma_tile_schedule(
        rows, cols, stages, split=split, persistent=blocks, cluster=cluster
    )
    return {f"{case}_gemm0": schedule}


# -- the sweeps' shared compiles ----------------------------------------------
#
# Several sweeps check the same (case, dtype, arch): nvcc (test_codegen),
# NVRTC (test_runtime) and the golden digests (test_generated_sources). Each
# worker compiles a case once; the sweeps mark each case with one xdist
# group (`--dist loadgroup`), so that one worker runs all of a case's checks
# and the case's batch-mates in the nvcc sweep (test_codegen).

REPRESENTATIVES = (
    "attention_2x17x1000x80",
    "attention_bias_grouped_8x4x40x70x64",
    "attention_decode_2x8x2x3x1000x64",
    "binary_ops_5x129",
    "gemm_batched_2x80x40x24",
    "layer_norm_3x40000",
    "passthrough_1000",
    "rank0_mix_5x7",
)
"""One kernel case per distinct set of device helpers and runtime calls its
source uses (`molten_*` and `cuda*` names, their numbers aside; found
2026-11-27): the checks of what depends only on those, not on the kernels'
arithmetic (NVRTC's headers and options, the host launchers' C++), take
these, while nvcc compiles every case's device code (test_codegen). A case
that brings a new helper or runtime call joins the list."""
WGMMA_REPRESENTATIVES = (
    "wgmma_attention_1x200x2000x64",
    "wgmma_attention_bias_grouped_8x4x40x70x64",
    "wgmma_attention_causal_2x300x257x128",
    "wgmma_batched_2x80x40x21",
    "wgmma_batched_split_3x20x2048x64",
    "wgmma_bias_gelu_1030x512x2048",
    "wgmma_nk_persistent_128_400x8320x4000",
    "wgmma_nk_persistent_split_144_384x8192x3072",
    "wgmma_split_9x4096x64",
    "wgmma_tma_kn_cluster_1100x200x640",
    "wgmma_tma_kn_cluster_split_1100x200x640",
    "wgmma_tma_kn_partial_300x520x1000",
    "wgmma_tma_nk_cluster_300x520x1000",
    "wgmma_transpose_a_136x48x264",
)
"""REPRESENTATIVES of the sm_90a cases."""

NVCC_BATCH = 22
"""Cases of one dtype that test_codegen hands nvcc in one translation unit:
nvcc's fixed cost (its headers preprocessed and parsed once per arch) is
about 2 CPU-seconds a unit on the 2-core development machine, more than most
kernels; the time of the kernels themselves grows linearly with the unit
(two units of 8 cases 28.3 CPU-seconds, the same 16 in one 26.9). Three
units a dtype (22, 22 and 21 of the 65 cases), each case's checks in its
unit's xdist group: 9 groups to spread over the workers, not 27."""


def compiled_case(case: str, dtype: str, arch: str = "sm_90"):
    """`ZeroCompiler(arch).compile` of a kernel case (CASES, or WGMMA_CASES
    for sm_90a), once per process.

    One cache entry per (case, dtype, arch) however it is called:
    functools.cache keys `f(case, dtype)` and `f(case, dtype, "sm_90")`
    apart, and the golden digests (which name the arch) compiled every sm_90
    case a second time after the nvcc sweep (which does not)."""
    return _compiled_case(case, dtype, arch)


@functools.cache
def _compiled_case(case: str, dtype: str, arch: str):
    from molten import ZeroCompiler

    build = (WGMMA_CASES if arch == WGMMA_ARCH else CASES)[case]
    g = DataflowGraph(case)
    build(g, dtype)
    compiled = ZeroCompiler(arch=arch).compile(g, schedules=hand_schedules(case))
    # Kept for the rest of the session: frozen out of the garbage
    # collector's walks at once (as conftest.py does after each test), not
    # after the test that compiles a whole nvcc batch of them (22 to 49
    # cases, whose later compiles each walked the earlier ones' objects).
    gc.collect()
    gc.freeze()
    return compiled


def nvcc_batch(case: str) -> tuple[str, ...]:
    """The cases compiled in one nvcc run with `case` (for each dtype)."""
    names = sorted(CASES)
    start = names.index(case) // NVCC_BATCH * NVCC_BATCH
    return tuple(names[start : start + NVCC_BATCH])


def case_group(case: str, dtype: str) -> str:
    """The xdist group of a case's checks: its nvcc batch and dtype."""
    if case not in CASES:  # the sm_90a gemms: one nvcc batch a dtype
        return f"{WGMMA_ARCH}/{dtype}"
    return f"{nvcc_batch(case)[0]}/{dtype}"


def case_params(cases, dtypes, *extra) -> list:
    """pytest params (case, dtype, *extra) for every pair, each in its
    case's xdist group."""
    import pytest

    return [
        pytest.param(
            case,
            dtype,
            *more,
            marks=pytest.mark.xdist_group(case_group(case, dtype)),
            id="-".join([case, dtype, *map(str, more)]),
        )
        for case in sorted(cases)
        for dtype in dtypes
        for more in itertools.product(*extra)
    ]
