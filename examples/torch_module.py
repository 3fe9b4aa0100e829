"""A PyTorch module compiled by Molten three ways.

    python examples/torch_module.py [OUT_DIR]

1. `molten.from_torch(module, inputs)`: the module, traced by torch.export,
   as a Molten graph (its parameters named as the module names them),
   compiled to fused kernels;
2. `torch.compile(module, backend="molten")`: the same from inside PyTorch,
   ops Molten does not take left to eager PyTorch (`molten.explain` says
   which and why);
3. the graph's `.cu` and `.h` saved for a C++ program that links no
   PyTorch (see examples/standalone/).

Needs PyTorch; a CUDA GPU only to run 2 (on the CPU it runs eagerly, and
says so).
"""

import sys
import warnings

import torch
from torch import nn

import molten


class GatedMLP(nn.Module):
    """x + down(silu(gate(h)) * up(h)), h = rms_norm(x): a Llama MLP block."""

    def __init__(self, hidden: int = 1024, intermediate: int = 2816):
        super().__init__()
        self.norm = nn.RMSNorm(hidden, eps=1e-6)
        self.gate = nn.Linear(hidden, intermediate, bias=False)
        self.up = nn.Linear(hidden, intermediate, bias=False)
        self.down = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


def main() -> None:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "output"
    device = "cuda" if torch.cuda.is_available() else "cpu"
    module = GatedMLP().to(device, torch.bfloat16).eval()
    x = torch.randn(64, 1024, device=device, dtype=torch.bfloat16)

    # 1. from_torch: a Molten graph of the module, compiled.
    graph = molten.from_torch(module, [x])
    print(f"// inputs: {', '.join(t.name for t in graph.inputs)}")
    compiler = molten.ZeroCompiler(arch="sm_90a")
    compiled = compiler.compile(graph)
    for kernel in compiled.kernels:
        print(f"//   {kernel.name}: {', '.join(kernel.fused_ops)}")

    # 2. torch.compile: Molten's parts inside PyTorch.
    print(molten.explain(module, x))
    fast = torch.compile(module, backend="molten")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore" if device == "cpu" else "default")
        y = fast(x)
        want = module(x)
    error = ((y.float() - want.float()).norm() / want.float().norm()).item()
    print(f"// torch.compile(backend='molten') on {device}: relative error {error:.1e}")

    # 3. The .cu and .h for C++.
    files = compiler.save(compiled, out_dir)
    print("// wrote " + ", ".join(str(f) for f in files))


if __name__ == "__main__":
    main()
