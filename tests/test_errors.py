"""User errors: build-time shape/dtype rules, interpret() inputs, molten-opt
diagnostics."""

from __future__ import annotations

import numpy as np
import pytest

import molten
from molten import DTypeError, GraphError, InputError, MoltenError, ShapeError
from molten.context import parse_module
from molten.ir import DataflowGraph
from molten.tools import molten_opt

F32 = "float32"


def _method(op, *names):
    """g.<op>(*inputs named `names`)."""
    return lambda g, t: getattr(g, op)(*(t[n] for n in names))


# Each case: id -> (inputs {name: (shape, dtype)}, build(g, t), error class,
#                   substrings the message must contain).
# The message must name the op, the operands and their shapes.
CASES = {
    # Elementwise binary: broadcasting and one element type.
    **{
        f"{op}-broadcast": (
            {"x": ((4, 8), F32), "w": ((9,), F32)},
            _method(op, "x", "w"),
            ShapeError,
            [
                f"molten.{op}:",
                "lhs tensor<4x8xf32>",
                "rhs tensor<9xf32>",
                "cannot be broadcast",
                "8 vs 9",
                "%x: tensor<4x8xf32>",
                "%w: tensor<9xf32>",
            ],
        )
        for op in ("add", "sub", "mul", "div", "max", "min", "pow")
    },
    **{
        f"{op}-int16": (
            {"u": ((4, 8), "ui8"), "i": ((4, 8), "i8")},
            _method(op, "u", "i"),
            DTypeError,
            [
                f"molten.{op}:",
                "uint8 and int8 promote to int16 in torch",
                "cast one of them first",
                "%u: tensor<4x8xui8>",
            ],
        )
        for op in ("add", "sub", "mul", "div", "max", "min", "pow")
    },
    "bitwise-float": (
        {"x": ((4, 8), F32), "y": ((4, 8), F32)},
        lambda g, t: t["x"] & t["y"],
        DTypeError,
        ["molten.bitwise_and:", "tensor<4x8xf32>", "takes integer or bool tensors"],
    ),
    "operator-broadcast": (
        {"x": ((2, 3), F32), "y": ((3, 2), F32)},
        lambda g, t: t["x"] + t["y"],
        ShapeError,
        ["molten.add:", "tensor<2x3xf32>", "tensor<3x2xf32>"],
    ),
    "rotate_half-odd": (
        {"x": ((4, 7), F32)},
        lambda g, t: g.rotate_half(t["x"]),
        ShapeError,
        ["molten.rotate_half:", "input tensor<4x7xf32>", "even last dimension"],
    ),
    "rotate_half-rank0": (
        {"x": ((), F32)},
        lambda g, t: g.rotate_half(t["x"]),
        ShapeError,
        ["molten.rotate_half:", "tensor<f32>"],
    ),
    "gelu-approximate": (
        {"x": ((4,), F32)},
        lambda g, t: g.gelu(t["x"], approximate="fast"),
        ShapeError,
        ["molten.gelu:", '"fast"', "%x: tensor<4xf32>"],
    ),
    "reduce-repeated-axes": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.reduce_sum(t["x"], [1, -1]),
        ShapeError,
        ["molten.reduce_sum:", "repeat", "%x: tensor<4x8xf32>"],
    ),
    "reduce-no-axes": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.reduce_mean(t["x"], []),
        ShapeError,
        ["molten.reduce_mean:", "at least one axis", "%x: tensor<4x8xf32>"],
    ),
    "broadcast_to-incompatible": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.broadcast_to(t["x"], [8, 8]),
        ShapeError,
        ["molten.broadcast_to:", "input tensor<4x8xf32>", "tensor<8x8xf32>"],
    ),
    "broadcast_to-smaller-rank": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.broadcast_to(t["x"], [8]),
        ShapeError,
        ["molten.broadcast_to:", "input tensor<4x8xf32>", "tensor<8xf32>"],
    ),
    "reshape-count": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.reshape(t["x"], [5, 7]),
        ShapeError,
        [
            "molten.reshape:",
            "input tensor<4x8xf32> has 32 elements",
            "tensor<5x7xf32>",
            "35",
        ],
    ),
    "reshape-minus-one-indivisible": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.reshape(t["x"], [3, -1]),
        ShapeError,
        ["molten.reshape:", "tensor<4x8xf32>", "[3, -1]"],
    ),
    "transpose-not-permutation": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.transpose(t["x"], [0, 0]),
        ShapeError,
        ["molten.transpose:", "[0, 0]", "input tensor<4x8xf32>"],
    ),
    "transpose-wrong-length": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.transpose(t["x"], [1, 0, 2]),
        ShapeError,
        ["molten.transpose:", "[1, 0, 2]", "input tensor<4x8xf32>"],
    ),
    "matmul-rank1": (
        {"x": ((4, 8), F32), "v": ((8,), F32)},
        lambda g, t: g.matmul(t["x"], t["v"]),
        ShapeError,
        ["molten.matmul:", "rhs tensor<8xf32>", "rank 1"],
    ),
    "matmul-contraction": (
        {"a": ((4, 8), F32), "b": ((4, 8), F32)},
        lambda g, t: t["a"] @ t["b"],
        ShapeError,
        [
            "molten.matmul:",
            "lhs tensor<4x8xf32> has K = 8",
            "rhs tensor<4x8xf32> has K = 4",
        ],
    ),
    "matmul-contraction-transposed": (
        {"a": ((4, 8), F32), "b": ((8, 5), F32)},
        lambda g, t: g.matmul(t["a"], t["b"], transpose_b=True),
        ShapeError,
        ["molten.matmul:", "tensor<4x8xf32>", "tensor<8x5xf32>", "transpose_b"],
    ),
    "matmul-batch": (
        {"a": ((2, 4, 8), F32), "b": ((3, 8, 5), F32)},
        lambda g, t: t["a"] @ t["b"],
        ShapeError,
        [
            "molten.matmul:",
            "cannot be broadcast",
            "%a: tensor<2x4x8xf32>",
            "%b: tensor<3x8x5xf32>",
        ],
    ),
    "matmul-dtype": (
        {"a": ((4, 8), F32), "b": ((8, 5), "bf16")},
        lambda g, t: t["a"] @ t["b"],
        DTypeError,
        ["molten.matmul:", "lhs tensor<4x8xf32>", "rhs tensor<8x5xbf16>"],
    ),
    "rms_norm-weight": (
        {"x": ((4, 8), F32), "w": ((4,), F32)},
        lambda g, t: g.rms_norm(t["x"], t["w"]),
        ShapeError,
        [
            "molten.rms_norm:",
            "weight tensor<4xf32>",
            "input tensor<4x8xf32>",
            "trailing",
        ],
    ),
    "rms_norm-weight-too-big": (
        {"x": ((8,), F32), "w": ((2, 8), F32)},
        lambda g, t: g.rms_norm(t["x"], t["w"]),
        ShapeError,
        ["molten.rms_norm:", "weight tensor<2x8xf32>", "input tensor<8xf32>"],
    ),
    "rms_norm-negative-eps": (
        {"x": ((4, 8), F32), "w": ((8,), F32)},
        lambda g, t: g.rms_norm(t["x"], t["w"], eps=-1e-6),
        ShapeError,
        ["molten.rms_norm:", "eps", "%x: tensor<4x8xf32>", "%w: tensor<8xf32>"],
    ),
    "rms_norm-nan-eps": (
        {"x": ((4, 8), F32), "w": ((8,), F32)},
        lambda g, t: g.rms_norm(t["x"], t["w"], eps=float("nan")),
        ShapeError,
        ["molten.rms_norm:", "eps"],
    ),
    "rms_norm-eps-beyond-f32": (
        {"x": ((4, 8), F32), "w": ((8,), F32)},
        lambda g, t: g.rms_norm(t["x"], t["w"], eps=1.0e308),
        ShapeError,
        ["molten.rms_norm:", "eps 1e+308 is beyond float32's range"],
    ),
    "layer_norm-eps-beyond-f32": (
        {"x": ((4, 8), F32), "w": ((8,), F32), "b": ((8,), F32)},
        lambda g, t: g.layer_norm(t["x"], t["w"], t["b"], eps=1.0e39),
        ShapeError,
        ["molten.layer_norm:", "eps 1e+39 is beyond float32's range"],
    ),
    "attention-scale-beyond-f32": (
        {"q": ((4, 8), F32)},
        lambda g, t: g.attention(t["q"], t["q"], t["q"], scale=-1.0e300),
        ShapeError,
        ["molten.attention:", "scale -1e+300 is beyond float32's range"],
    ),
    "rms_norm-dtype": (
        {"x": ((4, 8), F32), "w": ((8,), "f16")},
        lambda g, t: g.rms_norm(t["x"], t["w"]),
        DTypeError,
        ["molten.rms_norm:", "tensor<4x8xf32>", "tensor<8xf16>"],
    ),
    "layer_norm-bias": (
        {"x": ((4, 8), F32), "w": ((8,), F32), "b": ((4,), F32)},
        lambda g, t: g.layer_norm(t["x"], t["w"], t["b"]),
        ShapeError,
        ["molten.layer_norm:", "bias tensor<4xf32>", "weight tensor<8xf32>"],
    ),
    "layer_norm-weight": (
        {"x": ((4, 8), F32), "w": ((3, 8), F32), "b": ((8,), F32)},
        lambda g, t: g.layer_norm(t["x"], t["w"], t["b"]),
        ShapeError,
        ["molten.layer_norm:", "weight tensor<3x8xf32>", "input tensor<4x8xf32>"],
    ),
    "layer_norm-inf-eps": (
        {"x": ((4, 8), F32), "w": ((8,), F32), "b": ((8,), F32)},
        lambda g, t: g.layer_norm(t["x"], t["w"], t["b"], eps=float("inf")),
        ShapeError,
        ["molten.layer_norm:", "eps", "%x: tensor<4x8xf32>"],
    ),
    "rope-odd": (
        {"x": ((4, 7), F32), "c": ((4, 7), F32)},
        lambda g, t: g.rope(t["x"], t["c"], t["c"]),
        ShapeError,
        ["molten.rope", "tensor<4x7xf32>", "even"],
    ),
    "rope-cos-incompatible": (
        {"x": ((4, 8), F32), "c": ((5, 8), F32), "s": ((4, 8), F32)},
        lambda g, t: g.rope(t["x"], t["c"], t["s"]),
        ShapeError,
        ["molten.rope:", "tensor<4x8xf32>", "cos tensor<5x8xf32>"],
    ),
    "rope-sin-enlarges": (
        {"x": ((4, 8), F32), "c": ((4, 8), F32), "s": ((2, 4, 8), F32)},
        lambda g, t: g.rope(t["x"], t["c"], t["s"]),
        ShapeError,
        ["molten.rope:", "sin tensor<2x4x8xf32>", "input tensor<4x8xf32>"],
    ),
    "attention-rank1": (
        {"q": ((8,), F32), "k": ((4, 8), F32)},
        lambda g, t: g.attention(t["q"], t["k"], t["k"]),
        ShapeError,
        ["molten.attention:", "query tensor<8xf32>", "rank >= 2"],
    ),
    "attention-head-dim": (
        {"q": ((4, 8), F32), "k": ((4, 7), F32), "v": ((4, 8), F32)},
        lambda g, t: g.attention(t["q"], t["k"], t["v"]),
        ShapeError,
        ["molten.attention:", "query tensor<4x8xf32>", "key tensor<4x7xf32>", "8 vs 7"],
    ),
    "attention-seq-len": (
        {"q": ((4, 8), F32), "k": ((4, 8), F32), "v": ((5, 8), F32)},
        lambda g, t: g.attention(t["q"], t["k"], t["v"]),
        ShapeError,
        ["molten.attention:", "key tensor<4x8xf32>", "value tensor<5x8xf32>", "4 vs 5"],
    ),
    "attention-batch": (
        {"q": ((2, 4, 8), F32), "k": ((3, 4, 8), F32)},
        lambda g, t: g.attention(t["q"], t["k"], t["k"]),
        ShapeError,
        [
            "molten.attention:",
            "cannot be broadcast",
            "%q: tensor<2x4x8xf32>",
            "%k: tensor<3x4x8xf32>",
        ],
    ),
    "attention-scale": (
        {"q": ((4, 8), F32)},
        lambda g, t: g.attention(t["q"], t["q"], t["q"], scale=float("nan")),
        ShapeError,
        ["molten.attention:", "scale", "%q: tensor<4x8xf32>"],
    ),
    "attention-dtype": (
        {"q": ((4, 8), "f16"), "k": ((4, 8), F32)},
        lambda g, t: g.attention(t["q"], t["k"], t["k"]),
        DTypeError,
        ["molten.attention:", "tensor<4x8xf16>", "tensor<4x8xf32>"],
    ),
    "constant-empty": (
        {},
        lambda g, t: g.constant([]),
        ShapeError,
        ["molten.constant:", "empty"],
    ),
    "constant-not-real": (
        {},
        lambda g, t: g.constant("abc"),
        DTypeError,
        ["molten.constant:", "'abc'", "not real-valued"],
    ),
    "constant-complex": (
        {},
        lambda g, t: g.constant(1 + 2j),
        DTypeError,
        ["molten.constant:", "not real-valued"],
    ),
}


