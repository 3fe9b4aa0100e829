"""What every kernel kind shares: the kernel being built (`KernelShell`:
the cuda.kernel's parameters, inputs then outputs as pointers, and its
entry block), stores of scalars to them, and the `LoweredKernel` the
launcher is built from, which `KernelShell.finish` returns as `Launch`
says.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    FunctionType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from molten.conventions import sanitize_name
from molten.dialects import cuda, kernel, molten
from molten.dialects.molten import Dim, dims_of, split_dims, value_dims
from molten.errors import StaticShapeNeeded
from molten.passes.fusion import LAYOUTS
from molten.passes.lowering.emitter import (
    INDEX,
    MAX_GRID_X,
    Emitter,
    Index,
    broadcast_index,
    close_if,
    element_of,
    emit_for,
    emit_if,
    ravel,
    unravel,
)
from molten.passes.lowering.evaluator import Evaluator


class Scratch(NamedTuple):
    """A scratch buffer a kernel asks for."""

    name: str
    element: Attribute
    size: int
    zeroed: bool
    """Set to zero before each launch."""
    restored: bool = False
    """(Zeroed only.) The kernel leaves it zero again (counters that the
    last arrival resets): a runtime may keep it, zeroed once, for the
    launches on one stream."""


class GridOf(NamedTuple):
    """A grid along `axis` (0: x, 1: y) of ceil(the product of the `dims`'
    sizes x `scale` / `divisor`) x `times` blocks: a kernel's work over
    named dimensions."""

    dims: tuple[str, ...]
    scale: int
    divisor: int
    times: int = 1
    axis: int = 0


class SizeRange(NamedTuple):
    """The sizes of a named dimension a kernel variant runs at: from `least`
    to `most` (0: any above `least`)."""

    dim: str
    least: int
    most: int


def grid_for(
    dims: Sequence[Dim], per_block: int, unit: int = 1
) -> tuple[int, GridOf | None]:
    """A grid of one block per `per_block` units of work over `dims`' elements
    (`unit` elements a unit): its static x, and how it grows with the named
    sizes where some are (the static x then only its cap)."""
    static, named = split_dims(dims)
    if named:
        return MAX_GRID_X, GridOf(named, static // unit, per_block)
    return min(math.ceil(static // unit / per_block), MAX_GRID_X), None


def grid_stride_loop(e: Emitter, count: Index) -> tuple[Emitter, Block]:
    """A loop over `count` items, thread t of block b starting at item
    b * blockDim + t, stepping by the grid's threads (a pointwise or
    scatter kernel's): the body's emitter and block (the caller ends it
    with `scf.yield`; its argument is the item)."""
    tid = e.add(cuda.ThreadIdxOp())
    bid = e.add(cuda.BlockIdxOp())
    bdim = e.add(cuda.BlockDimOp())
    gdim = e.add(cuda.GridDimOp())
    start = e.iadd(e.imul(bid, bdim), tid)
    step = e.imul(bdim, gdim)
    return emit_for(e, start, count, step)


class RowLoop(NamedTuple):
    """A grid-stride loop over rows, `rows_per_block` a block (`row_loop`)."""

    e: Emitter
    """The loop body's emitter."""
    block: Block
    """The loop body (the caller ends it with `scf.yield`)."""
    row: Index
    """The thread's row."""
    valid: SSAValue | None
    """Where a block's last rows may lie past the end, whether the thread's
    row is one (the threads of those past it work on the last row, so that
    every lane takes part in the shuffles, and store nothing)."""
    grid: int
    grid_of: GridOf | None


def row_loop(
    e: Emitter,
    row_shape: Sequence[Dim],
    rows: Index,
    rows_per_block: int,
    lanes: int,
    tid: SSAValue,
    bid: SSAValue,
    gdim: SSAValue,
) -> RowLoop:
    """The rows of `row_shape` (`rows` of them), `rows_per_block` a block of
    `lanes` threads each (thread t on row t / lanes of its block's), the
    blocks taking turns: a row kernel's loop (row reductions, scans)."""
    blocks = e.ceil_div(rows, rows_per_block)
    grid, grid_of = grid_for(row_shape, rows_per_block)
    rb, block = emit_for(e, bid, blocks, gdim)
    row: Index = block.args[0]
    valid: SSAValue | None = None
    if rows_per_block > 1:
        row = rb.iadd(rb.imul(row, rows_per_block), rb.idiv(tid, lanes))
        if not isinstance(rows, int) or rows % rows_per_block:
            valid = rb.icmp(row, rows, "slt")
            row = rb.imin(row, rb.isub(rows, 1))
    if isinstance(row, SSAValue):
        row.name_hint = "row"
    return RowLoop(rb, block, row, valid, grid, grid_of)


