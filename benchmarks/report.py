"""Results files: the JSON a run writes, the figures derived from it, the
markdown table, the comparison of two runs and the plot.

A results file holds one device and one date; each suite's entry is one
run (its own copy bandwidth and environment), so suites run in separate
processes merge into one file, a rerun of a suite replacing its entry.
Derived figures are computed from the raw timings here, never stored alone.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path
from typing import Any

SCHEMA = 1
NAMES = {
    "molten": "Molten",
    "eager": "eager",
    "compile": "torch.compile",
    "cublas": "torch matmul (cuBLAS)",
    "flex": "FlexAttention",
    "compile-max-autotune": "torch.compile max-autotune",
    "molten-backend": 'torch.compile(backend="molten")',
}
"""Display names of the implementations; cases may add references."""
REFERENCE_LABELS = {
    "cublas": ("cuBLAS mm", "cuBLAS"),
    "flex": ("flex", "flex"),
    "compile-max-autotune": ("max-autotune", "max-autotune"),
}
"""A reference's column labels: of its time, and of its TFLOP/s and share."""


def _reference(suite: dict[str, Any]) -> str:
    """The reference the suite's cases are timed beside (cuBLAS if none)."""
    for case in suite["cases"]:
        for name in case.get("timings", {}):
            if name in REFERENCE_LABELS:
                return name
    return "cublas"


