"""A transformer decoder layer, Qwen2 and Llama style, written as math with
Molten's graph API and compiled to one `.cu`.

    rms_norm -> q, k, v projections (Qwen2: with biases) -> RoPE on q and k
    -> causal attention over grouped KV heads -> o projection + residual
    -> rms_norm -> silu(x @ gate.T) * (x @ up.T) -> down projection + residual

The layer is written the way Hugging Face's modeling code writes it
(`repeat_kv` for the grouped heads, cos and sin of the positions as
inputs, weights stored [out, in] as nn.Linear stores them), so that a
model's weights go in unchanged.

    python examples/decoder_layer.py [qwen2.5-7b|llama3-8b] [TOKENS] [OUT_DIR]

compiles the layer at that many tokens for sm_90a (no GPU needed), writes
`decoder_layer.{cu,h,mlir}` and prints its kernels and compile time.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from molten import ZeroCompiler
from molten.ir import DataflowGraph, Tensor


@dataclass(frozen=True)
class LayerConfig:
    """The shape of a decoder layer (Hugging Face's config names)."""

    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    qkv_bias: bool
    rms_norm_eps: float = 1e-6

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads


CONFIGS = {
    "qwen2.5-7b": LayerConfig(3584, 18944, 28, 4, qkv_bias=True),
    "llama3-8b": LayerConfig(4096, 14336, 32, 8, qkv_bias=False, rms_norm_eps=1e-5),
}


def weights(config: LayerConfig) -> dict[str, list[int]]:
    """The layer's parameters and their shapes, in the order the graph
    takes them (after the activations and the rotary cos and sin)."""
    c, d = config, config.head_dim
    kv = c.num_key_value_heads * d
    shapes = {
        "input_layernorm": [c.hidden_size],
        "q_proj": [c.num_attention_heads * d, c.hidden_size],
        "k_proj": [kv, c.hidden_size],
        "v_proj": [kv, c.hidden_size],
    }
    if c.qkv_bias:
        shapes |= {
            "q_proj_bias": [c.num_attention_heads * d],
            "k_proj_bias": [kv],
            "v_proj_bias": [kv],
        }
    return shapes | {
        "o_proj": [c.hidden_size, c.num_attention_heads * d],
        "post_attention_layernorm": [c.hidden_size],
        "gate_proj": [c.intermediate_size, c.hidden_size],
        "up_proj": [c.intermediate_size, c.hidden_size],
        "down_proj": [c.hidden_size, c.intermediate_size],
    }


def _heads(g: DataflowGraph, x: Tensor, heads: int, dim: int) -> Tensor:
    """[T, heads * dim] -> [heads, T, dim]."""
    tokens = x.shape[0]
    return g.transpose(g.reshape(x, [tokens, heads, dim]), [1, 0, 2])


def _repeat_kv(g: DataflowGraph, x: Tensor, groups: int) -> Tensor:
    """[kv_heads, T, dim] -> [kv_heads * groups, T, dim], each KV head
    repeated for the query heads that share it (Hugging Face's repeat_kv)."""
    kv_heads, tokens, dim = x.shape
    spread = g.broadcast_to(
        g.reshape(x, [kv_heads, 1, tokens, dim]), [kv_heads, groups, tokens, dim]
    )
    return g.reshape(spread, [kv_heads * groups, tokens, dim])


def decoder_layer(
    config: LayerConfig,
    tokens: int | str,
    dtype: str = "bfloat16",
    name: str = "decoder_layer",
) -> DataflowGraph:
    """One decoder layer over `tokens` tokens of one sequence (a count, or
    a name such as "T": one compile serves every count): inputs
    `hidden_states` [T, hidden], `cos` and `sin` [T, head_dim] (of the
    tokens' positions) and the weights of `weights(config)`; output the
    layer's hidden states [T, hidden]."""
    c, d = config, config.head_dim
    g = DataflowGraph(name)
    x = g.add_input("hidden_states", [tokens, c.hidden_size], dtype)
    cos = g.add_input("cos", [tokens, d], dtype)
    sin = g.add_input("sin", [tokens, d], dtype)
    p = {n: g.add_input(n, shape, dtype) for n, shape in weights(c).items()}

    def linear(h: Tensor, proj: str) -> Tensor:
        return _linear(g, p, h, proj)

    h = g.rms_norm(x, p["input_layernorm"], eps=c.rms_norm_eps)
    q = _heads(g, linear(h, "q_proj"), c.num_attention_heads, d)
    k = _heads(g, linear(h, "k_proj"), c.num_key_value_heads, d)
    v = _heads(g, linear(h, "v_proj"), c.num_key_value_heads, d)
    q, k = g.rope(q, cos, sin), g.rope(k, cos, sin)
    groups = c.num_attention_heads // c.num_key_value_heads
    k, v = _repeat_kv(g, k, groups), _repeat_kv(g, v, groups)
    o = g.attention(q, k, v, causal=True)
    o = g.reshape(g.transpose(o, [1, 0, 2]), [tokens, c.num_attention_heads * d])
    x = x + linear(o, "o_proj")
    g.add_output(_mlp_residual(g, c, p, x), "out")
    return g


def _linear(g: DataflowGraph, p: dict[str, Tensor], h: Tensor, proj: str) -> Tensor:
    """h @ w.T (+ its bias where the layer has one), w stored [out, in]."""
    y = g.matmul(h, p[proj], transpose_b=True)
    bias = p.get(f"{proj}_bias")
    return y if bias is None else y + bias


def _mlp_residual(
    g: DataflowGraph, c: LayerConfig, p: dict[str, Tensor], x: Tensor
) -> Tensor:
    """x + down(silu(gate(h)) * up(h)), h = rms_norm(x): the layer's second half."""
    h = g.rms_norm(x, p["post_attention_layernorm"], eps=c.rms_norm_eps)
    mlp = g.silu(_linear(g, p, h, "gate_proj")) * _linear(g, p, h, "up_proj")
    return x + _linear(g, p, mlp, "down_proj")


MLP_WEIGHTS = ("post_attention_layernorm", "gate_proj", "up_proj", "down_proj")
"""The parameters of the layer's MLP block, in the order `mlp_block` takes them."""


def mlp_block(
    config: LayerConfig,
    tokens: int,
    dtype: str = "bfloat16",
    name: str = "mlp_block",
) -> DataflowGraph:
    """The layer's second half alone: x + down(silu(gate(h)) * up(h)) with
    h = rms_norm(x); inputs `hidden_states` [T, hidden] and the weights of
    MLP_WEIGHTS."""
    c = config
    g = DataflowGraph(name)
    x = g.add_input("hidden_states", [tokens, c.hidden_size], dtype)
    shapes = weights(c)
    p = {n: g.add_input(n, shapes[n], dtype) for n in MLP_WEIGHTS}
    g.add_output(_mlp_residual(g, c, p, x), "out")
    return g


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "qwen2.5-7b"
    tokens = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    out_dir = sys.argv[3] if len(sys.argv) > 3 else "output"
    if model not in CONFIGS:
        raise SystemExit(f"unknown model {model!r}: one of {', '.join(CONFIGS)}")
    g = decoder_layer(CONFIGS[model], tokens)
    compiler = ZeroCompiler(arch="sm_90a")
    start = time.perf_counter()
    compiled = compiler.compile(g)
    seconds = time.perf_counter() - start
    files = compiler.save(compiled, out_dir)
    print(
        f"// {model} decoder layer, {tokens} tokens, bf16, sm_90a: "
        f"{len(compiled.kernels)} kernels, compiled in {seconds:.1f} s"
    )
    for k in compiled.kernels:
        print(f"//   {k.name}: {', '.join(k.fused_ops)}")
    print("// wrote " + ", ".join(str(f) for f in files))


if __name__ == "__main__":
    main()
