"""Integer and bool tensors in CUDA kernels, without a GPU: every case of
tests/integer_cases.py (each op at each element type it takes, every cast,
the mask and position-id chains) compiles to a pointwise kernel whose C++
has the element's own type, and the kernels compile with nvcc for sm_80 and
sm_90, warnings as errors. tests/test_integer_kernels_gpu.py runs them."""

import re
import shutil

import pytest
from integer_cases import CASES, STORAGE
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
        for name, case in CASES.items()
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


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_interprets_to_its_result_type(name, rng):
    """What the GPU test compares with: the interpreter runs every case."""
    case = CASES[name]
    got = molten.interpret(DataflowGraph.from_mlir(case.text), *case.inputs(rng))
    assert got.dtype == STORAGE[case.result]


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
