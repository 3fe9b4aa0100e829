# lit configuration of Molten's FileCheck tests, modelled on xDSL's
# tests/filecheck/lit.cfg.
#
# Run from the repository root, with molten-opt and filecheck on PATH:
#
#   lit -v lit_tests

import os

import lit.formats

config.name = "Molten"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Output"]

# The installed molten-opt and filecheck come from the caller's PATH.
config.environment["PATH"] = os.environ["PATH"]

# custom -> (custom parser) -> generic printer -> generic parser -> custom
# printer -> FileCheck: the CHECK lines are the custom form, reached through
# the generic form, so both parsers and both printers run.
config.substitutions.append(
    (
        "MOLTEN_ROUNDTRIP",
        "molten-opt %s --split-input-file --print-op-generic"
        " | molten-opt --split-input-file | filecheck %s",
    )
)
# custom -> generic printer -> FileCheck on the CHECK-GENERIC lines: what the
# custom parser built, properties and all, spelled out.
config.substitutions.append(
    (
        "MOLTEN_GENERIC_ROUNDTRIP",
        "molten-opt %s --split-input-file --print-op-generic"
        " | filecheck %s --check-prefix=CHECK-GENERIC",
    )
)
# custom -> custom printer -> custom parser -> custom printer -> FileCheck: the
# custom printer's output is itself valid input (the two substitutions above
# never feed the custom printer's text back to a parser).
config.substitutions.append(
    (
        "MOLTEN_CUSTOM_ROUNDTRIP",
        "molten-opt %s --split-input-file"
        " | molten-opt --split-input-file | filecheck %s",
    )
)

# The pipelines of molten/pipeline.py, so that a test of "the default pipeline"
# runs the pipeline the compiler runs (lit runs in the environment where
# molten is installed, as molten-opt does).
from molten.pipeline import (  # noqa: E402
    DEFAULT_PIPELINE,
    KERNEL_LEVEL_PIPELINE,
    MOLTEN_PIPELINE,
)

config.substitutions.append(("MOLTEN_DEFAULT_PIPELINE", DEFAULT_PIPELINE))
config.substitutions.append(("MOLTEN_LEVEL_PIPELINE", MOLTEN_PIPELINE))
config.substitutions.append(("MOLTEN_KERNEL_LEVEL_PIPELINE", KERNEL_LEVEL_PIPELINE))

# The default pipeline as the compiler runs it for an sm_90a device
# (ZeroCompiler._pipeline: kernel-schedule{arch="sm_90a"}, its tensor-core
# gemms on wgmma). Quote it on a RUN line: -p 'MOLTEN_SM90A_PIPELINE'.
config.substitutions.append(
    (
        "MOLTEN_SM90A_PIPELINE",
        DEFAULT_PIPELINE.replace("kernel-schedule", 'kernel-schedule{arch="sm_90a"}'),
    )
)
