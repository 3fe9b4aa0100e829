"""`python -m benchmarks.kernelbench`: Molten's PyTorch front door on the
KernelBench subset in `shared/kernelbench/` (read as it is: nothing in
Molten knows a problem).

Each problem is evaluated as KernelBench evaluates it:

* the `Model(*get_init_inputs())` (seeded) on the GPU, as constructed
  (training mode, as KernelBench leaves it);
* correct when, over 5 input sets from `get_inputs()` (seeds 0-4), every
  output is within atol = rtol = 1e-2 of eager's;
* its speed: GPU time per call (`benchmarks.timing.Timer`: medians, the L2
  flushed) against eager and against torch.compile (default mode).

Molten runs a problem whole where `molten.from_torch` translates it and
`ZeroCompiler` compiles it (one `.cu`, no PyTorch in the call), else
through `torch.compile(model, backend="molten")` (the parts it takes in
Molten, the rest eager). The report gives per level the share compiled
whole, the share correct (whole or with fallback), fast_0 and fast_1.0
(correct and faster than the peer by more than 0x and 1x) against eager
and against torch.compile, and the geomean speed-up against
torch.compile, then a row per problem with what failed.

    python -m benchmarks.kernelbench [--level 1] [--match Softmax]
        [--results DIR] [--dry] [--resume]

`--resume` goes on from the day's results file of this device and commit
(a run cut short by a time limit): the problems it holds are kept, the
others evaluated, and the report says how many came from the earlier
call (each problem's peers are still timed beside it).

`--dry` (no GPU needed) only translates and compiles: the share compiled
whole, and why the rest is not.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

KERNELBENCH = Path(
    os.environ.get(
        "MOLTEN_KERNELBENCH",
        Path(__file__).resolve().parents[2] / "shared" / "kernelbench",
    )
)
"""Where the problems are (`level*/*.py`): `shared/kernelbench/` beside the
repository, or $MOLTEN_KERNELBENCH."""

TOLERANCE = 1e-2
"""KernelBench's atol and rtol."""
INPUT_SETS = 5
"""KernelBench's random input sets per problem."""


@dataclass
class Outcome:
    """One problem's evaluation."""

    problem: str
    level: int
    whole: bool = False
    """Molten compiled the whole model (from_torch and ZeroCompiler)."""
    ran: str = ""
    """How Molten ran it: "whole", "backend" (torch.compile with Molten's
    parts and eager fallback), or "" where neither ran."""
    correct: bool = False
    molten_us: float | None = None
    eager_us: float | None = None
    compile_us: float | None = None
    why: str = ""
    """Why Molten did not take it whole, or what failed."""
    notes: list[str] = field(default_factory=list)

    def speedup(self, peer: float | None) -> float | None:
        if not (self.correct and self.molten_us and peer):
            return None
        return peer / self.molten_us


def problems(level: int | None, match: str | None) -> list[Path]:
    found = sorted(KERNELBENCH.glob("level*/*.py"))
    if level is not None:
        found = [p for p in found if p.parent.name == f"level{level}"]
    if match:
        found = [p for p in found if match in p.stem]
    return found


def load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"kernelbench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _on(device: str, values: list[Any]) -> list[Any]:
    import torch

    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def _inputs(problem: Any, seed: int, device: str) -> list[Any]:
    """The problem's inputs as `get_inputs()` makes them, seeded, made on
    `device` (KernelBench makes them on the CPU and moves them: the same
    distributions, but drawing gigabytes on the CPU took most of a run);
    for "meta" (the dry run) shapes only, nothing allocated."""
    import torch

    torch.manual_seed(seed)
    with torch.device(device):
        return _on(device, list(problem.get_inputs()))


def _model(problem: Any, device: str) -> Any:
    import torch

    torch.manual_seed(1234)
    if device == "meta":
        with torch.device("meta"):
            return problem.Model(*problem.get_init_inputs())
    return problem.Model(*problem.get_init_inputs()).to(device)


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:300]


def molten_whole(model: Any, inputs: list[Any]) -> Any:
    """The model compiled whole: a callable of its inputs (the module's
    parameters passed as the graph takes them), or the error why not."""
    import molten

    graph = molten.from_torch(model, inputs)
    compiled = molten.ZeroCompiler().compile(graph)

    def call(*args: Any) -> Any:
        return compiled(*molten.torch_arguments(model, *args))

    return call


