# ruff: noqa: E501 (MLIR text is written one op a line)
"""The kernel dialect from Python: building kernel.fused / kernel.yield /
kernel.func / kernel.launch and #kernel.schedule, their verifiers, the custom
and generic forms read back, and the interpreter on hand-written
kernel-level modules."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    Float16Type,
    Float32Type,
    FunctionType,
    IntAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Block, Region
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

import molten
from molten.context import parse_module
from molten.dialects import kernel
from molten.dialects import molten as dialect
from molten.errors import GraphError

F = kernel.ScheduleFamily


try:  # tests/ is a package (tests/__init__.py) or a plain directory
    from .conftest import NATIVE_TOL, REFERENCE_TOL, assert_close, rand
except ImportError:  # pragma: no cover
    from conftest import NATIVE_TOL, REFERENCE_TOL, assert_close, rand

F32 = Float32Type()
F16 = Float16Type()
T = TensorType(F32, [4, 8])
T16 = TensorType(F16, [4, 8])
ROW = TensorType(F32, [8])


def printed(op, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()


# --------------------------------------------------------------------------
# Building ops from Python.
# --------------------------------------------------------------------------


def exp_body(arg_type=T, yield_cast_to=None, terminate=True) -> Region:
    """^bb0(%a): %e = exp(%a) [; %c = cast(%e)]; kernel.yield."""
    block = Block(arg_types=[arg_type])
    block.args[0].name_hint = "a"
    exp = dialect.ExpOp.with_inferred_type([block.args[0]])
    block.add_op(exp)
    result = exp.results[0]
    if yield_cast_to is not None:
        cast = dialect.CastOp.with_inferred_type(
            [result], result_type=TensorType(yield_cast_to, arg_type.get_shape())
        )
        block.add_op(cast)
        result = cast.results[0]
    if terminate:
        block.add_op(kernel.YieldOp(result))
    return Region(block)


def graph_with(make_ops, input_types=(T,)) -> tuple[ModuleOp, func.FuncOp]:
    """A module with one func.func @graph whose body is make_ops(*args) and
    a return of the last op's results."""
    block = Block(arg_types=list(input_types))
    ops = make_ops(*block.args)
    block.add_ops(ops)
    results = list(ops[-1].results)
    block.add_op(func.ReturnOp(*results))
    graph = func.FuncOp(
        "graph", (list(input_types), [r.type for r in results]), Region(block)
    )
    return ModuleOp([graph]), graph


def test_fused_op_from_python(rng):
    fused = None

    def make(x):
        nonlocal fused
        fused = kernel.FusedOp(kernel.KernelKind.POINTWISE, [x], [T], exp_body())
        return [fused]

    module, _ = graph_with(make)
    module.verify()
    assert fused.kind.data == kernel.KernelKind.POINTWISE
    assert fused.schedule is None
    assert list(fused.inputs) == [module.ops.first.body.block.args[0]]
    assert fused.result_types == (T,)
    text = printed(module)
    assert "kernel.fused pointwise(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32> {" in text
    x = rand(rng, (4, 8))
    assert_close(molten.interpret(module, x, reference=True), np.exp(x), 1e-15)


@pytest.mark.parametrize(
    "body,types,message",
    [
        (
            lambda: exp_body(yield_cast_to=F16),
            [T],
            r"kernel.fused: kernel.yield gives \(tensor<4x8xf16>\) but the op "
            r"returns \(tensor<4x8xf32>\)",
        ),
        (
            lambda: exp_body(),
            [T, T],
            r"kernel.yield gives \(tensor<4x8xf32>\) but the op returns "
            r"\(tensor<4x8xf32>, tensor<4x8xf32>\)",
        ),
        (
            lambda: exp_body(),
            [],
            r"kernel.yield gives \(tensor<4x8xf32>\) but the op returns \(\)",
        ),
        (
            lambda: exp_body(arg_type=T16),
            [T16],
            "kernel.fused: block argument types must match the inputs",
        ),
        (
            lambda: exp_body(terminate=False),
            [T],
            # xDSL's own check of a single-block region comes first
            "kernel.fused: the body must end in kernel.yield|not a terminator",
        ),
    ],
    ids=["yield-type", "yield-fewer", "yield-more", "block-arg-type", "no-yield"],
)
def test_fused_op_verifier(body, types, message):
    def make(x):
        return [kernel.FusedOp(kernel.KernelKind.POINTWISE, [x], types, body())]

    module, _ = graph_with(make)
    fused = module.ops.first.body.block.first_op
    with pytest.raises(VerifyException, match=message):
        fused.verify()
    with pytest.raises(VerifyException):
        module.verify()


