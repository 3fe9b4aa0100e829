"""Molten's modules import each other without cycles.

The graph is read from the sources with `ast` (nothing is imported), over
the packages pyproject.toml installs, each at the directory its
`package-dir` names. Every import counts, at module level or inside a
function: a lazy import only defers the cycle to the first call. So does a
module that `importlib.import_module`s names from a table (a package's
lazy attributes): it imports every module a string constant of it names.

Exempt are the imports under `if TYPE_CHECKING:`: they never run, and they
are how a module names, in annotations, the type of an object a module
above it hands it.

`import a.b.c` is an import of `a.b.c` alone: Python runs the packages
`a` and `a.b` first, but those are the packages' own edges (counted at
their __init__), not the importer's. `from a.b import c` imports the
submodule `a.b.c` where there is one, else the package `a.b` itself.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}
"""Edges left out of the graph, each with the change that removes it. The
test fails once one of them is gone, so that its entry goes too."""


@dataclass(frozen=True)
class Import:
    """One edge of the graph: `importer` imports `imported` at `path:line`."""

    importer: str
    imported: str
    path: Path
    line: int

    def __str__(self) -> str:
        where = (
            self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        )
        return f"{self.importer} -> {self.imported} ({where}:{self.line})"


def package_directories() -> dict[str, Path]:
    """Each installed package and its directory, as setuptools maps them: the
    package's own `package-dir` entry, else its nearest mapped ancestor's
    directory with the rest of the name appended."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
        "setuptools"
    ]
    mapped: dict[str, str] = setuptools.get("package-dir", {})
    directories = {}
    for package in setuptools["packages"]:
        parts = package.split(".")
        for cut in range(len(parts), -1, -1):
            ancestor = ".".join(parts[:cut])
            if ancestor in mapped or cut == 0:
                directories[package] = ROOT.joinpath(
                    mapped.get(ancestor, ""), *parts[cut:]
                )
                break
    return directories