@dataclass
class LoweredKernel:
    op: cuda.KernelOp
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cooperative: int | None = None
    """Blocks per group of a cooperative launch (`grid` is then the most)."""
    scratch: tuple[Scratch, ...] = ()
    """Buffers the launcher allocates and passes after the outputs."""
    tensor_maps: tuple = ()
    """TMA tensor maps (`gemm_wgmma_tma.TensorMapSpec`) the launcher makes and
    passes after the outputs, before the scratch buffers."""
    grid_of: GridOf | None = None
    """Where the kernel's work grows with named sizes: its grid along x,
    at most `grid[0]` (the kernel loops over what its grid leaves)."""
    when: SizeRange | None = None
    """Where the kernel is one variant of several (`kernel.func`'s
    `variants`): the sizes it runs at."""
    starts_as: tuple[tuple[int, int], ...] = ()
    """(output, input) pairs: the output holds the input's values before the
    launch and the kernel writes only some of its elements (a scatter). The
    launcher copies the input into it, or gives it the input's own memory
    where that input is updated in place."""
    reads_start: bool = False
    """Whether the kernel also reads such an input (then never its output's
    memory: the writes would race the reads)."""
    fallback: LoweredKernel | None = None
    """The kernel launched instead when a pointer at a position in `aligned`
    is not aligned to `cuda.VECTOR_BYTES` (it has the same parameters)."""
    aligned: tuple[int, ...] = ()


def pointer_type(value: SSAValue) -> cuda.PointerType:
    return cuda.PointerType(element_of(value))


def stored_form(e: Emitter, scalar: SSAValue, ptr: SSAValue) -> SSAValue:
    """`scalar` as `ptr`'s elements hold it: an f16 or bf16 element from the
    f32 a kernel computes in, anything else as it is."""
    assert isinstance(ptr.type, cuda.PointerType)
    element = ptr.type.element_type
    if isinstance(element, (Float16Type, BFloat16Type)):
        return e.add(arith.TruncFOp(scalar, element))
    return scalar


def store_scalar(ev: Evaluator, scalar: SSAValue, ptr: SSAValue, offset: Index):
    e = ev.e
    e.add(cuda.StoreOp(stored_form(e, scalar, ptr), ptr, e.index(offset)))


def size_names(values: Sequence[SSAValue]) -> list[str]:
    """The named dimensions of `values`' types, in the order they appear."""
    names: list[str] = []
    for value in values:
        assert isinstance(value.type, TensorType)
        names += [d for d in dims_of(value.type) if isinstance(d, str)]
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class Launch:
    """How a finished kernel is launched, and what the launcher gives it."""

    grid: tuple[int, int, int]
    block: int
    """Threads a block (along x)."""
    grid_of: GridOf | None = None
    """Where the kernel's work grows with named sizes: its grid along x,
    at most `grid[0]` (the kernel loops over what its grid leaves)."""
    min_blocks: int | None = None
    """Blocks an SM holds at least (launch bounds): ptxas then caps the
    kernel's registers no lower than that takes."""
    cluster: int | None = None
    """Blocks of a thread block cluster (`__cluster_dims__`)."""
    cooperative: int | None = None
    """Blocks per group of a cooperative launch (`grid` is then the most)."""
    scratch: tuple[Scratch, ...] = ()
    """Buffers the launcher allocates and passes after the outputs."""
    tensor_maps: tuple = ()
    """TMA tensor maps (`gemm_wgmma_tma.TensorMapSpec`) the launcher makes and
    passes after the outputs, before the scratch buffers."""