def test_fused_op_input_without_block_argument():
    def make(x):
        return [kernel.FusedOp(kernel.KernelKind.POINTWISE, [x, x], [T], exp_body())]

    module, _ = graph_with(make)
    with pytest.raises(VerifyException, match="block argument types must match"):
        module.verify()


def test_fused_op_is_isolated_from_above():
    def make(x):
        body = exp_body()
        outer = dialect.TanhOp.with_inferred_type([x])
        # the body reads %x directly instead of through a block argument
        inner = dialect.NegOp.with_inferred_type([x])
        body.block.insert_op_before(inner, body.block.first_op)
        return [outer, kernel.FusedOp(kernel.KernelKind.POINTWISE, [x], [T], body)]

    module, _ = graph_with(make)
    with pytest.raises(VerifyException, match="IsolatedFromAbove"):
        module.verify()


def test_yield_outside_a_kernel_is_rejected():
    block = Block(arg_types=[T])
    exp = dialect.ExpOp.with_inferred_type([block.args[0]])
    block.add_ops([exp, kernel.YieldOp(exp.results[0])])
    graph = func.FuncOp("graph", ([T], []), Region(block))
    module = ModuleOp([graph])
    with pytest.raises(VerifyException, match="kernel.fused|kernel.func"):
        module.verify()


def kernel_func(
    name="k",
    kind=kernel.KernelKind.POINTWISE,
    inputs=(T,),
    outputs=(T,),
    body=None,
    fused_ops=("exp",),
) -> kernel.FuncOp:
    return kernel.FuncOp(
        name,
        kind,
        FunctionType.from_lists(list(inputs), list(outputs)),
        body if body is not None else exp_body(),
        fused_ops,
    )


def test_kernel_func_from_python():
    k = kernel_func()
    k.verify()
    assert k.sym_name.data == "k"
    assert k.kind.data == kernel.KernelKind.POINTWISE
    assert k.fused_ops == ArrayAttr([StringAttr("exp")])
    assert k.schedule is None
    k.schedule = kernel.ScheduleAttr(F.POINTWISE, 256)
    k.verify()
    assert printed(k) == (
        "kernel.func @k(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>) pointwise "
        "schedule #kernel.schedule<pointwise, block = 256, vector = 1, "
        'elements_per_thread = 1> attributes {fused_ops = ["exp"]} {\n'
        "  %0 = molten.exp %a : tensor<4x8xf32>\n"
        "  kernel.yield %0 : tensor<4x8xf32>\n"
        "}"
    )
    # no fused_ops: no property, nothing printed
    assert kernel_func(fused_ops=()).fused_ops is None
    assert "attributes" not in printed(kernel_func(fused_ops=()))


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            {"inputs": (T16,)},
            "kernel.func @k: block argument types must match the function "
            "type's inputs",
        ),
        ({"inputs": (T, T)}, "block argument types must match"),
        (
            {"outputs": (T16,)},
            r"kernel.func: kernel.yield gives \(tensor<4x8xf32>\) but the op "
            r"returns \(tensor<4x8xf16>\)",
        ),
        ({"outputs": ()}, r"kernel.yield gives \(tensor<4x8xf32>\) but the op"),
        (
            {"body": exp_body(terminate=False)},
            "the body must end in kernel.yield|not a terminator",
        ),
    ],
    ids=["arg-type", "arg-count", "yield-type", "yield-count", "no-yield"],
)
def test_kernel_func_verifier(kwargs, message):
    with pytest.raises(VerifyException, match=message):
        kernel_func(**kwargs).verify()


def launch_module(
    launch_inputs=None,
    launch_outputs=(T,),
    callee="k",
    kernel_inputs=(T,),
) -> ModuleOp:
    k = kernel_func(inputs=kernel_inputs, body=exp_body(arg_type=kernel_inputs[0]))

    def make(x, y):
        chosen = {"x": x, "y": y}
        names = ["x"] if launch_inputs is None else launch_inputs
        ins = [chosen[n] for n in names]
        return [kernel.LaunchOp(callee, ins, list(launch_outputs))]

    module, graph = graph_with(make, input_types=(T, T16))
    module.body.block.insert_op_before(k, graph)
    return module


