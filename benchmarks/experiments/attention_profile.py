"""Runs one attention (4, 32, 2048, 128) f16 on wgmma (sm_90a) three times,
for Nsight Compute to profile (`causal` as the first argument adds the
causal mask):

    ncu --section SpeedOfLight --section WarpStateStats -k regex:attention \\
        -s 1 -c 1 python benchmarks/experiments/attention_profile.py [causal]
"""

import sys

import torch

import molten
from molten.ir import DataflowGraph

b, h, s, d = 4, 32, 2048, 128
causal = sys.argv[1:] == ["causal"]
g = DataflowGraph("attention")
q, k, v = (g.add_input(n, [b, h, s, d], "float16") for n in "qkv")
g.add_output(g.attention(q, k, v, causal=causal))
compiled = molten.ZeroCompiler(arch="sm_90a").compile(g)
inputs = [torch.randn(b, h, s, d, dtype=torch.float16, device="cuda") for _ in "qkv"]
for _ in range(3):
    compiled(*inputs)
torch.cuda.synchronize()
