"""The `kernel` dialect: which molten ops run together as one kernel.

Level 2 of Molten. A `kernel.fused` op holds a region of molten ops that one
GPU kernel will compute. The region is isolated from above: its inputs are
the op's operands, bound to block arguments, and its `kernel.yield` names the
values the kernel writes out. Everything is still tensors, so the reference
interpreter runs a fused group exactly as it ran the ops before fusion.

```mlir
%norm = kernel.fused row_reduce (%x, %w)
    : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32> {
^bb0(%xa: tensor<2048x5120xf32>, %wa: tensor<5120xf32>):
  ...molten ops...
  kernel.yield %r : tensor<2048x5120xf32>
}
```

`kernel-outline` moves each group into a `kernel.func` (a symbol) called by a
`kernel.launch`; `kernel-schedule` attaches a `#kernel.schedule<...>`, the
only source of launch and tiling parameters for the levels below, and `tile`
derives from it a gemm kernel's `#kernel.tiling<...>` (grid, tiles per level,
partial tiles, operand footprints).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from enum import auto

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    FunctionType,
    IntAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
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
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from molten.dialects import molten


class KernelKind(StrEnum):
    """What a fused group computes, which decides how it is lowered."""

    POINTWISE = auto()
    ROW_REDUCE = auto()
    SCAN = auto()
    SCATTER = auto()
    GEMM = auto()
    ATTENTION = auto()


@irdl_attr_definition
class KernelKindAttr(EnumAttribute[KernelKind], SpacedOpaqueSyntaxAttribute):
    """`#kernel<kind row_reduce>`; printed bare (`row_reduce`) inside ops."""

    name = "kernel.kind"


class ScheduleFamily(StrEnum):
    """How a kernel is lowered: its kind's kernel shape, and for a gemm the
    instruction and data movement. A `#kernel.schedule` names its family
    first and takes only that family's parameters (`SCHEDULE_FAMILIES`)."""

    POINTWISE = auto()
    ROW_REDUCE = auto()
    SCAN = auto()
    SCATTER = auto()
    ATTENTION = auto()
    GEMV = auto()
    GEMM_SIMT = auto()
    GEMM_MMA = auto()
    GEMM_WGMMA = auto()
    GEMM_TMA = auto()


@irdl_attr_definition
class ScheduleFamilyAttr(EnumAttribute[ScheduleFamily], SpacedOpaqueSyntaxAttribute):
    """`#kernel<family gemm_mma>`; printed bare inside `#kernel.schedule`."""

    name = "kernel.family"


@dataclasses.dataclass(frozen=True)
class FamilyParameters:
    """A family's kernel kind and the `#kernel.schedule` fields it takes
    besides `block` (any other keeps its default); `implied`: fields whose
    value the family fixes (not printed, not parsed)."""

    kind: KernelKind
    fields: tuple[str, ...]
    implied: Mapping[str, int] = dataclasses.field(default_factory=dict)


MAX_STAGES = 16
"""The most stages a schedule's pipeline takes (the persistent TMA gemm's
deepest; each stage is a tile of each operand in shared memory, which the
lowering then checks against the block's)."""


SCHEDULE_FAMILIES: dict[ScheduleFamily, FamilyParameters] = {
    # vector: elements per access; elements_per_thread: per thread a step.
    ScheduleFamily.POINTWISE: FamilyParameters(
        KernelKind.POINTWISE, ("vector", "elements_per_thread")
    ),
    # rows_per_block: rows a block shares; split: blocks a row (cooperative).
    ScheduleFamily.ROW_REDUCE: FamilyParameters(
        KernelKind.ROW_REDUCE,
        ("rows_per_block", "vector", "elements_per_thread", "split"),
    ),
    ScheduleFamily.SCAN: FamilyParameters(
        KernelKind.SCAN, ("rows_per_block", "vector", "elements_per_thread")
    ),
    # A thread an element of the source a step (its writes go where the
    # indices say: no vector).
    ScheduleFamily.SCATTER: FamilyParameters(KernelKind.SCATTER, ()),
    # tile: query rows, keys, head dim a block; warp: a warp's (warpgroup's)
    # rows, value head dim; split: parts of the keys; pack: query heads
    # sharing a KV head in one block; mma_warps: 4 on wgmma.
    ScheduleFamily.ATTENTION: FamilyParameters(
        KernelKind.ATTENTION, ("split", "tile", "warp", "stages", "mma_warps", "pack")
    ),
    # tile: M, N, K a block; stages: rows of B in flight a thread; k_lanes:
    # the threads that share an output, each summing every k_lanes-th
    # element of K over `vector` columns.
    ScheduleFamily.GEMV: FamilyParameters(
        KernelKind.GEMM, ("vector", "tile", "stages", "k_lanes")
    ),
    ScheduleFamily.GEMM_SIMT: FamilyParameters(KernelKind.GEMM, ("tile",)),
    # warp: a warp's M, N; stages: the operand tiles in flight (cp.async).
    ScheduleFamily.GEMM_MMA: FamilyParameters(
        KernelKind.GEMM, ("tile", "warp", "stages")
    ),
    # warp: a warpgroup's M, N; split: parts of K (split-K).
    ScheduleFamily.GEMM_WGMMA: FamilyParameters(
        KernelKind.GEMM,
        ("split", "tile", "warp", "stages"),
        {"mma_warps": 4},
    ),
    # persistent: the blocks, each looping over output tiles, one warpgroup
    # loading the operands by TMA; cluster: blocks sharing B's tile by TMA
    # multicast.
    ScheduleFamily.GEMM_TMA: FamilyParameters(
        KernelKind.GEMM,
        ("split", "tile", "warp", "stages", "persistent", "cluster"),
        {"mma_warps": 4},
    ),
}
"""The parameters of each family's `#kernel.schedule`."""

SCHEDULE_FIELD_ORDER = (
    "block",
    "rows_per_block",
    "vector",
    "elements_per_thread",
    "split",
    "tile",
    "warp",
    "stages",
    "k_lanes",
    "mma_warps",
    "pack",
    "persistent",
    "cluster",
)
"""The fields of `#kernel.schedule` after its family, in printing order."""
SCHEDULE_ARRAY_FIELDS = ("tile", "warp")
"""The integer-list fields of `#kernel.schedule`."""
SCHEDULE_ALWAYS_PRINTED = (
    "block",
    "rows_per_block",
    "vector",
    "elements_per_thread",
    "tile",
    "warp",
)
"""The fields a family's schedule prints whatever their value; the others
print when not at their default."""
SCHEDULE_DEFAULTS = {
    "rows_per_block": 1,
    "vector": 1,
    "elements_per_thread": 1,
    "split": 1,
    "stages": 1,
    "k_lanes": 1,
    "mma_warps": 1,
    "pack": 1,
    "persistent": 0,
    "cluster": 1,
}
"""Each scalar field's value where a family does not take it or its
schedule does not give it."""


