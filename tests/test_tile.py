"""The tile pass: the tiling islpy derives agrees with ceil-division
arithmetic on random gemm shapes and schedules, the pass keeps a graph's
meaning, illegal or mismatched tilings are refused, and #kernel.tiling
round-trips and verifies."""

from __future__ import annotations

import math

import islpy as isl
import pytest
from conftest import DTYPES, assert_close, rand
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from kernel_cases import WGMMA_CASES, WGMMA_SCHEDULES
from xdsl.utils.exceptions import PassFailedException, VerifyException

import molten
from molten.context import parse_module
from molten.dialects import kernel
from molten.ir import DataflowGraph
from molten.passes.schedule.common import takes_tensor_cores, takes_tf32
from molten.passes.tiling import gemm as gemm_tiling
from molten.passes.tiling import polyhedral
from molten.pipeline import KERNEL_LEVEL_PIPELINE, run_pipeline

ELEMENT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
UNTILED = KERNEL_LEVEL_PIPELINE.replace(",tile,", ",")


def tensor(shape, element) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>"


def gemm_kernel(
    a_shape, b_shape, result_shape, element, schedule, ta, tb, kind="gemm", tiling=""
) -> str:
    a, b, r = (tensor(s, element) for s in (a_shape, b_shape, result_shape))
    flags = (" transpose_a" if ta else "") + (" transpose_b" if tb else "")
    tiling = f" tiling {tiling}" if tiling else ""
    return f"""
kernel.func @mm(%a: {a}, %b: {b}) -> ({r}) {kind} schedule {schedule}{tiling} {{
  %m = molten.matmul %a, %b{flags} : ({a}, {b}) -> {r}
  kernel.yield %m : {r}
}}
"""


def tiled(text: str) -> kernel.TilingAttr:
    module = run_pipeline(parse_module(text), "tile")
    (k,) = [op for op in module.ops if isinstance(op, kernel.FuncOp)]
    assert k.tiling is not None
    return k.tiling


def ints(attr) -> list[int]:
    return [v.data for v in attr]


# --------------------------------------------------------------------------
# islpy against arithmetic.
# --------------------------------------------------------------------------