def _graph(inputs):
    g = DataflowGraph("g")
    return g, {
        name: g.add_input(name, shape, dtype) for name, (shape, dtype) in inputs.items()
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_build_time_error(case):
    inputs, build, error, substrings = CASES[case]
    g, tensors = _graph(inputs)
    n_ops = len(list(g._block.ops))
    with pytest.raises(error) as info:
        build(g, tensors)
    message = str(info.value)
    for s in substrings:
        assert s in message, f"{s!r} not in {message!r}"
    assert isinstance(info.value, MoltenError)
    if inputs:
        assert "in graph 'g'" in message or "molten.reshape" in message
    # The failing op is not left in the graph.
    assert len(list(g._block.ops)) == n_ops


def test_error_classes_are_also_standard_exceptions():
    assert issubclass(ShapeError, ValueError)
    assert issubclass(DTypeError, TypeError)
    assert issubclass(GraphError, ValueError)
    assert issubclass(InputError, ValueError)


# Builder errors raised before the op's rule runs: the message must still name
# the op and the operand with its shape (molten/ir.py promises it for every
# method). These do not.
MISSING_CONTEXT = {
    "reduce-axis-out-of-range": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.reduce_sum(t["x"], 2),
        ShapeError,
        ["molten.reduce_sum", "tensor<4x8xf32>"],
    ),
    "softmax-axis-out-of-range": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.softmax(t["x"], axis=5),
        ShapeError,
        ["molten.softmax", "tensor<4x8xf32>"],
    ),
    "reshape-two-minus-ones": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.reshape(t["x"], [-1, -1]),
        ShapeError,
        ["molten.reshape", "tensor<4x8xf32>"],
    ),
    "broadcast_to-zero-dim": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.broadcast_to(t["x"], [0, 8]),
        ShapeError,
        ["molten.broadcast_to", "tensor<4x8xf32>"],
    ),
    "cast-unsupported-dtype": (
        {"x": ((4, 8), F32)},
        lambda g, t: g.cast(t["x"], "float64"),
        DTypeError,
        ["molten.cast", "tensor<4x8xf32>"],
    ),
    "causal_mask-zero-size": (
        {},
        lambda g, t: g.causal_mask(0, 4),
        ShapeError,
        ["molten.causal_mask"],
    ),
}


