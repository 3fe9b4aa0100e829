"""The KernelBench runner's figures (benchmarks/kernelbench.py): fast_p as
KernelBench defines it, the shares per level, and the report."""

import json
import math

import pytest

from benchmarks.kernelbench import Outcome, markdown, resumed, summary


def _outcomes():
    return [
        # whole, correct, 2x eager, 1.25x torch.compile
        Outcome("level1/a", 1, True, "whole", True, 10.0, 20.0, 12.5),
        # through the backend, correct, slower than both
        Outcome("level1/b", 1, False, "backend", True, 10.0, 8.0, 5.0),
        # whole but wrong: counts as neither correct nor fast
        Outcome("level1/c", 1, True, "whole", False, 1.0, 50.0, 50.0),
        Outcome("level2/d", 2, False, "", False, why="UnsupportedError: x"),
    ]


def test_summary_gives_kernelbench_shares_per_level():
    level1, level2 = summary(_outcomes())
    assert level1["problems"] == 3
    assert level1["compiled whole"] == pytest.approx(2 / 3)
    assert level1["correct"] == pytest.approx(2 / 3)
    assert level1["fast_0 vs eager"] == pytest.approx(2 / 3)
    assert level1["fast_1.0 vs eager"] == pytest.approx(1 / 3)
    assert level1["fast_1.0 vs torch.compile"] == pytest.approx(1 / 3)
    assert level1["geomean vs torch.compile (correct)"] == pytest.approx(
        math.sqrt(1.25 * 0.5)
    )
    assert (
        level2["correct"] == 0 and level2["geomean vs torch.compile (correct)"] is None
    )


def _result(outcomes, **extra):
    """A results file's contents as the runner writes them."""
    return {
        "device": "H100",
        "date": "2026-11-28",
        "commit": "abc",
        "torch": "2.x",
        "dry": False,
        **extra,
        "summary": summary(outcomes),
        "problems": [o.__dict__ for o in outcomes],
    }


def test_the_report_lists_each_problem_and_why():
    text = markdown(_result(_outcomes()))
    assert "| 1 | 3 | 67% | 67% | 67% / 33% | 67% / 33% | 0.79x |" in text
    assert "| level1/a | whole | yes | 10.0 | 20.0 | 12.5 | 2.00x | 1.25x |  |" in text
    assert "| level2/d | - | no |" in text and "UnsupportedError: x" in text


def test_resume_keeps_an_earlier_call_of_the_same_commit(tmp_path):
    stem = tmp_path / "h100-2026-11-28-kernelbench"
    assert resumed(stem, "abc") == []
    outcomes = _outcomes()
    result = _result(outcomes, resumed=0)
    (tmp_path / f"{stem.name}.json").write_text(json.dumps(result))
    assert resumed(stem, "abc") == outcomes
    with pytest.raises(SystemExit, match="holds commit abc, not def"):
        resumed(stem, "def")
    assert "from an earlier call" not in markdown(result)
    assert "4 problems from an earlier call of this commit" in markdown(
        {**result, "resumed": 4}
    )
