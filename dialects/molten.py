"""The `molten` dialect: tensor math on builtin ranked tensors.

Level 1 of Molten. Values are static-shape `tensor<...>`s of f32, f16 or
bf16, the integers i64, i32, i8 (signed, as MLIR's signless integers are
read here) and ui8, or i1 (bool); ops have value semantics and no memory.
Each op says which kinds of element it takes (`TAKES`): math on floats,
arithmetic on floats and integers, logic on bools, data movement on all.
Elementwise binary ops broadcast like numpy. Composite ops (rms_norm,
layer_norm, softmax, rope, attention) are the "math spec" level;
`molten-decompose` rewrites them into the primitives.

```mlir
func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>)
    -> tensor<2048x5120xf32> {
  %norm = molten.rms_norm %x, %w eps = 1.000000e-06
      : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
  func.return %norm : tensor<2048x5120xf32>
}
```

Every op derives its result type from its operands and properties through one
classmethod, `infer_result_type`; the verifier and the builders both call it,
so an op built from Python and an op parsed from text obey the same rules and
raise the same `ShapeError` / `DTypeError` messages.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from functools import cache
from typing import ClassVar, Self

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyAttr,
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from molten.errors import DTypeError, ShapeError, StaticShapeNeeded

FLOAT_TYPES: tuple[Attribute, ...] = (Float32Type(), Float16Type(), BFloat16Type())
UI8 = IntegerType(8, Signedness.UNSIGNED)
INTEGER_TYPES: tuple[Attribute, ...] = (i64, i32, i8, UI8)
"""Signless i64, i32 and i8 are signed integers (torch's int64, int32 and
int8); ui8 is torch's uint8."""
BOOL = IntegerType(1)
ELEMENT_TYPES: tuple[Attribute, ...] = (*FLOAT_TYPES, *INTEGER_TYPES, BOOL)
"""The element types molten tensors may have."""

FLOAT, INTEGER, BOOLEAN = "float", "integer", "bool"
FLOATS = frozenset({FLOAT})
NUMBERS = frozenset({FLOAT, INTEGER})
INTEGRAL = frozenset({INTEGER, BOOLEAN})
INTEGERS = frozenset({INTEGER})
BOOLS = frozenset({BOOLEAN})
ANY_ELEMENT = frozenset({FLOAT, INTEGER, BOOLEAN})
_KIND_NAMES = {
    FLOATS: "float tensors (f32, f16 or bf16)",
    NUMBERS: "float or integer tensors",
    INTEGRAL: "integer or bool tensors",
    INTEGERS: "integer tensors (i64, i32, i8 or ui8)",
    BOOLS: "bool (i1) tensors",
    ANY_ELEMENT: "tensors",
}


def element_kind(t: Attribute) -> str:
    """Whether element type `t` is a float, an integer or a bool."""
    if t == BOOL:
        return BOOLEAN
    return INTEGER if isinstance(t, IntegerType) else FLOAT


def is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def integer_range(t: Attribute) -> tuple[int, int]:
    """The least and greatest value of an integer or bool element type."""
    width = t.bitwidth  # type: ignore[attr-defined]
    if width == 1 or is_unsigned(t):
        return 0, 2**width - 1
    return -(2 ** (width - 1)), 2 ** (width - 1) - 1