def part_steps(k_steps: int, split: int) -> int:
    """The K steps of each of `split` parts of `k_steps` but perhaps the
    last (split-K)."""
    return -(-k_steps // split)


def leaves_empty_part(k_steps: int, split: int) -> bool:
    """Whether `split` parts of part_steps each leave the last part of
    `k_steps` K steps nothing."""
    return split > 1 and (split - 1) * part_steps(k_steps, split) >= k_steps


def _int_array(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr([IntAttr(v) for v in values])


def _format_ints(values: ArrayAttr[IntAttr]) -> str:
    return f"[{', '.join(str(v.data) for v in values)}]"


def _parse_int_array(parser: AttrParser) -> ArrayAttr[IntAttr]:
    sizes = parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, parser.parse_integer
    )
    return _int_array(sizes)


SPLIT_THREADS_PER_SM = 1024
"""The threads per SM the blocks of a split row (`split` > 1) are made to fit
(64 registers each): kernel-schedule counts that many resident, the
lowering makes it so."""


MAX_BLOCK = 1024
"""The most threads a CUDA block holds (every arch Molten targets)."""


@irdl_attr_definition
class ScheduleAttr(ParametrizedAttribute):
    """How a kernel runs: its family (`ScheduleFamily`), which picks its
    lowering, then that family's parameters (`SCHEDULE_FAMILIES` says
    which, and what each means there): `block`, the threads per block,
    always; rows per block, vector width and elements per thread for the
    memory-bound families; a tile (gemm: block M, N, K; attention: query
    rows, keys, head dim) for the others, with a warp tile on tensor cores,
    the `stages` of the copy pipeline (for a GEMV, the rows of B each thread
    has in flight), `split` (blocks a row; parts of K or of the keys),
    `k_lanes` (a GEMV's threads that share an output), `mma_warps` (4: an
    attention on wgmma), `pack` (query heads that share a KV head, in one
    block), and for the persistent TMA gemm `persistent` (its blocks) and
    `cluster` (blocks that share B's tile by multicast). Fields at their
    default print only where SCHEDULE_ALWAYS_PRINTED says.

    ```mlir
    #kernel.schedule<pointwise, block = 256, vector = 4, elements_per_thread = 4>
    #kernel.schedule<row_reduce, block = 1024, rows_per_block = 1, vector = 4,
                     elements_per_thread = 32, split = 128>
    #kernel.schedule<gemm_mma, block = 128, tile = [128, 128, 32],
                     warp = [64, 64], stages = 4>
    #kernel.schedule<gemv, block = 256, vector = 8, tile = [1, 16, 4096],
                     stages = 4, k_lanes = 128>
    #kernel.schedule<gemm_wgmma, block = 256, tile = [128, 256, 64],
                     warp = [64, 256], stages = 4>
    ```
    """

    name = "kernel.schedule"

    family: ScheduleFamilyAttr = param_def()
    block: IntAttr = param_def()
    rows_per_block: IntAttr = param_def()
    vector: IntAttr = param_def()
    elements_per_thread: IntAttr = param_def()
    split: IntAttr = param_def()
    tile: ArrayAttr[IntAttr] = param_def()
    warp: ArrayAttr[IntAttr] = param_def()
    stages: IntAttr = param_def()
    k_lanes: IntAttr = param_def()
    mma_warps: IntAttr = param_def()
    pack: IntAttr = param_def()
    persistent: IntAttr = param_def()
    cluster: IntAttr = param_def()

    def __init__(
        self,
        family: ScheduleFamily | str,
        block: int,
        rows_per_block: int = 1,
        vector: int = 1,
        elements_per_thread: int = 1,
        tile: Sequence[int] = (),
        split: int = 1,
        warp: Sequence[int] = (),
        stages: int = 1,
        k_lanes: int = 1,
        mma_warps: int = 1,
        pack: int = 1,
        persistent: int = 0,
        cluster: int = 1,
    ):
        family = ScheduleFamily(family)
        given = {
            "block": block,
            "rows_per_block": rows_per_block,
            "vector": vector,
            "elements_per_thread": elements_per_thread,
            "split": split,
            "tile": tile,
            "warp": warp,
            "stages": stages,
            "k_lanes": k_lanes,
            "mma_warps": mma_warps,
            "pack": pack,
            "persistent": persistent,
            "cluster": cluster,
        }
        given.update(SCHEDULE_FAMILIES[family].implied)
        super().__init__(
            ScheduleFamilyAttr(family),
            *(
                _int_array(given[f])
                if f in SCHEDULE_ARRAY_FIELDS
                else IntAttr(given[f])
                for f in SCHEDULE_FIELD_ORDER
            ),
        )

    @property
    def parameters_of_family(self) -> FamilyParameters:
        return SCHEDULE_FAMILIES[self.family.data]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        family_span = parser._current_token.span
        family_word = parser.parse_optional_identifier()
        if family_word not in ScheduleFamily.__members__.values():
            given = f", not '{family_word}'" if family_word else ""
            parser.raise_error(
                f"a schedule starts with its family{given} (one of "
                f"{', '.join(ScheduleFamily)})",
                family_span,
            )
        family = ScheduleFamily(family_word)
        takes = ("block", *SCHEDULE_FAMILIES[family].fields)
        values: dict[str, Attribute] = {}
        while parser.parse_optional_punctuation(","):
            field_span = parser._current_token.span
            key = parser.parse_identifier()
            if key in values:
                parser.raise_error(f"schedule field '{key}' is given twice", field_span)
            if key not in SCHEDULE_FIELD_ORDER:
                parser.raise_error(
                    f"unknown schedule field '{key}' (a {family} schedule takes "
                    f"{', '.join(takes)})",
                    field_span,
                )
            if key not in takes:
                parser.raise_error(
                    f"a {family} schedule takes no '{key}' (it takes "
                    f"{', '.join(takes)})",
                    field_span,
                )
            parser.parse_punctuation("=")
            if key in SCHEDULE_ARRAY_FIELDS:
                values[key] = _parse_int_array(parser)
            else:
                values[key] = IntAttr(parser.parse_integer(allow_negative=False))
        parser.parse_punctuation(">")
        if "block" not in values:
            parser.raise_error("a schedule needs 'block'")
        implied = SCHEDULE_FAMILIES[family].implied
        return (
            ScheduleFamilyAttr(family),
            *(
                values[f]
                if f in values
                else ArrayAttr([])
                if f in SCHEDULE_ARRAY_FIELDS
                else IntAttr(implied.get(f, SCHEDULE_DEFAULTS[f]))
                for f in SCHEDULE_FIELD_ORDER
            ),
        )

    def print_parameters(self, printer: Printer) -> None:
        takes = ("block", *self.parameters_of_family.fields)
        fields = [self.family.data.value]
        for f in SCHEDULE_FIELD_ORDER:
            value = getattr(self, f)
            if f not in takes:
                continue
            if f in SCHEDULE_ARRAY_FIELDS:
                if value.data or f in SCHEDULE_ALWAYS_PRINTED:
                    fields.append(f"{f} = {_format_ints(value)}")
            elif f in SCHEDULE_ALWAYS_PRINTED or value.data != SCHEDULE_DEFAULTS[f]:
                fields.append(f"{f} = {value.data}")
        printer.print_string(f"<{', '.join(fields)}>")

    def verify(self) -> None:
        family = self.family.data
        parameters = SCHEDULE_FAMILIES[family]
        where = f"#kernel.schedule<{family}>"
        for f in SCHEDULE_FIELD_ORDER[1:]:
            if f in parameters.fields:
                continue
            value = getattr(self, f)
            expected = parameters.implied.get(
                f, [] if f in SCHEDULE_ARRAY_FIELDS else SCHEDULE_DEFAULTS[f]
            )
            got = [v.data for v in value] if f in SCHEDULE_ARRAY_FIELDS else value.data
            if got != expected:
                raise VerifyException(
                    f"{where}: a {family} schedule takes no {f} (given {got}; it "
                    f"takes block, {', '.join(parameters.fields)})"
                )
        for f in SCHEDULE_FIELD_ORDER:
            if f in SCHEDULE_ARRAY_FIELDS:
                if any(t.data < 1 for t in getattr(self, f)):
                    raise VerifyException(f"{where}: {f} sizes must be >= 1")
            elif f != "persistent" and getattr(self, f).data < 1:
                raise VerifyException(f"{where}: {f} must be >= 1")
        if self.block.data > MAX_BLOCK:
            raise VerifyException(
                f"{where}: block = {self.block.data} is more threads than "
                f"a CUDA block holds ({MAX_BLOCK})"
            )
        if "stages" in parameters.fields and self.stages.data > MAX_STAGES:
            raise VerifyException(
                f"{where}: stages = {self.stages.data} is more than a pipeline "
                f"of {family} keeps in flight (at most {MAX_STAGES})"
            )
        if self.block.data % self.rows_per_block.data:
            raise VerifyException(
                f"{where}: rows_per_block = {self.rows_per_block.data} "
                f"does not divide block = {self.block.data}"
            )
        if "tile" in parameters.fields and len(self.tile) != 3:
            sizes = "query rows, keys, head dim"
            if family != ScheduleFamily.ATTENTION:
                sizes = "M, N, K"
            raise VerifyException(
                f"{where}: tile = {_format_ints(self.tile)} must give three "
                f"sizes ({sizes})"
            )
        if "warp" in parameters.fields and len(self.warp) != 2:
            raise VerifyException(
                f"{where}: warp = {_format_ints(self.warp)} must give two sizes "
                "(a warp's or warpgroup's M, N)"
            )
        if self.mma_warps.data not in (1, WARPGROUP_WARPS):
            raise VerifyException(
                f"{where}: mma_warps = {self.mma_warps.data} must be 1 "
                f"(mma.sync) or {WARPGROUP_WARPS} (wgmma)"
            )
        if family != ScheduleFamily.GEMM_TMA:
            return
        if self.persistent.data < 1:
            raise VerifyException(
                f"{where}: persistent = {self.persistent.data}: a persistent "
                "kernel needs its blocks (>= 1)"
            )
        if self.cluster.data not in CLUSTER_SIZES:
            raise VerifyException(
                f"{where}: cluster = {self.cluster.data} must be one of "
                f"{', '.join(map(str, CLUSTER_SIZES))}"
            )
        if self.persistent.data % self.cluster.data:
            raise VerifyException(
                f"{where}: cluster = {self.cluster.data} needs a persistent "
                f"kernel of whole clusters, not persistent = {self.persistent.data}"
            )


CLUSTER_SIZES = (1, 2, 4)
"""Blocks a persistent gemm's cluster may hold (the multicast's share of B
is a whole number of 8-row swizzle atoms for tiles of 64 to 256 columns)."""
MMA_FRAGMENT = (16, 8, 16)
"""M, N, K of a tensor-core gemm's fragment: the mma.sync m16n8k16 a warp
issues."""
TF32_FRAGMENT = (16, 8, 8)
"""The fragment of a tensor-core gemm of f32 operands: the mma.sync m16n8k8
on tf32 a warp issues (three a product: 3xTF32)."""
WARPGROUP_WARPS = 4
"""The warps of a warpgroup, which issue one wgmma together."""
GEMM_DIMS = ("m", "n", "k")
"""The loops of a gemm that `#kernel.tiling`'s `partial` names."""
TILING_FIELDS = (
    "grid",
    "block",
    "warp",
    "fragment",
    "stages",
    "k_steps",
    "partial",
    "lhs",
    "rhs",
    "split",
)
"""The fields of `#kernel.tiling`, in printing order (`warp` only when
given, `split` only above 1)."""
_TILING_LENGTHS = {"grid": 3, "block": 3, "fragment": 3, "lhs": 3, "rhs": 3}


@irdl_attr_definition
class VariantAttr(ParametrizedAttribute):
    """One schedule of a kernel whose size along a named dimension is known
    at run time only (a gemm's M): the schedule it runs under while that
    size is at most `most` (0: any size above the variants before it). A
    kernel.func's `variants` are in increasing order; the launcher runs the
    first whose bound holds. The last is open-ended, or bounded where the
    copy of the graph that launches the kernel runs up to that size only
    (`#molten.sizes`).

    ```mlir
    #kernel.variant<T <= 8, #kernel.schedule<gemv, block = 256, ...>>
    #kernel.variant<T, #kernel.schedule<gemm_tma, block = 384, ...>>
    ```
    """

    name = "kernel.variant"

    dim: StringAttr = param_def()
    most: IntAttr = param_def()
    schedule: ScheduleAttr = param_def()

    def __init__(self, dim: str, most: int, schedule: ScheduleAttr):
        super().__init__(StringAttr(dim), IntAttr(most), schedule)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        dim = parser.parse_identifier()
        most = 0
        if parser.parse_optional_punctuation("<"):
            parser.parse_punctuation("=")
            most = parser.parse_integer(allow_negative=False)
        parser.parse_punctuation(",")
        schedule = parser.parse_attribute()
        parser.parse_punctuation(">")
        return (StringAttr(dim), IntAttr(most), schedule)

    def print_parameters(self, printer: Printer) -> None:
        bound = f" <= {self.most.data}" if self.most.data else ""
        printer.print_string(f"<{self.dim.data}{bound}, ")
        printer.print_attribute(self.schedule)
        printer.print_string(">")

    def verify(self) -> None:
        if not self.dim.data.isidentifier():
            raise VerifyException(
                f"#kernel.variant: {self.dim.data!r} is not a dimension name"
            )


TARGET_INT_FIELDS = (
    "sm_count",
    "shared_per_block",
    "shared_per_sm",
    "static_shared_per_block",
    "registers_per_sm",
    "l2_bytes",
    "copy_bytes_per_s",
    "tensor_flops",
)
"""The device facts of a `#kernel.target`, integers (bytes, bytes a second,
dense 16-bit tensor-core FLOP/s)."""
TARGET_FEATURES = ("wgmma", "tma", "clusters")


@irdl_attr_definition
class TargetAttr(ParametrizedAttribute):
    """The device a module's kernels are scheduled for: a name, the arch the
    source is compiled for, and the facts the schedules read (SMs, shared
    memory, registers, L2, the copy bandwidth, the tensor cores' rate, the
    features beyond the arch's baseline). A module carries it as its
    `kernel.target` attribute; `passes/schedule/target.py` names the known
    devices.

    ```mlir
    #kernel.target<"h100", arch = "sm_90a", sm_count = 132,
                   shared_per_block = 232448, shared_per_sm = 233472,
                   static_shared_per_block = 49152, registers_per_sm = 65536,
                   l2_bytes = 52428800, copy_bytes_per_s = 3000000000000,
                   tensor_flops = 989000000000000,
                   features = ["wgmma", "tma", "clusters"]>
    ```
    """

    name = "kernel.target"

    device: StringAttr = param_def()
    arch: StringAttr = param_def()
    facts: ArrayAttr[IntAttr] = param_def()
    """The TARGET_INT_FIELDS, in that order."""
    features: ArrayAttr[StringAttr] = param_def()

    def __init__(
        self, device: str, arch: str, facts: Sequence[int], features: Sequence[str]
    ):
        super().__init__(
            StringAttr(device),
            StringAttr(arch),
            _int_array(facts),
            ArrayAttr([StringAttr(f) for f in features]),
        )

    def fact(self, field: str) -> int:
        return self.facts.data[TARGET_INT_FIELDS.index(field)].data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        device = parser.parse_str_literal()
        values: dict[str, Attribute] = {}
        while parser.parse_optional_punctuation(","):
            span = parser._current_token.span
            key = parser.parse_identifier()
            fields = ("arch", *TARGET_INT_FIELDS, "features")
            if key not in fields or key in values:
                parser.raise_error(
                    f"target field '{key}' is unknown or given twice (fields: "
                    f"{', '.join(fields)})",
                    span,
                )
            parser.parse_punctuation("=")
            if key == "arch":
                values[key] = StringAttr(parser.parse_str_literal())
            elif key == "features":
                values[key] = ArrayAttr(
                    parser.parse_comma_separated_list(
                        parser.Delimiter.SQUARE,
                        lambda: StringAttr(parser.parse_str_literal()),
                    )
                )
            else:
                values[key] = IntAttr(parser.parse_integer(allow_negative=False))
        parser.parse_punctuation(">")
        missing = [f for f in ("arch", *TARGET_INT_FIELDS) if f not in values]
        if missing:
            parser.raise_error(f"#kernel.target needs {', '.join(missing)}")
        return (
            StringAttr(device),
            values["arch"],
            ArrayAttr([values[f] for f in TARGET_INT_FIELDS]),
            values.get("features", ArrayAttr([])),
        )

    def print_parameters(self, printer: Printer) -> None:
        facts = ", ".join(
            f"{f} = {v.data}"
            for f, v in zip(TARGET_INT_FIELDS, self.facts.data, strict=True)
        )
        features = ", ".join(f'"{f.data}"' for f in self.features.data)
        printer.print_string(
            f'<"{self.device.data}", arch = "{self.arch.data}", {facts}, '
            f"features = [{features}]>"
        )

    def verify(self) -> None:
        if len(self.facts) != len(TARGET_INT_FIELDS):
            raise VerifyException(
                f"#kernel.target: {len(TARGET_INT_FIELDS)} facts, not {len(self.facts)}"
            )
        if self.fact("sm_count") < 1:
            raise VerifyException("#kernel.target: sm_count must be >= 1")
        unknown = [f.data for f in self.features if f.data not in TARGET_FEATURES]
        if unknown:
            raise VerifyException(
                f"#kernel.target: unknown features {', '.join(unknown)} (known: "
                f"{', '.join(TARGET_FEATURES)})"
            )


def _parse_tiling_fields(
    parser: AttrParser,
    what: str,
    fields: Sequence[str],
    int_fields: Sequence[str],
) -> dict[str, Attribute]:
    """The `field = value` list of a tiling attribute (`what`, in errors):
    integers, `partial`'s loop names, else integer lists; each field once,
    none unknown."""
    values: dict[str, Attribute] = {}

    def parse_field() -> None:
        field_span = parser._current_token.span
        key = parser.parse_identifier()
        if key in values:
            parser.raise_error(f"tiling field '{key}' is given twice", field_span)
        if key not in fields:
            parser.raise_error(
                f"unknown {what} field '{key}' (fields: {', '.join(fields)})",
                field_span,
            )
        parser.parse_punctuation("=")
        if key in int_fields:
            values[key] = IntAttr(parser.parse_integer(allow_negative=False))
        elif key == "partial":
            dims = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, parser.parse_identifier
            )
            values[key] = ArrayAttr([StringAttr(d) for d in dims])
        else:
            values[key] = _parse_int_array(parser)

    parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parse_field)
    return values


