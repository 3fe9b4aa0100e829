"""Attention's flash loop: per tile of keys, the two products (`TileProducts`:
mma.sync's `attention_mma`, wgmma's `attention_wgmma`), the logits and the
online softmax, carrying each of a lane's rows' running max m and sum l
and its accumulators of O.

Per tile the products give S = Q Kᵀ; the elementwise ops on the scores
(a scale, masks, biases) are evaluated per element by the shared
Evaluator, taken to log2 units for exp2, keys past the end masked; each
row's max is taken across its quad's lanes, O is rescaled by exp2(m_old -
m_new), and the products add P V with P = exp2(S - m). Where the scores
end in the causal mask, the tiles every row of the block sees whole run in
a loop of their own that evaluates no mask.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects import math as mathd
from xdsl.ir import Block, Region, SSAValue

from molten.dialects import molten
from molten.passes.fuse_attention import AttentionPattern
from molten.passes.fusion import depends_on
from molten.passes.lowering.emitter import F32, Emitter, Index, element_of
from molten.passes.lowering.evaluator import Evaluator, round_to
from molten.passes.lowering.fragments import AccumulatorLayout
from molten.passes.lowering.pipeline import CopyPipeline, loop_steps
from molten.passes.lowering.reductions import lanes_reduce

LOG2E = math.log2(math.e)
FLT_MAX = float(np.finfo(np.float32).max)
APPROXIMATE = arith.FastMathFlagsAttr([arith.FastMathFlag.APPROX_FUNC])
"""The softmax's exp2 runs on the SFU alone (ex2.approx.ftz): weights below
2^-126 of the row's largest flush to zero, which the sum never sees."""


class TileProducts(Protocol):
    """The two products of the flash loop, per tile of keys: S = Q Kᵀ and
    O += P V, a lane's values of each in the products' `layouts` (S's,
    then O's). The loop calls, per tile: `scores`, the softmax, `settled`
    before O is rescaled, then `weighted`; `finished` after the loop.
    `pending` is what one tile leaves to the next (a P for wgmma's
    overlapped P V), starting from `pending_initial`."""

    layouts: tuple[AccumulatorLayout, AccumulatorLayout]
    tile_row: Index
    """The first row, in the block's, of the rows the unit issuing one
    product holds (a warp's, or a warpgroup's)."""
    async_proxy: bool
    """Whether the products read shared memory through the async proxy
    (wgmma): the copies are fenced for it (`CopyPipeline.async_proxy`)."""

    def pending_initial(self, e: Emitter) -> list[SSAValue]: ...

    def scores(
        self,
        e: Emitter,
        tile: tuple[Index, Index],
        o: list[SSAValue],
        pending: list[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue]]:
        """S for the tile of keys at `tile` = (its index, its stage), and O."""
        ...

    def settled(self, e: Emitter, o: list[SSAValue]) -> list[SSAValue]: ...

    def weighted(
        self, e: Emitter, stage: Index, p: list[SSAValue], o: list[SSAValue]
    ) -> tuple[list[SSAValue], list[SSAValue]]: ...

    def finished(
        self, e: Emitter, o: list[SSAValue], pending: list[SSAValue], count: Index
    ) -> list[SSAValue]: ...


def positive_scale(found: AttentionPattern) -> tuple[SSAValue, float] | None:
    """Where the logits are the scores times a positive constant c, then
    only causal masks added (0 or -inf, which a positive factor leaves as
    they are): the product and c. The softmax then takes its max on the
    unscaled scores and folds c into exp2's factor, log2(e) c: one fused
    multiply-add an element instead of two multiplies."""
    value = found.logits
    while isinstance(add := value.owner, molten.AddOp):
        masks = [v for v in add.operands if isinstance(v.owner, molten.CausalMaskOp)]
        others = [v for v in add.operands if v not in masks]
        if len(masks) != 1 or len(others) != 1:
            return None
        value = others[0]
    product = value.owner
    scores = found.scores.result
    if not isinstance(product, molten.MulOp) or element_of(scores) != F32:
        return None
    factors = [v for v in product.operands if v is not scores]
    if len(factors) != 1 or len(product.operands) != 2:
        return None
    (factor,) = factors
    constant = factor.owner
    one_element = all(d == 1 for d in molten.value_dims(factor))
    if not isinstance(constant, molten.ConstantOp) or not one_element:
        return None
    c = constant.splat_value()
    if c is None or not 0 < c < math.inf:
        return None
    return product.result, c


def has_operand_on_scores(found: AttentionPattern) -> bool:
    """Whether an op from the scores to the logits takes another tensor than
    a constant or the causal mask (a mask or a bias)."""
    scores = found.scores.result
    stack, seen = [found.logits], set()
    while stack:  # back from the logits along the values made from the scores
        value = stack.pop()
        if value is scores or value in seen:
            continue
        seen.add(value)
        if depends_on(value, {scores}):
            stack.extend(value.owner.operands)
        elif not isinstance(value.owner, molten.ConstantOp | molten.CausalMaskOp):
            return True  # an operand of an op on the scores
    return False


