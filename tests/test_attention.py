"""fuse-attention and the attention kernel, without a GPU: which attentions
become one kernel, that the kernel level computes what the graph computes
(the float64 interpreter before and after), and the CUDA source it lowers
to. tests/test_attention_gpu.py runs the kernels."""

import re

import numpy as np
import pytest

import molten
from molten import ZeroCompiler
from molten.context import parse_module
from molten.dialects import kernel
from molten.interpreters import round_to
from molten.ir import DataflowGraph
from molten.pipeline import run_pipeline


def _graph(
    dtype,
    sq=33,
    sk=47,
    d=32,
    dv=32,
    causal=False,
    by_hand=False,
    same=False,
    bias=False,
    softcap=False,
):
    g = DataflowGraph("attention")
    q = g.add_input("q", [2, sq, d], dtype)
    k = q if same else g.add_input("k", [2, sk, d], dtype)
    v = q if same else g.add_input("v", [2, sk, dv], dtype)
    if not (by_hand or bias or softcap):
        g.add_output(g.attention(q, k, v, causal=causal))
        return g
    scores = g.matmul(q, k, transpose_b=True) * (1 / d**0.5)
    if softcap:  # tanh soft-capping of the logits, as Gemma 2 writes it
        scores = g.tanh(scores / 30.0) * 30.0
    if bias:  # an additive bias over (query, key), broadcast over the batch
        scores = scores + g.add_input("bias", [sq, sk], dtype)
    if causal:
        scores = scores + g.causal_mask(sq, sk, dtype)
    g.add_output(g.matmul(g.softmax(scores), v))
    return g


def _kinds(module) -> list[str]:
    return [op.kind.data.value for op in module.walk() if isinstance(op, kernel.FuncOp)]


def _check_one_attention_kernel(g: DataflowGraph, seed: int, arch: str = "sm_90"):
    """The graph's kernel level (for `arch`) is one attention kernel that
    computes what the graph computes, in the float64 interpreter; the
    kernel-level module."""
    module = ZeroCompiler(arch=arch).optimize(g)
    assert _kinds(module) == ["attention"]
    rng = np.random.default_rng(seed)
    arrays = [
        round_to(rng.standard_normal(t.shape.dims), t.type.element_type)
        for t in g.inputs
    ]
    np.testing.assert_allclose(
        molten.interpret(module, *arrays, reference=True),
        molten.interpret(g, *arrays, reference=True),
        rtol=1e-12,
        atol=1e-12,
    )
    return module