@pytest.mark.parametrize("case", sorted(MISSING_CONTEXT))
def test_build_time_error_names_op_and_operand(case):
    inputs, build, error, substrings = MISSING_CONTEXT[case]
    g, tensors = _graph(inputs)
    with pytest.raises(error) as info:
        build(g, tensors)
    message = str(info.value)
    for s in substrings:
        assert s in message, f"{s!r} not in {message!r}"


@pytest.mark.parametrize("case", sorted(MISSING_CONTEXT))
def test_pre_rule_errors_raise_the_right_class(case):
    # Whatever their message, these raise the documented error class at build time.
    inputs, build, error, _ = MISSING_CONTEXT[case]
    g, tensors = _graph(inputs)
    with pytest.raises(error):
        build(g, tensors)


# --------------------------------------------------------------------------
# The same rules on parsed IR.
# --------------------------------------------------------------------------

# (op line, type of %w, declared result type, error or None, message substrings)
PARSED = [
    (
        "%0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>",
        "tensor<9xf32>",
        "tensor<4x8xf32>",
        ShapeError,
        ["molten.add:", "lhs tensor<4x8xf32>", "rhs tensor<9xf32>"],
    ),
    (
        "%0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<8xf16>) -> tensor<4x8xf32>",
        "tensor<8xf16>",
        "tensor<4x8xf32>",
        DTypeError,
        ["molten.add:", "share one element type"],
    ),
    (
        "%0 = molten.mul %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>",
        "tensor<8xf32>",
        "tensor<4x8xf32>",
        None,
        [],
    ),
    (
        "%0 = molten.mul %x, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x9xf32>",
        "tensor<8xf32>",
        "tensor<4x9xf32>",
        ShapeError,
        ["molten.mul:", "result type tensor<4x9xf32> does not match tensor<4x8xf32>"],
    ),
    (
        "%0 = molten.cast %x : tensor<4x8xf32> to tensor<8x4xf16>",
        "tensor<8xf32>",
        "tensor<8x4xf16>",
        ShapeError,
        ["molten.cast:", "differ in shape"],
    ),
    (
        "%0 = molten.reduce_sum %x axes = [2] : tensor<4x8xf32> -> tensor<4xf32>",
        "tensor<8xf32>",
        "tensor<4xf32>",
        ShapeError,
        ["molten.reduce_sum:", "axis 2", "tensor<4x8xf32>"],
    ),
    (
        "%0 = molten.reduce_sum %x axes = [1] : tensor<4x8xf32> -> tensor<4x1xf32>",
        "tensor<8xf32>",
        "tensor<4x1xf32>",
        ShapeError,
        ["molten.reduce_sum:", "result type tensor<4x1xf32>", "tensor<4xf32>"],
    ),
    (
        "%0 = molten.softmax %x axis = 2 : tensor<4x8xf32>",
        "tensor<8xf32>",
        "tensor<4x8xf32>",
        ShapeError,
        ["molten.softmax:", "axis 2", "tensor<4x8xf32>"],
    ),
    (
        "%0 = molten.rms_norm %x, %w eps = 1.0e-06 : (tensor<4x8xf32>, tensor<4xf32>) "
        "-> tensor<4x8xf32>",
        "tensor<4xf32>",
        "tensor<4x8xf32>",
        ShapeError,
        ["molten.rms_norm:", "weight tensor<4xf32>"],
    ),
    (
        "%0 = molten.causal_mask : tensor<4xf32>",
        "tensor<4xf32>",
        "tensor<4xf32>",
        ShapeError,
        ["molten.causal_mask:", "rank >= 2"],
    ),
]


