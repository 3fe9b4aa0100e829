"""`molten`: the user's command line.

    molten compile spec.mlir -o out/ [--arch sm_90] [--entry graph]

writes `<graph>.cu`, `<graph>.h` and `<graph>.final.mlir` for the graph (the only
`func.func` of the spec, or `--entry`). Errors name the spec's line and op.
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
    compiler = ZeroCompiler(arch=args.arch)
    compiled = compiler.compile(graph)
    for path in compiler.save(compiled, args.output):
        print(path)
    kernels = ", ".join(k.name for k in compiled.kernels)
    print(f"{len(compiled.kernels)} kernel(s): {kernels}", file=sys.stderr)
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
    args = parser.parse_args(argv)
    try:
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
