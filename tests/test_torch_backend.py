"""`torch.compile(backend="molten")` and `molten.explain`: the model split
into the parts Molten takes and the ops eager PyTorch runs, each part a
Molten graph (here interpreted on the CPU; GPU tests run the compiled
parts), and the eager fallbacks with their reasons."""

import inspect
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import molten
from molten.torch_backend import MoltenBackendWarning, backend, plan

torch = pytest.importorskip("torch")
nn = torch.nn

sys.path.insert(0, str(Path(__file__).parent))
from test_from_torch import LlamaBlock  # noqa: E402


def _interpreted(graph):
    """A part's graph run by the interpreter, on and to torch tensors."""

    def run(*args):
        arrays = [a.detach().float().numpy() for a in args]
        out = molten.interpret(graph, *arrays)
        outs = out if isinstance(out, tuple) else (out,)
        tensors = tuple(torch.from_numpy(np.asarray(o, dtype=np.float32)) for o in outs)
        return tensors if isinstance(out, tuple) else tensors[0]

    return run


class WithSort(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        return torch.sort(y, 0).values * 2 + 1, y


def test_parts_molten_takes_run_in_molten_the_rest_eagerly():
    model, x = WithSort(), torch.randn(8, 16)
    compiled, explanation = plan(model, [x], _interpreted, need_cuda=False)
    molten_ops = sorted(op for p in explanation.parts if p.molten for op in p.ops)
    eager = [p for p in explanation.parts if not p.molten]
    assert molten_ops == ["add.Tensor", "linear.default", "mul.Tensor", "relu.default"]
    assert [p.ops for p in eager] == [["aten.sort.default"]]
    line = inspect.getsourcelines(WithSort.forward)[1] + 2
    assert f"test_torch_backend.py:{line}" in eager[0].reason
    assert not explanation.whole
    with torch.no_grad():
        got, want = compiled(x), model(x)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


def test_a_llama_block_is_one_molten_part():
    torch.manual_seed(0)
    model, x = LlamaBlock(), torch.randn(16, 64)
    compiled, explanation = plan(model, [x], _interpreted, need_cuda=False)
    assert explanation.whole and len(explanation.parts) == 1, str(explanation)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)


def test_explain_says_what_runs_where():
    text = str(molten.explain(WithSort(), torch.randn(8, 16)))
    assert text.startswith("Molten runs 2 part(s), eager PyTorch 1 op(s), 2 kernel(s).")
    assert "Molten: linear.default, relu.default" in text
    assert "  kernel WithSort_fused_1_gemm0: matmul, add, relu" in text
    assert "eager (Molten does not take aten.sort.default: a sort has none" in text
    untraceable = molten.explain(lambda x: x if x.sum() > 0 else -x, torch.randn(4))
    assert "torch.export could not trace it" in str(untraceable)
    function = molten.explain(lambda x: torch.tanh(x) * 2, torch.randn(4))
    assert function.whole and "Molten: tanh.default, mul.Tensor" in str(function)


def test_a_part_runs_eagerly_where_gradients_are_recorded():
    """Molten computes no gradients: with autograd recording, a Molten part
    runs its eager module, and gradients flow as without Molten."""
    model, x = WithSort(), torch.randn(8, 16)
    compiled, _ = plan(model, [x], _interpreted, need_cuda=False)
    with pytest.warns(MoltenBackendWarning, match="where gradients are recorded"):
        out, _ = compiled(x)
    out.sum().backward()
    assert model.fc.weight.grad is not None


def test_a_part_failing_at_run_time_runs_eagerly_from_then_on():
    def failing(graph):
        def run(*args):
            raise molten.LaunchError("the driver refused the launch")

        return run

    model, x = WithSort(), torch.randn(8, 16)
    compiled, _ = plan(model, [x], failing, need_cuda=False)
    with torch.no_grad():
        with pytest.warns(
            MoltenBackendWarning, match="LaunchError: the driver refused"
        ):
            got = compiled(x)
        want = model(x)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w)


def test_torch_compile_on_the_cpu_runs_eagerly_with_one_warning():
    """Molten runs on CUDA devices: CPU inputs run eagerly, said once."""
    torch._dynamo.reset()
    model, x = WithSort(), torch.randn(8, 16)
    compiled = torch.compile(model, backend="molten")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(x)
        compiled(x)
    said = [w for w in caught if issubclass(w.category, MoltenBackendWarning)]
    assert len(said) == 1 and "inputs on cpu" in str(said[0].message)
    for g, w in zip(got, model(x), strict=True):
        torch.testing.assert_close(g, w)


def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")


