"""The kernel level: fuse-reduction, fuse-epilogue, fuse-elementwise,
kernel-outline and kernel-schedule keep a graph's meaning, leave no molten op
at the graph level, build legal (convex, verifying) groups, and schedule
every kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from random_graphs import BINARY, SCALARS, UNARY, apply_binary, apply_unary
from xdsl.dialects import func
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

import molten
from benchmarks.compile_time import chain
from molten import pipeline
from molten.dialects import kernel
from molten.dialects import molten as dialect
from molten.ir import DataflowGraph, TensorShape
from molten.passes import fusion
from molten.pipeline import MOLTEN_PIPELINE, run_pipeline

try:  # tests/ is a package (tests/__init__.py) or a plain directory
    from .conftest import DTYPES, NATIVE_TOL, REFERENCE_TOL, assert_close, rand
except ImportError:  # pragma: no cover
    from conftest import DTYPES, NATIVE_TOL, REFERENCE_TOL, assert_close, rand

KERNEL_LEVEL = getattr(pipeline, "KERNEL_LEVEL_PIPELINE", pipeline.DEFAULT_PIPELINE)
"""The pipeline prefix that ends at the kernel level (fused, outlined and
scheduled kernels): DEFAULT_PIPELINE until the cuda level was added."""

FUSION_PASSES = ("fuse-reduction", "fuse-epilogue", "fuse-elementwise")
SPECS = {
    **{name: f"{MOLTEN_PIPELINE},{name}" for name in FUSION_PASSES},
    "kernel-level": KERNEL_LEVEL,
}
GRAPH_LEVEL_OPS = {"kernel.launch", "func.return"}
KIND_OF_PASS = {
    "fuse-reduction": kernel.KernelKind.ROW_REDUCE,
    "fuse-epilogue": kernel.KernelKind.GEMM,
    "fuse-elementwise": kernel.KernelKind.POINTWISE,
}


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def run(graph: DataflowGraph, spec: str = KERNEL_LEVEL):
    return run_pipeline(graph.to_module(), spec)


def graph_func(module) -> func.FuncOp:
    (graph,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return graph


def graph_level_names(module) -> list[str]:
    return [op.name for op in graph_func(module).body.block.ops]


def kernel_funcs(module) -> list[kernel.FuncOp]:
    return [op for op in module.ops if isinstance(op, kernel.FuncOp)]


def launches(module) -> list[kernel.LaunchOp]:
    return [
        op
        for op in graph_func(module).body.block.ops
        if isinstance(op, kernel.LaunchOp)
    ]


def kernels_anywhere(module) -> list[kernel.FusedOp | kernel.FuncOp]:
    return [
        op for op in module.walk() if isinstance(op, kernel.FusedOp | kernel.FuncOp)
    ]


def body_ops(k: kernel.FusedOp | kernel.FuncOp) -> list[Operation]:
    return list(k.body.block.ops)


def check_kernel_level(module) -> None:
    """The invariants of every module at the kernel level."""
    # Only launches and the return are left in the graph function.
    names = graph_level_names(module)
    assert set(names) <= GRAPH_LEVEL_OPS, names
    assert not [op for op in module.walk() if isinstance(op, kernel.FusedOp)]
    funcs = kernel_funcs(module)
    by_name = {f.sym_name.data: f for f in funcs}
    assert len(by_name) == len(funcs), "kernel names must be unique"
    called = [launch.callee.string_value() for launch in launches(module)]
    assert sorted(called) == sorted(by_name), (called, sorted(by_name))
    for f in funcs:
        f.verify()
        assert f.schedule is not None, f"@{f.sym_name.data} has no schedule"
        check_kind(f)
        check_schedule(f)
        for op in body_ops(f)[:-1]:
            assert isinstance(op, dialect.MoltenOp), op.name
            assert not isinstance(op, dialect.COMPOSITE_OPS), op.name


def check_kind(k: kernel.FusedOp | kernel.FuncOp) -> None:
    ops = body_ops(k)
    has_matmul = any(isinstance(op, dialect.MatmulOp) for op in ops)
    has_reduction = any(isinstance(op, dialect.ReductionOp) for op in ops)
    scans = [op for op in ops if isinstance(op, dialect.CumsumOp)]
    assert has_matmul + has_reduction + bool(scans) <= 1, "one kind of work"
    kind = k.kind.data
    if has_matmul:
        assert kind == kernel.KernelKind.GEMM
    elif scans:
        assert kind == kernel.KernelKind.SCAN and len(scans) == 1
    elif has_reduction:
        assert kind == kernel.KernelKind.ROW_REDUCE
    else:
        assert kind == kernel.KernelKind.POINTWISE


def row_length_of(k) -> int:
    for op in body_ops(k):
        if isinstance(op, dialect.ReductionOp):
            shape = op.input.type.get_shape()
            return math.prod(shape[i] for i in op.axes.get_values())
    raise AssertionError("a row_reduce kernel without a reduction")


def rows_are_strided(k) -> bool:
    """Whether axes follow a row_reduce kernel's reduced ones."""
    for op in body_ops(k):
        if isinstance(op, dialect.ReductionOp):
            return max(op.axes.get_values()) < len(op.input.type.get_shape()) - 1
    raise AssertionError("a row_reduce kernel without a reduction")