VARIANTS = {
    "plain": {},
    "causal": {"causal": True},
    "causal_more_queries": {"causal": True, "sq": 60, "sk": 20},
    "value_head_16": {"dv": 16},
    "by_hand": {"by_hand": True},
    "by_hand_causal": {"by_hand": True, "causal": True},
    "self_attention": {"same": True, "sq": 20},
    "bias": {"bias": True},
    "bias_causal": {"bias": True, "causal": True},
    "softcap": {"softcap": True},
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_attention_is_one_kernel_computing_the_graph(variant, dtype):
    g = _graph(dtype, **VARIANTS[variant])
    _check_one_attention_kernel(g, seed=7)
    compiled = ZeroCompiler().compile(g)
    assert len(compiled) == 1
    assert "molten_mma_" in compiled.source and "molten_pack_" in compiled.source


def test_f32_attention_stays_in_gemm_kernels():
    g = _graph("float32", causal=True)
    assert "attention" not in _kinds(ZeroCompiler().optimize(g))


def test_an_attention_kernel_with_a_foreign_schedule_is_a_clear_error():
    g = _graph("float16")
    text = str(ZeroCompiler().optimize(g)).replace("warp = [16, 32]", "warp = [32, 32]")
    with pytest.raises(NotImplementedError, match="an attention kernel @attention_"):
        run_pipeline(parse_module(text), "lower-kernel-to-cuda")


def test_warps_of_32_query_rows_lower(monkeypatch):
    monkeypatch.setattr("molten.passes.schedule.attention.ATTENTION_WARP_ROWS", 32)
    g = _graph("bfloat16", causal=True)
    module = ZeroCompiler().optimize(g)
    assert "tile = [128, 64, 32], warp = [32, 32]" in str(module)
    compiled = ZeroCompiler().compile(g)
    assert compiled.kernels[0].block == (128, 1, 1)


def _grouped(dtype, style, sq=40, sk=70, d=32, causal=True):
    """Eight query heads on four KV heads (or one, multi-query), each KV head
    repeated as a user writes it."""
    g = DataflowGraph("attention")
    if style == "broadcast":  # batch axes (B, KV heads, group) broadcast
        q = g.add_input("q", [2, 4, 2, sq, d], dtype)
        k, v = (g.add_input(n, [2, 4, 1, sk, d], dtype) for n in "kv")
    elif style == "multi_query":  # one KV head for every query head
        q = g.add_input("q", [2, 8, sq, d], dtype)
        k, v = (g.add_input(n, [2, 1, sk, d], dtype) for n in "kv")
    else:  # repeat_kv: k[:, :, None].expand(...).reshape(B, H, S, D)
        q = g.add_input("q", [2, 8, sq, d], dtype)
        stored = [g.add_input(n, [2, 4, sk, d], dtype) for n in "kv"]
        k, v = (
            g.reshape(
                g.broadcast_to(g.reshape(t, [2, 4, 1, sk, d]), [2, 4, 2, sk, d]),
                [2, 8, sk, d],
            )
            for t in stored
        )
    g.add_output(g.attention(q, k, v, causal=causal))
    return g


@pytest.mark.parametrize("style", ["broadcast", "multi_query", "repeat_kv"])
def test_grouped_query_attention_is_one_kernel_computing_the_graph(style):
    g = _grouped("bfloat16", style)
    _check_one_attention_kernel(g, seed=3)
    assert len(ZeroCompiler().compile(g)) == 1


def test_a_bias_cast_up_is_computed_in_the_kernel():
    """The bias's cast to f32 (as a user writes it beside f32 scores) goes
    into the attention kernel, not a kernel of its own."""
    g = DataflowGraph("attention")
    q, k, v = (g.add_input(n, [2, 3, 40, 32], "float16") for n in "qkv")
    qf, kf, vf = (g.cast(t, "float32") for t in (q, k, v))
    bias = g.cast(g.add_input("bias", [3, 40, 40], "float16"), "float32")
    scores = g.matmul(qf, kf, transpose_b=True) * 0.125 + bias
    g.add_output(g.cast(g.matmul(g.softmax(scores), vf), "float16"))
    assert [kernel.name for kernel in ZeroCompiler().compile(g)] == [
        "attention_attention0"
    ]


@pytest.mark.parametrize(("head", "keys"), [(144, 64), (160, 32), (256, 32)])
def test_large_head_dims_get_tiles_the_copies_divide(head, keys):
    """Above head dim 128 the tiles hold 32 keys where the block's 16-byte
    copies divide them (multiples of 32), else 64; each one compiles."""
    g = DataflowGraph("attention")
    q, k, v = (g.add_input(n, [1, 2, 40, head], "float16") for n in "qkv")
    g.add_output(g.attention(q, k, v))
    assert f"tile = [64, {keys}, {head}]" in str(ZeroCompiler().optimize(g))
    assert len(ZeroCompiler().compile(g)) == 1


def _decode(dtype="float16", batch=1, sq=1, sk=4099, d=64):
    """Grouped-query decode: eight query heads on two KV heads (repeat_kv)."""
    import kernel_cases

    g = DataflowGraph("decode")
    kernel_cases.attention_decode(batch, 8, 2, sq, sk, d)(g, dtype)
    return g


def _schedule(module) -> kernel.ScheduleAttr:
    (schedule,) = [op.schedule for op in module.walk() if isinstance(op, kernel.FuncOp)]
    return schedule


def test_decode_packs_the_query_heads_and_splits_the_keys():
    """One query, eight query heads on two KV heads: a block's rows are the
    four query heads of a KV head (pack = 4), so each K and V tile is read
    once for them; each of the two groups' 65 tiles of keys go to parts of
    at least two tiles (32 parts), one block each; the last block of a
    group to finish combines the parts."""
    g = _decode()
    module = ZeroCompiler().optimize(g)
    schedule = _schedule(module)
    assert (schedule.pack.data, schedule.split.data) == (4, 32)
    compiled = ZeroCompiler().compile(g)
    (only,) = compiled.kernels
    assert only.grid == (1, 2, 32)
    assert "molten_last_arrival(attention_counters + " in compiled.source
    _check_one_attention_kernel(_decode(sk=300), seed=11)


@pytest.mark.parametrize(
    ("groups", "tiles", "causal", "split"),
    [
        (8, 65, False, 32),  # at least 2 tiles a part
        (8, 1000, False, 33),  # two blocks an SM: 264 / 8
        (48, 1000, False, 5),  # one wave: 5 x 48 = 240 blocks of 264
        (132, 1000, False, 1),  # the groups fill the SMs
        (8, 3, False, 1),  # too few tiles to share
        (8, 1000, True, 1),  # causal: not split
    ],
)
def test_the_split_follows_the_groups_and_the_keys(groups, tiles, causal, split):
    from molten.passes.schedule.attention import attention_split

    assert attention_split(groups, tiles, causal, sm_count=132) == split


def test_a_split_causal_attention_is_a_clear_error():
    g = _graph("float16", causal=True, sk=300)
    text = str(ZeroCompiler().optimize(g))
    assert text.count("#kernel.schedule<attention, block = 128, tile") == 1
    text = text.replace(
        "attention, block = 128, tile", "attention, block = 128, split = 2, tile"
    )
    with pytest.raises(
        NotImplementedError, match="no split or pack of a causal attention"
    ):
        run_pipeline(parse_module(text), "lower-kernel-to-cuda")


@pytest.mark.parametrize("causal", [False, True])
def test_sm_90a_attention_is_one_wgmma_kernel(causal):
    """On sm_90a, head dims that are multiples of 64 take wgmma: Q Kᵀ from
    shared memory (its first product with no accumulators in), P V with P
    in registers; exp2 on the SFU. The kernel level still computes the
    graph."""
    g = _graph("float16", sq=150, sk=70, d=64, dv=64, causal=causal)
    module = _check_one_attention_kernel(g, seed=3, arch="sm_90a")
    assert "mma_warps = 4" in str(module)
    source = ZeroCompiler(arch="sm_90a").compile(g).source
    assert "molten_wgmma_m64n64k16_f16_kk_zero(" in source  # Q Kᵀ, D = A B
    assert '"=f"(d0)' in source and ", 0, 1, 1, 0, 0;" in source  # scale-d 0
    assert "molten_wgmma_m64n64k16_f16_rt(" in source  # P V, A in registers
    assert "{%32, %33, %34, %35}, %36, 1, 1, 1, 1;" in source
    assert "ex2.approx.ftz.f32" in source
    assert not re.search(r"^\s+molten_mma_f16\(", source, re.M)  # no mma.sync


def test_head_dims_not_whole_swizzled_rows_stay_on_mma_sync():
    """wgmma's operand tiles are 64-element swizzled rows: head dim 80 runs
    on mma.sync even for sm_90a."""
    g = _graph("bfloat16", d=80, dv=80)
    module = str(ZeroCompiler(arch="sm_90a").optimize(g))
    assert (
        "schedule #kernel.schedule<attention," in module and "mma_warps" not in module
    )


def test_the_tile_pass_checks_an_attention_schedule():
    """A wgmma schedule (mma_warps = 4) on head dim 80, which is not whole
    128-byte swizzled rows: the tile pass names the kernel and what the
    lowering takes."""
    from xdsl.utils.exceptions import PassFailedException

    g = _graph("float16", d=80, dv=80)
    text = str(ZeroCompiler(arch="sm_90a").optimize(g))
    text = text.replace(
        "tile = [64, 64, 80], warp = [16, 80], stages = 2>",
        "tile = [128, 128, 80], warp = [64, 80], stages = 2, mma_warps = 4>",
    ).replace("block = 128,", "block = 256,")
    # The hand schedule's tiling is the tile pass's to derive again.
    text = re.sub(r" tiling #kernel\.attention_tiling<[^>]*>", "", text)
    assert "mma_warps = 4" in text and "attention_tiling" not in text
    with pytest.raises(PassFailedException, match=r"tile: @attention_\w+: schedule"):
        run_pipeline(parse_module(text), "tile")
    with pytest.raises(NotImplementedError, match="head dims that are multiples of 64"):
        run_pipeline(parse_module(text), "lower-kernel-to-cuda")


@pytest.mark.parametrize(
    "shape, arch, counts",
    [
        # (sq, sk, d, causal), arch: (query tiles, key steps, partial)
        ((150, 70, 64, False), "sm_80", (3, 2, ["queries", "keys"])),
        ((1, 37, 32, False), "sm_80", (1, 1, ["queries", "keys"])),
        ((128, 128, 64, True), "sm_90a", (2, 2, [])),
        ((64, 300, 32, True), "sm_80", (1, 5, ["keys"])),
    ],
)
def test_the_attention_tiling_counts_what_the_kernel_runs(shape, arch, counts):
    """The tile pass's islpy answers at awkward sizes: tiles of query rows,
    key steps (ceil(sk / keys)), and the loops whose last tile is partial."""
    sq, sk, d, causal = shape
    module = ZeroCompiler(arch=arch).optimize(
        _graph("float16", sq=sq, sk=sk, d=d, dv=d, causal=causal)
    )
    (kfunc,) = [
        k
        for k in module.walk()
        if isinstance(k, kernel.FuncOp) and k.kind.data == kernel.KernelKind.ATTENTION
    ]
    tiling = kfunc.tiling
    assert isinstance(tiling, kernel.AttentionTilingAttr)
    bm, bn, _ = (t.data for t in kfunc.schedule.tile)
    assert tiling.grid.data[0].data == -(-sq // bm) == counts[0]
    assert tiling.key_steps.data == -(-sk // bn) == counts[1]
    assert [p.data for p in tiling.partial] == counts[2]
    padded = kfunc.schedule.mma_warps.data == 1
    assert [v.data for v in tiling.key] == [bn, d, d + 8 * padded]


def test_the_attention_lowering_reads_its_tiling():
    """A tiling edited by hand (one key step fewer) is the kernel's key
    loop: the lowering reads the tile pass's answer, not its own."""
    g = _graph("float16", sq=150, sk=70, d=64, dv=64)
    text = str(ZeroCompiler(arch="sm_80").optimize(g))
    assert text.count("key_steps = 2") == 1
    edited = text.replace("key_steps = 2", "key_steps = 1")
    lowered, again = (
        str(run_pipeline(parse_module(t), "lower-kernel-to-cuda"))
        for t in (text, edited)
    )
    assert lowered != again
    assert str(run_pipeline(parse_module(text), "lower-kernel-to-cuda")) == lowered
