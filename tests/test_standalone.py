"""examples/standalone: the seed kernel and the decoder layer driven from
C++, without Python.

The builds run wherever nvcc is installed; running them needs a GPU (marker
`gpu`; found through nvidia-smi, no torch involved)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"
NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")


def _gpu_arch() -> str | None:
    """The first GPU's arch (e.g. sm_90), or None without a GPU and driver."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    result = subprocess.run(
        [smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0 or not result.stdout.strip():
        return None
    major, minor = result.stdout.split()[0].split(".")
    return f"sm_{major}{minor}"


def _copy_examples(tmp_path: Path, *files: str) -> Path:
    """A copy of examples/standalone and of `files` beside it, to build in
    (the source tree stays clean)."""
    work = tmp_path / "examples"
    shutil.copytree(EXAMPLES / "standalone", work / "standalone")
    for name in files:
        shutil.copy(EXAMPLES / name, work / name)
    return work


def _build(tmp_path: Path, arch: str) -> Path:
    """Builds a copy of the seed example."""
    work = _copy_examples(tmp_path, "fused_rmsnorm.cu", "fused_rmsnorm.h")
    result = subprocess.run(
        ["make", "-C", str(work / "standalone"), f"ARCH={arch}", f"NVCC={NVCC}"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return work / "standalone" / "standalone"


@needs_nvcc
def test_standalone_builds(tmp_path):
    assert _build(tmp_path, "sm_80").exists()


def _run_on_gpu(build, tmp_path: Path) -> str:
    """The output of the binary `build` makes for this GPU, which must exit
    0 (a skip without a GPU)."""
    arch = _gpu_arch()
    if arch is None:
        pytest.skip("no CUDA GPU or driver")
    binary = build(tmp_path, arch)
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@pytest.mark.gpu
@needs_nvcc
def test_standalone_runs_and_matches_the_cpu_loop(tmp_path):
    assert "PASS" in _run_on_gpu(_build, tmp_path)


def _build_any_tokens(tmp_path: Path, arch: str) -> Path:
    """Compiles examples/rmsnorm_any_tokens.mlir (T named) and builds
    examples/standalone/any_tokens.cpp against it, in a copy."""
    work = _copy_examples(tmp_path, "rmsnorm_any_tokens.mlir")
    result = subprocess.run(
        ["make", "-C", str(work / "standalone"), "any-tokens", f"ARCH={arch}"]
        + [f"NVCC={NVCC}", f"PYTHON={sys.executable}"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return work / "standalone" / "any_tokens" / "any_tokens"


@needs_nvcc
def test_the_any_tokens_driver_builds_against_a_launcher_taking_t(tmp_path):
    binary = _build_any_tokens(tmp_path, "sm_80")
    header = (binary.parent / "rmsnorm_any_tokens.h").read_text()
    assert "const int64_t T, cudaStream_t stream);" in header
    assert binary.exists()


@pytest.mark.gpu
@needs_nvcc
def test_one_launcher_runs_every_token_count_from_cpp(tmp_path):
    output = _run_on_gpu(_build_any_tokens, tmp_path)
    assert "T = 4099" in output and "PASS" in output


def _build_layer(tmp_path: Path, model: str, tokens: int) -> Path:
    """Compiles the decoder layer (examples/decoder_layer.py, for sm_90a)
    and builds examples/standalone/decoder_layer.cpp against it, in a copy."""
    work = _copy_examples(tmp_path, "decoder_layer.py")
    result = subprocess.run(
        ["make", "-C", str(work / "standalone"), "layer", f"MODEL={model}"]
        + [f"TOKENS={tokens}", f"NVCC={NVCC}", f"PYTHON={sys.executable}"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return work / "standalone" / "layer" / f"{model}-{tokens}" / "decoder_layer"


@needs_nvcc
def test_the_layer_driver_builds_from_the_header_alone(tmp_path):
    """The driver reads every size from the generated header's macros (Qwen2:
    with the q, k and v biases the header declares)."""
    assert _build_layer(tmp_path, "qwen2.5-7b", 17).exists()


@pytest.mark.gpu
@needs_nvcc
@pytest.mark.parametrize(
    ("model", "eps"), [("qwen2.5-7b", "1e-6"), ("llama3-8b", "1e-5")]
)
def test_the_layer_runs_from_cpp_and_matches_the_cpu_layer(tmp_path, model, eps):
    if _gpu_arch() != "sm_90":
        pytest.skip("the layer is compiled for sm_90a: needs an H100 or H200")
    binary = _build_layer(tmp_path, model, 17)
    run = subprocess.run(
        [str(binary), eps], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS" in run.stdout
    assert "replayed as a CUDA graph: relative L2 error" in run.stdout  # captured
    print(run.stdout)