def _printed_tiling_fields(
    attr: ParametrizedAttribute,
    fields: Sequence[str],
    omitted: dict[str, Attribute] | None = None,
) -> str:
    """`<field = value, ...>` of a tiling attribute, leaving out the fields
    whose value is their `omitted` default."""
    printed: list[str] = []
    for f in fields:
        value = getattr(attr, f)
        if omitted and omitted.get(f) == value:
            continue
        if isinstance(value, IntAttr):
            printed.append(f"{f} = {value.data}")
        elif f == "partial":
            printed.append(f"{f} = [{', '.join(d.data for d in value)}]")
        else:
            printed.append(f"{f} = {_format_ints(value)}")
    return f"<{', '.join(printed)}>"


def _verify_partial_and_pitches(
    where: str,
    attr: ParametrizedAttribute,
    dims: Sequence[str],
    boxes: Sequence[str],
) -> None:
    """A tiling's partial loops are some of `dims`, in order, and each of
    its `boxes` ([rows, cols, pitch]) has a pitch of at least its columns."""
    partial = [d.data for d in attr.partial]  # type: ignore[attr-defined]
    if partial != [d for d in dims if d in partial]:
        raise VerifyException(
            f"{where}: partial = [{', '.join(partial)}] must name each of "
            f"{', '.join(dims)} at most once, in that order"
        )
    for f in boxes:
        _, cols, pitch = (v.data for v in getattr(attr, f))
        if pitch < cols:
            raise VerifyException(
                f"{where}: {f} pitch {pitch} is shorter than its {cols} columns"
            )


