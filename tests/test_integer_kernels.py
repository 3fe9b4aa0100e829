"""Integer and bool tensors in CUDA kernels, without a GPU: every case of
tests/integer_cases.py (each op at each element type it takes, every cast,
the mask and position-id chains) compiles to a pointwise kernel whose C++
has the element's own type, each reduction case (argmax and argmin, integer
sums and maxima) to one row_reduce kernel, and the kernels compile with
nvcc for sm_80 and sm_90, warnings as errors.
tests/test_integer_kernels_gpu.py runs them."""

import re
import shutil

import numpy as np
import pytest
from integer_cases import CASES, REDUCTIONS, STORAGE
from test_codegen import compile_unit, split_includes

import molten
from molten import ZeroCompiler
from molten.ir import DataflowGraph

NVCC = shutil.which("nvcc")


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    compiler = ZeroCompiler()
    return {
        name: compiler.compile(DataflowGraph.from_mlir(case.text)).source
        for name, case in {**CASES, **REDUCTIONS}.items()
    }


C_TYPES = {
    "i64": "int64_t",
    "i32": "int",
    "i8": "int8_t",
    "ui8": "uint8_t",
    "i1": "bool",
    "f32": "float",
    "f16": "__half",
    "bf16": "__nv_bfloat16",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_is_one_kernel_on_its_own_types(name, sources):
    """One kernel (a pointwise one, or a scan with the elementwise work
    around it), and its variant of scalar accesses where it has vector
    ones; the output pointer of the result's own C++ type."""
    source = sources[name]
    kernel = r"__global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\("
    kernels = [k for k in re.findall(kernel, source) if "_scalar" not in k]
    assert len(kernels) == 1 and re.match(rf"{name}_(pointwise|scan)0", kernels[0])
    result = C_TYPES[CASES[name].result]
    assert re.search(rf"\b{re.escape(result)}\* __restrict__ (r|out0)\b", source), (
        f"the output is not a {result}*"
    )


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_each_reduction_is_one_row_reduce_kernel(name, sources):
    """Positions and integer totals reduce in one kernel, without keepdim
    too (the row values stored as the result's), max and argmax of a row
    together; the result pointer of its own C++ type."""
    source = sources[name]
    kernel = r"__global__ void (?:__launch_bounds__\([\d, ]+\) )?(\w+)\("
    kernels = [k for k in re.findall(kernel, source) if "_scalar" not in k]
    assert kernels == [f"{name}_row_reduce0"], kernels
    result = C_TYPES[REDUCTIONS[name].result]
    output = rf"(?<!const )\b{re.escape(result)}\* __restrict__ \w+[,)]"
    assert re.search(output, source), f"no {result}* output"


@pytest.mark.parametrize("name", sorted({**CASES, **REDUCTIONS}))
def test_each_case_interprets_to_its_result_type(name, rng):
    """What the GPU test compares with: the interpreter runs every case."""
    case = {**CASES, **REDUCTIONS}[name]
    got = molten.interpret(DataflowGraph.from_mlir(case.text), *case.inputs(rng))
    got = got if isinstance(got, tuple) else (got,)
    assert got[0].dtype == STORAGE[case.result]


def test_signed_arithmetic_wraps_through_unsigned(sources):
    """Signed overflow is undefined in C++: an int or int64_t sum is
    computed on the unsigned type (wrapping as torch's does)."""
    assert (
        "(int64_t)((unsigned long long)a0_1 + (unsigned long long)a1_1)"
        in (sources["add_i64_i64_3x17"])
    )
    assert "(int)((unsigned)a0_1 * (unsigned)a1_1)" in sources["mul_i32_i32_3x17"]


def test_an_integer_division_never_divides_by_zero(sources):
    """A 0 divisor is replaced before the division, the result chosen after."""
    source = sources["floor_divide_i32_i32_3x17"]
    assert re.search(r"const bool (\w+) = a1_1 == 0;", source)
    assert "molten_floor_div(a0_1, " in source


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
def test_the_kernels_compile_with_nvcc(sources, tmp_path):
    """All cases as one translation unit (their #include block once, each
    case's code in a namespace), device code for sm_80 and sm_90."""
    heads, bodies = zip(*map(split_includes, sources.values()), strict=True)
    assert len(set(heads)) == 1
    unit = heads[0] + "".join(
        f"namespace molten_unit{i} {{\n{body}}}\n" for i, body in enumerate(bodies)
    )
    compile_unit(unit, tmp_path, ptxas="-v,-Werror", device_only=True)


def test_a_position_is_one_key_maximum(sources):
    """An argmax accumulates int64 keys (the element's order above its
    column's complement): one signed max per step, shuffled as any
    reduction; a float's order from its bits, -0 as 0, a NaN greatest."""
    source = sources["argmax_f32_4x5000_1_keepdim".replace("f32", "bf16")]
    assert "__float_as_int(" in source
    assert "__shfl_xor_sync(0xffffffffu, " in source
    assert re.search(r"const bool \w+ = \w+ != \w+;", source), "no NaN test"


def test_positions_of_int64_are_refused_by_name():
    """An int64 element's order does not fit the key's 32 bits: a clear
    error, never a wrong position; the interpreter finds it."""
    text = """
func.func @p(%x: tensor<3x5xi64>) -> tensor<3xi64> {
  %r = molten.argmax %x axes = [1] : tensor<3x5xi64> -> tensor<3xi64>
  func.return %r : tensor<3xi64>
}
"""
    g = DataflowGraph.from_mlir(text)
    with pytest.raises(molten.MoltenError, match=r"molten.argmax of tensor<3x5xi64>"):
        ZeroCompiler().compile(g)
    x = np.array([[1, 5, 5, 0, 2]] * 3, np.int64)
    np.testing.assert_array_equal(molten.interpret(g, x), [1, 1, 1])


def test_argmax_semantics_follow_torch():
    """The interpreter's positions (what the kernels are checked against)
    are torch's: the first of equal ones, the first NaN, -0 equal to 0."""
    torch = pytest.importorskip("torch")
    g = DataflowGraph("positions")
    x = g.add_input("x", [4, 6])
    g.add_output(g.argmax(x, 1))
    g.add_output(g.argmin(x, 1))
    nan = np.nan
    rows = np.array(
        [
            [1, 3, 3, 0, 3, -1],
            [1, nan, 7, nan, -9, 2],
            [-0.0, 0.0, -0.0, 0.0, -1, -1],
            [-np.inf, -np.inf, np.inf, np.inf, 0, 0],
        ],
        np.float32,
    )
    top, bottom = molten.interpret(g, rows)
    t = torch.from_numpy(rows)
    np.testing.assert_array_equal(top, t.argmax(1).numpy())
    np.testing.assert_array_equal(bottom, t.argmin(1).numpy())


def _position_masked_attention(dtype: str = "bfloat16") -> DataflowGraph:
    g = DataflowGraph("masked_attention")
    q, k, v = (g.add_input(n, [2, 4, 96, 64], dtype) for n in "qkv")
    padding = g.add_input("attention_mask", [2, 96], "int64")
    causal = g.le(g.iota([96, 96], 1), g.iota([96, 96], 0))
    kept = g.logical_and(
        g.reshape(causal, [1, 1, 96, 96]), g.reshape(g.ne(padding, 0), [2, 1, 1, 96])
    )
    zero, least = g.constant(0.0, dtype=dtype), g.constant(-3.0e38, dtype=dtype)
    mask = g.where(kept, zero, least)
    scores = g.mul(g.matmul(q, k, transpose_b=True), 0.125)
    g.add_output(g.matmul(g.softmax(g.add(scores, mask), -1), v))
    return g


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_a_mask_from_positions_is_computed_inside_attention(arch, tmp_path):
    """transformers' causal and padding mask (iota comparisons, an int64
    attention_mask, logical_and, where) is no kernel of its own: the one
    attention kernel evaluates it per score, reading the int64 ids; its
    C++ compiles with nvcc (tests/test_attention_gpu.py runs it)."""
    compiled = ZeroCompiler(arch=arch).compile(_position_masked_attention())
    assert [k.name for k in compiled] == ["masked_attention_attention0"]
    source = compiled.source
    assert "const int64_t* __restrict__ attention_mask" in source
    if NVCC is not None:
        compile_unit(source, tmp_path, strict=False, archs=(arch,), device_only=True)