def test_launch_from_python(rng):
    module = launch_module()
    module.verify()
    launch = module.ops.last.body.block.first_op
    assert isinstance(launch, kernel.LaunchOp)
    assert launch.callee.string_value() == "k"
    assert "= kernel.launch @k(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>" in (
        printed(module)
    )
    x = rand(rng, (4, 8))
    y = rand(rng, (4, 8), "float16")
    assert_close(molten.interpret(module, x, y, reference=True), np.exp(x), 1e-15)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            {"callee": "nope"},
            "kernel.launch: @nope is not a kernel.func in this module",
        ),
        ({"callee": "graph"}, "@graph is not a kernel.func"),
        ({"launch_inputs": ["y"]}, "kernel.launch: the types do not match @k"),
        ({"launch_inputs": ["x", "x"]}, "the types do not match @k"),
        ({"launch_inputs": []}, "the types do not match @k"),
        ({"launch_outputs": (T16,)}, "the types do not match @k"),
        ({"launch_outputs": (T, T)}, "the types do not match @k"),
        ({"launch_outputs": ()}, "the types do not match @k"),
    ],
    ids=[
        "unknown-symbol",
        "not-a-kernel",
        "input-type",
        "input-count",
        "no-inputs",
        "output-type",
        "output-count",
        "no-outputs",
    ],
)
def test_launch_verifier(kwargs, message):
    module = launch_module(**kwargs)
    with pytest.raises(VerifyException, match=message):
        module.verify()


# --------------------------------------------------------------------------
# #kernel.schedule and #kernel.kind.
# --------------------------------------------------------------------------


def test_schedule_fields_and_defaults():
    s = kernel.ScheduleAttr(F.POINTWISE, 128)
    assert s.family.data == F.POINTWISE
    assert (s.block, s.rows_per_block, s.vector, s.elements_per_thread) == (
        IntAttr(128),
        IntAttr(1),
        IntAttr(1),
        IntAttr(1),
    )
    assert s.tile == ArrayAttr([])
    s = kernel.ScheduleAttr("row_reduce", 256, 2, 4, 8, split=3)
    assert str(s) == (
        "#kernel.schedule<row_reduce, block = 256, rows_per_block = 2, vector = 4, "
        "elements_per_thread = 8, split = 3>"
    )
    assert kernel.ScheduleAttr(F.ROW_REDUCE, 256, 2, 4, 8, split=3) == s
    assert kernel.ScheduleAttr(F.ROW_REDUCE, 256) != kernel.ScheduleAttr(F.SCAN, 256)
    assert s.warp == ArrayAttr([]) and s.stages == IntAttr(1)


def test_each_family_prints_only_its_fields():
    """A family's schedule prints its own fields (the memory-bound ones'
    always, the others' when not at their default) and nothing else."""
    gemm = kernel.ScheduleAttr(
        F.GEMM_MMA, 128, tile=(128, 128, 32), warp=(64, 64), stages=4
    )
    assert str(gemm) == (
        "#kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32], "
        "warp = [64, 64], stages = 4>"
    )
    simt = kernel.ScheduleAttr(F.GEMM_SIMT, 256, tile=(64, 64, 16))
    assert str(simt) == "#kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]>"
    assert str(kernel.ScheduleAttr(F.POINTWISE, 64)) == (
        "#kernel.schedule<pointwise, block = 64, vector = 1, elements_per_thread = 1>"
    )
    wgmma = kernel.ScheduleAttr(
        F.GEMM_WGMMA, 256, tile=(128, 256, 64), warp=(64, 256), stages=4
    )
    # wgmma's warpgroup (mma_warps = 4) is its family's, never printed.
    assert wgmma.mma_warps.data == kernel.WARPGROUP_WARPS
    assert "mma_warps" not in str(wgmma) and "split" not in str(wgmma)
    attention = kernel.ScheduleAttr(
        F.ATTENTION, 512, tile=(128, 64, 128), warp=(64, 128), stages=2, mma_warps=4
    )
    assert str(attention).endswith("stages = 2, mma_warps = 4>")