def device_slug(name: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def results_path(directory: Path, device: str, date: str) -> Path:
    return Path(directory) / f"{device_slug(device)}-{date}.json"


def merge(
    path: Path, suite_result: dict[str, Any], part: bool = False
) -> dict[str, Any]:
    """The results file at `path` with `suite_result` added (or replacing
    the same suite's earlier entry); written back. A `part` of a suite (a
    run of the cases some --match or --dtype selects) joins an earlier
    entry of the same Molten instead: its cases replace those of the same
    id, the others stay (so that a suite too long for one sitting can be
    run in parts into one file)."""
    device = suite_result["environment"]["device"]
    date = suite_result["started"][:10]
    results = {"schema": SCHEMA, "device": device, "date": date, "suites": {}}
    if path.exists():
        results = json.loads(path.read_text())
        if results.get("device") != device:
            raise ValueError(
                f"{path} holds results of {results.get('device')}, not {device}"
            )
    earlier = results["suites"].get(suite_result["suite"])
    if (
        part
        and earlier is not None
        and earlier["environment"]["molten"] == suite_result["environment"]["molten"]
    ):
        suite_result = _joined(earlier, suite_result)
    results["suites"][suite_result["suite"]] = suite_result
    path.write_text(json.dumps(results, indent=1) + "\n")
    return results


def _joined(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """`later`'s run of some of a suite's cases joined to `earlier`'s: the
    cases of both, `later`'s where both have one, from the first start to
    the last finish; the run-wide figures (copy bandwidth, timing) are
    `later`'s."""
    replaced = {case["id"]: case for case in later["cases"]}
    cases = [replaced.pop(case["id"], case) for case in earlier["cases"]]
    return {
        **later,
        "started": min(earlier["started"], later["started"]),
        "finished": max(earlier["finished"], later["finished"]),
        "cases": cases + list(replaced.values()),
    }


# ---------------------------------------------------------------------------
# Derived figures.
# ---------------------------------------------------------------------------


def derive(case: dict[str, Any], copy_tbps: float) -> dict[str, Any]:
    """Per implementation: GPU and call times (us), effective TB/s, % of the
    copy bandwidth and TFLOP/s; and Molten's speed-ups (a peer's GPU time
    over Molten's: above 1, Molten is faster)."""
    figures: dict[str, Any] = {}
    for name, timing in case.get("timings", {}).items():
        seconds = timing["gpu_us"]["median"] * 1e-6
        tbps = case["bytes"] / seconds / 1e12
        figures[name] = {
            "gpu_us": timing["gpu_us"]["median"],
            "call_us": timing["call_us"]["median"],
            "host_us": timing.get("host_us", {}).get("median"),
            "tbps": tbps,
            "pct_copy": 100 * tbps / copy_tbps,
            "tflops": case["flops"] / seconds / 1e12 if case["flops"] else None,
        }
    speedups = {}
    if "molten" in figures:
        for peer in figures:
            if peer != "molten":
                speedups[peer] = figures[peer]["gpu_us"] / figures["molten"]["gpu_us"]
    return {"implementations": figures, "speedup": speedups}


def geomean(values: list[float]) -> float | None:
    return math.exp(statistics.fmean(map(math.log, values))) if values else None


def suite_summary(suite: dict[str, Any]) -> dict[str, Any]:
    """Geometric-mean speed-ups over eager and torch.compile, and how many
    cases Molten wins against each."""
    derived = [derive(c, suite["copy_tbps"]) for c in suite["cases"]]
    summary: dict[str, Any] = {"cases": len(derived)}
    for peer in ("eager", "compile"):
        ups = [d["speedup"][peer] for d in derived if peer in d["speedup"]]
        summary[peer] = {
            "geomean": geomean(ups),
            "wins": sum(u > 1 for u in ups),
            "timed": len(ups),
        }
    return summary


# ---------------------------------------------------------------------------
# Markdown.
# ---------------------------------------------------------------------------


def _us(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 1000 else f"{value:,.0f}"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _shape(case: dict[str, Any]) -> str:
    return "x".join(map(str, case["shape"]))


def markdown(results: dict[str, Any]) -> str:
    """The whole results file as markdown: a summary, then one table per suite."""
    lines = [
        f"# Molten benchmarks: {results['device']}, {results['date']}",
        "",
        "Written by `python -m benchmarks run` (see `benchmarks/README.md` for the "
        "method). GPU time: median per call, CUDA events, L2 flushed before each "
        "call, calls queued back to back. Call latency: wall-clock time per call of "
        "back-to-back calls from Python. Host: the host's time to issue one "
        "call. TB/s: minimal bytes (each input read once, "
        "each output written once) over GPU time; % copy: of the same run's "
        "device-to-device copy bandwidth. `Nx`: a peer's GPU time over Molten's "
        "(above 1x, Molten is faster).",
        "",
        "| suite | cases | copy TB/s | Molten vs eager (geomean) | wins | "
        "Molten vs torch.compile (geomean) | wins |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, suite in results["suites"].items():
        s = suite_summary(suite)
        eager, compiled = s["eager"], s["compile"]
        cells = [name, str(s["cases"]), f"{suite['copy_tbps']:.2f}"]
        cells += [_x(eager["geomean"]), f"{eager['wins']}/{eager['timed']}"]
        cells += [_x(compiled["geomean"]), f"{compiled['wins']}/{compiled['timed']}"]
        lines.append("| " + " | ".join(cells) + " |")
    for name, suite in results["suites"].items():
        lines += ["", *_suite_markdown(name, suite)]
    return "\n".join(lines) + "\n"


def _suite_markdown(name: str, suite: dict[str, Any]) -> list[str]:
    lines = _suite_heading(name, suite)
    if any("molten-graph" in c.get("timings", {}) for c in suite["cases"]):
        return lines + _calls_table(suite)
    lines += _times_table(suite)
    if any("molten-dynamic" in c.get("timings", {}) for c in suite["cases"]):
        lines += ["", *_dynamic_table(suite)]
    if any("molten-backend" in c.get("timings", {}) for c in suite["cases"]):
        lines += ["", *_backend_table(suite)]
    return lines


def _backend_table(suite: dict[str, Any]) -> list[str]:
    """The PyTorch function through torch.compile(backend="molten") against
    the graph API's kernels for the same computation."""
    lines = [
        'torch.compile(backend="molten") on the PyTorch function, against '
        "Molten's graph API (medians, same run):",
        "",
        "| case | shape | dtype | graph API us | backend us | backend / graph API "
        "| torch.compile us | fell back |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case in suite["cases"]:
        timings = case.get("timings", {})
        if "molten-backend" not in timings:
            continue
        graph_us = timings.get("molten", {}).get("gpu_us", {}).get("median")
        backend_us = timings["molten-backend"]["gpu_us"]["median"]
        compile_us = timings.get("compile", {}).get("gpu_us", {}).get("median")
        ratio = f"{backend_us / graph_us:.3f}" if graph_us else "-"
        fell_back = "; ".join(case.get("backend_fallbacks", [])) or "no"
        lines.append(
            f"| {case['op']} | {_shape(case)} | {case['dtype']} | {_us(graph_us)} | "
            f"{_us(backend_us)} | {ratio} | {_us(compile_us)} | {fell_back} |"
        )
    return lines


def _dynamic_table(suite: dict[str, Any]) -> list[str]:
    """Molten's graph compiled per shape against one compiled for every
    token count: GPU and host time, and their ratio."""
    lines = [
        "One graph for every token count (`molten-dynamic`: compiled once per "
        "op, width and dtype) against the graph compiled for the shape:",
        "",
        "| case | shape | dtype | static GPU us | one-compile GPU us | ratio | "
        "host us: static / one-compile |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in suite["cases"]:
        timings = case.get("timings", {})
        if "molten-dynamic" not in timings or "molten" not in timings:
            continue
        static = timings["molten"]["gpu_us"]["median"]
        dynamic = timings["molten-dynamic"]["gpu_us"]["median"]
        hosts = " / ".join(
            _us(timings[p].get("host_us", {}).get("median"))
            for p in ("molten", "molten-dynamic")
        )
        cells = [case["op"], _shape(case), case["dtype"], _us(static), _us(dynamic)]
        cells += [f"{dynamic / static:.3f}", hosts]
        lines.append("| " + " | ".join(cells) + " |")
    for case in suite["cases"]:
        if "refused_dynamic" in case:
            lines.append(f"- {case['id']}: {case['refused_dynamic']}")
    return lines


CALL_COLUMNS = (
    ("molten", "Molten"),
    ("molten-graph", "Molten graph"),
    ("molten-graphed", "Molten graphed"),
    ("molten-out", "Molten out="),
    ("eager", "eager"),
    ("compile", "compile"),
    ("compile-reduce-overhead", "compile CUDA graphs"),
)


def _calls_table(suite: dict[str, Any]) -> list[str]:
    """Host time and call latency of each way of making the call."""
    names = " / ".join(label for _, label in CALL_COLUMNS)
    lines = [
        f"| case | shape | dtype | Molten GPU us | host us: {names} | "
        f"call us: {names} |",
        "|---|---|---|---|---|---|",
    ]
    for case in suite["cases"]:
        timings = case.get("timings", {})

        def median(peer: str, key: str, timings=timings) -> str:
            timing = timings.get(peer, {}).get(key)
            return _us(timing["median"] if timing else None)

        cells = [case["op"], _shape(case), case["dtype"], median("molten", "gpu_us")]
        cells += [
            " / ".join(median(p, key) for p, _ in CALL_COLUMNS)
            for key in ("host_us", "call_us")
        ]
        lines.append("| " + " | ".join(cells) + " |")
    for case in suite["cases"]:
        for key in ("refused", "molten_unavailable", "refused_graph"):
            if key in case:
                lines.append(f"- {case['id']}: {case[key]}")
    return lines


def _suite_heading(name: str, suite: dict[str, Any]) -> list[str]:
    env = suite["environment"]
    timing = suite["timing"]
    return [
        f"## {name}",
        "",
        f"Run {suite['started']} to {suite['finished']} on {env['device']} "
        f"({env['sm_count']} SMs, driver {env['cuda_driver']}); Molten "
        f"{env['molten']}, torch {env['torch']}, triton {env['triton']}. Copy "
        f"bandwidth {suite['copy_tbps']:.2f} TB/s (1 GiB); empty-call floor "
        f"{timing['event_floor_us']:.1f} us; L2 flush "
        f"{timing['flush_bytes'] >> 20} MiB.",
        "",
    ]


def _times_table(suite: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    compute_bound = any(c["flops"] for c in suite["cases"])
    reference = _reference(suite)
    timed, short = REFERENCE_LABELS[reference]
    if compute_bound:
        lines += [
            "| case | M x N x K | dtype | Molten us | eager us | torch.compile us | "
            f"{timed} us | Molten TFLOP/s | {short} TFLOP/s | Molten % of {short} | "
            "Molten TB/s | vs eager | vs compile | call us Molten / eager / compile | "
            "host us Molten / eager / compile |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
    else:
        lines += [
            "| case | shape | dtype | MB | Molten us | eager us | torch.compile us | "
            "Molten TB/s | Molten % copy | compile % copy | vs eager | vs compile | "
            "call us Molten / eager / compile | host us Molten / eager / compile |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
    notes = []
    for case in suite["cases"]:
        d = derive(case, suite["copy_tbps"])
        impl = d["implementations"]

        def get(peer: str, key: str, impl=impl) -> Any:
            return impl[peer][key] if peer in impl else None

        molten_us = _us(get("molten", "gpu_us"))
        if "refused" in case:
            molten_us = "refused"
            notes.append(f"{case['id']}: {case['refused']}")
        elif "molten_unavailable" in case:
            molten_us = "n/a"
            notes.append(f"{case['id']}: {case['molten_unavailable']}")
        if not case["check"]["compile_ok"]:
            notes.append(f"{case['id']}: torch.compile's output exceeds the bound")
        calls = " / ".join(
            _us(get(p, "call_us")) for p in ("molten", "eager", "compile")
        )
        speedups = [_x(d["speedup"].get("eager")), _x(d["speedup"].get("compile"))]
        cells = [case["op"], _shape(case), case["dtype"]]
        if compute_bound:
            m, c = get("molten", "tflops"), get(reference, "tflops")
            cells += [
                molten_us,
                *(_us(get(p, "gpu_us")) for p in ("eager", "compile", reference)),
                _num(m),
                _num(c),
                _pct(100 * m / c if m and c else None),
                _num(get("molten", "tbps"), 2),
            ]
        else:
            cells += [
                f"{case['bytes'] / 1e6:,.1f}",
                molten_us,
                *(_us(get(p, "gpu_us")) for p in ("eager", "compile")),
                _num(get("molten", "tbps"), 2),
                _pct(get("molten", "pct_copy")),
                _pct(get("compile", "pct_copy")),
            ]
        hosts = " / ".join(
            _us(get(p, "host_us")) for p in ("molten", "eager", "compile")
        )
        lines.append("| " + " | ".join([*cells, *speedups, calls, hosts]) + " |")
    checked = [c for c in suite["cases"] if "molten" in c["check"]["errors"]]
    ok = [c for c in checked if c["check"]["molten_ok"]]
    lines += [
        "",
        f"Checks: {len(ok)} of {len(suite['cases'])} Molten outputs within the bound "
        "(max |out - ref| / max |ref| against PyTorch in float64, bound = the larger "
        "of 4x eager's error and 2 ulp of the dtype).",
    ]
    several = [
        f"{c['id']} {len(c['molten_kernels'])}"
        for c in suite["cases"]
        if len(c.get("molten_kernels", ())) > 1
    ]
    if several:
        lines += ["", "Molten kernels a call: " + ", ".join(several) + "."]
    lines += [f"- {note}" for note in notes]
    return lines


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}%"


# ---------------------------------------------------------------------------
# Two runs compared.
# ---------------------------------------------------------------------------


def compare(
    first: dict[str, Any],
    second: dict[str, Any],
    *,
    threshold_pct: float = 3.0,
    large_us: float = 50.0,
) -> tuple[str, list[str]]:
    """Markdown comparing the GPU times of two results files, and the
    (case, implementation) pairs that took at least `large_us` and differ
    by more than `threshold_pct`."""
    lines = [
        "| suite | case | implementation | first us | second us | difference |",
        "|---|---|---|---|---|---|",
    ]
    outliers, diffs = [], []
    for suite_name, suite in first["suites"].items():
        other = second["suites"].get(suite_name)
        if other is None:
            continue
        lines.append(
            f"| {suite_name} | copy 1 GiB | - | {suite['copy_tbps']:.3f} TB/s | "
            f"{other['copy_tbps']:.3f} TB/s | "
            f"{100 * (other['copy_tbps'] / suite['copy_tbps'] - 1):+.1f}% |"
        )
        by_id = {c["id"]: c for c in other["cases"]}
        for case in suite["cases"]:
            twin = by_id.get(case["id"])
            if twin is None:
                continue
            for impl, timing in case.get("timings", {}).items():
                if impl not in twin.get("timings", {}):
                    continue
                a = timing["gpu_us"]["median"]
                b = twin["timings"][impl]["gpu_us"]["median"]
                diff = 100 * (b / a - 1)
                large = min(a, b) >= large_us
                flag = ""
                if large:
                    diffs.append(abs(diff))
                    if abs(diff) > threshold_pct:
                        flag = " **over**"
                        outliers.append(
                            f"{suite_name}/{case['id']}/{impl}: {diff:+.1f}%"
                        )
                cells = [suite_name, case["id"], NAMES.get(impl, impl), _us(a), _us(b)]
                lines.append("| " + " | ".join(cells) + f" | {diff:+.1f}%{flag} |")
    head = (
        f"{len(diffs) - len(outliers)} of {len(diffs)} timings of at least "
        f"{large_us:.0f} us agree within {threshold_pct:g}%"
        + (f"; the largest difference is {max(diffs):.1f}%." if diffs else ".")
    )
    return head + "\n\n" + "\n".join(lines) + "\n", outliers


# ---------------------------------------------------------------------------
# The plot.
# ---------------------------------------------------------------------------

MARKERS = {"molten": "o", "eager": "s", "compile": "^", "cublas": "D", "flex": "v"}


def plot(results: dict[str, Any], path: Path) -> None:
    """Effective bandwidth against bytes moved for the memory-bound cases
    (with each run's copy bandwidth as a line), and TFLOP/s of the gemm
    cases, per implementation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    suites = results["suites"]
    memory = [(s, c) for s in suites.values() for c in s["cases"] if not c["flops"]]
    compute = [(s, c) for s in suites.values() for c in s["cases"] if c["flops"]]
    panels = int(bool(memory)) + int(bool(compute))
    fig, axes = plt.subplots(1, max(panels, 1), figsize=(7 * max(panels, 1), 5.5))
    axes = list(axes) if panels > 1 else [axes]
    if memory:
        ax = axes.pop(0)
        for i, suite in enumerate(
            s for s in suites.values() if any(not c["flops"] for c in s["cases"])
        ):
            ax.plot(
                [p["bytes"] * 2 for p in suite["copy"]],
                [p["tbps"] for p in suite["copy"]],
                color="gray",
                linewidth=1,
                label="device-to-device copy" if i == 0 else None,
            )
        for impl in ("molten", "eager", "compile"):
            points = [
                (c["bytes"], derive(c, s["copy_tbps"])["implementations"][impl]["tbps"])
                for s, c in memory
                if impl in c.get("timings", {})
            ]
            if points:
                xs, ys = zip(*points, strict=True)
                ax.scatter(xs, ys, marker=MARKERS[impl], label=NAMES[impl], alpha=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("minimal bytes moved per call")
        ax.set_ylabel("effective bandwidth (TB/s)")
        ax.set_title("Memory-bound cases (seed, norms, elementwise)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    if compute:
        ax = axes.pop(0)
        labels = [f"{_shape(c)} {c['dtype']}" for _, c in compute]
        impls = [
            i
            for i in ("molten", "eager", "compile", "cublas", "flex")
            if any(i in c.get("timings", {}) for _, c in compute)
        ]
        width = 0.8 / len(impls)
        for k, impl in enumerate(impls):
            ys = [
                derive(c, s["copy_tbps"])["implementations"].get(impl, {}).get("tflops")
                or 0
                for s, c in compute
            ]
            ax.bar(
                [i + k * width for i in range(len(compute))],
                ys,
                width,
                label=NAMES[impl],
            )
        ax.set_xticks(
            [i + 0.4 - width / 2 for i in range(len(compute))],
            labels,
            fontsize=8,
            rotation=30,
            ha="right",
        )
        ax.set_yscale("log")
        ax.set_ylabel("TFLOP/s (2MNK / GPU time)")
        ax.set_title("gelu(x @ w + b)")
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend()
    fig.suptitle(f"Molten benchmarks: {results['device']}, {results['date']}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
