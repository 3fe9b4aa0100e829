"""What the schedule rules share: the kernel a rule sees, the rule's shape,
and the facts of kernels (rows, vector widths, which matmuls tensor cores
take) that several families ask."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, TensorType
from xdsl.ir import Operation, SSAValue

from molten.dialects import kernel, molten
from molten.dialects.cuda import VECTOR_BYTES, WGMMA_M, element_bytes
from molten.dialects.molten import shape_of, value_dims
from molten.errors import StaticShapeNeeded
from molten.passes.schedule.target import Target


@dataclass(frozen=True)
class KernelBody:
    """A kernel as a schedule rule sees it: its body's ops, and the tensors
    it reads (its block's arguments) and writes (its yield's values)."""

    ops: list[Operation]
    inputs: list[SSAValue]
    outputs: list[SSAValue]
    matched: kernel.AttentionMatchAttr | kernel.GemmMatchAttr | None = None
    """What the fusion passes matched (the kernel's `matched`)."""

    @staticmethod
    def of(kfunc: kernel.FuncOp | kernel.FusedOp) -> KernelBody:
        body = kfunc.body.block
        results = body.last_op
        assert isinstance(results, kernel.YieldOp)
        return KernelBody(
            list(body.ops), list(body.args), list(results.values), kfunc.matched
        )

    @property
    def side_by_side(self) -> bool:
        """Whether an op of a gemm kernel reads several of its matmuls
        (#kernel.gemm_match): each tile holds each one's tile of one place."""
        matched = self.matched
        return isinstance(matched, kernel.GemmMatchAttr) and bool(
            matched.side_by_side.data
        )

    @property
    def prologue(self) -> bool:
        """Whether a gemm kernel computes its matmuls' lhs (fuse-prologue):
        then only the persistent TMA kernel, K unsplit, and the SIMT kernel
        take it."""
        matched = self.matched
        return isinstance(matched, kernel.GemmMatchAttr) and bool(matched.prologue.data)

    @property
    def tensors(self) -> list[SSAValue]:
        return [*self.inputs, *self.outputs]

    @property
    def matmuls(self) -> list[molten.MatmulOp]:
        return [op for op in self.ops if isinstance(op, molten.MatmulOp)]


class FamilyRule:
    """The schedule rule of one kernel family: whether it takes a kernel of
    its kind on a target, the schedule it picks, and the candidates an
    autotuner times (the pick first). `kernel-schedule` tries the rules of
    a kernel's kind in order; the first that applies schedules it."""

    kind: kernel.KernelKind

    def applies(self, body: KernelBody, target: Target) -> bool:
        return True

    def schedule(self, body: KernelBody, target: Target) -> kernel.ScheduleAttr:
        raise NotImplementedError

    def candidates(
        self, body: KernelBody, target: Target, count: int
    ) -> list[kernel.ScheduleAttr]:
        return [self.schedule(body, target)]


def first_rule(
    rules: Sequence[FamilyRule], body: KernelBody, target: Target
) -> FamilyRule | None:
    """The first of `rules` that takes the kernel on the target, if any."""
    return next((rule for rule in rules if rule.applies(body, target)), None)


WARP = 32


SPLIT_MIN_STEPS = 4
"""The fewest K steps a part of split-K takes: fewer, and the pipeline
barely fills."""


MAX_SPLIT = 16


MMA_MIN_M = 64
"""Fewer rows than an mma.sync warp tile's would leave most of each block
idle: the SIMT kernel is the better fit. (On wgmma, a 64-row tile with
split-K takes any gemm that is not a GEMV: the tensor cores' spare rows
cost nothing where streaming B is the bound.)"""


MMA_ELEMENT_TYPES = (Float16Type, BFloat16Type)


GEMV_MAX_M = 8
"""Rows up to which a gemm is a GEMV: each thread holds GEMV_MAX_M x 8
accumulators at most, and B (streamed once) dominates the bytes moved."""


def reduced_rows(
    body_ops: list[Operation],
) -> tuple[int | None, tuple[int, ...], bool]:
    """How many rows a row_reduce kernel reduces (None where a named
    dimension makes it known only at run time), their shape (that of its
    reduced axes), and whether they are strided (axes follow the reduced
    ones)."""
    for op in body_ops:
        if isinstance(op, molten.ReductionOp):
            dims = value_dims(op.input)
            axes = set(op.axes.get_values())
            row = tuple(dims[i] for i in sorted(axes))
            if any(isinstance(d, str) for d in row):
                raise StaticShapeNeeded(
                    "kernel-schedule: a reduction over a named dimension "
                    f"({op.input.type})"
                )
            kept = [d for i, d in enumerate(dims) if i not in axes]
            strided = max(axes) < len(dims) - 1
            if any(isinstance(d, str) for d in kept):
                return None, row, strided  # type: ignore[return-value]
            return math.prod(kept), row, strided  # type: ignore[return-value]
    raise ValueError("a row_reduce kernel without a reduction")


def scanned_rows(body_ops: list[Operation]) -> tuple[int | None, int, bool]:
    """How many rows a scan kernel scans (None where a named dimension makes
    it known only at run time), their length, and whether they are strided
    (axes follow the scanned one)."""
    (scan,) = [op for op in body_ops if isinstance(op, molten.ScanOp)]
    dims = value_dims(scan.input)
    axis = scan.axis.value.data
    n = dims[axis]
    if isinstance(n, str):
        raise StaticShapeNeeded(
            f"kernel-schedule: a scan along a named dimension ({scan.input.type})"
        )
    kept = [d for i, d in enumerate(dims) if i != axis]
    rows = None if any(isinstance(d, str) for d in kept) else math.prod(kept)
    return rows, n, axis < len(dims) - 1  # type: ignore[return-value]


def vector_width(inner: int, tensors: list[SSAValue]) -> int:
    """Elements of the narrowest element type of `tensors` in one 16-byte
    access, halved until the count divides `inner`."""
    types = [t.type for t in tensors]
    assert all(isinstance(t, TensorType) for t in types)
    itemsize = min(element_bytes(t.element_type) for t in types)  # type: ignore
    width = VECTOR_BYTES // itemsize
    while inner % width:
        width //= 2
    return width


def round_up(value: int, multiple: int) -> int:
    return multiple * math.ceil(value / multiple)


def _copies_whole_rows(matmul: molten.MatmulOp, min_rows: int) -> bool:
    """Whether each operand's rows (along its contiguous axis) are whole
    16-byte copies (cp.async) and the product has at least `min_rows`
    rows."""
    element = matmul.lhs.type.element_type  # type: ignore[attr-defined]
    a, b = shape_of(matmul.lhs), shape_of(matmul.rhs)
    copy = VECTOR_BYTES // element_bytes(element)
    # Row-major storage: the last axis is the contiguous one, whatever the
    # transposes (A^T is stored [K, M], B^T [N, K]).
    if a[-1] % copy or b[-1] % copy:
        return False
    return shape_of(matmul.result)[-2] >= min_rows


def takes_tensor_cores(matmul: molten.MatmulOp, min_rows: int = MMA_MIN_M) -> bool:
    """Whether tensor cores take this matmul: f16 or bf16 operands whose
    rows (along each operand's contiguous axis) are whole 16-byte copies,
    and at least `min_rows` rows of output."""
    element = matmul.lhs.type.element_type  # type: ignore[attr-defined]
    return isinstance(element, MMA_ELEMENT_TYPES) and _copies_whole_rows(
        matmul, min_rows
    )


def takes_tf32(matmul: molten.MatmulOp) -> bool:
    """Whether tensor cores take this f32 matmul as 3xTF32 (mma.sync): rows
    of whole 16-byte copies and at least MMA_MIN_M rows of output, as
    `takes_tensor_cores` asks of 16-bit operands."""
    element = matmul.lhs.type.element_type  # type: ignore[attr-defined]
    return element == Float32Type() and _copies_whole_rows(matmul, MMA_MIN_M)


def is_gemv(matmul: molten.MatmulOp) -> bool:
    """Whether a gemm is a GEMV: at most GEMV_MAX_M rows (B stored [K, N], or
    [N, K] as x @ w.T)."""
    return shape_of(matmul.result)[-2] <= GEMV_MAX_M


SWIZZLE_K = 64
"""A wgmma gemm's K step: one 128-byte swizzled row of 16-bit elements."""


WGMMA_N_STEP = 8
"""wgmma's N (a warpgroup tile's width) is a multiple of this."""


def named_rows(body_ops: Sequence[Operation]) -> str | None:
    """The name of a gemm kernel's M where it is named, else None."""
    matmuls = [op for op in body_ops if isinstance(op, molten.MatmulOp)]
    rows = value_dims(matmuls[0].result)[-2] if matmuls else None
    return rows if isinstance(rows, str) else None


def wgmma_tile_schedule(
    rows: int,
    cols: int,
    stages: int,
    split: int = 1,
    persistent: int = 0,
    cluster: int = 1,
) -> kernel.ScheduleAttr:
    """The schedule of a wgmma gemm of rows x cols tiles: a warpgroup per 64
    rows of a tile, one warpgroup tile as wide as the block's, a K step of
    one swizzled row; `persistent` blocks add a producer warpgroup, in
    clusters of `cluster` blocks."""
    warpgroups = rows // WGMMA_M + (1 if persistent else 0)
    family = (
        kernel.ScheduleFamily.GEMM_TMA
        if persistent
        else kernel.ScheduleFamily.GEMM_WGMMA
    )
    return kernel.ScheduleAttr(
        family,
        kernel.WARPGROUP_WARPS * WARP * warpgroups,
        tile=(rows, cols, SWIZZLE_K),
        warp=(WGMMA_M, cols),
        stages=stages,
        mma_warps=kernel.WARPGROUP_WARPS,
        split=split,
        persistent=persistent,
        cluster=cluster,
    )
