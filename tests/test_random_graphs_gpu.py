"""600 random graphs run on the GPU and compared with the float64 interpreter.

Marker `gpu`. Each graph (tests/random_graphs.py: elementwise chains with
broadcasts, reductions, norms, softmax, matmul epilogues, layout changes,
casts, and masks from integer ids with lookups, at rank 0 to 4, odd sizes,
f32, f16 and bf16 values) is compiled for the
runtime, run on fresh random inputs with NaN-poisoned outputs, and judged
against `molten.interpret(..., reference=True)`.

The judge (`mismatch`) holds the GPU to the dtype's own accuracy: its error
may not exceed the larger of the dtype's tolerance and four times the error
of the interpreter at the dtype's precision (every op rounded to the dtype),
in relative L2 and, per element, eight times that interpreter's worst error.
An infinity passes only where the float64 value also leaves the dtype's
range. Integer results (a mask's counts, positions) equal the
interpreter's exactly. A graph whose values overflow the dtype inside (the
interpreter at the dtype's precision gives inf or NaN where float64 is
finite) is skipped with that reason, and counted.

`MOLTEN_RANDOM_GRAPHS_LOG=path` appends one JSON line per graph there.
"""

import json
import os

import numpy as np
import pytest
from random_graphs import GRAPHS, random_graph, random_inputs

import molten
from molten import ZeroCompiler

torch = pytest.importorskip("torch", reason="the GPU tests hold device memory in torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU or driver"),
]


TOLERANCE = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
LARGEST = {
    "float32": float(np.finfo(np.float32).max),
    "float16": float(np.finfo(np.float16).max),
    "bfloat16": 3.3895313892515355e38,
}
TORCH_DTYPE = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
}


def _relative(error: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(error) / max(np.linalg.norm(want), 1e-6))


def mismatch(got, want, native, dtype: str) -> str | None:
    """Why the GPU's `got` does not match float64's `want`, or None; `native`
    is the interpreter at the dtype's precision."""
    if np.isnan(want).any():
        return "float64 itself gives NaN: the generator drew an ill-defined graph"
    beyond = np.abs(want) > LARGEST[dtype]
    overflowed = np.isinf(got) & (np.sign(got) == np.sign(want))
    if (beyond & ~overflowed).any():
        return f"{int((beyond & ~overflowed).sum())} values beyond {dtype} not inf"
    got, want, native = got[~beyond], want[~beyond], native[~beyond]
    if not np.isfinite(got).all():
        where = int(np.flatnonzero(~np.isfinite(got))[0])
        return (
            f"{int((~np.isfinite(got)).sum())} values not finite where float64 is "
            f"(first at flat index {where}: {got[where]} vs {want[where]})"
        )
    if got.size == 0:
        return None
    native_error = _relative(native - want, want)
    error = _relative(got - want, want)
    allowed = max(TOLERANCE[dtype], 4 * native_error)
    if error > allowed:
        return f"relative L2 error {error:.2e} > {allowed:.2e}"
    worst = float(np.abs(got - want).max())
    worst_allowed = 8 * float(np.abs(native - want).max()) + TOLERANCE[dtype] * float(
        np.abs(want).max()
    )
    if worst > worst_allowed:
        at = int(np.abs(got - want).argmax())
        return (
            f"worst element error {worst:.2e} > {worst_allowed:.2e} "
            f"(flat index {at}: {got[at]} vs {want[at]})"
        )
    return None


def _log(record: dict) -> None:
    path = os.environ.get("MOLTEN_RANDOM_GRAPHS_LOG")
    if path:
        with open(path, "a") as log:
            log.write(json.dumps(record) + "\n")


def _as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("seed", range(GRAPHS))
def test_random_graph_matches_the_float64_interpreter(seed):
    drawn = random_graph(seed)
    g = drawn.graph
    arrays = random_inputs(g, np.random.default_rng(10_000 + seed))
    want = _as_tuple(molten.interpret(g, *arrays, reference=True))
    with np.errstate(all="ignore"):
        native = _as_tuple(molten.interpret(g, *arrays))
    record = {
        "seed": seed,
        "family": drawn.family,
        "dtype": drawn.dtype,
        "rank": drawn.rank,
        "arch": drawn.arch,
    }
    inside = [
        not np.isfinite(n.astype(np.float64)[np.abs(w) <= LARGEST[t.dtype]]).all()
        for n, w, t in zip(native, want, g.outputs, strict=True)
        if t.dtype in LARGEST  # integer results (counts, positions) are exact
    ]
    if any(inside):
        _log({**record, "verdict": "skipped: the dtype overflows inside"})
        pytest.skip(f"{drawn}: the dtype overflows inside the graph")

    compiled = ZeroCompiler(arch=drawn.arch).compile(g)
    inputs = [
        torch.tensor(a.astype(np.float32)).to(TORCH_DTYPE[t.dtype]).cuda()
        if t.dtype in TORCH_DTYPE
        else torch.from_numpy(np.ascontiguousarray(a)).cuda()  # ids and masks
        for a, t in zip(arrays, g.inputs, strict=True)
    ]
    outputs = [
        torch.full(t.shape.dims, float("nan"), dtype=TORCH_DTYPE[t.dtype]).cuda()
        if t.dtype in TORCH_DTYPE
        else torch.full(t.shape.dims, -1, dtype=getattr(torch, t.dtype)).cuda()
        for t in g.outputs
    ]
    compiled(*inputs, out=outputs)
    torch.cuda.synchronize()
    problems = []
    for i, (out, w, n, t) in enumerate(
        zip(outputs, want, native, g.outputs, strict=True)
    ):
        if t.dtype not in TORCH_DTYPE:  # integers: exactly the interpreter's
            if not np.array_equal(out.cpu().numpy(), w):
                problems.append(f"output {i}: {t.dtype} values differ")
            continue
        got = out.float().cpu().numpy().astype(np.float64)
        why = mismatch(got, w, n.astype(np.float64), t.dtype)
        if why is not None:
            problems.append(f"output {i}: {why}")
    record["kernels"] = len(compiled)
    _log({**record, "verdict": "; ".join(problems) or "match"})
    assert not problems, (
        f"{drawn} on {drawn.arch}, kernels {[k.name for k in compiled]}: "
        + "; ".join(problems)
    )