@pytest.mark.parametrize(
    "family,kwargs,message",
    [
        (
            F.GEMM_MMA,
            {"tile": (64, 64, 16), "warp": (32, 32), "stages": 0},
            "stages must be >= 1",
        ),
        (
            F.GEMM_MMA,
            {"tile": (64, 64, 16), "warp": (64,)},
            "warp = \\[64\\] must give two",
        ),
        (
            F.GEMM_MMA,
            {"tile": (64, 64, 16), "warp": (64, 32, 8)},
            "must give two sizes",
        ),
        (
            F.GEMM_MMA,
            {"tile": (64, 64, 16), "warp": (0, 32)},
            "warp sizes must be >= 1",
        ),
        (
            F.GEMM_MMA,
            {"tile": (64, 64), "warp": (32, 32)},
            "tile = \\[64, 64\\] must give three sizes \\(M, N, K\\)",
        ),
        (
            F.ATTENTION,
            {"tile": (64, 64), "warp": (16, 64)},
            "three sizes \\(query rows, keys, head dim\\)",
        ),
        (
            F.GEMM_MMA,
            {"tile": (64, 64, 16), "warp": (32, 32), "split": 2},
            "a gemm_mma schedule takes no split",
        ),
        (F.POINTWISE, {"tile": (64, 64, 16)}, "a pointwise schedule takes no tile"),
        (
            F.GEMM_SIMT,
            {"tile": (64, 64, 16), "vector": 4},
            "a gemm_simt schedule takes no vector",
        ),
        (
            F.GEMV,
            {"tile": (1, 64, 64), "warp": (32, 32)},
            "a gemv schedule takes no warp",
        ),
        (F.GEMM_TMA, {"tile": (128, 256, 64), "warp": (64, 256)}, "persistent = 0"),
        (
            F.GEMM_TMA,
            {"tile": (128, 256, 64), "warp": (64, 256), "persistent": 3, "cluster": 2},
            "whole clusters",
        ),
    ],
)
def test_schedule_verifies_per_family(family, kwargs, message):
    with pytest.raises(VerifyException, match=message):
        kernel.ScheduleAttr(family, 128, **kwargs)


@pytest.mark.parametrize(
    "args,field",
    [
        ((F.POINTWISE, 0), "block"),
        ((F.POINTWISE, -32), "block"),
        ((F.ROW_REDUCE, 32, 0), "rows_per_block"),
        ((F.POINTWISE, 32, 1, 0), "vector"),
        ((F.SCAN, 32, 1, 1, 0), "elements_per_thread"),
        ((F.SCAN, 32, 1, 1, -1), "elements_per_thread"),
    ],
)
def test_schedule_fields_below_one(args, field):
    with pytest.raises(
        VerifyException, match=f"#kernel.schedule<{args[0]}>: {field} must be >= 1"
    ):
        kernel.ScheduleAttr(*args)


@pytest.mark.parametrize("tile", [(0, 1, 1), (64, 64, 0), (-16, 64, 16)])
def test_schedule_tile_below_one(tile):
    with pytest.raises(VerifyException, match="tile sizes must be >= 1"):
        kernel.ScheduleAttr(F.GEMM_SIMT, 256, tile=tile)


def schedule_text(schedule: str) -> str:
    return f"""
    func.func @f() attributes {{s = #kernel.schedule<{schedule}>}} {{
      func.return
    }}
    """


def parsed_schedule(schedule: str) -> kernel.ScheduleAttr:
    module = parse_module(schedule_text(schedule))
    return module.ops.first.attributes["s"]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("pointwise, block = 64", kernel.ScheduleAttr(F.POINTWISE, 64)),
        (
            "pointwise, vector = 4, block = 64",
            kernel.ScheduleAttr(F.POINTWISE, 64, vector=4),
        ),
        (
            "row_reduce, split = 2, elements_per_thread = 2, block = 256, "
            "rows_per_block = 4",
            kernel.ScheduleAttr(F.ROW_REDUCE, 256, 4, 1, 2, split=2),
        ),
        (
            "gemm_mma, stages = 3, warp = [32, 64], tile = [64, 128, 32], block = 128",
            kernel.ScheduleAttr(
                F.GEMM_MMA, 128, tile=(64, 128, 32), warp=(32, 64), stages=3
            ),
        ),
        (
            "gemv, k_lanes = 64, tile = [2, 16, 4096], vector = 8, block = 256",
            kernel.ScheduleAttr(F.GEMV, 256, vector=8, tile=(2, 16, 4096), k_lanes=64),
        ),
        (
            "gemm_tma, block = 384, tile = [128, 256, 64], warp = [64, 256], "
            "persistent = 132, cluster = 2",
            kernel.ScheduleAttr(
                F.GEMM_TMA,
                384,
                tile=(128, 256, 64),
                warp=(64, 256),
                persistent=132,
                cluster=2,
            ),
        ),
    ],
)
def test_schedule_parses(text, expected):
    s = parsed_schedule(text)
    assert s == expected
    assert parsed_schedule(str(s).removeprefix("#kernel.schedule<")[:-1]) == s