@pytest.mark.gpu
def test_torch_compile_runs_a_llama_block_in_molten_on_the_gpu():
    """The block in bf16 on the GPU: one Molten part, no warning, its output
    against the float64 block."""
    _cuda()
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = LlamaBlock(256, 4, 512).cuda()
    x = torch.randn(64, 256, device="cuda")
    want = model.double()(x.double())
    model = model.to(torch.bfloat16)
    compiled = torch.compile(model, backend="molten")
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        got = compiled(x.bfloat16())
    said = [str(w.message) for w in caught if w.category is MoltenBackendWarning]
    assert not said, said
    error = (got.double() - want).norm() / want.norm()
    assert error < 2e-2, error


@pytest.mark.gpu
def test_torch_compile_splits_a_model_on_the_gpu():
    """A sort between two Molten parts runs eagerly, said once; the
    result is eager's."""
    _cuda()
    torch._dynamo.reset()
    model, x = WithSort().cuda(), torch.randn(8, 16, device="cuda")
    compiled = torch.compile(model, backend="molten")
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        got = compiled(x)
    said = [str(w.message) for w in caught if w.category is MoltenBackendWarning]
    assert len(said) == 1 and "aten.sort.default" in said[0], said
    for g, w in zip(got, model(x), strict=True):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4)


def test_parts_are_torch_library_custom_ops():
    """Each Molten part runs through its own custom op, torch.ops.molten.*:
    the compiled model runs under FakeTensorMode (shapes from the part's
    eager module, nothing computed) and in inference mode."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    model, x = WithSort(), torch.randn(8, 16)
    compiled, explanation = plan(model, [x], _interpreted, need_cuda=False)
    parts = [m for n, m in compiled.named_children() if n.startswith("fused_")]
    assert len(parts) == 2
    for part in parts:
        namespace, name = part.op._qualname.split("::")
        assert namespace == "molten"
        assert getattr(torch.ops.molten, name) is not None
    with torch.inference_mode():
        got, want = compiled(x), model(x)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fake = mode.from_tensor(x)
        with torch.no_grad():
            shapes = [tuple(t.shape) for t in compiled(fake)]
    assert shapes == [(8, 16), (8, 16)]
    # Through the ops' fake implementations: the parts did not fall back.
    assert all(part.failed is None for part in parts)


class CatOfActivations(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        return torch.cat([y, x], dim=-1) * 2


def test_a_cat_of_activations_runs_in_molten_with_the_rest():
    """A cat that is not a weight concat is computed (its parts padded and
    summed): the whole model is one Molten part."""
    model, x = CatOfActivations(), torch.randn(8, 16)
    compiled, explanation = plan(model, [x], _interpreted, need_cuda=False)
    assert all(p.molten for p in explanation.parts)
    molten_ops = sorted(op for p in explanation.parts for op in p.ops)
    assert molten_ops == ["cat.default", "linear.default", "mul.Tensor", "relu.default"]
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)


class Tokens(nn.Module):
    """A projection read back through a view of its token count."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.fc(x)).view(x.shape[0], 4, 4).sum(-1) * 2


def test_dynamo_s_dynamic_sizes_are_named_dimensions():
    """With dynamic=True, Dynamo hands the backend a graph of symbolic sizes
    (a SymInt input, x of [s, 16]): the part is one graph over a named
    dimension, compiled once for every token count, each result eager's."""
    torch._dynamo.reset()
    graphs = []

    def compile_part(graph):
        graphs.append(graph)
        return _interpreted(graph)

    model = Tokens()
    compiled = torch.compile(
        model, backend=backend(compile_part, need_cuda=False), dynamic=True
    )
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        for tokens in (8, 13, 5):
            x = torch.randn(tokens, 16)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert not [w for w in caught if w.category is MoltenBackendWarning]
    (graph,) = graphs
    (x,) = [t for t in graph.inputs if t.shape.rank == 2 and t.shape[1] == 16 and
            isinstance(t.shape[0], str)]  # fmt: skip
    assert graph.outputs[0].shape[0] == x.shape[0]


@pytest.mark.gpu
def test_torch_compile_dynamic_on_the_gpu():
    """torch.compile(dynamic=True) on the GPU: one Molten part over a named
    token count, no warning, each count's result eager's."""
    _cuda()
    torch._dynamo.reset()
    model = Tokens().cuda()
    compiled = torch.compile(model, backend="molten", dynamic=True)
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        for tokens in (8, 13, 300):
            x = torch.randn(tokens, 16, device="cuda")
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    said = [str(w.message) for w in caught if w.category is MoltenBackendWarning]
    assert not said, said