def element_bytes(t: Attribute) -> int:
    """Bytes an element of `t` takes in memory (a bool takes one)."""
    return max(1, t.bitwidth // 8)  # type: ignore[attr-defined]


GELU_APPROXIMATIONS = ("none", "tanh")
"""`molten.gelu` forms, named as in `torch.nn.functional.gelu`."""


class MoltenCanonicalization(HasCanonicalizationPatternsTrait):
    """Attaches Molten's canonicalization patterns to an op for `canonicalize`.

    The patterns (`molten.passes.canonicalization_patterns.molten`) fold
    constants with the interpreter, which is built on this dialect, so the
    dialect does not import them, not even lazily as xDSL's dialects do:
    `molten.passes` registers them here when it is imported, which the
    `molten` package (the parent of every Molten module) does."""

    patterns: ClassVar[tuple[RewritePattern, ...]] = ()

    @classmethod
    def register(cls, patterns: Sequence[RewritePattern]) -> None:
        """Makes `patterns` the canonicalization patterns of every op with
        this trait, tried in order."""
        cls.patterns = tuple(patterns)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return cls.patterns


# --------------------------------------------------------------------------
# Shape helpers shared by the ops' type inference.
# --------------------------------------------------------------------------


Dim = int | str
"""A dimension: its size, or the name of a size known only at run time (a
`?` in the type, its name in the type's encoding: `tensor<?x3584xbf16,
["T"]>`). Two dimensions of one name are one size."""


def dim_names(t: TensorType) -> tuple[str, ...]:
    """The names of `t`'s dynamic dimensions, in order (its encoding)."""
    encoding = t.encoding
    if not isinstance(encoding, ArrayAttr):
        return ()
    return tuple(a.data if isinstance(a, StringAttr) else "" for a in encoding.data)


def dims_of(t: TensorType) -> tuple[Dim, ...]:
    """`t`'s dimensions: sizes, and names where they are dynamic."""
    names = iter(dim_names(t))
    return tuple(next(names, "?") if d < 0 else d for d in t.get_shape())


def is_dynamic(t: Attribute) -> bool:
    """Whether `t` is a tensor type with a dynamic dimension."""
    return isinstance(t, TensorType) and any(d < 0 for d in t.get_shape())


def tensor_type(dims: Sequence[Dim], element_type: Attribute) -> TensorType:
    """The tensor type of `dims` (sizes or names) and `element_type`."""
    names = [d for d in dims if isinstance(d, str)]
    shape = [DYNAMIC_INDEX if isinstance(d, str) else d for d in dims]
    encoding = ArrayAttr([StringAttr(n) for n in names]) if names else NoneAttr()
    return TensorType(element_type, shape, encoding)


def broadcast_shapes(
    op_name: str, named_shapes: Sequence[tuple[str, TensorType]]
) -> tuple[Dim, ...]:
    """The numpy broadcast of the given operand shapes, or a ShapeError naming
    them. A named dimension matches the same name or 1: a size known only
    at run time is never taken to equal a fixed size other than 1."""
    rank = max(len(t.get_shape()) for _, t in named_shapes)
    result: list[Dim] = []
    for axis in range(-rank, 0):
        size: Dim = 1
        for _, tensor in named_shapes:
            dims = dims_of(tensor)
            dim = dims[axis] if -axis <= len(dims) else 1
            if dim == 1 or dim == size:
                continue
            if size != 1:
                listing = " and ".join(f"{name} {t}" for name, t in named_shapes)
                raise ShapeError(
                    f"{op_name}: {listing} cannot be broadcast together "
                    f"(dimension {axis}: {size} vs {dim})"
                )
            size = dim
        result.append(size)
    return tuple(result)


def value_dims(value: SSAValue) -> tuple[Dim, ...]:
    """The dimensions of a tensor value: sizes, and names where dynamic (what
    the fusion passes compare; `shape_of` where sizes are needed)."""
    assert isinstance(value.type, TensorType)
    return dims_of(value.type)


def shape_of(value: SSAValue) -> tuple[int, ...]:
    """The static shape of a tensor value (a ShapeError for a dynamic one:
    the passes below the molten level take static shapes)."""
    assert isinstance(value.type, TensorType)
    if is_dynamic(value.type):
        raise StaticShapeNeeded(
            f"{value.type} has a dynamic dimension, which this pass takes only in "
            "row and pointwise kernels above the cuda level so far: give the sizes "
            "first (DataflowGraph.specialize(T=...), "
            "or molten-opt -p 'specialize-dims{sizes=\"T=...\"}')"
        )
    return tuple(value.type.get_shape())


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Whether numpy broadcasting takes `shape` to exactly `target`."""
    return len(shape) <= len(target) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(target), strict=False)
    )


def normalize_axis(op_name: str, axis: int, rank: int, what: str = "axis") -> int:
    """`axis` in [0, rank), accepting numpy's negative axes, or a ShapeError."""
    if not -rank <= axis < rank:
        raise ShapeError(
            f"{op_name}: {what} {axis} is out of range for a rank-{rank} tensor"
        )
    return axis % rank


def _static_note(dims: Sequence[Dim]) -> str:
    """Where the last of `dims` is named: that it must be a fixed size."""
    if dims and isinstance(dims[-1], str):
        return f", a fixed size, not {dims[-1]}"
    return ""


def element_count(dims: Sequence[Dim]) -> float:
    """How many elements `dims` hold: infinite where one is named (a size
    known at run time only, so taken as large)."""
    return math.prod(math.inf if isinstance(d, str) else d for d in dims)


def split_dims(dims: Sequence[Dim]) -> tuple[int, tuple[str, ...]]:
    """The product of `dims`' fixed sizes, and their names in order (a name
    as often as it appears): the element count is their product."""
    static = math.prod(d for d in dims if isinstance(d, int))
    return static, tuple(d for d in dims if isinstance(d, str))


def _elements(dims: Sequence[Dim]) -> str | int:
    """The element count of `dims`: a number, or (where some are named) the
    names times the static count, in a canonical text (T*S*128)."""
    static, names = split_dims(dims)
    return "*".join([*sorted(names), str(static)]) if names else static


def _int_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


# --------------------------------------------------------------------------
# Base classes.
# --------------------------------------------------------------------------


class MoltenOp(IRDLOperation, ABC):
    """An op of the molten dialect: tensors in, one tensor out."""

    SAME_ELEMENT_TYPE: ClassVar[bool] = True
    """Whether every operand and the result share one element type."""

    TAKES: ClassVar[frozenset[str]] = FLOATS
    """The kinds of element (float, integer, bool) its operands may hold."""

    @classmethod
    @abstractmethod
    def infer_result_type(
        cls,
        operand_types: Sequence[TensorType],
        properties: Mapping[str, Attribute],
        result_type: TensorType | None,
    ) -> TensorType:
        """The result type the operands and properties give.

        `result_type` is the declared (or requested) type. Ops whose result
        cannot be derived from the operands alone (cast, reshape, broadcast_to,
        causal_mask) check it and return it; the others ignore it. Raises
        ShapeError or DTypeError naming the op, operands and rule broken.
        """

    @classmethod
    @cache
    def operand_names(cls) -> tuple[str, ...]:
        return tuple(name for name, _ in cls.get_irdl_definition().operands)

    @classmethod
    def check_operand_types(cls, types: Sequence[Attribute]) -> list[TensorType]:
        """Every operand is a static tensor of an element the op takes, with
        the op's element-type rule."""
        tensors = [
            check_tensor_type(cls.name, f"operand '{name}'", t)
            for name, t in zip(cls.operand_names(), types, strict=True)
        ]
        for name, t in zip(cls.operand_names(), tensors, strict=True):
            cls.check_operand_kind(f"operand '{name}'", t)
        if cls.SAME_ELEMENT_TYPE and len({t.element_type for t in tensors}) > 1:
            listing = ", ".join(
                f"{name} {t}"
                for name, t in zip(cls.operand_names(), tensors, strict=True)
            )
            raise DTypeError(
                f"{cls.name}: operands must share one element type, got {listing}; "
                "insert a molten.cast"
            )
        return tensors

    @classmethod
    def check_operand_kind(cls, what: str, t: TensorType) -> None:
        """A DTypeError unless `what`'s element is of a kind the op takes."""
        if element_kind(t.element_type) not in cls.TAKES:
            raise DTypeError(
                f"{cls.name}: {what} {t} has element type "
                f"{t.element_type}; {cls.name} takes {_KIND_NAMES[cls.TAKES]}"
            )

    @classmethod
    def with_inferred_type(
        cls,
        operands: Sequence[SSAValue],
        properties: Mapping[str, Attribute] | None = None,
        result_type: TensorType | None = None,
    ) -> Self:
        """The op with its inferred result type, or the verifier's error raised."""
        props = dict(properties or {})
        types = cls.check_operand_types([o.type for o in operands])
        if result_type is not None:
            check_tensor_type(cls.name, "result", result_type)
        inferred = cls.infer_result_type(types, props, result_type)
        return cls(operands=list(operands), result_types=[inferred], properties=props)

    def verify_(self) -> None:
        types = self.check_operand_types([o.type for o in self.operands])
        declared = check_tensor_type(self.name, "result", self.results[0].type)
        inferred = self.infer_result_type(types, self.properties, declared)
        if inferred != declared:
            raise ShapeError(
                f"{self.name}: result type {declared} does not match {inferred}, "
                "the type the operands give"
            )


MAX_TENSOR_BYTES = 2**38
"""256 GiB: more than any one GPU holds (an H200 has 141 GB), and far below
where Molten's 64-bit element offsets could overflow. A larger tensor is a
mistake in a spec, not a workload."""


def check_tensor_size(op_name: str, what: str, t: TensorType) -> None:
    """A ShapeError if `t` is larger than one GPU (counting
    its static dimensions only)."""
    elements = math.prod(d for d in t.get_shape() if d > 0)
    width = element_bytes(t.element_type)
    if elements * width > MAX_TENSOR_BYTES:
        raise ShapeError(
            f"{op_name}: {what} {t} holds {elements} elements "
            f"({elements * width / 2**30:.4g} GiB), more than one GPU holds "
            f"(Molten's bound is {MAX_TENSOR_BYTES // 2**30} GiB a tensor)"
        )


def is_dim_name(name: object) -> bool:
    """Whether `name` can name a dimension: an identifier (T, seq_len)."""
    return isinstance(name, str) and name.isidentifier()


def check_tensor_type(op_name: str, what: str, t: Attribute) -> TensorType:
    """`t` as a static-shape tensor of a molten element type that fits a
    GPU, or a DTypeError/ShapeError."""
    if not isinstance(t, TensorType):
        raise DTypeError(f"{op_name}: {what} has type {t}, not a ranked tensor")
    if t.element_type not in ELEMENT_TYPES:
        raise DTypeError(
            f"{op_name}: {what} {t} has element type {t.element_type}; "
            "molten tensors hold f32, f16, bf16, i64, i32, i8, ui8 or i1"
        )
    dynamic = sum(d < 0 for d in t.get_shape())
    names = dim_names(t)
    named = (
        isinstance(t.encoding, ArrayAttr)
        and len(names) == dynamic
        and all(map(is_dim_name, names))
    )
    if not (named if dynamic else isinstance(t.encoding, NoneAttr)):
        unnamed = (
            "a dynamic dimension without a name"
            if dynamic > len(names)
            else ("an encoding that is not the names of its dynamic dimensions")
        )
        raise ShapeError(
            f"{op_name}: {what} {t} has {unnamed}: each ? is named, in order, by "
            'an identifier in the encoding (tensor<?x8xf32, ["T"]>)'
        )
    if any(d == 0 for d in t.get_shape()):
        raise ShapeError(f"{op_name}: {what} {t} has a zero-size dimension")
    check_tensor_size(op_name, what, t)
    return t


class ElementwiseBinaryOp(MoltenOp, ABC):
    """lhs op rhs, elementwise, with numpy broadcasting.

    ```mlir
    %r = molten.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
    """

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure(), MoltenCanonicalization())
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        lhs, rhs = operand_types
        shape = broadcast_shapes(cls.name, [("lhs", lhs), ("rhs", rhs)])
        return tensor_type(shape, lhs.element_type)


class UnaryOp(MoltenOp, ABC):
    """f(input), with the result of the input's type.

    ```mlir
    %r = molten.exp %x : tensor<4x8xf32>
    ```
    """

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        return operand_types[0]


class ElementwiseUnaryOp(UnaryOp, ABC):
    """A unary op applied to each element on its own."""

    traits = traits_def(Pure(), MoltenCanonicalization())


# --------------------------------------------------------------------------
# Elementwise binary ops.
# --------------------------------------------------------------------------


@irdl_op_definition
class AddOp(ElementwiseBinaryOp):
    """lhs + rhs."""

    name = "molten.add"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class SubOp(ElementwiseBinaryOp):
    """lhs - rhs."""

    name = "molten.sub"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class MulOp(ElementwiseBinaryOp):
    """lhs * rhs."""

    name = "molten.mul"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class DivOp(ElementwiseBinaryOp):
    """lhs / rhs (true division)."""

    name = "molten.div"


@irdl_op_definition
class MaxOp(ElementwiseBinaryOp):
    """max(lhs, rhs), propagating NaN like torch.maximum."""

    name = "molten.max"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class MinOp(ElementwiseBinaryOp):
    """min(lhs, rhs), propagating NaN like torch.minimum."""

    name = "molten.min"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class PowOp(ElementwiseBinaryOp):
    """lhs ** rhs."""

    name = "molten.pow"


@irdl_op_definition
class FloorDivideOp(ElementwiseBinaryOp):
    """floor(lhs / rhs), as torch.floor_divide (Python's //): integers round
    toward negative infinity."""

    name = "molten.floor_divide"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class RemainderOp(ElementwiseBinaryOp):
    """lhs - floor(lhs / rhs) * rhs, with the sign of rhs (torch.remainder,
    Python's %)."""

    name = "molten.remainder"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class FmodOp(ElementwiseBinaryOp):
    """lhs - trunc(lhs / rhs) * rhs, with the sign of lhs (torch.fmod, C's
    fmod and integer %)."""

    name = "molten.fmod"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class Atan2Op(ElementwiseBinaryOp):
    """atan2(lhs, rhs): the angle of the point (rhs, lhs)."""

    name = "molten.atan2"


@irdl_op_definition
class BitwiseAndOp(ElementwiseBinaryOp):
    """lhs & rhs, bit by bit (logical and on bools)."""

    name = "molten.bitwise_and"
    TAKES: ClassVar[frozenset[str]] = INTEGRAL


