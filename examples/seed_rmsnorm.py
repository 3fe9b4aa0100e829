"""The seed example: RMSNorm written as math, taken through Molten's pipeline.

Prints the graph at the math-spec level, then after the default pipeline
(composites decomposed into primitives, canonicalized), and checks the
reference interpreter against a numpy formula. Kernel generation (the `.cu`
file) arrives with the kernel-generation level; `ZeroCompiler.compile` says so.
"""

import numpy as np

import molten
from molten import ZeroCompiler
from molten.ir import DataflowGraph, TensorShape

g = DataflowGraph("fused_rmsnorm")
x = g.add_input("x", TensorShape([2048, 5120]))  # dtype defaults to float32
w = g.add_input("w", TensorShape([5120]))
out = g.rms_norm(x, w, "norm")
g.add_output(out)

print("// The math spec:")
print(g.to_mlir())

compiler = ZeroCompiler(arch="sm_90")
print(f"// After the default pipeline ({molten.DEFAULT_PIPELINE}):")
print(compiler.optimize(g))

rng = np.random.default_rng(0)
xs = rng.standard_normal((2048, 5120), dtype=np.float32)
ws = rng.standard_normal(5120, dtype=np.float32)
got = molten.interpret(g, xs, ws)
x64 = xs.astype(np.float64)
want = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-6) * ws
error = np.linalg.norm(got - want) / np.linalg.norm(want)
print(f"\n// interpreter vs numpy float64: relative L2 error {error:.2e}")
assert error < 1e-6, error
