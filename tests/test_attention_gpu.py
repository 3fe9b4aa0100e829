"""The fused attention kernel on the GPU against the float64 interpreter.

Marker `gpu`. Each case is compiled (one attention kernel, checked), run on
fresh random inputs with NaN-poisoned outputs, and compared by relative L2
error at awkward sizes: sequences of 1, 17, 1000 and 4099, head dims 64, 80
and 128, Sq != Sk, causal with Sq < Sk and Sq > Sk (top-left aligned, as
the interpreter and torch), batch 1, f16 and bf16; and the same kernel from
the attention a user writes with primitives.
"""

import numpy as np
import pytest

import molten
from molten import ZeroCompiler
from molten.interpreters import round_to
from molten.ir import DataflowGraph

torch = pytest.importorskip("torch", reason="the GPU tests hold device memory in torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU or driver"),
]

TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2}
TORCH_DTYPE = {"float16": torch.float16, "bfloat16": torch.bfloat16}

CASES = [
    # batch, heads, Sq, Sk, D, Dv, causal
    (1, 1, 1, 1, 64, 64, False),
    (1, 2, 17, 17, 64, 64, True),
    (2, 3, 17, 1000, 80, 80, False),
    (1, 2, 1000, 17, 128, 128, True),
    (1, 1, 4099, 4099, 64, 64, True),
    (1, 2, 1000, 1000, 80, 80, True),
    (2, 2, 300, 4099, 128, 128, True),
    (1, 4, 257, 129, 128, 64, False),
    (3, 1, 64, 64, 128, 128, False),
    (1, 2, 200, 2000, 64, 64, False),
    (2, 1, 383, 385, 256, 256, True),
]


def _attention_graph(b, h, sq, sk, d, dv, causal, dtype, by_hand=False, bias=False):
    g = DataflowGraph("attention")
    q = g.add_input("q", [b, h, sq, d], dtype)
    k = g.add_input("k", [b, h, sk, d], dtype)
    v = g.add_input("v", [b, h, sk, dv], dtype)
    if not by_hand:
        g.add_output(g.attention(q, k, v, causal=causal))
        return g
    # softmax(q @ kᵀ * s + mask) @ v, as a user writes it, in f32.
    qf, kf, vf = (g.cast(t, "float32") for t in (q, k, v))
    scores = g.mul(g.matmul(qf, kf, transpose_b=True), 1 / d**0.5)
    if bias:  # per head, query and key: ALiBi's shape, a padding mask's
        scores = g.add(
            scores, g.cast(g.add_input("bias", [h, sq, sk], dtype), "float32")
        )
    if causal:
        scores = g.add(scores, g.causal_mask(sq, sk))
    g.add_output(g.cast(g.matmul(g.softmax(scores, -1), vf), dtype))
    return g


