"""Where a decoder layer's time goes: each kernel's GPU time (torch.profiler,
5 calls after 3 warm-up calls, L2 warm) of Molten's layer and of
torch.compile's, side by side.

    python benchmarks/experiments/layer_profile.py [MODEL:TOKENS ...]

(default qwen2.5-7b:512 qwen2.5-7b:2048 llama3-8b:128). Results:
benchmarks/results/*-layer-kernels.txt.
"""

import sys

import torch
import torch.profiler as tp

import molten
from benchmarks.cases import layer_case


def kernel_times(fn, calls: int = 5) -> list[tuple[str, float, int]]:
    """(kernel, us a call, launches a call) of `fn`, the longest first."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with tp.profile(activities=[tp.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    rows = [
        (e.key, e.device_time_total / calls, e.count // calls)
        for e in prof.key_averages()
        if e.device_time_total > 0
    ]
    return sorted(rows, key=lambda r: -r[1])


def main(specs: list[str]) -> None:
    for spec in specs:
        model, tokens = spec.split(":")
        case = layer_case(model, int(tokens))
        inputs = case.make_inputs(torch.device("cuda"), 1)
        compiled = molten.ZeroCompiler().compile(case.graph())
        peer = torch.compile(case.torch, dynamic=False, fullgraph=True)
        with torch.no_grad():
            for name, fn in (("molten", compiled), ("torch.compile", peer)):
                rows = kernel_times(lambda fn=fn, inputs=inputs: fn(*inputs))
                print(f"=== {model} {tokens} tokens: {name}")
                for key, us, count in rows:
                    print(f"  {us:9.1f} us  x{count}  {key[:110]}")
                print(f"  total {sum(r[1] for r in rows):.1f} us")


if __name__ == "__main__":
    main(sys.argv[1:] or ["qwen2.5-7b:512", "qwen2.5-7b:2048", "llama3-8b:128"])
