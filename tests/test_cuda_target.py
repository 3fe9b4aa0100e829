"""The `-t cuda` target end to end: identifiers that reach C++, float literals,
the launcher's error handling, and the `molten compile` command line.

Names come from the user (graph, input, output and value names); whatever
they hold, the `.cu` and `.h` must hold no text of theirs outside an
identifier, every identifier must be a valid, non-reserved C++ identifier,
unique in its scope, and the result must compile. The nvcc compiles (one
arch, warnings as errors) run once per session, in parallel; they are
skipped where nvcc is absent.
"""

from __future__ import annotations

import math
import re
import shutil
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp

from molten import ZeroCompiler
from molten.context import parse_module
from molten.ir import DataflowGraph
from molten.pipeline import DEFAULT_PIPELINE, KERNEL_LEVEL_PIPELINE, run_pipeline
from molten.targets.cuda import OP_PRINTERS, float_literal, print_cuda, printer_for

# One worker runs the module: its tests share the session fixture `units`
# (a dozen graphs compiled and built by nvcc), made once per worker.
pytestmark = pytest.mark.xdist_group("cuda_target")
NVCC = shutil.which("nvcc")
ARCH = "sm_90"
REPO = Path(__file__).resolve().parent.parent
SEED_SPEC = REPO / "examples" / "fused_rmsnorm.mlir"

# --------------------------------------------------------------------------
# C++ identifier rules, written out here (not taken from molten).
# --------------------------------------------------------------------------

CPP_KEYWORDS = frozenset(
    [
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "requires",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
    ]
)
# Names the CUDA front end predefines in every kernel.
CUDA_BUILTINS = frozenset(["threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"])
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ID = r"[A-Za-z_][A-Za-z0-9_]*"
_TYPE = r"(?:float|int64_t|bool|__half|__nv_bfloat16)"

# What the printer writes for a declaration, a parameter and a function.
_LOCAL = re.compile(rf"^\s*(?:const\s+)?{_TYPE}\*?\s+({_ID})\s*=")
_SHARED = re.compile(rf"^\s*__shared__\s+(?:__align__\(\d+\)\s+)?{_TYPE}\s+({_ID})\[")
_LOOP = re.compile(rf"^\s*for \(int64_t ({_ID}) =")
_KERNEL = re.compile(
    r'^extern "C" __global__ void __launch_bounds__\(\d+(?:, \d+)?\) '
    rf"({_ID})\((.*)\) \{{$"
)
_LAUNCHER = re.compile(rf'^extern "C" cudaError_t ({_ID})\((.*)\) \{{$')


def _param_names(params: str) -> list[str]:
    return [re.findall(_ID, p)[-1] for p in params.split(",")]


def functions(source: str) -> list[dict]:
    """Every kernel and launcher of a .cu: name, kind, parameters, locals."""
    found: list[dict] = []
    current: dict | None = None
    for line in source.splitlines():
        if m := _KERNEL.match(line) or _LAUNCHER.match(line):
            kind = "kernel" if "__global__" in line else "launcher"
            current = {
                "name": m[1],
                "kind": kind,
                "params": _param_names(m[2]),
                "locals": [],
                "body": [],
            }
            found.append(current)
        elif current is not None:
            if line == "}":
                current = None
                continue
            current["body"].append(line)
            for pattern in (_LOCAL, _SHARED, _LOOP):
                if m := pattern.match(line):
                    current["locals"].append(m[1])
    return found


def check_identifiers(source: str) -> list[dict]:
    """Valid, not a keyword, not reserved as c_identifier promises (no leading
    `__` or `_` + capital), unique per function and among functions."""
    fns = functions(source)
    assert fns, source
    names = [f["name"] for f in fns]
    assert len(set(names)) == len(names), names
    for f in fns:
        params = f["params"]
        if f["kind"] == "launcher":
            assert params[-1] == "stream", params
            params = params[:-1]
        declared = params + f["locals"]
        assert len(set(declared)) == len(declared), (f["name"], declared)
        for name in [f["name"], *declared]:
            assert IDENTIFIER.match(name), name
            assert name not in CPP_KEYWORDS, name
            assert name not in CUDA_BUILTINS, name
            assert not re.match(r"^_[A-Z_]", name), name
            assert name not in ("err", "stream") or f["kind"] == "kernel", name
    return fns


def check_no_injected_text(text: str) -> None:
    """No character of a hostile name survives outside an identifier: the only
    double quotes are `extern "C"` and the saved file's #include."""
    assert text.isascii()
    assert "system(" not in text and "rm -rf" not in text
    for line in text.splitlines():
        if '"' in line:
            assert re.match(r'^(extern "C"|#include "[A-Za-z0-9_]+\.h"$)', line), line


# --------------------------------------------------------------------------
# Graphs with hostile names.
# --------------------------------------------------------------------------

INJECTION = 'x"; system("rm -rf /"); //'
HOSTILE_INPUTS = [
    INJECTION,
    "int",
    "int_",  # "int" is sanitized to "int_": the two must stay distinct
    "__reserved",
    "_Capital",
    "Capital",  # "_Capital" sanitizes to "Capital" too
    "9lives",
    "molten_fmax",
    "ñandú",
    "变量",
    "stream",
    "err",
    "threadIdx",
    "NULL",
]
HOSTILE_VALUES = [
    "molten_imin",
    "dim3",
    "i",
    "v",
    "acc",
    "_Z3foo",
    "return",
    "cond",
    "x_offset",
    "row",
    "col",
    "a_tile",
    "nullptr",
]