@pytest.mark.parametrize("line,w_type,result_type,error,substrings", PARSED)
def test_rules_apply_to_parsed_ir(line, w_type, result_type, error, substrings):
    text = (
        f"func.func @f(%x: tensor<4x8xf32>, %w: {w_type}) -> {result_type} {{\n"
        f"  {line}\n"
        f"  func.return %0 : {result_type}\n"
        "}\n"
    )
    if error is None:
        parse_module(text)
        return
    with pytest.raises(error) as info:
        parse_module(text)
    for s in substrings:
        assert s in str(info.value), str(info.value)


# --------------------------------------------------------------------------
# interpret() inputs.
# --------------------------------------------------------------------------


@pytest.fixture
def graph():
    g = DataflowGraph("scale")
    x = g.add_input("x", [4, 8])
    y = g.add_input("y", [8], "f16")
    g.add_output(x * 2.0)
    g.add_output(y + 1.0)
    return g


def test_interpret_wrong_shape_names_input(graph):
    with pytest.raises(InputError) as info:
        molten.interpret(graph, np.zeros((4, 7)), np.zeros(8))
    message = str(info.value)
    assert "input 0 ('x')" in message and "(4, 7)" in message and "(4, 8)" in message
    with pytest.raises(InputError, match=r"input 1 \('y'\) has shape \(8, 1\)"):
        molten.interpret(graph, np.zeros((4, 8)), np.zeros((8, 1)))
    with pytest.raises(InputError, match=r"input 1 \('y'\)"):
        molten.interpret(graph, np.zeros((4, 8)), 3.0)