def evaluate(path: Path, dry: bool, timer: Any = None) -> Outcome:
    """One problem: Molten whole or through the backend, checked against
    eager on 5 input sets, then timed beside eager and torch.compile."""
    import torch

    level = int(path.parent.name.removeprefix("level"))
    outcome = Outcome(f"{path.parent.name}/{path.stem}", level)
    problem = load(path)
    device = "meta" if dry else "cuda"
    model = _model(problem, device)
    inputs = _inputs(problem, 0, device)
    run = None
    try:
        run = molten_whole(model, inputs)
        outcome.whole = True
        outcome.ran = "whole"
    except Exception as error:  # any failure: the backend takes it from here
        outcome.why = _short(error)
    if dry:
        return outcome
    if run is None:
        torch._dynamo.reset()
        run = torch.compile(model, backend="molten")
        outcome.ran = "backend"
    try:
        outcome.correct = _correct(problem, model, run, outcome)
    except Exception as error:
        outcome.notes.append(f"Molten failed: {_short(error)}")
        return outcome
    compiled = torch.compile(model)
    with torch.no_grad():
        outcome.eager_us = timer.gpu_time(lambda: model(*inputs)).median
        outcome.molten_us = timer.gpu_time(lambda: run(*inputs)).median
        try:
            outcome.compile_us = timer.gpu_time(lambda: compiled(*inputs)).median
        except Exception as error:
            outcome.notes.append(f"torch.compile failed: {_short(error)}")
    return outcome


def _correct(problem: Any, model: Any, run: Any, outcome: Outcome) -> bool:
    """Whether every output is within KernelBench's tolerance of eager's,
    on each of the input sets."""
    import torch

    for seed in range(INPUT_SETS):
        inputs = _inputs(problem, seed, "cuda")
        with torch.no_grad(), warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            want = model(*inputs)
            got = run(*inputs)
        outcome.notes += sorted(
            {str(w.message) for w in said if "molten" in str(w.message)}
            - set(outcome.notes)
        )
        want = want if isinstance(want, tuple | list) else (want,)
        got = got if isinstance(got, tuple | list) else (got,)
        if len(got) != len(want):
            outcome.notes.append(f"{len(got)} outputs, eager {len(want)}")
            return False
        for g, w in zip(got, want, strict=True):
            if g.shape != w.shape or not torch.allclose(
                g.float(), w.float(), atol=TOLERANCE, rtol=TOLERANCE
            ):
                error = (g.float() - w.float()).abs().max().item()
                outcome.notes.append(f"input set {seed}: max |error| {error:.3g}")
                return False
    return True


def _share(outcomes: list[Outcome], test: Any) -> float:
    return sum(1 for o in outcomes if test(o)) / len(outcomes)


def _fast(outcomes: list[Outcome], peer: str, p: float) -> float:
    """KernelBench's fast_p: the share correct and faster than `peer` by
    more than p times."""
    return _share(outcomes, lambda o: (o.speedup(getattr(o, peer)) or 0) > p)


