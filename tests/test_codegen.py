"""Every kernel Molten emits compiles with nvcc for sm_80 and sm_90, warnings
treated as errors and no register spills, except a few bytes in kernels made
to fit several blocks per SM; registers and spills per kernel are written to
tests/logs/ptxas.log. Skipped where nvcc is absent."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from kernel_cases import (
    CASES,
    DTYPES,
    WGMMA_ARCH,
    WGMMA_CASES,
    WGMMA_DTYPES,
    gemm_bias_gelu,
)

from molten import ZeroCompiler
from molten.ir import DataflowGraph

NVCC = shutil.which("nvcc")
LOG = Path(__file__).parent / "logs" / "ptxas.log"
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")

_PTXAS = re.compile(
    r"Compiling entry function '(?P<name>\w+)' for '(?P<arch>sm_\d+a?)'.*?"
    r"(?P<spill>\d+) bytes spill stores, (?P<loads>\d+) bytes spill loads.*?"
    r"Used (?P<regs>\d+) registers",
    re.S,
)


ARCHS = ("sm_80", "sm_90")
FORCED_OCCUPANCY_SPILL = 64
"""Bytes a kernel made to fit several blocks per SM (`__launch_bounds__(b, n)`:
a row split across blocks, at most 64 registers a thread) may spill. Two
such blocks per SM measured faster than one without spills (H100,
2026-11-22: layer_norm over 4M-element rows 534 against 659 us)."""
_FORCED = re.compile(r"__launch_bounds__\(\d+, \d+\) (\w+)\(")


def compile_unit(
    source: str, tmp_path: Path, strict: bool = True, archs: tuple[str, ...] = ARCHS
) -> str:
    """Compiles for every arch in `archs`; returns ptxas's report. `strict`:
    any register spill is an error."""
    cu = tmp_path / "unit.cu"
    cu.write_text(source)
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
    result = subprocess.run(
        [
            NVCC,
            *gencode,
            "-c",
            "-Werror",
            "all-warnings",
            "-Xptxas",
            "-v,-warn-spills,-Werror" if strict else "-v",
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
    forced = set(_FORCED.findall(compiled.source))
    report = compile_unit(compiled.source, tmp_path, strict=not forced)
    found = list(_PTXAS.finditer(report))
    # each kernel, and the scalar variant of each with vector accesses
    kernels = len(compiled.kernels) + sum(
        k.scalar_variant is not None for k in compiled.kernels
    )
    assert len(found) == kernels * len(ARCHS), report
    lines = []
    for match in found:
        spill, loads = int(match["spill"]), int(match["loads"])
        most = FORCED_OCCUPANCY_SPILL if match["name"] in forced else 0
        assert spill <= most and loads <= most, report
        lines.append(
            f"{case} {dtype} {match['arch']} {match['name']}: {match['regs']} "
            f"registers, {match['spill']} bytes spilled"
        )
    LOG.parent.mkdir(exist_ok=True)
    with LOG.open("a") as log:
        log.write("\n".join(lines) + "\n")


BENCHMARK_GEMM = "gelu_bias_4096x4096x4096"
"""The benchmark's gelu(x @ w + b) at 4096 cubed, compiled only: ptxas once
serialized its f16 wgmmas (and not its bf16 ones) for the epilogue's reads
of accumulators still in flight after the K loop."""


@pytest.mark.parametrize("dtype", WGMMA_DTYPES)
@pytest.mark.parametrize("case", [*sorted(WGMMA_CASES), BENCHMARK_GEMM])
def test_wgmma_kernels_compile(case, dtype, tmp_path):
    """The sm_90a gemms compile for sm_90a with no spill, and ptxas keeps
    their wgmmas in flight: it reports (C7514 and its kin) when it has to
    serialize them, which costs a third of their speed."""
    g = DataflowGraph(case)
    build = gemm_bias_gelu(4096, 4096, 4096) if case == BENCHMARK_GEMM else None
    (build or WGMMA_CASES[case])(g, dtype)
    compiled = ZeroCompiler(arch=WGMMA_ARCH).compile(g)
    assert "wgmma.mma_async" in compiled.source
    report = compile_unit(compiled.source, tmp_path, archs=(WGMMA_ARCH,))
    assert "wgmma.mma_async instructions are serialized" not in report, report
    found = list(_PTXAS.finditer(report))
    # each kernel and its SIMT variant for misaligned operands
    assert len(found) == 2 * len(compiled.kernels), report
    for match in found:
        assert int(match["spill"]) == int(match["loads"]) == 0, report


def test_wgmma_source_refuses_other_archs(tmp_path):
    """Compiled for anything but sm_90a, a source with wgmma kernels stops
    with an error saying how to build it."""
    g = DataflowGraph("wgmma")
    WGMMA_CASES["wgmma_bias_gelu_256x128x512"](g, "float16")
    cu = tmp_path / "unit.cu"
    cu.write_text(ZeroCompiler(arch=WGMMA_ARCH).compile(g).source)
    result = subprocess.run(
        [NVCC, "-gencode=arch=compute_90,code=sm_90", "-c", "-o", "unit.o", str(cu)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode != 0
    assert "need sm_90a" in result.stderr


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