def hostile_graph(name: str) -> DataflowGraph:
    """A row_reduce kernel (a pointwise chain over every hostile input into a
    softmax) writing a temporary that a gemm reads: two kernels, a
    cudaMallocAsync, hostile names everywhere."""
    g = DataflowGraph(name)
    xs = [g.add_input(n, [4, 33], "float16") for n in HOSTILE_INPUTS]
    acc = xs[0]
    for i, (x, value_name) in enumerate(zip(xs[1:], HOSTILE_VALUES, strict=False)):
        op = g.add if i % 2 else g.mul
        acc = op(acc, x, name=value_name)
    g.add_output(acc, "blockIdx")
    probs = g.softmax(acc, name="__probs")
    w = g.add_input("min", [33, 8], "float16")
    g.add_output(g.matmul(probs, w, name="max"), INJECTION + " out")
    return g


def builtin_named_graph(name: str) -> DataflowGraph:
    g = DataflowGraph(name)
    x = g.add_input("x", [70], "float32")
    g.add_output(g.exp(x, name=name) * 2.0, name)
    return g


SHADOWING_NAMES = ["expf", "sqrtf", "cudaSuccess", "cudaGetLastError", "cudaError_t"]
MACRO_NAMES = ["linux", "unix", "EOF", "M_PI", "INT_MAX", "RAND_MAX"]


def shadowing_graph() -> DataflowGraph:
    """Inputs and values named after what the generated code calls or names:
    math functions, CUDA runtime names, the graph's own kernel."""
    g = DataflowGraph("g")
    xs = [g.add_input(n, [4, 8], "float32") for n in SHADOWING_NAMES]
    kernel_name = g.add_input("g_pointwise0", [4, 8], "float32")
    acc = g.exp(xs[0], name="expf")
    for x in [*xs[1:], kernel_name]:
        acc = acc + x
    g.add_output(g.sqrt(g.exp(acc, name="sqrtf")), "out")
    return g


def macro_graph() -> DataflowGraph:
    """Inputs named after object-like macros of the compiler (linux, unix) and
    of the headers the .cu includes (EOF, M_PI, INT_MAX, RAND_MAX)."""
    g = DataflowGraph("macros")
    xs = [g.add_input(n, [16], "float32") for n in MACRO_NAMES]
    acc = xs[0]
    for x in xs[1:]:
        acc = acc * x
    g.add_output(acc, "out")
    return g


def main_graph() -> DataflowGraph:
    """A graph named `main`: its launcher would be C's main."""
    g = DataflowGraph("main")
    g.add_output(g.exp(g.add_input("x", [8], "float32")), "y")
    return g


# Graphs of hazards found and fixed (shadowed names, macros, library names),
# compiled with the others and checked by the regression tests below.
BUG_GRAPHS = {
    "shadowing": shadowing_graph,
    "macro_names": macro_graph,
    "main": main_graph,
}


def copies_graph() -> DataflowGraph:
    """Outputs that are an input and a value returned twice: cuda.copy."""
    g = DataflowGraph("copies")
    x = g.add_input("x", [5, 7], "bfloat16")
    y = g.neg(x, name="y")
    g.add_output(x, "same")
    g.add_output(y, "y")
    g.add_output(y, "y_again")
    return g


GRAPHS = {
    "hostile": lambda: hostile_graph(INJECTION),
    "copies": copies_graph,
    "threadIdx": lambda: builtin_named_graph("threadIdx"),
    "min": lambda: builtin_named_graph("min"),
    "molten_fmax": lambda: builtin_named_graph("molten_fmax"),
}

# MLIR spellings that DataflowGraph never produces, through the default
# pipeline: a quoted symbol name, argument names with `.`, `$` and `-`
# (three names that sanitize to the same identifier).
MLIR_NAMES_SPEC = """
func.func @"graph name.v2"(%a.b: tensor<8x16xbf16>, %a-b: tensor<16xbf16>,
                           %a_b: tensor<8x1xbf16>, %d$x: tensor<8x16xbf16>)
    -> (tensor<8x16xbf16> {molten.name = "a_b"}) {
  %0 = molten.add %a.b, %a-b : (tensor<8x16xbf16>, tensor<16xbf16>) -> tensor<8x16xbf16>
  %1 = molten.mul %0, %a_b : (tensor<8x16xbf16>, tensor<8x1xbf16>) -> tensor<8x16xbf16>
  %2 = molten.sub %1, %d$x : (tensor<8x16xbf16>, tensor<8x16xbf16>) -> tensor<8x16xbf16>
  func.return %2 : tensor<8x16xbf16>
}
"""

# A module written at the cuda level, printed without passes: kernel symbols
# that hold code, a quote, a newline, a keyword; two that sanitize alike.
CUDA_LEVEL_SPEC = """
cuda.kernel @"k\\"; system(\\"rm -rf /\\"); //"(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
  cuda.store %v, %x[%i] : f32, !cuda.ptr<f32>
  cuda.return
}
cuda.kernel @"k\\0A#error injected"(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.kernel @"k\\0A#error-injected"(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.kernel @"while"(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.host_func @launch_all(%x: !cuda.ptr<f32>) outputs 1 {
  cuda.launch @"k\\"; system(\\"rm -rf /\\"); //" grid [1, 1, 1] block [32, 1, 1] (%x)
      : !cuda.ptr<f32>
  cuda.launch @"k\\0A#error injected" grid [1, 1, 1] block [32, 1, 1] (%x)
      : !cuda.ptr<f32>
  cuda.launch @"k\\0A#error-injected" grid [1, 1, 1] block [32, 1, 1] (%x)
      : !cuda.ptr<f32>
  cuda.launch @"while" grid [1, 1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}
"""