def _run(g: DataflowGraph, dtype: str, arch: str, bias_masked: bool = False):
    compiled = ZeroCompiler(arch=arch).compile(g)
    assert [k.name for k in compiled] == ["attention_attention0"], [
        k.name for k in compiled
    ]
    rng = np.random.default_rng()
    arrays = [
        round_to(rng.standard_normal(t.shape.dims), t.type.element_type)
        for t in g.inputs
    ]
    if bias_masked:  # keys 5, 6 and every 7th from 20 on masked out
        bias = arrays[-1]
        bias[..., [5, 6, *range(20, bias.shape[-1], 7)]] = -np.inf
    inputs = [
        torch.tensor(a.astype(np.float32)).to(TORCH_DTYPE[dtype]).cuda() for a in arrays
    ]
    (out,) = g.outputs
    result = torch.full(out.shape.dims, float("nan"), dtype=TORCH_DTYPE[dtype]).cuda()
    compiled(*inputs, out=[result])
    torch.cuda.synchronize()
    got = result.float().cpu().numpy().astype(np.float64)
    want = molten.interpret(g, *arrays, reference=True)
    assert not np.isnan(got).any(), "NaN in the output (unwritten or wrong)"
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "case",
    CASES,
    ids=["x".join(map(str, c[:6])) + ("-causal" if c[6] else "") for c in CASES],
)
def test_attention_kernel_matches_the_interpreter(case, dtype, arch):
    """On mma.sync (sm_90) and, where the head dims are multiples of 64, on
    wgmma (sm_90a)."""
    g = _attention_graph(*case, dtype)
    error = _run(g, dtype, arch)
    assert error < TOLERANCE[dtype], f"relative L2 error {error:.2e}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_wgmma_with_p_v_left_running(causal, dtype, monkeypatch):
    """Three stages on wgmma: each tile's P V runs on beside the next tile's
    Q Kᵀ and softmax (carried as packed P), at partial tiles, a split."""
    monkeypatch.setattr("molten.passes.schedule.attention.ATTENTION_WGMMA_STAGES", 3)
    for case in [(1, 2, 300, 257, 128, 128, causal), (1, 2, 130, 1000, 64, 64, causal)]:
        g = _attention_graph(*case, dtype)
        assert "stages = 3" in str(ZeroCompiler(arch="sm_90a").optimize(g))
        error = _run(g, dtype, "sm_90a")
        assert error < TOLERANCE[dtype], f"{case}: relative L2 error {error:.2e}"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_warps_of_32_query_rows(dtype, monkeypatch):
    """Two row fragments a warp (each K and V fragment serves both)."""
    monkeypatch.setattr("molten.passes.schedule.attention.ATTENTION_WARP_ROWS", 32)
    g = _attention_graph(1, 2, 300, 129, 64, 64, True, dtype)
    error = _run(g, dtype, "sm_90")
    assert error < TOLERANCE[dtype], f"relative L2 error {error:.2e}"


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_an_additive_bias_with_masked_keys(causal, dtype, arch):
    """A bias tensor read per score, with -inf on some keys (a padding mask;
    no row masked whole), at partial tiles."""
    g = _attention_graph(2, 3, 77, 150, 64, 64, causal, dtype, by_hand=True, bias=True)
    error = _run(g, dtype, arch, bias_masked=True)
    assert error < TOLERANCE[dtype], f"relative L2 error {error:.2e}"


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
def test_attention_written_by_hand_is_the_same_kernel(arch):
    g = _attention_graph(2, 3, 129, 200, 64, 64, True, "bfloat16", by_hand=True)
    error = _run(g, "bfloat16", arch)
    assert error < TOLERANCE["bfloat16"], f"relative L2 error {error:.2e}"


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("style", ["broadcast", "multi_query", "repeat_kv"])
def test_grouped_query_attention(style, arch):
    """Eight query heads on four KV heads (or one), each KV head read where
    its query heads need it."""
    from test_attention import _grouped

    g = _grouped("float16", style, sq=100, sk=130, d=64)
    error = _run(g, "float16", arch)
    assert error < TOLERANCE["float16"], f"relative L2 error {error:.2e}"


DECODE_CASES = [
    # batch, query heads, KV heads, Sq, Sk, D
    (1, 32, 8, 1, 4099, 128),
    (2, 8, 2, 5, 1000, 64),
    (1, 4, 4, 8, 700, 80),
    (3, 8, 1, 2, 2000, 128),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "case", DECODE_CASES, ids=["x".join(map(str, c)) for c in DECODE_CASES]
)
def test_split_decode_matches_the_interpreter_and_is_deterministic(case, dtype):
    """Flash-decoding: the keys split across blocks, the parts combined by
    the group's last block in a fixed order, so two runs agree bit for bit."""
    import kernel_cases

    g = DataflowGraph("attention")
    kernel_cases.attention_decode(*case)(g, dtype)
    compiled = ZeroCompiler().compile(g)
    (only,) = compiled.kernels
    assert only.grid[2] > 1, f"not split: grid {only.grid}"
    error = _run(g, dtype, "sm_90")
    assert error < TOLERANCE[dtype], f"relative L2 error {error:.2e}"
    rng = np.random.default_rng()
    inputs = [
        torch.tensor(rng.standard_normal(t.shape.dims), dtype=TORCH_DTYPE[dtype]).cuda()
        for t in g.inputs
    ]
    first, second = compiled(*inputs), compiled(*inputs)
    assert torch.equal(first, second)


