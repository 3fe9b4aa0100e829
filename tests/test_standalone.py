"""examples/standalone: the seed kernel driven from C++, without Python.

The build runs wherever nvcc is installed; running it needs a GPU (marker
`gpu`; found through nvidia-smi, no torch involved)."""

import shutil
import subprocess
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


def _build(tmp_path: Path, arch: str) -> Path:
    """Builds a copy of the example (the source tree stays clean)."""
    work = tmp_path / "examples"
    shutil.copytree(EXAMPLES / "standalone", work / "standalone")
    for name in ("fused_rmsnorm.cu", "fused_rmsnorm.h"):
        shutil.copy(EXAMPLES / name, work / name)
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


@pytest.mark.gpu
@needs_nvcc
def test_standalone_runs_and_matches_the_cpu_loop(tmp_path):
    arch = _gpu_arch()
    if arch is None:
        pytest.skip("no CUDA GPU or driver")
    binary = _build(tmp_path, arch)
    run = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "PASS" in run.stdout
