"""`kernel-schedule`: a `#kernel.schedule` for every kernel, by its family's rule.

Everything below the kernel level takes its launch and tiling parameters
from this attribute and invents none. The rules read the module's target
(`#kernel.target`, `passes/schedule/target.py`; the pass's `target`,
`arch` and `sm_count` options override it), and a kernel's kind picks its
rules, tried in the order of `rules.FAMILY_RULES`: the first that applies
schedules it. Each family's rule is a module of this package, whose
docstring says what it picks: `rows` (row_reduce), `scan`, `pointwise`,
`attention`, and the gemm families (`siblings`, `gemv`, `wgmma` with the
persistent TMA kernel, `gemm_mma`, `gemm_simt`). A kernel over a named
dimension gets a schedule per size class (`size_classes`).

A schedule already present (written by hand or by an autotuner) is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import kernel, molten
from molten.passes.schedule.common import (
    FamilyRule,
    KernelBody,
    first_rule,
    named_rows,
)
from molten.passes.schedule.rules import rules_of
from molten.passes.schedule.size_classes import (
    attention_variants,
    gemm_variants,
    launched_in_ranges,
    named_sequence,
)
from molten.passes.schedule.target import DEFAULT_TARGET, Target, pass_target


def rule_for(kind: kernel.KernelKind, body: KernelBody, target: Target) -> FamilyRule:
    """The first rule of `kind` that takes the kernel on the target."""
    rule = first_rule(rules_of(kind), body, target)
    if rule is not None:
        return rule
    raise NotImplementedError(f"kernel-schedule: no rule for {kind.value} kernels")


def schedule_for(
    kfunc: kernel.FuncOp | kernel.FusedOp, target: Target = DEFAULT_TARGET
) -> kernel.ScheduleAttr:
    """The schedule of a kernel on the target, by its family's rule."""
    body = KernelBody.of(kfunc)
    return rule_for(kfunc.kind.data, body, target).schedule(body, target)


def schedule_candidates(
    kfunc: kernel.FuncOp, count: int, target: Target = DEFAULT_TARGET
) -> list[kernel.ScheduleAttr]:
    """The schedules an autotuner times for a kernel, at most `count`, the
    rule's pick first (a family with one schedule has that alone)."""
    body = KernelBody.of(kfunc)
    return rule_for(kfunc.kind.data, body, target).candidates(body, target, count)


@dataclass
class ScheduleKernel(RewritePattern):
    target: Target
    sizes: dict[str, molten.SizeRangeAttr] = field(default_factory=dict)
    """The range of sizes of the graph copy that launches a kernel, by its
    name (split-size-classes)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: kernel.FuncOp | kernel.FusedOp, rewriter: PatternRewriter
    ):
        if op.schedule is not None or getattr(op, "variants", None) is not None:
            return
        ops = list(op.body.block.ops)
        kind = op.kind.data
        sizes = (
            self.sizes.get(op.sym_name.data) if isinstance(op, kernel.FuncOp) else None
        )
        if (
            isinstance(op, kernel.FuncOp)
            and kind == kernel.KernelKind.GEMM
            and named_rows(ops) is not None
        ):
            op.variants = ArrayAttr(gemm_variants(op, self.target, sizes))
            rewriter.notify_op_modified(op)
            return
        if (
            isinstance(op, kernel.FuncOp)
            and kind == kernel.KernelKind.ATTENTION
            and (dim := named_sequence(KernelBody.of(op))) is not None
        ):
            variants = attention_variants(op, dim, self.target, sizes)
            if len(variants) == 1:  # one schedule serves every size
                op.schedule = variants[0].schedule
            else:
                op.variants = ArrayAttr(variants)
            rewriter.notify_op_modified(op)
            return
        op.schedule = schedule_for(op, self.target)
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class KernelSchedule(ModulePass):
    """Attaches a #kernel.schedule to each kernel that has none, by its
    family's rule, for the module's target; `target` (a device or arch by
    name), `arch` and `sm_count` override it."""

    name = "kernel-schedule"

    target: str | None = None
    arch: str | None = None
    sm_count: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = pass_target(self.name, op, self.target, self.arch, self.sm_count)
        PatternRewriteWalker(
            ScheduleKernel(target, launched_in_ranges(op)),
            apply_recursively=False,
        ).rewrite_module(op)
