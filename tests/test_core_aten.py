"""Core ATen coverage (molten.core_aten): docs/core-aten.md is the table
the installed torch gives, every status as molten/aten_ops.py has it; and
the handlers written from other ops compute what torch computes (through
from_torch and the interpreter, in float64 against eager)."""

from pathlib import Path

import numpy as np
import pytest

import molten

torch = pytest.importorskip("torch")
from molten import core_aten  # noqa: E402 (needs torch)

F = torch.nn.functional
TABLE = Path(__file__).parent.parent / "docs" / "core-aten.md"


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| `aten.")]


def test_the_committed_table_is_current():
    """Each op's status as the code gives it (the torch version in the
    header may differ: the rows are what must agree)."""
    want = _rows("\n".join(core_aten.markdown(core_aten.statuses())))
    got = _rows(TABLE.read_text())
    assert got == want, (
        "docs/core-aten.md is stale: write it again with "
        "`python -m molten.core_aten` and commit it with the change"
    )


def test_the_table_states_the_coverage_the_code_gives():
    """The headline number, at least the issue's target of 90%."""
    supported, in_scope = core_aten.coverage(core_aten.statuses())
    assert f"**{supported} of the {in_scope} in-scope" in TABLE.read_text()
    assert supported >= 0.9 * in_scope


def test_refused_and_out_of_scope_ops_say_why():
    for status in core_aten.statuses():
        if status.status in ("refused", "out of scope"):
            assert len(status.reason) > 10, status


def _check(fn, *inputs, tolerance=1e-9):
    graph = molten.from_torch(fn, list(inputs))
    arrays = [x.numpy() for x in inputs]
    got = molten.interpret(graph, *arrays, reference=True)
    want = fn(*inputs)
    np.testing.assert_allclose(
        np.asarray(got, dtype=np.float64),
        want.double().numpy(),
        rtol=tolerance,
        atol=tolerance,
    )


def _x(*shape):
    return torch.randn(*shape, dtype=torch.float32)


CASES = {
    "asinh": (torch.asinh, [_x(3, 5)]),
    "acosh": (torch.acosh, [_x(3, 5).abs() + 1]),
    "atanh": (torch.atanh, [_x(3, 5).clamp(-0.9, 0.9)]),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"), [_x(4), _x(4)]),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), [_x(4), _x(4)]),
    "div_trunc_int": (
        lambda a, b: torch.div(a, b, rounding_mode="trunc"),
        [torch.tensor([7, -7, 9, -9]), torch.tensor([2, 2, -4, -4])],
    ),
    "pow_scalar": (lambda x: torch.pow(2.0, x), [_x(5)]),
    "fill": (lambda x: torch.ops.aten.fill.Scalar(x, 1.5), [_x(2, 3)]),
    "copy": (lambda x, y: torch.ops.aten.copy.default(x, y), [_x(2, 3), _x(3)]),
    "constant_pad": (lambda x: F.pad(x, (1, 2, -1, 1), value=0.5), [_x(3, 4)]),
    "repeat": (lambda x: x.repeat(2, 1, 3), [_x(2, 3)]),
    "any": (lambda x: torch.any(x > 1.0, dim=1).float(), [_x(4, 6)]),
    "var": (lambda x: torch.var(x, dim=1, correction=0), [_x(4, 6)]),
    "var_unbiased": (lambda x: torch.var(x), [_x(4, 6)]),
    "native_layer_norm": (
        lambda x, w, b: torch.ops.aten.native_layer_norm(x, [6], w, b, 1e-5)[0],
        [_x(4, 6), _x(6), _x(6)],
    ),
    "index": (lambda x, i: x[:, i], [_x(3, 7), torch.tensor([0, 6, 2])]),
    "slice_scatter": (
        lambda x, y: torch.slice_scatter(x, y, 1, 2, 5),
        [_x(3, 7), _x(3, 3)],
    ),
    "select_scatter": (
        lambda x, y: torch.select_scatter(x, y, 0, 1),
        [_x(3, 7), _x(7)],
    ),
    "diagonal": (lambda x: torch.diagonal(x, 1, 0, 1), [_x(4, 5, 2)]),
    "diagonal_below": (lambda x: torch.diagonal(x, -2), [_x(5, 4)]),
    "cdist": (lambda a, b: torch.cdist(a, b), [_x(2, 3, 4), _x(2, 5, 4)]),
    "cdist_forward_p1": (
        lambda a, b: torch.ops.aten._cdist_forward(a, b, 1.0, None),
        [_x(3, 4), _x(5, 4)],
    ),
    "pdist": (lambda x: F.pdist(x), [_x(5, 3)]),
    "pdist_forward": (lambda x: torch.ops.aten._pdist_forward(x, 3.0), [_x(4, 3)]),
    "constant_pad_nd": (
        lambda x: torch.ops.aten.constant_pad_nd(x, [2, 0, 1, -1], -1.0),
        [_x(3, 4)],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_composed_handlers_are_torchs(case):
    fn, inputs = CASES[case]
    _check(fn, *inputs, tolerance=1e-6)


def _ties(*shape):
    """Few distinct values (ties), a NaN in the first row."""
    x = torch.randint(-2, 3, shape).float()
    x.view(-1, shape[-1])[0, 1] = float("nan")
    return x


POSITIONS = {
    "argmax": (lambda x: torch.argmax(x, 1), [_ties(4, 9)]),
    "argmin_keepdim": (lambda x: torch.argmin(x, 0, keepdim=True), [_ties(5, 3)]),
    "argmax_flat": (lambda x: torch.argmax(x), [_ties(3, 4, 5)]),
    "argmax_flat_keepdim": (lambda x: x.argmax(keepdim=True), [_ties(3, 4)]),
    "max_dim": (lambda x: tuple(torch.max(x, -1)), [_ties(4, 7)]),
    "min_dim_keepdim": (lambda x: tuple(x.min(1, keepdim=True)), [_ties(2, 6, 3)]),
    "min_dim_int": (
        lambda x: tuple(x.min(1)),
        [torch.randint(-(2**31), 2**31 - 1, (3, 8), dtype=torch.int32)],
    ),
    "argmax_int": (
        lambda x: torch.argmax(x, -1),
        [torch.randint(0, 4, (5, 6), dtype=torch.int64)],
    ),
    "sum_int": (
        lambda x: x.sum(-1),
        [torch.randint(-(2**31), 2**31 - 1, (3, 9), dtype=torch.int32)],
    ),
}


@pytest.mark.parametrize("case", sorted(POSITIONS))
def test_positions_and_integer_reductions_are_torchs(case):
    """argmax, argmin, max and min with indices, integer sums: exactly
    torch's (the first of ties, the first NaN, int64 sums)."""
    fn, inputs = POSITIONS[case]
    graph = molten.from_torch(fn, list(inputs))
    got = molten.interpret(graph, *[x.numpy() for x in inputs])
    want = fn(*inputs)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == w.numpy().dtype
        np.testing.assert_array_equal(np.asarray(g), w.numpy())


DECOMPOSED = {
    "addcmul": (lambda a, b, c: torch.addcmul(a, b, c, value=0.5), 3),
    "lerp": (lambda a, b: torch.lerp(a, b, 0.3), 2),
    "glu": (lambda a: F.glu(a, -1), 1),
    "logit": (lambda a: torch.logit(a.sigmoid()), 1),
    "celu": (lambda a: F.celu(a), 1),
    "logsigmoid": (lambda a: F.logsigmoid(a), 1),
    "frac": (lambda a: torch.frac(a), 1),
    "std": (lambda a: a.std(-1), 1),
}


@pytest.mark.parametrize("case", sorted(DECOMPOSED))
def test_ops_without_a_handler_are_decomposed_into_core_aten(case):
    """An op Molten has no handler for is decomposed by torch's Core ATen
    table (from_torch's run_decompositions) into ops it has."""
    fn, count = DECOMPOSED[case]
    _check(fn, *[_x(4, 8) for _ in range(count)], tolerance=1e-6)


def test_the_decompositions_keep_molten_s_composites_whole():
    """Decomposing the graph for one op (addcmul) leaves the ops Molten
    takes whole as they are: the softmax stays molten.softmax, the layer
    norm molten.layer_norm (not their Core ATen pieces)."""

    def fn(x, w):
        y = torch.softmax(torch.addcmul(x, x, x, value=0.5), -1)
        return F.layer_norm(y, (8,), w)

    graph = molten.from_torch(fn, [_x(4, 8), _x(8)])
    text = graph.to_mlir()
    assert "molten.softmax" in text and "molten.layer_norm" in text
    _check(fn, _x(4, 8), _x(8), tolerance=1e-6)


@pytest.mark.parametrize("ord", [2, 1, 0, 3.0, float("inf"), float("-inf")])
def test_vector_norms_are_torchs(ord):
    x = _x(4, 8)
    if ord == 0:
        x = x.round()
    _check(lambda a: torch.linalg.vector_norm(a, ord, dim=-1), x, tolerance=1e-6)
    _check(lambda a: F.cosine_similarity(a, a.flip(0), -1), x, tolerance=1e-6)


def _index_put(c, p, n):
    y = c.clone()
    y[:, :, p] = n
    return y


_CACHE, _POSITIONS, _NEW = _x(1, 2, 16, 4), torch.tensor([5, 9, 2]), _x(1, 2, 3, 4)
_IDS = torch.randint(0, 8, (4, 3))

SCATTERS = {
    "scatter": (lambda x, i, s: x.scatter(1, i, s), [_x(4, 8), _IDS, _x(4, 5)]),
    "scatter_value": (lambda x, i: x.scatter(1, i, 2.5), [_x(4, 8), _IDS]),
    "scatter_add": (lambda x, i, s: x.scatter_add(1, i, s), [_x(4, 8), _IDS, _x(4, 3)]),
    "index_copy": (lambda c, p, n: c.index_copy(2, p, n), [_CACHE, _POSITIONS, _NEW]),
    "index_add": (
        lambda c, p, n: c.index_add(2, p, n, alpha=0.5),
        [_CACHE, _POSITIONS, _NEW],
    ),
    "index_put": (_index_put, [_CACHE, _POSITIONS, _NEW]),
}


@pytest.mark.parametrize("case", sorted(SCATTERS))
def test_scatters_are_torchs(case):
    """scatter (a tensor or a number), scatter_add (duplicate indices
    counted), index_copy, index_add and index_put into a clone (torch's
    functionalization makes it index_put) through from_torch."""
    fn, inputs = SCATTERS[case]
    graph = molten.from_torch(fn, inputs)
    got = molten.interpret(graph, *[x.numpy() for x in inputs], reference=True)
    np.testing.assert_allclose(np.asarray(got), fn(*inputs).double().numpy(), atol=1e-6)


def test_inputs_and_buffers_written_in_place_are_updated():
    """A buffer updated in place (a KV cache's index_copy_) and an input
    (x.mul_) are graph inputs the graph updates (`molten.updates`, after
    torch's functionalization): the interpreter gives their new values
    after the outputs, and the compiled graph writes them where they are,
    the cache by its scatter kernel itself."""

    class Cache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("k", torch.zeros(1, 2, 16, 4))

        def forward(self, p, n):
            self.k.index_copy_(2, p, n)
            return self.k * 2

    module = Cache()
    graph = molten.from_torch(module, [_POSITIONS, _NEW])
    assert "molten.updates = 0 : i64" in graph.to_mlir()
    arguments = molten.torch_arguments(module, _POSITIONS, _NEW)
    doubled_k, new_k = molten.interpret(graph, *[a.numpy() for a in arguments])
    want = module(_POSITIONS, _NEW)
    np.testing.assert_allclose(doubled_k, want.numpy(), atol=1e-6)
    np.testing.assert_allclose(new_k, module.k.numpy(), atol=1e-6)
    compiled = molten.ZeroCompiler().compile(graph)
    assert compiled.updated == (0,) and len(compiled.outputs) == 1
    assert not any(type(s).__name__ == "Copy" for s in compiled.program)

    def doubled(x):
        x.mul_(2)
        return x + 1

    x = _x(3)
    graph = molten.from_torch(doubled, [x])
    plus_one, new_x = molten.interpret(graph, x.numpy(), reference=True)
    np.testing.assert_allclose(new_x, 2 * x.numpy(), rtol=1e-7)
    np.testing.assert_allclose(plus_one, 2 * x.numpy() + 1, rtol=1e-7)


def _with_ties_and_nans():
    x = torch.randint(-3, 4, (4, 40)).float()
    x[1, 7] = float("nan")
    x[2, 0] = float("nan")
    x[2, 30] = float("nan")
    return x


SCANS = {
    "cumprod": (lambda a: torch.cumprod(a, 1), [_x(3, 30) * 0.1 + 1]),
    "cumprod_int": (lambda a: torch.cumprod(a, 0), [torch.randint(-2, 3, (6, 5))]),
    "cummax": (lambda a: torch.cummax(a, 1), [_with_ties_and_nans()]),
    "cummin": (lambda a: torch.cummin(a, 0), [_with_ties_and_nans()]),
    "cummax_int": (lambda a: torch.cummax(a, 1), [torch.randint(-3, 4, (3, 50))]),
    "cummax_bool": (lambda a: torch.cummax(a > 1, 1), [torch.randint(0, 3, (3, 50))]),
    "cumsum_bool": (lambda a: (a > 1).cumsum(-1), [torch.randint(0, 3, (3, 50))]),
}


@pytest.mark.parametrize("case", sorted(SCANS))
def test_scans_are_torchs(case):
    """cumprod, cummax and cummin (values and positions: the last of equal
    ones, a NaN's once met), of floats, integers and a bool mask (whether
    any so far), and a bool mask's running count, as torch gives them."""
    fn, inputs = SCANS[case]
    graph = molten.from_torch(fn, inputs)
    got = molten.interpret(graph, *[x.numpy() for x in inputs], reference=True)
    want = fn(*inputs)
    want = tuple(want) if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g_out, w_out in zip(got, want, strict=True):
        assert g_out.dtype == w_out.numpy().dtype or w_out.is_floating_point()
        np.testing.assert_allclose(
            np.asarray(g_out, np.float64), w_out.double().numpy(), rtol=1e-6
        )
