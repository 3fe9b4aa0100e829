"""Experiment (issue 57): transformers' own Qwen2ForCausalLM at Qwen2.5-7B's
widths, 2 decoder layers, 1 x 512 ids, bf16, random weights, compiled whole
by `molten.from_torch`, beside eager and torch.compile (inductor, default),
each timed by triton's do_bench (median, L2 flushed), the first call's
time (trace, compile, NVRTC) and Molten's error against eager.

    PYTHONPATH=. python benchmarks/experiments/qwen2_whole.py

Where the time goes, per kernel (the second call's 36 launches):

    ncu --kernel-name regex:Qwen2 --launch-skip 36 --launch-count 36 \\
        --metrics gpu__time_duration.sum python benchmarks/experiments/qwen2_whole.py
"""

import time
import warnings

import torch
from triton.testing import do_bench

import molten

warnings.filterwarnings("ignore")  # transformers' and torch.export's


def main() -> None:
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=152064,
        hidden_size=3584,
        intermediate_size=18944,
        num_hidden_layers=2,
        num_attention_heads=28,
        num_key_value_heads=4,
        max_position_embeddings=32768,
    )
    with torch.device("cuda"):
        model = Qwen2ForCausalLM(config).to(torch.bfloat16).eval()
    ids = torch.randint(0, config.vocab_size, (1, 512), device="cuda")
    with torch.no_grad():
        want = model(ids).logits
        eager = do_bench(lambda: model(ids), warmup=5, rep=50)
        print(f"eager {eager * 1000:.0f} us", flush=True)
        start = time.time()
        compiled = molten.ZeroCompiler().compile(molten.from_torch(model, [ids]))
        arguments = molten.torch_arguments(model, ids)
        got = compiled(*arguments)
        torch.cuda.synchronize()
        first = time.time() - start
        error = (got.float() - want.float()).abs().max() / want.float().abs().max()
        ours = do_bench(lambda: compiled(*arguments), warmup=5, rep=50)
        print(
            f"molten {ours * 1000:.0f} us ({len(compiled.kernels)} kernels, first "
            f"call {first:.1f} s), max error {error.item():.3g} of eager's largest",
            flush=True,
        )
        start = time.time()
        inductor = torch.compile(model)
        inductor(ids)
        torch.cuda.synchronize()
        first = time.time() - start
        theirs = do_bench(lambda: inductor(ids), warmup=5, rep=50)
        print(
            f"inductor {theirs * 1000:.0f} us (first call {first:.1f} s); Molten "
            f"{theirs / ours:.2f}x inductor, {eager / ours:.2f}x eager",
            flush=True,
        )


if __name__ == "__main__":
    main()
