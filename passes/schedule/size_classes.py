"""Kernels over a named dimension: a schedule per size class of a gemm's M
or an attention's sequence (`#kernel.variant`s), each the rule's at the
class's bound."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ModuleOp

from molten.dialects import kernel, molten
from molten.dialects.molten import value_dims
from molten.errors import StaticShapeNeeded
from molten.passes.fuse_attention import attention_of
from molten.passes.schedule.attention import attention_schedule
from molten.passes.schedule.common import KernelBody, named_rows
from molten.passes.schedule.gemm import gemm_schedule
from molten.passes.schedule.target import DEFAULT_TARGET, Target
from molten.passes.specialize_dims import specialize_types

GEMM_SIZE_CLASSES = (1, 4, 8, 32, 128, 512, 2048)
"""The bounds of the size classes of a gemm over a named M (its rows known
at run time only): a schedule each, picked at the class's bound (the
kernel of a class serves every M up to it); the kind of kernel changes
across them (a GEMV up to GEMV_MAX_M, split-K while few row tiles leave
SMs idle), and within a class the heuristic's pick at the bound holds."""


GEMM_OPEN_ROWS = 8192
"""The rows the schedule of a gemm's open-ended class (above the last of
GEMM_SIZE_CLASSES) is picked at: a long prefill's. (With 4096 here and no
class at 2048, Qwen2.5-7B's up projection at 2048 tokens ran 12% slower
than its schedule at 2048 on an H100.)"""


ATTENTION_SIZE_CLASSES = (32, 128, 512, 2048)
"""The bounds of the size classes of an attention over a named sequence:
a block's 64 query rows pack the query heads that share K and V below
them (not causal), and the keys split while the blocks leave SMs idle."""


ATTENTION_OPEN_ROWS = 8192
"""The sequence an attention's open-ended class is scheduled at."""


def named_sequence(body: KernelBody) -> str | None:
    """The name of an attention kernel's sequence axes (its queries' and
    keys') where one is named, else None; two names are refused."""
    found = attention_of(body)
    names = {
        d
        for t in (found.query, found.key)
        for d in value_dims(t)[-2:]
        if isinstance(d, str)
    }
    if len(names) > 1:
        raise StaticShapeNeeded(
            f"an attention whose queries and keys are named apart "
            f"({', '.join(sorted(names))}) is scheduled at one of them known "
            "only: give the sizes of all but one"
        )
    return names.pop() if names else None


def size_class_variants(
    kfunc: kernel.FuncOp,
    dim: str,
    classes: Sequence[int],
    open_size: int,
    pick: Callable[[KernelBody], kernel.ScheduleAttr],
    sizes: molten.SizeRangeAttr | None = None,
) -> list[kernel.VariantAttr]:
    """The schedules of a kernel over the named `dim`, one per size class
    (`classes`' bounds, then the rest, picked at `open_size`): each `pick`'s
    on the kernel's ops with `dim` at the class's bound; a class whose
    schedule is the one before's joins it. In a copy of its graph for a
    range of `dim` (`sizes`), only the classes in it, the last up to its
    most."""
    bounds = [*classes, 0]
    if sizes is not None and sizes.dim.data == dim:
        least, most = sizes.least.data, sizes.most.data
        bounds = [b for b in classes if b >= least and (not most or b < most)]
        bounds.append(most)
    variants: list[kernel.VariantAttr] = []
    for most in bounds:
        at = kfunc.clone()
        specialize_types(at, {dim: most or open_size})
        schedule = pick(KernelBody.of(at))
        if variants and variants[-1].schedule == schedule:
            variants.pop()
        variants.append(kernel.VariantAttr(dim, most, schedule))
    return variants


def gemm_variants(
    kfunc: kernel.FuncOp,
    target: Target = DEFAULT_TARGET,
    sizes: molten.SizeRangeAttr | None = None,
) -> list[kernel.VariantAttr]:
    """The schedules of a gemm kernel over a named M, one per size class
    (GEMM_SIZE_CLASSES, then the rest; those in `sizes`, the range of the
    graph copy that launches it): each the heuristic's at the class's
    bound."""
    dim = named_rows(list(kfunc.body.block.ops))
    assert dim is not None
    return size_class_variants(
        kfunc,
        dim,
        GEMM_SIZE_CLASSES,
        GEMM_OPEN_ROWS,
        lambda body: gemm_schedule(body, target),
        sizes,
    )


def attention_variants(
    kfunc: kernel.FuncOp,
    dim: str,
    target: Target = DEFAULT_TARGET,
    sizes: molten.SizeRangeAttr | None = None,
) -> list[kernel.VariantAttr]:
    """The schedules of an attention over a named sequence, one per size
    class (ATTENTION_SIZE_CLASSES, then the rest; those in `sizes`): each
    the heuristic's at the class's bound, its keys unsplit (a split's
    parts in scratch are sized by its grid, not yet by a class's bound; a
    self-attention over few tokens has few keys, and a causal one is never
    split)."""
    return size_class_variants(
        kfunc,
        dim,
        ATTENTION_SIZE_CLASSES,
        ATTENTION_OPEN_ROWS,
        lambda body: attention_schedule(body, target, may_split=False),
        sizes,
    )


def launched_in_ranges(module: ModuleOp) -> dict[str, molten.SizeRangeAttr]:
    """The range of sizes of the graph copies (split-size-classes) that
    launch each kernel launched by one: the least range that holds them
    all (the launcher runs each launch in its own copy's only)."""
    found: dict[str, molten.SizeRangeAttr] = {}
    for graph in module.ops:
        sizes = molten.size_range_of(graph)
        if sizes is None:
            continue
        for launch in graph.walk():
            if not isinstance(launch, kernel.LaunchOp):
                continue
            name = launch.callee.string_value()
            found[name] = sizes.joined(found.get(name, sizes))
    return found