def test_interpret_wrong_number_of_inputs(graph):
    with pytest.raises(InputError, match="@scale takes 2 inputs, got 1"):
        molten.interpret(graph, np.zeros((4, 8)))
    with pytest.raises(InputError, match="@scale takes 2 inputs, got 3"):
        molten.interpret(graph, np.zeros((4, 8)), np.zeros(8), np.zeros(8))
    with pytest.raises(InputError, match="got 0"):
        molten.interpret(graph, reference=True)


@pytest.mark.parametrize(
    "bad",
    [
        np.full((4, 8), "a"),
        np.zeros((4, 8), dtype=complex),
        np.zeros((4, 8), dtype=bool),
        np.empty((4, 8), dtype=object),
        None,
    ],
    ids=["str", "complex", "bool", "object", "None"],
)
def test_interpret_non_numeric_input(graph, bad):
    with pytest.raises(InputError) as info:
        molten.interpret(graph, bad, np.zeros(8))
    assert "input 0 ('x')" in str(info.value)
    assert "real-valued" in str(info.value)


def test_interpret_ragged_input(graph):
    with pytest.raises(InputError, match=r"input 1 \('y'\)"):
        molten.interpret(graph, np.zeros((4, 8)), [[1.0, 2.0], [3.0]])


def test_interpret_integer_inputs_are_accepted(graph):
    x, y = molten.interpret(graph, np.ones((4, 8), dtype=np.int32), np.arange(8))
    np.testing.assert_array_equal(x, np.full((4, 8), 2.0, np.float32))
    np.testing.assert_array_equal(y, np.arange(8, dtype=np.float16) + 1)


