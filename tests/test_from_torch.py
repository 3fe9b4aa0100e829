"""`molten.from_torch`: each ATen op it takes, translated and interpreted
in float64 against eager PyTorch (CPU), a Llama-style block whole, and the
errors for what it does not take."""

import inspect

import numpy as np
import pytest

import molten

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


def _check(fn_or_module, *inputs, tolerance=1e-5, reference=True):
    """from_torch's graph, interpreted in float64 (or, not `reference`, in
    its dtypes, rounding as torch rounds), against eager's result."""
    graph = molten.from_torch(fn_or_module, inputs)
    module = fn_or_module if isinstance(fn_or_module, nn.Module) else None
    args = molten.torch_arguments(module, *inputs) if module else inputs
    arrays = (
        a.detach().float().numpy() if a.is_floating_point() else a.numpy() for a in args
    )
    got = molten.interpret(graph, *arrays, reference=reference)
    with torch.no_grad():
        want = fn_or_module(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        w = w.double().numpy()
        assert g.shape == w.shape
        scale = max(np.abs(w).max(), 1e-30)
        assert np.abs(g - w).max() / scale < tolerance
    return graph


def _x(*shape, positive=False):
    x = torch.randn(*shape)
    return x.abs() + 0.5 if positive else x


ELEMENTWISE = {
    "add": lambda x, y: x + y,
    "add_scalar_alpha": lambda x, y: torch.add(x, y, alpha=0.5) + 2,
    "sub": lambda x, y: torch.sub(x, y, alpha=2) - 1.5,
    "rsub": lambda x, y: 1.0 - x,
    "mul": lambda x, y: x * y * 3,
    "div": lambda x, y: x / (y.abs() + 1) / 2,
    "pow": lambda x, y: x**2 + torch.pow(y, 3),
    "neg_abs": lambda x, y: -x + y.abs(),
    "exp_log": lambda x, y: torch.exp(x) + torch.log(y.abs() + 1),
    "sqrt_rsqrt": lambda x, y: torch.sqrt(x.abs()) + torch.rsqrt(y.abs() + 1),
    "reciprocal_square": lambda x, y: torch.reciprocal(y.abs() + 1) + torch.square(x),
    "tanh_sigmoid": lambda x, y: torch.tanh(x) * torch.sigmoid(y),
    "relu_silu": lambda x, y: F.relu(x) + F.silu(y),
    "gelu": lambda x, y: F.gelu(x) + F.gelu(y, approximate="tanh"),
    "clamp": lambda x, y: x.clamp(-0.5, 0.7) + y.clamp(min=0.1) + y.clamp(max=0.2),
    "clamp_min_max": lambda x, y: torch.clamp_min(x, 0.1) + torch.clamp_max(y, 0.3),
    "hardtanh_relu6": lambda x, y: F.hardtanh(x) + F.relu6(y * 4),
    "maximum_minimum": lambda x, y: torch.maximum(x, y) + torch.minimum(x, y),
    "broadcast": lambda x, y: x * y.mean(0) + y.sum(-1, keepdim=True),
    "leaky_relu": lambda x, y: F.leaky_relu(x) + F.leaky_relu(y, negative_slope=0.2),
    "elu_selu": lambda x, y: F.elu(x, alpha=0.7) + torch.selu(y),
    "hardsigmoid_hardswish": lambda x, y: F.hardsigmoid(x * 4) + F.hardswish(y * 4),
    "softplus": lambda x, y: F.softplus(x * 30) + F.softplus(y, beta=2.0),
    "mish": lambda x, y: F.mish(x * 3) + y,
    "max_min_other": lambda x, y: torch.max(x, y) - torch.min(x, y * 2),
}


@pytest.mark.parametrize("op", sorted(ELEMENTWISE))
def test_elementwise_ops(op):
    _check(ELEMENTWISE[op], _x(4, 24), _x(4, 24))


REDUCTIONS = {
    "sum": lambda x: x.sum(-1),
    "sum_keepdim": lambda x: x.sum((0, 2), keepdim=True),
    "sum_all": lambda x: x.sum(),
    "mean": lambda x: x.mean(1),
    "mean_keepdim": lambda x: x.mean(-1, keepdim=True),
    "amax": lambda x: x.amax(0),
    "amax_keepdim": lambda x: torch.amax(x, (1, 2), keepdim=True),
    "softmax": lambda x: torch.softmax(x, -1) + F.softmax(x, dim=1),
    "log_softmax": lambda x: torch.log_softmax(x, -1) + F.log_softmax(x, dim=0),
    "amin": lambda x: x.amin(-1, keepdim=True) + torch.amin(x, (0, 1), keepdim=True),
    "max_dim_values": lambda x: (
        torch.max(x, dim=1, keepdim=True)[0] + x.max(-1, keepdim=True).values
    ),
    "min_dim_values": lambda x: torch.min(x, dim=2).values,
    "max_min_all": lambda x: x.max() - x.min(),
    "logsumexp": lambda x: torch.logsumexp(x * 20, -1) - 1,
    "logsumexp_keepdim": lambda x: torch.logsumexp(x, 1, keepdim=True) * 2,
    "cumsum": lambda x: torch.cumsum(x, 1) + x.cumsum(-1),
    "cumsum_reverse": lambda x: torch.cumsum(x.flip(2), 2).flip(2),
}


@pytest.mark.parametrize("op", sorted(REDUCTIONS))
def test_reductions(op):
    _check(REDUCTIONS[op], _x(3, 5, 16))


LAYOUTS = {
    "view_reshape": lambda x: x.view(6, 16).reshape(2, -1) + 1,
    "permute": lambda x: x.permute(2, 0, 1) * 2,
    "transpose_t": lambda x: x.transpose(0, 2).reshape(16, 6).t() + 1,
    "expand": lambda x: x.sum(1, keepdim=True).expand(2, 3, 16) + x,
    "unsqueeze_squeeze": lambda x: (
        x.unsqueeze(1).squeeze(1).unsqueeze(-1).squeeze() + 1
    ),
    "contiguous": lambda x: x.transpose(1, 2).contiguous() * 2,
    "numpy_T": lambda x: x.T + 1,
    "flip": lambda x: x.flip(0, 2) + torch.flip(x, [1]),
    "triu_tril": lambda x: torch.triu(x, 1) + x.tril(-3) * 2,
    "narrow_slice": lambda x: x.narrow(2, 3, 5) * 2 + x[:, 1:, -5:].sum(1, True),
    "select": lambda x: x.select(1, -1) + x[:, 0] * x[1, 0],
    "split": lambda x: (
        torch.cat(x.split(5, -1)[::-1], -1) + x.split([1, 2], 1)[1].sum(1, True)
    ),
    "zeros_like": lambda x: torch.zeros_like(x) + x * 2,
    "exclusive_cumsum": lambda x: torch.cat(
        (torch.zeros_like(x.select(2, 0).unsqueeze(2)), x.narrow(2, 0, 15).cumsum(2)),
        dim=2,
    ),
}


@pytest.mark.parametrize("op", sorted(LAYOUTS))
def test_layout_ops(op):
    _check(LAYOUTS[op], _x(2, 3, 16))


def test_casts():
    """A cast to bf16 and back rounds as torch rounds."""
    _check(
        lambda x: (x * 3).to(torch.bfloat16).float() + 1,
        _x(4, 16),
        tolerance=1e-6,
        reference=False,
    )
    graph = molten.from_torch(lambda x: x.half(), [_x(4, 16)])
    assert graph.outputs[0].dtype == "float16"


def test_a_cast_to_a_promoted_type():
    """Hugging Face's RMSNorm casts to torch.promote_types(x.dtype, f32): the
    dtype is computed when translating, the cast is f32."""

    def hf_rms_norm(x, w):
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return w * h.to(x.dtype)

    x, w = _x(4, 16).bfloat16(), _x(16).bfloat16()
    graph = molten.from_torch(hf_rms_norm, [x, w])
    assert "molten.cast" in graph.to_mlir() and graph.outputs[0].dtype == "bfloat16"


MATMULS = {
    "mm": (lambda a, b: torch.mm(a, b), [(8, 16), (16, 12)]),
    "matmul": (lambda a, b: a @ b, [(8, 16), (16, 12)]),
    "bmm": (lambda a, b: torch.bmm(a, b), [(2, 8, 16), (2, 16, 12)]),
    "batched_matmul": (lambda a, b: torch.matmul(a, b), [(2, 8, 16), (16, 12)]),
    "addmm": (
        lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2),
        [(12,), (8, 16), (16, 12)],
    ),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(8, 16), (12, 16), (12,)]),
    "linear_no_bias": (lambda x, w: F.linear(x, w), [(2, 8, 16), (12, 16)]),
    "weight_k_n": (lambda x, w: x @ w.t(), [(8, 16), (12, 16)]),
}