@irdl_attr_definition
class TilingAttr(ParametrizedAttribute):
    """How the `tile` pass tiles a gemm kernel's iteration space
    S[b, i, j, k] (batch, M, N, K), derived from its schedule:

    * `grid`: blocks along x (N tiles), y (M tiles; 0 where M is named:
      the launch counts them from its size) and z (batches);
    * `block`, `warp`, `fragment`: the tile M, N, K of a block, of a warp
      (tensor cores only; omitted otherwise) and of one mma.sync, one
      thread's SIMT micro-tile or one GEMV thread's share (the block's rows,
      `vector` columns, its K step over k_lanes: the block's threads split
      K, each summing every k_lanes-th element);
    * `stages`: the tiles of each operand in flight in shared memory (for a
      GEMV, the rows of B each thread has in flight);
      `k_steps`: the block tiles along K, run in order;
    * `split` (printed when above 1): the parts K's steps split into
      (split-K), ceil(k_steps / split) steps each, one block per part: the
      grid's z is then batches x split, and the last block of a tile to
      finish its part adds the parts in order and runs the epilogue;
    * `partial`: the loops among `m`, `n`, `k` whose last tile sticks out of
      the iteration space (the lowering guards those);
    * `lhs`, `rhs`: per operand, the box one block reads in one K step, in
      the operand's storage order: [rows, cols, pitch], cols along its
      contiguous axis, pitch the shared-memory row length in elements.

    ```mlir
    #kernel.tiling<grid = [2, 2, 1], block = [128, 128, 32], warp = [64, 64],
                   fragment = [16, 8, 16], stages = 4, k_steps = 2,
                   partial = [], lhs = [128, 32, 40], rhs = [32, 128, 136]>
    ```
    """

    name = "kernel.tiling"

    grid: ArrayAttr[IntAttr] = param_def()
    block: ArrayAttr[IntAttr] = param_def()
    warp: ArrayAttr[IntAttr] = param_def()
    fragment: ArrayAttr[IntAttr] = param_def()
    stages: IntAttr = param_def()
    k_steps: IntAttr = param_def()
    partial: ArrayAttr[StringAttr] = param_def()
    lhs: ArrayAttr[IntAttr] = param_def()
    rhs: ArrayAttr[IntAttr] = param_def()
    split: IntAttr = param_def()

    def __init__(
        self,
        grid: Sequence[int],
        block: Sequence[int],
        warp: Sequence[int],
        fragment: Sequence[int],
        stages: int,
        k_steps: int,
        partial: Sequence[str],
        lhs: Sequence[int],
        rhs: Sequence[int],
        split: int = 1,
    ):
        super().__init__(
            _int_array(grid),
            _int_array(block),
            _int_array(warp),
            _int_array(fragment),
            IntAttr(stages),
            IntAttr(k_steps),
            ArrayAttr([StringAttr(d) for d in partial]),
            _int_array(lhs),
            _int_array(rhs),
            IntAttr(split),
        )

    @property
    def part_steps(self) -> int:
        """The K steps of each part but perhaps the last (all of them
        without split-K)."""
        return part_steps(self.k_steps.data, self.split.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values = _parse_tiling_fields(
            parser, "tiling", TILING_FIELDS, ("stages", "k_steps", "split")
        )
        missing = [
            f for f in TILING_FIELDS if f not in ("warp", "split") and f not in values
        ]
        if missing:
            parser.raise_error(f"a tiling needs {', '.join(map(repr, missing))}")
        values.setdefault("warp", ArrayAttr([]))
        values.setdefault("split", IntAttr(1))
        return tuple(values[f] for f in TILING_FIELDS)

    def print_parameters(self, printer: Printer) -> None:
        omitted = {"warp": ArrayAttr([]), "split": IntAttr(1)}
        printer.print_string(_printed_tiling_fields(self, TILING_FIELDS, omitted))

    def verify(self) -> None:
        for f, length in _TILING_LENGTHS.items():
            if len(getattr(self, f)) != length:
                raise VerifyException(
                    f"#kernel.tiling: {f} = {_format_ints(getattr(self, f))} must "
                    f"give {length} sizes"
                )
        if len(self.warp) not in (0, 2):
            raise VerifyException(
                f"#kernel.tiling: warp = {_format_ints(self.warp)} must give two "
                "sizes (warp tile M, N) or none"
            )
        for f in ("grid", "block", "warp", "fragment", "lhs", "rhs"):
            sizes = list(getattr(self, f))
            if f == "grid":  # y: 0 where M is named (counted at launch)
                sizes = [sizes[0], sizes[2]]
            if any(v.data < 1 for v in sizes):
                raise VerifyException(f"#kernel.tiling: {f} sizes must be >= 1")

        for f in ("stages", "k_steps", "split"):
            if getattr(self, f).data < 1:
                raise VerifyException(f"#kernel.tiling: {f} must be >= 1")
        split, k_steps = self.split.data, self.k_steps.data
        if leaves_empty_part(k_steps, split):
            raise VerifyException(
                f"#kernel.tiling: split = {split} leaves a part of {k_steps} K "
                f"steps in parts of {self.part_steps} empty"
            )
        _verify_partial_and_pitches("#kernel.tiling", self, GEMM_DIMS, ("lhs", "rhs"))


ATTENTION_TILING_FIELDS = (
    "grid",
    "block",
    "key_steps",
    "partial",
    "query",
    "key",
    "value",
)
"""The fields of `#kernel.attention_tiling`, in printing order."""
ATTENTION_DIMS = ("queries", "keys")
"""The loops of an attention that `#kernel.attention_tiling`'s `partial`
names."""


@irdl_attr_definition
class AttentionTilingAttr(ParametrizedAttribute):
    """How the `tile` pass tiles an attention kernel's iteration space
    S[g, i, j, d, e] (batch groups of `pack` query heads, their query rows
    one after another, keys, head dim, value head dim), derived from its
    schedule:

    * `grid`: blocks along x (tiles of query rows; 0 where the queries'
      length is named: the launch counts them), y (batch groups) and z
      (the parts of the keys, `split`);
    * `block`: the schedule's tile (query rows, keys, head dim);
    * `key_steps`: the tiles of keys the key loop runs through (0 where
      their length is named: the kernel counts them);
    * `partial`: the loops among `queries`, `keys` whose last tile sticks
      out of the iteration space, for some length where one is named (the
      lowering guards those);
    * `query`, `key`, `value`: the box one block reads of each in one step,
      [rows, cols, pitch], pitch the shared-memory row length in elements.

    ```mlir
    #kernel.attention_tiling<grid = [2, 16, 1], block = [64, 64, 64],
                             key_steps = 2, partial = [queries, keys],
                             query = [64, 64, 72], key = [64, 64, 72],
                             value = [64, 64, 72]>
    ```
    """

    name = "kernel.attention_tiling"

    grid: ArrayAttr[IntAttr] = param_def()
    block: ArrayAttr[IntAttr] = param_def()
    key_steps: IntAttr = param_def()
    partial: ArrayAttr[StringAttr] = param_def()
    query: ArrayAttr[IntAttr] = param_def()
    key: ArrayAttr[IntAttr] = param_def()
    value: ArrayAttr[IntAttr] = param_def()

    def __init__(
        self,
        grid: Sequence[int],
        block: Sequence[int],
        key_steps: int,
        partial: Sequence[str],
        query: Sequence[int],
        key: Sequence[int],
        value: Sequence[int],
    ):
        super().__init__(
            _int_array(grid),
            _int_array(block),
            IntAttr(key_steps),
            ArrayAttr([StringAttr(d) for d in partial]),
            _int_array(query),
            _int_array(key),
            _int_array(value),
        )

    def partial_along(self, dim: str) -> bool:
        return StringAttr(dim) in self.partial.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values = _parse_tiling_fields(
            parser, "attention tiling", ATTENTION_TILING_FIELDS, ("key_steps",)
        )
        missing = [f for f in ATTENTION_TILING_FIELDS if f not in values]
        if missing:
            parser.raise_error(
                f"an attention tiling needs {', '.join(map(repr, missing))}"
            )
        return tuple(values[f] for f in ATTENTION_TILING_FIELDS)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(_printed_tiling_fields(self, ATTENTION_TILING_FIELDS))

    def verify(self) -> None:
        where = "#kernel.attention_tiling"
        for f in ("grid", "block", "query", "key", "value"):
            values = [v.data for v in getattr(self, f)]
            if len(values) != 3:
                raise VerifyException(f"{where}: {f} must give 3 sizes")
            if f == "grid":  # x: 0 where the queries are named
                values = values[1:]
            if any(v < 1 for v in values):
                raise VerifyException(f"{where}: {f} sizes must be >= 1")
        _verify_partial_and_pitches(
            where, self, ATTENTION_DIMS, ("query", "key", "value")
        )


def matmuls_side_by_side(body_ops: Sequence[Operation]) -> bool:
    """Whether a gemm kernel's body reads several of its matmuls in one op
    (silu(gate) * up): its tiles then hold each matmul's tile of the same
    place, side by side."""
    reads: dict[SSAValue, frozenset[Operation]] = {}
    for op in body_ops:
        if op.has_trait(IsTerminator):
            continue  # the kernel's yield of its outputs
        found = frozenset().union(*(reads.get(v, frozenset()) for v in op.operands))
        if isinstance(op, molten.MatmulOp):
            found = found | {op}
        if len(found) > 1:
            return True
        for result in op.results:
            reads[result] = found
    return False


def computes_matmul_lhs(body_ops: Sequence[Operation]) -> bool:
    """Whether a gemm kernel computes a matmul's lhs (fuse-prologue)."""
    inside = set(body_ops)
    return any(
        isinstance(op, molten.MatmulOp) and op.lhs.owner in inside for op in body_ops
    )


@irdl_attr_definition
class GemmMatchAttr(ParametrizedAttribute):
    """What the fusion passes found in a gemm kernel, where it is more than
    matmuls and their epilogue: `side_by_side`, an op reads several of its
    matmuls (silu(gate) * up), so each tile holds each one's tile of the
    same place; `prologue`, the kernel computes a matmul's lhs. A gemm
    kernel without the attribute is neither. The verifier checks it against
    the body; the passes below read it.

    ```mlir
    #kernel.gemm_match<side_by_side>
    #kernel.gemm_match<prologue>
    ```
    """

    name = "kernel.gemm_match"

    side_by_side: IntAttr = param_def()
    prologue: IntAttr = param_def()

    def __init__(self, side_by_side: bool, prologue: bool):
        super().__init__(IntAttr(int(side_by_side)), IntAttr(int(prologue)))

    @staticmethod
    def of_body(body_ops: Sequence[Operation]) -> GemmMatchAttr | None:
        """The record of a gemm kernel's body; None where there is nothing
        to record."""
        together, prologue = (
            matmuls_side_by_side(body_ops),
            computes_matmul_lhs(body_ops),
        )
        return GemmMatchAttr(together, prologue) if together or prologue else None

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        flags: set[str] = set()

        def parse_flag() -> None:
            span = parser._current_token.span
            flag = parser.parse_identifier()
            if flag not in GEMM_MATCH_FLAGS or flag in flags:
                parser.raise_error(
                    f"a gemm match takes each of {', '.join(GEMM_MATCH_FLAGS)} "
                    f"at most once, not '{flag}'",
                    span,
                )
            flags.add(flag)

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parse_flag)
        return tuple(IntAttr(int(f in flags)) for f in GEMM_MATCH_FLAGS)

    def print_parameters(self, printer: Printer) -> None:
        flags = [f for f in GEMM_MATCH_FLAGS if getattr(self, f).data]
        printer.print_string(f"<{', '.join(flags)}>")

    def verify(self) -> None:
        if not (self.side_by_side.data or self.prologue.data):
            raise VerifyException(
                "#kernel.gemm_match: records side_by_side, prologue or both "
                "(a plain gemm kernel has none)"
            )