@pytest.mark.parametrize(
    "text,message",
    [
        ("pointwise, vector = 4", "a schedule needs 'block'"),
        ("block = 32", "a schedule starts with its family, not 'block'"),
        ("gemm, block = 32", "a schedule starts with its family, not 'gemm'"),
        ("pointwise, block = 32, threads = 4", "unknown schedule field 'threads'"),
        ("pointwise, block = 32, tile = [16, 16, 16]", "takes no 'tile'"),
        ("gemm_wgmma, block = 128, mma_warps = 4", "takes no 'mma_warps'"),
        ("pointwise, block = 0", "block must be >= 1"),
        ("gemm_simt, block = 32, tile = [16, 0, 16]", "tile sizes must be >= 1"),
        ("pointwise, block = -1", "Expected integer literal"),
        ("pointwise, block = 2.5", "Expected"),
    ],
)
def test_schedule_parse_errors(text, message):
    with pytest.raises(ParseError, match=message):
        parse_module(schedule_text(text))


@pytest.mark.parametrize(
    "text",
    [
        "block = 256, block = 128",
        "block = 256, tile = [64], tile = [128]",
        "block = 256, stages = 2, stages = 2",
    ],
)
def test_schedule_field_written_twice_is_an_error(text):
    with pytest.raises(ParseError):
        parse_module(schedule_text(text))


def test_kernel_kind_attr():
    assert [k.value for k in kernel.KernelKind] == [
        "pointwise",
        "row_reduce",
        "scan",
        "scatter",
        "gemm",
        "attention",
    ]
    for kind in kernel.KernelKind:
        attr = kernel.KernelKindAttr(kind)
        assert attr.data == kind
        text = f"func.func @f() attributes {{k = {attr}}} {{\n  func.return\n}}"
        module = parse_module(text)
        assert module.ops.first.attributes["k"] == attr


def test_kernel_kind_attr_documented_spelling():
    module = parse_module(
        "func.func @f() attributes {k = #kernel<kind row_reduce>} {\n  func.return\n}"
    )
    assert module.ops.first.attributes["k"] == kernel.KernelKindAttr(
        kernel.KernelKind.ROW_REDUCE
    )


# --------------------------------------------------------------------------
# Custom and generic forms read back.
# --------------------------------------------------------------------------

KERNEL_MODULE = """
kernel.func @rms(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) row_reduce schedule #kernel.schedule<row_reduce, block = 32, rows_per_block = 1, vector = 1, elements_per_thread = 1> attributes {fused_ops = ["square", "reduce_mean", "add", "rsqrt", "mul", "mul"]} {
  %eps = molten.constant dense<1.000000e-06> : tensor<f32>
  %sq = molten.square %x : tensor<4x8xf32>
  %ms = molten.reduce_mean %sq axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
  %a = molten.add %ms, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %r = molten.rsqrt %a : tensor<4x1xf32>
  %n = molten.mul %x, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = molten.mul %n, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  kernel.yield %y, %ms : tensor<4x8xf32>, tensor<4x1xf32>
}
kernel.func @scale(%y: tensor<4x8xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>) pointwise {
  %z = molten.mul %y, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  kernel.yield %z : tensor<4x8xf32>
}
kernel.func @mm(%a: tensor<2x4x8xf32>, %b: tensor<3x8xf32>, %c: tensor<3xf32>) -> (tensor<2x4x3xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 256, tile = [64, 64, 16]> attributes {fused_ops = ["matmul", "add", "gelu"], note = "hand-written"} {
  %m = molten.matmul %a, %b transpose_b : (tensor<2x4x8xf32>, tensor<3x8xf32>) -> tensor<2x4x3xf32>
  %p = molten.add %m, %c : (tensor<2x4x3xf32>, tensor<3xf32>) -> tensor<2x4x3xf32>
  %g = molten.gelu %p approximate = "tanh" : tensor<2x4x3xf32>
  kernel.yield %g : tensor<2x4x3xf32>
}
func.func @graph(%x: tensor<4x8xf32>, %w: tensor<8xf32>, %s: tensor<f32>, %a: tensor<2x4x8xf32>, %b: tensor<3x8xf32>, %c: tensor<3xf32>) -> (tensor<4x8xf32> {molten.name = "out"}, tensor<4x1xf32>, tensor<2x4x3xf32>) {
  %y, %ms = kernel.launch @rms(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>)
  %z = kernel.launch @scale(%y, %s) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %z2 = kernel.launch @scale(%z, %s) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %out = kernel.fused pointwise schedule <pointwise, block = 128> (%z2, %ms) : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32> {
  ^bb0(%u: tensor<4x8xf32>, %v: tensor<4x1xf32>):
    %e = molten.exp %v : tensor<4x1xf32>
    %o = molten.sub %u, %e : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    kernel.yield %o : tensor<4x8xf32>
  }
  %g = kernel.launch @mm(%a, %b, %c) : (tensor<2x4x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<2x4x3xf32>
  func.return %out, %ms, %g : tensor<4x8xf32>, tensor<4x1xf32>, tensor<2x4x3xf32>
}
"""

