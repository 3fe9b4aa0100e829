"""The device a schedule is chosen for: its facts, by name or read off the GPU.

Every schedule rule reads its device through a `Target`, never through module
constants, so an H200, an A100 or an L40S is scheduled as itself. A module
carries its target as the `kernel.target` attribute (`#kernel.target<...>`);
`ZeroCompiler` attaches it (from `arch=`/`target=`, or at JIT time from the
device at hand: `device_target`), and `molten-opt`
takes `attach-target{target=h200}`. A module without one is scheduled for
`sm_90` (the H100's facts, no wgmma), as Molten always did.

The facts of the named devices are their data sheets', except the copy
bandwidth: on the H100 and H200 the one measured by the benchmark harness
(a 1 GiB device-to-device copy: 3.0 TB/s on the H100, 4.28 on the H200),
elsewhere the H100's share (0.9) of the data sheet's bandwidth, until
measured there (`scripts/device-facts` prints both).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from molten.dialects import kernel

TARGET_ATTR = "kernel.target"
"""The module attribute that holds the `#kernel.target`."""

COPY_SHARE = 0.9
"""A device-to-device copy's share of the data sheet's bandwidth, as
measured on the H100 (3.0 of 3.35 TB/s): the estimate for devices not
measured yet."""


@dataclass(frozen=True)
class Target:
    """A device's facts, as the schedule rules read them."""

    device: str
    """A name: "h100", "h200", "a100", "l40s", an arch, or a device's own."""
    arch: str
    """What the source is compiled for: sm_80, sm_89, sm_90 or sm_90a."""
    sm_count: int
    shared_per_block: int
    """The most shared memory a block may have (opted in), in bytes."""
    shared_per_sm: int
    static_shared_per_block: int
    """The most a kernel may declare statically."""
    registers_per_sm: int
    l2_bytes: int
    copy_bytes_per_s: int
    """What a device-to-device copy reaches (not the data sheet's peak)."""
    tensor_flops: int
    """Dense 16-bit tensor-core FLOP/s of the whole device."""
    features: frozenset[str] = frozenset()
    """Beyond the arch's baseline: "wgmma", "tma", "clusters" (sm_90a)."""

    @property
    def wgmma(self) -> bool:
        """Whether gemms and attention may run on warpgroup tensor cores."""
        return "wgmma" in self.features

    @property
    def sm_tensor_flops(self) -> float:
        """Dense 16-bit tensor-core FLOP/s of one SM."""
        return self.tensor_flops / self.sm_count

    def with_sm_count(self, sm_count: int | None) -> Target:
        """The same device with `sm_count` SMs (a MIG slice, a test)."""
        if sm_count is None or sm_count == self.sm_count:
            return self
        # Each SM keeps its own rate.
        flops = self.tensor_flops * sm_count // self.sm_count
        return dataclasses.replace(self, sm_count=sm_count, tensor_flops=flops)

    def to_attr(self) -> kernel.TargetAttr:
        return kernel.TargetAttr(
            self.device,
            self.arch,
            [getattr(self, f) for f in kernel.TARGET_INT_FIELDS],
            [f for f in kernel.TARGET_FEATURES if f in self.features],
        )

    @staticmethod
    def from_attr(attr: kernel.TargetAttr) -> Target:
        return Target(
            attr.device.data,
            attr.arch.data,
            **{f: attr.fact(f) for f in kernel.TARGET_INT_FIELDS},
            features=frozenset(f.data for f in attr.features),
        )


_KIB = 1024
_MIB = 1024 * 1024
_HOPPER_FEATURES = frozenset(kernel.TARGET_FEATURES)

H100 = Target(
    "h100",
    "sm_90a",
    sm_count=132,
    shared_per_block=227 * _KIB,
    shared_per_sm=228 * _KIB,
    static_shared_per_block=48 * _KIB,
    registers_per_sm=65536,
    l2_bytes=50 * _MIB,
    copy_bytes_per_s=3_000_000_000_000,
    tensor_flops=989_000_000_000_000,
    features=_HOPPER_FEATURES,
)
"""H100 SXM 80 GB: 3.35 TB/s of HBM3 on the data sheet, 3.0 measured."""
H200 = dataclasses.replace(
    H100, device="h200", l2_bytes=60 * _MIB, copy_bytes_per_s=4_277_000_000_000
)
"""H200 SXM 141 GB: the H100's SMs with 4.8 TB/s of HBM3e on the data
sheet, 4.28 measured (scripts/device-facts, 2026-12-01: a 1 GiB copy), and
60 MiB of L2 (read off the device)."""
A100 = Target(
    "a100",
    "sm_80",
    sm_count=108,
    shared_per_block=163 * _KIB,
    shared_per_sm=164 * _KIB,
    static_shared_per_block=48 * _KIB,
    registers_per_sm=65536,
    l2_bytes=40 * _MIB,
    copy_bytes_per_s=int(COPY_SHARE * 2.039e12),
    tensor_flops=312_000_000_000_000,
)
"""A100 SXM 80 GB: 2.04 TB/s of HBM2e."""
L40S = Target(
    "l40s",
    "sm_89",
    sm_count=142,
    shared_per_block=99 * _KIB,
    shared_per_sm=100 * _KIB,
    static_shared_per_block=48 * _KIB,
    registers_per_sm=65536,
    l2_bytes=96 * _MIB,
    copy_bytes_per_s=int(COPY_SHARE * 864e9),
    tensor_flops=362_000_000_000_000,
)
"""L40S: 864 GB/s of GDDR6."""

