"""`molten-opt`: xDSL's opt driver with Molten's dialects, passes and diagnostics.

Molten's dialects and passes reach it (and `xdsl-opt`) through the
`xdsl.universe` entry point; this driver adds what a user of `mlir-opt`
expects: every parsed op carries its `file:line:col` location, and an error
(a shape rule, a parse error, a failing pass) prints as

    spec.mlir:3:3: error: molten.add: lhs tensor<4x8xf32> and rhs ... (8 vs 9)
      %0 = molten.add %x, %w : (tensor<4x8xf32>, tensor<9xf32>) -> tensor<4x8xf32>
      ^

with a non-zero exit (exit 0 and the message on stdout under
`--verify-diagnostics`), never a Python traceback.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence
from importlib.metadata import version
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from molten.diagnostics import (
    Diagnostic,
    MoltenParseError,
    decode_spec,
    error_line,
    locate,
    parse_located,
)
from molten.errors import MoltenError
from molten.pipeline import DEFAULT_PIPELINE


class MoltenOptMain(xDSLOptMain):
    version_format = "molten-opt {molten_version} (xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        self._source = ""
        self._line_offset = 0
        super().__init__(
            description=(
                "Molten's modular optimizer driver: parses molten/kernel IR, runs "
                "passes (-p), prints IR or a target (-t). Default pipeline: "
                f"{DEFAULT_PIPELINE}"
            ),
            args=args,
        )

    def register_all_arguments(self, arg_parser):
        super().register_all_arguments(arg_parser)
        for action in arg_parser._actions:
            if "--version" in action.option_strings:
                action.version_format = self.version_format.replace(
                    "{molten_version}", version("molten")
                )

    def register_all_frontends(self):
        super().register_all_frontends()
        self.available_frontends["mlir"] = self._parse_mlir

    def _parse_mlir(self, io: IO[bytes]) -> ModuleOp:
        self._source = decode_spec(io.read(), self.get_input_name())
        return parse_located(
            self.ctx,
            self._source,
            self.get_input_name(),
            self._line_offset,
            not self.args.no_implicit_module,
        )

    def parse_chunk(self, chunk, file_extension, start_offset=0):
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp):
        try:
            super().apply_passes(prog)
        except DiagnosticException as error:
            raise Diagnostic(self._locate(prog, error)) from None

    def _locate(self, module: ModuleOp, error: Exception) -> str:
        return locate(
            module, error, self._source, self.get_input_name(), self._line_offset
        )


def main(args: Sequence[str] | None = None) -> int:
    try:
        MoltenOptMain(args=args).run()
    except SystemExit as exit_:  # argparse's --help, --version and usage errors
        return exit_.code if isinstance(exit_.code, int) else 1
    except ParseError as error:
        print(str(MoltenParseError(error.span, error.msg)), file=sys.stderr)
        return 1
    except (DiagnosticException, MoltenError) as error:
        print(error_line(str(error).rstrip(), "molten-opt"), file=sys.stderr)
        return 1
    except NotImplementedError as error:
        print(f"molten-opt: error: not implemented yet: {error}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as error:
        print(f"molten-opt: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # an internal error, not the user's
        if os.environ.get("MOLTEN_TRACEBACK"):
            traceback.print_exc()
        print(
            f"molten-opt: internal error: {type(error).__name__}: {error}\n"
            "(set MOLTEN_TRACEBACK=1 to see the Python traceback; please report it)",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