ATTENTION_OPS = """
    %q32 = molten.cast %q : tensor<8x64xf16> to tensor<8x64xf32>
    %k32 = molten.cast %k : tensor<16x64xf16> to tensor<16x64xf32>
    %v32 = molten.cast %v : tensor<16x32xf16> to tensor<16x32xf32>
    %s = molten.matmul %q32, %k32 transpose_b : (tensor<8x64xf32>, tensor<16x64xf32>) -> tensor<8x16xf32>
    %e = molten.exp %s : tensor<8x16xf32>
    %l = molten.reduce_sum %e axes = [1] keepdim : tensor<8x16xf32> -> tensor<8x1xf32>
    %p = molten.div %e, %l : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    %r = molten.matmul %p, %v32 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %r16 = molten.cast %r : tensor<8x32xf32> to tensor<8x32xf16>
    kernel.yield %r16 : tensor<8x32xf16>
"""
QKV = "tensor<8x64xf16>, tensor<16x64xf16>, tensor<16x32xf16>"
MATCH = "matched #kernel.attention_match<query = 0, key = 1, value = 2, group = 1>"


SMALL_FORMS = {
    "no-outputs": """
kernel.func @k(%x: tensor<4xf32>) -> () pointwise {
  kernel.yield
}
func.func @f(%x: tensor<4xf32>) {
  kernel.launch @k(%x) : (tensor<4xf32>) -> ()
  func.return
}
""",
    "no-inputs": """
kernel.func @c() -> (tensor<2xf16>) pointwise attributes {fused_ops = []} {
  %c = molten.constant dense<[1.0, 2.0]> : tensor<2xf16>
  kernel.yield %c : tensor<2xf16>
}
func.func @f() -> tensor<2xf16> {
  %0 = kernel.fused pointwise () : () -> tensor<2xf16> {
    %c = molten.constant dense<[1.0, 2.0]> : tensor<2xf16>
    kernel.yield %c : tensor<2xf16>
  }
  %1 = kernel.launch @c() : () -> tensor<2xf16>
  %2 = molten.add %0, %1 : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  func.return %2 : tensor<2xf16>
}
""",
    # Attention kernels carry what fuse-attention matched and a real
    # attention body: the verifier holds them to both.
    "every-kind": f"""
kernel.func @a(%q: tensor<8x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x32xf16>) -> (tensor<8x32xf16>) attention {MATCH} {{
{ATTENTION_OPS}}}
kernel.func @b(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>) gemm schedule #kernel.schedule<gemm_simt, block = 1, tile = [1, 1, 1]> {{
  %m = molten.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  kernel.yield %m : tensor<4x4xf32>
}}
func.func @f(%x: tensor<4xf32>, %xq: tensor<8x64xf16>, %xk: tensor<16x64xf16>, %xv: tensor<16x32xf16>) -> (tensor<1xf32>, tensor<8x32xf16>) {{
  %0 = kernel.fused row_reduce (%x) : (tensor<4xf32>) -> tensor<1xf32> {{
  ^bb0(%y: tensor<4xf32>):
    %s = molten.reduce_sum %y axes = [0] keepdim : tensor<4xf32> -> tensor<1xf32>
    kernel.yield %s : tensor<1xf32>
  }}
  %1 = kernel.fused attention {MATCH} (%xq, %xk, %xv) : ({QKV}) -> tensor<8x32xf16> {{
  ^bb0(%q: tensor<8x64xf16>, %k: tensor<16x64xf16>, %v: tensor<16x32xf16>):
{ATTENTION_OPS}  }}
  func.return %0, %1 : tensor<1xf32>, tensor<8x32xf16>
}}
""",
}

FORMS = {"kernel-module": KERNEL_MODULE, **SMALL_FORMS}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_custom_form_round_trip(name):
    module = parse_module(FORMS[name])
    text = printed(module)
    again = parse_module(text)
    assert printed(again) == text
    assert again.is_structurally_equivalent(module)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_generic_form_round_trip(name):
    module = parse_module(FORMS[name])
    generic = printed(module, generic=True)
    assert '"kernel.' in generic
    again = parse_module(generic)
    assert again.is_structurally_equivalent(module)
    assert printed(again) == printed(module)


