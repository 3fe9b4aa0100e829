"""Runs a suite's cases on one GPU: each case is checked first, then timed.

For every case, in one process: Molten's output (written into a buffer
poisoned with NaN) is compared with PyTorch's computed in float64 from the
same inputs; PyTorch eager and torch.compile are compared the same way. A
Molten kernel whose error exceeds the bound is refused: the case records
why and Molten is not timed. Then Molten, eager, torch.compile and the
case's references are timed (`benchmarks.timing`), and the same run's
device-to-device copy bandwidth is measured once per suite.
"""

from __future__ import annotations

import dataclasses
import math
import os
import platform
import subprocess
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

import molten
from benchmarks.cases import Case, minimal_bytes
from benchmarks.timing import Timer
from molten.errors import MoltenError
from molten.passes.schedule.target import current_native_arch

ERROR_FACTOR = 4
"""Molten may be this many times less accurate than PyTorch eager..."""
TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
"""...or within this error relative to the output's largest magnitude,
whichever is larger (two units in the last place for f16/bf16)."""
COPY_SIZES = [2**16 * 4**i for i in range(8)]
"""Copy bandwidth is measured from 64 KiB to 1 GiB; the 1 GiB figure is
the run's copy bandwidth."""


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """max |out - ref| / max |ref|; infinite if `out` has a NaN or an inf."""
    if out.shape != ref.shape:
        return math.inf
    diff = (out.double() - ref).abs().max().item()
    scale = ref.abs().max().item()
    error = diff / scale if scale > 0 else diff
    return error if math.isfinite(error) else math.inf


def environment() -> dict[str, Any]:
    """The device and software a run used."""
    device = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(device)
    from cuda.bindings import driver

    _, driver_version = driver.cuDriverGetVersion()
    return {
        "device": props.name,
        "compute_capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "memory_gib": round(props.total_memory / 2**30, 1),
        "l2_mib": round(props.L2_cache_size / 2**20, 1),
        "cuda_driver": f"{driver_version // 1000}.{driver_version % 1000 // 10}",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": _version("triton"),
        "cuda_core": _version("cuda.core"),
        "molten": molten_version(),
        "tf32": torch.backends.cuda.matmul.allow_tf32,
    }


def _version(module: str) -> str | None:
    try:
        return __import__(module, fromlist=["__version__"]).__version__
    except (ImportError, AttributeError):
        return None


def molten_version() -> str:
    """Molten's version and commit (`MOLTEN_COMMIT`, else git's HEAD)."""
    commit = os.environ.get("MOLTEN_COMMIT")
    if not commit:
        try:
            commit = subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                cwd=Path(__file__).parent,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            commit = "unknown"
    from importlib.metadata import version

    return f"{version('molten')}+{commit}"