GEMM_MATCH_FLAGS = ("side_by_side", "prologue")

ATTENTION_MATCH_FIELDS = ("query", "key", "value", "group")


@irdl_attr_definition
class AttentionMatchAttr(ParametrizedAttribute):
    """What fuse-attention matched in an attention kernel: which of its
    inputs are q, k and v (by position; self-attention's may be one), how
    many consecutive query heads read the same K and V (`group`: 1 unless
    KV heads are shared while the queries are consecutive in memory), and
    whether the scores end in the causal mask. Every attention kernel has
    one; the passes below read it instead of matching the body again.

    ```mlir
    #kernel.attention_match<query = 0, key = 1, value = 2, group = 7, causal>
    ```
    """

    name = "kernel.attention_match"

    query: IntAttr = param_def()
    key: IntAttr = param_def()
    value: IntAttr = param_def()
    group: IntAttr = param_def()
    causal: IntAttr = param_def()

    def __init__(self, query: int, key: int, value: int, group: int, causal: bool):
        super().__init__(
            IntAttr(query),
            IntAttr(key),
            IntAttr(value),
            IntAttr(group),
            IntAttr(int(causal)),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: dict[str, int] = {}

        def parse_field() -> None:
            span = parser._current_token.span
            key = parser.parse_identifier()
            if key in values or key not in (*ATTENTION_MATCH_FIELDS, "causal"):
                parser.raise_error(
                    f"an attention match takes each of "
                    f"{', '.join(ATTENTION_MATCH_FIELDS)} = N and causal at most "
                    f"once, not '{key}'",
                    span,
                )
            if key == "causal":
                values[key] = 1
                return
            parser.parse_punctuation("=")
            values[key] = parser.parse_integer(allow_negative=False)

        parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parse_field)
        missing = [f for f in ATTENTION_MATCH_FIELDS if f not in values]
        if missing:
            parser.raise_error(
                f"an attention match needs {', '.join(map(repr, missing))}"
            )
        return tuple(
            IntAttr(values.get(f, 0)) for f in (*ATTENTION_MATCH_FIELDS, "causal")
        )

    def print_parameters(self, printer: Printer) -> None:
        fields = [f"{f} = {getattr(self, f).data}" for f in ATTENTION_MATCH_FIELDS]
        printer.print_string(
            f"<{', '.join(fields)}{', causal' if self.causal.data else ''}>"
        )

    def verify(self) -> None:
        if self.group.data < 1:
            raise VerifyException("#kernel.attention_match: group must be >= 1")


