"""The GPU scripts (scripts/*, run on the GPU machine only) name what
Molten has: every `from molten... import X` and `import molten...` in them
resolves here, without running them (a module moved under them fails CI,
not the next session on the GPU)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

SCRIPTS = sorted(
    path
    for path in (Path(__file__).resolve().parent.parent / "scripts").iterdir()
    if path.is_file() and path.read_text().startswith("#!/usr/bin/env python")
)


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_a_scripts_molten_imports_resolve(script):
    tree = ast.parse(script.read_text(), filename=str(script))
    checked = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "molten":
                    importlib.import_module(alias.name)
                    checked += 1
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "molten"
        ):
            module = importlib.import_module(node.module)
            for alias in node.names:
                found = hasattr(module, alias.name) or _is_module(
                    f"{node.module}.{alias.name}"
                )
                assert found, f"{script.name}: {node.module} has no {alias.name}"
                checked += 1
    assert checked, f"{script.name} imports nothing of Molten"


def test_the_attention_script_sets_a_constant_the_rule_reads():
    """attention-sanitize varies the wgmma stages through the rule module's
    constant: it must still be there."""
    import molten.passes.schedule.attention as rule

    assert isinstance(rule.ATTENTION_WGMMA_STAGES, int)
    assert (
        "schedule.ATTENTION_WGMMA_STAGES"
        in (
            Path(__file__).resolve().parent.parent / "scripts" / "attention-sanitize"
        ).read_text()
    )