@dataclass(frozen=True)
class KernelShell:
    """A cuda.kernel being built from a kernel.func: its region and the
    emitter of its entry block, the pointer of each input tensor, the
    kernel's output tensors and their pointers. A named dimension of the
    tensors' types is an `index` parameter after the pointers (the
    emitter's `sizes`). `finish` returns the kernel."""

    kfunc: kernel.FuncOp
    region: Region
    e: Emitter
    pointers: dict[SSAValue, SSAValue]
    outputs: list[SSAValue]
    out_ptrs: list[SSAValue]

    @staticmethod
    def of(kfunc: kernel.FuncOp) -> KernelShell:
        body_block = kfunc.body.block
        yield_op = body_block.last_op
        assert isinstance(yield_op, kernel.YieldOp)
        outputs = list(yield_op.values)
        dims = size_names([*body_block.args, *outputs])
        param_types = [pointer_type(a) for a in body_block.args] + [
            pointer_type(v) for v in outputs
        ]
        entry = Block(arg_types=[*param_types, *(INDEX for _ in dims)])
        names = [a.name_hint for a in body_block.args] + [
            f"out{i}" if v.name_hint is None else v.name_hint
            for i, v in enumerate(outputs)
        ]
        for arg, name in zip(entry.args, [*names, *dims], strict=True):
            arg.name_hint = sanitize_name(name) if name else None
        pointers = dict(zip(body_block.args, entry.args, strict=False))
        out_ptrs = list(entry.args[len(body_block.args) : len(param_types)])
        sizes = dict(zip(dims, entry.args[len(param_types) :], strict=True))
        e = Emitter(entry, {}, entry, sizes)
        return KernelShell(kfunc, Region(entry), e, pointers, outputs, out_ptrs)

    def thread_index(self) -> SSAValue:
        """threadIdx.x, named `tid`."""
        tid = self.e.add(cuda.ThreadIdxOp())
        tid.name_hint = "tid"
        return tid

    def scratch(self, buffers: Sequence[Scratch]) -> list[SSAValue]:
        """The kernel's parameters for scratch `buffers` (`scratch_params`)."""
        return scratch_params(self.region, buffers)

    def finish(self, launch: Launch) -> LoweredKernel:
        """The kernel: its entry block returns, launched as `launch` says."""
        self.e.add(cuda.ReturnOp())
        kfunc = self.kfunc
        fused = []
        if kfunc.fused_ops is not None:
            fused = [name.data for name in kfunc.fused_ops]
        op = cuda.KernelOp(
            kfunc.sym_name.data,
            [a.type for a in self.region.block.args],
            launch.block,
            self.region,
            fused,
            launch.min_blocks,
            launch.cluster,
        )
        return LoweredKernel(
            op,
            launch.grid,
            (launch.block, 1, 1),
            cooperative=launch.cooperative,
            scratch=launch.scratch,
            tensor_maps=launch.tensor_maps,
            grid_of=launch.grid_of,
        )


def scratch_params(region: Region, buffers: Sequence[Scratch]) -> list[SSAValue]:
    """The kernel's parameters for scratch `buffers`, after its others, in
    the order the launcher passes them (`LoweredKernel.scratch`)."""
    params = []
    for buffer in buffers:
        arg = region.block.insert_arg(
            cuda.PointerType(buffer.element), len(region.block.args)
        )
        arg.name_hint = buffer.name
        params.append(arg)
    return params


def take_arguments_of(lowered: LoweredKernel, other: LoweredKernel) -> None:
    """Gives `lowered` parameters for the tensor maps and scratch buffers of
    `other` that it does not use, so that it takes the arguments of `other`
    (the kernel it is launched in place of)."""
    block = lowered.op.body.block
    for spec in other.tensor_maps:
        element = other.op.body.block.args[spec.operand].type.element_type
        block.insert_arg(cuda.TensorMapType(element), len(block.args))
    scratch_params(lowered.op.body, other.scratch)
    params = [a.type for a in block.args]
    lowered.op.function_type = FunctionType.from_lists(params, [])