@irdl_op_definition
class BitwiseOrOp(ElementwiseBinaryOp):
    """lhs | rhs, bit by bit."""

    name = "molten.bitwise_or"
    TAKES: ClassVar[frozenset[str]] = INTEGRAL


@irdl_op_definition
class BitwiseXorOp(ElementwiseBinaryOp):
    """lhs ^ rhs, bit by bit."""

    name = "molten.bitwise_xor"
    TAKES: ClassVar[frozenset[str]] = INTEGRAL


@irdl_op_definition
class ShiftLeftOp(ElementwiseBinaryOp):
    """lhs << rhs (torch.bitwise_left_shift); a shift by the width or more,
    or by a negative amount, is 0."""

    name = "molten.shift_left"
    TAKES: ClassVar[frozenset[str]] = INTEGERS


@irdl_op_definition
class ShiftRightOp(ElementwiseBinaryOp):
    """lhs >> rhs (torch.bitwise_right_shift): arithmetic for signed
    integers, logical for ui8; a shift by the width or more fills with the
    sign bit (0 for ui8)."""

    name = "molten.shift_right"
    TAKES: ClassVar[frozenset[str]] = INTEGERS


@irdl_op_definition
class LogicalAndOp(ElementwiseBinaryOp):
    """lhs and rhs, on bools (torch.logical_and of other types compares
    them with 0 first)."""

    name = "molten.logical_and"
    TAKES: ClassVar[frozenset[str]] = BOOLS


@irdl_op_definition
class LogicalOrOp(ElementwiseBinaryOp):
    """lhs or rhs, on bools."""

    name = "molten.logical_or"
    TAKES: ClassVar[frozenset[str]] = BOOLS


@irdl_op_definition
class LogicalXorOp(ElementwiseBinaryOp):
    """lhs != rhs, on bools."""

    name = "molten.logical_xor"
    TAKES: ClassVar[frozenset[str]] = BOOLS


class CompareOp(ElementwiseBinaryOp, ABC):
    """lhs compared with rhs, elementwise with broadcasting: a bool tensor.
    A comparison with NaN is false, except `ne`'s, which is true.

    ```mlir
    %m = molten.lt %a, %b : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi1>
    ```
    """

    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        lhs, rhs = operand_types
        shape = broadcast_shapes(cls.name, [("lhs", lhs), ("rhs", rhs)])
        return tensor_type(shape, BOOL)


@irdl_op_definition
class EqOp(CompareOp):
    """lhs == rhs."""

    name = "molten.eq"


@irdl_op_definition
class NeOp(CompareOp):
    """lhs != rhs."""

    name = "molten.ne"


@irdl_op_definition
class LtOp(CompareOp):
    """lhs < rhs."""

    name = "molten.lt"


@irdl_op_definition
class LeOp(CompareOp):
    """lhs <= rhs."""

    name = "molten.le"


@irdl_op_definition
class GtOp(CompareOp):
    """lhs > rhs."""

    name = "molten.gt"


@irdl_op_definition
class GeOp(CompareOp):
    """lhs >= rhs."""

    name = "molten.ge"


# --------------------------------------------------------------------------
# Elementwise unary ops.
# --------------------------------------------------------------------------


@irdl_op_definition
class NegOp(ElementwiseUnaryOp):
    """-input."""

    name = "molten.neg"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """|input|."""

    name = "molten.abs"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """e ** input."""

    name = "molten.exp"


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Natural logarithm."""

    name = "molten.log"


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """Square root."""

    name = "molten.sqrt"


@irdl_op_definition
class RsqrtOp(ElementwiseUnaryOp):
    """1 / sqrt(input)."""

    name = "molten.rsqrt"


@irdl_op_definition
class ReciprocalOp(ElementwiseUnaryOp):
    """1 / input."""

    name = "molten.reciprocal"


@irdl_op_definition
class SquareOp(ElementwiseUnaryOp):
    """input * input."""

    name = "molten.square"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """Hyperbolic tangent."""

    name = "molten.tanh"


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """1 / (1 + exp(-input))."""

    name = "molten.sigmoid"


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """max(input, 0)."""

    name = "molten.relu"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class SiluOp(ElementwiseUnaryOp):
    """input * sigmoid(input)."""

    name = "molten.silu"


@irdl_op_definition
class GeluOp(ElementwiseUnaryOp):
    """GELU, in torch's exact erf form or its tanh approximation.

    ```mlir
    %e = molten.gelu %x : tensor<8xf32>
    %t = molten.gelu %x approximate = "tanh" : tensor<8xf32>
    ```
    """

    name = "molten.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))
    assembly_format = (
        "$input (`approximate` `=` $approximate^)? attr-dict `:` type($input)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        form = properties.get("approximate", StringAttr("none"))
        if not isinstance(form, StringAttr) or form.data not in GELU_APPROXIMATIONS:
            raise ShapeError(
                f'{cls.name}: approximate must be "none" or "tanh", got {form}'
            )
        return operand_types[0]


def _math(op_name: str, doc: str) -> type[ElementwiseUnaryOp]:
    """An elementwise float function with CUDA's libdevice counterpart."""

    class MathOp(ElementwiseUnaryOp):
        name = op_name

    MathOp.__name__ = MathOp.__qualname__ = (
        "".join(w.capitalize() for w in op_name.removeprefix("molten.").split("_"))
        + "Op"
    )
    MathOp.__doc__ = doc
    return irdl_op_definition(MathOp)


SinOp = _math("molten.sin", "sin(input), in radians.")
CosOp = _math("molten.cos", "cos(input), in radians.")
TanOp = _math("molten.tan", "tan(input), in radians.")
AsinOp = _math("molten.asin", "arcsin(input).")
AcosOp = _math("molten.acos", "arccos(input).")
AtanOp = _math("molten.atan", "arctan(input).")
SinhOp = _math("molten.sinh", "Hyperbolic sine.")
CoshOp = _math("molten.cosh", "Hyperbolic cosine.")
ErfOp = _math("molten.erf", "The error function.")
Log1pOp = _math("molten.log1p", "log(1 + input), exact near 0.")
Expm1Op = _math("molten.expm1", "exp(input) - 1, exact near 0.")
Log2Op = _math("molten.log2", "Base-2 logarithm.")
Log10Op = _math("molten.log10", "Base-10 logarithm.")
Exp2Op = _math("molten.exp2", "2 ** input.")
FloorOp = _math("molten.floor", "The largest integer <= input.")
CeilOp = _math("molten.ceil", "The least integer >= input.")
RoundOp = _math("molten.round", "The nearest integer, halves to even (torch.round).")
TruncOp = _math("molten.trunc", "The integer toward zero.")


@irdl_op_definition
class SignOp(ElementwiseUnaryOp):
    """-1, 0 or 1 by the input's sign (NaN stays NaN)."""

    name = "molten.sign"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class BitwiseNotOp(ElementwiseUnaryOp):
    """~input, bit by bit (not, on bools)."""

    name = "molten.bitwise_not"
    TAKES: ClassVar[frozenset[str]] = INTEGRAL


@irdl_op_definition
class LogicalNotOp(ElementwiseUnaryOp):
    """not input, on bools."""

    name = "molten.logical_not"
    TAKES: ClassVar[frozenset[str]] = BOOLS


