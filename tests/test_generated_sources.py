"""The generated `.cu` and `.h` of every kernel case and benchmark case are
byte-identical to the digests recorded in tests/data/generated_sources.sha256.

A refactoring of the compiler must leave them alone; an intended change to
the generated code rewrites the file (`python tests/generated_sources.py
--update`) in the same commit, so that the diff shows which cases changed."""

import pytest
from generated_sources import GOLDEN, cases, digest, digest_of, read_golden
from kernel_cases import case_group, compiled_case

CASES = {label: (arch, graph) for label, arch, graph in cases()}
RECORDED = read_golden()


def _param(label: str):
    """A kernel case joins its case's xdist group, to share its compile
    with the nvcc and NVRTC sweeps (kernel_cases.compiled_case)."""
    kind, *name_dtype = label.split("/")
    if kind != "kernel":
        return label
    name, dtype = name_dtype
    return pytest.param(label, marks=pytest.mark.xdist_group(case_group(name, dtype)))


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES), (
        f"cases and {GOLDEN.name} disagree: run python tests/generated_sources.py "
        "--update after adding or removing a case"
    )


@pytest.mark.sweep
@pytest.mark.parametrize("label", [_param(label) for label in sorted(CASES)])
def test_generated_source_unchanged(label):
    if label not in RECORDED:
        pytest.fail(f"{label} has no recorded digest")
    arch, graph = CASES[label]
    kind, *name_dtype = label.split("/")
    if kind == "kernel":
        found = digest_of(compiled_case(*name_dtype, arch))
    else:
        found = digest(graph, arch)
    assert found == RECORDED[label], (
        f"the generated source of {label} changed; if that is intended, run "
        "python tests/generated_sources.py --update"
    )