# float_literal: values and the float32 they must denote in C++.
FLOAT_VALUES = [
    math.inf,
    -math.inf,
    math.nan,
    0.0,
    -0.0,
    1.0,
    0.5,
    0.1,
    1e-6,
    1.0 / 3.0,
    -2.5,
    2.0**-149,  # the smallest subnormal
    -(2.0**-149),
    1e-40,
    2.0**-126 - 2.0**-149,  # the largest subnormal
    2.0**-126,  # the smallest normal
    1e-50,  # rounds to 0 in float32
    0.6 * 2.0**-149,  # rounds up to the smallest subnormal
    16777217.0,  # 2**24 + 1: not a float32, rounds to even
    123456789.0,
    1e16,
    1e30,
    3.4028234663852886e38,  # FLT_MAX
    -3.4028234663852886e38,
    3.4028235e38,  # rounds to FLT_MAX
]
LITERAL = re.compile(r"^-?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?f$")


def as_float32(value: float) -> np.float32:
    with np.errstate(over="ignore"):
        return np.float32(value)


def parse_literal(text: str) -> float:
    if text in ("__int_as_float(0x7f800000)", "-__int_as_float(0x7f800000)"):
        return -math.inf if text.startswith("-") else math.inf
    if text == "__int_as_float(0x7fc00000)":
        return math.nan
    assert LITERAL.match(text), text
    return float(text[:-1])


def bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", as_float32(value)))[0]


def literal_unit() -> str:
    """A translation unit that nvcc must accept only if every literal denotes
    the right float32 (compared bit for bit at compile time)."""
    lines = ["#include <math.h>"]
    for i, value in enumerate(FLOAT_VALUES):
        text = float_literal(value)
        if not math.isfinite(float(as_float32(value))):
            # Written as bit patterns (__int_as_float), which are not constant
            # expressions; parse_literal checks those, the switch below compiles them.
            continue
        lines.append(
            f"static_assert(__builtin_bit_cast(unsigned int, {text}) == "
            f'{bits(value):#010x}u, "{i}");'
        )
    lines.append(
        "__device__ float molten_literals(int i) { switch (i) { "
        + " ".join(
            f"case {i}: return {float_literal(v)};" for i, v in enumerate(FLOAT_VALUES)
        )
        + " default: return 0.0f; } }"
    )
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Compiled units, once per session.
# --------------------------------------------------------------------------


def _compile(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            NVCC,
            f"-gencode=arch=compute_{ARCH[3:]},code={ARCH}",
            "-c",
            "-Werror",
            "all-warnings",
            "-o",
            str(path.with_suffix(".o")),
            str(path),
        ],
        capture_output=True,
        text=True,
        cwd=path.parent,
    )


@pytest.fixture(scope="session")
def units(tmp_path_factory) -> dict[str, dict]:
    """Each graph of GRAPHS and BUG_GRAPHS compiled and saved, MLIR_NAMES_SPEC
    and CUDA_LEVEL_SPEC printed (source,
    header), plus a host C++ file including every header and the float
    literal unit; nvcc results when nvcc is installed."""
    out = tmp_path_factory.mktemp("cuda_target")
    compiler = ZeroCompiler(arch=ARCH)
    result: dict[str, dict] = {}
    for key, build in {**GRAPHS, **BUG_GRAPHS}.items():
        compiled = compiler.compile(build())
        folder = out / key
        saved = compiler.save(compiled, folder)
        cu = next(p for p in saved if p.suffix == ".cu")
        result[key] = {"source": compiled.source, "header": compiled.header, "cu": cu}
    modules = {
        "mlir_names": run_pipeline(parse_module(MLIR_NAMES_SPEC), DEFAULT_PIPELINE),
        "cuda_level": parse_module(CUDA_LEVEL_SPEC),
    }
    for key, module in modules.items():
        unit = print_cuda(module)
        (out / key).mkdir()
        cu = out / key / f"{key}.cu"
        cu.write_text(unit.source)
        cu.with_suffix(".h").write_text(unit.header)
        result[key] = {"source": unit.source, "header": unit.header, "cu": cu}

    host = out / "host" / "main.cpp"
    host.parent.mkdir()
    includes = [
        f'#include "{r["cu"].with_suffix(".h")}"'
        for key, r in result.items()
        if key not in BUG_GRAPHS
    ]
    host.write_text("\n".join(includes) + "\nint main() { return 0; }\n")
    literals = out / "literals" / "literals.cu"
    literals.parent.mkdir()
    literals.write_text(literal_unit())

    paths = {key: r["cu"] for key, r in result.items()}
    paths["host"] = host
    paths["literals"] = literals
    compiled_runs: dict[str, subprocess.CompletedProcess] = {}
    if NVCC is not None:
        with ThreadPoolExecutor(max_workers=4) as pool:
            runs = pool.map(_compile, paths.values())
            compiled_runs = dict(zip(paths, runs, strict=True))
    return {"units": result, "nvcc": compiled_runs}


def _nvcc_ok(units, key: str) -> None:
    if NVCC is None:
        pytest.skip("nvcc is not installed")
    run = units["nvcc"][key]
    assert run.returncode == 0, run.stderr


# --------------------------------------------------------------------------
# Identifiers and injection.
# --------------------------------------------------------------------------

UNIT_KEYS = [*GRAPHS, "mlir_names", "cuda_level"]