class PredicateOp(ElementwiseUnaryOp, ABC):
    """A test of each float element: a bool tensor of the input's shape.

    ```mlir
    %n = molten.isnan %x : tensor<4x8xf32> -> tensor<4x8xi1>
    ```
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        return tensor_type(dims_of(operand_types[0]), BOOL)


@irdl_op_definition
class IsNanOp(PredicateOp):
    """Whether an element is NaN."""

    name = "molten.isnan"


@irdl_op_definition
class IsInfOp(PredicateOp):
    """Whether an element is +inf or -inf."""

    name = "molten.isinf"


@irdl_op_definition
class WhereOp(MoltenOp):
    """`on_true` where `condition` holds, else `on_false`, elementwise with
    numpy broadcasting of all three (torch.where; masked_fill is a where).

    ```mlir
    %r = molten.where %m, %a, %b
        : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```
    """

    name = "molten.where"
    SAME_ELEMENT_TYPE: ClassVar[bool] = False
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    condition = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MoltenCanonicalization())
    assembly_format = (
        "$condition `,` $on_true `,` $on_false attr-dict `:` "
        "functional-type(operands, results)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        condition, on_true, on_false = operand_types
        if condition.element_type != BOOL:
            raise DTypeError(
                f"{cls.name}: operand 'condition' {condition} must be a bool "
                "(i1) tensor; compare with 0 first (molten.ne)"
            )
        if on_true.element_type != on_false.element_type:
            raise DTypeError(
                f"{cls.name}: on_true {on_true} and on_false {on_false} must "
                "share one element type; insert a molten.cast"
            )
        shape = broadcast_shapes(
            cls.name,
            [("condition", condition), ("on_true", on_true), ("on_false", on_false)],
        )
        return tensor_type(shape, on_true.element_type)


@irdl_op_definition
class IotaOp(MoltenOp):
    """Each element's index along `axis`, as its element type (torch.arange
    is iota * step + start).

    ```mlir
    %i = molten.iota axis = 1 : tensor<4x8xi64>
    ```
    """

    name = "molten.iota"
    TAKES: ClassVar[frozenset[str]] = NUMBERS
    axis = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "`axis` `=` $axis attr-dict `:` type($result)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        if result_type is None:
            raise ShapeError(f"{cls.name}: needs a result type")
        cls.check_operand_kind("result", result_type)
        axis = properties["axis"]
        assert isinstance(axis, IntegerAttr)
        rank = len(result_type.get_shape())
        if not 0 <= axis.value.data < rank:
            raise ShapeError(
                f"{cls.name}: axis {axis.value.data} is out of range for result "
                f"{result_type} (axes are in [0, {rank}))"
            )
        return result_type


INDEX_TYPES: tuple[Attribute, ...] = (i64, i32)
"""The element types of an index tensor (torch takes int64 and int32)."""


def _checked_indexing(
    name: str, operand_types, properties
) -> tuple[TensorType, TensorType, int]:
    """(input, indices, axis) of an op indexing `input` along `axis` by an
    integer `indices` tensor: i64 or i32 indices, an axis of input of a
    static size."""
    x, indices = operand_types
    if indices.element_type not in INDEX_TYPES:
        raise DTypeError(
            f"{name}: operand 'indices' {indices} has element type "
            f"{indices.element_type}; indices are i64 or i32"
        )
    axis = properties["axis"]
    assert isinstance(axis, IntegerAttr)
    rank = len(dims_of(x))
    if not 0 <= axis.value.data < rank:
        raise ShapeError(
            f"{name}: axis {axis.value.data} is out of range for input "
            f"{x} (axes are in [0, {rank}))"
        )
    if isinstance(dims_of(x)[axis.value.data], str):
        raise ShapeError(
            f"{name}: the indexed axis {axis.value.data} of input {x} must "
            "have a static size"
        )
    return x, indices, axis.value.data


def _checked_element_wise_indices(
    name: str, x: TensorType, indices: TensorType, axis: int
) -> None:
    """Indices of an element each (gather, scatter): input's rank, and along
    every other axis at most input's size."""
    shape, at = dims_of(x), dims_of(indices)
    if len(at) != len(shape):
        raise ShapeError(f"{name}: indices {indices} must have the rank of input {x}")
    for d, (size, index_size) in enumerate(zip(shape, at, strict=True)):
        if d == axis:
            continue
        fits = size == index_size or (
            isinstance(size, int) and isinstance(index_size, int) and index_size <= size
        )
        if not fits:
            raise ShapeError(
                f"{name}: indices {indices} along axis {d} ({index_size}) "
                f"exceed input {x} ({size})"
            )


def _verify_constant_indices(op) -> None:
    """Constant indices are known at verification: one out of range is the
    op's error."""
    owner = op.indices.owner
    if not isinstance(owner, ConstantOp):
        return
    size = dims_of(op.input.type)[op.axis.value.data]
    bad = [v for v in owner.values() if not 0 <= v < size]
    if bad:
        raise ShapeError(
            f"{op.name}: the constant indices {op.indices.type} hold "
            f"{bad[:4]}, out of range for axis {op.axis.value.data} of "
            f"input {op.input.type} (size {size})"
        )


class _IndexingOp(MoltenOp, ABC):
    """Reads `input` at positions an integer `indices` tensor holds along
    `axis`. An index out of [0, size) is an error in the interpreter; a
    kernel reads the nearest row instead (never out of bounds), or with
    MOLTEN_CHECK_INDICES=1 stops with the first bad index."""

    SAME_ELEMENT_TYPE: ClassVar[bool] = False
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $indices `axis` `=` $axis attr-dict `:` "
        "functional-type(operands, results)"
    )

    @classmethod
    def _checked(cls, operand_types, properties) -> tuple[TensorType, TensorType, int]:
        return _checked_indexing(cls.name, operand_types[:2], properties)

    def verify_(self) -> None:
        super().verify_()
        _verify_constant_indices(self)


@irdl_op_definition
class TakeOp(_IndexingOp):
    """Slices of `input` along `axis` at each of `indices`: the result's
    shape is input's before `axis`, then indices', then input's after
    (numpy.take; torch.index_select and embedding, whose ids read rows of a
    table).

    ```mlir
    %e = molten.take %table, %ids axis = 0
        : (tensor<32000x512xbf16>, tensor<2x7xi64>) -> tensor<2x7x512xbf16>
    ```
    """

    name = "molten.take"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        x, indices, axis = cls._checked(operand_types, properties)
        shape = dims_of(x)
        return tensor_type(
            [*shape[:axis], *dims_of(indices), *shape[axis + 1 :]], x.element_type
        )


@irdl_op_definition
class GatherOp(_IndexingOp):
    """Elements of `input` along `axis` at the positions `indices` holds,
    which has input's rank and the result's shape, and along every other
    axis at most input's size (torch.gather, take_along_dim):
    result[i][j] = input[i][indices[i][j]] for axis 1.

    ```mlir
    %g = molten.gather %x, %idx axis = 1
        : (tensor<4x8xf32>, tensor<4x3xi64>) -> tensor<4x3xf32>
    ```
    """

    name = "molten.gather"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        x, indices, axis = cls._checked(operand_types, properties)
        _checked_element_wise_indices(cls.name, x, indices, axis)
        at = dims_of(indices)
        return tensor_type(at, x.element_type)


@irdl_op_definition
class ScatterOp(MoltenOp):
    """`input` with the elements of `source` written along `axis` at the
    positions `indices` holds (torch.scatter, scatter_add, index_copy):
    result[i][indices[i][j]] = source[i][j] for axis 1, or `+=` with
    `accumulate`. `indices` has source's shape and input's rank, and along
    every other axis at most input's size. Where two indices name one
    element, the last written wins (torch leaves that order undefined).

    ```mlir
    %s = molten.scatter %x, %idx, %src axis = 1
        : (tensor<4x8xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> tensor<4x8xf32>
    %a = molten.scatter %x, %idx, %src axis = 1 accumulate
        : (tensor<4x8xf32>, tensor<4x3xi64>, tensor<4x3xf32>) -> tensor<4x8xf32>
    ```
    """

    name = "molten.scatter"
    SAME_ELEMENT_TYPE: ClassVar[bool] = False
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    source = operand_def(TensorType)
    axis = prop_def(IntegerAttr[i64])
    accumulate = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $indices `,` $source `axis` `=` $axis "
        "(`accumulate` $accumulate^)? attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        x, indices, source = operand_types
        _, _, axis = _checked_indexing(cls.name, [x, indices], properties)
        _checked_element_wise_indices(cls.name, x, indices, axis)
        if dims_of(source) != dims_of(indices):
            raise ShapeError(
                f"{cls.name}: source {source} must have the shape of indices {indices}"
            )
        if source.element_type != x.element_type:
            raise DTypeError(
                f"{cls.name}: source {source} must have the element type of input "
                f"{x} ({x.element_type})"
            )
        if "accumulate" in properties and element_kind(x.element_type) == BOOLEAN:
            raise DTypeError(f"{cls.name}: accumulate takes numbers, not {x}")
        return x

    def verify_(self) -> None:
        super().verify_()
        _verify_constant_indices(self)


@irdl_op_definition
class RotateHalfOp(UnaryOp):
    """concat(-x[..., d/2:], x[..., :d/2]) over the last axis, as used by RoPE.

    A primitive rather than slices and a concat so that `rope` decomposes into
    ops that fuse into one pointwise kernel (the rotation is an index map).

    ```mlir
    %r = molten.rotate_half %x : tensor<16x64xf32>
    ```
    """

    name = "molten.rotate_half"
    TAKES: ClassVar[frozenset[str]] = NUMBERS

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        shape = dims_of(x)
        if not shape or not isinstance(shape[-1], int) or shape[-1] % 2:
            raise ShapeError(
                f"{cls.name}: input {x} needs an even last dimension to split in "
                "halves" + _static_note(shape)
            )
        return x


class TriangleOp(MoltenOp, ABC):
    """`input` where an element lies on the kept side of diagonal `diagonal`
    of the last two axes (column - row >= diagonal for triu, <= for tril),
    else 0: torch.triu and torch.tril. Each element depends on its own
    value and index only, so kernels compute it as elementwise.
    """

    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    diagonal = prop_def(IntegerAttr[i64])
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `diagonal` `=` $diagonal attr-dict `:` type($input)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        if len(x.get_shape()) < 2:
            raise ShapeError(
                f"{cls.name}: input {x} has rank {len(x.get_shape())}; a triangle "
                "needs rank >= 2 (its last two axes)"
            )
        return x

    UPPER: ClassVar[bool]
    """Whether the kept side is above the diagonal (triu), else below."""

    def keeps(self, offset: int) -> bool:
        """Whether an element at column - row = `offset` is kept."""
        k = self.diagonal.value.data
        return offset >= k if self.UPPER else offset <= k


