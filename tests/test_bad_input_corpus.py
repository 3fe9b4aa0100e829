# ruff: noqa: E501 (the specs are MLIR, one op a line)
"""A corpus of malformed specs and API misuses, generated from a fixed seed:
each must end in a clean error (located, for a spec) or a clean acceptance,
never a traceback, an internal error or a raw Python exception.

Specs: small valid specs mutated (a token replaced, a character deleted or
inserted, a line duplicated, dropped or cut short) and run through
`molten-opt` down to CUDA source, in process. API misuses: every builder
method called with wrong values in each of its slots.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

import molten
from molten.errors import MoltenError
from molten.ir import DataflowGraph
from molten.pipeline import DEFAULT_PIPELINE
from molten.tools.molten_opt import main as molten_opt

SPECS = [
    """\
func.func @norm(%x: tensor<4x40xf32>, %w: tensor<40xf32>) -> (tensor<4x40xf32> {molten.name = "y"}) {
  %y = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32>
  func.return %y : tensor<4x40xf32>
}
""",
    """\
func.func @act(%x: tensor<8x16xf16>, %w: tensor<16x32xf16>, %b: tensor<32xf16>) -> tensor<8x32xf16> {
  %m = molten.matmul %x, %w : (tensor<8x16xf16>, tensor<16x32xf16>) -> tensor<8x32xf16>
  %a = molten.add %m, %b : (tensor<8x32xf16>, tensor<32xf16>) -> tensor<8x32xf16>
  %g = molten.gelu %a approximate = "tanh" : tensor<8x32xf16>
  func.return %g : tensor<8x32xf16>
}
""",
    """\
func.func @probs(%x: tensor<3x5x7xf32>) -> tensor<3x5x7xf32> {
  %s = molten.softmax %x axis = 2 : tensor<3x5x7xf32>
  %t = molten.transpose %s permutation = [1, 0, 2] : tensor<3x5x7xf32> -> tensor<5x3x7xf32>
  %r = molten.reduce_sum %t axes = [0] keepdim : tensor<5x3x7xf32> -> tensor<1x3x7xf32>
  %c = molten.cast %r : tensor<1x3x7xf32> -> tensor<1x3x7xbf16>
  %e = molten.cast %c : tensor<1x3x7xbf16> -> tensor<1x3x7xf32>
  %y = molten.mul %x, %e : (tensor<3x5x7xf32>, tensor<1x3x7xf32>) -> tensor<3x5x7xf32>
  func.return %y : tensor<3x5x7xf32>
}
""",
    """\
func.func @masked(%ids: tensor<2x9xi64>, %x: tensor<2x9xbf16>, %t: tensor<30x4xf32>) -> (tensor<2x9xbf16>, tensor<2xi64>, tensor<2x9x4xf32>) {
  %p = molten.iota axis = 1 : tensor<2x9xi64>
  %k = molten.lt %ids, %p : (tensor<2x9xi64>, tensor<2x9xi64>) -> tensor<2x9xi1>
  %z = molten.constant dense<0.0> : tensor<bf16>
  %y = molten.where %k, %x, %z : (tensor<2x9xi1>, tensor<2x9xbf16>, tensor<bf16>) -> tensor<2x9xbf16>
  %a = molten.argmax %y axes = [1] : tensor<2x9xbf16> -> tensor<2xi64>
  %n = molten.constant dense<30> : tensor<i64>
  %r = molten.remainder %ids, %n : (tensor<2x9xi64>, tensor<i64>) -> tensor<2x9xi64>
  %e = molten.take %t, %r axis = 0 : (tensor<30x4xf32>, tensor<2x9xi64>) -> tensor<2x9x4xf32>
  func.return %y, %a, %e : tensor<2x9xbf16>, tensor<2xi64>, tensor<2x9x4xf32>
}
""",
    """\