@pytest.mark.parametrize("key", UNIT_KEYS)
def test_no_injected_text(units, key):
    unit = units["units"][key]
    check_no_injected_text(unit["source"])
    check_no_injected_text(unit["header"])
    check_no_injected_text(unit["cu"].read_text())


@pytest.mark.parametrize("key", UNIT_KEYS)
def test_identifiers_are_valid_unique_and_not_keywords(units, key):
    check_identifiers(units["units"][key]["source"])


@pytest.mark.parametrize("key", UNIT_KEYS)
def test_header_declares_the_launchers(units, key):
    unit = units["units"][key]
    launchers = [f for f in functions(unit["source"]) if f["kind"] == "launcher"]
    declared = re.findall(rf"^cudaError_t ({_ID})\((.*)\);$", unit["header"], re.M)
    assert [(f["name"], f["params"]) for f in launchers] == [
        (name, _param_names(params)) for name, params in declared
    ]


def test_hostile_names_are_kept_apart(units):
    """Names that sanitize to the same identifier get distinct ones, in the
    order of the graph; names the generated code uses are renamed."""
    fns = functions(units["units"]["hostile"]["source"])
    (launcher,) = [f for f in fns if f["kind"] == "launcher"]
    params = launcher["params"]
    assert len(params) == len(HOSTILE_INPUTS) + 1 + 2 + 1  # inputs, w, outputs, stream
    assert (
        params[HOSTILE_INPUTS.index("_Capital")]
        != params[HOSTILE_INPUTS.index("Capital")]
    )
    assert params[HOSTILE_INPUTS.index("int")] != params[HOSTILE_INPUTS.index("int_")]
    for used in ("stream", "err", "threadIdx", "molten_fmax", "int", "NULL"):
        assert params[HOSTILE_INPUTS.index(used)] != used
    # Two kernels, each perhaps with a variant for misaligned pointers.
    kernels = [
        f
        for f in fns
        if f["kind"] == "kernel" and not f["name"].endswith(("_scalar", "_simt"))
    ]
    assert len(kernels) == 2
    assert "cudaMallocAsync" in "\n".join(launcher["body"])


@pytest.mark.parametrize("builtin", ["threadIdx", "min", "molten_fmax"])
def test_graph_named_like_a_builtin(units, builtin):
    fns = functions(units["units"][builtin]["source"])
    (launcher,) = [f for f in fns if f["kind"] == "launcher"]
    assert launcher["name"] != builtin
    assert all(f["name"] != builtin for f in fns)
    assert all(builtin not in f["params"] + f["locals"] for f in fns)


def test_mlir_names_are_sanitized_and_unique(units):
    fns = functions(units["units"]["mlir_names"]["source"])
    (launcher,) = [f for f in fns if f["kind"] == "launcher"]
    assert launcher["name"] == "graph_name_v2"
    # %a.b, %a-b, %a_b and the output "a_b": one identifier each.
    assert launcher["params"] == ["a_b", "a_b_1", "a_b_2", "d_x", "a_b_3", "stream"]


def test_kernel_symbols_are_sanitized_and_unique(units):
    fns = functions(units["units"]["cuda_level"]["source"])
    kernels = [f["name"] for f in fns if f["kind"] == "kernel"]
    assert len(kernels) == 4 and len(set(kernels)) == 4
    assert "while" not in kernels
    (launcher,) = [f for f in fns if f["kind"] == "launcher"]
    launched = re.findall(rf"^\s*({_ID})<<<", "\n".join(launcher["body"]), re.M)
    assert launched == kernels


@pytest.mark.parametrize("key", [*UNIT_KEYS, "host"])
def test_compiles_with_nvcc(units, key):
    """Every unit compiles for one arch with warnings as errors; `host` is a
    host-only C++ file including every header."""
    _nvcc_ok(units, key)


# --------------------------------------------------------------------------
# Float literals.
# --------------------------------------------------------------------------


@pytest.mark.parametrize("value", FLOAT_VALUES, ids=repr)
def test_float_literal_round_trips(value):
    text = float_literal(value)
    back = parse_literal(text)
    if math.isnan(value):
        assert math.isnan(back)
    else:
        assert bits(back) == bits(value), (value, text)


def test_float_literals_compile_to_the_same_bits(units):
    """nvcc evaluates each literal to the same float32, bit for bit."""
    _nvcc_ok(units, "literals")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_float_literal_of_a_value_that_overflows_float32():
    assert float_literal(1e39) == "__int_as_float(0x7f800000)"
    assert float_literal(-1e39) == "-__int_as_float(0x7f800000)"


# --------------------------------------------------------------------------
# The launcher: every CUDA call is checked, errors are returned at once.
# --------------------------------------------------------------------------

RETURN_ON_ERROR = "if (err != cudaSuccess) return err;"