def test_a_part_past_the_keys_adds_nothing(monkeypatch):
    """Ten tiles of keys split six ways (44 groups, 264 / 44 = 6): parts of
    two tiles, the sixth part empty (it loops over no tile and stores a max
    of -inf and a sum of 0)."""
    monkeypatch.setattr("molten.passes.schedule.attention.ATTENTION_TILES_PER_PART", 1)
    g = _attention_graph(1, 44, 1, 600, 64, 64, False, "float16")
    compiled = ZeroCompiler().compile(g)
    assert compiled.kernels[0].grid == (1, 44, 6)
    error = _run(g, "float16", "sm_90")
    assert error < TOLERANCE["float16"], f"relative L2 error {error:.2e}"


def _masked_by_positions(b, h, s, d, dtype):
    """softmax(q kᵀ / √d + mask) v with the mask transformers builds: key j
    kept where j <= i (iota comparisons) and the key's attention_mask (int64
    ids of padding) is nonzero, the rest the least finite score."""
    g = DataflowGraph("attention")
    q, k, v = (g.add_input(n, [b, h, s, d], dtype) for n in "qkv")
    padding = g.add_input("attention_mask", [b, s], "int64")
    causal = g.le(g.iota([s, s], 1), g.iota([s, s], 0))
    kept = g.logical_and(
        g.reshape(causal, [1, 1, s, s]), g.reshape(g.ne(padding, 0), [b, 1, 1, s])
    )
    least = float(torch.finfo(TORCH_DTYPE[dtype]).min)
    mask = g.where(kept, g.constant(0.0, dtype=dtype), g.constant(least, dtype=dtype))
    scores = g.mul(g.matmul(q, k, transpose_b=True), d**-0.5)
    g.add_output(g.matmul(g.softmax(g.add(scores, mask), -1), v))
    return g


@pytest.mark.parametrize("arch", ["sm_90", "sm_90a"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(2, 3, 300, 64), (1, 2, 129, 128)])
def test_a_mask_from_positions_is_computed_inside_attention(shape, dtype, arch):
    """The causal and padding mask from iota comparisons and an int64
    attention_mask is evaluated per score inside the one attention kernel
    (never stored), left padding and all, equal to the interpreter's."""
    b, h, s, d = shape
    g = _masked_by_positions(b, h, s, d, dtype)
    compiled = ZeroCompiler(arch=arch).compile(g)
    assert [k.name for k in compiled] == ["attention_attention0"]
    rng = np.random.default_rng()
    arrays = [
        round_to(rng.standard_normal(t.shape.dims), t.type.element_type)
        for t in g.inputs[:3]
    ]
    padding = np.ones((b, s), np.int64)
    padding[0, : s // 3] = 0  # left padding: the first rows keep no key
    arrays.append(padding)
    inputs = [
        torch.tensor(a.astype(np.float32)).to(TORCH_DTYPE[dtype]).cuda()
        for a in arrays[:3]
    ] + [torch.from_numpy(padding).cuda()]
    result = compiled(*inputs)
    torch.cuda.synchronize()
    got = result.float().cpu().numpy().astype(np.float64)
    want = molten.interpret(g, *arrays, reference=True)
    error = float(np.linalg.norm(got - want) / np.linalg.norm(want))
    assert error < TOLERANCE[dtype], f"relative L2 error {error:.2e}"
