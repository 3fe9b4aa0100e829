"""`fuse-prologue` (opt-in: `ZeroCompiler(prologue=True)`): rms_norm(x, w)
@ W.T as one gemm kernel on sm_90a, where the persistent TMA kernel takes
the matmul, with at most PROLOGUE_MAX_ROWS rows.
The kernel level is interpreted against the graph (float64 and native),
and the gate, the error for a schedule whose kernel has no prologue, and
the kernel's generated code (the norm computed in A's stages) are
checked; on the GPU, the kernels below against the
interpreter, and in test_runtime_gpu the SIMT variant."""

import sys
from pathlib import Path

import numpy as np
import pytest

import molten
from molten.dialects import kernel
from molten.errors import MoltenError
from molten.ir import DataflowGraph
from molten.passes.schedule.common import wgmma_tile_schedule

try:  # tests/ is a package (tests/__init__.py) or a plain directory
    from .conftest import NATIVE_TOL, REFERENCE_TOL, assert_close, rand
    from .kernel_cases import rms_norm_linear
except ImportError:  # pragma: no cover
    from conftest import NATIVE_TOL, REFERENCE_TOL, assert_close, rand
    from kernel_cases import rms_norm_linear


def _graph(m: int, k: int, n: int, siblings: bool = False, dtype="bfloat16"):
    g = DataflowGraph("norm_linear")
    rms_norm_linear(m, k, n, siblings)(g, dtype)
    return g


def _kernels(module) -> list[kernel.FuncOp]:
    return [op for op in module.walk() if isinstance(op, kernel.FuncOp)]


def _body(kfunc: kernel.FuncOp) -> list[str]:
    return [op.name for op in kfunc.body.block.ops]


@pytest.mark.parametrize("siblings", [False, True])
def test_the_norm_is_computed_in_the_gemm(siblings, rng):
    """One gemm kernel reads x (or the residual stream) and holds the mean
    square, the unscaled lhs, the matmuls and the scale after them; it
    computes what the graph does."""
    g = _graph(70, 2048, 5000, siblings)
    module = molten.ZeroCompiler(arch="sm_90a", prologue=True).optimize(g)
    gemms = [k for k in _kernels(module) if k.kind.data == kernel.KernelKind.GEMM]
    (gemm,) = gemms
    body = _body(gemm)
    assert "molten.reduce_mean" in body
    assert body.count("molten.matmul") == (2 if siblings else 1)
    assert gemm.schedule.persistent.data > 0 and gemm.schedule.split.data == 1
    assert not [
        k for k in _kernels(module) if k.kind.data == kernel.KernelKind.ROW_REDUCE
    ]
    inputs = [rand(rng, t.shape.dims, t.dtype) for t in g.inputs]
    for reference, tol in ((True, REFERENCE_TOL), (False, NATIVE_TOL["bfloat16"])):
        want = molten.interpret(g, *inputs, reference=reference)
        got = molten.interpret(module, *inputs, reference=reference)
        for w, o in zip(want, got, strict=True):
            assert_close(o, w, tol)


@pytest.mark.parametrize(
    "m, dtype, arch, prologue",
    [
        (512, "bfloat16", "sm_90a", True),  # many rows: the norm's own kernel
        (70, "float16", "sm_90a", True),  # f16: x * w unscaled may overflow
        (70, "bfloat16", "sm_90", True),  # no persistent TMA kernel
        (70, "bfloat16", "sm_90a", False),  # not asked for (the default)
    ],
)
def test_where_the_prologue_does_not_pay_or_apply_the_norm_stays_apart(
    m, dtype, arch, prologue
):
    compiler = molten.ZeroCompiler(arch=arch, prologue=prologue)
    module = compiler.optimize(_graph(m, 2048, 5000, dtype=dtype))
    kinds = sorted(k.kind.data.value for k in _kernels(module))
    assert kinds == ["gemm", "row_reduce"]
    (gemm,) = [k for k in _kernels(module) if k.kind.data == kernel.KernelKind.GEMM]
    assert "molten.reduce_mean" not in _body(gemm)


def test_the_generated_kernel_normalizes_the_stages_it_reads():
    """The persistent kernel's consumers compute x * w in place in A's stage
    (w read from global memory, once a chunk of columns for both rows),
    then their warpgroup's barrier; the mean square is summed over the
    quad's lanes."""
    source = (
        molten.ZeroCompiler(arch="sm_90a", prologue=True)
        .compile(_graph(70, 2048, 5000))
        .source
    )
    assert 'asm volatile("fence.proxy.async.shared::cta;" ::: "memory");' in source
    assert 'asm volatile("bar.sync %0, 128;"' in source
    assert source.count("__shfl_xor_sync") >= 4  # two rows, offsets 1 and 2