def causal_add(found: AttentionPattern) -> tuple[SSAValue, SSAValue] | None:
    """Where the scores end in the causal mask: the sum that adds it, the
    last op before the softmax (casts aside), and its other operand."""
    value = found.logits
    while isinstance(value.owner, molten.CastOp):
        value = value.owner.operands[0]
    add = value.owner
    if not found.causal or not isinstance(add, molten.AddOp):
        return None
    (unmasked,) = [
        v for v in add.operands if not isinstance(v.owner, molten.CausalMaskOp)
    ]
    return add.result, unmasked


@dataclass(frozen=True)
class KeyTiles:
    """The block's tiles of keys: `size` keys each, from tile `begin` of the
    keys' (a split's part starts inside them), `total` keys in all."""

    size: int
    begin: Index
    total: Index
    partial: bool
    """Whether the last tile sticks out of the keys (always, for all the
    kernel knows, where their number is named)."""
    clipped_unmasked: bool
    """Whether tiles the causal mask leaves whole may stick out too (the
    queries are not the keys: not a self-attention)."""


@dataclass(frozen=True)
class KeyLoop:
    """The flash loop of a block (see the module docstring): a lane's rows
    of the queries (`lane_rows`: their batch index and row, kept inside the
    queries) and its first column of S (`lane_col`); `busy`, where some
    unit's rows may all lie past the queries: the block's first row and
    the query rows."""

    found: AttentionPattern
    pointers: dict[SSAValue, SSAValue]
    products: TileProducts
    pipeline: CopyPipeline
    keys: KeyTiles
    lane_rows: list[list[Index]]
    lane_col: Index
    busy: tuple[Index, Index] | None

    @property
    def rows(self) -> int:
        """The lane's rows."""
        return len(self.products.layouts[1].rows)

    def initial(self, e: Emitter) -> list[SSAValue]:
        """What the loop carries in: each row's max (-inf) and sum, O, and
        what the products leave pending."""
        out = self.products.layouts[1]
        initial = [e.f32(-math.inf)] * self.rows
        initial += [e.f32(0.0)] * (self.rows + len(out.registers))
        return initial + self.products.pending_initial(e)

    def run(
        self, e: Emitter, row0: Index, count: Index, initial: list[SSAValue]
    ) -> list[SSAValue]:
        """The block's `count` tiles of keys (its first row `row0`): where the
        scores end in the causal mask, the tiles up to the block's first
        row, seen whole, in a loop that evaluates no mask, then the rest."""
        if not self.found.causal:
            return self.tiles(e, 0, count, initial, True)
        seen = e.imin(e.idiv(e.iadd(row0, 1), self.keys.size), count)
        seen.name_hint = "kv_seen"
        results = self.tiles(e, 0, seen, initial, False)
        return self.tiles(e, seen, count, results, True)

    def tiles(
        self,
        e: Emitter,
        begin: Index,
        end: Index,
        initial: list[SSAValue],
        masked: bool,
    ) -> list[SSAValue]:
        """The loop over tiles `begin` to `end` of the block's keys; without
        the causal mask unless `masked`."""
        return loop_steps(
            e,
            begin,
            end,
            initial,
            lambda lb, j, values: self.tile(lb, j, values, masked),
            "kv_tile",
        )

    def tile(
        self, lb: Emitter, j: SSAValue, values: list[SSAValue], masked: bool
    ) -> list[SSAValue]:
        """The block's j-th tile of keys on the carried `values`: their
        values after it."""
        products, rows = self.products, self.rows
        kv = lb.iadd(self.keys.begin, j)
        carried = 2 * rows + len(products.layouts[1].registers)
        m_old, l_old = values[:rows], values[rows : 2 * rows]
        o, pending = values[2 * rows : carried], values[carried:]
        # Every product that read the stage copied into next is done (each
        # waited for in its warp tile before this barrier), and the tile
        # `ahead` on goes into the stage read last (or, with a P V left
        # running, the one before).
        self.pipeline.begin(lb, j)
        stage = self.pipeline.stage(lb, j)
        # A warp tile whose rows are all past the queries (most warps of a
        # decode's block) skips the products and the softmax; it only copies.
        # (A warpgroup's warps decide together: a wgmma is the warpgroup's.)
        busy_if = None
        if self.busy is not None:
            row0, query_rows = self.busy
            busy = lb.icmp(lb.iadd(row0, products.tile_row), query_rows, "slt")
            types = [v.type for v in values]
            busy_if = scf.IfOp(busy, types, Region(Block()), Region(Block()))
            lb.block.add_op(busy_if)
            busy_if.false_region.block.add_op(scf.YieldOp(*values))
            lb = lb.nested(busy_if.true_region.block)

        s, o = products.scores(lb, (j, stage), o, pending)
        s = self.logits(lb, kv, s, masked)
        m_new, l_new, p, o = self.softmax(lb, s, (m_old, l_old), o)
        o, pending = products.weighted(lb, stage, p, o)
        carried_next = [*m_new, *l_new, *o, *pending]
        if busy_if is None:
            return carried_next
        lb.block.add_op(scf.YieldOp(*carried_next))
        return list(busy_if.results)

    def logits(
        self, lb: Emitter, kv: Index, s: list[SSAValue], masked: bool
    ) -> list[SSAValue]:
        """The logits of tile `kv`'s scores `s`: the ops on the scores (scale,
        masks, biases) evaluated per element, at an index kept inside the
        tensors (rows and keys past the end are not stored or are masked);
        keys past the end are masked."""
        found, keys = self.found, self.keys
        layout = self.products.layouts[0]
        ev = Evaluator(lb, self.pointers)
        # A causal self-attention's tiles before the block's rows hold no
        # key past the end (they end at its first row, inside the keys).
        clipped = keys.partial and (masked or keys.clipped_unmasked)
        causal = causal_add(found)
        # The logits' units: the scale folded into exp2's factor where it can.
        given = found.scores.result
        if (scaled := positive_scale(found)) is not None:
            given = scaled[0]
        minus_inf = lb.f32(-math.inf)
        key_col = lb.iadd(lb.imul(kv, keys.size), self.lane_col)
        scores_type = element_of(found.scores.result)
        logits = []
        for j, score in enumerate(s):
            # Each element's own column (not shared with the lane's other
            # rows: the evaluator keeps its values by index).
            col = lb.iadd(key_col, layout.registers[j][1])
            index = [
                *self.lane_rows[layout.row_slot(j)],
                lb.imin(col, lb.isub(keys.total, 1)) if clipped else col,
            ]
            ev.define(given, index, round_to(lb, score, scores_type))
            if not masked and causal is not None:  # the mask adds 0
                sum_, unmasked = causal
                ev.define(sum_, index, ev.at(unmasked, index))
            value = ev.at(found.logits, index)
            if clipped:
                value = lb.select(lb.icmp(col, keys.total, "sge"), minus_inf, value)
            logits.append(value)
        return logits

    def softmax(
        self,
        lb: Emitter,
        s: list[SSAValue],
        before: tuple[list[SSAValue], list[SSAValue]],
        o: list[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue], list[SSAValue], list[SSAValue]]:
        """The online softmax of the logits `s`: each row's max and sum after
        them, P, and O rescaled; in log2 units for exp2: the max of the
        logits is taken to them once a row (log2(e) > 0 keeps the max the
        same), and each weight is exp2(logit log2(e) - m), one fused
        multiply-add before the exp2."""
        scores, out = self.products.layouts
        m_old, l_old = before
        scaled = positive_scale(self.found)
        log2e = lb.f32(LOG2E if scaled is None else LOG2E * scaled[1])
        minus_inf = lb.f32(-math.inf)
        # A mask or bias may hold the least finite score (transformers'
        # masks do): times log2(e) it would overflow to -inf, and a row of
        # it would weigh nothing where it should weigh all alike.
        guarded = scaled is None and has_operand_on_scores(self.found)

        def to_log2(value: SSAValue) -> SSAValue:
            exponent = lb.add(arith.MulfOp(value, log2e))
            if not guarded:
                return exponent
            finite = lb.add(arith.MaxnumfOp(exponent, lb.f32(-FLT_MAX)))
            masked = lb.add(arith.CmpfOp(value, minus_inf, "oeq"))
            return lb.select(masked, minus_inf, finite)

        m_new, m_use, l_new, alpha = [], [], [], []
        for h in range(self.rows):
            values = [s[j] for j in scores.row_registers(h)]
            # fmaxf (arith.maxnumf): a NaN score reaches the output through the
            # row's sum; NaN-propagating maxima would branch on each.
            row_max = values[0]
            for value in values[1:]:
                row_max = lb.add(arith.MaxnumfOp(row_max, value))
            # A row's values are spread over the lanes of a quad.
            row_max = lanes_reduce(lb, arith.MaxnumfOp, row_max, scores.quad)
            row_max = to_log2(row_max)
            m_new.append(lb.add(arith.MaxnumfOp(m_old[h], row_max)))
            # A row masked whole so far subtracts 0, not -inf (exp2(-inf - -inf)
            # would be NaN): its weights and rescaling stay 0.
            empty = lb.add(arith.CmpfOp(m_new[h], minus_inf, "oeq"))
            m_use.append(lb.select(empty, lb.f32(0.0), m_new[h]))
            shift = lb.add(arith.SubfOp(m_old[h], m_use[h]))
            alpha.append(lb.add(mathd.Exp2Op(shift, APPROXIMATE)))
        p = []
        for j, value in enumerate(s):
            exponent = to_log2(value)
            shifted = lb.add(arith.SubfOp(exponent, m_use[scores.row_slot(j)]))
            p.append(lb.add(mathd.Exp2Op(shifted, APPROXIMATE)))
        for h in range(self.rows):
            total = lb.add(arith.MulfOp(l_old[h], alpha[h]))
            for j in scores.row_registers(h):
                total = lb.add(arith.AddfOp(total, p[j]))
            l_new.append(total)
        o = [
            lb.add(arith.MulfOp(value, alpha[out.row_slot(j)]))
            for j, value in enumerate(self.products.settled(lb, o))
        ]
        return m_new, l_new, p, o
