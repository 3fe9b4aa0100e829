"""Autotuning: a kernel's candidate schedules timed on the GPU, the fastest
kept in a tuning database.

`ZeroCompiler(autotune=True)` and `molten tune spec.mlir` run the graph
once per candidate schedule of each kernel that has several (today the
wgmma gemm: `schedule.kernel_schedule.schedule_candidates`), on fresh random inputs
(a fixed seed), the other kernels as the heuristics schedule them. Each
candidate's outputs are checked against the float64 interpreter before it
is timed: a candidate that computes a wrong result is dropped, never
chosen. Timing is the median of CUDA-event times with the L2 flushed
before each call.

The winner is stored in `tuning.json` next to the kernel cache
(`molten.runtime.cache.cache_dir()`), keyed by the kernel's signature (its
body and types, the target and SM count: `kernel_signature`), the device's
name and Molten's version. A later compile of the same kernel takes the
stored schedule without timing anything, so reruns give the same kernel.
A database that cannot be read or written warns once (`CacheWarning`) and
tuning goes on in memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

from molten.conventions import dtype_name
from molten.dialects import kernel
from molten.errors import MoltenError, RuntimeUnavailableError
from molten.runtime.arrays import DeviceArray

DATABASE_NAME = "tuning.json"
SCHEMA = 1
TIMED_CALLS = 20
WARMUP_CALLS = 3
SEED = 0
TOLERANCE = {"float32": 1e-4, "float16": 4e-3, "bfloat16": 3e-2}
"""A candidate's largest relative L2 error against the float64 interpreter,
per output dtype (a few times what the GPU tests allow any kernel)."""


def molten_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("molten")
    except PackageNotFoundError:  # pragma: no cover - running from a checkout
        return "unknown"


def kernel_signature(kfunc: kernel.FuncOp, arch: str, sm_count: int) -> str:
    """What a kernel's tuned schedule depends on: its body and types (not its
    name or schedule), the target and the SM count the candidates were
    chosen for."""
    clone = kfunc.clone()
    clone.schedule = None
    clone.tiling = None
    clone.sym_name = StringAttr("kernel")
    text = f"{clone}\n{arch}\n{sm_count}"
    return hashlib.sha256(text.encode()).hexdigest()


def database_path() -> Path:
    from molten.runtime.cache import cache_dir

    return cache_dir() / DATABASE_NAME


class TuningDatabase:
    """Tuned schedules by (kernel signature, device name, Molten version),
    as JSON in one file, replaced atomically on each write."""

    def __init__(self, path: Path | None = None):
        self.path = path if path is not None else database_path()
        self.entries: dict[str, dict[str, Any]] = self._read()

    @staticmethod
    def key(signature: str, device: str, version: str) -> str:
        return f"{signature}|{device}|{version}"

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            _warn(self.path, "be read", error)
            return {}
        entries = data.get("entries") if isinstance(data, dict) else None
        if data.get("schema") != SCHEMA or not isinstance(entries, dict):
            _warn(self.path, "be read", ValueError("not a Molten tuning database"))
            return {}
        return entries

    def schedule(self, key: str) -> kernel.ScheduleAttr | None:
        """The stored schedule for `key`, or None (also for an entry that no
        longer parses)."""
        entry = self.entries.get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("schedule"), str):
            return None
        from xdsl.parser import Parser

        from molten.context import molten_context

        try:
            parsed = Parser(molten_context(), entry["schedule"]).parse_attribute()
        except Exception:  # a damaged entry is retuned, not fatal
            return None
        return parsed if isinstance(parsed, kernel.ScheduleAttr) else None

    def store(self, key: str, schedule: kernel.ScheduleAttr, record: dict) -> None:
        """Keeps `schedule` for `key` (with what was measured) and writes the
        file, merged with what another process may have written since."""
        self.entries = {**self._read(), **self.entries}
        self.entries[key] = {"schedule": str(schedule), **record}
        data = {"schema": SCHEMA, "entries": self.entries}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", dir=self.path.parent, suffix=".tmp", delete=False
            ) as temporary:
                json.dump(data, temporary, indent=1, sort_keys=True)
            os.replace(temporary.name, self.path)
        except OSError as error:
            _warn(self.path, "be written", error)


_warned: set[tuple[str, str]] = set()


def _warn(path: Path, doing: str, error: BaseException) -> None:
    from molten.runtime.cache import CacheWarning

    if (str(path), doing) in _warned:
        return
    _warned.add((str(path), doing))
    warnings.warn(
        f"molten: the tuning database {path} could not {doing} "
        f"({type(error).__name__}: {error}); tuned schedules are kept in memory",
        CacheWarning,
        stacklevel=3,
    )


@dataclass(frozen=True)
class Trial:
    """One candidate schedule of a kernel, as timed (None: not timed, with
    why in `problem`)."""

    schedule: kernel.ScheduleAttr
    microseconds: float | None
    problem: str | None = None


class Progress:
    """One line on stderr per kernel, redrawn for each candidate."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def show(self, name: str, done: int, total: int, note: str = "") -> None:
        if not self.enabled:
            return
        filled = round(20 * done / max(total, 1))
        bar = "#" * filled + "." * (20 - filled)
        end = "\n" if done == total else ""
        print(
            f"\rmolten tune @{name} [{bar}] {done}/{total} {note}".ljust(100),
            end=end,
            file=sys.stderr,
            flush=True,
        )


