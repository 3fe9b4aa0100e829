"""`python -m benchmarks`: run suites, list cases, compare runs, redraw reports.

python -m benchmarks run --suite seed          # one suite (repeatable, or: all)
python -m benchmarks list --suite gemm         # the cases, no GPU needed
python -m benchmarks compare A.json B.json     # two runs side by side
python -m benchmarks report A.json             # the .md (and .png) again
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.cases import DTYPES, MAIN_SUITES, SUITES, Case

RESULTS = Path(__file__).parent / "results"


def selected_cases(
    suite: str, dtypes: list[str] | None, match: str | None
) -> list[Case]:
    cases = SUITES[suite]()
    if dtypes:
        cases = [c for c in cases if c.dtype in dtypes]
    if match:
        cases = [c for c in cases if match in c.id]
    return cases


def suite_names(choices: list[str] | None) -> list[str]:
    """The suites named (repeatable; `all` or none: the main suites), each once."""
    names: list[str] = []
    for choice in choices or ["all"]:
        for name in MAIN_SUITES if choice == "all" else [choice]:
            if name not in names:
                names.append(name)
    return names


def write_report(path: Path, results: dict, plot: bool = True) -> None:
    from benchmarks import report

    path.with_suffix(".md").write_text(report.markdown(results))
    written = [path, path.with_suffix(".md")]
    if plot:
        try:
            report.plot(results, path.with_suffix(".png"))
            written.append(path.with_suffix(".png"))
        except ImportError:
            print(
                "matplotlib is not installed: no plot (`python -m benchmarks report` "
                "draws it later)",
                file=sys.stderr,
            )
    print("wrote " + ", ".join(map(str, written)))


def run(args: argparse.Namespace) -> int:
    import torch

    from benchmarks import report
    from benchmarks.harness import run_suite

    if not torch.cuda.is_available():
        print("benchmarks need a CUDA GPU; none is visible", file=sys.stderr)
        return 2
    for suite in suite_names(args.suite):
        cases = selected_cases(suite, args.dtype, args.match)
        if not cases:
            print(f"[{suite}] no case matches", file=sys.stderr)
            continue
        result = run_suite(
            suite,
            cases,
            seed=args.seed,
            budget_s=args.budget,
            references=not args.no_references,
            progress=lambda line: print(line, flush=True),
        )
        device, date = result["environment"]["device"], result["started"][:10]
        path = args.output or report.results_path(args.results, device, date)
        path.parent.mkdir(parents=True, exist_ok=True)
        part = bool(args.match or args.dtype)
        results = report.merge(path, result, part=part)
        write_report(path, results, plot=not args.no_plot)
    return 0


def list_cases(args: argparse.Namespace) -> int:
    for suite in suite_names(args.suite):
        for case in selected_cases(suite, args.dtype, args.match):
            work = f"{case.flops / 1e9:,.3g} GFLOP" if case.flops else ""
            print(f"{suite:12} {case.id:32} {case.bytes / 1e6:12,.2f} MB  {work}")
    return 0


def compare(args: argparse.Namespace) -> int:
    from benchmarks import report

    first, second = (json.loads(Path(p).read_text()) for p in (args.first, args.second))
    text, outliers = report.compare(
        first, second, threshold_pct=args.threshold, large_us=args.large_us
    )
    print(text)
    return 1 if outliers and args.strict else 0


def redraw(args: argparse.Namespace) -> int:
    path = Path(args.results_file)
    write_report(path, json.loads(path.read_text()), plot=not args.no_plot)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.split("\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def filters(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--suite",
            action="append",
            choices=[*SUITES, "all"],
            help="a suite to run (repeatable; default: all)",
        )
        p.add_argument(
            "--dtype",
            action="append",
            choices=DTYPES,
            help="only cases of this dtype (repeatable)",
        )
        p.add_argument("--match", help="only cases whose id contains this text")

    p = commands.add_parser("run", help="check and time suites on the GPU")
    filters(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument(
        "--budget",
        type=float,
        default=0.3,
        help="about how many seconds of GPU time each timing takes",
    )
    p.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        help="directory of <device>-<date>.json (default: benchmarks/results)",
    )
    p.add_argument(
        "--output", type=Path, help="write (merge into) this results file instead"
    )
    p.add_argument("--no-plot", action="store_true")
    p.add_argument(
        "--no-references",
        action="store_true",
        help="time Molten, eager and torch.compile only, not the cases' "
        "references (cuBLAS alone, FlexAttention, max-autotune)",
    )
    p.set_defaults(handler=run)

    p = commands.add_parser("list", help="list the cases with their bytes and FLOPs")
    filters(p)
    p.set_defaults(handler=list_cases)

    p = commands.add_parser(
        "compare", help="compare the GPU times of two results files"
    )
    p.add_argument("first")
    p.add_argument("second")
    p.add_argument("--threshold", type=float, default=3.0, help="percent")
    p.add_argument(
        "--large-us",
        type=float,
        default=50.0,
        help="only timings of at least this many us count as large cases",
    )
    p.add_argument(
        "--strict", action="store_true", help="exit 1 when a large case differs"
    )
    p.set_defaults(handler=compare)

    p = commands.add_parser(
        "report", help="write the .md and .png of a results file again"
    )
    p.add_argument("results_file")
    p.add_argument("--no-plot", action="store_true")
    p.set_defaults(handler=redraw)

    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