def run_suite(
    suite: str,
    cases: list[Case],
    *,
    seed: int = 0,
    budget_s: float = 0.3,
    references: bool = True,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Checks and times `cases` on the current GPU (with their references,
    unless `references` is false); the suite's results."""
    torch.backends.cuda.matmul.allow_tf32 = False  # f32 matmuls stay f32
    torch.backends.cudnn.allow_tf32 = False
    started = datetime.now(UTC)
    env = environment()
    device = torch.device("cuda", torch.cuda.current_device())
    timer = Timer(device, budget_s=budget_s)
    copy = []
    for nbytes in COPY_SIZES:
        samples, tbps = timer.copy_bandwidth(nbytes)
        copy.append(
            {"bytes": nbytes, "gpu_us": samples.to_json(), "tbps": round(tbps, 4)}
        )
    progress(
        f"[{suite}] {env['device']}: copy bandwidth {copy[-1]['tbps']:.2f} TB/s "
        f"(1 GiB), event floor {timer.event_floor_us:.2f} us, L2 flush "
        f"{timer.flush_bytes >> 20} MiB"
    )
    results = []
    for index, case in enumerate(cases, 1):
        if not references:
            case = dataclasses.replace(case, references={})
        record = run_case(case, timer, seed=seed + index)
        results.append(record)
        progress(f"[{suite} {index}/{len(cases)}] {summary_line(record)}")
    return {
        "suite": suite,
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "environment": env,
        "seed": seed,
        "timing": {
            "method": "CUDA events around each call, L2 flushed before each "
            "(a buffer zeroed, then another read: no dirty lines left), calls "
            "queued behind a sleep kernel; median",
            "flush_bytes": timer.flush_bytes,
            "flush_us": round(timer.flush_us, 3),
            "event_floor_us": round(timer.event_floor_us, 3),
            "budget_s": budget_s,
        },
        "copy": copy,
        "copy_tbps": copy[-1]["tbps"],
        "cases": results,
    }


def _in_float64(inputs: list[Any]) -> list[Any]:
    """The inputs of a float64 reference: floats widened, ids as they are."""
    return [t.double() if t.is_floating_point() else t for t in inputs]


def run_case(case: Case, timer: Timer, *, seed: int) -> dict[str, Any]:
    """One case: checked, then timed (see the module docstring)."""
    graph = case.graph()
    record: dict[str, Any] = {
        "id": case.id,
        "op": case.op,
        "shape": list(case.shape),
        "dtype": case.dtype,
        "bytes": case.touched or minimal_bytes(graph),
        "flops": case.flops,
        "compile_mode": case.compile_mode,
    }
    inputs = case.make_inputs(timer.device, seed)
    compiled = _compile_molten(graph, record)
    torch._dynamo.reset()  # each case compiles afresh, never hits a recompile limit
    compiled_torch = torch.compile(
        case.torch, mode=case.compile_mode, dynamic=False, fullgraph=True
    )
    implementations: dict[str, Callable[[], Any]] = {
        "molten": lambda: compiled(*inputs),
        "eager": lambda: case.torch(*inputs),
        "compile": lambda: compiled_torch(*inputs),
    }
    implementations |= {
        name: (lambda f=f: f(*inputs)) for name, f in case.references.items()
    }
    with torch.no_grad():
        _check(case, inputs, compiled, compiled_torch, record)
        if not record["check"]["molten_ok"]:
            del implementations["molten"]
        elif case.dynamic:
            dynamic = _checked_dynamic(case, inputs, record)
            if dynamic is not None:
                implementations["molten-dynamic"] = lambda: dynamic(*inputs)
        if case.backend:
            backend = _checked_backend(case, inputs, record)
            if backend is not None:
                implementations["molten-backend"] = lambda: backend(*inputs)
        if record["check"]["molten_ok"] and case.graphed:
            replay = _checked_graph(case, inputs, compiled, record)
            if replay is not None:
                implementations["molten-graph"] = replay
                graphed = compiled.graphed()
                implementations["molten-graphed"] = lambda: graphed(*inputs)
                into = torch.empty_like(case.torch(*inputs))
                implementations["molten-out"] = lambda: compiled(*inputs, out=into)
        record["timings"] = {}
        for name, fn in list(implementations.items()):
            try:
                record["timings"][name] = {"gpu_us": timer.gpu_time(fn).to_json()}
            except RuntimeError as error:  # e.g. calls that block the host
                record.setdefault("untimed", {})[name] = str(error)
                del implementations[name]
        for name, times in timer.call_times(implementations).items():
            record["timings"][name]["call_us"] = times.latency.to_json()
            record["timings"][name]["host_us"] = times.host.to_json()
    return record


def _compile_molten(graph: Any, record: dict[str, Any]) -> Any:
    """The case's graph compiled and loaded for the current GPU, or None
    (with the reason in `record`) where Molten cannot compile it."""
    begin = time.perf_counter()
    try:
        compiled = molten.ZeroCompiler(arch=current_native_arch()).compile(graph)
        compiled.executable()
    except (MoltenError, NotImplementedError) as error:
        record["molten_unavailable"] = f"{type(error).__name__}: {error}"
        return None
    record["molten_compile_s"] = round(time.perf_counter() - begin, 2)
    record["molten_kernels"] = [
        {"name": k.name, "grid": list(k.grid), "block": list(k.block)}
        for k in compiled.kernels
    ]
    return compiled


def _check(
    case: Case,
    inputs: list[torch.Tensor],
    compiled: Any,
    compiled_torch: Callable[..., Any],
    record: dict[str, Any],
) -> None:
    reference = case.torch(*_in_float64(inputs))
    eager = case.torch(*inputs)
    errors = {"eager": relative_error(eager, reference)}
    begin = time.perf_counter()
    errors["compile"] = relative_error(compiled_torch(*inputs), reference)
    torch.cuda.synchronize()
    record["torch_compile_s"] = round(time.perf_counter() - begin, 2)
    if compiled is not None:
        # NaN, or all bits set (-1) for integer outputs (positions).
        poison = math.nan if eager.is_floating_point() else -1
        poisoned = torch.full_like(eager, poison)
        try:
            compiled(*inputs, out=poisoned)
            errors["molten"] = relative_error(poisoned, reference)
        except MoltenError as error:  # e.g. a launch the driver refused
            record["molten_unavailable"] = f"{type(error).__name__}: {error}"
    bound = max(ERROR_FACTOR * errors["eager"], TOLERANCE[case.dtype])
    molten_ok = errors.get("molten", math.inf) <= bound
    record["check"] = {
        "reference": "PyTorch in float64 on the same inputs",
        "metric": "max |out - ref| / max |ref|",
        "bound": bound,
        "errors": {k: (v if math.isfinite(v) else "inf") for k, v in errors.items()},
        "molten_ok": molten_ok,
        "compile_ok": errors["compile"] <= bound,
    }
    if "molten" in errors and not molten_ok:
        record["refused"] = (
            f"Molten's error {errors['molten']:.3g} exceeds the bound {bound:.3g}; "
            "not timed"
        )


_DYNAMIC: dict[str, Any] = {}
"""The one-compile graphs of the dynamic cases, by graph name: compiled at
the first case of each, reused by the others."""


def _checked_dynamic(
    case: Case, inputs: list[torch.Tensor], record: dict[str, Any]
) -> Any:
    """The case's graph compiled once for every token count (shared with the
    other cases of its op, width and dtype), where it compiles to one graph
    and its output (poisoned first) is within the call's bound; else None,
    with the reason in `record`."""
    graph = case.dynamic_graph()
    compiled = _DYNAMIC.get(graph.name)
    if compiled is None:
        begin = time.perf_counter()
        compiled = molten.ZeroCompiler(arch=current_native_arch()).compile(graph)
        if not isinstance(compiled, molten.CompiledGraph):
            record["refused_dynamic"] = "compiles per token count, not once"
            return None
        compiled.executable()
        record["molten_dynamic_compile_s"] = round(time.perf_counter() - begin, 2)
        _DYNAMIC[graph.name] = compiled
    out = torch.full_like(case.torch(*inputs), math.nan)
    compiled(*inputs, out=out)
    error = relative_error(out, case.torch(*_in_float64(inputs)))
    record["check"]["errors"]["molten-dynamic"] = (
        error if math.isfinite(error) else "inf"
    )
    if error <= record["check"]["bound"]:
        return compiled
    record["refused_dynamic"] = (
        f"Molten's one-compile graph's error {error:.3g} exceeds the bound; not timed"
    )
    return None


def _checked_backend(
    case: Case, inputs: list[torch.Tensor], record: dict[str, Any]
) -> Callable[..., Any] | None:
    """The case's PyTorch function through torch.compile(backend="molten"),
    where its output is within the call's bound; the backend's warnings
    (a part that fell back to eager) are recorded. Else None, with the
    reason in `record`."""
    from molten.torch_backend import MoltenBackendWarning

    begin = time.perf_counter()
    compiled = torch.compile(case.torch, backend="molten", dynamic=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = compiled(*inputs)
    torch.cuda.synchronize()
    record["molten_backend_compile_s"] = round(time.perf_counter() - begin, 2)
    said = [str(w.message) for w in caught if w.category is MoltenBackendWarning]
    if said:
        record["backend_fallbacks"] = said
    error = relative_error(out, case.torch(*_in_float64(inputs)))
    record["check"]["errors"]["molten-backend"] = (
        error if math.isfinite(error) else "inf"
    )
    if error <= record["check"]["bound"]:
        return compiled
    record["refused_backend"] = (
        f"torch.compile(backend='molten')'s error {error:.3g} exceeds the bound; "
        "not timed"
    )
    return None


def _checked_graph(
    case: Case, inputs: list[torch.Tensor], compiled: Any, record: dict[str, Any]
) -> Callable[[], Any] | None:
    """The replay of Molten's call captured as a CUDA graph, where its output
    (poisoned first) is within the same bound as the call's; else None,
    with the reason in `record`."""
    out = torch.full_like(case.torch(*inputs), math.nan)
    captured = compiled.cuda_graph(*inputs, out=out)
    out.fill_(math.nan)
    captured.replay()
    reference = case.torch(*_in_float64(inputs))
    error = relative_error(out, reference)
    graphed = compiled.graphed()
    graphed(*inputs).fill_(math.nan)  # captured; the next call replays into it
    error = max(error, relative_error(graphed(*inputs), reference))
    into = torch.full_like(out, math.nan)
    for _ in range(3):  # a call, its capture, a replay
        into.fill_(math.nan)
        compiled(*inputs, out=into)
        error = max(error, relative_error(into, reference))
    record["check"]["errors"]["molten-graph"] = error if math.isfinite(error) else "inf"
    if error <= record["check"]["bound"]:
        return captured.replay
    record["refused_graph"] = (
        f"Molten's CUDA graph's error {error:.3g} exceeds the bound; not timed"
    )
    return None


def summary_line(record: dict[str, Any]) -> str:
    """One progress line: the case, its check and its median GPU times."""
    check = record["check"]
    if "molten_unavailable" in record:
        verdict = f"molten unavailable ({record['molten_unavailable']})"
    elif "refused" in record:
        verdict = f"REFUSED: {record['refused']}"
    else:
        error = _error_text(check["errors"]["molten"])
        verdict = f"check ok ({error} <= {check['bound']:.2g})"
    times = ", ".join(
        f"{name} {t['gpu_us']['median']:.1f} us"
        for name, t in record["timings"].items()
    )
    untimed = "".join(
        f"; {name} untimed ({reason})"
        for name, reason in record.get("untimed", {}).items()
    )
    return f"{record['id']}: {verdict}; {times}{untimed}"


def _error_text(error: float | str) -> str:
    return error if isinstance(error, str) else f"{error:.2g}"