@pytest.mark.parametrize("op", sorted(MATMULS))
def test_matmuls(op):
    fn, shapes = MATMULS[op]
    _check(fn, *(_x(*s) for s in shapes))


@pytest.mark.parametrize("affine", [True, False])
def test_norms(affine):
    module = nn.Sequential(
        nn.LayerNorm(32, elementwise_affine=affine),
        nn.RMSNorm(32, elementwise_affine=affine),
    )
    if affine:
        with torch.no_grad():
            for p in module.parameters():
                p.normal_()
    graph = _check(module, _x(4, 32))
    # Sequential's forward takes `input`; a parameter name is an identifier.
    assert [t.name for t in graph.inputs] == (
        ["_0_weight", "_0_bias", "_1_weight", "input"] if affine else ["input"]
    )


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(affine):
    module = nn.GroupNorm(4, 16, affine=affine)
    if affine:
        with torch.no_grad():
            module.weight.normal_()
            module.bias.normal_()
    _check(module, _x(3, 16, 5, 2))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(8, 16), (4, 16, 5, 3)])
def test_batch_norm(training, shape):
    """In training mode (a module as constructed) the batch's statistics,
    in eval mode the running ones; the step counter is not an input."""
    module = (nn.BatchNorm1d if len(shape) == 2 else nn.BatchNorm2d)(16)
    with torch.no_grad():
        for tensor in (module.weight, module.bias, module.running_mean):
            tensor.normal_()
        module.running_var.uniform_(0.5, 2.0)
    module.train(training)
    graph = _check(module, _x(*shape))
    assert [t.name for t in graph.inputs] == [
        "weight",
        "bias",
        "running_mean",
        "running_var",
        "input",
    ]


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(causal):
    q, k, v = _x(2, 4, 8, 16), _x(2, 4, 8, 16), _x(2, 4, 8, 16)
    _check(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
        q,
        k,
        v,
    )
    _check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3), q, k, v)


