"""Diagnosis (not a harness result): the persistent TMA gemm's f16 results
beside bf16 on the same inputs, by shape, stages and blocks; and, with
`run M N K SPLIT`, one schedule launched a few times for Nsight Compute.

    PYTHONPATH=. python benchmarks/experiments/tma_diagnose.py
    PYTHONPATH=. python benchmarks/experiments/tma_diagnose.py run 512 3584 3584 2
"""

import os
import sys

import torch

import molten
from molten.ir import DataflowGraph
from molten.passes.schedule.common import wgmma_tile_schedule

FENCES = {
    "warpsync": 'asm volatile("bar.warp.sync -1;" ::: "memory");',
    "named": 'asm volatile("bar.sync 2, 256;" ::: "memory");',
}
if os.environ.get("WAIT_FENCE"):
    # print_cuda calls the name its module imported.
    from molten.targets.cuda import unit as cuda_unit

    helpers = cuda_unit.wgmma_helpers
    fence = FENCES[os.environ["WAIT_FENCE"]]

    def fenced(kernels):
        return [
            h.replace(
                '"n"(Pending) : "memory");',
                f'"n"(Pending) : "memory");\n  if (Pending == 0) {{ {fence} }}',
            )
            for h in helpers(kernels)
        ]

    cuda_unit.wgmma_helpers = fenced


def graph(m, n, k, dtype):
    g = DataflowGraph("linear")
    x = g.add_input("x", [m, k], dtype)
    w = g.add_input("w", [n, k], dtype)
    g.add_output(g.matmul(x, w, transpose_b=True), "y")
    return g


def compiled(m, n, k, dtype, schedule):
    c = molten.ZeroCompiler(arch="sm_90a")
    return c.compile(graph(m, n, k, dtype), schedules={"linear_gemm0": schedule})


def error(fn, x, w):
    ref = x.double() @ w.double().T
    out = torch.full(ref.shape, float("nan"), dtype=x.dtype, device="cuda")
    fn(x, w, out=out)
    torch.cuda.synchronize()
    bad = (out.double() - ref).abs() > 0.02 * ref.abs().max()
    rows, cols = bad.nonzero(as_tuple=True)
    where = ""
    if len(rows):
        where = (
            f" bad {len(rows)} rows {rows.min().item()}-{rows.max().item()} "
            f"cols {cols.min().item()}-{cols.max().item()} "
            f"row tiles {sorted(set((rows // 128).tolist()))[:6]} "
            f"col tiles {sorted(set((cols // 256).tolist()))[:6]}"
        )
    return ((out.double() - ref).abs().max() / ref.abs().max()).item(), where


def sweep():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for m, n, k in [
        (256, 512, 256),
        (1024, 1024, 1024),
        (2048, 4096, 1024),
        (2048, 4096, 4096),
        (8192, 4096, 4096),
    ]:
        x32 = torch.randn(m, k, device="cuda")
        w32 = torch.randn(n, k, device="cuda") / k**0.5
        for cols, stages, blocks in [
            (256, 4, sms),
            (256, 3, sms),
            (256, 2, sms),
            (256, 4, 1),
            (192, 5, sms),
            (128, 6, sms),
        ]:
            line = f"{m}x{n}x{k} 128x{cols} stages {stages} blocks {blocks}:"
            for dtype, torch_type in (
                ("float16", torch.float16),
                ("bfloat16", torch.bfloat16),
            ):
                s = wgmma_tile_schedule(128, cols, stages, persistent=blocks)
                err, where = error(
                    compiled(m, n, k, dtype, s), x32.to(torch_type), w32.to(torch_type)
                )
                line += f" {dtype} {err:.2e}{where}"
            print(line, flush=True)


def run(m, n, k, split):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s = wgmma_tile_schedule(128, 256, 4, split=split, persistent=sms)
    fn = compiled(m, n, k, "bfloat16", s)
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        fn(x, w, out=out)
    torch.cuda.synchronize()


def probe():
    """f16 at 256x512x256 (four K steps) with A nonzero in one K step at a
    time: the output's scale against that step's exact product says
    whether the step is lost (0), counted twice (2) or right (1)."""
    m, n, k = 256, 512, 256
    w = (torch.randn(n, k, device="cuda") / 8).half()
    for stages in (4, 3):
        fn = compiled(
            m, n, k, "float16", wgmma_tile_schedule(128, 256, stages, persistent=4)
        )
        scales = []
        for step in range(k // 64):
            x = torch.zeros(m, k, device="cuda", dtype=torch.float16)
            x[:, 64 * step : 64 * step + 64] = torch.randn(m, 64, device="cuda").half()
            ref = x.double() @ w.double().T
            out = torch.full(
                ref.shape, float("nan"), dtype=torch.float16, device="cuda"
            )
            fn(x, w, out=out)
            scale = ((out.double() * ref).sum() / (ref * ref).sum()).item()
            scales.append(f"{scale:.3f}")
        print(f"f16 stages {stages}, scale by K step: {scales}", flush=True)


def bf16_maps():
    """Encode f16 matrices' tensor maps as bf16 ones (TMA copies 2-byte
    elements either way): whether the map's type is what goes wrong."""
    from molten.runtime import tensor_maps

    init = tensor_maps.PreparedTensorMap.__init__

    def patched(self, step):
        init(self, step)
        self._type = (
            tensor_maps._driver().CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
        )

    tensor_maps.PreparedTensorMap.__init__ = patched


if __name__ == "__main__":
    if sys.argv[1:2] == ["probe"]:
        probe()
    elif sys.argv[1:2] == ["bf16maps"]:
        bf16_maps()
        sweep()
    elif sys.argv[1:2] == ["run"]:
        run(*(int(a) for a in sys.argv[2:6]))
    else:
        sweep()