def check_schedule(k: kernel.FuncOp) -> None:
    s = k.schedule
    assert s is not None
    fields = {
        f: getattr(s, f).data
        for f in ("block", "rows_per_block", "vector", "elements_per_thread", "split")
    }
    assert all(v >= 1 for v in fields.values()), fields
    tile = [t.data for t in s.tile]
    kind = k.kind.data
    if kind == kernel.KernelKind.ROW_REDUCE:
        n = row_length_of(k)
        block, per_thread = fields["block"], fields["elements_per_thread"]
        rows_per_block, split = fields["rows_per_block"], fields["split"]
        lanes = block // rows_per_block
        assert block % 32 == 0 and 32 <= block <= 1024, fields
        assert block % rows_per_block == 0, fields
        width = fields["vector"]
        # runs of `vector` elements along the row's innermost axis
        assert per_thread % width == 0 and row_length_of(k) % width == 0, fields
        most = max(8, 2 * width)  # two vector accesses per thread, at least 8
        if rows_are_strided(k):
            # a thread a row, held in registers up to 64 elements
            assert (lanes, width, split) == (1, 1, 1), (n, fields)
            assert per_thread == (n if n <= 64 else 1), (n, fields)
        elif n <= 32 * most:
            # a power of two of threads per row, several rows per block
            assert lanes & (lanes - 1) == 0 and lanes <= 32, (n, fields)
            assert lanes * per_thread >= n and per_thread <= most, (n, fields)
            assert split == 1, (n, fields)
        elif n <= 1024 * 32 and split == 1:
            # a block per row, held in registers
            assert rows_per_block == 1 and split == 1, (n, fields)
            assert block * per_thread >= n, (n, fields)
            assert per_thread <= (most if n <= 1024 * most else 32), (n, fields)
        else:
            # split across blocks of 512 threads (two per SM), each part in
            # registers
            assert rows_per_block == 1 and block == 512, (n, fields)
            assert 1 < split <= 2 * 132 and per_thread <= 32, (n, fields)
            assert split * block * per_thread >= n, (n, fields)
        assert tile == []
    elif kind == kernel.KernelKind.SCAN:
        (scan,) = [op for op in k.body.ops if isinstance(op, dialect.CumsumOp)]
        dims = scan.input.type.get_shape()
        axis = scan.axis.value.data
        block, per_thread = fields["block"], fields["elements_per_thread"]
        lanes = block // fields["rows_per_block"]
        assert block % 32 == 0 and block <= 1024 and per_thread % fields["vector"] == 0
        if axis < len(dims) - 1:  # strided rows: a thread a row
            assert (lanes, fields["vector"]) == (1, 1), fields
        else:  # a power of two of lanes up to a warp, or a block, a row
            assert lanes == block or (lanes <= 32 and lanes & (lanes - 1) == 0)
            assert dims[axis] % fields["vector"] == 0, fields
    elif kind == kernel.KernelKind.GEMM:
        assert len(tile) == 3 and all(t >= 1 for t in tile), tile
    else:
        assert kind == kernel.KernelKind.POINTWISE
        assert fields["block"] % 32 == 0 and fields["block"] <= 1024, fields