def test_printed_kernel_module_keeps_what_was_written():
    module = parse_module(KERNEL_MODULE)
    rms, scale, mm, graph = module.ops
    assert isinstance(rms, kernel.FuncOp) and isinstance(graph, func.FuncOp)
    assert rms.kind.data == kernel.KernelKind.ROW_REDUCE
    assert rms.schedule == kernel.ScheduleAttr(F.ROW_REDUCE, 32)
    assert [s.data for s in rms.fused_ops.data][:2] == ["square", "reduce_mean"]
    assert [a.name_hint for a in rms.body.block.args] == ["x", "w"]
    assert scale.schedule is None and scale.fused_ops is None
    assert mm.attributes["note"] == StringAttr("hand-written")
    assert "fused_ops" not in mm.attributes  # a property, not an attribute
    assert mm.schedule.tile == ArrayAttr([IntAttr(64), IntAttr(64), IntAttr(16)])
    text = printed(module)
    assert "kernel.fused pointwise schedule <pointwise, block = 128, vector = 1" in text
    assert (
        "%y, %ms = kernel.launch @rms(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) "
        "-> (tensor<4x8xf32>, tensor<4x1xf32>)" in text
    )
    assert 'note = "hand-written"' in text
    assert 'fused_ops = ["matmul", "add", "gelu"]' in text


def test_python_built_module_prints_and_parses_back():
    k = kernel_func(fused_ops=("exp",))
    k.schedule = kernel.ScheduleAttr(F.POINTWISE, 64, vector=2)
    k.attributes["note"] = StringAttr("x")

    def make(x):
        launch = kernel.LaunchOp("k", [x], [T])
        fused = kernel.FusedOp(
            kernel.KernelKind.POINTWISE, [launch.results[0]], [T], exp_body()
        )
        fused.schedule = kernel.ScheduleAttr(F.POINTWISE, 32)
        return [launch, fused]

    module, graph = graph_with(make)
    module.body.block.insert_op_before(k, graph)
    module.verify()
    again = parse_module(printed(module))
    assert again.is_structurally_equivalent(module)
    assert printed(again) == printed(module)


@pytest.mark.parametrize(
    "text,message",
    [
        (
            "kernel.func @k(%x: tensor<4xf32>) -> (tensor<4xf32>) fused {\n"
            "  kernel.yield %x : tensor<4xf32>\n}",
            "Expected `pointwise`, `row_reduce`, `scan`, `scatter`, `gemm`, or `attention`",
        ),
        (
            "kernel.func @k(%x: tensor<4xf32>) -> (tensor<4xf32>) pointwise "
            "schedule #kernel.schedule<pointwise, vector = 2> {\n"
            "  kernel.yield %x : tensor<4xf32>\n}",
            "a schedule needs 'block'",
        ),
    ],
)
def test_kernel_func_parse_errors(text, message):
    with pytest.raises(ParseError, match=message):
        parse_module(text)


@pytest.mark.parametrize(
    "text,message",
    [
        (
            "kernel.func @k(%x: tensor<4xf32>) -> (tensor<4xf16>) pointwise {\n"
            "  kernel.yield %x : tensor<4xf32>\n}",
            r"kernel.yield gives \(tensor<4xf32>\) but the op returns \(tensor<4xf16>\)",
        ),
        (
            "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = kernel.launch @nope(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  func.return %0 : tensor<4xf32>\n}",
            "@nope is not a kernel.func in this module",
        ),
        (
            "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = kernel.fused pointwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {\n"
            "  ^bb0(%y: tensor<4xf16>):\n"
            "    %z = molten.cast %y : tensor<4xf16> to tensor<4xf32>\n"
            "    kernel.yield %z : tensor<4xf32>\n  }\n"
            "  func.return %0 : tensor<4xf32>\n}",
            "block argument types must match the inputs",
        ),
    ],
    ids=["func-yield", "launch-unknown", "fused-block-arg"],
)
def test_parse_module_reports_kernel_verifier_errors(text, message):
    # parse_module verifies, locating the error in the text
    with pytest.raises((GraphError, VerifyException), match=message) as info:
        parse_module(text)
    assert "<string>:" in str(info.value)


# --------------------------------------------------------------------------
# Interpreting hand-written kernel-level modules.
# --------------------------------------------------------------------------


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def kernel_module_formula(x, w, s, a, b, c):
    ms = np.mean(x * x, axis=-1, keepdims=True)
    y = x / np.sqrt(ms + 1e-6) * w
    out = y * s * s - np.exp(ms)
    g = gelu_tanh(a @ b.T + c)
    return out, ms, g


