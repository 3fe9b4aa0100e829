"""The decoder layer of examples/decoder_layer.py against a float64 numpy
reference written the way Hugging Face's Qwen2 and Llama modeling code
writes the layer (rotate_half, repeat_kv, the causal softmax, the SiLU
MLP), with random weights made here: the graph as built, and the module
after the pipeline's kernel level, both run by the interpreter, in float64
and natively (f16, bf16), at 1 and 17 tokens."""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import molten
from molten.pipeline import KERNEL_LEVEL_PIPELINE, run_pipeline

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from decoder_layer import CONFIGS as EXAMPLE_CONFIGS  # noqa: E402
from decoder_layer import LayerConfig, decoder_layer, weights  # noqa: E402

try:  # tests/ is a package (tests/__init__.py) or a plain directory
    from .conftest import rel_l2, round_to_dtype
except ImportError:  # pragma: no cover
    from conftest import rel_l2, round_to_dtype

CONFIGS = {
    # Qwen2's with biases on q, k and v; Llama's without; 4 query heads
    # sharing 2 KV heads; head dim 16.
    "qwen2": LayerConfig(64, 96, 4, 2, qkv_bias=True),
    "llama": LayerConfig(64, 96, 4, 2, qkv_bias=False, rms_norm_eps=1e-5),
}
NATIVE_ERROR = {"bfloat16": 1.5e-2, "float16": 2e-3}
"""The largest relative L2 error against float64 of the layer computed in
the dtype: each op rounds to it, as PyTorch's eager layer does (measured
4.2e-3 to 4.6e-3 in bf16, 5.1e-4 in f16, at 17 tokens)."""