LOSSES = {
    "smooth_l1": lambda p, t: F.smooth_l1_loss(p, t) + F.smooth_l1_loss(p, t, beta=0.3),
    "smooth_l1_sum_beta0": lambda p, t: F.smooth_l1_loss(p, t, reduction="sum", beta=0),
    "huber": lambda p, t: F.huber_loss(p, t, delta=0.5),
    "huber_none": lambda p, t: F.huber_loss(p, t, reduction="none"),
    "mse_l1": lambda p, t: F.mse_loss(p, t) + F.l1_loss(p, t, reduction="sum"),
    "kl_div": lambda p, t: F.kl_div(torch.log(p), t, reduction="batchmean"),
    "kl_div_log_target": lambda p, t: F.kl_div(p, t.log(), log_target=True),
    "broadcast": lambda p, t: F.smooth_l1_loss(p, t.mean(0, keepdim=True)),
}


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_losses(loss):
    """Against the loss in float64 (a KL divergence of near distributions
    is a difference of nearly equal sums: float32 eager's own error is
    above 1e-5 of it at times)."""
    fn = LOSSES[loss]
    p, t = torch.rand(4, 24) + 0.1, torch.softmax(_x(4, 24) * 3, -1)
    graph = molten.from_torch(fn, [p, t])
    got = molten.interpret(graph, p.numpy(), t.numpy(), reference=True)
    want = fn(p.double(), t.double()).numpy()
    scale = max(np.abs(want).max(), 1e-30)
    assert np.abs(np.asarray(got) - want).max() / scale < 1e-6  # f32 constants


