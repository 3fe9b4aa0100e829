"""The generated `.cu` and `.h` of every kernel case and benchmark case are
byte-identical to the digests recorded in tests/data/generated_sources.sha256.

A refactoring of the compiler must leave them alone; an intended change to
the generated code rewrites the file (`python tests/generated_sources.py
--update`) in the same commit, so that the diff shows which cases changed."""

import pytest
from generated_sources import GOLDEN, cases, digest, read_golden

CASES = {label: (arch, graph) for label, arch, graph in cases()}
RECORDED = read_golden()


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES), (
        f"cases and {GOLDEN.name} disagree: run python tests/generated_sources.py "
        "--update after adding or removing a case"
    )


@pytest.mark.parametrize("label", sorted(CASES))
def test_generated_source_unchanged(label):
    if label not in RECORDED:
        pytest.fail(f"{label} has no recorded digest")
    arch, graph = CASES[label]
    assert digest(graph, arch) == RECORDED[label], (
        f"the generated source of {label} changed; if that is intended, run "
        "python tests/generated_sources.py --update"
    )