kernel.func @rows(%x: tensor<4x40xf32>) -> (tensor<4x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 1, vector = 1, elements_per_thread = 2> {
  %s = molten.reduce_sum %x axes = [1] keepdim : tensor<4x40xf32> -> tensor<4x1xf32>
  kernel.yield %s : tensor<4x1xf32>
}
func.func @sum(%x: tensor<4x40xf32>) -> tensor<4x1xf32> {
  %s = kernel.launch @rows(%x) : (tensor<4x40xf32>) -> tensor<4x1xf32>
  func.return %s : tensor<4x1xf32>
}
""",
]

REPLACEMENTS = [
    "f64", "i32", "f16", "bf16", "tensor<?xf32>", "tensor<0xf32>", "tensor<f32>",
    "%undefined", "%x", "molten.nonexistent", "molten.exp", "-1", "0", "1.5",
    "99999999999999999999", "1.0e308", "nan", '"x"', "@other", "[", "]", "{", "}",
    "(", ")", "<", ">", ",", ":", "=", "->", "keepdim", "axes = [7]", "axis = -9",
    "\u00e9", "\ufeff", "\x00", "//", '"', "func.return", "kernel.yield",
    "^bb1:", "i1", "i64", "ui8", "stages = 100", "split = 4", '"a\\qb"', "7",
]  # fmt: skip
TOKEN = re.compile(r"%\w+|@\w+|[\w.]+|<[^<>]*>|\S")


def _mutate(rng: random.Random, spec: str) -> str:
    lines = spec.splitlines(keepends=True)
    kind = rng.randrange(6)
    if kind == 0:  # a token replaced
        tokens = list(TOKEN.finditer(spec))
        token = rng.choice(tokens)
        return spec[: token.start()] + rng.choice(REPLACEMENTS) + spec[token.end() :]
    if kind == 1:  # a character deleted
        at = rng.randrange(len(spec))
        return spec[:at] + spec[at + 1 :]
    if kind == 2:  # a character inserted
        at = rng.randrange(len(spec))
        return spec[:at] + rng.choice("{}()<>[],:=%@\"'#^!\\x") + spec[at:]
    if kind == 3:  # a line duplicated
        at = rng.randrange(len(lines))
        return "".join(lines[: at + 1] + lines[at:])
    if kind == 4:  # a line dropped
        at = rng.randrange(len(lines))
        return "".join(lines[:at] + lines[at + 1 :])
    return spec[: rng.randrange(len(spec))]  # cut short


def _corpus(count: int) -> list[tuple[str, str]]:
    rng = random.Random(20261125)
    cases = []
    for i in range(count):
        spec = _mutate(rng, rng.choice(SPECS))
        if rng.random() < 0.3:  # two mutations at once
            spec = _mutate(rng, spec)
        cases.append((f"spec{i:03d}", spec))
    return cases


CORPUS = _corpus(400)
LOCATED = re.compile(r"^(\S+\.mlir(:\d+:\d+)?|molten-opt): error: ")


@pytest.mark.sweep
@pytest.mark.parametrize(
    ("label", "spec"), [pytest.param(label, spec, id=label) for label, spec in CORPUS]
)
def test_a_malformed_spec_is_a_clean_error_or_compiles(label, spec, tmp_path, capsys):
    path = tmp_path / f"{label}.mlir"
    path.write_bytes(spec.encode("utf-8", errors="surrogateescape"))
    status = molten_opt([str(path), "-p", DEFAULT_PIPELINE, "-t", "cuda"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    if status == 0:  # accepted: a translation unit (empty for a spec of no ops)
        assert out.startswith("// Generated by Molten") or not out.strip(), out[:400]
        return
    assert status == 1, (status, err)
    first = err.splitlines()[0] if err else ""
    assert LOCATED.match(first), f"an unlocated error: {err[:600]}"


# -- API misuses -------------------------------------------------------------

BAD_VALUES = [
    None, "a", "", 1.5, True, -1, 10**20, [], [1.5], ["a"], {"a": 1},
    float("nan"), float("inf"), np.float32(2.0), np.array([1, 2]), object(),
    2**64 - 1, 2**63, -(2**70), "4",
]  # fmt: skip

METHODS = {
    # method: the tensor operands it takes (the rest of its slots are options)
    "add": 2, "mul": 2, "pow": 2, "exp": 1, "gelu": 1, "cast": 1, "constant": 0,
    "reduce_sum": 1, "reduce_mean": 1, "broadcast_to": 1, "reshape": 1,
    "transpose": 1, "matmul": 2, "rms_norm": 2, "layer_norm": 3, "softmax": 1,
    "rope": 3, "attention": 3, "causal_mask": 0, "triu": 1, "tril": 1, "slice": 1,
    "pad": 1, "argmax": 1, "cumsum": 1, "take": 1, "iota": 0, "full": 0,
}  # fmt: skip
OPTIONS = {
    "gelu": ["approximate"], "cast": ["dtype"], "constant": ["value", "shape", "dtype"],
    "reduce_sum": ["axes", "keepdim"], "reduce_mean": ["axes", "keepdim"],
    "broadcast_to": ["shape"], "reshape": ["shape"], "transpose": ["permutation"],
    "matmul": ["transpose_a", "transpose_b"], "rms_norm": ["eps"],
    "layer_norm": ["eps"], "softmax": ["axis"], "attention": ["scale", "causal"],
    "causal_mask": ["rows", "cols", "dtype"], "triu": ["diagonal"],
    "tril": ["diagonal"], "slice": ["axis", "start", "length"],
    "pad": ["axis", "before", "after"], "argmax": ["axis", "keepdim"],
    "cumsum": ["axis", "reverse", "exclusive"], "take": ["indices", "axis"],
    "iota": ["shape", "axis", "dtype"], "full": ["shape", "value", "dtype"],
}  # fmt: skip


def _misuses() -> list[tuple[str, str, int]]:
    cases = []
    for method in METHODS:
        for option in [*OPTIONS.get(method, []), "name"]:
            for index in range(len(BAD_VALUES)):
                cases.append((method, option, index))
    return cases


@pytest.mark.parametrize(
    ("method", "option", "bad"),
    [pytest.param(m, o, b, id=f"{m}-{o}-{b}") for m, o, b in _misuses()],
)
def test_a_bad_option_is_a_clean_error_at_the_call(method, option, bad):
    g = DataflowGraph("misuse")
    x = g.add_input("x", [4, 8])
    operands = [x] * METHODS[method]
    value = BAD_VALUES[bad]
    try:
        result = getattr(g, method)(*operands, **{option: value})
    except MoltenError:
        return  # the clean error
    except TypeError as error:  # Python's own: a missing required argument
        assert "required" in str(error) or "argument" in str(error), error
        return
    assert isinstance(result, molten.Tensor), result


def test_the_corpora_are_large_enough():
    assert len(CORPUS) >= 300 and len(_misuses()) >= 300


# -- The classes of the second round (issue 60), one reproducer each ---------

CLASSES = {
    "two_blocks": (
        """\
func.func @g(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.neg %x : tensor<4x8xf32>
^bb1:
  func.return %0 : tensor<4x8xf32>
}
""",
        "func.func @g has a body of 2 blocks",
    ),
    "row_reduce_without_reduction": (
        """\
kernel.func @k(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32> {
  %y = molten.neg %x : tensor<4x8xf32>
  kernel.yield %y : tensor<4x8xf32>
}
""",
        "a row_reduce kernel computes a reduction; its body has none",
    ),
    "grid_past_dim3": (
        """\
cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.host_func @h(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 shapes [[4], [4]] {
  cuda.launch @k grid [4294967296, 1, 1] block [32, 1, 1] (%y) : !cuda.ptr<f32>
  cuda.return
}
""",
        "grid [4294967296, 1, 1] has 4294967296 along x; CUDA launches at most",
    ),
    "stages_past_the_family": (
        """\
kernel.func @k(%a: tensor<128x64xf16>, %b: tensor<64x128xf16>) -> (tensor<128x128xf16>) gemm schedule #kernel.schedule<gemm_mma, block = 128, tile = [64, 64, 32], warp = [32, 32], stages = 100> {
  %m = molten.matmul %a, %b : (tensor<128x64xf16>, tensor<64x128xf16>) -> tensor<128x128xf16>
  kernel.yield %m : tensor<128x128xf16>
}
""",
        "stages = 100 is more than a pipeline of gemm_mma keeps in flight",
    ),
    "name_not_a_string": (
        """\
func.func @g(%x: tensor<4xf32> {molten.name = 7}) -> tensor<4xf32> {
  %0 = molten.neg %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
""",
        "input 0's molten.name is 7 : i64, not a string",
    ),
    "unknown_escape": (
        """\
func.func @g(%x: tensor<4xf32> {molten.name = "a\\qb"}) -> tensor<4xf32> {
  %0 = molten.neg %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
""",
        "unknown escape \\q in a string literal",
    ),
    "masked_ids_out_of_range": (
        """\
func.func @g(%t: tensor<10x4xf32>) -> tensor<2x4xf32> {
  %i = molten.constant dense<[3, 10]> : tensor<2xi64>
  %r = molten.take %t, %i axis = 0 : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
""",
        "out of range for axis 0 of input tensor<10x4xf32> (size 10)",
    ),
}


@pytest.mark.parametrize("case", sorted(CLASSES))
def test_each_class_is_a_located_error(case, tmp_path, capsys):
    """Through molten-opt down to CUDA and molten compile: one located error
    naming the problem, no traceback, no generated code in the message."""
    from molten.tools.cli import main as molten_cli

    spec, expected = CLASSES[case]
    path = tmp_path / f"{case}.mlir"
    path.write_text(spec)
    for run in (
        lambda: molten_opt([str(path), "-p", DEFAULT_PIPELINE, "-t", "cuda"]),
        lambda: molten_cli(["compile", str(path), "-o", str(tmp_path / "out")]),
    ):
        status = run()
        _, err = capsys.readouterr()
        assert status != 0 and "Traceback" not in err, err
        assert LOCATED.match(err.splitlines()[0]), err[:600]
        assert expected in err, err[:600]
        assert len(err) < 2000, f"{len(err)} characters: generated code?"


def test_a_launcher_of_no_launch_declares_no_error_variable(tmp_path, capsys):
    """A host function with nothing to launch has no unused `err` (nvcc
    -Werror refused it)."""
    path = tmp_path / "copy_only.mlir"
    path.write_text(
        "cuda.host_func @copy_only(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) "
        "outputs 1 shapes [[4], [4]] {\n  cuda.return\n}\n"
    )
    assert molten_opt([str(path), "-t", "cuda"]) == 0
    out, _ = capsys.readouterr()
    assert "copy_only(" in out and "cudaError_t err" not in out


@pytest.mark.parametrize(
    "call",
    [
        lambda g, x: g.triu(x, 2**64 - 1),
        lambda g, x: g.triu(x, 2**63),
        lambda g, x: g.tril(x, -(2**70)),
        lambda g, x: g.slice(x, 1, 2**70, 1),
        lambda g, x: g.pad(x, 1, 2**70, 0),
        lambda g, x: g.iota([4, 8], 2**64),
        lambda g, x: g.argmax(x, 2**63),
    ],
)
def test_integer_options_outside_int64_are_refused_at_the_call(call):
    g = DataflowGraph("ranges")
    x = g.add_input("x", [4, 8])
    with pytest.raises(molten.GraphError, match="outside int64's range"):
        call(g, x)


def test_a_diagonal_past_the_matrix_interprets():
    """The least and greatest int64 diagonals select what the nearest in
    reach does (numpy's own arithmetic overflowed)."""
    g = DataflowGraph("far")
    x = g.add_input("x", [4, 8])
    g.add_output(g.tril(x, -(2**63)))
    g.add_output(g.triu(x, -(2**63)))
    low, high = molten.interpret(g, np.ones((4, 8), np.float32))
    assert low.sum() == 0 and high.sum() == 32


def test_misleading_messages_say_what_is_wrong():
    g = DataflowGraph("clear")
    x = g.add_input("x", [4, 8])
    with pytest.raises(molten.GraphError, match="length -2 must be at least 1"):
        g.slice(x, 1, 0, -2)
    named = DataflowGraph("named")
    named.add_output(named.neg(named.add_input("x", ["T", 8])))
    with pytest.raises(molten.GraphError, match="the size of T must be an integer"):
        named.specialize(T="4")
    with pytest.raises(molten.ShapeError, match="T = 0: a dimension name takes"):
        named.specialize(T=0)


def test_a_long_graph_name_saves_under_a_shortened_file_name(tmp_path):
    """File names from a graph's name stay within the file system's limit
    (a hash of the whole name keeps them apart); the C symbol is whole."""
    name = "n" * 5001
    g = DataflowGraph(name)
    g.add_output(molten.ops.exp(g.add_input("x", [4])))
    compiler = molten.ZeroCompiler()
    files = compiler.save(compiler.compile(g), tmp_path)
    assert all(len(f.name) < 120 for f in files)
    assert f"cudaError_t {name}(" in files[1].read_text()
