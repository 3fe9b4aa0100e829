"""lit's fork server (lit_tests/tool_server.py) runs molten-opt and filecheck
as a new process of the installed script does: the same stdout, stderr and
exit status, for input from a file or stdin, a pass pipeline and a target,
errors, argparse's exits and an environment variable of the call's own."""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "lit_tests" / "tool_server.py"
TOOLS = {tool: shutil.which(tool) for tool in ("molten-opt", "filecheck")}
pytestmark = pytest.mark.skipif(
    None in TOOLS.values(), reason="molten-opt or filecheck is not installed"
)

BAD_SPEC = """\
func.func @g(%x: tensor<4x8xf32>, %w: tensor<9xf32>) -> tensor<4x8xf32> {
  %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
"""


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    """A folder of the server's clients (named molten-opt and filecheck),
    as lit.cfg.py makes it."""
    folder = tmp_path_factory.mktemp("tool-server")
    sock = folder / "sock"
    server = subprocess.Popen(
        [
            sys.executable,
            str(SERVER),
            str(sock),
            *(f"{tool}={path}" for tool, path in TOOLS.items()),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not sock.exists():
            assert server.poll() is None, "the tool server ended"
            assert time.monotonic() < deadline, "the tool server did not start"
            time.sleep(0.05)
        client_source = runpy.run_path(str(SERVER))["client_source"]
        for tool in TOOLS:
            client = folder / tool
            client.write_text(client_source(sys.executable, str(sock), tool))
            client.chmod(0o755)
        yield folder
    finally:
        server.terminate()
        server.wait()


def both(clients, tool, *args, stdin=None, env=None, cwd=None):
    """The call run by the installed script and through the server."""
    runs = []
    for path in (TOOLS[tool], clients / tool):
        runs.append(
            subprocess.run(
                [str(path), *map(str, args)],
                input=stdin,
                capture_output=True,
                text=True,
                env={**os.environ, **(env or {})},
                cwd=cwd,
            )
        )
    process, served = runs
    assert (served.returncode, served.stdout, served.stderr) == (
        process.returncode,
        process.stdout,
        process.stderr,
    )
    return process


def test_a_pipeline_and_the_cuda_target(clients):
    spec = ROOT / "examples" / "fused_rmsnorm.mlir"
    run = both(clients, "molten-opt", spec, "-p", "molten-decompose,canonicalize")
    assert run.returncode == 0 and "molten.rsqrt" in run.stdout
    from molten.pipeline import DEFAULT_PIPELINE

    run = both(clients, "molten-opt", spec, "-p", DEFAULT_PIPELINE, "-t", "cuda")
    assert run.returncode == 0 and "__global__" in run.stdout


def test_stdin_split_input_and_a_relative_path(clients, tmp_path):
    source = (ROOT / "lit_tests" / "passes" / "cse-dce.mlir").read_text()
    run = both(clients, "molten-opt", "--split-input-file", stdin=source)
    assert run.returncode == 0 and "// -----" in run.stdout
    (tmp_path / "bad.mlir").write_text(BAD_SPEC)
    run = both(clients, "molten-opt", "bad.mlir", cwd=tmp_path)
    assert run.returncode == 1 and "bad.mlir:2:" in run.stderr


def test_argparse_exits_and_the_calls_environment(clients):
    run = both(clients, "molten-opt", "--help", env={"COLUMNS": "1000"})
    assert run.returncode == 0 and "usage: molten-opt" in run.stdout
    run = both(clients, "molten-opt", "--no-such-option")
    assert run.returncode == 2 and "unrecognized arguments" in run.stderr


def test_filecheck_passes_and_fails(clients, tmp_path):
    checks = tmp_path / "checks.txt"
    checks.write_text("CHECK: hello\nCHECK-NEXT: world\n")
    assert both(clients, "filecheck", checks, stdin="hello\nworld\n").returncode == 0
    run = both(clients, "filecheck", checks, stdin="hello\nthere\n")
    assert run.returncode == 1 and run.stderr