@st.composite
def gemm_cases(draw):
    """A gemm (batch shapes broadcast like numpy, transposes) and a schedule
    whose tiles divide across levels: tensor cores on f16/bf16, SIMT on any
    type."""
    batch = draw(st.lists(st.integers(1, 3), max_size=2))

    def operand_batch():
        dims = [draw(st.sampled_from([size, 1])) for size in batch]
        return dims[draw(st.integers(0, len(dims))) :]

    a_batch, b_batch = operand_batch(), operand_batch()
    # The result keeps the broadcast batch axes of the operands only.
    rank = max(len(a_batch), len(b_batch))
    result_batch = batch[len(batch) - rank :] if rank else []
    result_batch = [
        max(
            a_batch[i - rank + len(a_batch)] if i - rank + len(a_batch) >= 0 else 1,
            b_batch[i - rank + len(b_batch)] if i - rank + len(b_batch) >= 0 else 1,
        )
        for i in range(len(result_batch))
    ]
    m, n, k = (draw(st.integers(1, 300)) for _ in range(3))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    if draw(st.booleans()):
        dtype = draw(st.sampled_from(["float16", "bfloat16"]))
        wm, wn = draw(st.sampled_from([16, 32, 64])), draw(st.sampled_from([8, 16, 64]))
        warps_m, warps_n = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        bk = draw(st.sampled_from([16, 32, 64]))
        stages = draw(st.integers(1, 4))
        tile = (wm * warps_m, wn * warps_n, bk)
        schedule = kernel.ScheduleAttr(
            "gemm_mma", 32 * warps_m * warps_n, tile=tile, warp=(wm, wn), stages=stages
        )
    else:
        dtype = draw(st.sampled_from(DTYPES))
        bm, bn = 4 * draw(st.integers(1, 16)), 4 * draw(st.integers(1, 16))
        tile = (bm, bn, draw(st.integers(1, 40)))
        schedule = kernel.ScheduleAttr("gemm_simt", (bm // 4) * (bn // 4), tile=tile)
    a_shape = [*a_batch, *((k, m) if ta else (m, k))]
    b_shape = [*b_batch, *((n, k) if tb else (k, n))]
    return {
        "a": a_shape,
        "b": b_shape,
        "result": [*result_batch, m, n],
        "dtype": dtype,
        "ta": ta,
        "tb": tb,
        "schedule": schedule,
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gemm_cases())
def test_tiling_agrees_with_arithmetic(case):
    note(case)
    schedule = case["schedule"]
    text = gemm_kernel(
        case["a"],
        case["b"],
        case["result"],
        ELEMENT[case["dtype"]],
        schedule,
        case["ta"],
        case["tb"],
    )
    t = tiled(text)
    *batch, m, n = case["result"]
    k = case["a"][-2] if case["ta"] else case["a"][-1]
    bm, bn, bk = ints(schedule.tile)
    tensor_cores = bool(schedule.warp.data)
    assert ints(t.grid) == [math.ceil(n / bn), math.ceil(m / bm), math.prod(batch)]
    assert t.k_steps.data == math.ceil(k / bk)
    partial = [
        d
        for d, size, step in zip("mnk", (m, n, k), (bm, bn, bk), strict=True)
        if size % step
    ]
    assert [d.data for d in t.partial] == partial
    assert ints(t.block) == [bm, bn, bk]
    assert ints(t.warp) == ints(schedule.warp)
    assert ints(t.fragment) == [16, 8, 16] if tensor_cores else [4, 4, 1]
    assert t.stages == schedule.stages
    skew = 8 if tensor_cores else 0
    lhs = (bk, bm) if case["ta"] else (bm, bk)
    rhs = (bn, bk) if case["tb"] else (bk, bn)
    assert ints(t.lhs) == [*lhs, lhs[1] + skew]
    assert ints(t.rhs) == [*rhs, rhs[1] + skew]


def test_batch_index_unravels_and_broadcasts():
    # b over [2, 3]: the second axis is b mod 3, the first floor(b / 3);
    # an operand of batch [3] reads the second only, one of [2, 1] the first.
    assert polyhedral.batch_index([2, 3], [2, 3]) == [
        "(floor(b / 3) mod 2)",
        "(floor(b / 1) mod 3)",
    ]
    assert polyhedral.batch_index([2, 3], [3]) == ["(floor(b / 1) mod 3)"]
    assert polyhedral.batch_index([2, 3], [2, 1]) == ["(floor(b / 3) mod 2)", "0"]
    assert polyhedral.batch_index([2, 3], []) == []


def test_dependences_are_the_accumulation_along_k():
    gemm = polyhedral.Gemm((), 4, 5, 6, (4, 6), (6, 5), False, False, None)
    domain = polyhedral.iteration_domain(gemm)
    _, _, c = polyhedral.access_relations(gemm)
    deps = polyhedral.accumulation_dependences(domain, c, c)
    # every pair of points of one (b, i, j), the later k after the earlier
    expected = isl.Map(
        "{ S[b, i, j, k] -> S[b, i, j, k2] : b = 0 and 0 <= i < 4 and 0 <= j < 5 "
        "and 0 <= k < k2 < 6 }"
    )
    assert deps.is_equal(expected)
    assert polyhedral.illegality(deps, (2, 2, 4)) is None


def test_dependence_carried_by_j_is_illegal():
    # An accumulation into C[b, i] (all columns into one) carries a
    # dependence along j, which the threads of a block cannot run in parallel.
    gemm = polyhedral.Gemm((), 4, 5, 6, (4, 6), (6, 5), False, False, None)
    domain = polyhedral.iteration_domain(gemm)
    rows = isl.Map("{ S[b, i, j, k] -> C[b, i] }")
    deps = polyhedral.accumulation_dependences(domain, rows, rows)
    reason = polyhedral.illegality(deps, (2, 2, 4))
    assert reason is not None and "carried by b, i or j" in reason


def test_illegal_tiling_is_a_pass_failure(monkeypatch):
    def rows_only(gemm):
        a, b, _ = ACCESS(gemm)
        return a, b, isl.Map("{ S[b, i, j, k] -> C[b, i] }")

    ACCESS = polyhedral.access_relations
    # The tiling reads the model's relations through its own module's names.
    monkeypatch.setattr(gemm_tiling, "access_relations", rows_only)
    text = gemm_kernel(
        [8, 4],
        [4, 8],
        [8, 8],
        "f32",
        kernel.ScheduleAttr("gemm_simt", 256, tile=(64, 64, 16)),
        0,
        0,
    )
    with pytest.raises(PassFailedException, match=r"tile: @mm: tiling M x N x K"):
        tiled(text)


def test_mma_fragment_is_the_lowerings():
    from molten.passes import lower_kernel_to_cuda as lowering

    assert kernel.MMA_FRAGMENT == lowering.MMA_SHAPE


@pytest.mark.parametrize(
    "block, tile, fragment",
    [
        (256, (64, 64, 16), (4, 4, 1)),
        (128, (64, 64, 16), (4, 8, 1)),
        (256, (128, 128, 8), (8, 8, 1)),
        (64, (32, 16, 4), (2, 4, 1)),
    ],
)
def test_simt_fragment_shares_the_block_tile(block, tile, fragment):
    schedule = kernel.ScheduleAttr("gemm_simt", block, tile=tile)
    assert gemm_tiling.simt_fragment(None, schedule, tile) == fragment  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# Semantics: the pass adds an attribute and changes no result.
# --------------------------------------------------------------------------


def g_gemms(dtype):
    g = DataflowGraph("gemms")
    x = g.add_input("x", [72, 40], dtype)
    w = g.add_input("w", [40, 24], dtype)
    bias = g.add_input("bias", [24], dtype)
    y = g.gelu(x @ w + bias, name="y")
    q = g.add_input("q", [2, 3, 64, 16], dtype)
    k = g.add_input("k", [3, 80, 16], dtype)
    s = g.matmul(q, k, name="s", transpose_b=True)
    g.add_output(y)
    g.add_output(s)
    return g


@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_keeps_the_graphs_meaning(dtype, rng):
    g = g_gemms(dtype)
    before = run_pipeline(g.to_module(), UNTILED)
    after = run_pipeline(before.clone(), "tile")
    gemms = [
        op
        for op in after.ops
        if isinstance(op, kernel.FuncOp) and op.kind.data == kernel.KernelKind.GEMM
    ]
    assert len(gemms) == 2 and all(k.tiling is not None for k in gemms)
    if dtype != "float32":  # 72 rows, every stored row a multiple of 8
        assert all(k.schedule.warp.data for k in gemms)
    inputs = [rand(rng, v.type.get_shape(), dtype) for v in g.inputs]
    for reference in (True, False):
        want = molten.interpret(before, *inputs, reference=reference)
        got = molten.interpret(after, *inputs, reference=reference)
        for w, o in zip(want, got, strict=True):
            assert_close(o, w, 0.0)


def test_kernel_level_pipeline_tiles_every_gemm():
    module = run_pipeline(g_gemms("float16").to_module(), KERNEL_LEVEL_PIPELINE)
    for k in module.ops:
        if isinstance(k, kernel.FuncOp):
            tiled_kind = k.kind.data == kernel.KernelKind.GEMM
            assert (k.tiling is not None) == tiled_kind, k.sym_name.data


# --------------------------------------------------------------------------
# The tensor-core heuristic of kernel-schedule.
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "a", "b", "ta", "tb", "expected"),
    [
        ("float16", [64, 16], [16, 8], False, False, True),
        ("bfloat16", [16, 64], [8, 16], True, True, True),  # K, M and K contiguous
        ("float16", [64, 12], [12, 8], False, False, False),  # K = 12
        ("float16", [64, 16], [16, 12], False, False, False),  # N = 12
        ("float16", [16, 72], [16, 12], True, False, False),  # stored [K, M], N = 12
        ("float16", [63, 16], [16, 8], False, False, False),  # M < 64
        ("float32", [64, 16], [16, 8], False, False, False),
    ],
)
def test_takes_tensor_cores(dtype, a, b, ta, tb, expected):
    g = DataflowGraph("g")
    x, w = g.add_input("x", a, dtype), g.add_input("w", b, dtype)
    g.add_output(g.matmul(x, w, transpose_a=ta, transpose_b=tb))
    (mm,) = [op for op in g.to_module().walk() if op.name == "molten.matmul"]
    assert takes_tensor_cores(mm) is expected