def test_kl_div_is_zero_where_the_target_is():
    """xlogy: a target of 0 adds 0, not NaN."""
    target = torch.softmax(_x(4, 24), -1)
    target[:, ::3] = 0
    _check(lambda p, t: F.kl_div(p, t, reduction="sum"), _x(4, 24), target)


def test_attention_with_a_mask_and_grouped_heads():
    """A float mask added to the scores; query heads sharing KV heads
    (enable_gqa); both, in bf16, one attention kernel."""
    q, k, v, mask = _x(2, 8, 16, 32), _x(2, 2, 16, 32), _x(2, 2, 16, 32), _x(16, 16)

    def attend(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)

    _check(attend, q, k, v, mask)
    _check(
        lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, is_causal=True, enable_gqa=True
        ),
        q,
        k,
        v,
    )
    graph = molten.from_torch(attend, [t.bfloat16() for t in (q, k, v, mask)])
    kernels = [
        k.name for k in molten.ZeroCompiler(arch="sm_90a").compile(graph).kernels
    ]
    assert sum("attention" in k for k in kernels) == 1, kernels


class LlamaBlock(nn.Module):
    """A Llama-style decoder block (no rotary embedding): rms_norm, q/k/v
    projections, causal attention over heads, o projection and residual,
    rms_norm, silu(gate) * up, down projection and residual."""

    def __init__(self, hidden=64, heads=4, intermediate=128):
        super().__init__()
        self.heads = heads
        self.input_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.post_attention_layernorm = nn.RMSNorm(hidden, eps=1e-6)
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        tokens, hidden = x.shape
        h = self.input_layernorm(x)

        def heads(y):
            return y.view(tokens, self.heads, -1).transpose(0, 1)

        q, k, v = heads(self.q_proj(h)), heads(self.k_proj(h)), heads(self.v_proj(h))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o_proj(o.transpose(0, 1).reshape(tokens, hidden))
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


def test_llama_block_whole():
    """The block translates whole (parameters named as the module names
    them), keeps its meaning, and in bf16 compiles to one `.cu` of fused
    kernels, the attention one of them."""
    block = LlamaBlock()
    x = _x(16, 64)
    graph = _check(block, x)
    names = [t.name for t in graph.inputs]
    assert names == [n.replace(".", "_") for n, _ in block.named_parameters()] + ["x"]
    bf16 = molten.from_torch(block.to(torch.bfloat16), [x.bfloat16()])
    compiled = molten.ZeroCompiler(arch="sm_90a").compile(bf16)
    kernels = [k.name for k in compiled.kernels]
    assert any("attention" in k for k in kernels), kernels
    assert sum("gemm" in k for k in kernels) >= 3, kernels


class Heads(nn.Module):
    """rms_norm, a projection, the heads: [T, 64] -> [4, T, 16]."""

    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(64)
        self.proj = nn.Linear(64, 64)

    def forward(self, x, gate):
        tokens = x.shape[0]
        y = self.proj(self.norm(x)) * torch.sigmoid(gate)
        return y.view(tokens, 4, 16).transpose(0, 1)