@dataclass(frozen=True)
class Layout:
    """An output that is `source` (a value of the kernel's domain) permuted
    by the reshapes and transposes of `chain`, first to last: the kernel
    stores each element of `source` where the chain sends it. Consecutive
    elements along the domain's last axis stay consecutive along the
    output's last axis in aligned runs of `contiguous`."""

    source: SSAValue
    chain: tuple[Operation, ...]
    contiguous: int

    @staticmethod
    def of(output: SSAValue, domain: Sequence[Dim]) -> Layout | None:
        """The layout of `output` over `domain`, or None where `output`
        is not a chain of reshapes and transposes of a value of `domain`."""
        chain: list[Operation] = []
        value = output
        while isinstance(op := value.owner, LAYOUTS):
            chain.append(op)
            value = op.operands[0]
        if not chain or list(value_dims(value)) != list(domain):
            return None
        chain.reverse()
        last: Dim = domain[-1] if domain else 1
        contiguous = last if isinstance(last, int) else 1
        for op in chain:
            out_shape = value_dims(op.results[0])
            if isinstance(op, molten.TransposeOp):
                perm = list(op.permutation.get_values())
                if perm and perm[-1] != len(perm) - 1:
                    contiguous = 1
            else:
                last = out_shape[-1] if out_shape else 1
                contiguous = math.gcd(contiguous, last) if isinstance(last, int) else 1
        return Layout(value, tuple(chain), contiguous)

    def place(self, e: Emitter, index: Sequence[Index]) -> list[Index]:
        """The output's index of `source`'s element at `index`."""
        place = list(index)
        for op in self.chain:
            if isinstance(op, molten.TransposeOp):
                perm = list(op.permutation.get_values())
                place = [place[axis] for axis in perm]
            else:
                # The axes both shapes lead with keep their index: only the
                # rest is raveled and unraveled (a split of the last axis
                # divides the column alone).
                before, after = value_dims(op.operands[0]), value_dims(op.results[0])
                kept = 0
                while (
                    kept < min(len(before), len(after)) - 1
                    and before[kept] == after[kept]
                ):
                    kept += 1
                linear = ravel(e, place[kept:], before[kept:])
                place = [*place[:kept], *unravel(e, linear, after[kept:])]
        return place


def store_output(
    ev: Evaluator,
    value: SSAValue,
    ptr: SSAValue,
    index: list[Index],
    domain,
    scalar: SSAValue | None = None,
):
    """Stores `value` at `index` of `domain` (its `scalar` there, where
    evaluated already); an output smaller than the domain (broadcast into
    it) is stored once, by the indices where it is read at 0."""
    e = ev.e
    shape = value_dims(value)
    source = broadcast_index(index, shape, domain)
    if scalar is None:
        scalar = ev.at(value, source)
    offset = ravel(e, source, shape)
    guards = [
        i
        for i, (d, full) in enumerate(
            zip((1,) * (len(domain) - len(shape)) + shape, domain, strict=True)
        )
        if d == 1 and full != 1 and not isinstance(index[i], int)
    ]
    if not guards:
        store_scalar(ev, scalar, ptr, offset)
        return
    cond = e.icmp(index[guards[0]], 0, "eq")
    for i in guards[1:]:
        cond = e.add(arith.AndIOp(cond, e.icmp(index[i], 0, "eq")))
    inner = emit_if(e, cond)
    store_scalar(ev.scoped(inner), scalar, ptr, offset)
    close_if(inner)


def checked_vector_width(
    kfunc: kernel.FuncOp, schedule: kernel.ScheduleAttr, inner: Dim
):
    """The schedule's vector width, which must divide the innermost dimension
    `inner` that each run of consecutive elements lies along (a named one
    takes width 1: its size is not known to divide)."""
    width = schedule.vector.data
    if isinstance(inner, str):
        if width == 1:
            return width
        raise StaticShapeNeeded(
            f"lower-kernel-to-cuda: @{kfunc.sym_name.data}'s schedule has vector = "
            f"{width} along its innermost dimension {inner}, whose size is known "
            "at run time only"
        )
    if inner % width:
        raise NotImplementedError(
            f"lower-kernel-to-cuda: @{kfunc.sym_name.data}'s schedule has vector = "
            f"{width}, which does not divide its innermost dimension {inner}"
        )
    return width


def lower_variants(
    kfunc: kernel.FuncOp,
    lower: Callable[[kernel.FuncOp, kernel.ScheduleAttr, int], LoweredKernel],
) -> list[LoweredKernel]:
    """A kernel over a named size with `variants`: a kernel per variant,
    `lower(kernel, its schedule, its bound)`, named by its class (`_upto8`,
    the last `_rest`), each serving the sizes above the one before's bound
    up to its own."""
    assert kfunc.variants is not None
    lowered = []
    least = 1
    for variant in kfunc.variants:
        most = variant.most.data
        one = kfunc.clone()
        one.variants = None
        one.sym_name = StringAttr(
            kfunc.sym_name.data + (f"_upto{most}" if most else "_rest")
        )
        kernel_lowered = lower(one, variant.schedule, most)
        kernel_lowered.when = SizeRange(variant.dim.data, least, most)
        lowered.append(kernel_lowered)
        least = most + 1
    return lowered