def check_launcher(launcher: dict) -> None:
    """Every CUDA call is checked at once; an early return first frees, in
    reverse order, exactly the buffers allocated so far; the rest are freed
    after the last launch or copy."""
    body = [line.strip() for line in launcher["body"]]
    assert body[0] == "cudaError_t err = cudaSuccess;"
    assert body[-1] == "return cudaSuccess;"
    launch = re.compile(
        rf"^{_ID}<<<dim3\(\d+, \d+, \d+\), dim3\(\d+, \d+, \d+\), \d+, stream>>>"
        rf"\(({_ID}(, {_ID})*)?\);$"
    )
    malloc = re.compile(
        rf"^err = cudaMallocAsync\(\(void\*\*\)&({_ID}), \d+ \* sizeof\({_TYPE}\), "
        r"stream\);$"
    )
    copy = re.compile(
        rf"^err = cudaMemcpyAsync\({_ID}, {_ID}, \d+ \* sizeof\({_TYPE}\), "
        r"cudaMemcpyDeviceToDevice, stream\);$"
    )
    free = re.compile(rf"^cudaFreeAsync\(({_ID}), stream\);$")
    # A kernel with more than 48 KiB of dynamic shared memory opts in first.
    opt_in = re.compile(
        rf"^err = cudaFuncSetAttribute\(\(const void\*\){_ID}, "
        r"cudaFuncAttributeMaxDynamicSharedMemorySize, \d+\);$"
    )
    # A vectorized kernel, or its scalar variant when a pointer is misaligned.
    aligned = re.compile(
        rf"^if \(\(\(\(uintptr_t\){_ID}( \| \(uintptr_t\){_ID})*\) % 16\) == 0\) \{{$"
    )
    allocated: list[str] = []
    freed: list[str] = []
    calls = 0
    i = 1

    def expect_check() -> int:
        if not allocated:
            assert body[i] == RETURN_ON_ERROR, body[i]
            return i + 1
        expected = [
            "if (err != cudaSuccess) {",
            *(f"cudaFreeAsync({b}, stream);" for b in reversed(allocated)),
            "return err;",
            "}",
        ]
        assert body[i : i + len(expected)] == expected, body[i : i + len(expected)]
        return i + len(expected)

    while i < len(body) - 1:
        line = body[i]
        if aligned.match(line):
            vector, scalar = launch.match(body[i + 1]), launch.match(body[i + 3])
            assert vector and scalar, body[i : i + 5]
            vector_kernel, vector_call = body[i + 1].split("<<<")
            scalar_kernel, scalar_call = body[i + 3].split("<<<")
            # The same arguments (each variant has its own grid, block, shared).
            assert vector_call.split(">>>")[1] == scalar_call.split(">>>")[1]
            assert vector_kernel != scalar_kernel
            assert body[i + 2].startswith("} else {")
            assert body[i + 4] == "}"
            assert body[i + 5] == "err = cudaGetLastError();"
            i += 6
            i = expect_check()
            calls += 1
        elif launch.match(line):
            assert not freed, "a launch after a buffer was freed"
            assert body[i + 1] == "err = cudaGetLastError();"
            i += 2
            i = expect_check()
            calls += 1
        elif m := malloc.match(line):
            assert re.match(rf"^{_TYPE}\* {m[1]} = nullptr;$", body[i - 1]), body[i - 1]
            i += 1
            i = expect_check()
            allocated.append(m[1])
        elif copy.match(line):
            i += 1
            i = expect_check()
            calls += 1
        elif opt_in.match(line):
            i += 1
            i = expect_check()
        elif m := free.match(line):
            freed.append(m[1])
            i += 1
        elif re.match(rf"^{_TYPE}\* {_ID} = nullptr;$", line):
            i += 1
        else:
            raise AssertionError(f"unexpected launcher line: {line}")
    assert calls > 0
    assert sorted(freed) == sorted(allocated)


@pytest.mark.parametrize("key", UNIT_KEYS)
def test_launcher_returns_the_first_cuda_error(units, key):
    for f in functions(units["units"][key]["source"]):
        if f["kind"] == "launcher":
            check_launcher(f)


def test_launcher_copies_an_input_and_a_value_returned_twice(units):
    fns = functions(units["units"]["copies"]["source"])
    (launcher,) = [f for f in fns if f["kind"] == "launcher"]
    assert launcher["params"] == ["x", "same", "y", "y_again", "stream"]
    body = [line.strip() for line in launcher["body"]]
    copies = [line for line in body if "cudaMemcpyAsync" in line]
    assert copies == [
        "err = cudaMemcpyAsync(same, x, 35 * sizeof(__nv_bfloat16), "
        "cudaMemcpyDeviceToDevice, stream);",
        "err = cudaMemcpyAsync(y_again, y, 35 * sizeof(__nv_bfloat16), "
        "cudaMemcpyDeviceToDevice, stream);",
    ]
    # The copy of y comes after the kernel that writes y.
    launches = [i for i, line in enumerate(body) if "<<<" in line]
    assert body.index(copies[1]) > max(launches)


def test_launcher_of_three_kernels_and_two_temporaries():
    g = DataflowGraph("chain")
    x = g.add_input("x", [64, 48], "bfloat16")
    w = g.add_input("w", [48, 40], "bfloat16")
    h = g.softmax(g.exp(x, name="e"), name="p")
    y = g.matmul(h, w, name="y")
    g.add_output(g.rms_norm(y, g.add_input("g", [40], "bfloat16")), "out")
    source = ZeroCompiler().compile(g).source
    (launcher,) = [f for f in functions(source) if f["kind"] == "launcher"]
    check_launcher(launcher)
    body = "\n".join(launcher["body"])
    assert body.count("<<<") >= 3
    assert body.count("cudaMallocAsync") >= 2


# --------------------------------------------------------------------------
# The command line.
# --------------------------------------------------------------------------


def molten_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "molten.tools.cli", *args],
        capture_output=True,
        text=True,
    )