def test_interpret_bad_program_and_entry(graph):
    with pytest.raises(TypeError, match="DataflowGraph, a builtin.module or MLIR text"):
        molten.interpret(42)
    with pytest.raises(GraphError, match="no function @nope"):
        molten.interpret(graph, np.zeros((4, 8)), np.zeros(8), entry="nope")


# --------------------------------------------------------------------------
# molten-opt diagnostics.
# --------------------------------------------------------------------------

BAD_SHAPE = """\
// a broadcast error on line 3
func.func @f(%x: tensor<4x8xf32>, %w: tensor<9xf32>) -> tensor<4x8xf32> {
    %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
"""

BAD_DTYPE = """\
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8xbf16>) -> tensor<4x8xf32> {
  %0 = molten.mul %x, %w : (tensor<4x8xf32>, tensor<8xbf16>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
"""


def _run_opt(tmp_path, capsys, text, *args, name="spec.mlir"):
    path = tmp_path / name
    path.write_text(text)
    rc = molten_opt.main([str(path), *args])
    out, err = capsys.readouterr()
    return rc, out, err, str(path)


def test_molten_opt_shape_error_is_located(tmp_path, capsys):
    rc, out, err, path = _run_opt(tmp_path, capsys, BAD_SHAPE)
    assert rc != 0
    assert "Traceback" not in err and "Traceback" not in out
    first = err.splitlines()[0]
    assert first.startswith(f"{path}:3:5: error: molten.add:"), err
    assert "lhs tensor<4x8xf32> and rhs tensor<9xf32>" in first
    assert "%0 = molten.add %x, %w" in err  # the source line
    assert err.splitlines()[2] == " " * 4 + "^"  # a caret under column 5
    assert out == ""


def test_molten_opt_shape_error_with_passes(tmp_path, capsys):
    rc, _, err, path = _run_opt(
        tmp_path, capsys, BAD_SHAPE, "-p", "molten-decompose,canonicalize"
    )
    assert rc != 0
    assert err.startswith(f"{path}:3:5: error: molten.add:")
    assert "Traceback" not in err


def test_molten_opt_dtype_error_is_located(tmp_path, capsys):
    rc, out, err, path = _run_opt(tmp_path, capsys, BAD_DTYPE)
    assert rc != 0
    assert err.startswith(
        f"{path}:2:3: error: molten.mul: operands must share one element type"
    )
    assert "Traceback" not in err


def test_molten_opt_parse_error_is_located(tmp_path, capsys):
    text = (
        "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = molten.exp %x :\n"
        "}\n"
    )
    rc, out, err, path = _run_opt(tmp_path, capsys, text)
    assert rc != 0
    assert err.startswith(f"{path}:"), err
    assert ": error: " in err.splitlines()[0]
    assert "Traceback" not in err


def test_molten_opt_missing_file(tmp_path, capsys):
    rc = molten_opt.main([str(tmp_path / "missing.mlir")])
    err = capsys.readouterr().err
    assert rc != 0
    assert "molten-opt: error:" in err and "missing.mlir" in err
    assert "Traceback" not in err