def check_same_results(graph, module, inputs, dtypes) -> None:
    """Reference mode: exact to REFERENCE_TOL; native: the dtype's tolerance."""
    want = as_tuple(molten.interpret(graph, *inputs, reference=True))
    got = as_tuple(molten.interpret(module, *inputs, reference=True))
    assert len(got) == len(want)
    for w, g in zip(want, got, strict=True):
        assert g.shape == w.shape
        assert_close(g, w, REFERENCE_TOL)
    want = as_tuple(molten.interpret(graph, *inputs))
    got = as_tuple(molten.interpret(module, *inputs))
    for w, g, dtype in zip(want, got, dtypes, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert_close(g, w, NATIVE_TOL[dtype])


# --------------------------------------------------------------------------
# Fixed graphs.
# --------------------------------------------------------------------------


def g_rms_norm(dt, rows=8, hidden=64):
    g = DataflowGraph("fused_rmsnorm")
    x = g.add_input("x", TensorShape([rows, hidden]), dt)
    w = g.add_input("w", TensorShape([hidden]), dt)
    g.add_output(g.rms_norm(x, w, name="norm"))
    return g


def g_layer_norm(dt, normalized=1):
    shape = [2, 3, 4, 8]
    g = DataflowGraph(f"layer_norm{normalized}")
    x = g.add_input("x", shape, dt)
    w = g.add_input("w", shape[-normalized:], dt)
    b = g.add_input("b", shape[-normalized:], dt)
    g.add_output(g.layer_norm(x, w, b, name="y"))
    return g


def g_softmax(dt, axis=-1):
    g = DataflowGraph("softmax")
    x = g.add_input("x", [5, 7], dt)
    g.add_output(g.softmax(x, name="p", axis=axis))
    return g


def g_log_softmax(dt):
    g = DataflowGraph("log_softmax")
    x = g.add_input("x", [6, 10], dt)
    shifted = x - g.reduce_max(x, -1, keepdim=True)
    total = g.reduce_sum(g.exp(shifted), -1, keepdim=True)
    g.add_output(shifted - g.log(total), "y")
    return g


def g_rms_norm_silu(dt):
    g = DataflowGraph("rms_norm_silu")
    x = g.add_input("x", [8, 32], dt)
    w = g.add_input("w", [32], dt)
    gate = g.add_input("gate", [8, 32], dt)
    g.add_output(g.rms_norm(x, w) * g.silu(gate), "y")
    return g


def g_gelu_affine(dt):
    g = DataflowGraph("gelu_affine")
    x = g.add_input("x", [6, 16], dt)
    a = g.add_input("a", [16], dt)
    b = g.add_input("b", [16], dt)
    c = g.add_input("c", [6, 16], dt)
    g.add_output(g.gelu(x * a + b) * c, "y")
    return g


def g_matmul_bias_gelu(dt):
    g = DataflowGraph("mlp")
    x = g.add_input("x", [4, 8], dt)
    w = g.add_input("w", [8, 6], dt)
    b = g.add_input("b", [6], dt)
    g.add_output(g.gelu(x @ w + b), "y")
    return g


def g_batched_matmul_transposed(dt):
    g = DataflowGraph("bmm")
    a = g.add_input("a", [2, 8, 4], dt)
    w = g.add_input("w", [6, 8], dt)
    b = g.add_input("b", [6], dt)
    mm = g.matmul(a, w, transpose_a=True, transpose_b=True)
    g.add_output(g.gelu(mm + b, approximate="tanh"), "y")
    return g


def g_attention(dt, causal=False):
    g = DataflowGraph("attention")
    q = g.add_input("q", [2, 5, 8], dt)
    k = g.add_input("k", [2, 6, 8], dt)
    v = g.add_input("v", [2, 6, 4], dt)
    g.add_output(g.attention(q, k, v, name="o", causal=causal))
    return g


def g_rope(dt):
    g = DataflowGraph("rope")
    x = g.add_input("x", [2, 6, 8], dt)
    cos = g.add_input("cos", [6, 8], dt)
    sin = g.add_input("sin", [6, 8], dt)
    g.add_output(g.rope(x, cos, sin, name="y"))
    return g


def g_reductions(dt):
    """Reductions without keepdim, over leading axes, over everything."""
    g = DataflowGraph("reductions")
    x = g.add_input("x", [3, 4, 5], dt)
    g.add_output(g.exp(g.reduce_sum(x, -1)), "last")
    g.add_output(g.reduce_max(x, 0) * 2.0, "lead")
    g.add_output(g.reduce_mean(x, [0, 1]), "lead2")
    g.add_output(g.reduce_sum(x, [0, 1, 2]), "all")
    g.add_output(g.reduce_sum(x, [0, 2], keepdim=True) + x, "middle")
    return g


def g_several_outputs(dt):
    """Outputs: a result, an intermediate the rest depends on, a mix."""
    g = DataflowGraph("several")
    x = g.add_input("x", [4, 16], dt)
    w = g.add_input("w", [16], dt)
    h = g.silu(x * w, name="h")
    n = g.rms_norm(h, w, name="n")
    g.add_output(n)
    g.add_output(h)
    g.add_output(g.exp(h) + n, "e")
    g.add_output(g.reduce_sum(h, -1, keepdim=True), "total")
    return g


def g_passthrough(dt):
    """Outputs that are an input, constants, and the same value twice."""
    g = DataflowGraph("passthrough")
    x = g.add_input("x", [3, 4], dt)
    g.add_output(x, "same")
    g.add_output(g.constant(1.5, shape=[3, 4], dtype=dt), "splat")
    g.add_output(g.constant([[1.0, 2.0, 3.0, 4.0]], dtype=dt), "dense")
    y = x * 2.0
    g.add_output(y, "y")
    g.add_output(y, "y_again")
    return g


GRAPHS = {
    "rms_norm": g_rms_norm,
    "layer_norm_1axis": lambda dt: g_layer_norm(dt, 1),
    "layer_norm_3axes": lambda dt: g_layer_norm(dt, 3),
    "softmax_last": lambda dt: g_softmax(dt, -1),
    "softmax_axis0": lambda dt: g_softmax(dt, 0),
    "log_softmax": g_log_softmax,
    "rms_norm_silu": g_rms_norm_silu,
    "gelu_affine": g_gelu_affine,
    "matmul_bias_gelu": g_matmul_bias_gelu,
    "batched_matmul_transposed": g_batched_matmul_transposed,
    "attention": lambda dt: g_attention(dt, False),
    "attention_causal": lambda dt: g_attention(dt, True),
    "rope": g_rope,
    "reductions": g_reductions,
    "several_outputs": g_several_outputs,
    "passthrough": g_passthrough,
}

ONE_KERNEL = {
    "rms_norm": kernel.KernelKind.ROW_REDUCE,
    "layer_norm_1axis": kernel.KernelKind.ROW_REDUCE,
    "layer_norm_3axes": kernel.KernelKind.ROW_REDUCE,
    "softmax_last": kernel.KernelKind.ROW_REDUCE,
    "log_softmax": kernel.KernelKind.ROW_REDUCE,
    "rms_norm_silu": kernel.KernelKind.ROW_REDUCE,
    "several_outputs": kernel.KernelKind.ROW_REDUCE,
    "gelu_affine": kernel.KernelKind.POINTWISE,
    "rope": kernel.KernelKind.POINTWISE,
    "matmul_bias_gelu": kernel.KernelKind.GEMM,
    "batched_matmul_transposed": kernel.KernelKind.GEMM,
}
"""Graphs that become exactly one kernel, of this kind."""


def graph_inputs(g: DataflowGraph, rng):
    return [rand(rng, t.shape.dims, t.dtype) for t in g.inputs]


@pytest.mark.parametrize("spec", sorted(SPECS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_fusion_preserves_semantics(name, dtype, spec, rng):
    g = GRAPHS[name](dtype)
    module = run(g, SPECS[spec])
    for k in kernels_anywhere(module):
        k.verify()
        check_kind(k)
    if spec in KIND_OF_PASS:
        fused = [op for op in module.walk() if isinstance(op, kernel.FusedOp)]
        assert all(op.kind.data == KIND_OF_PASS[spec] for op in fused)
        assert not kernel_funcs(module)
    check_same_results(g, module, graph_inputs(g, rng), [t.dtype for t in g.outputs])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_kernel_level_structure(name, dtype):
    module = run(GRAPHS[name](dtype))
    check_kernel_level(module)
    # The graph function keeps its signature and output names.
    graph = graph_func(module)
    original = graph_func(GRAPHS[name](dtype).to_module())
    assert graph.function_type == original.function_type
    assert graph.res_attrs == original.res_attrs


@pytest.mark.parametrize(
    "name,op_type",
    [
        ("fuse-reduction", dialect.ReductionOp),
        ("fuse-epilogue", dialect.MatmulOp),
    ],
)
@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_fusion_pass_takes_every_root(name, op_type, graph):
    """fuse-reduction leaves no reduction, fuse-epilogue no matmul, at the
    graph level."""
    module = run(GRAPHS[graph]("float32"), SPECS[name])
    assert not [
        op for op in graph_func(module).body.block.ops if isinstance(op, op_type)
    ]


def test_kernel_level_is_a_prefix_of_the_default_pipeline():
    assert pipeline.DEFAULT_PIPELINE.startswith(KERNEL_LEVEL)
    assert KERNEL_LEVEL.startswith(MOLTEN_PIPELINE)


# --------------------------------------------------------------------------
# The "must show": one kernel per pattern.
# --------------------------------------------------------------------------


def seed_graph(dtype):
    return g_rms_norm(dtype, 2048, 5120)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ONE_KERNEL))
def test_one_kernel(name, dtype):
    module = run(GRAPHS[name](dtype))
    check_kernel_level(module)
    (k,) = kernel_funcs(module)
    (launch,) = launches(module)
    assert k.kind.data == ONE_KERNEL[name]
    assert launch.callee.string_value() == k.sym_name.data
    assert graph_level_names(module) == ["kernel.launch", "func.return"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_seed_rms_norm_is_one_row_reduce_kernel(dtype):
    module = run(seed_graph(dtype))
    check_kernel_level(module)
    (k,) = kernel_funcs(module)
    (launch,) = launches(module)
    assert k.kind.data == kernel.KernelKind.ROW_REDUCE
    assert k.sym_name.data == "fused_rmsnorm_row_reduce0"
    assert launch.callee.string_value() == "fused_rmsnorm_row_reduce0"
    assert [v.name_hint for v in k.body.block.args] == ["x", "w"]
    (ret,) = [
        op for op in graph_func(module).body.block.ops if op.name == "func.return"
    ]
    assert ret.operands[0] is launch.results[0]
    names = [s.data for s in k.fused_ops.data]
    assert names.count("reduce_mean") == 1 and "square" in names and "rsqrt" in names
    s = k.schedule
    assert s.block.data * s.elements_per_thread.data >= 5120
    assert s.block.data % 32 == 0 and s.block.data <= 1024


def test_seed_rms_norm_kernel_level_text():
    text = str(run(seed_graph("float32")))
    assert (
        "kernel.func @fused_rmsnorm_row_reduce0(%x: tensor<2048x5120xf32>, "
        "%w: tensor<5120xf32>) -> (tensor<2048x5120xf32>) row_reduce schedule "
        "#kernel.schedule<row_reduce, block = 640, rows_per_block = 1, vector = 4, "
        "elements_per_thread = 8>" in text
    )
    assert (
        "%norm = kernel.launch @fused_rmsnorm_row_reduce0(%x, %w) : "
        "(tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>" in text
    )


def test_seed_rms_norm_kernel_runs_small(rng):
    # The seed's kernel, at a shape small enough to interpret quickly.
    g = g_rms_norm("float32", 16, 320)
    module = run(g)
    x, w = rand(rng, (16, 320)), rand(rng, (320,))
    got = molten.interpret(module, x, w, reference=True)
    want = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w
    assert_close(got, want, 1e-12)


# --------------------------------------------------------------------------
# Structure of the kernels.
# --------------------------------------------------------------------------


def test_kernels_are_named_after_graph_and_kind():
    module = run(g_attention("float32"))
    names = [k.sym_name.data for k in kernel_funcs(module)]
    assert names == ["attention_gemm0", "attention_row_reduce0", "attention_gemm1"]
    assert [launch.callee.string_value() for launch in launches(module)] == names


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_launches_match_their_kernels(name):
    module = run(GRAPHS[name]("float16"))
    by_name = {k.sym_name.data: k for k in kernel_funcs(module)}
    for launch in launches(module):
        k = by_name[launch.callee.string_value()]
        assert list(k.function_type.inputs.data) == [v.type for v in launch.inputs]
        assert list(k.function_type.outputs.data) == list(launch.result_types)
        assert launch.results, "a kernel that writes nothing is not launched"


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_fused_ops_names_what_the_kernel_computes(name):
    module = run(GRAPHS[name]("float32"))
    for k in kernel_funcs(module):
        computed = [
            op.name.removeprefix("molten.")
            for op in body_ops(k)
            if not isinstance(op, (*fusion.GENERATORS, kernel.YieldOp))
        ]
        # a kernel that only writes a constant computes no op (no fused_ops)
        names = [s.data for s in k.fused_ops.data] if k.fused_ops else []
        assert names == computed, k.sym_name.data
        for arg in k.body.block.args:
            assert arg.uses, f"@{k.sym_name.data} never reads %{arg.name_hint}"


def test_kernel_pipeline_again_changes_nothing():
    for name in ("rms_norm", "attention_causal", "reductions", "passthrough"):
        module = run(GRAPHS[name]("float32"))
        before = str(module)
        after = str(
            run_pipeline(module, KERNEL_LEVEL.removeprefix(MOLTEN_PIPELINE + ","))
        )
        assert after == before, name


def test_passthrough_outputs_need_no_kernel_of_their_own():
    module = run(g_passthrough("float32"))
    graph = graph_func(module)
    ret = graph.body.block.last_op
    assert ret.operands[0] is graph.body.block.args[0]
    assert ret.operands[3] is ret.operands[4]
    # y and the two constants: pointwise kernels
    kinds = [k.kind.data for k in kernel_funcs(module)]
    assert kinds == [kernel.KernelKind.POINTWISE] * len(kinds)


def test_reduction_graph_outputs_keep_their_shapes(rng):
    g = g_reductions("float32")
    module = run(g)
    x = rand(rng, (3, 4, 5))
    last, lead, lead2, total, middle = molten.interpret(module, x, reference=True)
    assert_close(last, np.exp(x.sum(-1)), 1e-12)
    assert_close(lead, x.max(0) * 2, 1e-12)
    assert_close(lead2, x.mean((0, 1)), 1e-12)
    assert total.shape == () and abs(total - x.sum()) < 1e-12
    assert_close(middle, x.sum((0, 2), keepdims=True) + x, 1e-12)


# --------------------------------------------------------------------------
# Legality: convex groups, kept-outside values, fuse() itself.
# --------------------------------------------------------------------------


def chain_block():
    """x -> a = exp(x) -> s = reduce_sum(a) -> t = rsqrt(s) -> c = a * t, an
    output; d = tanh(x) is unrelated, e = d * 2 the other output."""
    g = DataflowGraph("chain")
    x = g.add_input("x", [4, 8])
    a = g.exp(x, name="a")
    s = g.reduce_sum(a, -1, name="s", keepdim=True)
    t = g.rsqrt(s, name="t")
    d = g.tanh(x, name="d")
    c = g.mul(a, t, name="c")
    g.add_output(c)
    g.add_output(g.mul(d, d, name="e"))
    module = g.to_module()
    block = graph_func(module).body.block
    ops = {op.results[0].name_hint: op for op in block.ops if op.results}
    return module, block, ops


@pytest.mark.parametrize(
    "names,convex",
    [
        ({"a"}, True),
        ({"c"}, True),
        ({"a", "c"}, False),  # a -> s -> t -> c leaves and comes back
        ({"a", "s", "c"}, False),  # still through t
        ({"a", "s", "t", "c"}, True),
        ({"a", "s"}, True),  # a path out that does not come back
        ({"a", "d"}, True),  # unrelated ops
        ({"d", "c"}, True),
        ({"s", "c"}, False),  # s -> t -> c
        ({"s", "t", "c"}, True),
    ],
)
def test_is_convex(names, convex):
    _, block, ops = chain_block()
    group = {ops[n] for n in names}
    assert fusion.is_convex(group, block) is convex


def test_is_convex_ignores_ops_outside_the_span():
    _, block, ops = chain_block()
    # e uses d but comes after every op of the group
    assert fusion.is_convex({ops["a"], ops["s"]}, block)
    assert fusion.is_convex({ops["t"], ops["c"]}, block)


def test_grow_rejects_non_convex_candidates():
    _, block, ops = chain_block()

    def elementwise(candidate, group):
        return isinstance(candidate, fusion.ELEMENTWISE)

    # c is an elementwise user of a, but a -> s -> t -> c goes around the group
    assert fusion.grow([ops["a"]], elementwise) == {ops["a"]}
    group = fusion.grow([ops["a"]], lambda op, g: True)
    assert {ops[n] for n in "astc"} <= group
    assert fusion.is_convex(group, block)
    # not growing through producers: from e nothing, from d its user e
    assert fusion.grow([ops["e"]], elementwise, lambda op, g: False) == {ops["e"]}
    assert fusion.grow([ops["d"]], elementwise) == {ops["d"], ops["e"]}


def reference_grow(seed, admits, grow_producers_of=lambda op, g: True):
    """grow as first written: every sweep offers every group op's producers
    and users, each checked with is_convex over the whole span (quadratic,
    but plainly right)."""
    block = seed[0].parent_block()
    group = set(seed)
    changed = True
    while changed:
        changed = False
        positions = {op: i for i, op in enumerate(block.ops)}
        for op in sorted(group, key=positions.__getitem__):
            candidates = []
            if grow_producers_of(op, group):
                candidates += [v.owner for v in op.operands if v.owner in positions]
            candidates += [use.operation for r in op.results for use in r.uses]
            for candidate in candidates:
                if (
                    candidate in group
                    or candidate.parent_block() is not block
                    or isinstance(candidate, fusion.GENERATORS)
                    or not admits(candidate, group)
                    or not fusion.is_convex(group | {candidate}, block)
                ):
                    continue
                group.add(candidate)
                changed = True
    return group


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_grow_matches_the_quadratic_reference(data):
    """On random DAGs, with random admitted ops and seeds, the incremental
    convexity check grows exactly the group that checking the whole span
    for every candidate grows."""
    g = DataflowGraph("dag")
    values = [g.add_input(f"in{i}", [4]) for i in range(2)]
    for _ in range(data.draw(st.integers(2, 24), label="ops")):
        pick = st.sampled_from(values)
        if data.draw(st.booleans()):
            values.append(g.tanh(data.draw(pick)))
        else:
            values.append(g.add(data.draw(pick), data.draw(pick)))
    for value in data.draw(st.lists(st.sampled_from(values[2:]), min_size=1)):
        g.add_output(value)
    block = graph_func(g.to_module()).body.block
    ops = [op for op in block.ops if not isinstance(op, func.ReturnOp)]
    flags = st.lists(st.booleans(), min_size=len(ops), max_size=len(ops))
    admitted = {
        op for op, a in zip(ops, data.draw(flags, label="admitted"), strict=True) if a
    }
    seed = data.draw(st.sampled_from(ops), label="seed")
    through_producers = data.draw(st.booleans(), label="through producers")

    def admits(candidate, group):
        return candidate in admitted

    def producers(op, group):
        return through_producers or op is not seed

    grown = fusion.grow([seed], admits, producers)
    assert grown == reference_grow([seed], admits, producers)
    assert fusion.is_convex(grown, block)


def test_kept_outside():
    _, block, ops = chain_block()
    ordered = [op for op in block.ops if op in {ops["a"], ops["d"]}]
    # a feeds the reduction (which can recompute it), d feeds e (elementwise):
    # both are left in place for them
    assert fusion.kept_outside(ordered, set(ordered)) == {ops["a"], ops["d"]}
    # c's only user is the graph's result: written out, not kept
    group = {ops["t"], ops["c"]}
    assert fusion.kept_outside([ops["t"], ops["c"]], group) == set()


def test_kept_outside_not_for_matmul_or_result_users():
    g = DataflowGraph("k")
    x = g.add_input("x", [4, 4])
    a = g.exp(x, name="a")
    b = g.sigmoid(x, name="b")
    g.add_output(a @ x)
    g.add_output(b)
    g.add_output(b * 2.0)
    block = graph_func(g.to_module()).body.block
    ops = {op.results[0].name_hint: op for op in block.ops if op.results}
    group = {ops["a"], ops["b"]}
    ordered = [op for op in block.ops if op in group]
    assert fusion.kept_outside(ordered, group) == set()


def test_fuse_builds_a_verifying_group(rng):
    module, block, ops = chain_block()
    x = rand(rng, (4, 8))
    want = molten.interpret(module, x, reference=True)
    group = {ops[n] for n in "astc"}
    fused = fusion.fuse(PatternRewriter(ops["a"]), group, kernel.KernelKind.ROW_REDUCE)
    assert isinstance(fused, kernel.FusedOp)
    module.verify()
    fused.verify()
    assert [v.name_hint for v in fused.inputs] == ["x"]
    # every user of a is in the group; c is a graph result
    assert [r.name_hint for r in fused.results] == ["c"]
    assert [op.name for op in block.ops] == [
        "kernel.fused",
        "molten.tanh",
        "molten.mul",
        "func.return",
    ]
    assert_close(molten.interpret(module, x, reference=True), want, 1e-15)


def test_fuse_moves_needed_ops_before_the_group(rng):
    g = DataflowGraph("m")
    x = g.add_input("x", [4, 8])
    a = g.exp(x, name="a")
    m = g.reduce_max(x, -1, name="m", keepdim=True)  # between a and c, not in the group
    c = g.mul(a, m, name="c")
    g.add_output(c)
    module = g.to_module()
    block = graph_func(module).body.block
    ops = {op.results[0].name_hint: op for op in block.ops if op.results}
    xv = rand(rng, (4, 8))
    want = molten.interpret(module, xv, reference=True)
    fused = fusion.fuse(
        PatternRewriter(ops["a"]), {ops["a"], ops["c"]}, kernel.KernelKind.POINTWISE
    )
    module.verify()
    assert [op.name for op in block.ops] == [
        "molten.reduce_max",
        "kernel.fused",
        "func.return",
    ]
    assert [v.name_hint for v in fused.inputs] == ["x", "m"]
    assert_close(molten.interpret(module, xv, reference=True), want, 1e-15)


def test_fuse_clones_generators_and_makes_no_empty_kernel(rng):
    g = DataflowGraph("gen")
    x = g.add_input("x", [4, 8])
    a = g.exp(x + 1.0, name="a")
    g.add_output(g.reduce_sum(a, -1))
    module = g.to_module()
    block = graph_func(module).body.block
    ops = {op.results[0].name_hint: op for op in block.ops if op.results}
    before = str(module)
    xv = rand(rng, (4, 8))
    want = molten.interpret(module, xv, reference=True)
    # a's only user is a reduction that recomputes it: nothing to write out
    assert (
        fusion.fuse(PatternRewriter(ops["a"]), {ops["a"]}, kernel.KernelKind.POINTWISE)
        is None
    )
    assert str(module) == before
    add = ops["a"].operands[0].owner
    # the constant is cloned into a group, not passed in
    reduce = [op for op in block.ops if isinstance(op, dialect.ReductionOp)][0]
    fused = fusion.fuse(
        PatternRewriter(add), {add, ops["a"], reduce}, kernel.KernelKind.ROW_REDUCE
    )
    module.verify()
    assert [v.name_hint for v in fused.inputs] == ["x"]
    assert any(isinstance(op, dialect.ConstantOp) for op in body_ops(fused))
    assert_close(molten.interpret(module, xv, reference=True), want, 1e-15)


def test_fusion_never_fuses_across_kernels():
    """Ops already inside a kernel are not roots; a module at the kernel level
    runs through the fusion passes unchanged."""
    module = run(g_rms_norm_silu("float32"), f"{MOLTEN_PIPELINE},fuse-reduction")
    text = str(module)
    for name in FUSION_PASSES:
        run_pipeline(module, name)
    assert str(module) == text
    (fused,) = [op for op in module.walk() if isinstance(op, kernel.FusedOp)]
    assert not any(fusion.is_fusible_root(op) for op in body_ops(fused))


# --------------------------------------------------------------------------
# Schedules.
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n", [1, 5, 31, 32, 33, 255, 256, 257, 1000, 4099, 5120, 8192, 8193, 65536]
)
def test_row_reduce_schedule(n):
    g = DataflowGraph("rows")
    x = g.add_input("x", [3, n])
    g.add_output(g.softmax(x, name="p"))
    (k,) = kernel_funcs(run(g))
    assert k.kind.data == kernel.KernelKind.ROW_REDUCE
    check_schedule(k)
    s = k.schedule
    block, rows_per_block = s.block.data, s.rows_per_block.data
    if n <= 256:
        # the fewest threads per row (a power of two) with <= 8 f32 each; a
        # warp holds 32 / lanes of the 3 rows
        lanes = 1 << math.ceil(math.log2(math.ceil(n / 8)))
        assert (block, rows_per_block) == (32, 32 // lanes)
    elif n <= 32768:
        # the fewest threads (a multiple of 32, at most 1024) with <= 8 each,
        # then up to 32 each
        assert rows_per_block == 1 and s.split.data == 1
        assert block == min(1024, 32 * math.ceil(n / 256))
    else:
        assert (block, s.split.data) == (512, math.ceil(n / 16384))


@pytest.mark.parametrize(
    ("sm_count", "split"), [(256, 256), (132, 132), (200, 200), (100, 100), (16, 16)]
)
def test_rows_whose_blocks_are_not_all_resident_share_them(sm_count, split):
    """2 rows of 4M f32 take 256 blocks each of 32 elements a thread; where
    2 x sm_count blocks are resident (two of 512 threads an SM) and that is
    fewer than both rows' 512, each row takes half the resident blocks,
    walked in passes of 32 elements a thread: one round of groups."""
    g = DataflowGraph("rows")
    x = g.add_input("x", [2, 4 * 1024 * 1024])
    g.add_output(g.softmax(x, name="p"))
    module = g.to_module()
    run_pipeline(
        module,
        KERNEL_LEVEL.replace(
            "kernel-schedule", f"kernel-schedule{{sm_count={sm_count}}}"
        ),
    )
    (k,) = kernel_funcs(module)
    s = k.schedule
    assert s.split.data == split
    assert (s.block.data, s.elements_per_thread.data) == (512, 32)


@pytest.mark.parametrize(
    ("shape", "strided"),
    [
        ([2, 24, 5, 7], True),  # 35 consecutive rows, rows of 24
        ([2, 24, 31], False),  # 31 consecutive rows: fewer than a warp
        ([1, 70, 16400], True),  # rows of 70 and 16400 of them
        ([4, 70, 64], False),  # rows of 70, too few (256) for a thread each
    ],
)
def test_reduction_over_a_middle_axis(shape, strided, rng):
    """RMSNorm over axis 1: one row_reduce kernel of strided rows where a
    thread a row serves, else transposed first (a pointwise kernel);
    the same values either way."""
    g = DataflowGraph("channels")
    x = g.add_input("x", shape)
    mean_square = g.reduce_mean(g.square(x), 1, keepdim=True)
    g.add_output(x * g.rsqrt(mean_square + 1e-5), "y")
    module = run(g)
    check_kernel_level(module)
    kinds = sorted(k.kind.data for k in kernel_funcs(module))
    if strided:
        (k,) = kernel_funcs(module)
        assert kinds == ["row_reduce"] and rows_are_strided(k)
    else:
        assert "pointwise" in kinds
        reductions = [k for k in kernel_funcs(module) if k.kind.data == "row_reduce"]
        assert not any(rows_are_strided(k) for k in reductions)
    check_same_results(g, module, [rand(rng, shape)], ["float32"])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("shape", "axis"), [([3, 40], 1), ([3, 5000], -1), ([40, 3], 0), ([2, 70, 3], 1)]
)
def test_cumsum_is_one_scan_kernel(shape, axis, dtype, rng):
    """A cumsum with a scaled input, torch's flips of a reverse scan and an
    epilogue: one scan kernel each way, the same values."""
    g = DataflowGraph("scans")
    x = g.add_input("x", shape, dtype)
    g.add_output(g.cumsum(x * 2.0, axis) + 1.0, "running")
    g.add_output(g.flip(g.cumsum(g.flip(x, axis), axis, exclusive=True), axis), "after")
    module = run(g)
    check_kernel_level(module)
    kernels = kernel_funcs(module)
    assert [k.kind.data for k in kernels] == ["scan", "scan"]
    assert [k.fused_ops.data[-1].data for k in kernels] == ["add", "cumsum"]
    for k in kernels:
        check_schedule(k)
    check_same_results(g, module, [rand(rng, shape, dtype)], [dtype, dtype])


def test_row_reduce_schedule_over_several_axes():
    (k,) = kernel_funcs(run(g_layer_norm("float32", 3)))
    assert row_length_of(k) == 3 * 4 * 8
    assert k.schedule.block.data == 32
    assert k.schedule.block.data * k.schedule.elements_per_thread.data >= 96


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_schedule_has_a_tile(dtype):
    for name in ("matmul_bias_gelu", "batched_matmul_transposed", "attention"):
        module = run(GRAPHS[name](dtype))
        gemms = [k for k in kernel_funcs(module) if k.kind.data == "gemm"]
        assert gemms
        for k in gemms:
            assert len(k.schedule.tile.data) == 3
            check_schedule(k)


def test_schedule_written_by_hand_is_kept():
    text = """
    func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %y = kernel.fused pointwise schedule <pointwise, block = 128, vector = 4> (%x)
          : (tensor<4x8xf32>) -> tensor<4x8xf32> {
      ^bb0(%a: tensor<4x8xf32>):
        %e = molten.exp %a : tensor<4x8xf32>
        kernel.yield %e : tensor<4x8xf32>
      }
      %z = kernel.fused pointwise (%y) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
      ^bb0(%a: tensor<4x8xf32>):
        %e = molten.tanh %a : tensor<4x8xf32>
        kernel.yield %e : tensor<4x8xf32>
      }
      func.return %z : tensor<4x8xf32>
    }
    """
    from molten.context import parse_module

    module = run_pipeline(parse_module(text), "kernel-outline,kernel-schedule")
    first, second = kernel_funcs(module)
    assert first.schedule == kernel.ScheduleAttr("pointwise", 128, vector=4)
    assert second.schedule == kernel.ScheduleAttr(
        "pointwise", 64, vector=4, elements_per_thread=4
    )
    # scheduling a kernel.fused (before outlining) works too
    module = run_pipeline(parse_module(text), "kernel-schedule")
    fused = [op for op in module.walk() if isinstance(op, kernel.FusedOp)]
    assert [f.schedule for f in fused] == [
        kernel.ScheduleAttr("pointwise", 128, vector=4),
        kernel.ScheduleAttr("pointwise", 64, vector=4, elements_per_thread=4),
    ]


# --------------------------------------------------------------------------
# Random graphs (hypothesis).
# --------------------------------------------------------------------------

KINDS = [
    "binary",
    "binary",
    "binary",
    "scalar",
    "unary",
    "unary",
    "reduce",
    "reduce",
    "cast",
    "matmul",
    "composite",
]


def _broadcastable(a, b) -> bool:
    try:
        np.broadcast_shapes(a.shape.dims, b.shape.dims)
    except ValueError:
        return False
    return True


@st.composite
def fusion_graphs(draw):
    """Random DAGs over a [lead..., rows, cols] domain: elementwise and unary
    ops with broadcast operands (row vectors, per-row [.., rows, 1] values,
    scalars), reductions with or without keepdim over random axes, casts,
    matmuls, rms_norm / layer_norm / softmax / attention, several outputs
    (some of them inputs or constants)."""
    dtype = draw(st.sampled_from(DTYPES))
    rows = draw(st.integers(1, 4))
    cols = draw(st.sampled_from([1, 2, 4, 6, 8]))
    lead = draw(st.sampled_from([[], [], [2], [3]]))
    full = (*lead, rows, cols)
    g = DataflowGraph("random")
    shapes = {
        "x": full,
        "y": full,
        "row": (cols,),
        "col": (*lead, rows, 1),
        "s": (),
    }
    pool = [g.add_input(name, shape, dtype) for name, shape in shapes.items()]
    w = g.add_input("w", [cols], dtype)
    b = g.add_input("b", [cols], dtype)
    m = g.add_input("m", [cols, cols], dtype)
    steps: list[str] = []

    def like(t, dt):
        return t if t.dtype == dt else g.cast(t, dt)

    def to_full(t):
        if t.shape.dims == full:
            return t
        if (
            len(t.shape.dims) <= len(full)
            and _broadcastable(t, pool[0])
            and np.broadcast_shapes(t.shape.dims, full) == full
        ):
            return g.broadcast_to(t, list(full))
        return like(pool[draw(st.integers(0, 1))], t.dtype)

    for _ in range(draw(st.integers(2, 10))):
        kind = draw(st.sampled_from(KINDS))
        a = pool[draw(st.integers(0, len(pool) - 1))]
        if kind == "binary":
            op = draw(st.sampled_from(BINARY))
            partners = [t for t in pool if t.dtype == a.dtype and _broadcastable(t, a)]
            other = partners[draw(st.integers(0, len(partners) - 1))]
            lhs, rhs = (a, other) if draw(st.booleans()) else (other, a)
            out = apply_binary(g, op, lhs, rhs)
            steps.append(f"{op}({lhs}, {rhs})")
        elif kind == "scalar":
            op = draw(st.sampled_from(BINARY))
            c = draw(st.sampled_from(SCALARS))
            lhs, rhs = (a, c) if draw(st.booleans()) else (c, a)
            out = apply_binary(g, op, lhs, rhs)
            steps.append(f"{op}({lhs}, {rhs})")
        elif kind == "unary":
            op = draw(st.sampled_from(UNARY))
            out = apply_unary(g, op, a)
            steps.append(f"{op}({a})")
        elif kind == "reduce":
            if a.shape.rank == 0:
                a = pool[0]
            op = draw(st.sampled_from(["reduce_sum", "reduce_max", "reduce_mean"]))
            axes = draw(
                st.lists(
                    st.integers(0, a.shape.rank - 1),
                    min_size=1,
                    max_size=a.shape.rank,
                    unique=True,
                )
            )
            keepdim = draw(st.booleans())
            out = getattr(g, op)(a, axes, keepdim=keepdim)
            steps.append(f"{op}({a}, {sorted(axes)}, keepdim={keepdim})")
        elif kind == "cast":
            target = draw(st.sampled_from(DTYPES))
            out = g.cast(a, target)
            steps.append(f"cast({a}, {target})")
        elif kind == "matmul":
            a = to_full(a)
            mm = like(m, a.dtype)
            out = g.matmul(a, mm, transpose_b=draw(st.booleans()))
            if draw(st.booleans()):  # an epilogue
                out = g.gelu(out + like(b, a.dtype), approximate="tanh")
            steps.append(f"matmul({a}, m)")
        else:
            op = draw(st.sampled_from(["rms_norm", "layer_norm", "softmax", "attn"]))
            a = to_full(a)
            ww, bb = like(w, a.dtype), like(b, a.dtype)
            if op == "rms_norm":
                out = g.rms_norm(a, ww)
            elif op == "layer_norm":
                out = g.layer_norm(a, ww, bb, eps=draw(st.sampled_from([1e-5, 0.1])))
            elif op == "softmax":
                out = g.softmax(a, axis=draw(st.integers(-1, len(full) - 1)))
            else:
                kv = like(pool[1], a.dtype)
                out = g.attention(a, kv, kv, scale=0.5, causal=draw(st.booleans()))
            steps.append(f"{op}({a})")
        pool.append(out)
    g.add_output(pool[-1])
    for _ in range(draw(st.integers(0, 2))):
        extra = draw(st.sampled_from(["pool", "pool", "input", "constant"]))
        if extra == "input":
            g.add_output(pool[draw(st.integers(0, 4))])
        elif extra == "constant":
            g.add_output(g.constant(0.5, shape=[cols], dtype=dtype))
        else:
            g.add_output(pool[draw(st.integers(5, len(pool) - 1))])
    seed = draw(st.integers(0, 2**32 - 1))
    return g, steps, seed


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(fusion_graphs())
def test_kernel_level_preserves_random_graphs(case):
    g, steps, seed = case
    note("\n".join(steps))
    note(g.to_mlir())
    rng = np.random.default_rng(seed)
    inputs = [rand(rng, t.shape.dims, t.dtype) for t in g.inputs]
    inputs[-3] = rand(rng, g.inputs[-3].shape.dims, g.inputs[-3].dtype, 0.5, 1.5)
    module = run(g)
    note(str(module))
    check_kernel_level(module)
    want = as_tuple(molten.interpret(g, *inputs, reference=True))
    got = as_tuple(molten.interpret(module, *inputs, reference=True))
    assert len(got) == len(want)
    for w_, g_ in zip(want, got, strict=True):
        assert g_.shape == w_.shape
        np.testing.assert_array_equal(np.isnan(g_), np.isnan(w_))
        np.testing.assert_array_equal(np.isposinf(g_), np.isposinf(w_))
        np.testing.assert_array_equal(np.isneginf(g_), np.isneginf(w_))
        finite = np.isfinite(w_)
        scale = 1.0 + np.max(np.abs(w_[finite]), initial=0.0)
        assert np.allclose(g_[finite], w_[finite], rtol=1e-9, atol=1e-12 * scale)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(fusion_graphs(), st.sampled_from(FUSION_PASSES))
def test_each_fusion_pass_alone_preserves_random_graphs(case, name):
    """Each fusion pass right after the molten level: legal, verifying groups
    of its own kind, and the same results."""
    g, steps, seed = case
    note("\n".join(steps))
    rng = np.random.default_rng(seed)
    inputs = [rand(rng, t.shape.dims, t.dtype) for t in g.inputs]
    module = run(g, SPECS[name])
    note(str(module))
    for k in kernels_anywhere(module):
        k.verify()
        check_kind(k)
        assert k.kind.data == KIND_OF_PASS[name]
    want = as_tuple(molten.interpret(g, *inputs, reference=True))
    got = as_tuple(molten.interpret(module, *inputs, reference=True))
    for w_, g_ in zip(want, got, strict=True):
        assert g_.shape == w_.shape
        np.testing.assert_allclose(g_, w_, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_a_chain_of_2000_ops_compiles_and_keeps_its_meaning(rng):
    """Code generation has no recursion as deep as the graph (a 250-op
    chain once ended in RecursionError) and fusion grows groups in linear
    time: 2,000 elementwise ops with a softmax every 50 compile, and the
    kernel level computes what the graph does."""
    g = chain(2000, softmax_every=50, shape=(3, 40))()
    compiled = molten.ZeroCompiler().compile(g)
    assert len(compiled) >= 1 and "__global__" in compiled.source
    xs = rng.uniform(-1, 1, (3, 40)).astype(np.float32)
    want = molten.interpret(g, xs, reference=True)
    kernel_level = molten.ZeroCompiler().optimize(g)
    got = molten.interpret(kernel_level, xs, reference=True)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