def _verify_body_kind(where: str, kind: KernelKind, body: Region) -> None:
    """A kernel's body holds what its kind computes: a row_reduce kernel a
    reduction, a scan kernel one scan (cumsum, cumprod, cummax, cummin), a
    scatter kernel one scatter, a gemm kernel a matmul."""
    ops = list(body.block.ops)
    needed = {
        KernelKind.ROW_REDUCE: (molten.ReductionOp, "a reduction"),
        KernelKind.SCAN: (molten.ScanOp, "a scan"),
        KernelKind.SCATTER: (molten.ScatterOp, "a scatter"),
        KernelKind.GEMM: (molten.MatmulOp, "a matmul"),
    }.get(kind)
    if needed is None:
        return
    op_type, what = needed
    count = sum(isinstance(op, op_type) for op in ops)
    if count == 0:
        raise VerifyException(
            f"{where}: a {kind.value} kernel computes {what}; its body has none"
        )
    if kind in (KernelKind.SCAN, KernelKind.SCATTER) and count > 1:
        raise VerifyException(
            f"{where}: a {kind.value} kernel computes one {what[2:]}; its body "
            f"has {count}"
        )


def _verify_matched(
    where: str,
    kind: KernelKind,
    matched: Attribute | None,
    body: Region,
) -> None:
    """An attention kernel has its attention match, naming inputs that are
    16-bit matrices, and two matmuls; a gemm kernel's match (or its absence)
    is what its body holds; no other kernel has one."""
    ops = list(body.block.ops)
    if kind == KernelKind.GEMM:
        found = GemmMatchAttr.of_body(ops)
        if matched != found:
            described = found or "none (one matmul or siblings one after another)"
            raise VerifyException(
                f"{where}: the gemm kernel's match is {matched or 'none'}, but its "
                f"body's is {described}"
            )
        return
    if kind != KernelKind.ATTENTION:
        if matched is not None:
            raise VerifyException(
                f"{where}: only gemm and attention kernels record a match, not "
                f"a {kind.value} kernel"
            )
        return
    if not isinstance(matched, AttentionMatchAttr):
        raise VerifyException(
            f"{where}: an attention kernel needs its "
            "#kernel.attention_match<query = ..., key = ..., value = ..., group = ...> "
            "(fuse-attention records it)"
        )
    args = body.block.args
    for field in ("query", "key", "value"):
        index = getattr(matched, field).data
        if index >= len(args):
            raise VerifyException(
                f"{where}: the attention's {field} is input {index}, but the kernel "
                f"has {len(args)} inputs"
            )
        t = args[index].type
        element = t.element_type if isinstance(t, TensorType) else None
        if not isinstance(element, Float16Type | BFloat16Type) or len(t.shape) < 2:  # type: ignore[union-attr]
            raise VerifyException(
                f"{where}: the attention's {field} (input {index}) is {t}, not an "
                "f16 or bf16 tensor of matrices"
            )
    if sum(isinstance(op, molten.MatmulOp) for op in ops) != 2:
        raise VerifyException(
            f"{where}: an attention kernel's body has two matmuls, q @ kᵀ and p @ v"
        )