@pytest.mark.parametrize(
    "dtype, a, b, ta, tb, expected",
    [
        ("float32", [64, 16], [16, 8], False, False, True),
        ("float32", [16, 64], [8, 16], True, True, True),  # K, M and K contiguous
        ("float32", [64, 18], [18, 8], False, False, False),  # K = 18
        ("float32", [64, 16], [16, 6], False, False, False),  # N = 6
        ("float32", [63, 16], [16, 8], False, False, False),  # M < 64
        ("float16", [64, 16], [16, 8], False, False, False),  # 16-bit: mma.sync
    ],
)
def test_takes_tf32(dtype, a, b, ta, tb, expected):
    """f32 matmuls tensor cores take as 3xTF32: rows of whole 16 bytes (4
    f32) along each operand's contiguous axis, at least 64 rows."""
    g = DataflowGraph("g")
    x, w = g.add_input("x", a, dtype), g.add_input("w", b, dtype)
    g.add_output(g.matmul(x, w, transpose_a=ta, transpose_b=tb))
    (mm,) = [op for op in g.to_module().walk() if op.name == "molten.matmul"]
    assert takes_tf32(mm) is expected


# --------------------------------------------------------------------------
# #kernel.tiling and the kernel.func that holds it.
# --------------------------------------------------------------------------