TARGETS: dict[str, Target] = {
    "h100": H100,
    "h200": H200,
    "a100": A100,
    "l40s": L40S,
    "sm_80": dataclasses.replace(A100, device="sm_80"),
    "sm_89": dataclasses.replace(L40S, device="sm_89"),
    # The portable sm_90 source: the H100's facts, Hopper's features unused.
    "sm_90": dataclasses.replace(
        H100, device="sm_90", arch="sm_90", features=frozenset()
    ),
    "sm_90a": dataclasses.replace(H100, device="sm_90a"),
}
"""The devices and archs a compile may name (`ZeroCompiler(target=...)`,
`arch=`, `attach-target{target=...}`); an arch stands for the device Molten
is tuned on that has it."""

DEFAULT_TARGET = TARGETS["sm_90"]
"""A module's target when it carries none."""

WGMMA_ARCHS = tuple(sorted({t.arch for t in TARGETS.values() if t.wgmma}))
"""The archs with sm_90a's warpgroup tensor cores (wgmma)."""

_DEVICE_NAMES = {"H200": "h200", "H100": "h100", "A100": "a100", "L40S": "l40s"}
"""Words of a CUDA device's name, and the device they name."""


def device_facts(name: str, arch: str, **read: int) -> Target:
    """The target of a device called `name` (as CUDA names it: "NVIDIA
    H200") of `arch`, with the facts `read` off it (its SMs, shared memory,
    registers, L2): the named device's other facts where Molten names it,
    else those of its arch's entry, under the device's own name."""
    known = next(
        (
            TARGETS[key]
            for word, key in _DEVICE_NAMES.items()
            if re.search(rf"\b{word}\b", name.upper())
        ),
        None,
    )
    if known is None or known.arch != arch:
        known = dataclasses.replace(target_named(arch), device=name)
    sm_count = read.pop("sm_count", known.sm_count)
    return dataclasses.replace(known.with_sm_count(sm_count), **read)


def target_named(name: str) -> Target:
    """The named device or arch (an arch Molten names no device for, such as
    sm_86: the portable sm_90's facts for it); a clear error otherwise."""
    found = TARGETS.get(name.lower())
    if found is not None:
        return found
    if re.fullmatch(r"sm_\d+a?", name):
        return dataclasses.replace(DEFAULT_TARGET, device=name, arch=name)
    raise ValueError(
        f"unknown target {name!r}: a device ({', '.join(TARGETS)}) or an arch "
        "such as sm_90 or sm_90a"
    )


def pass_target(
    pass_name: str,
    module: ModuleOp,
    target: str | None = None,
    arch: str | None = None,
    sm_count: int | None = None,
) -> Target:
    """The target a pass schedules for: its own options where given (a
    device or arch by name, an SM count), else the module's."""
    name = target or arch
    try:
        found = target_named(name) if name else module_target(module)
    except ValueError as error:
        raise PassFailedException(f"{pass_name}: {error}") from None
    if sm_count is not None and sm_count < 1:
        raise PassFailedException(f"{pass_name}: sm_count must be >= 1")
    return found.with_sm_count(sm_count)


def module_target(module: ModuleOp) -> Target:
    """The target a module carries (DEFAULT_TARGET where it carries none)."""
    attr = module.attributes.get(TARGET_ATTR)
    if isinstance(attr, kernel.TargetAttr):
        return Target.from_attr(attr)
    return DEFAULT_TARGET


def attach_target(module: ModuleOp, target: Target) -> None:
    module.attributes[TARGET_ATTR] = target.to_attr()


def native_arch(device_arch: str) -> str:
    """The best target for a device of `device_arch`: its arch-specific one
    where Molten uses it (sm_90a: wgmma), else its arch."""
    specific = device_arch + "a"
    return specific if specific in WGMMA_ARCHS else device_arch


def device_target(device_id: int) -> Target:
    """The `Target` of CUDA device `device_id`: its SMs, shared memory,
    registers and L2 read off it, its best arch (`native_arch`), and the
    facts no attribute gives (bandwidth, tensor-core rate) from the named
    device it is (an H200, an H100, ...) or, for one Molten does not name,
    from its arch's."""
    from cuda.core import Device

    device = Device(device_id)
    major, minor = device.compute_capability
    props = device.properties
    return device_facts(
        device.name,
        native_arch(f"sm_{major}{minor}"),
        sm_count=props.multiprocessor_count,
        shared_per_block=props.max_shared_memory_per_block_optin,
        shared_per_sm=props.max_shared_memory_per_multiprocessor,
        registers_per_sm=props.max_registers_per_multiprocessor,
        l2_bytes=props.l2_cache_size,
    )


def current_native_arch() -> str:
    """The best target (`native_arch`) for the current CUDA device: what `@zero`
    and the benchmarks compile for."""
    from molten.runtime.device import current_device_id

    # current_device_id: a clear error without cuda-python or a GPU.
    return device_native_arch(current_device_id())


def device_native_arch(device_id: int) -> str:
    """The best target (`native_arch`) for CUDA device `device_id`."""
    from cuda.core import Device

    major, minor = Device(device_id).compute_capability
    return native_arch(f"sm_{major}{minor}")