def verify_schedule_kind(
    where: str, kind: KernelKind, schedules: Sequence[ScheduleAttr]
) -> None:
    """Each schedule's family is one of the kernel's kind."""
    for schedule in schedules:
        family = schedule.family.data
        if SCHEDULE_FAMILIES[family].kind != kind:
            families = [f.value for f, p in SCHEDULE_FAMILIES.items() if p.kind == kind]
            raise VerifyException(
                f"{where}: a {family} schedule does not schedule a {kind.value} "
                f"kernel (its families: {', '.join(families)})"
            )


def _verify_yield_types(op_name: str, body: Region, types: Sequence[Attribute]):
    terminator = body.block.last_op
    if not isinstance(terminator, YieldOp):
        raise VerifyException(f"{op_name}: the body must end in kernel.yield")
    yielded = [v.type for v in terminator.values]
    if yielded != list(types):
        raise VerifyException(
            f"{op_name}: kernel.yield gives ({', '.join(map(str, yielded))}) but the "
            f"op returns ({', '.join(map(str, types))})"
        )


@irdl_op_definition
class FusedOp(IRDLOperation):
    """A group of molten ops computed by one kernel (see the module docstring)."""

    name = "kernel.fused"

    inputs = var_operand_def()
    outputs = var_result_def()
    kind = prop_def(KernelKindAttr)
    matched = opt_prop_def(AttentionMatchAttr | GemmMatchAttr)
    schedule = opt_prop_def(ScheduleAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), Pure())
    assembly_format = (
        "$kind (`matched` $matched^)? (`schedule` $schedule^)? `(` $inputs `)` "
        "attr-dict `:` functional-type($inputs, $outputs) $body"
    )

    def __init__(
        self,
        kind: KernelKind,
        inputs: Sequence[SSAValue],
        output_types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            properties={"kind": KernelKindAttr(kind)},
            regions=[body],
        )

    def verify_(self) -> None:
        arg_types = [a.type for a in self.body.block.args]
        if arg_types != [v.type for v in self.inputs]:
            raise VerifyException(
                "kernel.fused: block argument types must match the inputs"
            )
        _verify_yield_types(self.name, self.body, self.result_types)
        _verify_body_kind("kernel.fused", self.kind.data, self.body)
        _verify_matched("kernel.fused", self.kind.data, self.matched, self.body)
        if self.schedule is not None:
            verify_schedule_kind("kernel.fused", self.kind.data, [self.schedule])


class KernelFuncCallable(CallableOpInterface):
    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        assert isinstance(op, FuncOp)
        return op.body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, FuncOp)
        return op.function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        assert isinstance(op, FuncOp)
        return op.function_type.outputs.data


class LaunchSymbolUser(SymbolUserOpInterface):
    """A launch names an existing kernel.func whose type matches its own."""

    def verify(self, op: Operation) -> None:
        assert isinstance(op, LaunchOp)
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if not isinstance(callee, FuncOp):
            raise VerifyException(
                f"kernel.launch: {op.callee} is not a kernel.func in this module"
            )
        want = callee.function_type
        got_in = [v.type for v in op.inputs]
        if list(want.inputs.data) != got_in or list(want.outputs.data) != list(
            op.result_types
        ):
            raise VerifyException(
                f"kernel.launch: the types do not match {op.callee}: {want}"
            )


