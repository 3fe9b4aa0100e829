"""A compiled graph's kernels, compiled by NVRTC for a device's arch
(cached on disk) and loaded: their function handles."""

from __future__ import annotations

from typing import Any

from molten.errors import LaunchError
from molten.runtime import program as steps
from molten.runtime.device import _driver, check
from molten.runtime.nvrtc import SourceMap, compile_cubin


class LoadedKernels:
    """A compiled graph's kernels, compiled by NVRTC for a device and loaded:
    each kernel's function handle by its C++ name."""

    def __init__(self, compiled: Any, device: Any):
        launches = [s for s in compiled.program if isinstance(s, steps.Launch)]
        fused_ops = {}
        for s, k in zip(launches, compiled.kernels, strict=True):
            fused_ops[s.kernel] = k.fused_ops
            if s.fallback:
                fused_ops[s.fallback] = k.fused_ops
        self.source_map = SourceMap(
            compiled.name, fused_ops, compiled.origins, compiled.value_ops
        )
        self.functions = self._load(compiled, device, set(fused_ops))

    def _load(self, compiled: Any, device: Any, names: set[str]) -> dict[str, Any]:
        from cuda.core import ObjectCode

        arch = target_arch(compiled.arch, device.arch)
        driver = _driver()
        for refresh in (False, True):
            cubin = compile_cubin(
                compiled.source, arch, self.source_map, refresh=refresh
            )
            try:
                module = ObjectCode.from_cubin(cubin)
                kernels = {name: module.get_kernel(name) for name in sorted(names)}
            except Exception:
                if refresh:
                    raise
                continue  # a cached cubin the driver refuses: rebuild it
            self._module = module  # keeps the kernels loaded
            return {
                name: check(
                    driver.cuKernelGetFunction(kernel.handle), f"loading {name}"
                )
                for name, kernel in kernels.items()
            }
        raise AssertionError("unreachable")


def target_arch(compiled_for: str, device_arch: str) -> str:
    """The arch NVRTC compiles a graph for: the device's, unless the graph was
    compiled for that device's arch-specific target (sm_90a on an sm_90
    device: wgmma), which runs there only."""
    if not compiled_for.endswith("a"):
        return device_arch
    if compiled_for[:-1] != device_arch:
        raise LaunchError(
            f"this graph was compiled for {compiled_for}, which runs on "
            f"{compiled_for[:-1]} devices only, not on this {device_arch} device; "
            "compile it with ZeroCompiler(), which compiles for the device at "
            f"hand, or ZeroCompiler(arch={device_arch!r})"
        )
    return compiled_for
