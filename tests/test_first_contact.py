"""Molten's announcement example runs exactly as written, and it is the
README's first example. People copy it as it is, so a test runs it as it is:
in a fresh directory, its `.cu` then compiled by nvcc."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

README = Path(__file__).parent.parent / "README.md"

ANNOUNCEMENT = """\
from molten import ZeroCompiler
from molten.ir import DataflowGraph, TensorShape
g = DataflowGraph("fused_rmsnorm")
x = g.add_input("x", TensorShape([2048, 5120]))
w = g.add_input("w", TensorShape([5120]))
out = g.rms_norm(x, w, "norm")
g.add_output(out)
compiler = ZeroCompiler()
kernels = compiler.compile(g) # 3 ops -> 1 kernel
compiler.save(kernels, "output/") # standalone .cu file
"""


def _block(markdown: str, language: str) -> str:
    """The first fenced block of `language` (a regex) in `markdown`."""
    block = re.search(rf"^```{language}\n(.*?)^```", markdown, re.S | re.M)
    assert block, f"the README has a {language} example"
    return block.group(1)


def test_the_readme_opens_with_the_announcement_example():
    assert _block(README.read_text(), "python") == ANNOUNCEMENT


@pytest.fixture
def ran_announcement(tmp_path, monkeypatch):
    """The announcement's namespace after running it in an empty directory."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(ANNOUNCEMENT, "announcement.py", "exec"), namespace)
    return tmp_path, namespace


def test_the_announcement_writes_one_kernel(ran_announcement):
    directory, namespace = ran_announcement
    assert len(namespace["kernels"]) == 1
    assert namespace["out"].name == "norm"
    for suffix in (".cu", ".h"):
        assert (directory / "output" / f"fused_rmsnorm{suffix}").is_file()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_the_announcements_cu_compiles_with_nvcc(ran_announcement):
    directory, namespace = ran_announcement
    arch = namespace["kernels"].arch
    result = subprocess.run(
        [
            "nvcc",
            f"-arch={arch}",
            "-c",
            "-Werror",
            "all-warnings",
            "output/fused_rmsnorm.cu",
            "-o",
            "fused_rmsnorm.o",
        ],
        cwd=directory,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (directory / "fused_rmsnorm.o").stat().st_size > 0


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_the_readmes_cpp_example_builds_against_the_saved_header(ran_announcement):
    """The C++ lines of the README, in a main of their own, built by the
    README's nvcc line against the announcement's output."""
    directory, _ = ran_announcement
    readme = README.read_text()
    snippet = _block(readme, r"c\+\+")
    (directory / "main.cpp").write_text(
        "#include <cuda_runtime.h>\n"
        + snippet.replace(
            "cudaError_t err",
            "int main() {\n  float *d_x = nullptr, "
            "*d_w = nullptr, *d_norm = nullptr;\n  cudaStream_t stream = nullptr;\n"
            "  cudaError_t err",
            1,
        )
        + "  return err == cudaSuccess ? 0 : 1;\n}\n"
    )
    command = re.search(r"`(nvcc [^`]*)` builds it", readme)
    assert command, "the README says how nvcc builds the C++ example"
    result = subprocess.run(
        [*command.group(1).split(), "-o", "main"],
        cwd=directory,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (directory / "main").stat().st_size > 0


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_front_page_and_docs_link_to_what_exists():
    pages = [README, *sorted((README.parent / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
                continue
            if anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.*)$", linked.read_text(), re.M)
                if anchor not in {_slug(h) for h in headings}:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_front_page_is_short():
    """What a newcomer reads first (through the first section) fits a screen."""
    opening = re.split(r"^## ", README.read_text(), flags=re.M)
    assert len("## ".join(opening[:2]).splitlines()) <= 40