TILING = kernel.TilingAttr(
    grid=(2, 2, 1),
    block=(128, 128, 32),
    warp=(64, 64),
    fragment=(16, 8, 16),
    stages=4,
    k_steps=2,
    partial=("m", "k"),
    lhs=(128, 32, 40),
    rhs=(32, 128, 136),
)


def test_tiling_prints_and_parses():
    text = (
        "#kernel.tiling<grid = [2, 2, 1], block = [128, 128, 32], warp = [64, 64], "
        "fragment = [16, 8, 16], stages = 4, k_steps = 2, partial = [m, k], "
        "lhs = [128, 32, 40], rhs = [32, 128, 136]>"
    )
    assert str(TILING) == text
    module = parse_module(f"func.func @f() attributes {{t = {text}}} {{\n}}")
    (f,) = module.ops
    assert f.attributes["t"] == TILING
    simt = kernel.TilingAttr(
        (1, 1, 1),
        (64, 64, 16),
        (),
        (4, 4, 1),
        1,
        1,
        (),
        (
            64,
            16,
            16,
        ),
        (16, 64, 64),
    )
    assert "warp" not in str(simt) and "partial = []" in str(simt)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"grid": (1, 1)}, "grid = \\[1, 1\\] must give 3 sizes"),
        ({"warp": (64,)}, "warp = \\[64\\] must give two sizes"),
        ({"block": (0, 128, 32)}, "block sizes must be >= 1"),
        ({"k_steps": 0}, "k_steps must be >= 1"),
        ({"partial": ("k", "m")}, "must name each of m, n, k at most once"),
        ({"partial": ("x",)}, "must name each of m, n, k at most once"),
        ({"lhs": (128, 32, 16)}, "lhs pitch 16 is shorter than its 32 columns"),
    ],
)
def test_tiling_verifier(change, message):
    fields = {
        "grid": (2, 2, 1),
        "block": (128, 128, 32),
        "warp": (64, 64),
        "fragment": (16, 8, 16),
        "stages": 4,
        "k_steps": 2,
        "partial": (),
        "lhs": (128, 32, 40),
        "rhs": (32, 128, 136),
    }
    with pytest.raises(VerifyException, match=message):
        kernel.TilingAttr(**{**fields, **change})