def test_a_named_dimension_gives_one_graph_for_every_size():
    """`dynamic` names x's and gate's first axis T: the graph takes any T
    (the view's size read from x), keeps its meaning at T = 1, 3 and 40,
    and compiles once."""
    model = Heads()
    graph = molten.from_torch(
        model,
        [_x(5, 64), _x(5, 64)],
        dynamic={"x": {0: "T"}, "gate": {0: "T"}},
    )
    assert [list(t.shape) for t in graph.inputs][-2:] == [["T", 64], ["T", 64]]
    assert list(graph.outputs[0].shape) == [4, "T", 16]
    for tokens in (1, 3, 40):
        x, gate = _x(tokens, 64), _x(tokens, 64)
        arrays = [a.detach().numpy() for a in molten.torch_arguments(model, x, gate)]
        got = molten.interpret(graph, *arrays, reference=True)
        with torch.no_grad():
            want = model(x, gate).double().numpy()
        assert np.abs(got - want).max() / np.abs(want).max() < 1e-5, tokens
    compiled = molten.ZeroCompiler().compile(graph)
    assert isinstance(compiled, molten.CompiledGraph) and compiled.dims == ("T",)


def test_dynamic_names_inputs_and_names():
    with pytest.raises(molten.UnsupportedError, match="dynamic names y, which are"):
        molten.from_torch(lambda x: x * 2, [_x(4, 8)], dynamic={"y": {0: "T"}})
    with pytest.raises(molten.UnsupportedError, match="'2T' is not a name"):
        molten.from_torch(lambda x: x * 2, [_x(4, 8)], dynamic={"x": {0: "2T"}})


def test_an_unsupported_op_names_itself_and_the_line():
    class Cumulative(nn.Module):
        def forward(self, x):
            return torch.sort(x, 0).values + 1

    line = inspect.getsourcelines(Cumulative.forward)[1] + 1
    with pytest.raises(molten.UnsupportedError) as caught:
        molten.from_torch(Cumulative(), [_x(4)])
    message = str(caught.value)
    assert "aten.sort.default" in message
    assert f"test_from_torch.py:{line} (return torch.sort(x, 0).values + 1)" in message


def test_errors_name_what_molten_does_not_take():
    with pytest.raises(molten.UnsupportedError, match="input 'x' is torch.float64"):
        molten.from_torch(lambda x: x + 1, [torch.zeros(4, dtype=torch.float64)])
    with pytest.raises(
        molten.DTypeError, match="aten.to.dtype in .*cast to torch.float64"
    ):
        molten.from_torch(lambda x: x.double(), [_x(4)])
    with pytest.raises(
        molten.UnsupportedError, match="takes an nn.Module or a function"
    ):
        molten.from_torch(3, [_x(4)])
    with pytest.raises(molten.UnsupportedError, match="torch.export could not trace"):
        molten.from_torch(lambda x: x if x.sum() > 0 else -x, [_x(4)])


class Embeddings(nn.Module):
    """Token and position embeddings scaled and summed, masked where the
    ids are padding, and the position ids a padding mask gives (cumsum):
    what a transformers model computes from its ids and mask."""

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(100, 16)
        self.positions = nn.Embedding(32, 16)

    def forward(self, ids, mask):
        h = self.tokens(ids) * 4.0 + self.positions(torch.arange(ids.shape[1]))
        keep = (mask != 0) & (ids < 90)
        return h.masked_fill(~keep[..., None], 0.0), (mask.cumsum(-1) - 1).clamp(min=0)


def test_integer_ids_masks_and_positions_are_torchs():
    module = Embeddings().eval()
    ids = torch.randint(0, 100, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 6:] = 0
    graph = molten.from_torch(module, [ids, mask])
    assert [t.dtype for t in graph.inputs][-2:] == ["int64", "int64"]
    args = molten.torch_arguments(module, ids, mask)
    got = molten.interpret(graph, *(a.detach().numpy() for a in args))
    with torch.no_grad():
        want = module(ids, mask)
    np.testing.assert_array_equal(got[0], want[0].numpy())
    np.testing.assert_array_equal(got[1], want[1].numpy())
    assert got[1].dtype == np.int64


