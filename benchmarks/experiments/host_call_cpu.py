"""Where a one-kernel call's host time goes, without a GPU.

The call `y = exe(x, w)` of rms_norm 1x3584 bf16 (the calls suite's first
case), on torch CPU tensors, launched into a stand-in driver
(tests/data/fake_libcuda.c, built here and loaded as libcuda.so.1): every
step of the call path runs as it does on a GPU host except the driver's
own work, the CUDA allocator and torch's stream query (a builtin here).
The executable is made for "device -1", the index torch gives a CPU
tensor, so that the torch path's device check takes them. Prints ns per
call of the whole call and of each piece (best of 7 loops of `CALLS`).

    python benchmarks/experiments/host_call_cpu.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import timeit
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CALLS = 100_000


def _with_fake_driver() -> None:
    """Re-runs this script with the stand-in driver first on the library
    path (the loader reads LD_LIBRARY_PATH once, at the process's start)."""
    if os.environ.get("MOLTEN_FAKE_DRIVER"):
        return
    directory = Path(tempfile.mkdtemp(prefix="fake_driver"))
    compiler = shutil.which("cc") or shutil.which("gcc")
    subprocess.run(
        [compiler, "-O2", "-shared", "-fPIC", "-o", str(directory / "libcuda.so.1")]
        + [str(ROOT / "tests" / "data" / "fake_libcuda.c")],
        check=True,
    )
    env = dict(os.environ, MOLTEN_FAKE_DRIVER="1")
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        [str(directory), os.environ.get("LD_LIBRARY_PATH", "")]
    )
    sys.exit(subprocess.run([sys.executable, *sys.argv], env=env).returncode)


def ns(fn, calls: int = CALLS, loops: int = 7) -> float:
    """The best of `loops` loops' ns per call of `fn()`."""
    timer = timeit.Timer(fn)
    return min(timer.timeit(calls) for _ in range(loops)) / calls * 1e9


def setup() -> types.SimpleNamespace:
    """The rms_norm executable on the stand-in driver, its compiled graph,
    the tensors x, w and an out= tensor: the names of `main`'s rows."""
    import ctypes

    import torch

    import molten
    from molten import ops
    from molten.ir import DataflowGraph, TensorShape
    from molten.runtime import executable as executables
    from molten.runtime import sized

    ctypes.c_int.in_dll(ctypes.CDLL("libcuda.so.1"), "fake_param_count").value = 3
    hidden = 3584

    def rms_norm(tokens: int | str) -> Any:
        g = DataflowGraph("rms")
        x = g.add_input("x", TensorShape([tokens, hidden]), "bfloat16")
        w = g.add_input("w", TensorShape([hidden]), "bfloat16")
        g.add_output(ops.rms_norm(x, w, eps=1e-6))
        return molten.ZeroCompiler(arch="sm_90a").compile(g)

    compiled = rms_norm(1)
    compiled_sized = rms_norm("T")  # one compile for any T
    device = types.SimpleNamespace(make_current=lambda: None)
    executables.runtime_device = sized.runtime_device = lambda device_id: device
    loaded = types.SimpleNamespace(
        source_map=None,
        functions={
            name: 0x1000 + i
            for program in (compiled.program, compiled_sized.program)
            for launch in program
            for i, name in enumerate((launch.kernel, launch.fallback))
        },
    )
    sized.LoadedKernels = lambda compiled, device: loaded
    # torch's current stream, on a CPU build: a builtin of about its cost.
    torch._C._cuda_getCurrentRawStream = abs
    exe = executables.Executable(compiled, -1, loaded)
    exe.auto_graphs = 0  # no capture here: out= calls run as calls
    graphed = executables.Executable(compiled, -1, loaded)  # out= replays
    compiled._executables[None] = exe
    compiled_sized._executables[None] = sized.SizedExecutable(compiled_sized, -1)
    tx = torch.randn(1, hidden).to(torch.bfloat16)
    tw = torch.randn(hidden).to(torch.bfloat16)
    out = torch.empty_like(tx)
    real_device = torch.device
    torch.device = lambda kind, index=None: real_device("cpu")  # cuda:-1
    assert exe(tx, tw).shape == (1, hidden)  # makes the torch path
    assert compiled_sized(tx, tw).shape == (1, hidden)  # the executable of T=1
    graphed(tx, tw)
    # A capture at out='s addresses on torch's stream (1 here): replayed.
    key = (1, tx.data_ptr(), tw.data_ptr(), out.data_ptr())
    graphed._graphs[key] = (None, 0x9999)
    torch.device = real_device
    return types.SimpleNamespace(
        torch=torch,
        compiled=compiled,
        compiled_sized=compiled_sized,
        exe=exe,
        graphed=graphed,
        tx=tx,
        tw=tw,
        out=out,
    )


