"""The `cuda` dialect: what the `.cu` printer writes, op for op.

Level 3 of Molten. A `cuda.kernel` is a `__global__` function over typed
pointers; its body is made of this dialect's ops (thread and block indices,
loads and stores, shared memory, barriers, warp shuffles) and upstream
`arith`, `math` and `scf` ops for scalar math and control flow. No op holds
C++ text, so passes can rewrite kernels and lit tests can check them.
A `cuda.host_func` is the `extern "C"` launcher of one graph: it launches the
kernels in order and allocates the buffers passed between them.

```mlir
cuda.kernel @scale(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 256 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
  cuda.store %v, %y[%i] : f32, !cuda.ptr<f32>
  cuda.return
}
cuda.host_func @graph(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
  cuda.launch @scale grid [1, 1, 1] block [256, 1, 1] (%x, %y)
      : !cuda.ptr<f32>, !cuda.ptr<f32>
  cuda.return
}
```

Values of type `index` are 64-bit signed integers in the generated code;
f16 and bf16 values are only loaded and stored, arithmetic is in f32.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import auto
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    FunctionType,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i1,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AnyAttr,
    AnyOf,
    AttrSizedOperandSegments,
    EqAttrConstraint,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from molten.dialects.molten import BOOL, INTEGER_TYPES

FLOAT_ELEMENTS = (Float32Type, Float16Type, BFloat16Type)
TENSOR_ELEMENTS = (*INTEGER_TYPES, BOOL)
"""The integer and bool element types of tensors (molten's), which a pointer
may hold besides floats."""
COUNTER_TYPE = IntegerType(32)
"""The element of the counters that blocks of a group arrive at
(`cuda.group_barrier`)."""
BARRIER_TYPE = IntegerType(64, Signedness.UNSIGNED)
"""An mbarrier: 8 bytes of shared memory (`!cuda.ptr<ui64, shared>`);
unsigned, as PTX has it, and apart from the signed i64 of int64 tensors."""


class MemorySpace(StrEnum):
    GLOBAL = auto()
    SHARED = auto()


@irdl_attr_definition
class PointerType(ParametrizedAttribute, TypeAttribute):
    """A pointer to the elements of a tensor (f32, f16, bf16, i64, i32, i8,
    ui8 or i1) in global or shared memory, or to mbarriers (ui64) in shared
    memory. A bool (i1) takes a byte.

    `!cuda.ptr<f16>` (global), `!cuda.ptr<f32, shared>`, `!cuda.ptr<i64>`.
    """

    name = "cuda.ptr"
    element_type: Attribute = param_def()
    space: StringAttr = param_def()

    def __init__(
        self, element_type: Attribute, space: MemorySpace = MemorySpace.GLOBAL
    ):
        super().__init__(element_type, StringAttr(space.value))

    @property
    def memory_space(self) -> MemorySpace:
        return MemorySpace(self.space.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            element = parser.parse_type()
            space = MemorySpace.GLOBAL
            if parser.parse_optional_punctuation(","):
                space = parser.parse_str_enum(MemorySpace)
        return element, StringAttr(space.value)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)
            if self.memory_space != MemorySpace.GLOBAL:
                printer.print_string(f", {self.space.data}")

    def verify(self) -> None:
        space = MemorySpace(self.space.data)
        if self.element_type == BARRIER_TYPE and space == MemorySpace.SHARED:
            return
        if not is_element(self.element_type):
            raise VerifyException(
                f"!cuda.ptr: element type {self.element_type} is not a tensor's "
                "(f32, f16, bf16, i64, i32, i8, ui8 or i1) or, in shared memory, "
                "an mbarrier's (ui64)"
            )


def is_element(t: Attribute) -> bool:
    """Whether `t` is the element type of a tensor."""
    return isinstance(t, FLOAT_ELEMENTS) or t in TENSOR_ELEMENTS


class Dim(StrEnum):
    X = auto()
    Y = auto()
    Z = auto()


@irdl_attr_definition
class DimAttr(EnumAttribute[Dim], SpacedOpaqueSyntaxAttribute):
    name = "cuda.dim"


class _SpecialRegisterOp(IRDLOperation):
    dim = prop_def(DimAttr)
    result = result_def(IndexType)
    assembly_format = "$dim attr-dict"

    def __init__(self, dim: Dim = Dim.X):
        super().__init__(properties={"dim": DimAttr(dim)}, result_types=[IndexType()])


@irdl_op_definition
class ThreadIdxOp(_SpecialRegisterOp):
    """threadIdx.{x,y,z}: `%t = cuda.thread_idx x`."""

    name = "cuda.thread_idx"


@irdl_op_definition
class BlockIdxOp(_SpecialRegisterOp):
    """blockIdx.{x,y,z}: `%b = cuda.block_idx x`."""

    name = "cuda.block_idx"


@irdl_op_definition
class BlockDimOp(_SpecialRegisterOp):
    """blockDim.{x,y,z}: `%n = cuda.block_dim x`."""

    name = "cuda.block_dim"


@irdl_op_definition
class GridDimOp(_SpecialRegisterOp):
    """gridDim.{x,y,z}: `%n = cuda.grid_dim x`."""

    name = "cuda.grid_dim"


VECTOR_BYTES = 16
"""The widest access: 128 bits (float4; eight f16 or bf16)."""


def _verify_width(op_name: str, element: Attribute, width: int) -> None:
    nbytes = width * element_bytes(element)
    if width & (width - 1) or nbytes > VECTOR_BYTES:
        raise VerifyException(
            f"{op_name}: {width} elements of {element} at once; a vector access is "
            f"a power of two of elements, at most {VECTOR_BYTES} bytes"
        )


def element_bytes(element: Attribute) -> int:
    """The size in bytes of an element type (a tensor's, or an mbarrier's);
    a bool takes a byte."""
    assert is_element(element) or element == BARRIER_TYPE
    return max(1, element.bitwidth // 8)


@irdl_op_definition
class LoadOp(IRDLOperation):
    """ptr[index], or several consecutive elements at once (a vector access,
    aligned to its size; `vectorize` makes them):

    ```mlir
    %v = cuda.load %p[%i] : !cuda.ptr<f16> -> f16
    %a, %b, %c, %d = cuda.load %p[%i] : !cuda.ptr<f32> -> f32, f32, f32, f32
    %s = cuda.load coherent %partials[%j] : !cuda.ptr<f32> -> f32
    ```

    A `coherent` load reads global memory through L2 only (ld.global.cg): the
    value was written during this launch by another block, which the
    block's L1 does not see.
    """

    name = "cuda.load"
    ptr = operand_def(PointerType)
    index = operand_def(IndexType)
    values = var_result_def()
    coherent = opt_prop_def(UnitAttr)
    assembly_format = (
        "(`coherent` $coherent^)? $ptr `[` $index `]` attr-dict `:` type($ptr) "
        "`->` type($values)"
    )

    def __init__(
        self, ptr: SSAValue, index: SSAValue, width: int = 1, coherent: bool = False
    ):
        assert isinstance(ptr.type, PointerType)
        super().__init__(
            operands=[ptr, index],
            result_types=[[ptr.type.element_type] * width],
            properties={"coherent": UnitAttr()} if coherent else {},
        )

    @property
    def result(self) -> SSAValue:
        """The value of a scalar load."""
        (value,) = self.values
        return value

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PointerType)
        element = self.ptr.type.element_type
        if any(t != element for t in self.values.types):
            raise VerifyException(
                f"cuda.load: a {self.ptr.type} gives {element}, not "
                f"{', '.join(map(str, self.values.types))}"
            )
        _verify_width(self.name, element, len(self.values))
        if self.coherent is not None and (
            self.ptr.type.memory_space != MemorySpace.GLOBAL or len(self.values) != 1
        ):
            raise VerifyException(
                "cuda.load: a coherent load reads one element of global memory"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """ptr[index] = value, or several values to consecutive elements at once
    (a vector access, aligned to its size):

    ```mlir
    cuda.store %v, %p[%i] : f16, !cuda.ptr<f16>
    cuda.store %a, %b, %c, %d, %p[%i] : f32, f32, f32, f32, !cuda.ptr<f32>
    ```
    """

    name = "cuda.store"
    values = var_operand_def()
    ptr = operand_def(PointerType)
    index = operand_def(IndexType)

    def __init__(
        self, value: SSAValue | Sequence[SSAValue], ptr: SSAValue, index: SSAValue
    ):
        values = [value] if isinstance(value, SSAValue) else list(value)
        super().__init__(operands=[values, ptr, index])

    @property
    def value(self) -> SSAValue:
        """The value of a scalar store."""
        (value,) = self.values
        return value

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PointerType)
        element = self.ptr.type.element_type
        if not self.values:
            raise VerifyException("cuda.store: stores at least one value")
        if any(t != element for t in self.values.types):
            raise VerifyException(
                f"cuda.store: a {', '.join(map(str, self.values.types))} cannot be "
                f"stored through {self.ptr.type}"
            )
        _verify_width(self.name, element, len(self.values))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list([*self.values, self.ptr], printer.print_operand)
        printer.print_string("[")
        printer.print_operand(self.index)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([*self.values.types, self.ptr.type], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        # `%a, %b, %p[%i]`: the operand before `[` is the pointer.
        start = parser.pos
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation("[")
        index = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_type
        )
        if len(types) != len(operands):
            parser.raise_error(
                f"cuda.store: {len(operands)} operands before the index but "
                f"{len(types)} types",
                start,
                parser.pos,
            )
        resolved = parser.resolve_operands(operands, types, parser.pos)
        values, ptr = resolved[:-1], resolved[-1]
        index_value = parser.resolve_operand(index, IndexType())
        op = cls(values, ptr, index_value)
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class SharedAllocOp(IRDLOperation):
    """A static `__shared__` array:
    `%s = cuda.shared_alloc 32 : !cuda.ptr<f32, shared>`."""

    name = "cuda.shared_alloc"
    size = prop_def(IntegerAttr[I64])
    result = result_def(PointerType)
    assembly_format = "$size attr-dict `:` type($result)"

    def __init__(self, element_type: Attribute, size: int):
        super().__init__(
            properties={"size": IntegerAttr(size, i64)},
            result_types=[PointerType(element_type, MemorySpace.SHARED)],
        )

    def verify_(self) -> None:
        assert isinstance(self.result.type, PointerType)
        if self.result.type.memory_space != MemorySpace.SHARED:
            raise VerifyException(
                "cuda.shared_alloc: the result must be a shared pointer"
            )
        if self.size.value.data < 1:
            raise VerifyException("cuda.shared_alloc: size must be >= 1")


@irdl_op_definition
class SyncThreadsOp(IRDLOperation):
    """__syncthreads(): `cuda.sync_threads`."""

    name = "cuda.sync_threads"
    assembly_format = "attr-dict"


@irdl_op_definition
class NamedBarrierOp(IRDLOperation):
    """The `threads` threads (whole warps) that use barrier `id` of the block
    wait here for each other (bar.sync id, threads): a barrier for part of
    a block, as a warpgroup of a kernel whose other warps run other code.
    `id` is in [1, 16), the same in every thread that uses it (barrier 0
    is __syncthreads's):

    ```mlir
    cuda.named_barrier %id, 128
    ```
    """

    name = "cuda.named_barrier"
    id = operand_def(IndexType)
    threads = prop_def(IntegerAttr[I64])
    assembly_format = "$id `,` $threads attr-dict"

    def __init__(self, id: SSAValue, threads: int):
        super().__init__(
            operands=[id], properties={"threads": IntegerAttr(threads, i64)}
        )

    def verify_(self) -> None:
        threads = self.threads.value.data
        if threads <= 0 or threads % 32:
            raise VerifyException(
                "cuda.named_barrier: threads must be a positive multiple of 32"
            )


@irdl_op_definition
class ShflXorOp(IRDLOperation):
    """__shfl_xor_sync over the full warp, of an f32 or an integer:
    `%r = cuda.shfl_xor %v, 16 : f32`."""

    name = "cuda.shfl_xor"
    T: ClassVar = VarConstraint("T", AnyAttr())
    value = operand_def(T)
    offset = prop_def(IntegerAttr[I64])
    result = result_def(T)
    assembly_format = "$value `,` $offset attr-dict `:` type($value)"

    def __init__(self, value: SSAValue, offset: int):
        super().__init__(
            operands=[value],
            properties={"offset": IntegerAttr(offset, i64)},
            result_types=[value.type],
        )

    def verify_(self) -> None:
        if self.offset.value.data not in (1, 2, 4, 8, 16):
            raise VerifyException("cuda.shfl_xor: offset must be 1, 2, 4, 8 or 16")
        t = self.value.type
        if not isinstance(t, Float32Type) and t not in INTEGER_TYPES:
            raise VerifyException(
                f"cuda.shfl_xor: shuffles an f32 or an integer (i64, i32, i8, "
                f"ui8), not {t}"
            )


@irdl_op_definition
class FmodOp(IRDLOperation):
    """fmodf: the remainder of a / b with the sign of a, exactly (MLIR's
    arith.remf, which xDSL lacks): `%r = cuda.fmod %a, %b : f32`."""

    name = "cuda.fmod"
    lhs = operand_def(Float32Type)
    rhs = operand_def(Float32Type)
    result = result_def(Float32Type)
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[Float32Type()])


@irdl_op_definition
class AtomicAddOp(IRDLOperation):
    """ptr[index] += value, atomically (CUDA's atomicAdd: concurrent adds to
    one element all count, in no set order); a scatter with `accumulate`:

    ```mlir
    cuda.atomic_add %v, %p[%i] : f32, !cuda.ptr<f32>
    ```

    Elements of 32 or 64 bits, f16 or bf16 (sm_80 and later)."""

    name = "cuda.atomic_add"
    value = operand_def()
    ptr = operand_def(PointerType)
    index = operand_def(IndexType)
    assembly_format = (
        "$value `,` $ptr `[` $index `]` attr-dict `:` type($value) `,` type($ptr)"
    )

    def __init__(self, value: SSAValue, ptr: SSAValue, index: SSAValue):
        super().__init__(operands=[value, ptr, index])

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PointerType)
        element = self.ptr.type.element_type
        if self.value.type != element:
            raise VerifyException(
                f"cuda.atomic_add: a {self.value.type} cannot be added through "
                f"{self.ptr.type}"
            )
        if element_bytes(element) == 1:
            raise VerifyException(
                f"cuda.atomic_add: CUDA has no atomic add of {element} (one byte)"
            )


@irdl_op_definition
class CheckIndexOp(IRDLOperation):
    """Stops the kernel (a device-side trap, as torch's CUDA kernels assert)
    where `value`, an index read from `what`, is outside [0, size),
    printing it, the position it was read at and the size first:

    ```mlir
    cuda.check_index %id, %at, 32000, "molten.take indices" : i64
    ```

    Kernels emit it where MOLTEN_CHECK_INDICES=1 was set when they were
    compiled; otherwise they clamp an index into range."""

    name = "cuda.check_index"
    value = operand_def(IntegerType)
    position = operand_def(IndexType)
    size = prop_def(IntegerAttr[I64])
    what = prop_def(StringAttr)
    assembly_format = (
        "$value `,` $position `,` $size `,` $what attr-dict `:` type($value)"
    )

    def __init__(self, value: SSAValue, position: SSAValue, size: int, what: str):
        super().__init__(
            operands=[value, position],
            properties={"size": IntegerAttr(size, i64), "what": StringAttr(what)},
        )


@irdl_op_definition
class GroupBarrierOp(IRDLOperation):
    """Every block of a group of co-resident blocks waits here until all have
    arrived: the block's threads synchronize, one thread adds 1 to the
    group's counter and waits until the counter reaches `target`, and what
    each block wrote before is visible to the others after (coherent loads).

    ```mlir
    cuda.group_barrier %counters[%group], %target : !cuda.ptr<i32>
    ```

    The counters start at zero (`cuda.zero`) and only grow, so the n-th
    barrier of a group of `s` blocks waits for `n * s`. Only kernels
    launched `cooperative` may use it: their blocks are all resident at once.
    """

    name = "cuda.group_barrier"
    counters = operand_def(PointerType)
    group = operand_def(IndexType)
    target = operand_def(IndexType)
    assembly_format = (
        "$counters `[` $group `]` `,` $target attr-dict `:` type($counters)"
    )

    def __init__(self, counters: SSAValue, group: SSAValue, target: SSAValue):
        super().__init__(operands=[counters, group, target])

    def verify_(self) -> None:
        _verify_counters(self.name, self.counters)


@irdl_op_definition
class LastArrivalOp(IRDLOperation):
    """The block arrives at its group's counter and learns whether it came
    last of `count` blocks: the block's threads synchronize, one thread
    makes what the block wrote visible and adds 1 to the counter; the
    result, the same in every thread, is true in the `count`-th block to
    arrive, which then sees what every block of the group wrote (coherent
    loads). No block waits: a split computation's last block combines the
    parts (flash-decoding's combine), in a fixed order for deterministic
    results. With `among N`, only the block's first N threads (whole warps)
    take part, synchronized by a named barrier: a warp-specialized kernel's
    consumers, while its producer warps run on.

    ```mlir
    %last = cuda.last_arrival %counters[%group], %count : !cuda.ptr<i32>
    %last = cuda.last_arrival %counters[%group], %count among 256 : !cuda.ptr<i32>
    ```

    The counters start at zero (`cuda.zero`) at each launch.
    """

    name = "cuda.last_arrival"
    counters = operand_def(PointerType)
    group = operand_def(IndexType)
    count = operand_def(IndexType)
    threads = opt_prop_def(IntegerAttr[I64])
    result = result_def(IntegerType(1))
    assembly_format = (
        "$counters `[` $group `]` `,` $count (`among` $threads^)? attr-dict "
        "`:` type($counters)"
    )

    def __init__(
        self,
        counters: SSAValue,
        group: SSAValue,
        count: SSAValue,
        threads: int | None = None,
    ):
        super().__init__(
            operands=[counters, group, count],
            result_types=[i1],
            properties={}
            if threads is None
            else {"threads": IntegerAttr(threads, i64)},
        )

    def verify_(self) -> None:
        _verify_counters(self.name, self.counters)
        if self.threads is not None and not (
            0 < self.threads.value.data <= 1024 and self.threads.value.data % 32 == 0
        ):
            raise VerifyException(
                f"{self.name}: among {self.threads.value.data} threads: a named "
                "barrier takes whole warps, 32 to 1024 threads"
            )


def _verify_counters(op_name: str, counters: SSAValue) -> None:
    assert isinstance(counters.type, PointerType)
    if (
        counters.type.element_type != COUNTER_TYPE
        or counters.type.memory_space != MemorySpace.GLOBAL
    ):
        raise VerifyException(
            f"{op_name}: the counters are a {counters.type}, not a !cuda.ptr<i32>"
        )


FRAGMENT = IntegerType(32)
"""A register of a tensor-core fragment: two f16 or bf16 packed in 32 bits,
or one tf32 (an f32 with the low 13 bits of its mantissa zero)."""
MMA_OPERAND_TYPES = (Float16Type, BFloat16Type)
MMA_TF32 = Float32Type()
"""The operand type of a `cuda.mma` on tf32 fragments (m16n8k8): f32 values
rounded by `cuda.split_tf32`."""
ASYNC_COPY_BYTES = 16
"""What one `cuda.cp_async` copies: 16 bytes (eight f16 or bf16, four f32)."""


@irdl_op_definition
class CpAsyncOp(IRDLOperation):
    """Copies 16 bytes from global to shared memory without passing through
    registers (cp.async.cg, sm_80+); when `valid` is false it writes 16 zero
    bytes instead and reads nothing (an edge of a tile).

    ```mlir
    cuda.cp_async %tile[%t], %a[%i], %valid
        : !cuda.ptr<f16, shared>, !cuda.ptr<f16>
    ```

    Both addresses are 16-byte aligned. The copy completes asynchronously:
    `cuda.cp_async_commit` closes a group of copies and
    `cuda.cp_async_wait` waits for all but the newest groups.
    """

    name = "cuda.cp_async"
    target = operand_def(PointerType)
    target_index = operand_def(IndexType)
    source = operand_def(PointerType)
    source_index = operand_def(IndexType)
    valid = operand_def(IntegerType(1))
    assembly_format = (
        "$target `[` $target_index `]` `,` $source `[` $source_index `]` `,` $valid "
        "attr-dict `:` type($target) `,` type($source)"
    )

    def __init__(
        self,
        target: SSAValue,
        target_index: SSAValue,
        source: SSAValue,
        source_index: SSAValue,
        valid: SSAValue,
    ):
        super().__init__(operands=[target, target_index, source, source_index, valid])

    def verify_(self) -> None:
        target, source = self.target.type, self.source.type
        assert isinstance(target, PointerType) and isinstance(source, PointerType)
        if (
            target.memory_space != MemorySpace.SHARED
            or source.memory_space != MemorySpace.GLOBAL
            or target.element_type != source.element_type
        ):
            raise VerifyException(
                f"cuda.cp_async: copies from global to shared memory of one element "
                f"type, not from {source} to {target}"
            )


@irdl_op_definition
class CpAsyncCommitOp(IRDLOperation):
    """Closes the group of the `cuda.cp_async` copies this thread issued since
    the last commit: `cuda.cp_async_commit`."""

    name = "cuda.cp_async_commit"
    assembly_format = "attr-dict"


@irdl_op_definition
class CpAsyncWaitOp(IRDLOperation):
    """Waits until at most `pending` of this thread's committed copy groups
    are still in flight: `cuda.cp_async_wait 2`. Other threads' copies are
    seen after a `cuda.sync_threads`."""

    name = "cuda.cp_async_wait"
    pending = prop_def(IntegerAttr[I64])
    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": IntegerAttr(pending, i64)})

    def verify_(self) -> None:
        if not 0 <= self.pending.value.data <= 7:
            raise VerifyException("cuda.cp_async_wait: pending is 0 to 7")


@irdl_op_definition
class LdMatrixOp(IRDLOperation):
    """Four 8x8 matrices of 16-bit elements from shared memory into the warp's
    fragment registers (ldmatrix.x4, sm_75+): lane l gives the address of
    row l % 8 of matrix l / 8, and each lane receives one 32-bit register
    (two elements) of each matrix. `trans` transposes each matrix as it
    loads (a row-major tile read as the column-major operand of an mma).
    On f32 memory (not transposed) each matrix is 8 rows of four f32, and
    each lane receives element l % 4 of row l / 4: the layout of the tf32
    fragments of an m16n8k8 mma.

    ```mlir
    %r0, %r1, %r2, %r3 = cuda.ldmatrix %tile[%i] : !cuda.ptr<f16, shared>
    %s0, %s1, %s2, %s3 = cuda.ldmatrix trans %tile[%j] : !cuda.ptr<bf16, shared>
    ```
    """

    name = "cuda.ldmatrix"
    ptr = operand_def(PointerType)
    index = operand_def(IndexType)
    trans = opt_prop_def(UnitAttr)
    r0 = result_def(FRAGMENT)
    r1 = result_def(FRAGMENT)
    r2 = result_def(FRAGMENT)
    r3 = result_def(FRAGMENT)
    assembly_format = "(`trans` $trans^)? $ptr `[` $index `]` attr-dict `:` type($ptr)"

    def __init__(self, ptr: SSAValue, index: SSAValue, trans: bool = False):
        super().__init__(
            operands=[ptr, index],
            result_types=[FRAGMENT] * 4,
            properties={"trans": UnitAttr()} if trans else {},
        )

    @property
    def fragments(self) -> tuple[SSAValue, ...]:
        return tuple(self.results)

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PointerType)
        element = self.ptr.type.element_type
        if self.ptr.type.memory_space != MemorySpace.SHARED or not (
            isinstance(element, MMA_OPERAND_TYPES) or element == MMA_TF32
        ):
            raise VerifyException(
                "cuda.ldmatrix: reads f16, bf16 or f32 shared memory, "
                f"not {self.ptr.type}"
            )
        if element == MMA_TF32 and self.trans is not None:
            raise VerifyException(
                "cuda.ldmatrix: transposes 16-bit elements only, not f32"
            )


@irdl_op_definition
class MmaOp(IRDLOperation):
    """One warp-wide tensor-core multiply-accumulate D = A B + C of shape
    m16n8k16 (mma.sync, sm_80+): A is 16x16 and B 16x8 of `operand` (f16 or
    bf16) in fragment registers (four of A, two of B, as ldmatrix gives
    them), C and D 16x8 in f32, four per lane: lane l holds row l / 4 (and
    l / 4 + 8 in the last two) at columns 2 (l % 4) and 2 (l % 4) + 1.
    With `operand` f32 it is m16n8k8 on tf32 fragments (`cuda.split_tf32`):
    A 16x8 and B 8x8, one element a register, C and D as above.

    ```mlir
    %d0, %d1, %d2, %d3 = cuda.mma f16 [%a0, %a1, %a2, %a3] [%b0, %b1]
        [%c0, %c1, %c2, %c3]
    ```
    """

    name = "cuda.mma"
    operand = prop_def(Attribute)
    a = var_operand_def(FRAGMENT)
    b = var_operand_def(FRAGMENT)
    c = var_operand_def(Float32Type)
    d0 = result_def(Float32Type)
    d1 = result_def(Float32Type)
    d2 = result_def(Float32Type)
    d3 = result_def(Float32Type)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = "$operand `a` `[` $a `]` `b` `[` $b `]` `c` `[` $c `]` attr-dict"

    def __init__(
        self,
        operand: Attribute,
        a: Sequence[SSAValue],
        b: Sequence[SSAValue],
        c: Sequence[SSAValue],
    ):
        super().__init__(
            operands=[a, b, c],
            properties={"operand": operand},
            result_types=[Float32Type()] * 4,
        )

    @property
    def d(self) -> tuple[SSAValue, ...]:
        return tuple(self.results)

    def verify_(self) -> None:
        if not (
            isinstance(self.operand, MMA_OPERAND_TYPES) or self.operand == MMA_TF32
        ):
            raise VerifyException(
                f"cuda.mma: multiplies f16, bf16 or tf32 (f32) operands, "
                f"not {self.operand}"
            )
        if (len(self.a), len(self.b), len(self.c)) != (4, 2, 4):
            raise VerifyException(
                "cuda.mma: m16n8k16 (m16n8k8 on tf32) takes four A registers, two "
                "B registers and four f32 accumulators, and gives four"
            )


@irdl_op_definition
class PackOp(IRDLOperation):
    """Two f32 values rounded to `operand` (f16 or bf16) and packed into one
    fragment register, `lo` in the low half: an mma operand made from values
    a warp holds in registers (attention's probabilities, the left operand
    of P V, laid out as the accumulators of Q K^T that gave them).

    ```mlir
    %r = cuda.pack f16 %lo, %hi
    ```
    """

    name = "cuda.pack"
    operand = prop_def(Attribute)
    lo = operand_def(Float32Type)
    hi = operand_def(Float32Type)
    result = result_def(FRAGMENT)
    assembly_format = "$operand $lo `,` $hi attr-dict"

    def __init__(self, operand: Attribute, lo: SSAValue, hi: SSAValue):
        super().__init__(
            operands=[lo, hi], properties={"operand": operand}, result_types=[FRAGMENT]
        )

    def verify_(self) -> None:
        if not isinstance(self.operand, MMA_OPERAND_TYPES):
            raise VerifyException(
                f"cuda.pack: packs into f16 or bf16 pairs, not {self.operand}"
            )


@irdl_op_definition
class SplitTf32Op(IRDLOperation):
    """An f32 value (or its bits in a fragment register) as the sum of two
    tf32 fragment registers: `big`, the value rounded to tf32 (to nearest,
    ties away), and `small`, the remainder rounded so. Three tf32 mmas,
    small x big + big x small + big x big, then give an f32 product to
    about f32's precision (3xTF32: the dropped small x small term is below
    2^-22 of it) at tensor-core speed.

    ```mlir
    %big, %small = cuda.split_tf32 %x : i32
    ```
    """

    name = "cuda.split_tf32"
    value = operand_def(AnyOf([EqAttrConstraint(FRAGMENT), base(Float32Type)]))
    big = result_def(FRAGMENT)
    small = result_def(FRAGMENT)
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[FRAGMENT, FRAGMENT])


DESCRIPTOR = IntegerType(64, Signedness.UNSIGNED)
"""A wgmma matrix descriptor: where an operand tile lies in shared memory
and how it is laid out (the 128-byte swizzle, its two strides)."""
WGMMA_M = 64
"""The rows of one wgmma: a warpgroup's share of the block tile."""
WGMMA_K = 16
"""The K extent of one wgmma of 16-bit operands."""
SWIZZLE_BYTES = 128
"""The swizzle of wgmma's operand tiles: in each 1024-byte atom of eight
128-byte rows, 16-byte chunk c of row r lies at chunk c ^ r."""
SWIZZLE_ALIGNMENT = 1024
"""The alignment of a swizzled tile (the atom's size)."""


@irdl_op_definition
class WgmmaDescriptorOp(IRDLOperation):
    """The matrix descriptor of an operand tile for `cuda.wgmma`: the tile
    starts at element `index` of a shared buffer laid out in 128-byte
    swizzled rows (SWIZZLE_BYTES); `leading` and `stride` are its byte
    strides (between 64-element column blocks of an MN-major tile, unused
    by a K-major one; between groups of eight rows).

    ```mlir
    %d = cuda.wgmma_descriptor %tile[%i] leading 8192 stride 1024
        : !cuda.ptr<f16, shared>
    ```
    """

    name = "cuda.wgmma_descriptor"
    ptr = operand_def(PointerType)
    index = operand_def(IndexType)
    leading = prop_def(IntegerAttr[I64])
    stride = prop_def(IntegerAttr[I64])
    result = result_def(DESCRIPTOR)
    assembly_format = (
        "$ptr `[` $index `]` `leading` $leading `stride` $stride attr-dict "
        "`:` type($ptr)"
    )

    def __init__(self, ptr: SSAValue, index: SSAValue, leading: int, stride: int):
        super().__init__(
            operands=[ptr, index],
            result_types=[DESCRIPTOR],
            properties={
                "leading": IntegerAttr(leading, i64),
                "stride": IntegerAttr(stride, i64),
            },
        )

    def verify_(self) -> None:
        assert isinstance(self.ptr.type, PointerType)
        if self.ptr.type.memory_space != MemorySpace.SHARED or not isinstance(
            self.ptr.type.element_type, MMA_OPERAND_TYPES
        ):
            raise VerifyException(
                "cuda.wgmma_descriptor: describes f16 or bf16 shared memory, not "
                f"{self.ptr.type}"
            )
        for name in ("leading", "stride"):
            value = getattr(self, name).value.data
            if value < 0 or value % 16 or value >= 1 << 18:
                raise VerifyException(
                    f"cuda.wgmma_descriptor: {name} is a multiple of 16 bytes "
                    f"below 2^18, not {value}"
                )


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """One warpgroup-wide asynchronous tensor-core multiply-accumulate
    D = A B + D of shape m64nNk16 (wgmma.mma_async, sm_90a): A (64 x 16) and
    B (16 x N) of `operand` (f16 or bf16) read from shared memory through
    their descriptors, K-major unless `trans_a` / `trans_b` (MN-major), the
    N / 2 f32 accumulators of each thread in registers: thread t of the
    warpgroup holds, in accumulator j, row 16 (t / 32) + (t % 32) / 4 +
    8 ((j / 2) % 2) and column 8 (j / 4) + 2 (t % 4) + j % 2. Without
    accumulators in (`[]`), D = A B: the first product of a sum needs no
    zeros written first. The results are ready after a `cuda.wgmma_wait`
    that covers the op's group.

    ```mlir
    %d0, %d1, %d2, %d3 = cuda.wgmma f16 n 8 trans_b %da, %db [%c0, %c1, %c2, %c3]
        : f32, f32, f32, f32
    %e0, %e1, %e2, %e3 = cuda.wgmma f16 n 8 %da, %db [] : f32, f32, f32, f32
    ```
    """

    name = "cuda.wgmma"
    operand = prop_def(Attribute)
    n = prop_def(IntegerAttr[I64])
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    a = operand_def(DESCRIPTOR)
    b = operand_def(DESCRIPTOR)
    c = var_operand_def(Float32Type)
    d = var_result_def(Float32Type)
    assembly_format = (
        "$operand `n` $n (`trans_a` $trans_a^)? (`trans_b` $trans_b^)? $a `,` $b "
        "`[` $c `]` attr-dict `:` type($d)"
    )

    def __init__(
        self,
        operand: Attribute,
        a: SSAValue,
        b: SSAValue,
        c: Sequence[SSAValue],
        trans_a: bool = False,
        trans_b: bool = False,
        n: int | None = None,
    ):
        """`n` is N where `c` is empty (D = A B); else 2 len(c)."""
        n = 2 * len(c) if n is None else n
        super().__init__(
            operands=[a, b, c],
            properties=_wgmma_properties(operand, n, trans_a=trans_a, trans_b=trans_b),
            result_types=[[Float32Type()] * (n // 2)],
        )

    def verify_(self) -> None:
        n = self.n.value.data
        _verify_wgmma(self.name, self.operand, n, self.c or self.d, self.d)


@irdl_op_definition
class WgmmaRegisterAOp(IRDLOperation):
    """`cuda.wgmma` with A (64 x 16) in registers instead of shared memory:
    four fragment registers a thread (`cuda.pack`), laid out as an mma.sync
    m16n8k16 A fragment in the rows of the thread's warp (16 w to 16 w + 15
    of the warpgroup), which is the layout of the accumulators of two
    n8 columns of a `cuda.wgmma`: the probabilities of attention's P V,
    made from the accumulators of Q Kᵀ without leaving registers. B is
    read through its descriptor, K-major unless `trans_b`.

    ```mlir
    %d0, %d1, %d2, %d3 = cuda.wgmma_reg_a f16 n 8 trans_b [%a0, %a1, %a2, %a3],
        %db [%c0, %c1, %c2, %c3] : f32, f32, f32, f32
    ```
    """

    name = "cuda.wgmma_reg_a"
    operand = prop_def(Attribute)
    n = prop_def(IntegerAttr[I64])
    trans_b = opt_prop_def(UnitAttr)
    a = var_operand_def(FRAGMENT)
    b = operand_def(DESCRIPTOR)
    c = var_operand_def(Float32Type)
    d = var_result_def(Float32Type)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$operand `n` $n (`trans_b` $trans_b^)? `[` $a `]` `,` $b `[` $c `]` "
        "attr-dict `:` type($d)"
    )

    def __init__(
        self,
        operand: Attribute,
        a: Sequence[SSAValue],
        b: SSAValue,
        c: Sequence[SSAValue],
        trans_b: bool = False,
    ):
        super().__init__(
            operands=[a, b, c],
            properties=_wgmma_properties(operand, 2 * len(c), trans_b=trans_b),
            result_types=[[Float32Type()] * len(c)],
        )

    def verify_(self) -> None:
        _verify_wgmma(self.name, self.operand, self.n.value.data, self.c, self.d)
        if len(self.a) != 4:
            raise VerifyException(
                f"{self.name}: A is four fragment registers a thread, not {len(self.a)}"
            )


def _wgmma_properties(
    operand: Attribute, n: int, **transposed: bool
) -> dict[str, Attribute]:
    """A wgmma's properties: its operand type, N, and the unit properties
    `trans_a` / `trans_b` given true."""
    properties: dict[str, Attribute] = {"operand": operand, "n": IntegerAttr(n, i64)}
    properties |= {name: UnitAttr() for name, flag in transposed.items() if flag}
    return properties


def _verify_wgmma(
    name: str,
    operand: Attribute,
    n: int,
    c: Sequence[SSAValue],
    d: Sequence[SSAValue],
) -> None:
    """What a wgmma of either form takes: f16 or bf16 operands, N a multiple
    of 8 up to 256, N / 2 accumulators a thread in and out."""
    if not isinstance(operand, MMA_OPERAND_TYPES):
        raise VerifyException(f"{name}: multiplies f16 or bf16 operands, not {operand}")
    if n % 8 or not 8 <= n <= 256:
        raise VerifyException(f"{name}: N is a multiple of 8 from 8 to 256, not {n}")
    if len(c) != n // 2 or len(d) != n // 2:
        raise VerifyException(
            f"{name}: m64n{n}k16 takes and gives {n // 2} f32 accumulators "
            f"a thread, not {len(c)} and {len(d)}"
        )


@irdl_op_definition
class WgmmaFenceOp(IRDLOperation):
    """Orders this warpgroup's register and shared-memory accesses before the
    `cuda.wgmma` ops that follow (wgmma.fence): `cuda.wgmma_fence`."""

    name = "cuda.wgmma_fence"
    assembly_format = "attr-dict"


@irdl_op_definition
class WgmmaCommitOp(IRDLOperation):
    """Closes the group of the `cuda.wgmma` ops this warpgroup issued since
    the last commit: `cuda.wgmma_commit`."""

    name = "cuda.wgmma_commit"
    assembly_format = "attr-dict"


@irdl_op_definition
class WgmmaWaitOp(IRDLOperation):
    """Waits until at most `pending` of this warpgroup's committed wgmma
    groups are in flight, and gives the accumulators it makes ready (those
    of the groups it waited for; with `pending` above 0, the others are
    still being written and are only passed through).

    ```mlir
    %e0, %e1 = cuda.wgmma_wait 0 [%d0, %d1] : f32, f32
    ```
    """

    name = "cuda.wgmma_wait"
    pending = prop_def(IntegerAttr[I64])
    values = var_operand_def(Float32Type)
    results_ = var_result_def(Float32Type)
    assembly_format = "$pending `[` $values `]` attr-dict `:` type($results_)"

    def __init__(self, pending: int, values: Sequence[SSAValue]):
        super().__init__(
            operands=[values],
            properties={"pending": IntegerAttr(pending, i64)},
            result_types=[[Float32Type()] * len(values)],
        )

    def verify_(self) -> None:
        if not 0 <= self.pending.value.data <= 7:
            raise VerifyException("cuda.wgmma_wait: pending is 0 to 7")
        if len(self.values) != len(self.results_):
            raise VerifyException(
                "cuda.wgmma_wait: gives one accumulator for each it takes"
            )


@irdl_op_definition
class FenceProxyAsyncOp(IRDLOperation):
    """Makes this thread's writes to shared memory visible to the tensor
    cores' asynchronous reads (fence.proxy.async.shared::cta), before the
    barrier that precedes a `cuda.wgmma`: `cuda.fence_proxy_async`."""

    name = "cuda.fence_proxy_async"
    assembly_format = "attr-dict"


@irdl_attr_definition
class TensorMapType(ParametrizedAttribute, TypeAttribute):
    """A TMA tensor map (CUtensorMap, 128 opaque bytes the host encodes) of
    a row-major matrix of f16 or bf16 elements in global memory, read in
    128-byte swizzled boxes: `!cuda.tensor_map<bf16>`. A kernel takes it
    by value (`const __grid_constant__`)."""

    name = "cuda.tensor_map"
    element_type: Attribute = param_def()

    def __init__(self, element_type: Attribute):
        super().__init__(element_type)

    def verify(self) -> None:
        if not isinstance(self.element_type, Float16Type | BFloat16Type):
            raise VerifyException(
                f"!cuda.tensor_map: element type {self.element_type} is not f16 or bf16"
            )


def _verify_barriers(op_name: str, barriers: SSAValue) -> None:
    if barriers.type != PointerType(BARRIER_TYPE, MemorySpace.SHARED):
        raise VerifyException(
            f"{op_name}: the barriers are a {barriers.type}, not a "
            "!cuda.ptr<ui64, shared>"
        )


@irdl_op_definition
class MbarrierInitOp(IRDLOperation):
    """Initializes an mbarrier in shared memory to expect `count` arrivals a
    phase (mbarrier.init): `cuda.mbarrier_init %bars[%i], 2 :
    !cuda.ptr<ui64, shared>`. One thread initializes; `cuda.fence_mbarrier_init`
    and a barrier make it visible before any use."""

    name = "cuda.mbarrier_init"
    barriers = operand_def(PointerType)
    index = operand_def(IndexType)
    count = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$barriers `[` $index `]` `,` $count attr-dict `:` type($barriers)"
    )

    def __init__(self, barriers: SSAValue, index: SSAValue, count: int):
        super().__init__(
            operands=[barriers, index], properties={"count": IntegerAttr(count, i64)}
        )

    def verify_(self) -> None:
        _verify_barriers(self.name, self.barriers)
        if not 1 <= self.count.value.data < 1 << 20:
            raise VerifyException(f"{self.name}: count is 1 to 2^20 - 1")


@irdl_op_definition
class FenceMbarrierInitOp(IRDLOperation):
    """Makes this thread's mbarrier initializations visible to the other
    threads and to TMA (fence.mbarrier_init.release.cluster):
    `cuda.fence_mbarrier_init`."""

    name = "cuda.fence_mbarrier_init"
    assembly_format = "attr-dict"


@irdl_op_definition
class MbarrierArriveOp(IRDLOperation):
    """This thread arrives at an mbarrier (mbarrier.arrive); with `expect_tx`
    it also tells the barrier that phase waits for that many more bytes of
    asynchronous copies (mbarrier.arrive.expect_tx): a TMA load completes
    its bytes on the barrier it names. With `cta`, it arrives at the barrier
    at the same place in the shared memory of that block of its cluster
    (mapa; mbarrier.arrive.shared::cluster).

    ```mlir
    cuda.mbarrier_arrive %bars[%i] : !cuda.ptr<i64, shared>
    cuda.mbarrier_arrive %bars[%i] expect_tx 49152 : !cuda.ptr<i64, shared>
    cuda.mbarrier_arrive %bars[%i] cta %rank : !cuda.ptr<i64, shared>
    ```
    """

    name = "cuda.mbarrier_arrive"
    barriers = operand_def(PointerType)
    index = operand_def(IndexType)
    cta = opt_operand_def(IndexType)
    expect_tx = opt_prop_def(IntegerAttr[I64])
    assembly_format = (
        "$barriers `[` $index `]` (`cta` $cta^)? (`expect_tx` $expect_tx^)? "
        "attr-dict `:` type($barriers)"
    )

    def __init__(
        self,
        barriers: SSAValue,
        index: SSAValue,
        expect_tx: int | None = None,
        cta: SSAValue | None = None,
    ):
        properties = (
            {} if expect_tx is None else {"expect_tx": IntegerAttr(expect_tx, i64)}
        )
        operands = [barriers, index, [] if cta is None else [cta]]
        super().__init__(operands=operands, properties=properties)

    def verify_(self) -> None:
        _verify_barriers(self.name, self.barriers)
        if self.expect_tx is not None and not 0 < self.expect_tx.value.data < 1 << 20:
            raise VerifyException(f"{self.name}: expect_tx is 1 to 2^20 - 1 bytes")
        if self.expect_tx is not None and self.cta is not None:
            raise VerifyException(
                f"{self.name}: expect_tx is told to this block's barrier, not "
                "another block's (cta)"
            )


@irdl_op_definition
class MbarrierWaitOp(IRDLOperation):
    """Waits until the phase of an mbarrier of parity `parity` (0 or 1) has
    completed (mbarrier.try_wait.parity, in a loop): `cuda.mbarrier_wait
    %bars[%i], %parity : !cuda.ptr<ui64, shared>`. A fresh barrier is in
    phase 0, so waiting for parity 1 returns at once."""

    name = "cuda.mbarrier_wait"
    barriers = operand_def(PointerType)
    index = operand_def(IndexType)
    parity = operand_def(IndexType)
    assembly_format = (
        "$barriers `[` $index `]` `,` $parity attr-dict `:` type($barriers)"
    )

    def __init__(self, barriers: SSAValue, index: SSAValue, parity: SSAValue):
        super().__init__(operands=[barriers, index, parity])

    def verify_(self) -> None:
        _verify_barriers(self.name, self.barriers)


TMA_STRIDE_BYTES = 16
"""TMA reads a matrix whose rows are whole units of this many bytes (its
global strides), from an address so aligned."""


def tma_reads_rows(row_elements: int, element: Attribute) -> bool:
    """Whether TMA reads rows of `row_elements` elements of `element`."""
    return row_elements * element_bytes(element) % TMA_STRIDE_BYTES == 0


@irdl_op_definition
class TmaLoadOp(IRDLOperation):
    """Loads the box of a tensor map at (column, row) = (`c0`, `c1`) into
    shared memory, 128-byte swizzled, asynchronously
    (cp.async.bulk.tensor.2d); its bytes complete on the mbarrier given.
    Elements outside the matrix arrive as zeros. The target is 1024-byte
    aligned. With `multicast`, a mask of the blocks of the cluster, the box
    lands at the same place in each of those blocks' shared memory, its
    bytes completing on each one's barrier at the same place.

    ```mlir
    cuda.tma_load %map, %tile[%t], %bars[%i], [%k, %row]
        : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<i64, shared>
    cuda.tma_load %map, %tile[%t], %bars[%i], [%k, %row] multicast 3
        : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<i64, shared>
    ```
    """

    name = "cuda.tma_load"
    map = operand_def(TensorMapType)
    target = operand_def(PointerType)
    target_index = operand_def(IndexType)
    barriers = operand_def(PointerType)
    barrier_index = operand_def(IndexType)
    c0 = operand_def(IndexType)
    c1 = operand_def(IndexType)
    multicast = opt_prop_def(IntegerAttr[I64])
    assembly_format = (
        "$map `,` $target `[` $target_index `]` `,` $barriers `[` $barrier_index "
        "`]` `,` `[` $c0 `,` $c1 `]` (`multicast` $multicast^)? attr-dict `:` "
        "type($map) `,` type($target) `,` type($barriers)"
    )

    def __init__(
        self,
        map: SSAValue,
        target: SSAValue,
        target_index: SSAValue,
        barriers: SSAValue,
        barrier_index: SSAValue,
        c0: SSAValue,
        c1: SSAValue,
        multicast: int | None = None,
    ):
        properties = (
            {} if multicast is None else {"multicast": IntegerAttr(multicast, i64)}
        )
        super().__init__(
            operands=[map, target, target_index, barriers, barrier_index, c0, c1],
            properties=properties,
        )

    def verify_(self) -> None:
        _verify_barriers(self.name, self.barriers)
        if self.multicast is not None and not 0 < self.multicast.value.data < 1 << 16:
            raise VerifyException(
                f"{self.name}: multicast is a mask of the cluster's blocks, 1 to "
                "2^16 - 1"
            )
        target, tensor_map = self.target.type, self.map.type
        assert isinstance(target, PointerType) and isinstance(tensor_map, TensorMapType)
        if (
            target.memory_space != MemorySpace.SHARED
            or target.element_type != tensor_map.element_type
        ):
            raise VerifyException(
                f"{self.name}: loads a {tensor_map} into shared memory of its "
                f"element type, not into {target}"
            )


@irdl_op_definition
class ClusterSyncOp(IRDLOperation):
    """Every thread of every block of the cluster waits here for the others
    (barrier.cluster.arrive.release, then .wait.acquire): a block's
    barriers are ready before another block signals them, and no block
    leaves while another may still signal its barriers or write its shared
    memory. `cuda.cluster_sync`."""

    name = "cuda.cluster_sync"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class SetMaxRegistersOp(IRDLOperation):
    """Gives this warpgroup's threads `count` registers each from here on,
    more (`inc`) or fewer (`dec`) than the kernel was compiled for
    (setmaxnreg): a producer warpgroup gives its registers to the consumers.
    `cuda.set_max_registers "dec" 40`. `count` is a multiple of 8 from 24 to
    256."""

    name = "cuda.set_max_registers"
    direction = prop_def(StringAttr)
    count = prop_def(IntegerAttr[I64])
    assembly_format = "$direction $count attr-dict"

    def __init__(self, direction: str, count: int):
        super().__init__(
            properties={
                "direction": StringAttr(direction),
                "count": IntegerAttr(count, i64),
            }
        )

    def verify_(self) -> None:
        count = self.count.value.data
        if self.direction.data not in ("inc", "dec"):
            raise VerifyException(f"{self.name}: direction is inc or dec")
        if count % 8 or not 24 <= count <= 256:
            raise VerifyException(
                f"{self.name}: count is a multiple of 8 from 24 to 256, not {count}"
            )


STATIC_SHARED_BYTES = 48 * 1024
"""The most shared memory a kernel may declare statically; beyond it the
printer places its buffers in dynamic shared memory, set at the launch."""
MAX_SHARED_BYTES = 227 * 1024
"""The most shared memory a block may have (sm_90)."""
SHARED_ALIGNMENT = 16


def shared_layout(kernel: Operation) -> tuple[dict[SSAValue, int], int]:
    """Each shared buffer of `kernel` -> its byte offset, buffers in order,
    each aligned to 16 bytes (cp.async and ldmatrix need it), or to 1024 when
    it is swizzled for wgmma; and the bytes in all."""
    offsets: dict[SSAValue, int] = {}
    total = 0
    for op in kernel.walk():
        if isinstance(op, SharedAllocOp):
            assert isinstance(op.result.type, PointerType)
            align = shared_alignment(op.result)
            total = -(-total // align) * align
            offsets[op.result] = total
            nbytes = op.size.value.data * element_bytes(op.result.type.element_type)
            total += -(-nbytes // SHARED_ALIGNMENT) * SHARED_ALIGNMENT
    return offsets, total


def swizzled(buffer: SSAValue) -> bool:
    """Whether a shared buffer holds wgmma operand tiles or TMA boxes (128-byte
    swizzled)."""
    return any(
        isinstance(use.operation, WgmmaDescriptorOp)
        or (isinstance(use.operation, TmaLoadOp) and use.index == 1)
        for use in buffer.uses
    )


def shared_alignment(buffer: SSAValue) -> int:
    """The alignment a shared buffer needs: 1024 bytes for a swizzled one,
    else 16."""
    return SWIZZLE_ALIGNMENT if swizzled(buffer) else SHARED_ALIGNMENT


def copied_whole(buffer: SSAValue) -> bool:
    """Whether a shared buffer is read or written several elements at a time
    (by cp.async, ldmatrix or vector loads and stores), which needs it
    aligned to SHARED_ALIGNMENT."""
    return any(
        (isinstance(use.operation, CpAsyncOp) and use.operation.target is buffer)
        or isinstance(use.operation, LdMatrixOp)
        or is_vector_access(use.operation)
        for use in buffer.uses
    )


def is_vector_access(op: Operation) -> bool:
    """Whether `op` loads or stores several consecutive elements at once."""
    return isinstance(op, LoadOp | StoreOp) and len(op.values) > 1


def vector_params(kernel: Operation) -> list[int]:
    """Positions of the parameters `kernel` accesses by vectors: a launch
    of it needs them aligned to VECTOR_BYTES."""
    args = list(kernel.regions[0].block.args)
    accessed = {op.ptr for op in kernel.walk() if is_vector_access(op)}
    return [i for i, arg in enumerate(args) if arg in accessed]


def dynamic_shared_bytes(kernel: Operation) -> int:
    """The dynamic shared memory `kernel` is launched with: its buffers' bytes
    when they exceed what a kernel may declare statically, else 0."""
    _, total = shared_layout(kernel)
    return total if total > STATIC_SHARED_BYTES else 0


def _verify_pointer_args(
    op_name: str, body: Region, function_type: FunctionType, tensors_only: bool
):
    """Global pointers, or (a kernel's, not where `tensors_only`: a
    launcher's) tensor maps, then `index` sizes."""
    if list(function_type.outputs.data):
        raise VerifyException(f"{op_name}: returns nothing (outputs are pointers)")
    args = [a.type for a in body.block.args]
    if args != list(function_type.inputs.data):
        raise VerifyException(
            f"{op_name}: block arguments must match the function type"
        )
    for t in args:
        if isinstance(t, IndexType) or (
            isinstance(t, TensorMapType) and not tensors_only
        ):
            continue
        if not isinstance(t, PointerType) or t.memory_space != MemorySpace.GLOBAL:
            raise VerifyException(f"{op_name}: parameter {t} is not a global pointer")


def _shapes_attr(
    shapes: Sequence[Sequence[int | str]], dims: Sequence[str] = ()
) -> ArrayAttr[DenseArrayBase]:
    """Shapes as arrays, a named dimension as -(1 + its position in `dims`)."""
    return ArrayAttr(
        [
            DenseArrayBase.from_list(
                i64, [-1 - dims.index(d) if isinstance(d, str) else d for d in s]
            )
            for s in shapes
        ]
    )


def _print_signature(printer: Printer, sym_name: StringAttr, body: Region) -> None:
    printer.print_string(" ")
    printer.print_symbol_name(sym_name.data)
    printer.print_string("(")
    printer.print_list(body.block.args, printer.print_block_argument)
    printer.print_string(")")


def _parse_signature(parser: Parser):
    sym_name = parser.parse_symbol_name()
    args = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
    )
    return sym_name, args


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A `__global__` kernel over global pointers, launched with `block` threads
    per block and, with `min_blocks`, made to fit that many blocks per SM
    (its `__launch_bounds__`); with `cluster`, launched in thread block
    clusters of that many consecutive blocks (`__cluster_dims__`);
    `fused_ops` names the molten ops it computes, for the comment above it.

    ```mlir
    cuda.kernel @k(%x: !cuda.ptr<f32>) block 512 min_blocks 2 { ... }
    cuda.kernel @g(%m: !cuda.tensor_map<bf16>) block 384 min_blocks 1 cluster 2 { ... }
    ```
    """

    name = "cuda.kernel"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    block = prop_def(IntAttr)
    min_blocks = opt_prop_def(IntAttr)
    cluster = opt_prop_def(IntAttr)
    fused_ops = opt_prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        params: Sequence[Attribute],
        block: int,
        body: Region,
        fused_ops: Sequence[str] = (),
        min_blocks: int | None = None,
        cluster: int | None = None,
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "function_type": FunctionType.from_lists(params, []),
            "block": IntAttr(block),
        }
        if fused_ops:
            properties["fused_ops"] = ArrayAttr([StringAttr(n) for n in fused_ops])
        if min_blocks is not None:
            properties["min_blocks"] = IntAttr(min_blocks)
        if cluster is not None:
            properties["cluster"] = IntAttr(cluster)
        super().__init__(properties=properties, regions=[body])

    def verify_(self) -> None:
        _verify_pointer_args(self.name, self.body, self.function_type, False)
        if not 1 <= self.block.data <= 1024:
            raise VerifyException("cuda.kernel: block must be in [1, 1024]")
        if self.min_blocks is not None and self.min_blocks.data < 1:
            raise VerifyException("cuda.kernel: min_blocks must be >= 1")
        if self.cluster is not None and not 1 <= self.cluster.data <= 8:
            raise VerifyException("cuda.kernel: cluster must be in [1, 8]")
        _, shared = shared_layout(self)
        if shared > MAX_SHARED_BYTES:
            raise VerifyException(
                f"cuda.kernel: {shared} bytes of shared memory exceed the "
                f"{MAX_SHARED_BYTES} a block may have"
            )

    def print(self, printer: Printer) -> None:
        _print_signature(printer, self.sym_name, self.body)
        printer.print_string(f" block {self.block.data}")
        if self.min_blocks is not None:
            printer.print_string(f" min_blocks {self.min_blocks.data}")
        if self.cluster is not None:
            printer.print_string(f" cluster {self.cluster.data}")
        extra = {"fused_ops": self.fused_ops} if self.fused_ops is not None else {}
        printer.print_op_attributes({**self.attributes, **extra}, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        sym_name, args = _parse_signature(parser)
        parser.parse_keyword("block")
        block = parser.parse_integer(allow_negative=False)
        min_blocks = None
        if parser.parse_optional_keyword("min_blocks"):
            min_blocks = parser.parse_integer(allow_negative=False)
        cluster = None
        if parser.parse_optional_keyword("cluster"):
            cluster = parser.parse_integer(allow_negative=False)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        extra = dict(attributes.data) if attributes is not None else {}
        body = parser.parse_region(args)
        properties: dict[str, Attribute] = {
            "sym_name": sym_name,
            "function_type": FunctionType.from_lists([a.type for a in args], []),
            "block": IntAttr(block),
        }
        if min_blocks is not None:
            properties["min_blocks"] = IntAttr(min_blocks)
        if cluster is not None:
            properties["cluster"] = IntAttr(cluster)
        if "fused_ops" in extra:
            properties["fused_ops"] = extra.pop("fused_ops")
        return cls.create(properties=properties, attributes=extra, regions=[body])


@irdl_op_definition
class HostFuncOp(IRDLOperation):
    """The `extern "C"` launcher of a graph: pointers to its inputs, then to its
    `outputs` outputs, then (`dims`) the sizes of its named dimensions as
    `index` values; the body launches kernels on the caller's stream.
    `param_names`, where given, are the C++ parameter names (the graph's own
    names, which SSA names cannot always carry); `shapes`, where given, the
    shape of the tensor each pointer points to, named dimensions by name
    (the header states them, for a caller that allocates the buffers);
    `updates`, the inputs it writes in place (`molten.updates`: not const).

    ```mlir
    cuda.host_func @g(%h: !cuda.ptr<f32>, %h_1: !cuda.ptr<f32>, %y: !cuda.ptr<f32>)
        outputs 1 shapes [[4, 8], [8], [4, 8]]
        attributes {param_names = ["h_0", "h_1", "y"]} { ... }
    cuda.host_func @n(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>, %T: index)
        outputs 1 dims ["T"] shapes [[T, 8], [T, 8]] { ... }
    cuda.host_func @step(%x: !cuda.ptr<f32>, %cache: !cuda.ptr<f32>, ...)
        outputs 1 updates [1] { ... }
    ```
    """

    name = "cuda.host_func"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    outputs = prop_def(IntAttr)
    dims = opt_prop_def(ArrayAttr[StringAttr])
    param_names = opt_prop_def(ArrayAttr[StringAttr])
    shapes = opt_prop_def(ArrayAttr[DenseArrayBase])
    updates = opt_prop_def(DenseArrayBase)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(
        self,
        sym_name: str,
        params: Sequence[Attribute],
        outputs: int,
        body: Region,
        param_names: Sequence[str] | None = None,
        shapes: Sequence[Sequence[int | str]] | None = None,
        dims: Sequence[str] = (),
        updates: Sequence[int] = (),
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "function_type": FunctionType.from_lists(params, []),
            "outputs": IntAttr(outputs),
        }
        if updates:
            properties["updates"] = DenseArrayBase.from_list(i64, list(updates))
        if dims:
            properties["dims"] = ArrayAttr([StringAttr(d) for d in dims])
        if param_names is not None:
            properties["param_names"] = ArrayAttr([StringAttr(n) for n in param_names])
        if shapes is not None:
            properties["shapes"] = _shapes_attr(shapes, list(dims))
        super().__init__(properties=properties, regions=[body])

    def dim_names(self) -> tuple[str, ...]:
        """The names of the sizes the launcher takes after its pointers."""
        return tuple(d.data for d in self.dims.data) if self.dims else ()

    def pointers(self) -> int:
        """How many pointer params it takes (inputs and outputs)."""
        return len(self.body.block.args) - len(self.dim_names())

    def updated_inputs(self) -> tuple[int, ...]:
        """The positions of the inputs it writes in place."""
        return tuple(self.updates.get_values()) if self.updates else ()

    def param_shapes(self) -> list[tuple[int | str, ...]] | None:
        """Each pointer param's tensor shape (named dimensions by name),
        where the op states them."""
        if self.shapes is None:
            return None
        names = self.dim_names()
        return [
            tuple(names[-1 - d] if d < 0 else d for d in s.get_values())
            for s in self.shapes.data
        ]

    def verify_(self) -> None:
        _verify_pointer_args(self.name, self.body, self.function_type, True)
        args = self.body.block.args
        pointers = self.pointers()
        if pointers < 0 or any(
            isinstance(a.type, IndexType) != (i >= pointers) for i, a in enumerate(args)
        ):
            raise VerifyException(
                "cuda.host_func: pointers come first, then one index size per "
                "name in `dims`"
            )
        names = self.dim_names()
        if len(set(names)) != len(names):
            raise VerifyException("cuda.host_func: `dims` names each size once")
        least = 0 if self.updates else 1  # it writes something
        if not least <= self.outputs.data <= pointers:
            raise VerifyException(
                "cuda.host_func: outputs must count trailing pointer params"
            )
        updated = self.updated_inputs()
        inputs = pointers - self.outputs.data
        if any(not 0 <= i < inputs for i in updated) or len(set(updated)) != len(
            updated
        ):
            raise VerifyException(
                f"cuda.host_func: updates names inputs it writes in place, each once "
                f"(positions below {inputs}); got {list(updated)}"
            )
        if self.param_names is not None and len(self.param_names.data) != len(args):
            raise VerifyException("cuda.host_func: param_names must name every param")
        if self.shapes is not None:
            if len(self.shapes.data) != pointers:
                raise VerifyException(
                    "cuda.host_func: shapes must give every pointer param's"
                )
            for s in self.shapes.data:
                if any(d < -len(names) for d in s.get_values()):
                    raise VerifyException(
                        "cuda.host_func: a shape names a dimension not in `dims`"
                    )

    def print(self, printer: Printer) -> None:
        _print_signature(printer, self.sym_name, self.body)
        printer.print_string(f" outputs {self.outputs.data}")
        if self.updates is not None:
            printer.print_string(f" updates {list(self.updated_inputs())}")
        if self.dims is not None:
            printer.print_string(" dims ")
            printer.print_attribute(self.dims)
        shapes = self.param_shapes()
        if shapes is not None:
            listed = ", ".join("[" + ", ".join(map(str, s)) + "]" for s in shapes)
            printer.print_string(f" shapes [{listed}]")
        extra = (
            {"param_names": self.param_names} if self.param_names is not None else {}
        )
        printer.print_op_attributes({**self.attributes, **extra}, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> HostFuncOp:
        sym_name, args = _parse_signature(parser)
        parser.parse_keyword("outputs")
        outputs = parser.parse_integer(allow_negative=False)
        updates: list[int] = []
        if parser.parse_optional_keyword("updates") is not None:
            updates = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE,
                lambda: parser.parse_integer(allow_negative=False),
            )
        dims: list[str] = []
        if parser.parse_optional_keyword("dims") is not None:
            dims = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_str_literal
            )

        def dim() -> int | str:
            name = parser.parse_optional_identifier()
            if name is None:
                return parser.parse_integer(allow_negative=False)
            if name not in dims:
                parser.raise_error(
                    f"dimension {name} is not one of `dims` ({', '.join(dims)})"
                )
            return name

        shapes = None
        if parser.parse_optional_keyword("shapes") is not None:
            shapes = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE,
                lambda: parser.parse_comma_separated_list(parser.Delimiter.SQUARE, dim),
            )
        attributes = parser.parse_optional_attr_dict_with_keyword()
        extra = dict(attributes.data) if attributes is not None else {}
        body = parser.parse_region(args)
        properties: dict[str, Attribute] = {
            "sym_name": sym_name,
            "function_type": FunctionType.from_lists([a.type for a in args], []),
            "outputs": IntAttr(outputs),
        }
        if dims:
            properties["dims"] = ArrayAttr([StringAttr(d) for d in dims])
        if updates:
            properties["updates"] = DenseArrayBase.from_list(i64, updates)
        if shapes is not None:
            properties["shapes"] = _shapes_attr(shapes, dims)
        if "param_names" in extra:
            properties["param_names"] = extra.pop("param_names")
        return cls.create(properties=properties, attributes=extra, regions=[body])


class LaunchedKernel(SymbolUserOpInterface):
    """A launch names a cuda.kernel of the module, with its parameters' types,
    within its launch bounds."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, LaunchOp)
        callees = [op.callee] if op.fallback is None else [op.callee, op.fallback]
        for callee in callees:
            kernel = SymbolTable.lookup_symbol(op, callee)
            if not isinstance(kernel, KernelOp):
                raise VerifyException(f"cuda.launch: {callee} is not a cuda.kernel")
            params = list(kernel.function_type.inputs.data)
            if [a.type for a in op.args] != params:
                raise VerifyException(
                    f"cuda.launch: the arguments do not match {callee}'s parameters "
                    f"({', '.join(map(str, params))})"
                )
            threads = math.prod(op.launch_shape(callee)[1])
            if threads > kernel.block.data:
                raise VerifyException(
                    f"cuda.launch: {threads} threads per block exceed {callee}'s "
                    f"launch bound of {kernel.block.data}"
                )


MAX_GRID = (2**31 - 1, 65535, 65535)
"""The most blocks along x, y and z a CUDA launch takes."""
MAX_BLOCK = (1024, 1024, 64)
"""The most threads along x, y and z of a block (1024 in all)."""


def _check_launch_bounds(name: str, dims: list[int]) -> None:
    """A grid or block CUDA launches (dim3's unsigned fields hold it)."""
    if len(dims) != 3:
        return  # (the launch's own checks say what a grid is)
    most = MAX_BLOCK if name.endswith("block") else MAX_GRID
    for axis, (size, limit) in enumerate(zip(dims, most, strict=True)):
        if size > limit:
            raise VerifyException(
                f"cuda.launch: {name} {dims} has {size} along {'xyz'[axis]}; CUDA "
                f"launches at most {limit}"
            )
    if name.endswith("block") and dims[0] * dims[1] * dims[2] > 1024:
        raise VerifyException(
            f"cuda.launch: {name} {dims} has {dims[0] * dims[1] * dims[2]} threads; "
            "a block has at most 1024"
        )


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Launches a kernel on the launcher's stream:
    `cuda.launch @k grid [g, 1, 1] block [b, 1, 1] (%x, %y) : ...`.

    A kernel with vector accesses needs the pointers it accesses so to be
    aligned to `VECTOR_BYTES`; the launch names them (`aligned`, positions in
    the arguments) and a kernel of the same parameters to launch instead
    when one is not (`else`, its scalar variant):
    `cuda.launch @k grid [...] block [...] (%x, %y) aligned [0, 1] else @k_scalar`.
    A fallback launched differently gives its own grid and block after it:
    `... aligned [0, 1] else @k_simt grid [2, 2, 1] block [256, 1, 1]`.

    A kernel whose blocks wait for each other (`cuda.group_barrier`) is
    launched `cooperative [s]`: its blocks come in groups of `s`, all
    resident at once. `grid` is then the most it uses; the launcher runs as
    many whole groups as the device holds at once, up to that, and fails
    when it holds not even one.

    A kernel whose work grows with sizes known at run time (`index`
    arguments) is launched on a grid computed from them:
    `grid_of [2] scale [896, 256]` launches ceil(arg 2 x 896 / 256) blocks
    along x (the product of the arguments listed, where several), at most
    `grid`'s x; `scale [1, 64, 16, 1]` gives [scale, divisor, times, axis]:
    ceil(arg x 1 / 64) x 16 blocks along y (axis 1), at most `grid`'s y. An
    `else` kernel's own grid is computed from the same sizes where it gives
    its own scale (`else_scale`).

    One of several variants of a kernel, each for a range of a size, runs
    only there: `when [2, 9, 32]` launches it where arg 2 is 9 to 32 (a
    most of 0: any size from the least on).
    """

    name = "cuda.launch"
    callee = prop_def(SymbolRefAttr)
    grid = prop_def(DenseArrayBase.constr(i64))
    block = prop_def(DenseArrayBase.constr(i64))
    cooperative = opt_prop_def(DenseArrayBase.constr(i64))
    aligned = opt_prop_def(DenseArrayBase.constr(i64))
    fallback = opt_prop_def(SymbolRefAttr)
    fallback_grid = opt_prop_def(DenseArrayBase.constr(i64))
    fallback_block = opt_prop_def(DenseArrayBase.constr(i64))
    grid_of = opt_prop_def(DenseArrayBase.constr(i64))
    grid_scale = opt_prop_def(DenseArrayBase.constr(i64))
    fallback_scale = opt_prop_def(DenseArrayBase.constr(i64))
    when = opt_prop_def(DenseArrayBase.constr(i64))
    args = var_operand_def(PointerType | TensorMapType | IndexType)
    traits = traits_def(HasParent(HostFuncOp), LaunchedKernel())
    assembly_format = (
        "$callee `grid` $grid `block` $block `(` $args `)` "
        "(`when` $when^)? "
        "(`grid_of` $grid_of^ `scale` $grid_scale)? "
        "(`cooperative` $cooperative^)? "
        "(`aligned` $aligned^ `else` $fallback)? "
        "(`grid` $fallback_grid^ `block` $fallback_block)? "
        "(`else_scale` $fallback_scale^)? attr-dict `:` type($args)"
    )

    def launch_shape(
        self, callee: SymbolRefAttr
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The grid (the most, where computed) and block `callee` (this
        launch's kernel or its fallback) is launched with."""
        if callee == self.fallback and self.fallback_grid is not None:
            assert self.fallback_block is not None
            return self.fallback_grid.get_values(), self.fallback_block.get_values()
        return self.grid.get_values(), self.block.get_values()

    def __init__(
        self,
        callee: str,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[SSAValue],
    ):
        super().__init__(
            operands=[args],
            properties={
                "callee": SymbolRefAttr(callee),
                "grid": DenseArrayBase.from_list(i64, list(grid)),
                "block": DenseArrayBase.from_list(i64, list(block)),
            },
        )

    def grid_sizes(self) -> tuple[SSAValue, ...]:
        """The size arguments the grid grows with (`grid_of`)."""
        if self.grid_of is None:
            return ()
        return tuple(self.args[i] for i in self.grid_of.get_values())

    def verify_(self) -> None:
        for name, dims in (("grid", self.grid), ("block", self.block)):
            values = dims.get_values()
            if len(values) != 3 or any(v < 1 for v in values):
                raise VerifyException(f"cuda.launch: {name} must be three sizes >= 1")
        for name, dims in (
            ("grid", self.grid),
            ("block", self.block),
            ("else grid", self.fallback_grid),
            ("else block", self.fallback_block),
        ):
            if dims is not None:
                _check_launch_bounds(name, list(dims.get_values()))
        if (self.grid_of is None) != (self.grid_scale is None):
            raise VerifyException("cuda.launch: `grid_of` comes with its `scale`")
        if self.grid_of is not None:
            assert self.grid_scale is not None
            positions = self.grid_of.get_values()
            if not positions or not all(
                0 <= p < len(self.args) and isinstance(self.args[p].type, IndexType)
                for p in positions
            ):
                raise VerifyException(
                    "cuda.launch: `grid_of` lists the positions of index arguments"
                )
            for scale in (self.grid_scale, self.fallback_scale):
                if scale is not None and not _is_grid_scale(scale.get_values()):
                    raise VerifyException(
                        "cuda.launch: a grid's `scale` is [scale, divisor] or "
                        "[scale, divisor, times, axis], each >= 1 but the axis "
                        "(0 or 1)"
                    )
            if self.cooperative is not None:
                raise VerifyException(
                    "cuda.launch: a grid computed from sizes is not cooperative"
                )
        if self.fallback_scale is not None and (
            self.grid_of is None or self.fallback_grid is None
        ):
            raise VerifyException(
                "cuda.launch: `else_scale` follows the `else` kernel's own grid, "
                "of a launch whose grid is computed (`grid_of`)"
            )
        if self.when is not None:
            when = self.when.get_values()
            if (
                len(when) != 3
                or not 0 <= when[0] < len(self.args)
                or not isinstance(self.args[when[0]].type, IndexType)
                or when[1] < 1
                or (when[2] and when[2] < when[1])
            ):
                raise VerifyException(
                    "cuda.launch: `when` is [position of an index argument, least, "
                    "most] with 1 <= least <= most (most 0: no bound)"
                )
        if self.cooperative is not None:
            sizes = self.cooperative.get_values()
            if len(sizes) != 1 or sizes[0] < 1:
                raise VerifyException(
                    "cuda.launch: `cooperative` gives one group size >= 1"
                )
            (group,) = sizes
            grid = self.grid.get_values()
            if grid[0] % group or grid[1:] != (1, 1):
                raise VerifyException(
                    f"cuda.launch: a cooperative grid is whole groups of {group} "
                    "blocks along x"
                )
        if (self.aligned is None) != (self.fallback is None):
            raise VerifyException(
                "cuda.launch: `aligned` and its `else` kernel come together"
            )
        if (self.fallback_grid is None) != (self.fallback_block is None) or (
            self.fallback_grid is not None and self.fallback is None
        ):
            raise VerifyException(
                "cuda.launch: the `else` kernel's own grid and block come together, "
                "after it"
            )
        for name, dims in (
            ("grid", self.fallback_grid),
            ("block", self.fallback_block),
        ):
            if dims is not None and (
                len(dims.get_values()) != 3 or any(v < 1 for v in dims.get_values())
            ):
                raise VerifyException(
                    f"cuda.launch: the `else` kernel's {name} must be three sizes >= 1"
                )
        if self.aligned is not None:
            positions = self.aligned.get_values()
            if sorted(set(positions)) != list(positions) or not all(
                0 <= p < len(self.args) for p in positions
            ):
                raise VerifyException(
                    "cuda.launch: `aligned` lists argument positions, ascending, "
                    "each once"
                )


def _is_grid_scale(values: Sequence[int]) -> bool:
    """[scale, divisor] or [scale, divisor, times, axis]."""
    if len(values) not in (2, 4) or min(values[:3]) < 1:
        return False
    return len(values) == 2 or values[3] in (0, 1)


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A device buffer of `size` elements between kernels, on the stream:
    `%t = cuda.alloc 4096 : !cuda.ptr<f32>`; times sizes known at run time
    where it holds a tensor of named dimensions:
    `%t = cuda.alloc 3584 x %T : !cuda.ptr<f32>`."""

    name = "cuda.alloc"
    size = prop_def(IntegerAttr[I64])
    factors = var_operand_def(IndexType)
    result = result_def(PointerType)
    traits = traits_def(HasParent(HostFuncOp))
    assembly_format = "$size (`x` $factors^)? attr-dict `:` type($result)"

    def __init__(
        self, element_type: Attribute, size: int, factors: Sequence[SSAValue] = ()
    ):
        super().__init__(
            operands=[list(factors)],
            properties={"size": IntegerAttr(size, i64)},
            result_types=[PointerType(element_type)],
        )

    def verify_(self) -> None:
        assert isinstance(self.result.type, PointerType)
        if self.result.type.memory_space != MemorySpace.GLOBAL:
            raise VerifyException("cuda.alloc: the result must be a global pointer")
        if self.size.value.data < 1:
            raise VerifyException("cuda.alloc: size must be >= 1")


@irdl_op_definition
class MakeTensorMapOp(IRDLOperation):
    """The TMA tensor map of a row-major [rows, cols] matrix at a global
    pointer, read in boxes of [box_rows, box_cols] elements, 128-byte
    swizzled (box_cols x the element size is 128 bytes): the launcher
    encodes it on the host (cuTensorMapEncodeTiled) and passes it by value.

    ```mlir
    %m = cuda.make_tensor_map %w [4096, 4096] box [256, 64]
        : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
    ```

    A pointer not aligned to 16 bytes gives a map of zeros: the launch then
    takes its variant for misaligned pointers, which ignores the map.

    Rows known at run time only are the first size times a size argument:
    `cuda.make_tensor_map %x [1, 4096] x %T box [128, 64]`."""

    name = "cuda.make_tensor_map"
    source = operand_def(PointerType)
    rows = opt_operand_def(IndexType)
    shape = prop_def(DenseArrayBase.constr(i64))
    box = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorMapType)
    traits = traits_def(HasParent(HostFuncOp))
    assembly_format = (
        "$source $shape (`x` $rows^)? `box` $box attr-dict `:` type($source) "
        "`->` type($result)"
    )

    def __init__(
        self,
        source: SSAValue,
        shape: Sequence[int],
        box: Sequence[int],
        rows: SSAValue | None = None,
    ):
        assert isinstance(source.type, PointerType)
        super().__init__(
            operands=[source, [rows] if rows is not None else []],
            properties={
                "shape": DenseArrayBase.from_list(i64, list(shape)),
                "box": DenseArrayBase.from_list(i64, list(box)),
            },
            result_types=[TensorMapType(source.type.element_type)],
        )

    def verify_(self) -> None:
        source, result = self.source.type, self.result.type
        assert isinstance(source, PointerType) and isinstance(result, TensorMapType)
        if source.memory_space != MemorySpace.GLOBAL or (
            source.element_type != result.element_type
        ):
            raise VerifyException(
                f"{self.name}: maps a global matrix of the map's element type, "
                f"not a {source} as a {result}"
            )
        shape, box = self.shape.get_values(), self.box.get_values()
        size = element_bytes(result.element_type)
        if len(shape) != 2 or len(box) != 2 or min(*shape, *box) < 1:
            raise VerifyException(f"{self.name}: shape and box are two sizes >= 1 each")
        if box[1] * size != SWIZZLE_BYTES or box[0] > 256:
            raise VerifyException(
                f"{self.name}: a box is up to 256 rows of {SWIZZLE_BYTES} bytes "
                f"(128-byte swizzle), not {box[0]}x{box[1]}"
            )
        if shape[1] * size % 16:
            raise VerifyException(
                f"{self.name}: a row of {shape[1]} elements is not a whole number "
                "of 16 bytes, as TMA needs"
            )


@irdl_op_definition
class FreeOp(IRDLOperation):
    """Releases a `cuda.alloc` buffer on the stream: `cuda.free %t : !cuda.ptr<f32>`."""

    name = "cuda.free"
    ptr = operand_def(PointerType)
    traits = traits_def(HasParent(HostFuncOp))
    assembly_format = "$ptr attr-dict `:` type($ptr)"

    def __init__(self, ptr: SSAValue):
        super().__init__(operands=[ptr])


@irdl_op_definition
class ZeroOp(IRDLOperation):
    """Sets the `size` elements of a device buffer to zero on the stream:
    `cuda.zero %counters, 64 : !cuda.ptr<i32>`. `restored`: the kernels
    leave it zero again (counters their last arrival resets), so a runtime
    may keep the buffer, zeroed once, across launches on one stream:
    `cuda.zero %counters, 64 restored : !cuda.ptr<i32>`."""

    name = "cuda.zero"
    target = operand_def(PointerType)
    size = prop_def(IntegerAttr[I64])
    restored = opt_prop_def(UnitAttr)
    traits = traits_def(HasParent(HostFuncOp))
    assembly_format = (
        "$target `,` $size (`restored` $restored^)? attr-dict `:` type($target)"
    )

    def __init__(self, target: SSAValue, size: int, restored: bool = False):
        properties: dict[str, Attribute] = {"size": IntegerAttr(size, i64)}
        if restored:
            properties["restored"] = UnitAttr()
        super().__init__(operands=[target], properties=properties)

    def verify_(self) -> None:
        if self.size.value.data < 1:
            raise VerifyException("cuda.zero: size must be >= 1")


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Copies `size` elements between device buffers on the stream (a graph
    output that is an input, or a value returned twice):
    `cuda.copy %dst, %src, 4096 : !cuda.ptr<f32>`; times sizes known at run
    time: `cuda.copy %dst, %src, 3584 x %T : !cuda.ptr<f32>`."""

    name = "cuda.copy"
    T: ClassVar = VarConstraint("T", base(PointerType))
    target = operand_def(T)
    source = operand_def(T)
    factors = var_operand_def(IndexType)
    size = prop_def(IntegerAttr[I64])
    traits = traits_def(HasParent(HostFuncOp))
    assembly_format = (
        "$target `,` $source `,` $size (`x` $factors^)? attr-dict `:` type($target)"
    )

    def __init__(
        self,
        target: SSAValue,
        source: SSAValue,
        size: int,
        factors: Sequence[SSAValue] = (),
    ):
        super().__init__(
            operands=[target, source, list(factors)],
            properties={"size": IntegerAttr(size, i64)},
        )

    def verify_(self) -> None:
        if self.size.value.data < 1:
            raise VerifyException("cuda.copy: size must be >= 1")


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """The end of a kernel or launcher: `cuda.return`."""

    name = "cuda.return"
    traits = traits_def(IsTerminator(), HasParent(KernelOp, HostFuncOp))
    assembly_format = "attr-dict"


Cuda = Dialect(
    "cuda",
    [
        KernelOp,
        HostFuncOp,
        ThreadIdxOp,
        FmodOp,
        CheckIndexOp,
        AtomicAddOp,
        BlockIdxOp,
        BlockDimOp,
        GridDimOp,
        LoadOp,
        StoreOp,
        SharedAllocOp,
        SyncThreadsOp,
        NamedBarrierOp,
        ShflXorOp,
        GroupBarrierOp,
        LastArrivalOp,
        CpAsyncOp,
        CpAsyncCommitOp,
        CpAsyncWaitOp,
        LdMatrixOp,
        MmaOp,
        PackOp,
        SplitTf32Op,
        WgmmaDescriptorOp,
        WgmmaOp,
        WgmmaRegisterAOp,
        WgmmaFenceOp,
        WgmmaCommitOp,
        WgmmaWaitOp,
        FenceProxyAsyncOp,
        MbarrierInitOp,
        FenceMbarrierInitOp,
        MbarrierArriveOp,
        MbarrierWaitOp,
        TmaLoadOp,
        ClusterSyncOp,
        SetMaxRegistersOp,
        LaunchOp,
        AllocOp,
        FreeOp,
        ZeroOp,
        CopyOp,
        MakeTensorMapOp,
        ReturnOp,
    ],
    [PointerType, TensorMapType, DimAttr],
)