@irdl_op_definition
class TriuOp(TriangleOp):
    """The upper triangle: elements with column - row >= diagonal.

    ```mlir
    %u = molten.triu %x diagonal = 0 : tensor<4x4xf32>
    ```
    """

    name = "molten.triu"
    UPPER: ClassVar[bool] = True


@irdl_op_definition
class TrilOp(TriangleOp):
    """The lower triangle: elements with column - row <= diagonal.

    ```mlir
    %l = molten.tril %x diagonal = -1 : tensor<4x4xf32>
    ```
    """

    name = "molten.tril"
    UPPER: ClassVar[bool] = False


# --------------------------------------------------------------------------
# Cast and constant.
# --------------------------------------------------------------------------


@irdl_op_definition
class CastOp(MoltenOp):
    """Converts to another element type (round to nearest even); same shape.

    ```mlir
    %h = molten.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
    ```
    """

    name = "molten.cast"
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    SAME_ELEMENT_TYPE: ClassVar[bool] = False
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MoltenCanonicalization())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        if result_type is None:
            raise ShapeError(f"{cls.name}: needs a result type")
        if dims_of(result_type) != dims_of(x):
            raise ShapeError(
                f"{cls.name}: input {x} and result {result_type} differ in shape; "
                "a cast changes the element type only"
            )
        return result_type


def _is_integral(value: float) -> bool:
    """Whether a number is an integer (exactly: an int is, however large)."""
    if isinstance(value, int) or hasattr(value, "dtype") and value.dtype.kind in "biu":
        return True
    return float(value).is_integer()


@irdl_op_definition
class ConstantOp(MoltenOp):
    """A constant tensor: a splat or dense values, floats all finite.

    Scalars are rank-0 constants broadcast by their users, so a constant
    never stores more than it says.

    ```mlir
    %eps = molten.constant dense<1.000000e-06> : tensor<f32>
    %v = molten.constant dense<[1.0, 2.0]> : tensor<2xbf16>
    %m = molten.constant dense<[true, false]> : tensor<2xi1>
    ```
    """

    name = "molten.constant"
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    T: ClassVar = VarConstraint("T", base(TensorType))
    value = prop_def(ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr())))
    result = result_def(T)
    traits = traits_def(Pure(), ConstantLike(), MoltenCanonicalization())
    assembly_format = "$value attr-dict"

    @classmethod
    def from_values(
        cls, values: float | Sequence[float], result_type: TensorType
    ) -> ConstantOp:
        """A constant of `result_type`: one value (a splat) or all of them
        (an integer's or bool's as Python ints: a float value is an error)."""
        check_tensor_type(cls.name, "result", result_type)
        flat = [values] if isinstance(values, int | float) else list(values)
        element = result_type.element_type
        kind = element_kind(element)
        if kind != FLOAT:
            fractional = [v for v in flat if not _is_integral(v)][:4]
            if fractional:
                raise DTypeError(
                    f"{cls.name}: {result_type} holds {kind}s; got the "
                    f"non-integral values {fractional}"
                )
            flat = [int(v) for v in flat]
            low, high = integer_range(element)
            if any(not low <= v <= high for v in flat):
                raise DTypeError(
                    f"{cls.name}: {[v for v in flat if not low <= v <= high][:4]} "
                    f"out of the range of {element} [{low}, {high}]"
                )
        else:
            flat = [float(v) for v in flat]
        attr = DenseIntOrFPElementsAttr.from_list(result_type, flat)
        cls.infer_result_type([], {"value": attr}, result_type)
        return cls(result_types=[result_type], properties={"value": attr})

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        value = properties["value"]
        assert isinstance(value, DenseIntOrFPElementsAttr)
        result = check_tensor_type(cls.name, "value", value.get_type())
        if is_dynamic(result):
            raise ShapeError(f"{cls.name}: {result} must have a static shape")
        if element_kind(result.element_type) == FLOAT and not all(
            math.isfinite(v) for v in value.iter_values()
        ):
            raise ShapeError(
                f"{cls.name}: {result} holds inf or NaN; molten constants must be "
                "finite, because xDSL 0.74 prints such values as bit patterns it "
                "cannot read back (an additive -inf mask is molten.causal_mask)"
            )
        return result

    def values(self) -> list[float] | list[int]:
        """The constant's values in order: floats, ints, or 0/1 for bools
        (xDSL reads an i1's true as -1)."""
        values = list(self.value.iter_values())
        kind = element_kind(self.result.type.element_type)
        if kind == BOOLEAN:
            return [int(v != 0) for v in values]
        return (
            [int(v) for v in values] if kind == INTEGER else [float(v) for v in values]
        )

    def splat_value(self) -> float | int | None:
        """The single value of a splat constant, else None."""
        if not self.value.is_splat():
            return None
        return self.values()[0]


# --------------------------------------------------------------------------
# Reductions.
# --------------------------------------------------------------------------


class ReductionOp(MoltenOp, ABC):
    """Reduces `input` over `axes` (distinct, in [0, rank)), keeping them as 1s with
    `keepdim`.

    ```mlir
    %s = molten.reduce_sum %x axes = [1] keepdim : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
    """

    input = operand_def(TensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdim = opt_prop_def(UnitAttr)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = (
        "$input `axes` `=` $axes (`keepdim` $keepdim^)? attr-dict "
        "`:` type($input) `->` type($result)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        shape = dims_of(x)
        axes = properties["axes"]
        assert isinstance(axes, DenseArrayBase)
        values = tuple(axes.get_values())
        if not values:
            raise ShapeError(f"{cls.name}: axes must name at least one axis")
        if len(set(values)) != len(values):
            raise ShapeError(f"{cls.name}: axes {list(values)} repeat an axis")
        for axis in values:
            if not 0 <= axis < len(shape):
                raise ShapeError(
                    f"{cls.name}: axis {axis} is out of range for input {x} "
                    f"(axes are in [0, {len(shape)}))"
                )
        keep = "keepdim" in properties
        reduced = [
            1 if i in values else d
            for i, d in enumerate(shape)
            if keep or i not in values
        ]
        return tensor_type(reduced, x.element_type)


@irdl_op_definition
class ReduceSumOp(ReductionOp):
    """Sum over axes."""

    name = "molten.reduce_sum"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class ReduceMaxOp(ReductionOp):
    """Maximum over axes."""

    name = "molten.reduce_max"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class ReduceMeanOp(ReductionOp):
    """Arithmetic mean over axes."""

    name = "molten.reduce_mean"


class ArgReductionOp(ReductionOp, ABC):
    """The position of the extreme element along one axis, as int64
    (torch.argmax, argmin): the first of equal ones, and the first NaN
    where there is one (torch's, and numpy's, NaN is the extreme).

    ```mlir
    %i = molten.argmax %x axes = [1] : tensor<4x8xf32> -> tensor<4xi64>
    ```
    """

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        reduced = super().infer_result_type(operand_types, properties, result_type)
        axes = properties["axes"]
        assert isinstance(axes, DenseArrayBase)
        if len(axes.get_values()) != 1:
            raise ShapeError(
                f"{cls.name}: axes {list(axes.get_values())} name several axes; "
                "a position is along one (reshape to join axes)"
            )
        return tensor_type(dims_of(reduced), i64)


@irdl_op_definition
class ArgMaxOp(ArgReductionOp):
    """The position of the maximum along an axis."""

    name = "molten.argmax"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


@irdl_op_definition
class ArgMinOp(ArgReductionOp):
    """The position of the minimum along an axis."""

    name = "molten.argmin"
    TAKES: ClassVar[frozenset[str]] = NUMBERS


# --------------------------------------------------------------------------
# Scans.
# --------------------------------------------------------------------------


class ScanOp(MoltenOp, ABC):
    """A running combination along `axis`: element i combines elements
    0..i (with `reverse`, i..n-1); with `exclusive` element i itself is
    left out (the first, or with `reverse` the last, is the identity).
    `COMBINE` says which: "sum", "prod", "max" or "min" (the last two as
    torch.maximum: a NaN stays)."""

    COMBINE: ClassVar[str]
    TAKES: ClassVar[frozenset[str]] = NUMBERS
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    axis = prop_def(IntegerAttr[i64])
    reverse = opt_prop_def(UnitAttr)
    exclusive = opt_prop_def(UnitAttr)
    result = result_def(T)
    traits = traits_def(Pure(), MoltenCanonicalization())
    assembly_format = (
        "$input `axis` `=` $axis (`reverse` $reverse^)? (`exclusive` $exclusive^)? "
        "attr-dict `:` type($input)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        axis = properties["axis"]
        assert isinstance(axis, IntegerAttr)
        rank = len(x.get_shape())
        if not 0 <= axis.value.data < rank:
            raise ShapeError(
                f"{cls.name}: axis {axis.value.data} is out of range for input {x} "
                f"(axis is in [0, {rank}))"
            )
        return x


@irdl_op_definition
class CumsumOp(ScanOp):
    """The running sum along `axis` (torch.cumsum): element i is the sum of
    elements 0..i; with `reverse` of elements i..n-1; with `exclusive`
    element i itself is left out (the first, or with `reverse` the last,
    is 0).

    ```mlir
    %c = molten.cumsum %x axis = 1 : tensor<4x8xf32>
    %r = molten.cumsum %x axis = 1 reverse exclusive : tensor<4x8xf32>
    ```
    """

    name = "molten.cumsum"
    COMBINE: ClassVar[str] = "sum"


@irdl_op_definition
class CumprodOp(ScanOp):
    """The running product along `axis` (torch.cumprod).

    ```mlir
    %p = molten.cumprod %x axis = 1 : tensor<4x8xf32>
    ```
    """

    name = "molten.cumprod"
    COMBINE: ClassVar[str] = "prod"


@irdl_op_definition
class CummaxOp(ScanOp):
    """The running maximum along `axis` (torch.cummax's values: a NaN, once
    met, stays).

    ```mlir
    %m = molten.cummax %x axis = 1 : tensor<4x8xf32>
    ```
    """

    name = "molten.cummax"
    COMBINE: ClassVar[str] = "max"


@irdl_op_definition
class CumminOp(ScanOp):
    """The running minimum along `axis` (torch.cummin's values).

    ```mlir
    %m = molten.cummin %x axis = 1 : tensor<4x8xi64>
    ```
    """

    name = "molten.cummin"
    COMBINE: ClassVar[str] = "min"


# --------------------------------------------------------------------------
# Shape ops.
# --------------------------------------------------------------------------


@irdl_op_definition
class BroadcastToOp(MoltenOp):
    """Broadcasts `input` to the result's shape under numpy's rules.

    ```mlir
    %b = molten.broadcast_to %w : tensor<8xf32> -> tensor<4x8xf32>
    ```
    """

    name = "molten.broadcast_to"
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MoltenCanonicalization())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        if result_type is None:
            raise ShapeError(f"{cls.name}: needs a result type")
        if not broadcasts_to(dims_of(x), dims_of(result_type)):
            raise ShapeError(
                f"{cls.name}: input {x} cannot be broadcast to {result_type} "
                "(each input dimension must be 1 or equal the trailing result "
                "dimension)"
            )
        if result_type.element_type != x.element_type:
            raise DTypeError(
                f"{cls.name}: input {x} and result {result_type} differ in element type"
            )
        return result_type


@irdl_op_definition
class ReshapeOp(MoltenOp):
    """Reinterprets `input` in row-major order with the result's shape.

    ```mlir
    %r = molten.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
    ```
    """

    name = "molten.reshape"
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), MoltenCanonicalization())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        if result_type is None:
            raise ShapeError(f"{cls.name}: needs a result type")
        before, after = _elements(dims_of(x)), _elements(dims_of(result_type))
        if before != after:
            raise ShapeError(
                f"{cls.name}: input {x} has {before} elements but result "
                f"{result_type} has {after}"
            )
        if result_type.element_type != x.element_type:
            raise DTypeError(
                f"{cls.name}: input {x} and result {result_type} differ in element type"
            )
        return result_type