def module_files() -> dict[str, Path]:
    """Every module of the installed packages, by its dotted name."""
    modules = {}
    for package, directory in package_directories().items():
        for path in sorted(directory.glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of `tree` but those under `if TYPE_CHECKING:` (their
    `else:` runs, and is kept)."""
    pending = [tree]
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(reversed(node.orelse))
        else:
            pending.extend(reversed(list(ast.iter_child_nodes(node))))


def _calls_import_module(nodes: list[ast.AST]) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and getattr(node.func, "attr", getattr(node.func, "id", None))
        == "import_module"
        for node in nodes
    )


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> Iterator[Import]:
    """The edges from module `name` (at `path`) to the modules of `modules`."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    nodes = list(_run_time_nodes(ast.parse(path.read_text(), str(path))))
    dynamic = _calls_import_module(nodes)
    for node in nodes:
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        elif dynamic and isinstance(node, ast.Constant) and str(node.value) in modules:
            targets = [str(node.value)]
        else:
            continue
        for target in dict.fromkeys(targets):
            if target in modules and target != name:
                yield Import(name, target, path, node.lineno)


def import_graph(modules: dict[str, Path]) -> dict[str, list[Import]]:
    return {
        name: list(imports_of(name, path, modules)) for name, path in modules.items()
    }


def strongly_connected_components(graph: dict[str, list[Import]]) -> list[set[str]]:
    """The components of more than one module (Tarjan's algorithm, with a
    stack of its own for the search)."""
    index: dict[str, int] = {}
    lowlink: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    search: list[tuple[str, Iterator[Import]]] = []
    components = []

    def visit(node: str) -> None:
        index[node] = lowlink[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        search.append((node, iter(graph[node])))

    for root in graph:
        if root in index:
            continue
        visit(root)
        while search:
            node, edges = search[-1]
            for edge in edges:
                if edge.imported not in index:
                    visit(edge.imported)
                    break
                if edge.imported in on_stack:
                    lowlink[node] = min(lowlink[node], index[edge.imported])
            else:  # every edge of `node` followed
                search.pop()
                if search:
                    parent = search[-1][0]
                    lowlink[parent] = min(lowlink[parent], lowlink[node])
                if lowlink[node] != index[node]:
                    continue
                component, member = set(), None
                while member != node:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                if len(component) > 1:
                    components.append(component)
    return components


def cycle_report(graph: dict[str, list[Import]]) -> list[str]:
    """Each cycle: its modules, and the imports among them to break."""
    reports = []
    for component in strongly_connected_components(graph):
        edges = [
            str(edge)
            for importer in sorted(component)
            for edge in graph[importer]
            if edge.imported in component
        ]
        modules = ", ".join(sorted(component))
        reports.append(f"cycle through {modules}:\n  " + "\n  ".join(edges))
    return reports


def test_the_packages_are_found_where_pyproject_puts_them():
    modules = module_files()
    assert modules["molten"] == ROOT / "molten" / "__init__.py"
    assert modules["molten.dialects.molten"] == ROOT / "dialects" / "molten.py"
    assert modules["molten.passes.lowering.emitter"] == (
        ROOT / "passes" / "lowering" / "emitter.py"
    )
    assert modules["molten.runtime.executable"] == (
        ROOT / "molten" / "runtime" / "executable.py"
    )


def _package(tmp_path: Path, sources: dict[str, str]) -> dict[str, Path]:
    """Modules of the given sources, by name, written under `tmp_path`."""
    modules = {}
    for name, source in sources.items():
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        modules[name.replace("/", ".").removesuffix(".__init__")] = path
    return modules


def test_every_kind_of_import_is_an_edge(tmp_path):
    (tmp_path / "pkg").mkdir()
    modules = _package(
        tmp_path,
        {
            "pkg/__init__": "",
            "pkg/b": "",
            "pkg/c": "",
            "pkg/d": "",
            "pkg/lazy": """\
                import importlib
                _LAZY = {"thing": "pkg.d"}
                def __getattr__(name):
                    return importlib.import_module(_LAZY[name])
                """,
            "pkg/a": """\
                from typing import TYPE_CHECKING
                from . import b
                from pkg import CONSTANT
                if TYPE_CHECKING:
                    from pkg.c import Type
                else:
                    import pkg.lazy
                def later():
                    from .b import thing
                """,
        },
    )
    graph = import_graph(modules)
    assert [(e.imported, e.line) for e in graph["pkg.a"]] == [
        ("pkg.b", 2),
        ("pkg", 3),
        ("pkg.lazy", 7),
        ("pkg.b", 9),
    ]
    assert [e.imported for e in graph["pkg.lazy"]] == ["pkg.d"]


def test_a_cycle_is_reported_with_its_imports(tmp_path):
    (tmp_path / "pkg").mkdir()
    modules = _package(
        tmp_path,
        {
            "pkg/a": "import pkg.b\n",
            "pkg/b": "def f():\n    from pkg import c\n",
            "pkg/c": "from pkg.a import f\nimport pkg.d\n",
            "pkg/d": "",
        },
    )
    (report,) = cycle_report(import_graph(modules))
    assert report.splitlines() == [
        "cycle through pkg.a, pkg.b, pkg.c:",
        f"  pkg.a -> pkg.b ({tmp_path}/pkg/a.py:1)",
        f"  pkg.b -> pkg.c ({tmp_path}/pkg/b.py:2)",
        f"  pkg.c -> pkg.a ({tmp_path}/pkg/c.py:1)",
    ]


def test_no_import_cycles():
    graph = import_graph(module_files())
    edges = {(e.importer, e.imported) for imports in graph.values() for e in imports}
    gone = [edge for edge in KNOWN_EXCEPTIONS if edge not in edges]
    assert not gone, f"known exceptions no longer in the graph (delete them): {gone}"
    kept = {
        name: [e for e in imports if (e.importer, e.imported) not in KNOWN_EXCEPTIONS]
        for name, imports in graph.items()
    }
    cycles = cycle_report(kept)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


ABOVE_THE_RUNTIME = (
    "molten.compiler",
    "molten.decorator",
    "molten.from_torch",
    "molten.ir",
    "molten.ops",
    "molten.pipeline",
    "molten.torch_backend",
    "molten.tuning",
    "molten.passes",
    "molten.targets",
)
"""The graph API, the compiler, its passes and printer, and the front
doors, which run compiled graphs through the runtime: no module of
`molten.runtime` imports them (or a module of those packages). The
runtime stands on the dialects: it runs the cuda dialect's launcher."""


def test_the_runtime_imports_nothing_above_it():
    graph = import_graph(module_files())
    upward = [
        str(edge)
        for name, imports in graph.items()
        if name == "molten.runtime" or name.startswith("molten.runtime.")
        for edge in imports
        if any(
            edge.imported == above or edge.imported.startswith(above + ".")
            for above in ABOVE_THE_RUNTIME
        )
    ]
    assert not upward, "the runtime imports from above it:\n" + "\n".join(upward)


def test_the_dialect_has_its_canonicalization_patterns_however_imported():
    """The dialect does not import its patterns (see MoltenCanonicalization):
    whatever Molten module a program imports, `molten` registers them."""
    check = (
        "from molten.dialects.molten import AddOp, MoltenCanonicalization\n"
        "from molten.passes.canonicalization_patterns.molten import "
        "canonicalization_patterns\n"
        "(trait,) = AddOp.get_traits_of_type(MoltenCanonicalization)\n"
        "print([type(p).__name__ for p in trait.get_patterns(AddOp)])\n"
        "print([type(p).__name__ for p in canonicalization_patterns()])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, check=True
    )
    registered, defined = run.stdout.splitlines()
    assert registered == defined and "FoldSplatOperands" in registered
