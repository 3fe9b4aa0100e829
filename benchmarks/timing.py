"""How a call is timed: GPU time with CUDA events and the L2 flushed, and the
call latency a Python caller sees.

GPU time per call. Each repetition zeroes a buffer of at least four times
the L2 cache (so the call starts from a cold L2, as the first touch of a
tensor in a real model does), then reads another as large, so that the
zeroing's dirty lines are written back to DRAM before the call rather than
during it (on the H100 they added 7 us to a 32 MiB GEMV, 4 us to cuBLAS's,
3.6 us to a 16 MiB copy: a write-back the call did not cause), then
records a start event, makes the call and records an end event; the
figure is the median over the repetitions.
Repetitions are enqueued in groups behind a `torch.cuda._sleep` kernel long
enough that the host has queued the whole group before the GPU reaches it
(groups of 25, fewer where that many calls' launches overflow the device's
queue and block the host):
the events then time the call's kernels back to back, without the host's
launch overhead between them. A group whose sleep ended before the host had
queued it is discarded and re-run behind a longer sleep, so that condition
is checked, not assumed.

Call latency. The wall-clock time per call of many calls made back to back
from Python, synchronized once at the end, with the L2 warm: host overhead
or GPU time, whichever bounds the call, as in a decode loop. The median of
several such loops, the implementations of a case taking turns.

Host time. The wall-clock time per call of `HOST_BURST` calls near the
start of each such loop, issued shortly after a synchronize: the host's own cost of a
call (checks, allocations, launches), which the GPU hides only when its
work per call takes longer.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import torch

MIN_FLUSH_BYTES = 256 * 2**20
HOST_LEAD, HOST_BURST = 3, 20
"""Calls issued after a synchronize to time the host alone: `HOST_BURST`
calls after `HOST_LEAD` untimed ones (the first calls after a synchronize
run slower: the thread was waiting), few enough that the device's launch
queue never fills (23 calls of an eager decoder layer are some 600
launches), so the host never waits for the GPU."""


class QueueFull(RuntimeError):
    """Calls could not be queued behind the sleep kernel: the host blocked
    (a call that synchronizes, or more launches than the device's queue
    holds, as 25 calls of an eager decoder layer are)."""


@dataclass(frozen=True)
class Samples:
    """Timings in microseconds: median, quartiles and minimum of `reps`."""

    median: float
    q1: float
    q3: float
    min: float
    reps: int

    @classmethod
    def of(cls, values_us: list[float]) -> Samples:
        values = sorted(values_us)
        q1, _, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
        return cls(statistics.median(values), q1, q3, values[0], len(values))

    def to_json(self) -> dict[str, Any]:
        return {
            k: round(v, 3) if isinstance(v, float) else v
            for k, v in asdict(self).items()
        }


@dataclass(frozen=True)
class CallTimes:
    """A call as a Python caller sees it: `latency` per call of back-to-back
    calls (host or GPU time, whichever bounds them) and `host`, the time
    the host takes to issue one."""

    latency: Samples
    host: Samples


@contextlib.contextmanager
def _pinned_to_one_cpu() -> Iterator[None]:
    """The calling thread on one CPU (the last it may use) meanwhile, so that
    the scheduler moving it between cores does not add to host timings."""
    if not hasattr(os, "sched_setaffinity"):
        yield
        return
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {max(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


class Timer:
    """Times calls on one CUDA device; see the module docstring."""

    def __init__(self, device: torch.device, *, budget_s: float = 0.3):
        self.device = device
        self.budget_s = budget_s
        """About how much GPU time each `gpu_time` spends on repetitions."""
        l2 = torch.cuda.get_device_properties(device).L2_cache_size
        self.flush_bytes = max(MIN_FLUSH_BYTES, 4 * l2)
        self._dirtied = torch.empty(
            self.flush_bytes // 4, dtype=torch.int32, device=device
        )
        self._read = torch.zeros_like(self._dirtied)
        self._read_max = torch.empty((), dtype=torch.int32, device=device)
        self._sleep_cycles_per_us = self._calibrate_sleep()
        self._flush_host_us = self._host_us(self._flush)
        self.flush_us = 0.0  # gpu_time reads it; the flush is timed next
        self.flush_us = self.gpu_time(lambda: None, reps=50, flush_only=True).median
        self.event_floor_us = self.gpu_time(lambda: None, reps=200).median
        """What an empty call measures: the resolution of the GPU timings."""

    def _flush(self) -> None:
        """Evicts the L2 by writes, then replaces the dirty lines with clean
        ones (see the module docstring)."""
        self._dirtied.zero_()
        torch.amax(self._read, dim=0, out=self._read_max)

    def _calibrate_sleep(self) -> float:
        start, end = (
            torch.cuda.Event(enable_timing=True),
            torch.cuda.Event(enable_timing=True),
        )
        cycles = 10_000_000
        torch.cuda._sleep(1000)  # load the sleep kernel
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        return cycles / (start.elapsed_time(end) * 1000)

    def _host_us(self, fn: Callable[[], Any]) -> float:
        """Host time to enqueue one call (the GPU is idle, so nothing blocks),
        after a first call: a first launch loads its kernels (the flush's
        first took 4 ms, which made every group's lead sleep 200 ms)."""
        fn()
        torch.cuda.synchronize()
        count = 5
        begin = time.perf_counter()
        for _ in range(count):
            fn()
        host = (time.perf_counter() - begin) / count * 1e6
        torch.cuda.synchronize()
        return host

    def gpu_time(
        self,
        fn: Callable[[], Any],
        *,
        reps: int | None = None,
        group: int = 25,
        flush_only: bool = False,
    ) -> Samples:
        """GPU time per call of `fn` (warmed up first), in microseconds.
        `reps` defaults to what fits `budget_s` (between 10 and 500);
        `flush_only` times the L2 flush itself."""
        host_us = self._host_us(fn) + self._flush_host_us
        if reps is None:
            first = self._group(fn, 1, host_us, flush_only)[0]
            per_rep = first + self.flush_us
            reps = int(min(500, max(10, self.budget_s * 1e6 / max(per_rep, 1.0))))
        times: list[float] = []
        while len(times) < reps:
            size = min(group, reps - len(times))
            try:
                times += self._group(fn, size, host_us, flush_only)
            except QueueFull:
                if group == 1:
                    raise
                group = max(1, group // 5)
        return Samples.of(times)

    def _group(
        self, fn: Callable[[], Any], size: int, host_us: float, flush_only: bool
    ) -> list[float]:
        lead_us = 50 + 2 * size * (host_us + 10)
        for _ in range(3 if size > 1 else 6):
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(size)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(size)]
            slept = torch.cuda.Event()
            torch.cuda._sleep(int(lead_us * self._sleep_cycles_per_us))
            slept.record()
            for start, end in zip(starts, ends, strict=True):
                if flush_only:
                    start.record()
                    self._flush()
                    end.record()
                    continue
                self._flush()
                start.record()
                fn()
                end.record()
            queued_in_time = not slept.query()
            torch.cuda.synchronize()
            if queued_in_time:
                return [
                    s.elapsed_time(e) * 1000 for s, e in zip(starts, ends, strict=True)
                ]
            lead_us *= 4
        raise QueueFull(
            f"the host could not queue {size} calls within a {lead_us / 4:.0f} us "
            "sleep kernel; GPU times would include host overhead"
        )

    def call_latency(self, fn: Callable[[], Any], *, loops: int = 7) -> Samples:
        """Wall-clock microseconds per call of back-to-back calls, L2 warm."""
        return self.call_times({"fn": fn}, loops=loops)["fn"].latency

    def call_times(
        self, fns: dict[str, Callable[[], Any]], *, loops: int = 7
    ) -> dict[str, CallTimes]:
        """The call latency and host time of several implementations, their
        loops taken in turn so that each sees the same state of the host."""
        calls = {}
        for name, fn in fns.items():
            fn()
            torch.cuda.synchronize()
            begin = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            once_us = (time.perf_counter() - begin) * 1e6
            calls[name] = int(min(2000, max(10, 0.02e6 / max(once_us, 1.0))))
        per_call: dict[str, list[float]] = {name: [] for name in fns}
        host: dict[str, list[float]] = {name: [] for name in fns}
        with _pinned_to_one_cpu():
            for _ in range(loops):
                for name, fn in fns.items():
                    burst = min(HOST_BURST, calls[name] - HOST_LEAD)
                    torch.cuda.synchronize()
                    begin = time.perf_counter()
                    for _ in range(HOST_LEAD):
                        fn()
                    lead = time.perf_counter()
                    for _ in range(burst):
                        fn()
                    issued = time.perf_counter()
                    for _ in range(calls[name] - burst - HOST_LEAD):
                        fn()
                    torch.cuda.synchronize()
                    elapsed = time.perf_counter() - begin
                    per_call[name].append(elapsed / calls[name] * 1e6)
                    host[name].append((issued - lead) / burst * 1e6)
        return {
            name: CallTimes(Samples.of(per_call[name]), Samples.of(host[name]))
            for name in fns
        }

    def copy_bandwidth(self, nbytes: int) -> tuple[Samples, float]:
        """A device-to-device copy of `nbytes`: its GPU time and its bandwidth
        in TB/s, counting the read and the write."""
        src = torch.empty(nbytes // 4, dtype=torch.float32, device=self.device)
        dst = torch.empty_like(src)
        src.fill_(1.0)
        samples = self.gpu_time(lambda: dst.copy_(src))
        return samples, 2 * src.nbytes / (samples.median * 1e-6) / 1e12