@irdl_op_definition
class TransposeOp(MoltenOp):
    """Permutes axes: result dimension i is input dimension permutation[i].

    ```mlir
    %t = molten.transpose %x permutation = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
    ```
    """

    name = "molten.transpose"
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    input = operand_def(TensorType)
    permutation = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure(), MoltenCanonicalization())
    assembly_format = (
        "$input `permutation` `=` $permutation attr-dict "
        "`:` type($input) `->` type($result)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        perm = properties["permutation"]
        assert isinstance(perm, DenseArrayBase)
        values = tuple(perm.get_values())
        shape = dims_of(x)
        if sorted(values) != list(range(len(shape))):
            raise ShapeError(
                f"{cls.name}: permutation {list(values)} is not a permutation of "
                f"the {len(shape)} axes of input {x}"
            )
        return tensor_type([shape[p] for p in values], x.element_type)


@irdl_op_definition
class FlipOp(MoltenOp):
    """Reverses the order of elements along `axes` (torch.flip).

    ```mlir
    %f = molten.flip %x axes = [1] : tensor<4x8xf32>
    ```
    """

    name = "molten.flip"
    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    axes = prop_def(DenseArrayBase.constr(i64))
    result = result_def(T)
    traits = traits_def(Pure(), MoltenCanonicalization())
    assembly_format = "$input `axes` `=` $axes attr-dict `:` type($input)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        axes = properties["axes"]
        assert isinstance(axes, DenseArrayBase)
        values = tuple(axes.get_values())
        rank = len(x.get_shape())
        if len(set(values)) != len(values):
            raise ShapeError(f"{cls.name}: axes {list(values)} repeat an axis")
        for axis in values:
            if not 0 <= axis < rank:
                raise ShapeError(
                    f"{cls.name}: axis {axis} is out of range for input {x} "
                    f"(axes are in [0, {rank}))"
                )
        return x


class _AxisWindowOp(MoltenOp, ABC):
    """A window of `input` along `axis` (a static dimension): the result
    differs from the input in that dimension only."""

    TAKES: ClassVar[frozenset[str]] = ANY_ELEMENT

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)
    traits = traits_def(Pure(), MoltenCanonicalization())

    @classmethod
    def _window(cls, x, properties, result_type) -> tuple[int, int, int]:
        """(axis, the input's size along it, the result's), checked."""
        if result_type is None:
            raise ShapeError(f"{cls.name}: needs a result type")
        axis = properties["axis"]
        assert isinstance(axis, IntegerAttr)
        a = axis.value.data
        shape, result = dims_of(x), dims_of(result_type)
        if not 0 <= a < len(shape):
            raise ShapeError(
                f"{cls.name}: axis {a} is out of range for input {x} "
                f"(axis is in [0, {len(shape)}))"
            )
        if len(result) != len(shape) or any(
            r != d for i, (r, d) in enumerate(zip(result, shape, strict=True)) if i != a
        ):
            raise ShapeError(
                f"{cls.name}: input {x} and result {result_type} differ in "
                f"dimensions other than axis {a}"
            )
        if isinstance(shape[a], str) or isinstance(result[a], str):
            raise ShapeError(
                f"{cls.name}: axis {a} of input {x} and result {result_type} must "
                "be a fixed size"
            )
        if result_type.element_type != x.element_type:
            raise DTypeError(
                f"{cls.name}: input {x} and result {result_type} differ in element type"
            )
        return a, shape[a], result[a]  # type: ignore[return-value]