def rows(s: types.SimpleNamespace) -> dict[str, Any]:
    """The timed calls: the whole call, its pieces, and torch's answers to
    the questions the torch path asks (each as a lambda: the empty lambda
    is the loop's own cost)."""
    torch, compiled, exe, tx, tw, out = s.torch, s.compiled, s.exe, s.tx, s.tw, s.out
    path = exe._torch_path
    sized_exe = s.compiled_sized._executables[None]
    slots = [tx.data_ptr(), tw.data_ptr(), out.data_ptr()]
    prepared = exe._steps[0]
    contiguous = torch.contiguous_format
    shape, bf16 = tuple(tx.shape), torch.bfloat16
    cpu = torch.device("cpu")
    return {
        "compiled(x, w)": lambda: compiled(tx, tw),
        "exe(x, w)": lambda: exe(tx, tw),
        "compiled over T (x, w)": lambda: s.compiled_sized(tx, tw),
        "its SizedExecutable(x, w)": lambda: sized_exe(tx, tw),
        "exe(x, w, out=)": lambda: exe(tx, tw, out=out),
        "exe(x, w, out=), replayed": lambda: s.graphed(tx, tw, out=out),
        "path.arguments": lambda: path.arguments((tx, tw), None, [0, 0, 0]),
        "path.arguments, out=": lambda: path.arguments((tx, tw), out, [0, 0, 0]),
        "exe._capturing(stream)": lambda: s.graphed._capturing(1),
        "exe._run_captured, replayed": lambda: s.graphed._run_captured(slots, 1),
        "prepared(slots, 0)": lambda: prepared(slots, 0),
        "launch ctypes call": lambda: prepared.launch.function(
            *prepared.launch.arguments
        ),
        "torch.empty_like(x, contiguous)": lambda: torch.empty_like(
            tx, memory_format=contiguous
        ),
        "torch.empty_like(x)": lambda: torch.empty_like(tx),
        "torch.empty(shape, dtype, device)": lambda: torch.empty(
            shape, dtype=bf16, device=cpu
        ),
        "x.new_empty(shape)": lambda: tx.new_empty(shape),
        "stream (builtin)": lambda: abs(-1),
        "type(x) is Tensor": lambda: type(tx) is torch.Tensor,
        "x.dtype is bf16": lambda: tx.dtype is bf16,
        "x.shape != shape": lambda: tx.shape != shape,
        "x.requires_grad": lambda: tx.requires_grad,
        "x.get_device()": lambda: tx.get_device(),
        "x.is_cuda": lambda: tx.is_cuda,
        "x.device": lambda: tx.device,
        "x.is_contiguous()": lambda: tx.is_contiguous(),
        "x.data_ptr()": lambda: tx.data_ptr(),
        "x.stride()": lambda: tx.stride(),
        "empty lambda": lambda: None,
    }


COUNTER = """
#include <valgrind/callgrind.h>
void counter_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void counter_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS; }
"""
"""Callgrind's client requests, for Python to count a stretch of its run."""


def _under_callgrind() -> None:
    """Re-runs this script under callgrind, counting nothing until asked."""
    directory = Path(tempfile.mkdtemp(prefix="callgrind"))
    compiler = shutil.which("cc") or shutil.which("gcc")
    (directory / "counter.c").write_text(COUNTER)
    subprocess.run(
        [compiler, "-O2", "-shared", "-fPIC", "-o", str(directory / "libcounter.so")]
        + [str(directory / "counter.c")],
        check=True,
    )
    env = dict(os.environ, MOLTEN_COUNTER=str(directory))
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={directory}/out",
        sys.executable,
        *sys.argv,
    ]
    run = subprocess.run(command, env=env, stderr=subprocess.PIPE, text=True)
    if run.returncode:
        sys.exit(run.stderr)


def instructions(fn, directory: Path, counter: Any, dumps: list[int]) -> float:
    """Instructions per call of `fn()`: callgrind's counts of two loops'
    difference over their calls' (no fixed cost left in)."""
    counts = []
    for calls in (1000, 3000):
        counter.counter_start()
        for _ in range(calls):
            fn()
        counter.counter_stop()
        dumps[0] += 1
        text = (directory / f"out.{dumps[0]}").read_text()
        counts.append(int(text.rpartition("totals:")[2].split()[0]))
    return (counts[1] - counts[0]) / 2000


def main() -> None:
    counting = "--instructions" in sys.argv
    if counting and not os.environ.get("MOLTEN_COUNTER"):
        _with_fake_driver()
        _under_callgrind()
        return
    _with_fake_driver()
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    if counting:
        import ctypes

        directory = Path(os.environ["MOLTEN_COUNTER"])
        counter = ctypes.CDLL(str(directory / "libcounter.so"))
        dumps = [0]
    for name, fn in rows(setup()).items():
        if only and not any(o in name for o in only):
            continue
        if counting:
            count = instructions(fn, directory, counter, dumps)
            print(f"{name:36s} {count:8.0f} instructions", flush=True)
        else:
            print(f"{name:36s} {ns(fn):8.0f} ns", flush=True)


if __name__ == "__main__":
    main()
