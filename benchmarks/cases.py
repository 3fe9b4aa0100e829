"""The benchmark suites: each case is the math written once for Molten (graph
ops) and once for PyTorch, with its shapes and dtype.

The PyTorch side is what a user would write (`F.rms_norm`, `x @ w + b`);
`torch.compile` compiles that same function. torch is needed to run a case,
not to define or list it, so this module imports without it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from molten import ops
from molten.ir import DataflowGraph
from molten.runtime.program import ITEMSIZES

try:  # torch runs the peers; listing and compiling the cases needs none
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - exercised where torch is absent
    torch = F = None

DTYPES = ("float32", "float16", "bfloat16")
SHORT_DTYPE = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
RMS_EPS = 1e-6
LAYER_NORM_EPS = 1e-5


@dataclass(frozen=True)
class Operand:
    """One input: its name, shape and how its random values are drawn
    (`normal`: N(0, 1); `weight`: 1 + N(0, 0.1); `bias`: N(0, 0.1);
    `scaled`: N(0, 1/fan_in) with fan_in its first dimension, so x @ w stays
    of order one;
    `scaled_nk`: the same with fan_in its last, for x @ w.T;
    `index`: integers in [0, `high`), of `dtype`: ids into a table)."""

    name: str
    shape: tuple[int, ...]
    init: str = "normal"
    dtype: str | None = None
    """The operand's dtype where it is not the case's (an index's)."""
    high: int = 0


@dataclass(frozen=True)
class Case:
    """One benchmark: `molten` and `torch` compute the same outputs from the
    same operands. `flops` is set for compute-bound cases (2MNK for a
    matmul); `references` are extra PyTorch timings shown beside the peers
    (e.g. the matmul alone). `compile_mode` is torch.compile's mode."""

    suite: str
    op: str
    shape: tuple[int, ...]
    dtype: str
    operands: tuple[Operand, ...]
    molten: Callable[..., Any]
    torch: Callable[..., Any]
    flops: int = 0
    compile_mode: str = "default"
    references: dict[str, Callable[..., Any]] = field(default_factory=dict)
    graphed: bool = False
    """Whether Molten's call is also timed captured as a CUDA graph
    (`molten-graph`: `compiled.cuda_graph(...)` replayed)."""
    build: Callable[[str], DataflowGraph] | None = None
    """Builds the graph (given its name) where `molten` is not a function
    to trace: a whole decoder layer from examples/."""
    dynamic: bool = False
    """Whether Molten is also timed as one graph for every token count
    (`molten-dynamic`: `dynamic_graph`, compiled once for all the cases
    of its op, width and dtype)."""
    tokens_axis: int = 0
    """Where the token count is in `shape`, and in the operands that take
    it (an attention's [batch, heads, sequence, head dim]: 2)."""
    build_over_tokens: Callable[[str], DataflowGraph] | None = None
    """Builds the graph over a named token count T (given its name) where
    `build` builds it at the case's count: `dynamic_graph`'s."""
    backend: bool = False
    """Whether the case's PyTorch function is also timed through
    `torch.compile(backend="molten")` (`molten-backend`: the front door
    against the graph API's own kernels)."""
    touched: int | None = None
    """The bytes the case must move where that is not every input once (a
    lookup reads the rows its ids name, not the whole table)."""

    @property
    def id(self) -> str:
        return f"{self.op}-{'x'.join(map(str, self.shape))}-{SHORT_DTYPE[self.dtype]}"

    def graph(self) -> DataflowGraph:
        """The Molten graph of this case."""
        name = self.id.replace("-", "_").replace("*", "_").replace(".", "_")
        if self.build is not None:
            return self.build(name)
        return DataflowGraph.trace(
            self.molten,
            [(o.name, o.shape, o.dtype or self.dtype) for o in self.operands],
            name,
        )

    def dynamic_graph(self) -> DataflowGraph:
        """The graph with its token dimension (axis `tokens_axis` of the
        operands that have the case's token count there) named T; named
        without the token count, so that the cases of other token counts
        share it."""
        axis = self.tokens_axis
        tokens = self.shape[axis]
        rest = "x".join(map(str, self.shape[:axis] + self.shape[axis + 1 :]))
        name = f"{self.op}_T_{rest}_{SHORT_DTYPE[self.dtype]}".replace("*", "_")
        name = name.replace("-", "_").replace(".", "_")
        if self.build_over_tokens is not None:
            return self.build_over_tokens(name)
        operands = [
            (
                o.name,
                (*o.shape[:axis], "T", *o.shape[axis + 1 :])
                if _takes_tokens(o, tokens, axis)
                else o.shape,
            )
            for o in self.operands
        ]
        return DataflowGraph.trace(
            self.molten, [(n, shape, self.dtype) for n, shape in operands], name
        )

    @property
    def bytes(self) -> int:
        """The minimal bytes moved: each input read once, each output written
        once (or what the case touches)."""
        return self.touched or minimal_bytes(self.graph())

    def make_inputs(self, device: Any, seed: int) -> list[Any]:
        """Fresh random operands on `device` (torch tensors of `dtype`)."""
        generator = torch.Generator(device=device).manual_seed(seed)
        dtype = getattr(torch, self.dtype)
        tensors = []
        for operand in self.operands:
            if operand.init == "index":
                tensors.append(
                    torch.randint(
                        0,
                        operand.high,
                        operand.shape,
                        generator=generator,
                        device=device,
                        dtype=getattr(torch, operand.dtype or "int64"),
                    )
                )
                continue
            x = torch.randn(
                operand.shape, generator=generator, device=device, dtype=torch.float32
            )
            if operand.init == "weight":
                x = 1 + 0.1 * x
            elif operand.init == "bias":
                x = 0.1 * x
            elif operand.init == "scaled":
                x = x / math.sqrt(operand.shape[0])
            elif operand.init == "scaled_nk":
                x = x / math.sqrt(operand.shape[-1])
            tensors.append(x.to(dtype))
        return tensors


def minimal_bytes(graph: DataflowGraph) -> int:
    """Each input of `graph` read once, each output written once, in bytes."""
    tensors = graph.inputs + graph.outputs
    return sum(math.prod(t.shape) * ITEMSIZES[t.dtype] for t in tensors)


# ---------------------------------------------------------------------------
# The math, once for each side.
# ---------------------------------------------------------------------------


def molten_rms_norm(x, w):
    return ops.rms_norm(x, w, eps=RMS_EPS)


def torch_rms_norm(x, w):
    return F.rms_norm(x, w.shape, w, eps=RMS_EPS)


def molten_rms_norm_silu(x, w, gate):
    return ops.rms_norm(x, w, eps=RMS_EPS) * ops.silu(gate)


def torch_rms_norm_silu(x, w, gate):
    return F.rms_norm(x, w.shape, w, eps=RMS_EPS) * F.silu(gate)


def molten_layer_norm(x, w, b):
    return ops.layer_norm(x, w, b, eps=LAYER_NORM_EPS)


def torch_layer_norm(x, w, b):
    return F.layer_norm(x, w.shape, w, b, eps=LAYER_NORM_EPS)


def molten_softmax(x):
    return ops.softmax(x, axis=-1)


def torch_softmax(x):
    return torch.softmax(x, dim=-1)


def molten_gelu_affine(x, a, b, c):
    return ops.gelu(x * a + b) * c


def torch_gelu_affine(x, a, b, c):
    return F.gelu(x * a + b) * c


def molten_matmul_gelu(x, w, b):
    return ops.gelu(x @ w + b)


def torch_matmul_gelu(x, w, b):
    return F.gelu(x @ w + b)


def torch_matmul(x, w, b):
    return x @ w


def molten_linear_gelu(x, w, b):
    """gelu(x @ w.T + b), w stored [N, K] as nn.Linear stores it."""
    return ops.gelu(ops.matmul(x, w, transpose_b=True) + b)


def torch_linear_gelu(x, w, b):
    return F.gelu(F.linear(x, w, b))


def torch_linear(x, w, b):
    return x @ w.T


def molten_attention(causal: bool) -> Callable[..., Any]:
    def attention(q, k, v):
        return ops.attention(q, k, v, causal=causal)

    return attention


def torch_attention(causal: bool) -> Callable[..., Any]:
    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return attention


def torch_flex_attention(causal: bool) -> Callable[..., Any]:
    """torch's FlexAttention, compiled by torch.compile (a Triton kernel),
    with the causal mask as a block mask made once per shape."""
    compiled: dict[Any, Any] = {}

    def attention(q, k, v):
        from torch.nn.attention.flex_attention import (
            create_block_mask,
            flex_attention,
        )

        if "flex" not in compiled:
            compiled["flex"] = torch.compile(flex_attention, dynamic=False)
        mask = None
        if causal:
            shape = (q.shape[-2], k.shape[-2])
            if shape not in compiled:
                compiled[shape] = create_block_mask(
                    lambda b, h, q_index, k_index: q_index >= k_index,
                    None,
                    None,
                    *shape,
                    device=q.device,
                )
            mask = compiled[shape]
        return compiled["flex"](q, k, v, block_mask=mask)

    return attention


def molten_decode(q, k, v):
    """Grouped-query attention as Hugging Face's repeat_kv writes it: each KV
    head repeated for the query heads of its group."""
    b, kv_heads, keys, d = k.shape.dims
    heads = q.shape.dims[1]
    group = heads // kv_heads

    def repeated(t):
        t = ops.broadcast_to(
            ops.reshape(t, [b, kv_heads, 1, keys, d]), [b, kv_heads, group, keys, d]
        )
        return ops.reshape(t, [b, heads, keys, d])

    return ops.attention(q, repeated(k), repeated(v))


def torch_decode(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


# ---------------------------------------------------------------------------
# The suites.
# ---------------------------------------------------------------------------


def seed_suite() -> list[Case]:
    cases = []
    for dtype in DTYPES:
        for hidden in (5120, 3584):
            for tokens in (1, 2048, 8192):
                cases.append(
                    Case(
                        "seed",
                        "rms_norm",
                        (tokens, hidden),
                        dtype,
                        (
                            Operand("x", (tokens, hidden)),
                            Operand("w", (hidden,), "weight"),
                        ),
                        molten_rms_norm,
                        torch_rms_norm,
                        dynamic=True,
                    )
                )
        for tokens in (1, 2048, 8192):
            shape = (tokens, 5120)
            cases.append(
                Case(
                    "seed",
                    "rms_norm*silu",
                    shape,
                    dtype,
                    (
                        Operand("x", shape),
                        Operand("w", (5120,), "weight"),
                        Operand("gate", shape),
                    ),
                    molten_rms_norm_silu,
                    torch_rms_norm_silu,
                    dynamic=True,
                )
            )
    return cases


def norms_suite() -> list[Case]:
    layer_shape = (16, 64, 256, 256)
    return [
        Case(
            "norms",
            "layer_norm",
            layer_shape,
            "float32",
            (
                Operand("x", layer_shape),
                Operand("w", layer_shape[1:], "weight"),
                Operand("b", layer_shape[1:]),
            ),
            molten_layer_norm,
            torch_layer_norm,
        ),
        *(
            Case(
                "norms",
                "softmax",
                shape,
                dtype,
                (Operand("x", shape),),
                molten_softmax,
                torch_softmax,
            )
            for shape, dtype in (((4096, 65536), "float32"), ((8192, 5120), "float16"))
        ),
    ]


def elementwise_suite() -> list[Case]:
    return [
        Case(
            "elementwise",
            "gelu(x*a+b)*c",
            (n,),
            dtype,
            tuple(Operand(name, (n,)) for name in "xabc"),
            molten_gelu_affine,
            torch_gelu_affine,
        )
        for dtype in ("float32", "bfloat16")
        for n in (65536, 16 * 2**20, 128 * 2**20)
    ]


def molten_embedding(ids, table):
    return ops.embedding(ids, table)


def torch_embedding(ids, table):
    return torch.nn.functional.embedding(ids, table)


def molten_scaled_embedding(ids, table, positions):
    return ops.embedding(ids, table) * 8.0 + positions


def torch_scaled_embedding(ids, table, positions):
    return torch.nn.functional.embedding(ids, table) * 8.0 + positions


def molten_argmax(x):
    return ops.argmax(x, -1)


def torch_argmax(x):
    return torch.argmax(x, -1)


def molten_softmax_argmax(x):
    return ops.argmax(ops.softmax(x), -1)


def torch_softmax_argmax(x):
    return torch.argmax(torch.softmax(x, -1), -1)


def indexing_suite() -> list[Case]:
    """Lookups by integer ids at real models' sizes: Qwen2.5-7B's token
    embedding (152,064 x 3,584) by 4,096 ids, and BERT-base's (30,522 x
    768) scaled and plus positions by 8 x 512 ids. The bytes are the rows
    read, the ids, the positions and the output, not the whole table.
    Positions: the greedy token of Qwen2.5's logits (152,064 wide) at
    decode (1 and 64 rows) and of 32 rows, Llama-2's 32,000 at 4,096, and
    the most probable token of 32 rows' softmax (one kernel in Molten)."""
    cases = [
        Case(
            "indexing",
            "argmax",
            (rows, vocab),
            dtype,
            (Operand("logits", (rows, vocab)),),
            molten_argmax,
            torch_argmax,
        )
        for rows, vocab, dtype in (
            (1, 152064, "bfloat16"),
            (64, 152064, "bfloat16"),
            (32, 152064, "float32"),
            (4096, 32000, "float16"),
        )
    ]
    cases.append(
        Case(
            "indexing",
            "argmax(softmax)",
            (32, 152064),
            "bfloat16",
            (Operand("logits", (32, 152064)),),
            molten_softmax_argmax,
            torch_softmax_argmax,
        )
    )
    for vocab, width, ids, dtype in ((152064, 3584, (4096,), "bfloat16"),):
        n = math.prod(ids)
        cases.append(
            Case(
                "indexing",
                "embedding",
                (*ids, vocab, width),
                dtype,
                (
                    Operand("ids", ids, "index", "int64", vocab),
                    Operand("table", (vocab, width)),
                ),
                molten_embedding,
                torch_embedding,
                touched=n * 8 + 2 * n * width * ITEMSIZES[dtype],
            )
        )
    vocab, width, batch, tokens, dtype = 30522, 768, 8, 512, "float16"
    n = batch * tokens
    cases.append(
        Case(
            "indexing",
            "embedding*8+pos",
            (batch, tokens, vocab, width),
            dtype,
            (
                Operand("ids", (batch, tokens), "index", "int64", vocab),
                Operand("table", (vocab, width)),
                Operand("positions", (tokens, width)),
            ),
            molten_scaled_embedding,
            torch_scaled_embedding,
            touched=n * 8 + (2 * n + tokens) * width * ITEMSIZES[dtype],
        )
    )
    return cases


def gemm_suite() -> list[Case]:
    return [
        Case(
            "gemm",
            "gelu(x@w+b)",
            (m, n, k),
            dtype,
            (Operand("x", (m, k)), Operand("w", (k, n), "scaled"), Operand("b", (n,))),
            molten_matmul_gelu,
            torch_matmul_gelu,
            flops=2 * m * n * k,
            compile_mode="max-autotune-no-cudagraphs",
            references={"cublas": torch_matmul},
        )
        for dtype in DTYPES
        for m, n, k in ((1, 4096, 4096), (2048, 4096, 4096), (4096, 4096, 4096))
    ] + [
        Case(
            "gemm",
            "gelu(x@w.T+b)",
            (m, n, k),
            dtype,
            (Operand("x", (m, k)), Operand("w", (n, k), "scaled"), Operand("b", (n,))),
            molten_linear_gelu,
            torch_linear_gelu,
            flops=2 * m * n * k,
            compile_mode="max-autotune-no-cudagraphs",
            references={"cublas": torch_linear},
        )
        for dtype in DTYPES
        for m, n, k in ((1, 4096, 4096),)
    ]


# The llm suite: the linear layers of two decoder models, each with the
# epilogue it has (or, for bias + gelu, a GPT-style MLP's at Qwen's width).


def molten_linear(x, w):
    return ops.matmul(x, w, transpose_b=True)


def torch_linear_none(x, w):
    return F.linear(x, w)


def molten_linear_bias(x, w, b):
    return ops.matmul(x, w, transpose_b=True) + b


def torch_linear_bias(x, w, b):
    return F.linear(x, w, b)


def molten_linear_silu(x, w):
    return ops.silu(ops.matmul(x, w, transpose_b=True))


def torch_linear_silu(x, w):
    return F.silu(F.linear(x, w))


def molten_linear_residual(x, w, r):
    return ops.matmul(x, w, transpose_b=True) + r


def torch_linear_residual(x, w, r):
    return F.linear(x, w) + r


def torch_linear_alone(x, w, *_):
    return F.linear(x, w)


def molten_matmul(x, w):
    return x @ w


def torch_matmul_none(x, w):
    return x @ w


def molten_matmul_bias(x, w, b):
    return x @ w + b


def torch_matmul_bias(x, w, b):
    return x @ w + b


def molten_matmul_silu(x, w):
    return ops.silu(x @ w)


def torch_matmul_silu(x, w):
    return F.silu(x @ w)


def molten_matmul_residual(x, w, r):
    return x @ w + r


def torch_matmul_residual(x, w, r):
    return x @ w + r


def torch_matmul_alone(x, w, *_):
    return x @ w


LLM_EPILOGUES = {
    # name: (math shown, extra operand, molten and torch for w [N, K], then
    # for w [K, N])
    "none": (
        "",
        None,
        molten_linear,
        torch_linear_none,
        molten_matmul,
        torch_matmul_none,
    ),
    "bias": (
        "+b",
        "b",
        molten_linear_bias,
        torch_linear_bias,
        molten_matmul_bias,
        torch_matmul_bias,
    ),
    "bias+gelu": (
        "gelu",
        "b",
        molten_linear_gelu,
        torch_linear_gelu,
        molten_matmul_gelu,
        torch_matmul_gelu,
    ),
    "silu": (
        "silu",
        None,
        molten_linear_silu,
        torch_linear_silu,
        molten_matmul_silu,
        torch_matmul_silu,
    ),
    "residual": (
        "+r",
        "r",
        molten_linear_residual,
        torch_linear_residual,
        molten_matmul_residual,
        torch_matmul_residual,
    ),
}
LLM_LAYERS = (
    # (model, layer, N, K, epilogue)
    ("llama3-8b", "qkv", 6144, 4096, "none"),
    ("llama3-8b", "o", 4096, 4096, "residual"),
    ("llama3-8b", "gate", 14336, 4096, "silu"),
    ("llama3-8b", "down", 4096, 14336, "residual"),
    ("qwen2.5-7b", "qkv", 4608, 3584, "bias"),
    ("qwen2.5-7b", "o", 3584, 3584, "residual"),
    ("qwen2.5-7b", "up", 18944, 3584, "bias+gelu"),
    ("qwen2.5-7b", "down", 3584, 18944, "residual"),
)
"""Llama-3-8B (hidden 4096, 32 heads and 8 KV heads of 128, MLP 14336) and
Qwen2.5-7B (hidden 3584, 28 heads and 4 KV heads of 128, MLP 18944, a bias
on QKV)."""
LLM_TOKENS = (1, 4, 16, 64, 128, 512, 2048, 8192)


def llm_case(layer: tuple, m: int, dtype: str, nk: bool) -> Case:
    """One linear layer at M tokens, its weight stored [N, K] (nn.Linear's
    layout, x @ w.T) or [K, N] (x @ w)."""
    model, name, n, k, epilogue = layer
    shown, extra, molten_nk, torch_nk, molten_kn, torch_kn = LLM_EPILOGUES[epilogue]
    product = "x@w.T" if nk else "x@w"
    math_text = (
        f"{shown}({product}+b)"
        if shown == "gelu"
        else f"{shown}({product})"
        if shown == "silu"
        else product + shown
    )
    operands = [
        Operand("x", (m, k)),
        Operand("w", (n, k), "scaled_nk") if nk else Operand("w", (k, n), "scaled"),
    ]
    if extra == "b":
        operands.append(Operand("b", (n,)))
    elif extra == "r":
        operands.append(Operand("r", (m, n)))
    return Case(
        "llm",
        f"{model}.{name} {math_text}",
        (m, n, k),
        dtype,
        tuple(operands),
        molten_nk if nk else molten_kn,
        torch_nk if nk else torch_kn,
        flops=2 * m * n * k,
        compile_mode="max-autotune-no-cudagraphs",
        references={"cublas": torch_linear_alone if nk else torch_matmul_alone},
    )


LLM_KN_LAYERS = (0, 2, 4, 7)
"""The layers also timed with the weight stored [K, N]."""
LLM_F16_LAYERS = (1, 2, 6, 7)
"""The layers also timed in f16."""


LLM_DYNAMIC_LAYERS = (1, 6)
"""The layers timed as one graph for every token count (`llm-dynamic`):
Llama's o projection (residual) and Qwen's up projection (bias + gelu)."""
LLM_DYNAMIC_TOKENS = (1, 4, 16, 64, 128, 512, 2048)
LLM_DYNAMIC_ATTENTION = (28, 128)
"""(heads, head dim) of the causal attention timed over T: Qwen2.5-7B's."""
LLM_DYNAMIC_ATTENTION_TOKENS = (128, 512, 2048, 4096)
LLM_DYNAMIC_LAYER_TOKENS = (1, 16, 128, 512, 2048)
"""Where Qwen2.5-7B's whole layer is timed over T."""


def llm_dynamic_suite() -> list[Case]:
    """Two linear layers (bf16, weight [N, K]) at decode to prefill token
    counts, Qwen2.5-7B's causal attention over one sequence and its whole
    decoder layer, each also as one graph over T compiled once
    (`molten-dynamic`, its size classes' kernels) against the graph
    compiled for the count; torch.compile at its default mode (the suite
    is about Molten's two)."""
    cases = [
        llm_case(LLM_LAYERS[i], m, "bfloat16", True)
        for i in LLM_DYNAMIC_LAYERS
        for m in LLM_DYNAMIC_TOKENS
    ]
    heads, dim = LLM_DYNAMIC_ATTENTION
    cases += [
        replace(
            next(
                c
                for c in attention_suite_at([(1, heads, tokens, dim)], ("bfloat16",))
                if c.op == "attention-causal"
            ),
            references={},
            tokens_axis=2,
        )
        for tokens in LLM_DYNAMIC_ATTENTION_TOKENS
    ]
    cases += [layer_case("qwen2.5-7b", t) for t in LLM_DYNAMIC_LAYER_TOKENS]
    return [
        replace(c, op=f"{c.op} over T", dynamic=True, compile_mode="default")
        for c in cases
    ]


def llm_suite() -> list[Case]:
    """The linear layers of Llama-3-8B and Qwen2.5-7B with their epilogues
    (none, bias, silu, residual add; bias + gelu at Qwen's MLP width), from
    decode (1 token) to prefill (8192): every layer in bf16 with nn.Linear's
    weight [N, K]; four layers also with the weight [K, N] and in f16."""
    cases = [
        llm_case(layer, m, "bfloat16", True) for layer in LLM_LAYERS for m in LLM_TOKENS
    ]
    cases += [
        llm_case(LLM_LAYERS[i], m, "bfloat16", False)
        for i in LLM_KN_LAYERS
        for m in (1, 16, 128, 2048)
    ]
    cases += [
        llm_case(LLM_LAYERS[i], m, "float16", True)
        for i in LLM_F16_LAYERS
        for m in (16, 512, 8192)
    ]
    return cases


ATTENTION_SHAPES = (
    (1, 16, 16384, 128),
    (1, 32, 8192, 128),
    (4, 32, 2048, 128),
    (8, 16, 1024, 64),
)
"""Prefill (batch, heads, sequence, head dim): sequences of 1K to 16K."""


def attention_suite() -> list[Case]:
    """Prefill: softmax(q @ kᵀ / sqrt(d) [+ causal mask]) @ v against
    torch's scaled_dot_product_attention, and FlexAttention beside it; FLOPs
    4 B H S² D, half of it when causal (the masked half is not computed)."""
    return attention_suite_at(ATTENTION_SHAPES, ("float16", "bfloat16"))


def attention_suite_at(
    shapes: Sequence[tuple[int, int, int, int]], dtypes: Sequence[str]
) -> list[Case]:
    """The attention suite's cases at these (batch, heads, sequence, head
    dim) shapes and dtypes, each without and with the causal mask."""
    cases = []
    for dtype in dtypes:
        for b, h, s, d in shapes:
            for causal in (False, True):
                shape = (b, h, s, d)
                cases.append(
                    Case(
                        "attention",
                        "attention-causal" if causal else "attention",
                        shape,
                        dtype,
                        tuple(Operand(name, shape) for name in "qkv"),
                        molten_attention(causal),
                        torch_attention(causal),
                        flops=4 * b * h * s * s * d // (2 if causal else 1),
                        references={"flex": torch_flex_attention(causal)},
                    )
                )
    return cases


DECODE_HEADS = (32, 8)
"""Query heads and KV heads (Llama-3-8B, Qwen2.5-7B has 28 and 4)."""


def decode_suite() -> list[Case]:
    """Decode: 1 to 8 queries against a KV cache of 1K to 32K keys, 32
    query heads on 8 KV heads, head dim 128, against torch's
    scaled_dot_product_attention with enable_gqa. Memory-bound: the minimal
    bytes are K and V read once (with q and the output)."""
    heads, kv_heads = DECODE_HEADS
    d = 128
    cases = []
    for dtype in ("float16", "bfloat16"):
        for b, sq, sk in (
            (1, 1, 1024),
            (1, 1, 8192),
            (1, 1, 32768),
            (1, 8, 8192),
            (4, 1, 8192),
            (8, 4, 4096),
        ):
            cases.append(
                Case(
                    "decode",
                    "attention-gqa",
                    (b, heads, kv_heads, sq, sk, d),
                    dtype,
                    (
                        Operand("q", (b, heads, sq, d)),
                        Operand("k", (b, kv_heads, sk, d)),
                        Operand("v", (b, kv_heads, sk, d)),
                    ),
                    molten_decode,
                    torch_decode,
                )
            )
    return cases


# ---------------------------------------------------------------------------
# The layer suite: a whole decoder layer (examples/decoder_layer.py).
# ---------------------------------------------------------------------------

LAYER_MODELS = ("qwen2.5-7b", "llama3-8b")
LAYER_TOKENS = (128, 512, 2048, 8192)
LAYER_AUTOTUNE_TOKENS = (512, 2048)
"""Where torch.compile's max-autotune is timed beside its default mode
(it autotunes each of the layer's gemms: minutes a case)."""


def _decoder_layer_example() -> Any:
    """examples/decoder_layer.py as a module (examples/ is not a package)."""
    import importlib.util
    import sys
    from pathlib import Path

    name = "molten_example_decoder_layer"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[1] / "examples" / "decoder_layer.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _hf_rms_norm(h, w, eps: float):
    """Hugging Face's RMSNorm: in f32 (f64 stays f64), then back to h's dtype."""
    h32 = h.to(torch.promote_types(h.dtype, torch.float32))
    h32 = h32 * torch.rsqrt(h32.pow(2).mean(-1, keepdim=True) + eps)
    return w * h32.to(h.dtype)


def _layer_operand(name: str, shape: list[int]) -> Operand:
    """A layer parameter with the values it has at initialization: norms
    near 1, biases small, projections scaled by 1 / sqrt(fan in)."""
    init = (
        "weight"
        if name.endswith("layernorm")
        else "bias"
        if name.endswith("bias")
        else "scaled_nk"
    )
    return Operand(name, tuple(shape), init)


def torch_decoder_layer(config: Any) -> Callable[..., Any]:
    """The layer as Hugging Face's modeling_qwen2 / modeling_llama write it
    (the RMSNorm in f32, rotate_half, repeat_kv, SDPA with is_causal), over
    one sequence: (hidden_states, cos, sin, *weights) -> hidden_states."""
    names = list(_decoder_layer_example().weights(config))
    heads, kv_heads, d = (
        config.num_attention_heads,
        config.num_key_value_heads,
        config.head_dim,
    )

    def rms_norm(h, w):
        return _hf_rms_norm(h, w, config.rms_norm_eps)

    def rotate_half(t):
        return torch.cat((-t[..., d // 2 :], t[..., : d // 2]), dim=-1)

    def repeat_kv(t):
        b, n, s, _ = t.shape
        t = t[:, :, None].expand(b, n, heads // kv_heads, s, d)
        return t.reshape(b, heads, s, d)

    def layer(x, cos, sin, *params):
        p = dict(zip(names, params, strict=True))
        tokens = x.shape[0]

        def linear(h, name):
            return F.linear(h, p[name], p.get(f"{name}_bias"))

        def split(h, n):
            return h.view(1, tokens, n, d).transpose(1, 2)

        h = rms_norm(x, p["input_layernorm"])
        q = split(linear(h, "q_proj"), heads)
        k = split(linear(h, "k_proj"), kv_heads)
        v = split(linear(h, "v_proj"), kv_heads)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        o = F.scaled_dot_product_attention(
            q, repeat_kv(k), repeat_kv(v), is_causal=True
        )
        x = x + linear(o.transpose(1, 2).reshape(tokens, heads * d), "o_proj")
        h = rms_norm(x, p["post_attention_layernorm"])
        mlp = F.silu(linear(h, "gate_proj")) * linear(h, "up_proj")
        return x + linear(mlp, "down_proj")

    return layer


def torch_mlp_block(config: Any) -> Callable[..., Any]:
    """The layer's MLP block as Hugging Face writes it: (hidden_states,
    post_attention_layernorm, gate, up, down) -> hidden_states."""

    def block(x, norm, gate, up, down):
        h = _hf_rms_norm(x, norm, config.rms_norm_eps)
        return x + F.linear(F.silu(F.linear(h, gate)) * F.linear(h, up), down)

    return block


def _compiled_lazily(fn: Callable[..., Any], mode: str) -> Callable[..., Any]:
    """torch.compile of `fn` made at its first call (after the harness
    resets dynamo for the case), not when the suite is listed."""
    compiled = None

    def call(*args):
        nonlocal compiled
        if compiled is None:
            compiled = torch.compile(fn, mode=mode, dynamic=False, fullgraph=True)
        return compiled(*args)

    return call


def layer_case(model: str, tokens: int, dtype: str = "bfloat16") -> Case:
    example = _decoder_layer_example()
    config = example.CONFIGS[model]
    d = config.head_dim
    operands = [
        Operand("hidden_states", (tokens, config.hidden_size)),
        Operand("cos", (tokens, d)),
        Operand("sin", (tokens, d)),
    ]
    operands += [_layer_operand(n, s) for n, s in example.weights(config).items()]
    linear_macs = sum(
        math.prod(shape)
        for name, shape in example.weights(config).items()
        if name.endswith("proj")
    )
    attention_flops = 2 * config.num_attention_heads * tokens * tokens * d  # causal
    layer = torch_decoder_layer(config)
    references = {}
    if tokens in LAYER_AUTOTUNE_TOKENS:
        references["compile-max-autotune"] = _compiled_lazily(
            layer, "max-autotune-no-cudagraphs"
        )
    return Case(
        "layer",
        f"{model}.layer",
        (tokens,),
        dtype,
        tuple(operands),
        molten=None,
        torch=layer,
        flops=2 * tokens * linear_macs + attention_flops,
        references=references,
        build=lambda name: example.decoder_layer(config, tokens, dtype, name),
        build_over_tokens=lambda name: example.decoder_layer(config, "T", dtype, name),
        backend=True,
    )


def mlp_case(model: str, tokens: int, dtype: str = "bfloat16") -> Case:
    example = _decoder_layer_example()
    config = example.CONFIGS[model]
    shapes = example.weights(config)
    operands = [Operand("hidden_states", (tokens, config.hidden_size))] + [
        _layer_operand(name, shapes[name]) for name in example.MLP_WEIGHTS
    ]
    block = torch_mlp_block(config)
    return Case(
        "layer",
        f"{model}.mlp",
        (tokens,),
        dtype,
        tuple(operands),
        molten=None,
        torch=block,
        flops=2 * tokens * 3 * config.hidden_size * config.intermediate_size,
        references={
            "compile-max-autotune": _compiled_lazily(
                block, "max-autotune-no-cudagraphs"
            )
        },
        build=lambda name: example.mlp_block(config, tokens, dtype, name),
    )


LAYER_MLP_TOKENS = (512, 2048)
"""Where the MLP block (rms_norm, gate and up, down + residual) is timed alone."""


def layer_suite() -> list[Case]:
    """A whole decoder layer of Qwen2.5-7B and Llama-3-8B over one sequence
    of 128 to 8192 tokens in bf16, against the same layer in PyTorch as
    Hugging Face writes it: eager, torch.compile (default) and, at 512 and
    2048 tokens, max-autotune; then the layer's MLP block alone at 512 and
    2048 tokens. FLOPs: the projections' 2 T N K and the causal
    attention's 2 H T² D."""
    cases = [layer_case(m, t) for m in LAYER_MODELS for t in LAYER_TOKENS]
    return cases + [mlp_case(m, t) for m in LAYER_MODELS for t in LAYER_MLP_TOKENS]


CALL_REFERENCE = "compile-reduce-overhead"
"""torch.compile with CUDA graphs: torch's own answer to the host's cost."""


def calls_suite() -> list[Case]:
    """What a call costs the host at decode (one token), where the host, not
    the GPU, bounds a model: one kernel (rms_norm, hidden 3584), a GEMV
    with its epilogue (gelu(x @ w + b), 4096 x 4096) and a whole decoder
    layer (Qwen2.5-7B, Llama-3-8B: 12 kernels). Molten is timed as called
    and captured as a CUDA graph; PyTorch eager, torch.compile, and
    torch.compile with CUDA graphs ("reduce-overhead") beside it."""
    cases = [
        Case(
            "calls",
            "rms_norm.call",
            (1, 3584),
            "bfloat16",
            (Operand("x", (1, 3584)), Operand("w", (3584,), "weight")),
            molten_rms_norm,
            torch_rms_norm,
        ),
        Case(
            "calls",
            "gelu(x@w+b).call",
            (1, 4096, 4096),
            "bfloat16",
            (
                Operand("x", (1, 4096)),
                Operand("w", (4096, 4096), "scaled"),
                Operand("b", (4096,)),
            ),
            molten_matmul_gelu,
            torch_matmul_gelu,
        ),
    ]
    cases += [
        dataclasses.replace(layer_case(model, 1), suite="calls", flops=0, references={})
        for model in LAYER_MODELS
    ]
    return [
        dataclasses.replace(
            case,
            graphed=True,
            references={
                CALL_REFERENCE: _compiled_lazily(case.torch, "reduce-overhead")
            },
        )
        for case in cases
    ]


def smoke_suite() -> list[Case]:
    """Small shapes of each family, for testing the harness itself."""
    return [
        Case(
            "smoke",
            "rms_norm",
            (3, 1000),
            "float16",
            (Operand("x", (3, 1000)), Operand("w", (1000,), "weight")),
            molten_rms_norm,
            torch_rms_norm,
        ),
        Case(
            "smoke",
            "gelu(x*a+b)*c",
            (4097,),
            "bfloat16",
            tuple(Operand(name, (4097,)) for name in "xabc"),
            molten_gelu_affine,
            torch_gelu_affine,
        ),
        Case(
            "smoke",
            "gelu(x@w+b)",
            (5, 96, 80),
            "float32",
            (
                Operand("x", (5, 80)),
                Operand("w", (80, 96), "scaled"),
                Operand("b", (96,)),
            ),
            molten_matmul_gelu,
            torch_matmul_gelu,
            flops=2 * 5 * 96 * 80,
            references={"cublas": torch_matmul},
        ),
    ]


SUITES: dict[str, Callable[[], list[Case]]] = {
    "seed": seed_suite,
    "norms": norms_suite,
    "elementwise": elementwise_suite,
    "gemm": gemm_suite,
    "llm": llm_suite,
    "llm-dynamic": llm_dynamic_suite,
    "attention": attention_suite,
    "decode": decode_suite,
    "layer": layer_suite,
    "calls": calls_suite,
    "indexing": indexing_suite,
    "smoke": smoke_suite,
}
"""Every suite; `all` on the command line means all but `smoke`."""

MAIN_SUITES = (
    "seed",
    "norms",
    "elementwise",
    "gemm",
    "llm",
    "attention",
    "decode",
    "layer",
    "calls",
    "indexing",
)


def _takes_tokens(operand: Operand, tokens: int, axis: int = 0) -> bool:
    """Whether an operand's dimension `axis` is the token count: it has it
    there and is not a weight (a weight of as many rows is not)."""
    return (
        len(operand.shape) > axis
        and operand.shape[axis] == tokens
        and not operand.init.startswith("scaled")
    )
