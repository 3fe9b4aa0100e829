"""The seed example: RMSNorm written as math, compiled to one fused CUDA kernel.

Builds the graph, prints it, compiles it with the default pipeline and writes
output/fused_rmsnorm.{cu,h,mlir}; then checks the reference interpreter
against a numpy formula. Needs no GPU.
"""

import sys

import numpy as np

import molten
from molten import ZeroCompiler
from molten.ir import DataflowGraph, TensorShape

g = DataflowGraph("fused_rmsnorm")
x = g.add_input("x", TensorShape([2048, 5120]))  # dtype defaults to float32
w = g.add_input("w", TensorShape([5120]))
out = g.rms_norm(x, w, name="norm")
g.add_output(out)

print("// The math spec:")
print(g.to_mlir())

compiler = ZeroCompiler(arch="sm_90")
compiled = compiler.compile(g)
files = compiler.save(compiled, sys.argv[1] if len(sys.argv) > 1 else "output")
print(f"// {len(compiled.kernels)} kernel(s) from the default pipeline:")
for kernel in compiled.kernels:
    print(
        f"//   {kernel.name}: grid {kernel.grid}, block {kernel.block}, "
        f"fuses {', '.join(kernel.fused_ops)}"
    )
print("// wrote " + ", ".join(str(f) for f in files))

rng = np.random.default_rng(0)
xs = rng.standard_normal((2048, 5120), dtype=np.float32)
ws = rng.standard_normal(5120, dtype=np.float32)
got = molten.interpret(g, xs, ws)
x64 = xs.astype(np.float64)
want = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-6) * ws
error = np.linalg.norm(got - want) / np.linalg.norm(want)
print(f"// interpreter vs numpy float64: relative L2 error {error:.2e}")
assert error < 1e-6, error
