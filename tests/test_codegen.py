"""Every kernel Molten emits compiles with nvcc for sm_80 and sm_90, warnings
treated as errors and no register spills; registers and spills per kernel are
written to tests/logs/ptxas.log. Skipped where nvcc is absent."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel_cases import CASES, DTYPES

from molten import ZeroCompiler
from molten.ir import DataflowGraph

NVCC = shutil.which("nvcc")
LOG = Path(__file__).parent / "logs" / "ptxas.log"
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")

_PTXAS = re.compile(
    r"Compiling entry function '(?P<name>\w+)' for '(?P<arch>sm_\d+)'.*?"
    r"(?P<spill>\d+) bytes spill stores, (?P<loads>\d+) bytes spill loads.*?"
    r"Used (?P<regs>\d+) registers",
    re.S,
)


ARCHS = ("sm_80", "sm_90")


def compile_unit(source: str, tmp_path: Path) -> str:
    """Compiles for every arch in ARCHS; returns ptxas's report."""
    cu = tmp_path / "unit.cu"
    cu.write_text(source)
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in ARCHS]
    result = subprocess.run(
        [
            NVCC,
            *gencode,
            "-c",
            "-Werror",
            "all-warnings",
            "-Xptxas",
            "-v,-warn-spills,-Werror",
            "-o",
            str(tmp_path / "unit.o"),
            str(cu),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_kernels_compile(case, dtype, tmp_path):
    g = DataflowGraph(case)
    CASES[case](g, dtype)
    compiled = ZeroCompiler().compile(g)
    report = compile_unit(compiled.source, tmp_path)
    found = list(_PTXAS.finditer(report))
    # each kernel, and the scalar variant of each with vector accesses
    kernels = len(compiled.kernels) + sum(
        k.scalar_variant is not None for k in compiled.kernels
    )
    assert len(found) == kernels * len(ARCHS), report
    lines = []
    for match in found:
        assert match["spill"] == "0" and match["loads"] == "0", report
        lines.append(
            f"{case} {dtype} {match['arch']} {match['name']}: {match['regs']} "
            f"registers, {match['spill']} bytes spilled"
        )
    LOG.parent.mkdir(exist_ok=True)
    with LOG.open("a") as log:
        log.write("\n".join(lines) + "\n")


def test_launcher_compiles_as_host_code(tmp_path):
    """The header is valid C++ for a host-only translation unit."""
    g = DataflowGraph("seed")
    CASES["rms_norm_1x5120"](g, "float16")
    compiler = ZeroCompiler()
    compiler.save(compiler.compile(g), tmp_path)
    main = tmp_path / "main.cpp"
    main.write_text('#include "seed.h"\nint main() { return seed == nullptr; }\n')
    result = subprocess.run(
        [
            NVCC,
            "-c",
            "-Werror",
            "all-warnings",
            "-o",
            str(tmp_path / "main.o"),
            str(main),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