def rotary(tokens: int, dim: int, theta: float = 10000.0) -> tuple[np.ndarray, ...]:
    """cos and sin of positions 0 .. tokens - 1, as Hugging Face's rotary
    embedding computes them: [T, dim], the frequencies repeated twice."""
    inv_freq = 1.0 / theta ** (np.arange(0, dim, 2) / dim)
    freqs = np.outer(np.arange(tokens), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def repeat_kv(x, groups):
    kv_heads, tokens, dim = x.shape
    return np.broadcast_to(x[:, None], (kv_heads, groups, tokens, dim)).reshape(
        kv_heads * groups, tokens, dim
    )


def reference_layer(config: LayerConfig, x, cos, sin, p: dict) -> np.ndarray:
    """The layer in float64, as modeling_qwen2 / modeling_llama write it."""
    c, d = config, config.head_dim
    tokens = x.shape[0]

    def rms_norm(h, w):
        variance = np.mean(h * h, axis=-1, keepdims=True)
        return w * (h / np.sqrt(variance + c.rms_norm_eps))

    def linear(h, name):
        y = h @ p[name].T
        return y + p[f"{name}_bias"] if f"{name}_bias" in p else y

    def heads(h, n):
        return h.reshape(tokens, n, d).transpose(1, 0, 2)

    residual = x
    h = rms_norm(x, p["input_layernorm"])
    q = heads(linear(h, "q_proj"), c.num_attention_heads)
    k = heads(linear(h, "k_proj"), c.num_key_value_heads)
    v = heads(linear(h, "v_proj"), c.num_key_value_heads)
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    groups = c.num_attention_heads // c.num_key_value_heads
    k, v = repeat_kv(k, groups), repeat_kv(v, groups)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(d)
    scores = scores + np.triu(np.full((tokens, tokens), -np.inf), 1)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    o = (scores / scores.sum(axis=-1, keepdims=True)) @ v
    o = o.transpose(1, 0, 2).reshape(tokens, c.num_attention_heads * d)
    x = residual + linear(o, "o_proj")
    residual = x
    h = rms_norm(x, p["post_attention_layernorm"])
    gate, up = linear(h, "gate_proj"), linear(h, "up_proj")
    return residual + linear(gate / (1 + np.exp(-gate)) * up, "down_proj")


def layer_inputs(config: LayerConfig, tokens: int, dtype: str, rng):
    """hidden states, cos, sin and weights (as initialised for training:
    norms near 1, projections scaled by 1 / sqrt(fan in)), each exactly
    representable in `dtype`."""
    cos, sin = rotary(tokens, config.head_dim)
    x = rng.standard_normal((tokens, config.hidden_size))
    params = {}
    for name, shape in weights(config).items():
        if name.endswith("layernorm"):
            params[name] = 1 + 0.1 * rng.standard_normal(shape)
        elif name.endswith("bias"):
            params[name] = 0.1 * rng.standard_normal(shape)
        else:
            params[name] = rng.standard_normal(shape) / np.sqrt(shape[-1])
    values = [x, cos, sin, *params.values()]
    values = [round_to_dtype(v, dtype) for v in values]
    return values, dict(zip(params, values[3:], strict=True))


@pytest.mark.parametrize("level", ["graph", "kernel"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("tokens", [1, 17])
@pytest.mark.parametrize("model", sorted(CONFIGS))
def test_layer_matches_hugging_face(model, tokens, dtype, level, rng):
    config = CONFIGS[model]
    g = decoder_layer(config, tokens, dtype)
    program = (
        g if level == "graph" else run_pipeline(g.to_module(), KERNEL_LEVEL_PIPELINE)
    )
    inputs, params = layer_inputs(config, tokens, dtype, rng)
    want = reference_layer(config, *inputs[:3], params)
    exact = molten.interpret(program, *inputs, reference=True)
    assert exact.shape == want.shape
    assert rel_l2(exact, want) < 1e-12
    native = molten.interpret(program, *inputs)
    assert rel_l2(native, want) < NATIVE_ERROR[dtype]


# ---------------------------------------------------------------------------
# On the GPU, at the models' own shapes.
# ---------------------------------------------------------------------------


def _gpu_torch():
    """torch with a CUDA device, else the test is skipped."""
    torch = pytest.importorskip("torch", reason="the GPU tests hold memory in torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")
    return torch


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("tokens", [1, 17, 512])
@pytest.mark.parametrize("model", sorted(EXAMPLE_CONFIGS))
def test_layer_on_the_gpu_matches_hugging_face(model, tokens, dtype, rng):
    """The whole layer of Qwen2.5-7B and Llama-3-8B compiled for this GPU
    (runtime: NVRTC), outputs poisoned with NaN before the launch, against
    the float64 references on the same inputs: the numpy one here and the
    benchmark's PyTorch layer, written as Hugging Face's modeling code
    writes it (F.linear, SDPA with is_causal), run in float64."""
    torch = _gpu_torch()
    config = EXAMPLE_CONFIGS[model]
    compiled = molten.ZeroCompiler().compile(decoder_layer(config, tokens, dtype))
    inputs, params = layer_inputs(config, tokens, dtype, rng)
    device = [torch.tensor(a).to(getattr(torch, dtype)).cuda() for a in inputs]
    out = torch.full(
        (tokens, config.hidden_size), float("nan"), dtype=device[0].dtype, device="cuda"
    )
    compiled(*device, out=out)
    torch.cuda.synchronize()
    # The JIT ran the graph compiled for this device's best target (its
    # fusions), not the portable one it falls back to.
    from molten.passes.schedule.target import device_native_arch

    native = device_native_arch(0)
    assert compiled.jit_target(native).arch == native
    want = reference_layer(config, *inputs[:3], params)
    got = out.double().cpu().numpy()
    assert rel_l2(got, want) < NATIVE_ERROR[dtype]
    from benchmarks.cases import torch_decoder_layer

    in_float64 = [torch.tensor(a, dtype=torch.float64, device="cuda") for a in inputs]
    hugging_face = torch_decoder_layer(config)(*in_float64).cpu().numpy()
    assert rel_l2(hugging_face, want) < 1e-9  # the two references agree
    assert rel_l2(got, hugging_face) < NATIVE_ERROR[dtype]


@pytest.mark.parametrize("model", sorted(EXAMPLE_CONFIGS))
def test_layer_kernels(model):
    """The kernels the layer compiles to on sm_90a, one line per kernel:
    each fusion that lands changes this list on purpose."""
    g = decoder_layer(EXAMPLE_CONFIGS[model], 512)
    compiled = molten.ZeroCompiler(arch="sm_90a").compile(g)
    assert [k.name.removeprefix("decoder_layer_") for k in compiled.kernels] == [
        "row_reduce0",  # input_layernorm
        "gemm0",  # q, k and v + biases, stored as heads [H, T, D]: one kernel
        "pointwise0",  # q: RoPE
        "pointwise1",  # k: RoPE
        "attention0",  # stores the heads side by side, [T, H * D]
        "gemm1",  # o + residual
        "row_reduce1",  # post_attention_layernorm
        "gemm2",  # silu(gate) * up: both products in one kernel
        "gemm3",  # down + residual
    ]


# ---------------------------------------------------------------------------
# Over a named token count T: one compile for every T.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("model", sorted(CONFIGS))
def test_layer_over_t_keeps_its_meaning_at_every_size(model, rng):
    """The layer with T named, fused, outlined and scheduled once (T in its
    kernels' types, the gemms' and the attention's schedules by size
    class), then interpreted in float64 at several T against the reference."""
    from molten.dialects import kernel

    config = CONFIGS[model]
    module = run_pipeline(decoder_layer(config, "T").to_module(), KERNEL_LEVEL_PIPELINE)
    kinds = [op.kind.data for op in module.walk() if isinstance(op, kernel.FuncOp)]
    assert kernel.KernelKind.ATTENTION in kinds
    for tokens in (1, 17, 40):
        inputs, params = layer_inputs(config, tokens, "bfloat16", rng)
        want = reference_layer(config, *inputs[:3], params)
        got = molten.interpret(module, *inputs, reference=True)
        assert rel_l2(got, want) < 1e-12, tokens


SPLIT_LAYER = LayerConfig(512, 4096, 8, 2, qkv_bias=True)
"""A layer whose fusion on sm_90a changes with T as Qwen2.5-7B's does
(hidden 512, intermediate 4096, head dim 64), small enough for float64."""


@pytest.mark.parametrize("qkv_bias", [True, False])
def test_layer_over_t_fuses_by_size_class_on_sm90a(qkv_bias, rng):
    """On sm_90a the layer's fusion depends on T: each projection alone up
    to 8 tokens (GEMVs), gate and up one kernel from 9, q, k and v one
    from 33. The layer compiles once to a copy per range of T, kernels the
    copies fuse alike shared, and keeps its meaning in each copy."""
    from xdsl.dialects import func

    from molten.dialects import kernel
    from molten.dialects import molten as dialect

    config = replace(SPLIT_LAYER, qkv_bias=qkv_bias)
    module = molten.ZeroCompiler(arch="sm_90a").optimize(decoder_layer(config, "T"))
    copies = [op for op in module.ops if isinstance(op, func.FuncOp)]
    ranges = [
        (r.least.data, r.most.data)
        for r in (dialect.size_range_of(copy) for copy in copies)
        if r is not None
    ]
    assert ranges == [(1, 8), (9, 32), (33, 0)]

    kernels = {
        op.sym_name.data: op for op in module.ops if isinstance(op, kernel.FuncOp)
    }

    def products(copy):  # the matmuls of each gemm kernel the copy launches
        launched = [
            kernels[op.callee.string_value()]
            for op in copy.walk()
            if isinstance(op, kernel.LaunchOp)
        ]
        return [
            sum(op.name == "molten.matmul" for op in k.walk())
            for k in launched
            if k.kind.data == kernel.KernelKind.GEMM
        ]

    assert [products(copy) for copy in copies] == [
        [1, 1, 1, 1, 1, 1, 1],  # q, k, v, o, gate, up, down
        [1, 1, 1, 1, 2, 1],  # gate and up one kernel
        [3, 1, 2, 1],  # and q, k and v
    ]
    # One kernel each: the two norms, rope on q and on k, the attention;
    # k and v (one kernel: alike), q, o, gate, up and down alone; gate with
    # up; q with k and v: 13 kernels for the copies' 32 launches.
    assert len(kernels) == 13
    for tokens in (1, 8, 9, 32, 33, 70):
        inputs, params = layer_inputs(config, tokens, "bfloat16", rng)
        want = reference_layer(config, *inputs[:3], params)
        got = molten.interpret(module, *inputs, reference=True)
        assert rel_l2(got, want) < 1e-12, tokens


GPU_LAYER_OVER_T = LayerConfig(256, 512, 4, 2, qkv_bias=True)
"""A layer small enough to compile over T in seconds, with the head
dimension (64) that the wgmma attention takes on sm_90a."""


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["bfloat16"])
@pytest.mark.parametrize("config", [GPU_LAYER_OVER_T, SPLIT_LAYER], ids=str)
def test_layer_over_t_on_the_gpu_matches_hugging_face(dtype, config, rng):
    """One compile of the layer over T (every kernel taking T, the gemms and
    the attention a variant per size class; on sm_90a a copy of the layer
    per range of T its fusion takes), run at token counts in each class and
    at the copies' bounds, outputs poisoned with NaN before the launch,
    against the float64 reference."""
    torch = _gpu_torch()
    compiled = molten.ZeroCompiler().compile(decoder_layer(config, "T", dtype))
    assert isinstance(compiled, molten.CompiledGraph) and compiled.dims == ("T",)
    for tokens in (1, 5, 8, 9, 17, 32, 33, 130, 700):
        inputs, params = layer_inputs(config, tokens, dtype, rng)
        device = [torch.tensor(a).to(getattr(torch, dtype)).cuda() for a in inputs]
        out = torch.full(
            (tokens, config.hidden_size),
            float("nan"),
            dtype=device[0].dtype,
            device="cuda",
        )
        compiled(*device, out=out)
        want = reference_layer(config, *inputs[:3], params)
        got = out.double().cpu().numpy()
        assert not np.isnan(got).any(), tokens
        assert rel_l2(got, want) < NATIVE_ERROR[dtype], tokens