class DeviceTimer:
    """Median GPU time of a call, by CUDA events on the device's default
    stream, the L2 flushed (overwritten) before each call."""

    def __init__(self, device_id: int):
        from molten.runtime.device import _driver, check, runtime_device

        self.driver, self.check = _driver(), check
        device = runtime_device(device_id)
        self.stream = device.device.default_stream
        self.handle = int(self.stream.handle)
        attribute = self.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
        l2 = check(self.driver.cuDeviceGetAttribute(attribute, device_id), "L2 size")
        self.flush_bytes = max(2 * int(l2), 1 << 20)
        self.flush = device.allocate(self.flush_bytes, self.stream)
        self.start = check(self.driver.cuEventCreate(0), "event")
        self.end = check(self.driver.cuEventCreate(0), "event")

    def poison(self, ptr: int, nbytes: int) -> None:
        """Fills memory with 0xFF bytes: NaN in f32, f16 and bf16, so that an
        output a kernel leaves unwritten fails the check."""
        self.check(
            self.driver.cuMemsetD8Async(ptr, 0xFF, nbytes, self.handle), "poison"
        )

    def median_us(self, call: Callable[[], Any]) -> float:
        d, check = self.driver, self.check
        for _ in range(WARMUP_CALLS):
            call()
        times = []
        for _ in range(TIMED_CALLS):
            check(
                d.cuMemsetD8Async(
                    int(self.flush.handle), 0, self.flush_bytes, self.handle
                ),
                "L2 flush",
            )
            check(d.cuEventRecord(self.start, self.handle), "event")
            call()
            check(d.cuEventRecord(self.end, self.handle), "event")
            check(d.cuEventSynchronize(self.end), "event")
            times.append(
                check(d.cuEventElapsedTime(self.start, self.end), "event") * 1e3
            )
        return statistics.median(times)


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


@dataclass
class Tuner:
    """Times each candidate schedule of a kernel in the whole graph (a
    `build` of the graph with that schedule), on the current device."""

    graph: Any
    device_id: int
    progress: Progress

    def __post_init__(self):
        from molten.interpreters import interpret
        from molten.interpreters.molten import round_to

        rng = np.random.default_rng(SEED)
        specs = self.graph.inputs
        hosts = [
            round_to(rng.uniform(-1.0, 1.0, t.shape.dims), t.type.element_type)
            for t in specs
        ]
        want = interpret(self.graph, *hosts, reference=True)
        self.want = want if isinstance(want, tuple) else (want,)
        self.inputs = [
            DeviceArray.from_numpy(
                a, dtype_name(t.type.element_type), device=self.device_id
            )
            for a, t in zip(hosts, specs, strict=True)
        ]
        self.timer = DeviceTimer(self.device_id)

    def trials(
        self,
        name: str,
        candidates: list[kernel.ScheduleAttr],
        build: Callable[[kernel.ScheduleAttr], Any],
    ) -> list[Trial]:
        """Each candidate built, checked and timed, in order."""
        found = []
        self.progress.show(name, 0, len(candidates))
        for done, schedule in enumerate(candidates, 1):
            found.append(self._trial(schedule, build))
            note = f"{found[-1].microseconds:.1f} us" if found[-1].microseconds else ""
            self.progress.show(name, done, len(candidates), note)
        return found

    def _trial(self, schedule: kernel.ScheduleAttr, build) -> Trial:
        from molten.errors import MoltenError

        try:
            compiled = build(schedule)
            executable = compiled.executable(self.device_id)
        except (MoltenError, NotImplementedError) as error:
            return Trial(schedule, None, f"does not compile: {error}")
        inputs = self.inputs
        outputs = tuple(
            DeviceArray.empty(spec.shape, spec.dtype, device=self.device_id)
            for spec in compiled.outputs
        )
        for array in outputs:
            self.timer.poison(array.ptr, array.nbytes)
        out = outputs[0] if len(outputs) == 1 else outputs
        stream = self.timer.stream
        executable(*inputs, out=out, stream=stream)
        for spec, got, want in zip(compiled.outputs, outputs, self.want, strict=True):
            error = relative_error(got.numpy(), want)
            if not error <= TOLERANCE[spec.dtype]:
                return Trial(schedule, None, f"wrong: relative error {error:.2e}")
        microseconds = self.timer.median_us(
            lambda: executable(*inputs, out=out, stream=stream)
        )
        return Trial(schedule, microseconds)