@irdl_op_definition
class FuncOp(IRDLOperation):
    """An outlined kernel: a symbol whose body is one fused group.

    ```mlir
    kernel.func @fused_rmsnorm_kernel0(%x: tensor<4x8xf32>) -> tensor<4x8xf32>
        row_reduce schedule #kernel.schedule<row_reduce, block = 32, ...> {
      ...
      kernel.yield %r : tensor<4x8xf32>
    }
    ```
    The `fused_ops` property lists the ops of the original graph the kernel
    computes, for the comment above the generated CUDA kernel. A gemm kernel
    gets a `tiling #kernel.tiling<...>` after its schedule from the `tile`
    pass, which derives it from the schedule.

    A kernel whose work grows with a size known at run time only (a gemm
    over a named M) may have `variants` instead of a schedule: a schedule
    per size class, each lowered to a kernel of its own, the launcher
    picking one by the size:

    ```mlir
    kernel.func @mm(%x: tensor<?x4096xbf16, ["T"]>, ...) -> (...) gemm
        variants [#kernel.variant<T <= 8, #kernel.schedule<...>>,
                  #kernel.variant<T, #kernel.schedule<...>>] {
    ```
    """

    name = "kernel.func"

    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    kind = prop_def(KernelKindAttr)
    matched = opt_prop_def(AttentionMatchAttr | GemmMatchAttr)
    schedule = opt_prop_def(ScheduleAttr)
    tiling = opt_prop_def(TilingAttr | AttentionTilingAttr)
    variants = opt_prop_def(ArrayAttr[VariantAttr])
    fused_ops = opt_prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), KernelFuncCallable())

    def __init__(
        self,
        sym_name: str,
        kind: KernelKind,
        function_type: FunctionType,
        body: Region,
        fused_ops: Sequence[str] = (),
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "function_type": function_type,
            "kind": KernelKindAttr(kind),
        }
        if fused_ops:
            properties["fused_ops"] = ArrayAttr([StringAttr(n) for n in fused_ops])
        super().__init__(properties=properties, regions=[body])

    def verify_(self) -> None:
        arg_types = [a.type for a in self.body.block.args]
        if arg_types != list(self.function_type.inputs.data):
            raise VerifyException(
                f"kernel.func @{self.sym_name.data}: block argument types must "
                "match the function type's inputs"
            )
        _verify_yield_types(self.name, self.body, self.function_type.outputs.data)
        _verify_body_kind(
            f"kernel.func @{self.sym_name.data}", self.kind.data, self.body
        )
        _verify_matched(
            f"kernel.func @{self.sym_name.data}",
            self.kind.data,
            self.matched,
            self.body,
        )
        verify_schedule_kind(
            f"kernel.func @{self.sym_name.data}",
            self.kind.data,
            [
                *([self.schedule] if self.schedule is not None else []),
                *(v.schedule for v in self.variants or ()),
            ],
        )
        if self.tiling is not None:
            self._verify_tiling(self.tiling)
        if self.variants is not None:
            self._verify_variants(list(self.variants))

    def _verify_variants(self, variants: list[VariantAttr]) -> None:
        """Variants replace the schedule: bounds increasing along one named
        dimension of the kernel's types, the last open-ended."""
        where = f"kernel.func @{self.sym_name.data}"
        if self.schedule is not None or self.tiling is not None:
            raise VerifyException(
                f"{where}: a kernel has a schedule (and tiling) or variants, not both"
            )
        if not variants:
            raise VerifyException(f"{where}: variants must give at least one")
        dims = {v.dim.data for v in variants}
        named = {
            d
            for t in [*self.function_type.inputs.data, *self.function_type.outputs.data]
            if isinstance(t, TensorType)
            for d in molten.dims_of(t)
            if isinstance(d, str)
        }
        if len(dims) != 1 or not dims <= named:
            raise VerifyException(
                f"{where}: variants choose by one named dimension of the kernel's "
                f"types ({', '.join(sorted(named)) or 'none'}), not "
                f"{', '.join(sorted(dims))}"
            )
        bounds = [v.most.data for v in variants]
        bounded = bounds[:-1] if bounds[-1] == 0 else bounds
        if 0 in bounded or bounded != sorted(set(bounded)):
            raise VerifyException(
                f"{where}: variants' bounds must increase, the last open-ended "
                f"(no bound) or the most of its graph copy's sizes, not {bounds}"
            )

    def tiling_under(
        self, schedule: ScheduleAttr
    ) -> TilingAttr | AttentionTilingAttr | None:
        """The kernel's tiling where it is that of `schedule` (the `tile`
        pass's), else None: a variant's schedule, or one changed after the
        pass, is tiled again by whoever asks."""
        return self.tiling if self.schedule == schedule else None

    def _verify_tiling(self, tiling: TilingAttr | AttentionTilingAttr) -> None:
        """A tiling is the schedule's, of a gemm kernel (#kernel.tiling) or an
        attention (#kernel.attention_tiling)."""
        where = f"kernel.func @{self.sym_name.data}"
        kind = self.kind.data
        if kind not in (KernelKind.GEMM, KernelKind.ATTENTION):
            raise VerifyException(
                f"{where}: only gemm and attention kernels are tiled, not {kind.value}"
            )
        expected = TilingAttr if kind == KernelKind.GEMM else AttentionTilingAttr
        if not isinstance(tiling, expected):
            article = "an" if kind.value[0] in "aeiou" else "a"
            raise VerifyException(
                f"{where}: {article} {kind.value} kernel's tiling is a #{expected.name}"
            )
        schedule = self.schedule
        if schedule is None:
            raise VerifyException(f"{where}: a tiling needs a schedule")
        if isinstance(tiling, AttentionTilingAttr):
            if tiling.block != schedule.tile:
                raise VerifyException(
                    f"{where}: the tiling's block = {_format_ints(tiling.block)} "
                    f"is not the schedule's tile = {_format_ints(schedule.tile)}"
                )
            return
        for field, ours, theirs in (
            ("block", tiling.block, schedule.tile),
            ("warp", tiling.warp, schedule.warp),
        ):
            if ours != theirs:
                raise VerifyException(
                    f"{where}: the tiling's {field} = {_format_ints(ours)} is not "
                    f"the schedule's {'tile' if field == 'block' else field} = "
                    f"{_format_ints(theirs)}"
                )
        for field in ("stages", "split"):
            ours, theirs = getattr(tiling, field).data, getattr(schedule, field).data
            if ours != theirs:
                raise VerifyException(
                    f"{where}: the tiling's {field} = {ours} is not the "
                    f"schedule's {field} = {theirs}"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(") -> (")
        printer.print_list(self.function_type.outputs.data, printer.print_attribute)
        printer.print_string(f") {self.kind.data.value}")
        if self.matched is not None:
            printer.print_string(" matched ")
            printer.print_attribute(self.matched)
        if self.schedule is not None:
            printer.print_string(" schedule ")
            printer.print_attribute(self.schedule)
        if self.tiling is not None:
            printer.print_string(" tiling ")
            printer.print_attribute(self.tiling)
        if self.variants is not None:
            printer.print_string(" variants ")
            printer.print_attribute(self.variants)
        extra = {"fused_ops": self.fused_ops} if self.fused_ops is not None else {}
        printer.print_op_attributes({**self.attributes, **extra}, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        sym_name = parser.parse_symbol_name()
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
        )
        parser.parse_punctuation("->")
        outputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_type
        )
        kind = KernelKindAttr(parser.parse_str_enum(KernelKind))
        matched = None
        if parser.parse_optional_keyword("matched"):
            matched = parser.parse_attribute()
        schedule = None
        if parser.parse_optional_keyword("schedule"):
            schedule = parser.parse_attribute()
        tiling = None
        if parser.parse_optional_keyword("tiling"):
            tiling = parser.parse_attribute()
        variants = None
        if parser.parse_optional_keyword("variants"):
            variants = parser.parse_attribute()
        attributes = parser.parse_optional_attr_dict_with_keyword()
        extra = dict(attributes.data) if attributes is not None else {}
        body = parser.parse_region(args)
        properties: dict[str, Attribute] = {
            "sym_name": sym_name,
            "function_type": FunctionType.from_lists([a.type for a in args], outputs),
            "kind": kind,
        }
        if matched is not None:
            properties["matched"] = matched
        if schedule is not None:
            properties["schedule"] = schedule
        if tiling is not None:
            properties["tiling"] = tiling
        if variants is not None:
            properties["variants"] = variants
        if "fused_ops" in extra:
            properties["fused_ops"] = extra.pop("fused_ops")
        return cls.create(properties=properties, attributes=extra, regions=[body])


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The values a kernel body writes out.

    ```mlir
    kernel.yield %r, %s : tensor<8xf32>, tensor<8x1xf32>
    ```
    """

    name = "kernel.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(FusedOp, FuncOp), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


def iteration_domain(outputs: Sequence[SSAValue]) -> tuple[molten.Dim, ...]:
    """The shape a pointwise kernel iterates over: its largest output's (the
    others are broadcast into it; a named dimension counts as large), of
    the most dimensions where counts tie ([1, 1, 12] broadcasts into
    [1, 1, 1, 12], not the other way)."""
    shapes = [molten.value_dims(v) for v in outputs]
    return max(shapes, key=lambda s: (molten.element_count(s), len(s)))


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Runs an outlined kernel on its inputs: one step of the host schedule.

    ```mlir
    %r = kernel.launch @fused_rmsnorm_kernel0(%x, %w)
        : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
    """

    name = "kernel.launch"
    callee = prop_def(SymbolRefAttr)
    inputs = var_operand_def()
    outputs = var_result_def()
    traits = traits_def(LaunchSymbolUser())
    assembly_format = (
        "$callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"
    )

    def __init__(
        self, callee: str, inputs: Sequence[SSAValue], output_types: Sequence[Attribute]
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            properties={"callee": SymbolRefAttr(callee)},
        )


Kernel = Dialect(
    "kernel",
    [FusedOp, YieldOp, FuncOp, LaunchOp],
    [
        KernelKindAttr,
        ScheduleFamilyAttr,
        ScheduleAttr,
        TargetAttr,
        TilingAttr,
        AttentionTilingAttr,
        VariantAttr,
        GemmMatchAttr,
        AttentionMatchAttr,
    ],
)