def test_cli_compiles_the_seed_spec(tmp_path):
    out = tmp_path / "out"
    run = molten_cli("compile", str(SEED_SPEC), "-o", str(out))
    assert run.returncode == 0, run.stderr
    written = [Path(line) for line in run.stdout.splitlines()]
    assert len(written) == 3 and all(p.parent == out and p.is_file() for p in written)
    names = sorted(p.name for p in written)
    assert "fused_rmsnorm.cu" in names and "fused_rmsnorm.h" in names
    assert any(n.endswith(".mlir") for n in names)
    cu = (out / "fused_rmsnorm.cu").read_text()
    assert cu.startswith('#include "fused_rmsnorm.h"\n')
    assert 'extern "C" cudaError_t fused_rmsnorm(' in cu
    assert "cudaError_t fused_rmsnorm(" in (out / "fused_rmsnorm.h").read_text()
    mlir = next(p for p in written if p.suffix == ".mlir").read_text()
    assert "cuda.host_func @fused_rmsnorm" in mlir
    assert "1 kernel(s): fused_rmsnorm_row_reduce0" in run.stderr
    assert "Traceback" not in run.stderr


SHAPE_ERROR_SPEC = """\
func.func @bad(%x: tensor<4x8xf32>, %w: tensor<9xf32>) -> tensor<4x8xf32> {
  %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
"""
PARSE_ERROR_SPEC = """\
func.func @bad(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.exp %x tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
"""


@pytest.mark.parametrize(
    ("spec", "where", "message"),
    [
        (
            SHAPE_ERROR_SPEC,
            "2:3",
            "molten.add: lhs tensor<4x8xf32> and rhs tensor<9xf32> cannot be "
            "broadcast together (dimension -1: 8 vs 9)",
        ),
        (PARSE_ERROR_SPEC, "2:22", "Expected ':'"),
    ],
    ids=["shape_error", "parse_error"],
)
def test_cli_reports_a_located_error(tmp_path, spec, where, message):
    path = tmp_path / "spec.mlir"
    path.write_text(spec)
    out = tmp_path / "out"
    run = molten_cli("compile", str(path), "-o", str(out))
    assert run.returncode == 1, (run.stdout, run.stderr)
    first = run.stderr.splitlines()[0]
    assert first == f"{path}:{where}: error: {message}", run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    assert not out.exists() or not any(out.iterdir())
    assert run.stdout == ""


SIGNATURE = "func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
BODY = "  func.return %x : tensor<4xf32>\n}\n"


@pytest.mark.parametrize(
    ("spec", "where", "message"),
    [
        (
            b"func.func private @decl(tensor<4xf32>) -> tensor<4xf32>\n",
            "1:1",
            "func.func @decl is a declaration without a body; Molten compiles "
            "functions with bodies only",
        ),
        (
            (SIGNATURE + "  // caf").encode() + b"\xe9\n" + BODY.encode(),
            "2:9",
            "byte 0xe9 is not UTF-8 text; a spec is UTF-8",
        ),
        (
            (SIGNATURE + BODY + SIGNATURE + BODY).encode(),
            "4:1",
            "func.func @g is defined twice in its module; symbols must be unique",
        ),
        (b"\x01" + (SIGNATURE + BODY).encode(), "1:1", "Unexpected character"),
    ],
    ids=["declaration", "not_utf8", "duplicate_symbol", "lexer_error"],
)
def test_both_tools_report_a_malformed_spec_at_its_place(
    tmp_path, spec, where, message
):
    path = tmp_path / "spec.mlir"
    path.write_bytes(spec)
    for run in (
        molten_cli("compile", str(path), "-o", str(tmp_path / "out")),
        subprocess.run(
            [sys.executable, "-m", "molten.tools.molten_opt", str(path)],
            capture_output=True,
            text=True,
        ),
    ):
        assert run.returncode == 1, (run.stdout, run.stderr)
        first = run.stderr.splitlines()[0]
        assert first.startswith(f"{path}:{where}: error: {message}"), run.stderr
        assert "Traceback" not in run.stderr


def test_a_byte_order_mark_is_dropped(tmp_path):
    path = tmp_path / "spec.mlir"
    path.write_bytes("\ufeff".encode() + (SIGNATURE + BODY).encode())
    run = molten_cli("compile", str(path), "-o", str(tmp_path / "out"))
    assert run.returncode == 0, run.stderr


