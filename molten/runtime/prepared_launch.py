"""One kernel launch of a program, its driver call's arguments made once.

A `PreparedLaunch` holds the kernel's function handle, a parameter block
whose pointer slots are overwritten in place on every call, and the driver
call's arguments (`launch.KernelLaunch`), so launching costs those writes
and one `cuLaunchKernelEx` (cuda.core's own `launch` packs its arguments
anew each time, and cuda.bindings converts each argument of a call).
"""

from __future__ import annotations

import ctypes
import operator
import struct
from collections.abc import Sequence
from math import gcd
from typing import Any

from molten.dialects.cuda import VECTOR_BYTES
from molten.errors import LaunchError
from molten.runtime import program as steps
from molten.runtime.device import _driver, check
from molten.runtime.launch import KernelLaunch, failed, kernel_launch


class PreparedLaunch:
    """One kernel launch with its parameter block built once, and the scalar
    variant's function for calls whose pointers are too misaligned for the
    kernel's vector accesses. Calling it writes a call's pointers into the
    block and launches: the per-call work is those writes and one driver
    call (`launch.KernelLaunch`: ctypes, its arguments made here)."""

    def __init__(
        self,
        function: Any,
        fallback: Any,
        step: steps.Launch,
        device,
        map_slots: set[int] = frozenset(),  # type: ignore[assignment]
        slot_count: int | None = None,
    ):
        self.maps = [i for i, slot in enumerate(step.args) if slot in map_slots]
        """The positions of the tensor maps among the arguments."""
        self.fallback = fallback
        self.step = step
        self.device = device
        # One C call gathers the arguments' addresses from the slots and one
        # writes them into the parameter block (a Python loop costs 1 us);
        # itemgetter of one item returns it bare, so one is gathered twice.
        # Where the arguments are the slots, all and in order (a one-kernel
        # graph's inputs and outputs), the slots are the values as they are.
        padded = step.args * 2 if len(step.args) == 1 else step.args
        whole = len(padded) == slot_count and padded == tuple(range(len(padded)))
        self.gather = (
            None
            if whole
            else operator.itemgetter(*padded)
            if padded
            else (lambda _: ())
        )
        self.pack = struct.Struct(f"={len(padded)}Q").pack_into
        self.aligned = step.aligned
        self._aligned_of: Any = (
            None
            if not step.aligned
            else True
            if set(step.aligned) == set(range(len(step.args)))
            else operator.itemgetter(*(step.aligned * 2)[: max(2, len(step.aligned))])
        )
        """How a call finds the values that must be vector-aligned: None
        (none), True (all of them), or an itemgetter of at least two."""
        self._fallback_grid = step.fallback_grid or (
            step.grid if step.cooperative is None else None
        )
        driver = _driver()
        # cuLaunchCooperativeKernel takes no `extra` argument after the params.
        self.start, self.extra = driver.cuLaunchKernel, (0,)
        grid = step.grid
        if step.cooperative is not None:
            grid = _cooperative_grid(function, step, device)
            self.start, self.extra = driver.cuLaunchCooperativeKernel, ()
        self.grid = grid
        self.dimensions = (*grid, *step.block, step.shared_bytes)
        """The launch's grid, block and dynamic shared bytes, as the driver
        takes them."""
        # Above 48 KiB a kernel must opt in to its dynamic shared memory.
        attributes = driver.CUfunction_attribute
        attribute = attributes.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        for f, name, shared in (
            (function, step.kernel, step.shared_bytes),
            (fallback, step.fallback, step.fallback_shared_bytes),
        ):
            if f is not None and shared:
                check(
                    driver.cuFuncSetAttribute(f, attribute, shared),
                    f"giving {name} {shared} bytes of shared memory",
                )
        self.handle = int(function)
        self.what = f"launching {step.kernel}"

        # cuLaunchKernel takes an array of pointers to the parameter values;
        # both arrays live as long as this object, the values change per call.
        count = max(len(padded), 1)
        self.values = (ctypes.c_uint64 * count)()
        base = ctypes.addressof(self.values)
        self.pointers = (ctypes.c_uint64 * count)(*(base + 8 * i for i in range(count)))
        self.pointers_address = ctypes.addressof(self.pointers)
        self.launch = kernel_launch(
            self.handle,
            grid,
            step.block,
            step.shared_bytes,
            self.pointers_address,
            step.cooperative is not None,
        )
        """The launch through ctypes, or None where the driver's function
        cannot be had: then through cuda.bindings (`start`)."""
        self._fallback_launch: KernelLaunch | None = None

    def __call__(self, slots: list[int], stream: int) -> None:
        """Launches on `stream` with the buffers in `slots`."""
        gather = self.gather
        values = slots if gather is None else gather(slots)
        self.pack(self.values, 0, *values)
        if self.maps:
            for i in self.maps:  # passed by value: the map's own bytes
                self.pointers[i] = values[i]
        aligned = self._aligned_of
        # All aligned to the vector width iff their gcd is: one C call.
        if (
            aligned is not None
            and gcd(*(values if aligned is True else aligned(values))) % VECTOR_BYTES
        ):
            self._launch_fallback(stream)
            return
        launch = self.launch
        if launch is not None:
            if stream != launch.stream:
                launch.use_stream(stream)
            status = launch.function(*launch.arguments)
            if status:  # CUDA_SUCCESS is 0
                failed(status, self.what)
            return
        result = self.start(
            self.handle, *self.dimensions, stream, self.pointers_address, *self.extra
        )
        if result[0]:  # a CUresult is an int, CUDA_SUCCESS is 0
            check(result, self.what)

    def inline(
        self, index: int, slot_values: Sequence[str]
    ) -> tuple[list[str], dict[str, Any]]:
        """This launch as Python source for a call function (see
        `TorchPath.call_function`): the statements of `__call__` on slots
        whose values are the expressions `slot_values` and the handle
        `stream`, and the globals they read (suffixed with `index`, one
        launch's apart from another's). Only for a launch through ctypes
        that passes no tensor map (`inlinable`)."""
        assert self.inlinable
        padded = self.step.args * 2 if len(self.step.args) == 1 else self.step.args
        values = [slot_values[slot] for slot in padded]
        lines = [f"pack{index}(values{index}, 0, {', '.join(values)})"]
        aligned = self.step.aligned
        launch = [
            f"if stream != config{index}.stream:",
            f"    config{index}.use_stream(stream)",
            f"status = start{index}(*arguments{index})",
            "if status:",
            f"    failed(status, what{index})",
        ]
        if aligned:  # all aligned to the vector width iff their gcd is
            checked = ", ".join(values[i] for i in sorted(set(aligned)))
            lines += [
                f"if gcd({checked}) % {VECTOR_BYTES}:",
                f"    fallback{index}(stream)",
                "else:",
                *(f"    {line}" for line in launch),
            ]
        else:
            lines += launch
        names = {
            f"pack{index}": self.pack,
            f"values{index}": self.values,
            f"config{index}": self.launch,
            f"start{index}": self.launch.function,
            f"arguments{index}": self.launch.arguments,
            f"what{index}": self.what,
            f"fallback{index}": self._launch_fallback,
            "gcd": gcd,
            "failed": failed,
        }
        return lines, names

    @property
    def inlinable(self) -> bool:
        """Whether `inline` writes this launch: through ctypes, no maps."""
        return self.launch is not None and not self.maps

    def _launch_fallback(self, stream: int) -> None:
        step = self.step
        what = f"launching {step.fallback}"
        block = step.fallback_block or step.block
        if self.launch is not None:
            launch = self._fallback_launch
            if launch is None:
                launch = self._fallback_launch = kernel_launch(
                    int(self.fallback),
                    self.fallback_grid,
                    block,
                    step.fallback_shared_bytes,
                    self.pointers_address,
                    step.cooperative is not None,
                )
            if launch is not None:
                status = launch.start(stream)
                if status:
                    failed(status, what)
                return
        check(
            self.start(
                int(self.fallback),
                *self.fallback_grid,
                *block,
                step.fallback_shared_bytes,
                stream,
                self.pointers_address,
                *self.extra,
            ),
            what,
        )

    @property
    def fallback_grid(self) -> tuple[int, int, int]:
        """The scalar variant's grid (sized when first needed: its own
        registers decide how many of its blocks are resident)."""
        if self._fallback_grid is None:
            self._fallback_grid = _cooperative_grid(
                self.fallback, self.step, self.device
            )
        return self._fallback_grid


def _cooperative_grid(
    function: Any, step: steps.Launch, device: Any
) -> tuple[int, int, int]:
    """The grid of a cooperative launch: as many whole groups of
    `step.cooperative` blocks as the device holds at once, at most the
    step's grid; a LaunchError when it holds not even one group."""
    driver = _driver()
    block = step.block[0] * step.block[1] * step.block[2]
    per_sm = check(
        driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(function, block, 0),
        f"sizing {step.kernel}",
    )
    sms = device.device.properties.multiprocessor_count
    group = step.cooperative
    groups = min(sms * per_sm // group, step.grid[0] // group)
    if groups < 1:
        raise LaunchError(
            f"kernel {step.kernel} needs {group} blocks of {block} threads resident "
            f"at once, and this device holds {sms * per_sm} ({per_sm} on each of "
            f"its {sms} SMs); compile the graph for this device "
            f"(ZeroCompiler(sm_count={sms}))"
        )
    return (groups * group, 1, 1)