def best(trials: list[Trial]) -> Trial | None:
    """The fastest correct trial (the first of equals), or None."""
    timed = [t for t in trials if t.microseconds is not None]
    return min(timed, key=lambda t: t.microseconds) if timed else None  # type: ignore


def tunable_kernels(module: ModuleOp) -> Iterator[kernel.FuncOp]:
    for op in module.walk():
        if isinstance(op, kernel.FuncOp):
            yield op


def record(trial: Trial, trials: list[Trial], device: str) -> dict[str, Any]:
    """What the database keeps beside a winner."""
    return {
        "device": device,
        "microseconds": round(trial.microseconds or 0.0, 2),
        "candidates": len(trials),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


@dataclass
class Autotuner:
    """What `ZeroCompiler(autotune=...)` calls between the outlined kernels
    and their lowering: gives each kernel with several candidate schedules
    (its family rule's `candidates`, at most `candidates` of them) its tuned
    one, from the database, else timed on the current GPU, which must run
    the target's arch."""

    candidates: int
    target: Any
    """The `Target` the kernels are scheduled for."""
    progress: bool = True
    trials: dict[str, list[Trial]] = field(default_factory=dict)
    """Per kernel timed by the last `tune`, its candidates as timed; none for
    a kernel the database had."""

    def tune(
        self, graph: Any, outlined: ModuleOp, build: Callable[[ModuleOp], Any]
    ) -> dict[str, kernel.ScheduleAttr]:
        """The tuned schedules by kernel name, each set on its kernel of
        `outlined`; `build` compiles a copy of `outlined` (some kernels
        scheduled) to the graph it runs."""
        from molten.passes.schedule.kernel_schedule import schedule_candidates

        kernels = {
            k.sym_name.data: found
            for k in tunable_kernels(outlined)
            if len(found := schedule_candidates(k, self.candidates, self.target)) > 1
        }
        if not kernels:
            return {}
        device_id, device = tuning_device(self.target.arch)
        database = TuningDatabase()
        version = molten_version()
        tuner: Tuner | None = None
        tuned: dict[str, kernel.ScheduleAttr] = {}
        self.trials = {}
        for kfunc in tunable_kernels(outlined):
            name = kfunc.sym_name.data
            if name not in kernels:
                continue
            signature = kernel_signature(kfunc, self.target.arch, self.target.sm_count)
            key = database.key(signature, device, version)
            schedule = database.schedule(key)
            if schedule is None:
                if tuner is None:
                    tuner = Tuner(graph, device_id, Progress(self.progress))

                def build_with(candidate, kfunc=kfunc):
                    kfunc.schedule = candidate
                    compiled = build(outlined.clone())
                    kfunc.schedule = None
                    return compiled

                trials = tuner.trials(name, kernels[name], build_with)
                self.trials[name] = trials
                winner = best(trials)
                if winner is None:
                    problems = "; ".join(f"{t.schedule}: {t.problem}" for t in trials)
                    raise MoltenError(
                        f"autotune: no candidate schedule of @{name} computed the "
                        f"graph correctly ({problems})"
                    )
                schedule = winner.schedule
                database.store(key, schedule, record(winner, trials, device))
            kfunc.schedule = schedule
            tuned[name] = schedule
        return tuned


def tuning_device(arch: str) -> tuple[int, str]:
    """The current GPU (its id and name), which tuning for `arch` times on:
    a clear error where there is none, or it does not run `arch`."""
    from molten.passes.schedule.target import device_native_arch
    from molten.runtime.device import current_device_id, runtime_device
    from molten.runtime.loaded_kernels import target_arch

    device_id = current_device_id()
    device = runtime_device(device_id)
    try:
        target_arch(arch, device.arch)
    except MoltenError as error:
        raise RuntimeUnavailableError(
            f"autotune: tuning for {arch} needs a GPU that runs it; device "
            f"{device_id} is {device.arch} (its best target: "
            f"{device_native_arch(device_id)}): {error}"
        ) from error
    return device_id, str(device.device.name)