def test_a_graph_returning_nothing_is_a_located_error(tmp_path):
    path = tmp_path / "spec.mlir"
    path.write_text(
        "func.func @g(%x: tensor<4xf32>) {\n"
        "  %y = molten.exp %x : tensor<4xf32>\n  func.return\n}\n"
    )
    run = molten_cli("compile", str(path), "-o", str(tmp_path / "out"))
    assert run.returncode == 1
    assert run.stderr.startswith(
        f"{path}:1:1: error: func.func @g returns nothing; a graph must return "
        "at least one tensor"
    ), run.stderr
    lowered = subprocess.run(
        [sys.executable, "-m", "molten.tools.molten_opt", str(path), "-p",
         f"{KERNEL_LEVEL_PIPELINE},lower-kernel-to-cuda"],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert lowered.returncode == 1
    assert lowered.stderr.startswith(
        "molten-opt: error: lower-kernel-to-cuda: @g returns nothing"
    ), lowered.stderr


# --------------------------------------------------------------------------
# Regression tests for bugs found in the cuda level (all fixed).
# --------------------------------------------------------------------------


def test_no_reserved_identifiers_at_all():
    for name in (INJECTION, "9lives", "ñandú"):
        g = DataflowGraph(name)
        x = g.add_input("int", [8], "float32")
        y = g.add_input("int_", [8], "float32")
        g.add_output(x + y, "out")
        for f in functions(ZeroCompiler().compile(g).source):
            for ident in [f["name"], *f["params"], *f["locals"]]:
                assert "__" not in ident, ident
            assert not f["name"].startswith("_"), f["name"]


def test_names_used_by_the_generated_code_are_not_shadowed(units):
    source = units["units"]["shadowing"]["source"]
    for f in functions(source):
        # What the function's own code calls, launches or names.
        used = set(re.findall(rf"({_ID})(?:\(|<<<)", "\n".join(f["body"])))
        if f["kind"] == "launcher":
            used |= {"cudaSuccess", "cudaError_t", "cudaStream_t"}
        clash = used & set(f["params"] + f["locals"])
        assert not clash, (f["name"], sorted(clash))
    _nvcc_ok(units, "shadowing")


def test_names_that_are_macros(units):
    _nvcc_ok(units, "macro_names")


def test_graph_named_main(units):
    fns = functions(units["units"]["main"]["source"])
    assert all(f["name"] != "main" for f in fns), [f["name"] for f in fns]
    _nvcc_ok(units, "main")


def test_row_reduce_guarded_store_of_a_broadcast_row():
    g = DataflowGraph("bc")
    a = g.add_input("a", [3, 1], "float32")
    b = g.add_input("b", [31], "float32")
    g.add_output(g.softmax(a * b, name="s"), "s")
    compiled = ZeroCompiler().compile(g)
    (kernel,) = [f for f in functions(compiled.source) if f["kind"] == "kernel"]
    declared: set[str] = set(kernel["params"])
    for line in kernel["body"]:
        if m := re.match(rf"^\s*{_ID}\[({_ID})\] = ", line):
            assert m[1] in declared, line
        for pattern in (_LOCAL, _LOOP):
            if m := pattern.match(line):
                declared.add(m[1])


def test_graph_symbol_name_cannot_inject_code():
    spec = """
func.func @"g\\0A#error injected\\0Aint x" (%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = molten.neg %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""
    unit = print_cuda(run_pipeline(parse_module(spec), DEFAULT_PIPELINE))
    for text in (unit.source, unit.header):
        for line in text.splitlines():
            assert not line.startswith(("#error", "int x")), line


def test_fused_ops_cannot_inject_code():
    spec = """
cuda.kernel @k(%x: !cuda.ptr<f32>) block 32
    attributes {fused_ops = ["neg\\0A#error injected"]} {
  cuda.return
}
"""
    source = print_cuda(parse_module(spec)).source
    for line in source.splitlines():
        assert not line.startswith("#error"), line


@pytest.mark.parametrize("name", ["my output", "9lives"])
def test_output_name_that_is_not_an_ssa_name(name):
    spec = f"""
func.func @g(%x: tensor<4xf32>) -> (tensor<4xf32> {{molten.name = "{name}"}}) {{
  %0 = molten.neg %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}}
"""
    unit = print_cuda(run_pipeline(parse_module(spec), DEFAULT_PIPELINE))
    (launcher,) = [f for f in functions(unit.source) if f["kind"] == "launcher"]
    assert IDENTIFIER.match(launcher["params"][1])


def test_loop_carried_values_are_updated_simultaneously():
    module = parse_module(
        """
cuda.kernel @swap(%y: !cuda.ptr<f32>) block 32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.000000e+00 : f32
  %two = arith.constant 2.000000e+00 : f32
  %p, %q = scf.for %i = %c0 to %c4 step %c1
      iter_args(%a = %one, %b = %two) -> (f32, f32) {
    scf.yield %b, %a : f32, f32
  }
  %tid = cuda.thread_idx x
  cuda.store %p, %y[%tid] : f32, !cuda.ptr<f32>
  cuda.return
}
"""
    )
    source = print_cuda(module).source
    body = source[source.index("for (") :]
    updates = re.findall(rf"^\s*({_ID}) = ({_ID});$", body, re.M)
    assigned: set[str] = set()
    for target, value in updates:
        assert value not in assigned, (updates, source)
        assigned.add(target)


VERIFIER_GAPS = {
    "launch_of_no_kernel": """
