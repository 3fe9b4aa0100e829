"""Every kernel Molten emits compiles with nvcc for sm_80 and sm_90, warnings
treated as errors and no register spills, except a few bytes in kernels made
to fit several blocks per SM; registers and spills per kernel are written to
tests/logs/ptxas.log. The sweeps compile device code alone (a fatbin: the
host compile of each batch cost as much as its kernels); the host launchers
compile as C++ in the representative cases, one per distinct set of
runtime calls (test_launchers_compile_as_host_code). Skipped where nvcc is
absent."""

import functools
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
from kernel_cases import (
    CASES,
    DTYPES,
    REPRESENTATIVES,
    WGMMA_ARCH,
    WGMMA_CASES,
    WGMMA_DTYPES,
    WGMMA_REPRESENTATIVES,
    case_group,
    case_params,
    compiled_case,
    gemm_bias_gelu,
    nvcc_batch,
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
    source: str,
    tmp_path: Path,
    strict: bool = True,
    archs: tuple[str, ...] = ARCHS,
    ptxas: str | None = None,
    device_only: bool = False,
) -> str:
    """Compiles for every arch in `archs`; returns ptxas's report. `strict`:
    any register spill is an error; `ptxas` replaces ptxas's options;
    `device_only`: the kernels alone, to a fatbin (no host compile)."""
    cu = tmp_path / "unit.cu"
    cu.write_text(source)
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
    output = ["-fatbin", "-o", str(tmp_path / "unit.fatbin")]
    if not device_only:
        output = ["-c", "-o", str(tmp_path / "unit.o")]
    result = subprocess.run(
        [
            NVCC,
            *gencode,
            *output,
            "-Werror",
            "all-warnings",
            "-Xptxas",
            ptxas or ("-v,-warn-spills,-Werror" if strict else "-v"),
            str(cu),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


def kernel_names(compiled) -> set[str]:
    """Each kernel, and the scalar variant of each with vector accesses."""
    return {k.name for k in compiled.kernels} | {
        k.scalar_variant for k in compiled.kernels if k.scalar_variant
    }


_INCLUDES = re.compile(r"^#.*^#include [^\n]*\n", re.S | re.M)


def split_includes(source: str) -> tuple[str, str]:
    """A generated unit as its #include block (from its first preprocessor
    line through its last #include) and the rest (the comment above the
    block, then everything after it)."""
    block = _INCLUDES.search(source)
    assert block, "a generated unit includes the CUDA headers"
    return block.group(0), source[: block.start()] + source[block.end() :]


@pytest.fixture(scope="session")
def nvcc_batches(tmp_path_factory):
    """`report(key, sources, archs)`: ptxas's report of the units `sources`
    compiled by nvcc (once per `key`), or None where nvcc failed.

    The units of one #include block (the same, byte for byte) are one
    translation unit, compiled by one nvcc run: their #include block once,
    then the rest of each unit, unchanged, in a namespace of its own; the
    report is those runs' reports, one after another. Every kernel and
    launcher name starts with its graph's name, so the units cannot
    collide; a unit's test compiles it alone when its batch fails, so that
    the failure names its case."""
    reports: dict[str, str | None] = {}

    def report(key: str, sources: list[str], archs: tuple[str, ...]) -> str | None:
        if key in reports:
            return reports[key]
        by_head: dict[str, list[str]] = {}
        for head, body in map(split_includes, sources):
            by_head.setdefault(head, []).append(body)
        reports[key] = None
        directory = tmp_path_factory.mktemp("nvcc-" + re.sub(r"\W", "-", key))
        found = []
        for n, (head, bodies) in enumerate(by_head.items()):
            source = head + "".join(
                f"namespace molten_unit{i} {{\n{body}}}  // molten_unit{i}\n"
                for i, body in enumerate(bodies)
            )
            unit = directory / f"head{n}"
            unit.mkdir()
            try:
                # Spills are checked per kernel by the tests (some may spill
                # a little); any other ptxas warning fails the batch.
                found.append(
                    compile_unit(
                        source, unit, archs=archs, ptxas="-v,-Werror", device_only=True
                    )
                )
            except AssertionError as error:
                warnings.warn(
                    f"nvcc failed on the batch {key}; its cases compile alone: "
                    f"{str(error)[:2000]}",
                    stacklevel=1,
                )
                return None
        reports[key] = "".join(found)
        return reports[key]

    return report


@pytest.mark.sweep
@pytest.mark.parametrize(("case", "dtype"), case_params(CASES, DTYPES))
def test_kernels_compile(case, dtype, tmp_path, nvcc_batches):
    compiled = compiled_case(case, dtype)
    forced = set(_FORCED.findall(compiled.source))
    batch = nvcc_batch(case)
    report = nvcc_batches(
        f"{batch[0]}/{dtype}",
        [compiled_case(mate, dtype).source for mate in batch],
        ARCHS,
    )
    if report is None:  # its batch failed: alone, the error is this case's
        report = compile_unit(compiled.source, tmp_path, strict=not forced)
    names = kernel_names(compiled)
    found = [m for m in _PTXAS.finditer(report) if m["name"] in names]
    assert len(found) == len(names) * len(ARCHS), report
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
WGMMA_BATCH = [*sorted(WGMMA_CASES), BENCHMARK_GEMM]
SERIALIZED = "wgmma.mma_async instructions are serialized"


@functools.cache
def compiled_wgmma(case: str, dtype: str):
    if case != BENCHMARK_GEMM:
        return compiled_case(case, dtype, WGMMA_ARCH)
    g = DataflowGraph(case)
    gemm_bias_gelu(4096, 4096, 4096)(g, dtype)
    return ZeroCompiler(arch=WGMMA_ARCH).compile(g)


@pytest.mark.sweep
@pytest.mark.parametrize(("case", "dtype"), case_params(WGMMA_BATCH, WGMMA_DTYPES))
def test_wgmma_kernels_compile(case, dtype, tmp_path, nvcc_batches):
    """The sm_90a gemms and attentions compile for sm_90a with no spill, and
    ptxas keeps their wgmmas in flight: it reports (C7514 and its kin) when
    it has to serialize them, which costs a third of their speed."""
    compiled = compiled_wgmma(case, dtype)
    assert "wgmma.mma_async" in compiled.source
    archs = (WGMMA_ARCH,)
    report = nvcc_batches(
        f"{WGMMA_ARCH}/{dtype}",
        [compiled_wgmma(mate, dtype).source for mate in WGMMA_BATCH],
        archs,
    )
    if report is None or SERIALIZED in report:  # which unit's is it?
        report = compile_unit(compiled.source, tmp_path, archs=archs)
    assert SERIALIZED not in report, report
    names = kernel_names(compiled)
    found = [m for m in _PTXAS.finditer(report) if m["name"] in names]
    # each gemm kernel and its SIMT variant for misaligned operands
    gemms = [k for k in compiled.kernels if k.scalar_variant]
    assert len(names) == len(compiled.kernels) + len(gemms)
    assert case.startswith("wgmma_attention") or gemms == list(compiled.kernels)
    assert len(found) == len(names), report
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


@pytest.mark.sweep
@pytest.mark.parametrize(
    ("cases", "arch"),
    [
        # In the xdist group of most of the representatives' bf16 cases (5
        # of the sm_90 ones, all the sm_90a ones): their compiles are that
        # worker's already (kernel_cases.compiled_case).
        pytest.param(
            REPRESENTATIVES,
            "sm_90",
            marks=pytest.mark.xdist_group(case_group(REPRESENTATIVES[0], "bfloat16")),
        ),
        pytest.param(
            WGMMA_REPRESENTATIVES,
            WGMMA_ARCH,
            marks=pytest.mark.xdist_group(
                case_group(WGMMA_REPRESENTATIVES[0], "bfloat16")
            ),
        ),
    ],
)
def test_launchers_compile_as_host_code(cases, arch, tmp_path):
    """The host launchers of the representative cases (one per distinct set
    of runtime calls and device helpers: kernel_cases.REPRESENTATIVES), bf16,
    compile as C++ with warnings as errors, in one unit, a unit per distinct
    #include block. Their device code goes through nvcc's front end alone
    (-fdevice-syntax-only, its warnings still errors): the sweeps above
    compile every case's device code, these included, for the same virtual
    archs (compute_90, compute_90a); generating it again here was nearly
    half of this test's time (sm_90 unit: 10.0 CPU-seconds, 6.1 without)."""
    by_head: dict[str, list[str]] = {}
    for case in cases:
        head, body = split_includes(compiled_case(case, "bfloat16", arch).source)
        by_head.setdefault(head, []).append(body)
    virtual = f"compute_{arch[3:]}"
    for n, (head, bodies) in enumerate(by_head.items()):
        cu = tmp_path / f"unit{n}.cu"
        cu.write_text(
            head
            + "".join(
                f"namespace molten_unit{i} {{\n{body}}}  // molten_unit{i}\n"
                for i, body in enumerate(bodies)
            )
        )
        result = subprocess.run(
            [
                NVCC,
                f"-gencode=arch={virtual},code={virtual}",
                "-fdevice-syntax-only",
                "-c",
                "-Werror",
                "all-warnings",
                "-o",
                str(tmp_path / f"unit{n}.o"),
                str(cu),
            ],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stderr


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
