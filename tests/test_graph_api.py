"""The graph API: building ops, operators, dtypes, names, IR round trips."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type

import molten
from molten import DTypeError, GraphError, ShapeError, ops
from molten.dialects import molten as dialect
from molten.ir import DataflowGraph, Tensor, TensorShape, element_type

SEED_EXAMPLE = """
from molten import ZeroCompiler
from molten.ir import DataflowGraph, TensorShape
g = DataflowGraph("fused_rmsnorm")
x = g.add_input("x", TensorShape([2048, 5120]))
w = g.add_input("w", TensorShape([5120]))
out = g.rms_norm(x, w, name="norm")
g.add_output(out)
"""


def last_op(g: DataflowGraph):
    return list(g._block.ops)[-1]


# --------------------------------------------------------------------------
# The seed example.
# --------------------------------------------------------------------------


@pytest.fixture
def seed():
    namespace: dict = {}
    exec(SEED_EXAMPLE, namespace)  # exactly as written in the brief
    return namespace


def test_seed_example_prints_rms_norm(seed, capsys):
    g = seed["g"]
    print(g)
    text = capsys.readouterr().out
    assert "molten.rms_norm %x, %w eps = 1.000000e-06" in text
    assert (
        "func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>)"
        in text
    )
    assert '{molten.name = "norm"}' in text
    assert seed["out"].shape == TensorShape([2048, 5120])
    assert seed["out"].dtype == "float32"
    assert seed["out"].name == "norm"
    assert g.output_names == ["norm"]
    assert [t.name for t in g.inputs] == ["x", "w"]


def test_seed_example_round_trips(seed):
    g = seed["g"]
    text = g.to_mlir()
    again = DataflowGraph.from_mlir(text)
    assert again.to_mlir() == text
    assert again.name == "fused_rmsnorm"
    assert again.output_names == ["norm"]
    # And the generic form parses back to the same graph.
    assert DataflowGraph.from_mlir(g.to_mlir(generic=True)).to_mlir() == text


def test_seed_compiles_to_one_kernel(seed, tmp_path):
    compiled = seed["ZeroCompiler"](arch="sm_90").compile(seed["g"])
    assert compiled.name == "fused_rmsnorm"
    (only,) = compiled.kernels
    # The compiled graph reads as its kernels too: a count, an iteration.
    assert len(compiled) == 1 and list(compiled) == [only] and compiled[0] is only
    assert only.name == "fused_rmsnorm_row_reduce0"
    assert only.grid == (2048, 1, 1) and only.block[0] % 32 == 0
    assert only.fused_ops == ("square", "reduce_mean", "add", "rsqrt", "mul", "mul")
    # the kernel with 128-bit accesses, and its variant for misaligned pointers
    assert only.scalar_variant == "fused_rmsnorm_row_reduce0_scalar"
    assert compiled.source.count("__global__") == 2
    assert 'extern "C" cudaError_t fused_rmsnorm(' in compiled.source
    assert "cudaError_t fused_rmsnorm(" in compiled.header
    files = seed["ZeroCompiler"]().save(compiled, tmp_path / "out")
    assert sorted(p.name for p in files) == [
        "fused_rmsnorm.cu",
        "fused_rmsnorm.final.mlir",
        "fused_rmsnorm.h",
    ]
    assert (
        (tmp_path / "out" / "fused_rmsnorm.cu")
        .read_text()
        .startswith('#include "fused_rmsnorm.h"')
    )


def test_matmul_bias_gelu_compiles_to_one_gemm_kernel():
    g = DataflowGraph("mm")
    x = g.add_input("x", [4, 8])
    w = g.add_input("w", [8, 16])
    b = g.add_input("b", [16])
    g.add_output(g.gelu(x @ w + b))
    (only,) = molten.ZeroCompiler().compile(g).kernels
    assert only.fused_ops == ("matmul", "add", "gelu")


def test_returning_an_input_or_a_value_twice_copies():
    g = DataflowGraph("copy")
    x = g.add_input("x", [4])
    y = g.exp(x, name="y")
    g.add_output(x)
    g.add_output(y)
    g.add_output(y)
    compiled = molten.ZeroCompiler().compile(g)
    assert compiled.source.count("cudaMemcpyAsync(") == 2
    assert len(compiled.kernels) == 1


def test_a_graph_of_copies_only_has_no_kernels_but_is_truthy():
    g = DataflowGraph("copies")
    g.add_output(g.add_input("x", [4]))
    compiled = molten.ZeroCompiler().compile(g)
    assert len(compiled) == 0 and list(compiled) == []
    assert compiled and compiled.source.count("cudaMemcpyAsync(") == 1


def test_zero_compiler_optimize_stops_at_the_kernel_level(seed):
    module = molten.ZeroCompiler(arch="sm_90").optimize(seed["g"])
    text = str(module)
    assert "molten.rms_norm" not in text
    assert "molten.rsqrt" in text and "kernel.launch" in text


# --------------------------------------------------------------------------
# Every builder method: op and result type.
# --------------------------------------------------------------------------

F32, F16, BF16 = Float32Type(), Float16Type(), BFloat16Type()


def _inputs(g, dtype, *shapes):
    return [g.add_input(f"a{i}", s, dtype) for i, s in enumerate(shapes)]


# name -> (input shapes, build(g, *inputs), op class, expected result shape)
BUILDERS = {
    "add": ([(3, 4), (4,)], lambda g, a, b: g.add(a, b), dialect.AddOp, (3, 4)),
    "sub": ([(3, 1), (1, 5)], lambda g, a, b: g.sub(a, b), dialect.SubOp, (3, 5)),
    "mul": ([(2, 1, 4), (3, 4)], lambda g, a, b: g.mul(a, b), dialect.MulOp, (2, 3, 4)),
    "div": ([(3, 4), ()], lambda g, a, b: g.div(a, b), dialect.DivOp, (3, 4)),
    "max": ([(3, 4), (3, 4)], lambda g, a, b: g.max(a, b), dialect.MaxOp, (3, 4)),
    "min": ([(4,), (3, 1)], lambda g, a, b: g.min(a, b), dialect.MinOp, (3, 4)),
    "pow": ([(3, 4), (1,)], lambda g, a, b: g.pow(a, b), dialect.PowOp, (3, 4)),
    "neg": ([(3, 4)], lambda g, a: g.neg(a), dialect.NegOp, (3, 4)),
    "abs": ([(3, 4)], lambda g, a: g.abs(a), dialect.AbsOp, (3, 4)),
    "exp": ([(3, 4)], lambda g, a: g.exp(a), dialect.ExpOp, (3, 4)),
    "log": ([(3, 4)], lambda g, a: g.log(a), dialect.LogOp, (3, 4)),
    "sqrt": ([(3, 4)], lambda g, a: g.sqrt(a), dialect.SqrtOp, (3, 4)),
    "rsqrt": ([(3, 4)], lambda g, a: g.rsqrt(a), dialect.RsqrtOp, (3, 4)),
    "reciprocal": ([(3,)], lambda g, a: g.reciprocal(a), dialect.ReciprocalOp, (3,)),
    "square": ([(3, 4)], lambda g, a: g.square(a), dialect.SquareOp, (3, 4)),
    "tanh": ([(3, 4)], lambda g, a: g.tanh(a), dialect.TanhOp, (3, 4)),
    "sigmoid": ([(3, 4)], lambda g, a: g.sigmoid(a), dialect.SigmoidOp, (3, 4)),
    "relu": ([(3, 4)], lambda g, a: g.relu(a), dialect.ReluOp, (3, 4)),
    "gelu": ([(3, 4)], lambda g, a: g.gelu(a), dialect.GeluOp, (3, 4)),
    "silu": ([(3, 4)], lambda g, a: g.silu(a), dialect.SiluOp, (3, 4)),
    "rotate_half": (
        [(3, 8)],
        lambda g, a: g.rotate_half(a),
        dialect.RotateHalfOp,
        (3, 8),
    ),
    "cast": ([(3, 4)], lambda g, a: g.cast(a, "float16"), dialect.CastOp, (3, 4)),
    "constant": (
        [],
        lambda g: g.constant([[1.0, 2.0, 3.0]]),
        dialect.ConstantOp,
        (1, 3),
    ),
    "reduce_sum": (
        [(3, 4, 5)],
        lambda g, a: g.reduce_sum(a, [0, 2]),
        dialect.ReduceSumOp,
        (4,),
    ),
    "reduce_max": (
        [(3, 4, 5)],
        lambda g, a: g.reduce_max(a, 1, keepdim=True),
        dialect.ReduceMaxOp,
        (3, 1, 5),
    ),
    "reduce_mean": (
        [(3, 4, 5)],
        lambda g, a: g.reduce_mean(a, -1),
        dialect.ReduceMeanOp,
        (3, 4),
    ),
    "broadcast_to": (
        [(4,)],
        lambda g, a: g.broadcast_to(a, [2, 3, 4]),
        dialect.BroadcastToOp,
        (2, 3, 4),
    ),
    "reshape": ([(3, 4)], lambda g, a: g.reshape(a, [2, 6]), dialect.ReshapeOp, (2, 6)),
    "transpose": (
        [(2, 3, 4)],
        lambda g, a: g.transpose(a, [2, 0, 1]),
        dialect.TransposeOp,
        (4, 2, 3),
    ),
    "cumsum": (
        [(3, 4)],
        lambda g, a: g.cumsum(a, 0, reverse=True),
        dialect.CumsumOp,
        (3, 4),
    ),
    "cumprod": (
        [(3, 4)],
        lambda g, a: g.cumprod(a, 1, exclusive=True),
        dialect.CumprodOp,
        (3, 4),
    ),
    # The running extremes alone (g.cummax adds their positions' scan).
    "cummax": (
        [(3, 4)],
        lambda g, a: g._scan(dialect.CummaxOp, a, 1, True, False, None),
        dialect.CummaxOp,
        (3, 4),
    ),
    "cummin": (
        [(3, 4)],
        lambda g, a: g._scan(dialect.CumminOp, a, 0, False, True, None),
        dialect.CumminOp,
        (3, 4),
    ),
    "flip": ([(3, 4)], lambda g, a: g.flip(a, -1), dialect.FlipOp, (3, 4)),
    "triu": ([(3, 4)], lambda g, a: g.triu(a, -1), dialect.TriuOp, (3, 4)),
    "tril": ([(2, 3, 4)], lambda g, a: g.tril(a), dialect.TrilOp, (2, 3, 4)),
    "slice": ([(3, 8)], lambda g, a: g.slice(a, 1, 2, 5), dialect.SliceOp, (3, 5)),
    "pad": ([(3, 8)], lambda g, a: g.pad(a, 0, 1, 2), dialect.PadOp, (6, 8)),
    "matmul": (
        [(5, 3, 4), (4, 6)],
        lambda g, a, b: g.matmul(a, b),
        dialect.MatmulOp,
        (5, 3, 6),
    ),
    "rms_norm": (
        [(3, 8), (8,)],
        lambda g, x, w: g.rms_norm(x, w),
        dialect.RmsNormOp,
        (3, 8),
    ),
    "layer_norm": (
        [(2, 3, 8), (3, 8), (3, 8)],
        lambda g, x, w, b: g.layer_norm(x, w, b),
        dialect.LayerNormOp,
        (2, 3, 8),
    ),
    "softmax": ([(3, 8)], lambda g, a: g.softmax(a, axis=0), dialect.SoftmaxOp, (3, 8)),
    "rope": (
        [(2, 5, 8), (5, 8), (5, 8)],
        lambda g, x, c, s: g.rope(x, c, s),
        dialect.RopeOp,
        (2, 5, 8),
    ),
    "attention": (
        [(2, 5, 8), (2, 7, 8), (2, 7, 6)],
        lambda g, q, k, v: g.attention(q, k, v, causal=True),
        dialect.AttentionOp,
        (2, 5, 6),
    ),
    "causal_mask": ([], lambda g: g.causal_mask(4, 6), dialect.CausalMaskOp, (4, 6)),
}


BINARY, UNARY = dialect.ELEMENTWISE_BINARY_OPS, dialect.ELEMENTWISE_UNARY_OPS
# The ops on integers and bools, and the float math built since: name ->
# (input dtypes, build(g, *inputs), op class, result dtype), inputs (3, 4).
_MATH = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf"]
_MATH += ["log1p", "expm1", "log2", "log10", "exp2", "floor", "ceil", "round"]
_MATH += ["trunc"]
TYPED_BUILDERS = {
    **{
        op: (["int32", "int32"], getattr(DataflowGraph, op), cls, "int32")
        for op, cls in [
            ("floor_divide", dialect.FloorDivideOp),
            ("remainder", dialect.RemainderOp),
            ("fmod", dialect.FmodOp),
            ("bitwise_and", dialect.BitwiseAndOp),
            ("bitwise_or", dialect.BitwiseOrOp),
            ("bitwise_xor", dialect.BitwiseXorOp),
            ("shift_left", dialect.ShiftLeftOp),
            ("shift_right", dialect.ShiftRightOp),
        ]
    },
    **{
        op: (["bool", "bool"], getattr(DataflowGraph, op), cls, "bool")
        for op, cls in [
            ("logical_and", dialect.LogicalAndOp),
            ("logical_or", dialect.LogicalOrOp),
            ("logical_xor", dialect.LogicalXorOp),
        ]
    },
    **{
        op: (["int64", "float16"], getattr(DataflowGraph, op), cls, "bool")
        for op, cls in [
            ("eq", dialect.EqOp),
            ("ne", dialect.NeOp),
            ("lt", dialect.LtOp),
            ("le", dialect.LeOp),
            ("gt", dialect.GtOp),
            ("ge", dialect.GeOp),
        ]
    },
    "atan2": (["float32", "bfloat16"], DataflowGraph.atan2, dialect.Atan2Op, "float32"),
    **{
        op: (
            ["bfloat16"],
            getattr(DataflowGraph, op),
            getattr(dialect, cls),
            "bfloat16",
        )
        for op, cls in [
            (op, {"log1p": "Log1pOp", "expm1": "Expm1Op"}.get(op, f"{op.title()}Op"))
            for op in _MATH
        ]
    },
    "sign": (["int8"], DataflowGraph.sign, dialect.SignOp, "int8"),
    "bitwise_not": (
        ["uint8"],
        DataflowGraph.bitwise_not,
        dialect.BitwiseNotOp,
        "uint8",
    ),
    "logical_not": (["bool"], DataflowGraph.logical_not, dialect.LogicalNotOp, "bool"),
    "isnan": (["float16"], DataflowGraph.isnan, dialect.IsNanOp, "bool"),
    "isinf": (["float32"], DataflowGraph.isinf, dialect.IsInfOp, "bool"),
    "where": (
        ["bool", "int64", "float16"],
        DataflowGraph.where,
        dialect.WhereOp,
        "float16",
    ),
    "iota": ([], lambda g: g.iota([3, 4], 1), dialect.IotaOp, "int64"),
    "take": (
        ["float16", "int64"],
        lambda g, x, i: g.take(x, g.reshape(g.slice(i, 0, 0, 1), [4]), 1),
        dialect.TakeOp,
        "float16",
    ),
    "gather": (
        ["bfloat16", "int32"],
        lambda g, x, i: g.gather(x, 1, i),
        dialect.GatherOp,
        "bfloat16",
    ),
}


def test_builder_table_covers_every_op():
    built = {op_type for _, _, op_type, _ in BUILDERS.values()}
    built |= {op_type for _, _, op_type, _ in TYPED_BUILDERS.values()}
    built |= {dialect.ArgMaxOp, dialect.ArgMinOp}  # test_positions_follow_torch
    built |= {dialect.ScatterOp}  # tests/test_indexing.py
    assert built == set(dialect.Molten.operations)


@pytest.mark.parametrize("method", sorted(TYPED_BUILDERS))
def test_typed_builder_builds_op(method):
    dtypes, build, op_type, result_dtype = TYPED_BUILDERS[method]
    g = DataflowGraph("g")
    inputs = [g.add_input(f"a{i}", (3, 4), d) for i, d in enumerate(dtypes)]
    result = build(g, *inputs)
    op = last_op(g)
    assert type(op) is op_type and op.name == f"molten.{method}"
    assert result.value is op.results[0]
    assert result.shape == TensorShape((3, 4)) and result.dtype == result_dtype
    g.add_output(result)
    text = g.to_mlir()
    assert DataflowGraph.from_mlir(text).to_mlir() == text


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("method", sorted(BUILDERS))
def test_builder_builds_op(method, dtype):
    shapes, build, op_type, result_shape = BUILDERS[method]
    g = DataflowGraph("g")
    inputs = _inputs(g, dtype, *shapes)
    if method in ("constant", "causal_mask"):
        result = {
            "constant": lambda: g.constant([[1.0, 2.0, 3.0]], dtype=dtype),
            "causal_mask": lambda: g.causal_mask(4, 6, dtype=dtype),
        }[method]()
    else:
        result = build(g, *inputs)
    assert isinstance(result, Tensor)
    op = last_op(g)
    assert type(op) is op_type
    assert op.name == f"molten.{method}"
    assert result.value is op.results[0]
    assert result.shape == TensorShape(result_shape)
    expected_dtype = "float16" if method == "cast" else dtype
    assert result.dtype == expected_dtype
    op.verify()
    g.add_output(result)
    # The built graph survives printing and parsing.
    text = g.to_mlir()
    assert f"molten.{method}" in text
    assert DataflowGraph.from_mlir(text).to_mlir() == text


def test_builder_properties():
    g = DataflowGraph("g")
    x = g.add_input("x", [2, 4, 8])
    w = g.add_input("w", [8])
    assert last_op_props(g, g.gelu(x, approximate="tanh"))["approximate"].data == "tanh"
    assert last_op_props(g, g.gelu(x))["approximate"].data == "none"
    assert last_op_props(g, g.rms_norm(x, w, eps=1e-3))["epsilon"].value.data == 1e-3
    assert last_op_props(g, g.layer_norm(x, w, w))["epsilon"].value.data == 1e-5
    props = last_op_props(g, g.attention(x, x, x))
    assert props["scale"].value.data == pytest.approx(1 / np.sqrt(8), rel=1e-15)
    assert "causal" not in props
    assert last_op_props(g, g.attention(x, x, x, scale=0.5))["scale"].value.data == 0.5
    props = last_op_props(g, g.matmul(x, x, transpose_b=True))
    assert "transpose_b" in props and "transpose_a" not in props
    assert g.matmul(x, x, transpose_b=True).shape == TensorShape([2, 4, 4])
    assert g.matmul(x, x, transpose_a=True).shape == TensorShape([2, 8, 8])


def last_op_props(g, tensor):
    op = tensor.value.owner
    assert op is last_op(g)
    return op.properties


def test_named_results_and_outputs():
    g = DataflowGraph("g")
    x = g.add_input("x", [4])
    y = g.exp(x, name="e")
    assert y.name == "e"
    g.add_output(y)
    g.add_output(x)  # an input as output gets a fresh name
    g.add_output(y, "again")
    assert g.output_names == ["e", "x_1", "again"]
    assert "%e = molten.exp %x" in g.to_mlir()
    assert repr(g) == "DataflowGraph('g', 1 inputs, 1 ops, 3 outputs)"


def test_constant_forms():
    g = DataflowGraph("g")
    s = g.constant(2.5)
    assert s.shape == TensorShape([]) and s.dtype == "float32"
    b = g.constant(1.0, name="ones", shape=[2, 3], dtype="f16")
    assert b.shape == TensorShape([2, 3]) and b.dtype == "float16" and b.name == "ones"
    assert isinstance(b.value.owner, dialect.BroadcastToOp)
    arr = g.constant(np.arange(6.0).reshape(2, 3), dtype="bf16")
    assert arr.shape == TensorShape([2, 3]) and arr.dtype == "bfloat16"
    g.add_output(b)
    g.add_output(arr)
    ones, values = molten.interpret(g)
    np.testing.assert_array_equal(ones, np.ones((2, 3), np.float16))
    np.testing.assert_array_equal(values, np.arange(6.0).reshape(2, 3))


# --------------------------------------------------------------------------
# Operator overloads.
# --------------------------------------------------------------------------


def _operator_graph(expr, rhs_shape=(3, 4)):
    g = DataflowGraph("ops")
    a = g.add_input("a", [3, 4])
    b = g.add_input("b", list(rhs_shape))
    out = expr(a, b)
    g.add_output(out)
    return g, out


OPERATORS = [
    ("a + b", lambda a, b: a + b, lambda a, b: a + b, "molten.add"),
    ("a - b", lambda a, b: a - b, lambda a, b: a - b, "molten.sub"),
    ("a * b", lambda a, b: a * b, lambda a, b: a * b, "molten.mul"),
    ("a / b", lambda a, b: a / b, lambda a, b: a / b, "molten.div"),
    ("-a", lambda a, b: -a, lambda a, b: -a, "molten.neg"),
    ("a + 2", lambda a, b: a + 2, lambda a, b: a + 2, "molten.add"),
    ("2 + a", lambda a, b: 2 + a, lambda a, b: 2 + a, "molten.add"),
    ("a - 1.5", lambda a, b: a - 1.5, lambda a, b: a - 1.5, "molten.sub"),
    ("1.5 - a", lambda a, b: 1.5 - a, lambda a, b: 1.5 - a, "molten.sub"),
    ("a * 3", lambda a, b: a * 3, lambda a, b: a * 3, "molten.mul"),
    ("3 * a", lambda a, b: 3 * a, lambda a, b: 3 * a, "molten.mul"),
    ("a / 4", lambda a, b: a / 4, lambda a, b: a / 4, "molten.div"),
    ("4 / b", lambda a, b: 4 / b, lambda a, b: 4 / b, "molten.div"),
    ("a ** 2", lambda a, b: a**2, lambda a, b: a**2, "molten.pow"),
    ("2 ** a", lambda a, b: 2**a, lambda a, b: 2.0**a, "molten.pow"),
    ("b ** a", lambda a, b: b**a, lambda a, b: b**a, "molten.pow"),
    (
        "-(a * b) + a / 2",
        lambda a, b: -(a * b) + a / 2,
        lambda a, b: -(a * b) + a / 2,
        "molten.add",
    ),
]


@pytest.mark.parametrize(
    "text,expr,formula,op_name", OPERATORS, ids=[o[0] for o in OPERATORS]
)
def test_operator_overloads(text, expr, formula, op_name, rng):
    g, out = _operator_graph(expr)
    assert out.value.owner.name == op_name
    assert out.shape == TensorShape([3, 4])
    a = rng.uniform(0.5, 2.0, (3, 4))
    b = rng.uniform(0.5, 2.0, (3, 4))
    got = molten.interpret(g, a, b, reference=True)
    np.testing.assert_allclose(got, formula(a, b), rtol=1e-13)


def test_scalar_operand_is_rank0_constant_of_tensor_dtype():
    g = DataflowGraph("g")
    a = g.add_input("a", [3], "f16")
    out = 2.5 * a
    const = out.value.owner.lhs.owner
    assert isinstance(const, dialect.ConstantOp)
    assert const.result.type.get_shape() == ()
    assert const.result.type.element_type == F16
    assert out.dtype == "float16"


def test_matmul_operator(rng):
    g = DataflowGraph("mm")
    a = g.add_input("a", [2, 3, 4])
    b = g.add_input("b", [4, 5])
    out = a @ b
    assert out.value.owner.name == "molten.matmul"
    assert out.shape == TensorShape([2, 3, 5])
    g.add_output(out)
    av, bv = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    want = np.einsum("bik,kj->bij", av, bv)
    np.testing.assert_allclose(
        molten.interpret(g, av, bv, reference=True), want, rtol=1e-12, atol=1e-12
    )


def test_numpy_scalar_on_left(rng):
    g = DataflowGraph("g")
    a = g.add_input("a", [3])
    out = np.float64(2.0) + a
    assert isinstance(out, Tensor)
    g.add_output(out)
    av = rng.standard_normal(3)
    np.testing.assert_allclose(molten.interpret(g, av, reference=True), av + 2.0)


def test_operator_needs_a_tensor():
    g = DataflowGraph("g")
    with pytest.raises(GraphError, match="at least one operand must be a Tensor"):
        g.add(1.0, 2.0)


# --------------------------------------------------------------------------
# Dtypes.
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling,expected",
    [
        ("float32", F32),
        ("f32", F32),
        ("fp32", F32),
        ("float", F32),
        (np.float32, F32),
        (np.dtype("float32"), F32),
        ("float16", F16),
        ("f16", F16),
        ("fp16", F16),
        ("half", F16),
        (np.float16, F16),
        (np.dtype(np.float16), F16),
        ("torch.float16", F16),
        ("bfloat16", BF16),
        ("bf16", BF16),
        ("torch.bfloat16", BF16),
        (F16, F16),
        (BF16, BF16),
    ],
    ids=repr,
)
def test_dtype_spellings(spelling, expected):
    assert element_type(spelling) == expected
    g = DataflowGraph("g")
    x = g.add_input("x", [2], spelling)
    assert x.type.element_type == expected
    assert g.cast(x, spelling).type.element_type == expected
    assert g.constant(1.0, dtype=spelling).type.element_type == expected


def test_default_dtype_is_float32():
    g = DataflowGraph("g")
    assert g.add_input("x", [2]).dtype == "float32"
    assert g.constant(1.0).dtype == "float32"
    assert g.causal_mask(2, 2).dtype == "float32"


@pytest.mark.parametrize(
    "bad", ["float64", np.float64, "int16", np.uint16, "f8", float, None]
)
def test_unsupported_dtypes(bad):
    with pytest.raises(DTypeError, match="unsupported dtype"):
        element_type(bad)
    g = DataflowGraph("g")
    with pytest.raises(DTypeError):
        g.add_input("x", [2], bad)


@pytest.mark.parametrize(
    "dtype, element",
    [
        ("int64", "i64"),
        (np.int32, "i32"),
        ("int8", "i8"),
        (np.uint8, "ui8"),
        (bool, "i1"),
        ("bool", "i1"),
    ],
)
def test_integer_and_bool_dtypes(dtype, element):
    assert str(element_type(dtype)) == element


def test_an_integer_graph_interprets_and_compiles():
    """Integer pointwise and row_reduce kernels compile (an integer sum
    accumulates in int64); a gemm kernel holding a bool mask in its
    epilogue is refused by name, the interpreter running it."""
    g = DataflowGraph("ids")
    x = g.add_input("ids", [4, 8], "int64")
    g.add_output(g.add(x, x, name="twice"))
    ids = np.arange(32).reshape(4, 8)
    np.testing.assert_array_equal(molten.interpret(g, ids), 2 * ids)
    source = molten.ZeroCompiler().compile(g).source
    assert "const int64_t* __restrict__ ids" in source
    total = DataflowGraph("total")
    y = total.add_input("ids", [4, 8], "int64")
    total.add_output(total.reduce_sum(y, 1, name="sum"))
    np.testing.assert_array_equal(molten.interpret(total, ids), ids.sum(1))
    source = molten.ZeroCompiler().compile(total).source
    assert "int64_t* __restrict__ sum)" in source and "total_row_reduce0" in source
    masked = DataflowGraph("masked")
    a = masked.add_input("a", [64, 64])
    b = masked.add_input("b", [64, 64])
    keep = masked.add_input("keep", [64, 64], "bool")
    masked.add_output(masked.where(keep, masked.matmul(a, b), 0.0))
    with pytest.raises(
        molten.UnsupportedError,
        match="integer and bool tensors are lowered to CUDA in pointwise, "
        "row_reduce, scan and attention kernels, not yet in a gemm kernel",
    ):
        molten.ZeroCompiler().compile(masked)


# --------------------------------------------------------------------------
# Names.
# --------------------------------------------------------------------------

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def test_name_sanitization_makes_safe_identifiers(rng):
    g = DataflowGraph("my graph; drop table")
    assert IDENT.match(g.name) and g.name == "my_graph__drop_table"
    x = g.add_input('x; system("rm")', [4])
    assert x.name == "x__system__rm__"
    digit = g.add_input("3d", [4])
    assert digit.name == "_3d"
    y = g.add(x, digit, name='y = "evil" //')
    assert IDENT.match(y.name)
    g.add_output(y, "0out; }")
    assert g.output_names == ["_0out___"]
    text = g.to_mlir()
    assert "system" in text and '"rm"' not in text and ";" not in text
    assert "//" not in text
    for name in [g.name, x.name, digit.name, y.name, *g.output_names]:
        assert IDENT.match(name), name
    again = DataflowGraph.from_mlir(text)
    assert again.to_mlir() == text
    xv, dv = rng.standard_normal(4), rng.standard_normal(4)
    np.testing.assert_allclose(molten.interpret(again, xv, dv, reference=True), xv + dv)


def test_empty_and_digit_graph_names():
    assert DataflowGraph("").name == "_"
    assert DataflowGraph("1st").name == "_1st"
    g = DataflowGraph("9")
    x = g.add_input("x", [1])
    g.add_output(x)
    assert "func.func @_9(" in g.to_mlir()


def test_duplicate_input_names_raise():
    g = DataflowGraph("g")
    g.add_input("x", [2])
    with pytest.raises(GraphError, match="already has an input or output named 'x'"):
        g.add_input("x", [3])
    g.add_input("a b", [2])
    with pytest.raises(GraphError, match="'a_b'"):
        g.add_input("a_b", [2])  # same name once sanitized


def test_duplicate_output_names_raise():
    g = DataflowGraph("g")
    x = g.add_input("x", [2])
    g.add_output(g.exp(x), "y")
    with pytest.raises(GraphError, match="named 'y'"):
        g.add_output(g.neg(x), "y")
    with pytest.raises(GraphError, match="named 'x'"):
        g.add_output(g.neg(x), "x")


def test_tensor_from_another_graph_raises():
    g, h = DataflowGraph("g"), DataflowGraph("h")
    x = g.add_input("x", [2])
    z = h.add_input("z", [2])
    with pytest.raises(GraphError, match="belongs to graph 'h', not 'g'"):
        g.add(x, z)
    with pytest.raises(GraphError, match="belongs to graph 'h'"):
        _ = x * z
    with pytest.raises(GraphError, match="belongs to graph 'h'"):
        g.exp(z)
    with pytest.raises(GraphError, match="belongs to graph 'h'"):
        g.add_output(z)
    with pytest.raises(GraphError, match="belongs to graph 'g'"):
        h.softmax(x)
    with pytest.raises(GraphError, match="belongs to graph 'g'"):
        h.reduce_sum(x, 0)
    with pytest.raises(GraphError, match="expected a Tensor"):
        g.exp(np.ones(2))


def test_failed_build_leaves_graph_unchanged():
    g, h = DataflowGraph("g"), DataflowGraph("h")
    x = g.add_input("x", [2])
    z = h.add_input("z", [2])
    with pytest.raises(GraphError):
        g.add(z, 1.0)
    g.add_output(x)
    assert "molten.constant" not in g.to_mlir()


def test_no_outputs_raises():
    g = DataflowGraph("empty")
    g.add_input("x", [2])
    with pytest.raises(GraphError, match="'empty' has no outputs"):
        g.to_module()
    with pytest.raises(GraphError):
        g.to_mlir()


def test_from_mlir_rejects_foreign_ops():
    text = """
    func.func @callee(%x: tensor<2xf32>) -> tensor<2xf32> {
      func.return %x : tensor<2xf32>
    }
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = func.call @callee(%x) : (tensor<2xf32>) -> tensor<2xf32>
      func.return %0 : tensor<2xf32>
    }
    """
    with pytest.raises(GraphError, match="func.call"):
        DataflowGraph.from_mlir(text, entry="main")
    with pytest.raises(GraphError, match="2 functions"):
        DataflowGraph.from_mlir(text)


# --------------------------------------------------------------------------
# Shapes: reshape -1, negative axes, TensorShape.
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src,target,expected",
    [
        ((4, 6), [-1], (24,)),
        ((4, 6), [3, -1], (3, 8)),
        ((2, 3, 4), [-1, 4], (6, 4)),
        ((2, 3, 4), [2, -1, 2], (2, 6, 2)),
        ((5,), [1, -1, 1], (1, 5, 1)),
    ],
)
def test_reshape_infers_minus_one(src, target, expected, rng):
    g = DataflowGraph("g")
    x = g.add_input("x", list(src))
    y = g.reshape(x, target)
    assert y.shape == TensorShape(expected)
    g.add_output(y)
    xv = rng.standard_normal(src)
    np.testing.assert_array_equal(
        molten.interpret(g, xv, reference=True), xv.reshape(expected)
    )


def test_negative_axes_are_normalised():
    g = DataflowGraph("g")
    x = g.add_input("x", [2, 3, 4])
    s = g.reduce_sum(x, -1)
    assert list(s.value.owner.axes.get_values()) == [2]
    assert s.shape == TensorShape([2, 3])
    m = g.reduce_max(x, [-1, 0], keepdim=True)
    assert list(m.value.owner.axes.get_values()) == [0, 2]
    assert m.shape == TensorShape([1, 3, 1])
    me = g.reduce_mean(x, (-2,))
    assert list(me.value.owner.axes.get_values()) == [1]
    sm = g.softmax(x, axis=-2)
    assert sm.value.owner.axis.value.data == 1
    assert g.softmax(x).value.owner.axis.value.data == 2
    with pytest.raises(ShapeError, match="repeat"):
        g.reduce_sum(x, [2, -1])


def test_tensor_shape():
    s = TensorShape([2, 3])
    assert s.rank == 2 and len(s) == 2 and list(s) == [2, 3] and s[1] == 3
    assert TensorShape(5).dims == (5,)
    assert TensorShape([]).rank == 0
    assert TensorShape([np.int64(4)]).dims == (4,)
    assert TensorShape([2, 3]) == TensorShape((2, 3))
    assert repr(s) == "TensorShape([2, 3])"
    for bad in ([0], [-1], [2.0], [True], ["3"]):
        with pytest.raises(ShapeError, match="positive integers"):
            TensorShape(bad)


def test_input_shape_as_list():
    g = DataflowGraph("g")
    x = g.add_input("x", (2, 3))
    assert x.shape == TensorShape([2, 3])
    assert repr(x) == "Tensor(%x: tensor<2x3xf32>)"


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_non_finite_constant_is_rejected(value):
    # xDSL 0.74 prints inf/NaN as bit patterns it reads back as integers, so a
    # non-finite constant could not survive to_mlir/from_mlir: it is an error.
    g = DataflowGraph("g")
    with pytest.raises(ShapeError, match="molten.constant: .*inf or NaN"):
        g.constant(value)
    with pytest.raises(ShapeError, match="inf or NaN"):
        g.constant([1.0, value])


# --------------------------------------------------------------------------
# torch's conventions: options positional in torch's order; the result's name
# by keyword or, as Molten's first API wrote it, as the last positional.
# --------------------------------------------------------------------------


def _x_and_w():
    g = DataflowGraph("conventions")
    return g, g.add_input("x", [4, 8]), g.add_input("w", [8])


def test_options_are_positional_in_torchs_order():
    g, x, w = _x_and_w()
    assert last_op_props(g, g.softmax(x, 0))["axis"].value.data == 0
    assert last_op_props(g, g.rms_norm(x, w, 1e-5))["epsilon"].value.data == 1e-5
    kept = g.reduce_sum(x, 1, True)
    assert kept.shape == TensorShape([4, 1])
    assert last_op_props(g, g.gelu(x, "tanh"))["approximate"].data == "tanh"
    assert g.constant(1.0, [4, 8]).shape == TensorShape([4, 8])
    assert g.cast(x, "float16").dtype == "float16"
    assert g.causal_mask(3, 5, "float16").dtype == "float16"
    assert g.causal_mask("T", "T").shape == TensorShape(["T", "T"])


def test_the_result_name_by_keyword():
    g, x, w = _x_and_w()
    assert g.softmax(x, name="probs").name == "probs"
    assert g.constant(2.0, [4], name="two").name == "two"
    assert g.rms_norm(x, w, 1e-5, name="norm").name == "norm"


def test_the_result_name_positionally_where_no_string_can_go():
    g, x, w = _x_and_w()
    b = g.add_input("b", [8])
    q = g.add_input("q", [1, 2, 16, 16], "float16")
    norm = g.rms_norm(x, w, "norm")
    assert norm.name == "norm"
    assert last_op_props(g, norm)["epsilon"].value.data == 1e-6  # the default
    assert g.layer_norm(x, w, b, "ln").name == "ln"
    probs = g.softmax(x, "p")
    assert (probs.name, last_op_props(g, probs)["axis"].value.data) == ("p", 1)
    total = g.reduce_sum(x, [1], "s")
    assert (total.name, total.shape) == ("s", TensorShape([4]))
    assert g.matmul(x, g.transpose(x, [1, 0]), "y").name == "y"
    assert g.attention(q, q, q, "o").name == "o"
    # After the options given positionally, and past the last one.
    assert g.rms_norm(x, w, 1e-5, "n2").name == "n2"
    assert g.reduce_sum(x, 1, True, "k").shape == TensorShape([4, 1])
    assert g.exp(x, "e").name == "e"
    assert g.add(x, 1.0, "a").name == "a"
    assert g.constant(1.0, "one").name == "one"
    # The free functions forward both spellings.
    assert ops.rms_norm(x, w, "r").name == "r"


def test_a_string_option_keeps_its_values_and_the_name_follows_it():
    g, x, w = _x_and_w()
    tanh = g.gelu(x, "tanh")
    assert (tanh.name, last_op_props(g, tanh)["approximate"].data) == (None, "tanh")
    named = g.gelu(x, "tanh", "g")
    assert (named.name, last_op_props(g, named)["approximate"].data) == ("g", "tanh")
    cast = g.cast(x, "bf16", "c")
    assert (cast.name, cast.dtype) == ("c", "bfloat16")
    mask = g.causal_mask("T", "T", "float16", "m")
    assert (mask.name, mask.dtype) == ("m", "float16")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda g, x, w: g.gelu(x, "g"),
            "molten.gelu: 'g' is not a value of approximate ('none' or 'tanh'); "
            "if it is the result's name, give it as name='g'",
        ),
        (
            lambda g, x, w: g.cast(x, "c"),
            "molten.cast: 'c' is not a value of dtype (a dtype name",
        ),
        (
            lambda g, x, w: g.causal_mask(3, 3, "m"),
            "'m' is not a value of dtype",
        ),
        (
            lambda g, x, w: g.rms_norm(x, w, "norm", 1e-5),
            "molten.rms_norm: 'norm', a string where eps goes, is read as the "
            "result's name, which comes last",
        ),
        (
            lambda g, x, w: g.exp(x, "e", name="f"),
            "molten.exp: the result's name is given twice: 'e' positionally and "
            "name='f'",
        ),
        (
            lambda g, x, w: g.reduce_sum(x, "s"),
            "molten.reduce_sum: missing a required argument: 'axes' (it takes "
            "reduce_sum(x, axes, keepdim=False, *, name=None)); 's' is read as "
            "the result's name",
        ),
        (
            lambda g, x, w: g.exp(x, 3),
            "molten.exp: too many positional arguments (it takes exp(x, *, name=None))",
        ),
    ],
)
def test_ambiguous_positional_strings_name_both_readings(call, message):
    g, x, w = _x_and_w()
    with pytest.raises(GraphError, match=re.escape(message)):
        call(g, x, w)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g, x, w: g.exp(x, name=3), "molten.exp: name must be a string, got 3"),
        (lambda g, x, w: g.add_output(x, 5), "add_output: name must be a string"),
        (lambda g, x, w: g.add_input(7, [4]), "add_input: the name must be a string"),
        (lambda g, x, w: g.reduce_sum(x, ["1"]), "axes entry 0 must be an integer"),
        (lambda g, x, w: g.reduce_sum(x, True), "axes must be a sequence of integers"),
        (lambda g, x, w: g.reduce_sum(x, [1.0]), "axes entry 0 must be an integer"),
        (lambda g, x, w: g.reduce_max(x, 1, 1), "keepdim must be True or False"),
        (lambda g, x, w: g.softmax(x, axis=1.0), "axis must be an integer, got 1.0"),
        (lambda g, x, w: g.transpose(x, ["a", 0]), "permutation entry 0 must be an"),
        (lambda g, x, w: g.rms_norm(x, w, eps="a"), "eps must be a real number"),
        (lambda g, x, w: g.rms_norm(x, w, eps=True), "eps must be a real number"),
        (lambda g, x, w: g.reshape(x, [1.5, 32]), "shape entry 0 must be an integer"),
        (
            lambda g, x, w: g.reshape(x, 32),
            "shape must be a sequence of sizes and dimension names",
        ),
        (lambda g, x, w: g.broadcast_to(w, [4.0, 8]), "shape entry 0 must be an"),
        (lambda g, x, w: g.constant(1.0, [4, 8.5]), "shape entry 1 must be an integer"),
        (lambda g, x, w: g.gelu(x, True), "approximate must be 'none' or 'tanh'"),
        (lambda g, x, w: g.matmul(x, x, transpose_b="yes"), "transpose_b must be True"),
        (
            lambda g, x, w: g.attention(x, x, x, causal=1),
            "causal must be True or False",
        ),
        (
            lambda g, x, w: g.attention(x, x, x, scale="s"),
            "scale must be a real number",
        ),
        (lambda g, x, w: g.cumsum(x, 1.0), "axis must be an integer, got 1.0"),
        (lambda g, x, w: g.cumsum(x, 1, reverse=1), "reverse must be True or False"),
        (lambda g, x, w: g.slice(x, 1, 0.5, 2), "start must be an integer, got 0.5"),
        (
            lambda g, x, w: g.pad(x, 0, 1, after="2"),
            "after must be an integer, got '2'",
        ),
        (lambda g, x, w: g.concat(x, 0), "parts must be a non-empty list of tensors"),
        (lambda g, x, w: g.triu(x, 0.5), "diagonal must be an integer, got 0.5"),
    ],
)
def test_wrong_option_types_are_errors_at_the_call(call, message):
    g, x, w = _x_and_w()
    with pytest.raises(GraphError, match=re.escape(message)):
        call(g, x, w)


def test_windows_out_of_range_name_the_op_and_shapes():
    g, x, w = _x_and_w()
    with pytest.raises(ShapeError, match=r"molten.slice: elements 6 to 9 along axis 1"):
        g.slice(x, 1, 6, 4)
    with pytest.raises(ShapeError, match=r"molten.cumsum: axis 2 is out of range"):
        g.cumsum(x, 2)
    with pytest.raises(ShapeError, match=r"molten.pad: -1 zeros and input"):
        g.pad(x, 0, -1, 3)
    with pytest.raises(ShapeError, match=r"molten.flip: axis 3 is out of range"):
        g.flip(x, [3])
    with pytest.raises(
        ShapeError, match=r"molten.tril: input tensor<8xf32> has rank 1"
    ):
        g.tril(w)


@pytest.mark.parametrize("dims", [None, "4x8", 4.0, [4, None], {"a": 1}])
def test_tensor_shape_refuses_what_is_not_a_shape(dims):
    with pytest.raises(ShapeError, match=r"TensorShape\("):
        TensorShape(dims)


@pytest.mark.parametrize("dims", [[2**63], [2**20, 2**20, 2**20], [2**37, 2]])
def test_inputs_larger_than_a_gpu_are_refused(dims):
    g = DataflowGraph("huge")
    with pytest.raises(ShapeError, match=r"add_input: input 'x' .* more than one GPU"):
        g.add_input("x", dims)


def test_the_largest_tensor_a_gpu_holds_is_accepted():
    g = DataflowGraph("large")
    x = g.add_input("x", [2**36, 2], "float16")  # 256 GiB exactly
    assert g.exp(x).shape == TensorShape([2**36, 2])
    with pytest.raises(ShapeError, match="more than one GPU holds"):
        g.cast(x, "float32")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "%y = molten.exp %z : tensor<4xf32>\n  %z = molten.exp %x : tensor<4xf32>",
            "<string>:2:3: error: molten.exp: operand 0 uses %z, defined later",
        ),
        (
            "%y = molten.add %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
            "<string>:2:3: error: molten.add: operand 0 uses its own result",
        ),
    ],
)
def test_from_mlir_refuses_a_use_before_its_definition(body, message):
    text = (
        "func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        f"  {body}\n  func.return %y : tensor<4xf32>\n}}\n"
    )
    with pytest.raises(GraphError, match=re.escape(message)):
        DataflowGraph.from_mlir(text)


@pytest.mark.parametrize(
    "text",
    [
        "builtin.module {" * 500 + "}" * 500,
        "func.func @g() attributes {a = " + "[" * 5000 + "]" * 5000 + "} {\n}",
    ],
    ids=["500_nested_modules", "5000_nested_brackets"],
)
def test_from_mlir_refuses_nesting_too_deep_to_read(text):
    with pytest.raises(GraphError, match="brackets nested more than 64 deep"):
        DataflowGraph.from_mlir(text)


def test_a_zero_size_input_names_the_input_and_graph():
    g = DataflowGraph("zeros")
    with pytest.raises(ShapeError, match="add_input: input 'x' of graph 'zeros'"):
        g.add_input("x", [0, 3])


def test_a_constant_array_in_a_kernel_is_an_unsupported_error_with_a_way_out():
    g = DataflowGraph("table")
    x = g.add_input("x", [3])
    g.add_output(x + g.constant([1.0, 2.0, 3.0]))
    with pytest.raises(molten.UnsupportedError, match=r"pass the values as a graph"):
        molten.ZeroCompiler().compile(g)


# --------------------------------------------------------------------------
# Names ending in _<digits>: xDSL's SSA names drop that suffix; Molten keeps it.
# --------------------------------------------------------------------------


def test_names_ending_in_digits_are_kept_through_text_and_compile(rng):
    g = DataflowGraph("g")
    h0, h1 = g.add_input("h_0", [4]), g.add_input("h_1", [4])
    g.add_output(g.sub(h0, h1, name="y_2"))
    assert [t.name for t in g.inputs] == ["h_0", "h_1"]
    assert g.output_names == ["y_2"]
    again = DataflowGraph.from_mlir(g.to_mlir())
    assert [t.name for t in again.inputs] == ["h_0", "h_1"]
    assert again.output_names == ["y_2"]
    compiled = molten.ZeroCompiler().compile(again)
    assert [s.name for s in compiled.inputs] == ["h_0", "h_1"]
    assert [s.name for s in compiled.outputs] == ["y_2"]
    assert "g(const float* h_0, const float* h_1, float* y_2," in compiled.header
    a, b = rng.standard_normal(4), rng.standard_normal(4)
    np.testing.assert_allclose(molten.interpret(again, a, b, reference=True), a - b)


def test_a_name_and_its_digit_suffixed_twin_are_two_inputs():
    g = DataflowGraph("g")
    g.add_input("x_1", [2])
    x = g.add_input("x", [2])  # was a spurious duplicate of 'x_1'
    with pytest.raises(GraphError, match="named 'x_1'"):
        g.add_input("x_1", [2])
    g.add_output(x)
    assert [t.name for t in DataflowGraph.from_mlir(g.to_mlir()).inputs] == [
        "x_1",
        "x",
    ]


def test_a_digit_name_is_an_identifier():
    g = DataflowGraph("g")
    one = g.add_input("1", [2])
    g.add_output(g.neg(one, name="2"))
    assert one.name == "_1" and g.output_names == ["_2"]
    again = DataflowGraph.from_mlir(g.to_mlir())
    assert [t.name for t in again.inputs] == ["_1"] and again.output_names == ["_2"]


def test_digit_suffixed_ssa_names_in_a_spec_are_distinct_inputs():
    spec = """
    func.func @g(%h_0: tensor<4xf32>, %h_1: tensor<4xf32>) -> tensor<4xf32> {
      %y = molten.add %h_0, %h_1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      func.return %y : tensor<4xf32>
    }
    """
    g = DataflowGraph.from_mlir(spec)
    assert [t.name for t in g.inputs] == ["h_0", "h_1"]
    assert "g(const float* h_0, const float* h_1," in (
        molten.ZeroCompiler().compile(g).header
    )


def test_positions_follow_torch():
    """argmax/argmin: int64 positions along an axis, or of x flattened (all
    1s with keepdim); max/min with indices give (values, indices) as
    torch.max(x, dim) does; an integer sum is int64."""
    g = DataflowGraph("positions")
    x = g.add_input("x", [3, 4, 5])
    n = g.add_input("n", [3, 4], "int32")
    along = g.argmax(x, -1)
    flat = g.argmin(x, keepdim=True)
    values, indices = g.min_with_indices(n, 1, keepdim=True)
    total = g.reduce_sum(n, 1)
    assert along.shape.dims == (3, 4) and along.dtype == "int64"
    assert flat.shape.dims == (1, 1, 1) and flat.dtype == "int64"
    assert values.dtype == "int32" and indices.shape.dims == (3, 1)
    assert total.dtype == "int64"
    for t in (along, flat, values, indices, total):
        g.add_output(t)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((3, 4, 5)).astype(np.float32)
    ns = rng.integers(-(2**31), 2**31, (3, 4)).astype(np.int32)
    got = molten.interpret(g, xs, ns)
    np.testing.assert_array_equal(got[0], xs.argmax(-1))
    np.testing.assert_array_equal(got[1], [[[xs.argmin()]]])
    np.testing.assert_array_equal(got[2], ns.min(1, keepdims=True))
    np.testing.assert_array_equal(got[3], ns.argmin(1)[:, None])
    np.testing.assert_array_equal(got[4], ns.astype(np.int64).sum(1))


def test_positions_refuse_what_torch_refuses():
    g = DataflowGraph("bad_positions")
    x = g.add_input("x", [3, 4])
    with pytest.raises(ShapeError, match="molten.argmax: axis 2 is out of range"):
        g.argmax(x, 2)
    with pytest.raises(molten.MoltenError, match="molten.argmax: operand 'input'.*i1"):
        g.argmax(x > 0, 1)
    with pytest.raises(GraphError, match="axis"):
        g.argmin(x, 1.5)