def summary(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """Per level: the shares and fast_p figures KernelBench reports."""
    rows = []
    for level in sorted({o.level for o in outcomes}):
        mine = [o for o in outcomes if o.level == level]
        speedups = [
            s for o in mine if (s := o.speedup(o.compile_us)) is not None and s > 0
        ]
        rows.append(
            {
                "level": level,
                "problems": len(mine),
                "compiled whole": _share(mine, lambda o: o.whole),
                "correct": _share(mine, lambda o: o.correct),
                "fast_0 vs eager": _fast(mine, "eager_us", 0.0),
                "fast_1.0 vs eager": _fast(mine, "eager_us", 1.0),
                "fast_0 vs torch.compile": _fast(mine, "compile_us", 0.0),
                "fast_1.0 vs torch.compile": _fast(mine, "compile_us", 1.0),
                "geomean vs torch.compile (correct)": (
                    math.exp(sum(map(math.log, speedups)) / len(speedups))
                    if speedups
                    else None
                ),
            }
        )
    return rows


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# KernelBench subset: {result['device']}, {result['date']}",
        "",
        f"Molten {result['commit']}, torch {result['torch']}"
        + (" (dry: translated and compiled only, nothing run)" if result["dry"] else "")
        + ". Written by `python -m benchmarks.kernelbench` (method in its docstring)"
        + (
            f"; {result['resumed']} problem{'s' * (result['resumed'] != 1)} from "
            "an earlier call of this commit (`--resume`)."
            if result.get("resumed")
            else "."
        ),
        "",
        "| level | problems | compiled whole | correct | fast_0 / fast_1.0 vs eager "
        "| fast_0 / fast_1.0 vs torch.compile | geomean vs torch.compile |",
        "|---|---|---|---|---|---|---|",
    ]

    def pct(x: float) -> str:
        return "-" if result["dry"] else f"{100 * x:.0f}%"

    for row in result["summary"]:
        geomean = row["geomean vs torch.compile (correct)"]
        lines.append(
            f"| {row['level']} | {row['problems']} "
            f"| {100 * row['compiled whole']:.0f}% "
            f"| {pct(row['correct'])} "
            f"| {pct(row['fast_0 vs eager'])} / {pct(row['fast_1.0 vs eager'])} "
            f"| {pct(row['fast_0 vs torch.compile'])} / "
            f"{pct(row['fast_1.0 vs torch.compile'])} "
            f"| {'-' if geomean is None else f'{geomean:.2f}x'} |"
        )
    lines += [
        "",
        "| problem | Molten ran | correct | Molten us | eager us | torch.compile us "
        "| vs eager | vs compile | why not whole / notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def us(x: float | None) -> str:
        return "-" if x is None else f"{x:,.1f}"

    def ratio(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}x"

    for o in (Outcome(**d) for d in result["problems"]):
        why = "; ".join(filter(None, [o.why, *o.notes])).replace("|", "\\|")
        lines.append(
            f"| {o.problem} | {o.ran or '-'} | {'yes' if o.correct else 'no'} "
            f"| {us(o.molten_us)} | {us(o.eager_us)} | {us(o.compile_us)} "
            f"| {ratio(o.speedup(o.eager_us))} | {ratio(o.speedup(o.compile_us))} "
            f"| {why} |"
        )
    return "\n".join(lines) + "\n"


def _commit() -> str:
    if "MOLTEN_COMMIT" in os.environ:
        return os.environ["MOLTEN_COMMIT"]
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("MOLTEN_COMMIT", "unknown")


def resumed(stem: Path, commit: str) -> list[Outcome]:
    """The outcomes of an earlier call's results file `stem`.json, where it
    exists, of the same commit (another commit's are not mixed in)."""
    path = Path(f"{stem}.json")
    if not path.exists():
        return []
    earlier = json.loads(path.read_text())
    if earlier["commit"] != commit:
        raise SystemExit(
            f"kernelbench --resume: {path} holds commit {earlier['commit']}, "
            f"not {commit}; move it away or run without --resume"
        )
    return [Outcome(**o) for o in earlier["problems"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", type=int, choices=[1, 2])
    parser.add_argument("--match", help="only problems whose file name holds this")
    parser.add_argument(
        "--results", type=Path, default=Path(__file__).parent / "results"
    )
    parser.add_argument("--dry", action="store_true", help="translate and compile only")
    parser.add_argument(
        "--resume", action="store_true", help="go on from the day's results file"
    )
    args = parser.parse_args(argv)

    import torch

    if not args.dry and not torch.cuda.is_available():
        print(
            "kernelbench needs a CUDA GPU (or --dry); none is visible", file=sys.stderr
        )
        return 2
    timer = None
    if not args.dry:
        from benchmarks.timing import Timer

        timer = Timer(torch.device("cuda"))
    device = "dry run" if args.dry else torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    args.results.mkdir(parents=True, exist_ok=True)
    stem = args.results / f"{device.lower().replace(' ', '-')}-{date}-kernelbench"
    outcomes = resumed(stem, _commit()) if args.resume else []
    earlier = len(outcomes)
    done = {o.problem for o in outcomes}
    for path in problems(args.level, args.match):
        if f"{path.parent.name}/{path.stem}" in done:
            continue
        try:
            outcome = evaluate(path, args.dry, timer)
        except Exception as error:  # the problem's own code, or a peer failing
            level = int(path.parent.name.removeprefix("level"))
            outcome = Outcome(
                f"{path.parent.name}/{path.stem}", level, why=_short(error)
            )
        outcomes.append(outcome)
        verdict = "" if args.dry else (", correct" if outcome.correct else ", wrong")
        print(
            f"[kernelbench] {outcome.problem}: "
            f"{'whole' if outcome.whole else outcome.ran or 'not whole'}{verdict}"
            + (f": {outcome.why}" if outcome.why else ""),
            flush=True,
        )
        # Written after every problem, so that a run cut short keeps its results.
        result = {
            "device": device,
            "date": date,
            "commit": _commit(),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "dry": args.dry,
            "resumed": earlier,
            "summary": summary(outcomes),
            "problems": [asdict(o) for o in outcomes],
        }
        Path(f"{stem}.json").write_text(json.dumps(result, indent=1))
        Path(f"{stem}.md").write_text(markdown(result))
    print(f"wrote {stem}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