@irdl_op_definition
class SliceOp(_AxisWindowOp):
    """The elements `start` ... `start` + n - 1 along `axis`, n the result's
    size there (torch's narrow, x[:, start:start + n]).

    ```mlir
    %s = molten.slice %x axis = 1 start = 2 : tensor<4x8xf32> -> tensor<4x5xf32>
    ```
    """

    name = "molten.slice"
    start = prop_def(IntegerAttr[i64])
    assembly_format = (
        "$input `axis` `=` $axis `start` `=` $start attr-dict "
        "`:` type($input) `->` type($result)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        axis, size, length = cls._window(x, properties, result_type)
        start = properties["start"]
        assert isinstance(start, IntegerAttr)
        first = start.value.data
        if first < 0 or first + length > size:
            raise ShapeError(
                f"{cls.name}: elements {first} to {first + length - 1} along axis "
                f"{axis} are not all in input {x} (size {size})"
            )
        return result_type


@irdl_op_definition
class PadOp(_AxisWindowOp):
    """`input` between zeros along `axis`: `before` of them, then the input,
    then as many as make the result's size (torch.nn.functional.pad with
    zeros). A torch.cat is the sum of its parts each padded to the whole.

    ```mlir
    %p = molten.pad %x axis = 1 before = 1 : tensor<4x5xf32> -> tensor<4x8xf32>
    ```
    """

    name = "molten.pad"
    before = prop_def(IntegerAttr[i64])
    assembly_format = (
        "$input `axis` `=` $axis `before` `=` $before attr-dict "
        "`:` type($input) `->` type($result)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        axis, size, padded = cls._window(x, properties, result_type)
        before = properties["before"]
        assert isinstance(before, IntegerAttr)
        zeros = before.value.data
        if zeros < 0 or zeros + size > padded:
            raise ShapeError(
                f"{cls.name}: {zeros} zeros and input {x} (size {size} along axis "
                f"{axis}) do not fit in result {result_type}"
            )
        return result_type


# --------------------------------------------------------------------------
# Contraction.
# --------------------------------------------------------------------------


@irdl_op_definition
class MatmulOp(MoltenOp):
    """Matrix product over the last two axes, batch axes broadcast like numpy.

    lhs is [..., M, K] ([..., K, M] with transpose_a), rhs is [..., K, N]
    ([..., N, K] with transpose_b); the result is [..., M, N], of the
    operands' element type or, for f16 and bf16 operands, f32 (the sums as
    the tensor cores accumulate them, not rounded to the narrow type).

    ```mlir
    %y = molten.matmul %x, %w transpose_b
        : (tensor<16x64xf16>, tensor<32x64xf16>) -> tensor<16x32xf16>
    %z = molten.matmul %x, %w transpose_b
        : (tensor<16x64xbf16>, tensor<32x64xbf16>) -> tensor<16x32xf32>
    ```
    """

    name = "molten.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    def shares_lhs_with(self, other: MatmulOp) -> bool:
        """Whether this matmul and `other` share their lhs value, transposes
        and rhs element type (so their K): one gemm kernel may compute both
        from the same tiles of the lhs, each tile of the output a tile of
        one of them (q, k and v of different widths)."""
        return (
            other.lhs is self.lhs
            and other.transpose_a == self.transpose_a
            and other.transpose_b == self.transpose_b
            and isinstance(other.rhs.type, TensorType)
            and isinstance(self.rhs.type, TensorType)
            and other.rhs.type.element_type == self.rhs.type.element_type
            and other.result.type.element_type == self.result.type.element_type  # type: ignore[attr-defined]
        )

    def is_sibling_of(self, other: MatmulOp) -> bool:
        """Whether this matmul and `other` share their lhs (shares_lhs_with)
        and operand and result types: one gemm kernel may compute both side
        by side, each tile of the output a tile of each."""
        return (
            self.shares_lhs_with(other)
            and other.rhs.type == self.rhs.type
            and other.result.type == self.result.type
        )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        lhs, rhs = operand_types
        for name, t in (("lhs", lhs), ("rhs", rhs)):
            if len(t.get_shape()) < 2:
                raise ShapeError(
                    f"{cls.name}: {name} {t} has rank {len(t.get_shape())}; matmul "
                    "takes rank >= 2 operands (reshape a vector to 1xK or Kx1)"
                )
        a, b = dims_of(lhs), dims_of(rhs)
        m, k_lhs = (a[-1], a[-2]) if "transpose_a" in properties else (a[-2], a[-1])
        k_rhs, n = (b[-1], b[-2]) if "transpose_b" in properties else (b[-2], b[-1])
        if k_lhs != k_rhs:
            raise ShapeError(
                f"{cls.name}: contraction sizes differ: lhs {lhs} has K = {k_lhs}, "
                f"rhs {rhs} has K = {k_rhs}"
                + (" (transpose_a)" if "transpose_a" in properties else "")
                + (" (transpose_b)" if "transpose_b" in properties else "")
            )
        batch = broadcast_shapes(
            cls.name,
            [
                ("lhs batch of", tensor_type(a[:-2] or [1], lhs.element_type)),
                ("rhs batch of", tensor_type(b[:-2] or [1], rhs.element_type)),
            ],
        )
        batch = batch if (a[:-2] or b[:-2]) else ()
        element = lhs.element_type
        if (
            result_type is not None
            and isinstance(result_type.element_type, Float32Type)
            and isinstance(element, (Float16Type, BFloat16Type))
        ):
            element = result_type.element_type
        return tensor_type([*batch, m, n], element)


# --------------------------------------------------------------------------
# Composites: the math-spec level.
# --------------------------------------------------------------------------


def _check_trailing(
    op_name: str, x: TensorType, param_name: str, param: TensorType
) -> int:
    """`param` has the shape of x's trailing axes; returns how many axes that is."""
    k = len(param.get_shape())
    if k == 0 or k > len(x.get_shape()) or dims_of(x)[-k:] != dims_of(param):
        raise ShapeError(
            f"{op_name}: {param_name} {param} must have the shape of the trailing "
            f"axes of input {x} (the normalized shape)"
        )
    return k


F32_MAX = 3.4028234663852886e38
"""The largest finite f32: kernels compute in f32, so an attribute beyond it
would be infinite there (and cannot be printed as an f32 literal)."""


def _check_f32_range(op_name: str, what: str, value: float) -> None:
    if abs(value) > F32_MAX:
        raise ShapeError(
            f"{op_name}: {what} {value} is beyond float32's range (+-{F32_MAX:.7g}), "
            "in which the kernels compute"
        )


def _check_epsilon(op_name: str, properties: Mapping[str, Attribute]) -> None:
    eps = properties["epsilon"]
    assert isinstance(eps, FloatAttr)
    if not (eps.value.data >= 0 and math.isfinite(eps.value.data)):
        raise ShapeError(
            f"{op_name}: eps must be finite and >= 0, got {eps.value.data}"
        )
    _check_f32_range(op_name, "eps", eps.value.data)


@irdl_op_definition
class RmsNormOp(MoltenOp):
    """x * rsqrt(mean(x^2 over the normalized axes) + eps) * weight.

    The normalized axes are the trailing axes of `input` that `weight` spans,
    as in `torch.nn.functional.rms_norm(x, weight.shape, weight, eps)`.

    ```mlir
    %y = molten.rms_norm %x, %w eps = 1.000000e-06
        : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
    ```
    """

    name = "molten.rms_norm"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    epsilon = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight `eps` `=` $epsilon attr-dict "
        "`:` functional-type(operands, results)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        x, w = operand_types
        _check_trailing(cls.name, x, "weight", w)
        _check_epsilon(cls.name, properties)
        return x


@irdl_op_definition
class LayerNormOp(MoltenOp):
    """(x - mean) * rsqrt(var + eps) * weight + bias over the normalized axes,
    with the biased variance, as `torch.nn.functional.layer_norm`.

    ```mlir
    %y = molten.layer_norm %x, %w, %b eps = 1.000000e-05
        : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
    ```
    """

    name = "molten.layer_norm"
    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    epsilon = prop_def(FloatAttr[Float64Type])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $weight `,` $bias `eps` `=` $epsilon attr-dict "
        "`:` functional-type(operands, results)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        x, w, b = operand_types
        _check_trailing(cls.name, x, "weight", w)
        if dims_of(b) != dims_of(w):
            raise ShapeError(
                f"{cls.name}: bias {b} must have the shape of weight {w} "
                "(both span the normalized axes)"
            )
        _check_epsilon(cls.name, properties)
        return x


@irdl_op_definition
class SoftmaxOp(MoltenOp):
    """exp(x - max) / sum(exp(x - max)) along `axis`.

    ```mlir
    %p = molten.softmax %x axis = 1 : tensor<8x128xf32>
    ```
    """

    name = "molten.softmax"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    axis = prop_def(IntegerAttr[i64])
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input `axis` `=` $axis attr-dict `:` type($input)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        (x,) = operand_types
        axis = properties["axis"]
        assert isinstance(axis, IntegerAttr)
        rank = len(x.get_shape())
        if not 0 <= axis.value.data < rank:
            raise ShapeError(
                f"{cls.name}: axis {axis.value.data} is out of range for input {x} "
                f"(axis is in [0, {rank}))"
            )
        return x


@irdl_op_definition
class RopeOp(MoltenOp):
    """Rotary position embedding, rotate-half form (Llama, HF transformers):
    x * cos + rotate_half(x) * sin, with cos and sin broadcast to x.

    ```mlir
    %y = molten.rope %x, %cos, %sin
        : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>)
        -> tensor<2x16x64xf32>
    ```
    """

    name = "molten.rope"
    input = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        x, cos, sin = operand_types
        shape = dims_of(x)
        if not shape or not isinstance(shape[-1], int) or shape[-1] % 2:
            raise ShapeError(
                f"{cls.name}: input {x} needs an even last dimension to rotate "
                "its halves" + _static_note(shape)
            )
        for name, t in (("cos", cos), ("sin", sin)):
            if broadcast_shapes(cls.name, [("input", x), (name, t)]) != shape:
                raise ShapeError(
                    f"{cls.name}: {name} {t} must broadcast to input {x} without "
                    "enlarging it"
                )
        return x


@irdl_op_definition
class AttentionOp(MoltenOp):
    """softmax(query @ key^T * scale [+ causal mask]) @ value.

    query is [..., Sq, D], key [..., Sk, D], value [..., Sk, Dv]; batch axes
    broadcast. The causal mask keeps key j for query i when j <= i (top-left
    aligned, as torch's scaled_dot_product_attention with is_causal=True).

    ```mlir
    %o = molten.attention %q, %k, %v scale = 1.250000e-01 causal
        : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>)
        -> tensor<2x8x128x64xf16>
    ```
    """

    name = "molten.attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$query `,` $key `,` $value `scale` `=` $scale (`causal` $causal^)? "
        "attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        q, k, v = operand_types
        for name, t in (("query", q), ("key", k), ("value", v)):
            if len(t.get_shape()) < 2:
                raise ShapeError(
                    f"{cls.name}: {name} {t} must have rank >= 2 ([..., seq, dim])"
                )
        qs, ks, vs = dims_of(q), dims_of(k), dims_of(v)
        if qs[-1] != ks[-1]:
            raise ShapeError(
                f"{cls.name}: query {q} and key {k} differ in head dimension "
                f"({qs[-1]} vs {ks[-1]})"
            )
        if ks[-2] != vs[-2]:
            raise ShapeError(
                f"{cls.name}: key {k} and value {v} differ in sequence length "
                f"({ks[-2]} vs {vs[-2]})"
            )
        batch = broadcast_shapes(
            cls.name,
            [
                (f"{name} batch of", tensor_type(s[:-2] or [1], q.element_type))
                for name, s in (("query", qs), ("key", ks), ("value", vs))
            ],
        )
        batch = batch if (qs[:-2] or ks[:-2] or vs[:-2]) else ()
        scale = properties["scale"]
        assert isinstance(scale, FloatAttr)
        if not math.isfinite(scale.value.data):
            raise ShapeError(
                f"{cls.name}: scale must be finite, got {scale.value.data}"
            )
        _check_f32_range(cls.name, "scale", scale.value.data)
        return tensor_type([*batch, qs[-2], vs[-1]], q.element_type)


@irdl_op_definition
class CausalMaskOp(MoltenOp):
    """The additive causal mask over the last two axes: 0 where j <= i, else -inf.

    ```mlir
    %m = molten.causal_mask : tensor<128x128xf32>
    ```
    """

    name = "molten.causal_mask"
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"

    @classmethod
    def infer_result_type(cls, operand_types, properties, result_type):
        if result_type is None:
            raise ShapeError(f"{cls.name}: needs a result type")
        cls.check_operand_kind("result", result_type)
        if len(result_type.get_shape()) < 2:
            raise ShapeError(f"{cls.name}: result {result_type} must have rank >= 2")
        return result_type


COMPOSITE_OPS: tuple[type[MoltenOp], ...] = (
    RmsNormOp,
    LayerNormOp,
    SoftmaxOp,
    RopeOp,
    AttentionOp,
)
"""The math-spec ops that `molten-decompose` rewrites into primitives."""

ELEMENTWISE_BINARY_OPS: tuple[type[ElementwiseBinaryOp], ...] = (
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaxOp,
    MinOp,
    PowOp,
    FloorDivideOp,
    RemainderOp,
    FmodOp,
    Atan2Op,
    BitwiseAndOp,
    BitwiseOrOp,
    BitwiseXorOp,
    ShiftLeftOp,
    ShiftRightOp,
    LogicalAndOp,
    LogicalOrOp,
    LogicalXorOp,
    EqOp,
    NeOp,
    LtOp,
    LeOp,
    GtOp,
    GeOp,
)

ELEMENTWISE_UNARY_OPS: tuple[type[ElementwiseUnaryOp], ...] = (
    NegOp,
    AbsOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    ReciprocalOp,
    SquareOp,
    TanhOp,
    SigmoidOp,
    ReluOp,
    GeluOp,
    SiluOp,
    SinOp,
    CosOp,
    TanOp,
    AsinOp,
    AcosOp,
    AtanOp,
    SinhOp,
    CoshOp,
    ErfOp,
    Log1pOp,
    Expm1Op,
    Log2Op,
    Log10Op,
    Exp2Op,
    FloorOp,
    CeilOp,
    RoundOp,
    TruncOp,
    SignOp,
    BitwiseNotOp,
    LogicalNotOp,
    IsNanOp,
    IsInfOp,
)

REDUCTION_OPS: tuple[type[ReductionOp], ...] = (
    ReduceSumOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ArgMaxOp,
    ArgMinOp,
)

# --------------------------------------------------------------------------
# Copies of a graph by size class.
# --------------------------------------------------------------------------

SIZES_ATTR = "molten.sizes"
"""The attribute of a `func.func` that is one copy of a graph, for a range
of a named size (`SizeRangeAttr`)."""


@irdl_attr_definition
class SizeRangeAttr(ParametrizedAttribute):
    """The sizes of a named dimension at which one copy of a graph runs:
    `split-size-classes` copies a graph whose fusion depends on the size
    (matmuls of one lhs over a named M), one copy per size class, and
    `merge-size-classes` joins neighbours fused alike. The launcher runs
    the copy whose range holds the size (`most` 0: any size from `least`).

    ```mlir
    func.func @layer_T9(...)
        attributes {molten.sizes = #molten.sizes<@layer, 9 <= T <= 32>} {...}
    func.func @layer_T33(...)
        attributes {molten.sizes = #molten.sizes<@layer, 33 <= T>} {...}
    ```
    """

    name = "molten.sizes"

    graph: StringAttr = param_def()
    dim: StringAttr = param_def()
    least: IntAttr = param_def()
    most: IntAttr = param_def()

    def __init__(self, graph: str, dim: str, least: int, most: int):
        super().__init__(
            StringAttr(graph), StringAttr(dim), IntAttr(least), IntAttr(most)
        )

    def holds(self, size: int) -> bool:
        """Whether `size` is in the range."""
        return self.least.data <= size and (
            not self.most.data or size <= self.most.data
        )

    def joined(self, other: SizeRangeAttr) -> SizeRangeAttr:
        """The least range that holds this one and `other`."""
        most = max(self.most.data, other.most.data)
        return SizeRangeAttr(
            self.graph.data,
            self.dim.data,
            min(self.least.data, other.least.data),
            most if self.most.data and other.most.data else 0,
        )

    def meet(self, least: int, most: int) -> tuple[int, int] | None:
        """The sizes of this range from `least` to `most` (0: no bound), as
        (least, most), or None where there are none."""
        least = max(least, self.least.data)
        bounds = [m for m in (most, self.most.data) if m]
        most = min(bounds) if bounds else 0
        return None if most and least > most else (least, most)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        graph = parser.parse_symbol_name()
        parser.parse_punctuation(",")
        least = parser.parse_integer(allow_negative=False)
        parser.parse_punctuation("<")
        parser.parse_punctuation("=")
        dim = parser.parse_identifier()
        most = 0
        if parser.parse_optional_punctuation("<"):
            parser.parse_punctuation("=")
            most = parser.parse_integer(allow_negative=False)
        parser.parse_punctuation(">")
        return (graph, StringAttr(dim), IntAttr(least), IntAttr(most))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_symbol_name(self.graph.data)
        bound = f" <= {self.most.data}" if self.most.data else ""
        printer.print_string(f", {self.least.data} <= {self.dim.data}{bound}>")

    def verify(self) -> None:
        if not is_dim_name(self.dim.data):
            raise VerifyException(
                f"#molten.sizes: {self.dim.data!r} is not a dimension name"
            )
        least, most = self.least.data, self.most.data
        if least < 1 or (most and most < least):
            raise VerifyException(
                f"#molten.sizes: {least} <= {self.dim.data} <= {most} is no range "
                "of sizes (least >= 1, most >= least or 0: no bound)"
            )


def size_range_of(op: Operation) -> SizeRangeAttr | None:
    """The range of sizes of the graph copy that holds `op` (itself a
    func.func or inside one), if it is one."""
    found: Operation | None = op
    while found is not None and not isinstance(
        found.attributes.get(SIZES_ATTR), SizeRangeAttr
    ):
        found = found.parent_op()
    if found is None:
        return None
    sizes = found.attributes[SIZES_ATTR]
    assert isinstance(sizes, SizeRangeAttr)
    return sizes


def as_graph(copy: Operation) -> None:
    """A copy of a graph by size class made the graph (its name, unmarked):
    the one copy left, or the copy of the size given."""
    sizes = copy.attributes.pop(SIZES_ATTR)
    assert isinstance(sizes, SizeRangeAttr)
    copy.sym_name = StringAttr(sizes.graph.data)  # type: ignore[attr-defined]


def graph_name(graph: Operation) -> str:
    """The name of the graph a `func.func` computes: its own, or for a copy
    by size class, the graph's it is a copy of."""
    sizes = graph.attributes.get(SIZES_ATTR)
    if isinstance(sizes, SizeRangeAttr):
        return sizes.graph.data
    return graph.sym_name.data  # type: ignore[attr-defined]


Molten = Dialect(
    "molten",
    [
        *ELEMENTWISE_BINARY_OPS,
        *ELEMENTWISE_UNARY_OPS,
        RotateHalfOp,
        TriuOp,
        TrilOp,
        CastOp,
        ConstantOp,
        WhereOp,
        IotaOp,
        TakeOp,
        GatherOp,
        ScatterOp,
        *REDUCTION_OPS,
        BroadcastToOp,
        ReshapeOp,
        TransposeOp,
        FlipOp,
        SliceOp,
        PadOp,
        CumsumOp,
        CumprodOp,
        CummaxOp,
        CumminOp,
        MatmulOp,
        *COMPOSITE_OPS,
        CausalMaskOp,
    ],
    [SizeRangeAttr],
)