def kernel_module_inputs(rng):
    return [
        rand(rng, (4, 8)),
        rand(rng, (8,), low=0.5, high=1.5),
        rand(rng, ()),
        rand(rng, (2, 4, 8)),
        rand(rng, (3, 8)),
        rand(rng, (3,)),
    ]


def test_interpret_kernel_module_reference(rng):
    inputs = kernel_module_inputs(rng)
    got = molten.interpret(KERNEL_MODULE, *inputs, reference=True)
    want = kernel_module_formula(*inputs)
    assert len(got) == 3
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == np.float64
        assert_close(g, w, REFERENCE_TOL)


def test_interpret_kernel_module_native(rng):
    inputs = kernel_module_inputs(rng)
    got = molten.interpret(parse_module(KERNEL_MODULE), *inputs)
    want = kernel_module_formula(*inputs)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.float32
        assert_close(g, w, NATIVE_TOL["float32"])


def test_interpret_picks_the_graph_among_kernels(rng):
    # the module holds three kernel.funcs and one func.func: the graph runs
    module = parse_module(KERNEL_MODULE)
    inputs = kernel_module_inputs(rng)
    by_entry = molten.interpret(module, *inputs, reference=True, entry="graph")
    plain = molten.interpret(module, *inputs, reference=True)
    for a, b in zip(by_entry, plain, strict=True):
        np.testing.assert_array_equal(a, b)


F16_MODULE = """
kernel.func @softmax(%x: tensor<3x5xf16>) -> (tensor<3x5xf16>) row_reduce schedule #kernel.schedule<row_reduce, block = 32> {
  %xf = molten.cast %x : tensor<3x5xf16> to tensor<3x5xf32>
  %m = molten.reduce_max %xf axes = [1] keepdim : tensor<3x5xf32> -> tensor<3x1xf32>
  %d = molten.sub %xf, %m : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  %e = molten.exp %d : tensor<3x5xf32>
  %s = molten.reduce_sum %e axes = [1] keepdim : tensor<3x5xf32> -> tensor<3x1xf32>
  %p = molten.div %e, %s : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  %ph = molten.cast %p : tensor<3x5xf32> to tensor<3x5xf16>
  kernel.yield %ph : tensor<3x5xf16>
}
func.func @graph(%x: tensor<3x5xf16>) -> tensor<3x5xf16> {
  %p = kernel.launch @softmax(%x) : (tensor<3x5xf16>) -> tensor<3x5xf16>
  func.return %p : tensor<3x5xf16>
}
"""


def test_interpret_f16_kernel(rng):
    x = rand(rng, (3, 5), "float16")
    got = molten.interpret(F16_MODULE, x)
    e = np.exp(x - x.max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True)
    assert got.dtype == np.float16
    assert_close(got, want, NATIVE_TOL["float16"])
    # the result is the f16 rounding of the f32 softmax
    np.testing.assert_array_equal(got, want.astype(np.float32).astype(np.float16))
    assert_close(molten.interpret(F16_MODULE, x, reference=True), want, REFERENCE_TOL)


def test_interpret_kernel_without_inputs_or_outputs():
    module = parse_module(SMALL_FORMS["no-inputs"])
    got = molten.interpret(module)
    np.testing.assert_array_equal(got, np.array([2.0, 4.0], dtype=np.float16))
    module = parse_module(SMALL_FORMS["no-outputs"])
    assert molten.interpret(module, np.ones(4)) == ()


def test_interpret_matches_before_and_after_outlining(rng):
    """The same group as a kernel.fused and as a kernel.func + launch."""
    fused = parse_module(
        """
    func.func @g(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
      %0 = kernel.fused pointwise (%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
      ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
        %m = molten.mul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
        %s = molten.silu %m : tensor<4x8xf32>
        kernel.yield %s : tensor<4x8xf32>
      }
      func.return %0 : tensor<4x8xf32>
    }
    """
    )
    from molten.pipeline import run_pipeline

    outlined = run_pipeline(parse_module(printed(fused)), "kernel-outline")
    assert [op.name for op in outlined.ops] == ["kernel.func", "func.func"]
    x, w = rand(rng, (4, 8)), rand(rng, (8,))
    want = x * w / (1 + np.exp(-x * w))
    for module in (fused, outlined):
        assert_close(molten.interpret(module, x, w, reference=True), want, 1e-15)
        np.testing.assert_array_equal(
            molten.interpret(module, x, w), molten.interpret(fused, x, w)
        )
