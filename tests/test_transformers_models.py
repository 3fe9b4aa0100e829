"""transformers' own model classes through the front door, on the CPU (in
CI): Qwen2 and Llama (causal LMs, grouped-query heads, rotary tables, the
causal mask built by `masking_utils`), BERT (absolute positions, token
types, a padding mask) and T5's encoder (relative position buckets), at
tiny configs of their real structure, random weights.

- `from_torch(model, [ids, mask])`: one graph, its outputs in the float64
  interpreter within 1e-5 of eager float32 (at the unpadded positions),
  and compiled to one `.cu` (sm_90a, no GPU needed);
- `explain` / the backend's partitioning: each model one Molten part, no
  eager op, and the partitioned model, its part interpreted, equals eager.

The GPU run of the compiled graphs is in the `gpu` test below."""

import warnings

import numpy as np
import pytest

import molten
from molten.torch_backend import plan

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

VOCAB, TOKENS = 128, 12


def _model(family: str):
    """A tiny model of `family` (2 layers, hidden 64, 4 heads; 2 KV heads
    where the family groups them), random weights, eval mode."""
    torch.manual_seed(0)
    t = transformers
    decoder = {
        "vocab_size": VOCAB,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 64,
    }
    if family == "qwen2":
        return t.Qwen2ForCausalLM(t.Qwen2Config(**decoder)).eval()
    if family == "llama":
        return t.LlamaForCausalLM(t.LlamaConfig(**decoder)).eval()
    if family == "bert":
        config = t.BertConfig(
            vocab_size=VOCAB,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=64,
        )
        return t.BertModel(config).eval()
    config = t.T5Config(
        vocab_size=VOCAB, d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4
    )
    return t.T5EncoderModel(config).eval()


FAMILIES = ("qwen2", "llama", "bert", "t5")
DECODERS = ("qwen2", "llama")


def _inputs(family: str):
    """Two sequences of ids, the second padded: on the left for a decoder
    (as generation pads), on the right for an encoder."""
    ids = torch.randint(
        0, VOCAB, (2, TOKENS), generator=torch.Generator().manual_seed(1)
    )
    mask = torch.ones(2, TOKENS, dtype=torch.int64)
    if family in DECODERS:
        mask[1, :3] = 0
    else:
        mask[1, 9:] = 0
    return ids, mask


def _eager(model, ids, mask):
    with torch.no_grad():
        out = model(ids, mask)
    return out.logits if hasattr(out, "logits") else out.last_hidden_state


@pytest.mark.parametrize("family", FAMILIES)
def test_the_model_is_one_graph_equal_to_eager(family):
    model = _model(family)
    ids, mask = _inputs(family)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers' and torch.export's
        graph = molten.from_torch(model, [ids, mask])
    arguments = molten.torch_arguments(model, ids, mask)
    got = molten.interpret(
        graph, *[a.detach().numpy() for a in arguments], reference=True
    )
    first = got[0] if isinstance(got, tuple) else got
    want = _eager(model, ids, mask).numpy()
    kept = mask.bool().numpy()  # padded positions are free to differ
    np.testing.assert_allclose(first[kept], want[kept], rtol=1e-5, atol=1e-5)
    compiled = molten.ZeroCompiler(arch="sm_90a").compile(graph)
    assert compiled.source.count('extern "C"') >= 1 and len(compiled.kernels) > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_the_backend_takes_the_model_whole(family):
    """The partitioner (torch.compile's backend, explain) decomposes what
    Molten has no handler for as from_torch does (diff, new_ones, an
    in-place add_): one Molten part, no eager op; the part interpreted
    gives eager's output."""
    model = _model(family)
    ids, mask = _inputs(family)

    def interpreted(graph):
        def run(*args):
            arrays = [a.detach().numpy() for a in args]
            out = molten.interpret(graph, *arrays)
            outs = out if isinstance(out, tuple) else (out,)
            return tuple(torch.from_numpy(np.asarray(o)) for o in outs)

        return run

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        run, explanation = plan(model, [ids, mask], interpreted, need_cuda=False)
        got = run(ids, mask)
    assert explanation.whole, str(explanation)
    assert all(part.molten for part in explanation.parts), str(explanation)
    # The exported module gives the model's output object, or its tensors.
    first = getattr(got, "logits", getattr(got, "last_hidden_state", None))
    if first is None:
        first = got[0] if isinstance(got, tuple | list) else got
    kept = mask.bool()
    want = _eager(model, ids, mask)
    torch.testing.assert_close(first.float()[kept], want[kept], rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("family", FAMILIES)
def test_the_compiled_model_runs_on_the_gpu(family):
    """The compiled graph on the GPU (float32 weights) against eager on the
    GPU."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU or driver")
    model = _model(family).cuda()
    ids, mask = (t.cuda() for t in _inputs(family))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers' and torch.export's
        graph = molten.from_torch(model, [ids, mask])
    compiled = molten.ZeroCompiler().compile(graph)
    out = compiled(*molten.torch_arguments(model, ids, mask))
    first = out[0] if isinstance(out, tuple) else out
    kept = mask.bool()
    want = _eager(model, ids, mask)
    torch.testing.assert_close(first[kept], want[kept], rtol=2e-3, atol=2e-3)