def test_tiling_parse_errors():
    with pytest.raises(Exception, match="a tiling needs 'grid'"):
        parse_module("func.func @f() attributes {t = #kernel.tiling<stages = 1>} {\n}")
    with pytest.raises(Exception, match="unknown tiling field 'warps'"):
        parse_module("func.func @f() attributes {t = #kernel.tiling<warps = [1]>} {\n}")


TC = (
    "#kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], warp = [64, 64], "
    "stages = 4>"
)


def tc_kernel(kind="gemm", schedule=TC, tiling=TILING) -> str:
    return gemm_kernel(
        [256, 64], [64, 256], [256, 256], "f16", schedule, 0, 0, kind, tiling
    )


def test_kernel_func_round_trips_its_tiling():
    module = parse_module(tc_kernel())
    (k,) = module.ops
    assert k.tiling == TILING
    assert f"stages = 4> tiling {TILING} {{" in str(module)
    assert parse_module(str(module)).ops.first.tiling == TILING


@pytest.mark.parametrize(
    ("kind", "schedule", "message"),
    [
        (
            "pointwise",
            "#kernel.schedule<pointwise, block = 128>",
            "only gemm and attention kernels are tiled, not pointwise",
        ),
        ("pointwise", TC, "a gemm_mma schedule does not schedule a pointwise kernel"),
        (
            "gemm",
            TC.replace("stages = 4", "stages = 3"),
            "the tiling's stages = 4 is not the schedule's stages = 3",
        ),
        (
            "gemm",
            TC.replace("tile = [128, 128, 32]", "tile = [128, 128, 64]"),
            r"the tiling's block = \[128, 128, 32\] is not the schedule's tile",
        ),
        (
            "gemm",
            TC.replace("warp = [64, 64]", "warp = [64, 32]"),
            r"the tiling's warp = \[64, 64\] is not the schedule's warp",
        ),
    ],
)
def test_kernel_func_tiling_must_be_its_schedules(kind, schedule, message):
    text = tc_kernel(kind, schedule)
    with pytest.raises(Exception, match=message):
        parse_module(text).verify()


@pytest.mark.parametrize("case", sorted(WGMMA_SCHEDULES))
def test_wgmma_case_takes_its_schedule_class(case):
    """Each wgmma kernel case stands for the tile, stages, split-K and
    persistent kernel that kernel-schedule gives it on sm_90a: the GPU
    tests cover those classes only while the cases keep them."""
    g = DataflowGraph(case)
    WGMMA_CASES[case](g, "bfloat16")
    module = molten.ZeroCompiler(arch="sm_90a").optimize(g)
    (gemm,) = [
        op
        for op in module.walk()
        if isinstance(op, kernel.FuncOp) and op.kind.data == kernel.KernelKind.GEMM
    ]
    schedule = gemm.schedule
    rows, cols, _ = (t.data for t in schedule.tile)
    picked = (
        rows,
        cols,
        schedule.stages.data,
        schedule.split.data,
        schedule.persistent.data,
    )
    assert picked == WGMMA_SCHEDULES[case]
    assert gemm.tiling.split.data == schedule.split.data