def test_a_bool_attention_mask_keeps_the_scores_where_true():
    q = _x(1, 4, 16)
    mask = torch.rand(4, 4) > 0.3
    mask[:, 0] = True  # no row masked whole (torch's NaN there)
    _check(lambda q, m: F.scaled_dot_product_attention(q, q, q, attn_mask=m), q, mask)


class ConcatenatedQKV(nn.Module):
    """q, k and v from one linear of their weights (and biases) concatenated,
    split again by sizes or by slices."""

    def __init__(self, by_slices=False):
        super().__init__()
        self.by_slices = by_slices
        self.wq = nn.Parameter(torch.randn(32, 16))
        self.wk = nn.Parameter(torch.randn(8, 16))
        self.wv = nn.Parameter(torch.randn(8, 16))
        self.bq = nn.Parameter(torch.randn(32))
        self.bk = nn.Parameter(torch.randn(8))
        self.bv = nn.Parameter(torch.randn(8))

    def forward(self, x):
        w = torch.cat([self.wq, self.wk, self.wv])
        b = torch.cat([self.bq, self.bk, self.bv])
        y = F.linear(x, w, b)
        if self.by_slices:
            q, k, v = y[:, :32], y[:, 32:40], y[:, 40:]
        else:
            q, k, v = y.split([32, 8, 8], dim=-1)
        return q.sum(-1, keepdim=True) * k + v


@pytest.mark.parametrize("by_slices", [False, True], ids=["split", "slices"])
def test_a_weight_concat_is_a_matmul_per_part(by_slices):
    graph = _check(ConcatenatedQKV(by_slices), _x(5, 16))
    text = str(graph.to_module())
    assert text.count("molten.matmul") == 3
    assert "concat" not in text


def test_a_matmul_of_columns_concatenated():
    """x @ cat([a, b], 1), split at a's columns: x @ a and x @ b."""

    def fn(x, a, b):
        first, second = (x @ torch.cat([a, b], dim=1)).split([24, 8], dim=1)
        return first.sum(-1, keepdim=True) + second

    graph = _check(fn, _x(4, 16), _x(16, 24), _x(16, 8))
    assert str(graph.to_module()).count("molten.matmul") == 2


def test_a_cat_of_activations_is_computed():
    """A cat read by anything but a product (or an output) is computed:
    each part padded to the whole, summed (one pointwise kernel)."""
    _check(lambda x, y: torch.cat([x, y]) * 2, _x(2, 4), _x(3, 4))
    _check(lambda x, y: torch.cat([x, y.exp(), x], -1), _x(2, 4), _x(2, 1))
    graph = molten.from_torch(lambda x, y: torch.cat([x, y], 1), [_x(2, 4), _x(2, 3)])
    assert "molten.pad" in graph.to_mlir()
    with pytest.raises(molten.UnsupportedError, match=r"sizes \[4, 4\] other than"):
        molten.from_torch(
            lambda x, a, b: (x @ torch.cat([a, b], 1)).split([4, 4], 1)[0],
            [_x(2, 4), _x(4, 2), _x(4, 6)],
        )


def test_a_python_float_argument_is_an_input():
    """A float among the forward's arguments (KernelBench's A * s) is a 0-d
    float32 input, given at each call (torch.export alone would fix it at
    the example's value); torch_arguments passes it so."""

    class Scaled(nn.Module):
        def forward(self, a, s):
            return a * s

    graph = molten.from_torch(Scaled(), [_x(3, 4), 3.5])
    assert [t.shape.rank for t in graph.inputs] == [2, 0]
    a = _x(3, 4)
    arguments = molten.torch_arguments(Scaled(), a, -2.0)
    got = molten.interpret(graph, *[x.numpy() for x in arguments])
    np.testing.assert_allclose(got, (a * -2.0).numpy(), rtol=1e-6)
