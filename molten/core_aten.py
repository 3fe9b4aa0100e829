"""Molten's coverage of torch's Core ATen opset: the ops tagged
`torch.Tag.core`, which `torch.export(...).run_decompositions()` reduces a
model to. Each op is supported (a handler of `molten.aten_ops` writes it
in molten ops), out of scope (with the reason), refused (with the reason)
or not yet supported.

`python -m molten.core_aten` writes docs/core-aten.md from the torch that
is installed; tests/test_core_aten.py fails when a status changes and the
table was not written again.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from molten.aten_ops import ATEN_OPS

OUT_OF_SCOPE: dict[str, str] = {
    **dict.fromkeys(
        [
            "convolution",
            "avg_pool1d",
            "avg_pool2d",
            "adaptive_avg_pool1d",
            "avg_pool3d",
            "_adaptive_avg_pool2d",
            "_adaptive_avg_pool3d",
            "max_pool2d_with_indices",
            "max_pool3d_with_indices",
            "col2im",
            "grid_sampler_2d",
            "upsample_bilinear2d",
            "upsample_nearest2d",
            "reflection_pad1d",
            "reflection_pad2d",
            "reflection_pad3d",
            "replication_pad2d",
            "replication_pad3d",
        ],
        "convolution, pooling and image resampling",
    ),
    **dict.fromkeys(["rand", "randn", "randperm", "native_dropout"], "random numbers"),
    **dict.fromkeys(["_fft_c2r", "_fft_r2c"], "complex tensors"),
}
"""Core ATen ops outside what Molten aims at, by name, with the reason
(gradients, ending in `_backward`, are out of scope too: inference only)."""

REFUSED: dict[str, str] = {
    "sort": "a sort has none of the forms Molten's kernels take (elementwise, "
    "reductions, scans, contractions); torch's is a segmented radix sort: "
    "keep it in torch",
    "topk": "a selection of k by sorting (see sort): keep it in torch; an "
    "argmax is the one-element case",
    "nonzero": "its output's shape depends on the values; Molten's shapes are "
    "known when compiling or named at each call",
    "masked_scatter": "where each value goes depends on the mask's running "
    "count: a shape the values decide",
    "_local_scalar_dense": "a tensor read back to the host as a Python number "
    "(.item()): the graph ends there",
    "resize_": "a tensor's storage resized in place: Molten's tensors are "
    "values of the shape their op gives",
    "as_strided": "a view by strides and an offset: Molten's tensors are "
    "values without strides (a view, reshape or slice says what it reads)",
}
"""Core ATen ops Molten refuses by design, with the reason."""


class Status(NamedTuple):
    op: str
    """`name.overload`."""
    status: str
    """supported, interpreter only, out of scope, refused or not yet."""
    reason: str


def core_ops() -> list[str]:
    """Every Core ATen op (`name.overload`) of the installed torch."""
    import torch

    # Every registered op, not dir(torch.ops.aten): that namespace lists only
    # the ops loaded so far, which depends on what the process ran before.
    names = {
        op.removeprefix("aten::").split(".")[0]
        for op in torch._C._dispatch_get_all_op_names()
        if op.startswith("aten::")
    }
    found = []
    for name in sorted(names):
        packet = getattr(torch.ops.aten, name, None)
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        for overload in packet.overloads():
            if torch.Tag.core in getattr(packet, overload).tags:
                found.append(f"{name}.{overload}")
    return sorted(found)


INTERPRETER_ONLY: dict[str, str] = {}
"""Ops the front door writes in molten ops that no CUDA kernel computes
yet, by name -> the reason: counted as not yet supported (none today:
scatter, scatter_add and index_put have the scatter kernel)."""


def status_of(op: str) -> Status:
    name = op.split(".")[0]
    if f"aten.{op}" in ATEN_OPS and name in INTERPRETER_ONLY:
        return Status(op, "interpreter only", INTERPRETER_ONLY[name])
    if f"aten.{op}" in ATEN_OPS:
        return Status(op, "supported", "")
    if name.endswith("_backward"):
        return Status(op, "out of scope", "a gradient (Molten is for inference)")
    if name in OUT_OF_SCOPE:
        return Status(op, "out of scope", OUT_OF_SCOPE[name])
    if name in REFUSED:
        return Status(op, "refused", REFUSED[name])
    return Status(op, "not yet", "no handler in molten/aten_ops.py yet")


def statuses() -> list[Status]:
    return [status_of(op) for op in core_ops()]


def coverage(table: list[Status]) -> tuple[int, int]:
    """(supported, in scope): out of scope is neither."""
    in_scope = [s for s in table if s.status != "out of scope"]
    return sum(s.status == "supported" for s in in_scope), len(in_scope)


def markdown(table: list[Status]) -> Iterator[str]:
    import torch

    supported, in_scope = coverage(table)
    yield "# Core ATen coverage"
    yield ""
    yield (
        "Generated by `python -m molten.core_aten` (torch "
        f"{torch.__version__.split('+')[0]}); tests/test_core_aten.py fails when "
        "a status changes and this table was not written again."
    )
    yield ""
    yield (
        f"**{supported} of the {in_scope} in-scope Core ATen ops are supported "
        f"({100 * supported / in_scope:.0f}%)**; {len(table) - in_scope} more are "
        "out of scope (convolution and pooling, random numbers, complex tensors, "
        "gradients). Supported: `molten/aten_ops.py` writes the op in molten ops "
        "(`from_torch` and the `torch.compile` backend take it). Refused: Molten "
        "will not take it, for the reason given. Interpreter only: written in "
        "molten ops that no kernel computes yet. Not yet: nothing writes it yet. "
        "An op outside Core ATen that has no handler is decomposed into Core "
        "ATen first (`from_torch` runs torch.export's `run_decompositions` with "
        "a table without the ops Molten handles, so its composites stay whole)."
    )
    yield ""
    yield "| op | status | reason |"
    yield "|---|---|---|"
    for s in table:
        yield f"| `aten.{s.op}` | {s.status} | {s.reason} |"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else Path("docs/core-aten.md")
    path.write_text("\n".join(markdown(statuses())) + "\n")
    supported, in_scope = coverage(statuses())
    print(f"wrote {path}: {supported} of {in_scope} in-scope Core ATen ops supported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
