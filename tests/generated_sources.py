"""Every kernel case and benchmark case compiled to CUDA source, by label.

The golden file `tests/data/generated_sources.sha256` records a digest of
each case's `.cu` and `.h`; `test_generated_sources.py` checks today's
compiler against it, so a refactoring of the lowering that changes a
single byte of generated code fails. After an intended change to the
generated code, rewrite the file with
`python tests/generated_sources.py --update` and commit it with the change.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

GOLDEN = Path(__file__).parent / "data" / "generated_sources.sha256"

BENCHMARK_ARCHS = ("sm_90", "sm_90a")
"""The benchmark cases as the harness compiles them on an H100 (sm_90a)
and as a portable sm_90 build would."""


def cases() -> Iterator[tuple[str, str, Callable]]:
    """(label, arch, graph factory) for every kernel and benchmark case."""
    from kernel_cases import CASES, DTYPES, WGMMA_ARCH, WGMMA_CASES, WGMMA_DTYPES

    from benchmarks.cases import SUITES
    from molten.ir import DataflowGraph

    def built(name: str, build: Callable, dtype: str) -> Callable:
        def graph() -> DataflowGraph:
            g = DataflowGraph(name)
            build(g, dtype)
            return g

        return graph

    for name in sorted(CASES):
        for dtype in DTYPES:
            yield f"kernel/{name}/{dtype}", "sm_90", built(name, CASES[name], dtype)
    for name in sorted(WGMMA_CASES):
        for dtype in WGMMA_DTYPES:
            graph = built(name, WGMMA_CASES[name], dtype)
            yield f"kernel/{name}/{dtype}", WGMMA_ARCH, graph
    for suite, make in sorted(SUITES.items()):
        if suite == "llm-dynamic":
            continue  # the llm suite's graphs (their one-compile graphs are not
            # the cases' own: tests/test_dynamic_dims.py compiles those)
        # A whole layer is seconds to compile, and the llm suite is 92 gemms
        # at model shapes (their sm_90 kernels, mma.sync, are the gemm
        # suite's and the kernel cases'): only as the harness runs them.
        archs = (
            BENCHMARK_ARCHS[-1:]
            if suite in ("layer", "calls", "llm")
            else BENCHMARK_ARCHS
        )
        for case in make():
            if suite == "calls" and case.build is None:
                continue  # the seed's and the gemm suite's graphs, renamed
            for arch in archs:
                yield f"benchmark/{suite}/{case.id}/{arch}", arch, case.graph


def digest(graph_factory: Callable, arch: str) -> str:
    from kernel_cases import hand_schedules

    from molten import ZeroCompiler

    graph = graph_factory()
    compiled = ZeroCompiler(arch=arch).compile(
        graph, schedules=hand_schedules(graph.name)
    )
    return digest_of(compiled)


def digest_of(compiled) -> str:
    text = compiled.source + "\0" + compiled.header
    return hashlib.sha256(text.encode()).hexdigest()


def read_golden() -> dict[str, str]:
    lines = GOLDEN.read_text().splitlines()
    return dict(reversed(line.split("  ", 1)) for line in lines if line)


def main(argv: list[str]) -> int:
    if argv != ["--update"]:
        print(__doc__)
        return 2
    rows = [f"{digest(graph, arch)}  {label}" for label, arch, graph in cases()]
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text("\n".join(rows) + "\n")
    print(f"wrote {len(rows)} digests to {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]
    sys.exit(main(sys.argv[1:]))
