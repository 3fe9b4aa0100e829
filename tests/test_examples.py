"""The committed example output is what Molten generates today, from the spec
and from the Python graph alike."""

from pathlib import Path

from molten import ZeroCompiler
from molten.ir import DataflowGraph, TensorShape

EXAMPLES = Path(__file__).parent.parent / "examples"


def _saved(graph: DataflowGraph, tmp_path: Path) -> dict[str, str]:
    compiler = ZeroCompiler(arch="sm_90")
    files = compiler.save(compiler.compile(graph), tmp_path)
    return {f.name: f.read_text() for f in files}


def test_committed_seed_cu_is_current(tmp_path):
    spec = (EXAMPLES / "fused_rmsnorm.mlir").read_text()
    saved = _saved(DataflowGraph.from_mlir(spec), tmp_path)
    for name in ("fused_rmsnorm.cu", "fused_rmsnorm.h"):
        assert (EXAMPLES / name).read_text() == saved[name], (
            f"examples/{name} is stale: regenerate it with "
            "`molten compile examples/fused_rmsnorm.mlir -o examples/`"
        )


def test_python_graph_and_spec_give_the_same_kernel(tmp_path):
    g = DataflowGraph("fused_rmsnorm")
    x = g.add_input("x", TensorShape([2048, 5120]))
    w = g.add_input("w", TensorShape([5120]))
    g.add_output(g.rms_norm(x, w, name="norm"))
    from_python = _saved(g, tmp_path / "python")
    assert (
        from_python["fused_rmsnorm.cu"] == (EXAMPLES / "fused_rmsnorm.cu").read_text()
    )


def test_molten_opt_prints_the_compiled_source(capsys):
    """`molten-opt spec -p <default pipeline> -t cuda` is `compile(g).source`."""
    from molten.pipeline import DEFAULT_PIPELINE
    from molten.tools.molten_opt import main

    spec = EXAMPLES / "fused_rmsnorm.mlir"
    assert main([str(spec), "-p", DEFAULT_PIPELINE, "-t", "cuda"]) == 0
    printed = capsys.readouterr().out
    compiled = ZeroCompiler().compile(DataflowGraph.from_mlir(spec.read_text()))
    assert printed == compiled.source