cuda.host_func @g(%x: !cuda.ptr<f32>) outputs 1 {
  cuda.launch @nothere grid [1, 1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}
""",
    "launch_argument_count": """
cuda.kernel @k(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.host_func @g(%x: !cuda.ptr<f32>) outputs 1 {
  cuda.launch @k grid [1, 1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}
""",
    "alloc_negative_size": """
cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.host_func @g(%x: !cuda.ptr<f32>) outputs 1 {
  %t = "cuda.alloc"() <{size = -5 : i64}> : () -> !cuda.ptr<f32>
  cuda.launch @k grid [1, 1, 1] block [32, 1, 1] (%t) : !cuda.ptr<f32>
  cuda.free %t : !cuda.ptr<f32>
  cuda.return
}
""",
    "alloc_of_shared_memory": """
cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.host_func @g(%x: !cuda.ptr<f32>) outputs 1 {
  %t = cuda.alloc 4 : !cuda.ptr<f32, shared>
  cuda.free %t : !cuda.ptr<f32, shared>
  cuda.return
}
""",
}


@pytest.mark.parametrize("case", sorted(VERIFIER_GAPS))
def test_cuda_level_verifier_gaps(tmp_path, capsys, case):
    from molten.tools.molten_opt import main

    path = tmp_path / f"{case}.mlir"
    path.write_text(VERIFIER_GAPS[case])
    rc = main([str(path), "-t", "cuda"])
    captured = capsys.readouterr()
    assert rc == 1, (rc, captured.err)
    assert re.match(rf"^{re.escape(str(path))}:\d+:\d+: error: ", captured.err)


# --------------------------------------------------------------------------
# TMA and mbarriers (sm_90).
# --------------------------------------------------------------------------

TMA_KERNEL = """
cuda.kernel @tma(%map: !cuda.tensor_map<bf16>, %y: !cuda.ptr<bf16>)
    block 384 min_blocks 1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tile = cuda.shared_alloc 8192 : !cuda.ptr<bf16, shared>
  %bars = cuda.shared_alloc 2 : !cuda.ptr<ui64, shared>
  %t = cuda.thread_idx x
  %producer = arith.cmpi eq, %t, %c0 : index
  scf.if %producer {
    cuda.mbarrier_init %bars[%c0], 1 : !cuda.ptr<ui64, shared>
    cuda.mbarrier_init %bars[%c1], 384 : !cuda.ptr<ui64, shared>
    cuda.fence_mbarrier_init
  }
  cuda.sync_threads
  scf.if %producer {
    cuda.mbarrier_arrive %bars[%c0] expect_tx 16384 : !cuda.ptr<ui64, shared>
    cuda.tma_load %map, %tile[%c0], %bars[%c0], [%c0, %c1]
      : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
  }
  cuda.mbarrier_wait %bars[%c0], %c0 : !cuda.ptr<ui64, shared>
  %v = cuda.load %tile[%t] : !cuda.ptr<bf16, shared> -> bf16
  cuda.store %v, %y[%t] : bf16, !cuda.ptr<bf16>
  cuda.mbarrier_arrive %bars[%c1] : !cuda.ptr<ui64, shared>
  cuda.return
}
cuda.host_func @tma_graph(%x: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 {
  %m = cuda.make_tensor_map %x [100, 64] box [64, 64]
      : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
  cuda.launch @tma grid [1, 1, 1] block [384, 1, 1](%m, %y)
      : !cuda.tensor_map<bf16>, !cuda.ptr<bf16>
  cuda.return
}
"""


def test_tma_and_mbarrier_ops_compile_for_sm_90a(tmp_path):
    """The prelude's TMA and mbarrier helpers, a tensor map taken by value,
    the ops' PTX and a launcher that encodes the map (cuTensorMapEncodeTiled
    through the runtime's driver entry points) build for sm_90a, warnings
    as errors."""
    if NVCC is None:
        pytest.skip("nvcc is not installed")
    path = tmp_path / "tma.cu"
    path.write_text(print_cuda(parse_module(TMA_KERNEL)).source)
    run = subprocess.run(
        [
            NVCC,
            "-gencode=arch=compute_90a,code=sm_90a",
            "-c",
            "-Werror",
            "all-warnings",
            "-o",
            str(tmp_path / "tma.o"),
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr


def test_tensor_map_is_a_launcher_step():
    """The runtime replays a launcher's tensor map as a step of its own slot,
    passed to the launch by that slot."""
    from molten.dialects import cuda
    from molten.runtime.program import Launch, TensorMap, host_program

    module = parse_module(TMA_KERNEL)
    unit = print_cuda(module)
    (launcher,) = [op for op in module.ops if isinstance(op, cuda.HostFuncOp)]
    program = host_program(launcher, unit.kernel_names)
    assert program[0] == TensorMap(2, 0, "bfloat16", (100, 64), (64, 64))
    assert isinstance(program[1], Launch) and program[1].args == (2, 1)
    assert "molten_make_tensor_map(&m, x, 100, 64, 64, 64, " in unit.source


@pytest.mark.parametrize(("exponent", "powf"), [(2.0, False), (3.0, True)])
def test_square_by_pow_is_one_multiply(exponent, powf):
    """x ** 2 (a mean square, as torch writes it) is emitted as x * x:
    powf's general path costs tens of instructions an element."""
    g = DataflowGraph("p")
    x = g.add_input("x", [4, 64])
    g.add_output(g.pow(x, exponent) + x, "y")
    source = ZeroCompiler().compile(g).source
    assert ("powf(" in source) == powf
    if not powf:
        assert re.search(r"= (\w+) \* \1;", source)


# --------------------------------------------------------------------------
# The op table: each op class's printer, found by class.
# --------------------------------------------------------------------------


def test_an_op_without_a_printer_is_an_error_that_names_it():
    module = parse_module(
        """
cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
  %c = math.cbrt %v : f32
  cuda.store %c, %x[%i] : f32, !cuda.ptr<f32>
  cuda.return
}
"""
    )
    with pytest.raises(NotImplementedError, match="-t cuda: cannot print math.cbrt"):
        print_cuda(module)


def test_an_op_class_without_a_printer_of_its_own_takes_its_base_class_one():
    class DerivedAddf(arith.AddfOp):
        """A subclass, as a specialization of an op in a dialect would be."""

    addf = OP_PRINTERS[arith.AddfOp]
    assert printer_for(arith.AddfOp, OP_PRINTERS) is addf
    assert printer_for(DerivedAddf, OP_PRINTERS) is addf
    assert printer_for(ModuleOp, OP_PRINTERS) is None


def test_each_op_class_has_one_printer():
    """The kinds' tables are disjoint: merged, none hides another's printer."""
    from molten.targets.cuda import (
        arithmetic,
        control_flow,
        host,
        memory,
        tensor_cores,
        threads,
    )

    tables = [
        arithmetic.ARITHMETIC_PRINTERS,
        memory.MEMORY_PRINTERS,
        threads.THREAD_PRINTERS,
        tensor_cores.TENSOR_CORE_PRINTERS,
        control_flow.CONTROL_FLOW_PRINTERS,
        host.HOST_PRINTERS,
    ]
    assert sum(map(len, tables)) == len(OP_PRINTERS)
