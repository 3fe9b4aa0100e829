"""`molten`: the user's command line.

    molten compile spec.mlir -o out/ [--arch sm_90] [--entry graph]

writes `<graph>.cu`, `<graph>.h` and `<graph>.final.mlir` for the graph (the only
`func.func` of the spec, or `--entry`). Errors name the spec's line and op.

    molten tune spec.mlir [-o out/] [--arch sm_90a] [--candidates 8] [--entry graph]

times each kernel's candidate schedules on the current GPU (for its best
target unless `--arch`), keeps the fastest in the tuning database
(`molten.tuning`), prints what it timed, and with `-o` writes the tuned
files as `compile` does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException, ParseError

from molten.diagnostics import decode_spec, error_line
from molten.errors import MoltenError


def _compile(args: argparse.Namespace) -> int:
    from molten import ZeroCompiler
    from molten.ir import DataflowGraph

    spec = Path(args.spec)
    text = decode_spec(spec.read_bytes(), str(spec))
    graph = DataflowGraph.from_mlir(text, entry=args.entry, name=str(spec))
    if args.sizes:
        from molten.passes.specialize_dims import parse_sizes

        graph = graph.specialize(**parse_sizes(args.sizes))
    compiler = ZeroCompiler(arch=args.arch)
    compiled = compiler.compile(graph)
    for path in compiler.save(compiled, args.output):
        print(path)
    kernels = ", ".join(k.name for k in compiled.kernels)
    print(f"{len(compiled.kernels)} kernel(s): {kernels}", file=sys.stderr)
    return 0


def _tune(args: argparse.Namespace) -> int:
    from molten import ZeroCompiler
    from molten.ir import DataflowGraph
    from molten.passes.schedule.target import device_native_arch
    from molten.runtime import current_device_id

    spec = Path(args.spec)
    text = decode_spec(spec.read_bytes(), str(spec))
    graph = DataflowGraph.from_mlir(text, entry=args.entry, name=str(spec))
    arch = args.arch or device_native_arch(current_device_id())
    compiler = ZeroCompiler(arch=arch, autotune=args.candidates)
    compiled = compiler.compile(graph)
    tuned = [k for k in compiled.kernels if k.name in compiler.tuned]
    for name, schedule in compiler.tuned.items():
        trials = compiler.trials.get(name)
        if trials is None:
            print(f"@{name}: {schedule} (from the tuning database)")
            continue
        print(f"@{name}: {schedule}")
        for trial in trials:
            timed = f"{trial.microseconds:10.1f} us" if trial.microseconds else " " * 13
            chosen = " <-" if trial.schedule == schedule else ""
            print(f"  {timed}  {trial.schedule}{chosen} {trial.problem or ''}")
    if not compiler.tuned:
        print(f"nothing to tune for {arch}: every kernel has one schedule")
    if args.output:
        for path in compiler.save(compiled, args.output):
            print(path)
    print(f"{len(tuned)} kernel(s) tuned for {arch}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="molten", description="Molten: write the math, get the kernel."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    compile_ = commands.add_parser(
        "compile", help="compile a spec (.mlir) to a .cu file and a header"
    )
    compile_.add_argument("spec", help="the spec: MLIR text with a func.func")
    compile_.add_argument("-o", "--output", default="output", help="output folder")
    compile_.add_argument(
        "--arch",
        default="sm_90",
        help="target architecture (sm_90a: gemms on Hopper's wgmma; that .cu "
        "builds for sm_90a only)",
    )
    compile_.add_argument("--entry", help="the graph to compile, if several")
    compile_.add_argument(
        "--sizes",
        help="fix the spec's named dimensions, NAME=SIZE separated by commas "
        "(T=17); without it the launcher takes them at run time, where every "
        "kernel can (row and pointwise kernels)",
    )
    tune = commands.add_parser(
        "tune", help="time each kernel's candidate schedules on this GPU, keep the best"
    )
    tune.add_argument("spec", help="the spec: MLIR text with a func.func")
    tune.add_argument("-o", "--output", help="also write the tuned files here")
    tune.add_argument(
        "--arch", help="target architecture (default: the current GPU's best)"
    )
    tune.add_argument(
        "--candidates",
        type=int,
        default=8,
        help="the most candidate schedules a kernel may have (default 8)",
    )
    tune.add_argument("--entry", help="the graph to tune, if several")
    args = parser.parse_args(argv)
    try:
        if args.command == "tune":
            if args.candidates < 1:
                parser.error("--candidates must be at least 1")
            return _tune(args)
        return _compile(args)
    except ParseError as error:  # a MoltenParseError: file:line:col: error: ...
        print(error, file=sys.stderr)
    except (MoltenError, DiagnosticException) as error:
        print(error_line(str(error), "molten"), file=sys.stderr)
    except NotImplementedError as error:
        print(f"molten: error: not implemented yet: {error}", file=sys.stderr)
    except OSError as error:
        print(f"molten: error: {error}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