def test_a_schedule_whose_kernel_has_no_prologue_is_a_clear_error():
    """A hand schedule of the cp.async wgmma kernel for a gemm that computes
    its lhs: an error naming what takes it, not a traceback."""
    g = _graph(70, 2048, 5000)
    compiler = molten.ZeroCompiler(arch="sm_90a", prologue=True)
    (name,) = [
        k.sym_name.data
        for k in _kernels(compiler.optimize(g))
        if k.kind.data == kernel.KernelKind.GEMM
    ]
    schedule = wgmma_tile_schedule(64, 128, 4)
    with pytest.raises((MoltenError, NotImplementedError), match="computes its lhs"):
        compiler.compile(g, schedules={name: schedule})


def test_q_k_v_of_one_norm_and_width_are_one_kernel(rng):
    """Three matmuls of one normalized lhs and one width (multi-head
    attention's projections): the row scale they share makes their
    epilogues one group, so one kernel computes the norm once and all
    three products (siblings)."""
    g = _qkv_graph()
    module = molten.ZeroCompiler(arch="sm_90a", prologue=True).optimize(g)
    (gemm,) = _kernels(module)
    body = _body(gemm)
    assert body.count("molten.matmul") == 3
    assert body.count("molten.reduce_mean") == 1
    inputs = [rand(rng, t.shape.dims, t.dtype) for t in g.inputs]
    want = molten.interpret(g, *inputs, reference=True)
    got = molten.interpret(module, *inputs, reference=True)
    for w_, o in zip(want, got, strict=True):
        assert_close(o, w_, REFERENCE_TOL)


def test_a_layers_second_norm_joins_the_gate_and_up_kernel():
    """Qwen2.5-7B's layer at 128 tokens with the option: 8 kernels, the
    post-attention norm computed by the kernel of gate, up and silu (the
    first norm stays apart, as its k and v projections alone would take
    split-K; q, k and v are then one kernel, fuse-epilogue's)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
    from decoder_layer import CONFIGS, decoder_layer

    compiled = molten.ZeroCompiler(arch="sm_90a", prologue=True).compile(
        decoder_layer(CONFIGS["qwen2.5-7b"], 128)
    )
    names = [k.name.removeprefix("decoder_layer_") for k in compiled.kernels]
    assert len(names) == 8 and "row_reduce0" in names
    assert any(
        {"matmul", "reduce_mean", "silu"} <= set(k.fused_ops) for k in compiled.kernels
    )


def _qkv_graph() -> DataflowGraph:
    g = DataflowGraph("qkv")
    x = g.add_input("x", [70, 2048], "bfloat16")
    w = g.add_input("w", [2048], "bfloat16")
    h = g.rms_norm(x, w)
    for name in ("q", "k", "v"):
        weight = g.add_input(f"{name}_proj", [5000, 2048], "bfloat16")
        g.add_output(g.matmul(h, weight, transpose_b=True), name)
    return g


GPU_GRAPHS = {
    # partial M (two 64-row tiles) and N
    "linear_70x2048x5000": lambda: _graph(70, 2048, 5000),
    # sibling matmuls, the source a residual stream
    "siblings_120x2048x8000": lambda: _graph(120, 2048, 8000, True),
    # three siblings
    "qkv_70x2048x5000": _qkv_graph,
}


@pytest.mark.gpu
@pytest.mark.parametrize("case", sorted(GPU_GRAPHS))
def test_the_prologue_kernel_on_the_gpu(case, rng):
    """Each graph's one prologue gemm kernel (and the pointwise kernel of
    the residual stream) run through the runtime (NVRTC), outputs
    poisoned, against the float64 interpreter."""
    torch = pytest.importorskip("torch", reason="the GPU tests hold memory in torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")
    from molten.passes.schedule.target import current_native_arch

    if current_native_arch() != "sm_90a":
        pytest.skip("the prologue kernel is sm_90a's")
    g = GPU_GRAPHS[case]()
    compiled = molten.ZeroCompiler(arch="sm_90a", prologue=True).compile(g)
    assert any("reduce_mean" in k.fused_ops for k in compiled.kernels)
    hosts = [rng.standard_normal(t.shape.dims) / 8 for t in g.inputs]
    rounded = [
        molten.interpreters.round_to(a, t.type.element_type)
        for a, t in zip(hosts, g.inputs, strict=True)
    ]
    want = molten.interpret(g, *rounded, reference=True)
    if len(g.outputs) == 1:  # one output comes back as an array, not a tuple
        want = (want,)
    devices = [torch.tensor(a, dtype=torch.bfloat16, device="cuda") for a in hosts]
    outs = [
        torch.full(
            tuple(t.shape.dims), float("nan"), dtype=torch.bfloat16, device="cuda"
        )
        for t in g.outputs
    ]
    compiled(*devices, out=outs)
    torch.cuda.synchronize()
    for got, w_ in zip(outs, want, strict=True):
        got = got.double().cpu().numpy()
        assert not np.isnan(got).any()
        assert np.linalg.norm(got - w_) / np.linalg.norm(w_) < 1e-2
