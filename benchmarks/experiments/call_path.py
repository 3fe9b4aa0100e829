"""Where a Molten call's host time goes, step by step, at decode.

Times, in a loop of back-to-back calls with the L2 warm (as the harness's
call latency does), each step of `Executable.__call__` on its own and the
whole call, beside eager PyTorch's op and the bare `cuLaunchKernel`; the
call and the launch also through cuda.bindings, beside Molten's ctypes
launch (`molten.runtime.launch`). The numbers are host microseconds per
call (median of 7 loops).

    python benchmarks/experiments/call_path.py
"""

from __future__ import annotations

import statistics
import sys
import time

import torch
import torch.nn.functional as F

import molten
from molten import ops
from molten.ir import DataflowGraph, TensorShape
from molten.passes.schedule.target import current_native_arch
from molten.runtime import launch as launching
from molten.runtime.arrays import view_of
from molten.runtime.device import _driver, current_stream, empty_like_framework
from molten.runtime.executable import Executable
from molten.runtime.prepared_launch import PreparedLaunch


def per_call_us(fn, calls: int = 2000, loops: int = 7) -> tuple[float, float]:
    """(host, latency): the host's time to issue a call, from 200 calls
    issued after a synchronize (fewer than the device's launch queue holds,
    so the host never waits for the GPU), and the wall time per call of
    `calls` back-to-back calls synchronized once (the harness's call
    latency: host or GPU time, whichever bounds the call)."""
    fn()
    torch.cuda.synchronize()
    host, latency = [], []
    for _ in range(loops):
        torch.cuda.synchronize()
        begin = time.perf_counter()
        for _ in range(200):
            fn()
        host.append((time.perf_counter() - begin) / 200 * 1e6)
        torch.cuda.synchronize()
        begin = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        latency.append((time.perf_counter() - begin) / calls * 1e6)
    return statistics.median(host), statistics.median(latency)


def main() -> None:
    hidden, dtype = 3584, "bfloat16"
    g = DataflowGraph("rms")
    x = g.add_input("x", TensorShape([1, hidden]), dtype)
    w = g.add_input("w", TensorShape([hidden]), dtype)
    g.add_output(ops.rms_norm(x, w, eps=1e-6))
    compiled = molten.ZeroCompiler(arch=current_native_arch()).compile(g)
    exe = compiled.executable()
    tx = torch.randn(1, hidden, device="cuda", dtype=torch.bfloat16)
    tw = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(tx)
    handle = current_stream("torch", 0)
    spec = exe.outputs[0]
    slots = [tx.data_ptr(), tw.data_ptr(), out.data_ptr()]
    device = torch.device("cuda", 0)
    prepared = next(s for s in exe._steps if isinstance(s, PreparedLaunch))
    prepared.values[:3] = slots
    bound = _driver().cuLaunchKernel
    ctypes_launch = prepared.launch
    launching.enabled = False  # the same graph launched through cuda.bindings
    exe_bindings = Executable(exe.compiled, exe.device_id, exe.loaded)
    launching.enabled = True
    prepared_bindings = exe_bindings._steps[0]
    rows = {
        "eager F.rms_norm": lambda: F.rms_norm(tx, (hidden,), tw, eps=1e-6),
        "torch.empty_like": lambda: torch.empty_like(tx),
        "molten compiled(x, w)": lambda: compiled(tx, tw),
        "molten exe(x, w)": lambda: exe(tx, tw),
        "molten exe(x, w, out=)": lambda: exe(tx, tw, out=out),
        "exe(x, w), cuda.bindings": lambda: exe_bindings(tx, tw),
        "exe._torch_call((x, w))": lambda: exe._torch_call((tx, tw)),
        "exe.bind(x, w)": lambda: exe.bind((tx, tw), None, None),
        "exe.bind(x, w, out=)": lambda: exe.bind((tx, tw), out, None),
        "view_of(x)": lambda: view_of(tx, handle),
        "current_stream": lambda: current_stream("torch", 0),
        "empty_like_framework": lambda: empty_like_framework("torch", spec, 0),
        "exe.run (launch only)": lambda: exe.run(list(slots), handle),
        "torch.empty(device=obj)": lambda: torch.empty(
            (1, hidden), dtype=torch.bfloat16, device=device
        ),
        "torch.empty(device=int)": lambda: torch.empty(
            (1, hidden), dtype=torch.bfloat16, device=0
        ),
        "tx.new_empty": lambda: tx.new_empty((1, hidden)),
        "empty_like(contiguous)": lambda: torch.empty_like(
            tx, memory_format=torch.contiguous_format
        ),
        "prepared launch": lambda: prepared(slots, handle),
        "prepared launch, bindings": lambda: prepared_bindings(slots, handle),
        "launch via ctypes (Ex)": lambda: ctypes_launch.start(handle),
        "launch via cuda.bindings": lambda: bound(
            prepared.handle,
            *prepared.grid,
            *prepared.step.block,
            prepared.step.shared_bytes,
            handle,
            prepared.pointers_address,
            0,
        ),
        "tx.data_ptr()": tx.data_ptr,
        "tx.is_contiguous()": tx.is_contiguous,
        "tx.shape == (1, hidden)": lambda: tx.shape == (1, hidden),
        "tx.dtype": lambda: tx.dtype,
        "tx.device.index": lambda: tx.device.index,
        "tx.get_device()": tx.get_device,
    }
    print(f"{'':28s} {'host us':>8s} {'latency us':>10s}")
    sys.path.insert(0, "examples")
    from decoder_layer import CONFIGS, decoder_layer

    layer = molten.ZeroCompiler(arch=current_native_arch()).compile(
        decoder_layer(CONFIGS["qwen2.5-7b"], 1, "bfloat16")
    )
    inputs = [
        torch.randn(spec.shape, device="cuda").to(torch.bfloat16) * 0.05
        for spec in layer.executable().inputs
    ]
    replay = layer.cuda_graph(*inputs).replay
    rows[f"layer T=1 call ({len(layer)} kernels)"] = lambda: layer(*inputs)
    rows["layer T=1 replay"] = replay
    layer_graphed = layer.graphed()
    rows["layer T=1 graphed call"] = lambda: layer_graphed(*inputs)
    norm_graphed = compiled.graphed()
    rows["molten graphed(x, w)"] = lambda: norm_graphed(tx, tw)
    for name, fn in rows.items():
        host, latency = per_call_us(fn)
        print(f"{name:28s} {host:8.2f} {latency:10.2f}")

    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(20000):
        exe(tx, tw)
    profile.disable()
    torch.cuda.synchronize()
    pstats.Stats(profile).sort_stats("tottime").print_stats(12)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(200):
        layer(*inputs)
    profile.disable()
    torch.cuda.synchronize()
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
