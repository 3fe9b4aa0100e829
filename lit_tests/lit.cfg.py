# lit configuration of Molten's FileCheck tests, modelled on xDSL's
# tests/filecheck/lit.cfg.
#
# Run from the repository root, with molten-opt and filecheck on PATH:
#
#   lit -v lit_tests

import atexit
import os
import runpy
import shutil
import subprocess
import tempfile
import time

import lit.formats

config.name = "Molten"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "tool_server.py", "Output"]

# The installed molten-opt and filecheck come from the caller's PATH.
config.environment["PATH"] = os.environ["PATH"]


def start_tool_server():
    """Runs molten-opt and filecheck through tool_server.py: a folder of
    clients named after them goes first on the tests' PATH, and each call
    runs the installed script in a child forked from one server that has
    imported them (the same script, arguments, streams, directory and
    environment, without the imports each new process paid for). Off with
    MOLTEN_LIT_FORK=0, or where the server does not start."""
    if os.environ.get("MOLTEN_LIT_FORK") == "0":
        return
    scripts, python = {}, None
    for tool in ("molten-opt", "filecheck"):
        path = shutil.which(tool, path=os.environ["PATH"])
        with open(path or os.devnull, "rb") as f:
            shebang = f.readline()
        # A script of the interpreter molten-opt's runs in (pip's console
        # scripts: "#!/path/to/python"); any other tool runs as a process.
        interpreter = shebang[2:].decode(errors="replace").strip()
        if shebang.startswith(b"#!") and os.path.isabs(interpreter):
            python = python or interpreter
            if interpreter == python:
                scripts[tool] = path
    if "molten-opt" not in scripts:
        return
    folder = tempfile.mkdtemp(prefix="molten-lit-")
    sock = os.path.join(folder, "sock")
    server_path = os.path.join(os.path.dirname(__file__), "tool_server.py")
    server = subprocess.Popen(
        [
            python,
            server_path,
            sock,
            *(f"{tool}={path}" for tool, path in scripts.items()),
        ],
        env=dict(config.environment),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )

    def stop():
        server.terminate()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    deadline = time.monotonic() + 60
    while not os.path.exists(sock):
        if server.poll() is not None or time.monotonic() > deadline:
            lit_config.warning(
                "lit's tool server did not start; tools run as processes"
            )
            return
        time.sleep(0.05)
    server_module = runpy.run_path(server_path)  # its client_source
    for tool in scripts:
        client = os.path.join(folder, tool)
        with open(client, "w") as f:
            f.write(server_module["client_source"](python, sock, tool))
        os.chmod(client, 0o755)
    config.environment["PATH"] = os.pathsep.join([folder, os.environ["PATH"]])


start_tool_server()

# custom -> (custom parser) -> generic printer -> generic parser -> custom
# printer -> FileCheck: the CHECK lines are the custom form, reached through
# the generic form, so both parsers and both printers run.
config.substitutions.append(
    (
        "MOLTEN_ROUNDTRIP",
        "molten-opt %s --split-input-file --print-op-generic"
        " | molten-opt --split-input-file | filecheck %s",
    )
)
# custom -> generic printer -> FileCheck on the CHECK-GENERIC lines: what the
# custom parser built, properties and all, spelled out.
config.substitutions.append(
    (
        "MOLTEN_GENERIC_ROUNDTRIP",
        "molten-opt %s --split-input-file --print-op-generic"
        " | filecheck %s --check-prefix=CHECK-GENERIC",
    )
)
# custom -> custom printer -> custom parser -> custom printer -> FileCheck: the
# custom printer's output is itself valid input (the two substitutions above
# never feed the custom printer's text back to a parser).
config.substitutions.append(
    (
        "MOLTEN_CUSTOM_ROUNDTRIP",
        "molten-opt %s --split-input-file"
        " | molten-opt --split-input-file | filecheck %s",
    )
)

# The pipelines of molten/pipeline.py, so that a test of "the default pipeline"
# runs the pipeline the compiler runs (lit runs in the environment where
# molten is installed, as molten-opt does).
from molten.pipeline import (  # noqa: E402
    DEFAULT_PIPELINE,
    KERNEL_LEVEL_PIPELINE,
    MOLTEN_PIPELINE,
)

config.substitutions.append(("MOLTEN_DEFAULT_PIPELINE", DEFAULT_PIPELINE))
config.substitutions.append(("MOLTEN_LEVEL_PIPELINE", MOLTEN_PIPELINE))
config.substitutions.append(("MOLTEN_KERNEL_LEVEL_PIPELINE", KERNEL_LEVEL_PIPELINE))

# The default pipeline as the compiler runs it for an sm_90a device
# (ZeroCompiler(arch="sm_90a") attaches that target to the module: its
# tensor-core gemms on wgmma). Quote it on a RUN line: -p 'MOLTEN_SM90A_PIPELINE'.
config.substitutions.append(
    ("MOLTEN_SM90A_PIPELINE", f'attach-target{{target="sm_90a"}},{DEFAULT_PIPELINE}')
)
