"""What the fusion passes share: turning a set of molten ops into one
`kernel.fused` group, legally.

A group is a set of ops of one block. It is legal when it is convex: no path
leaves the group and comes back into it through an op outside (that op could
run neither before nor after the fused kernel). Forming a group:

* inputs: values the group uses that are defined outside it; constants and
  other generators (causal_mask) are cloned into the body instead, since a
  kernel computes them for free;
* outputs: values the group defines that are used outside it, except that an
  elementwise op whose outside users will be fused into groups that can
  recompute it (elementwise ops, reductions; not a matmul, not a graph
  result) is left in place for them, as are the elementwise ops it reads,
  and only cloned into the group: recomputing is cheaper than writing a
  value out and reading it back;
* the fused op goes before the group's first op; ops between the group's
  first and last op that the group needs are moved before it.
"""

from collections.abc import Callable, Iterable, Sequence

from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator

from molten.dialects import kernel, molten
from molten.dialects.cuda import element_bytes
from molten.dialects.molten import Dim, broadcasts_to, value_dims

ELEMENTWISE: tuple[type[Operation], ...] = (
    molten.ElementwiseBinaryOp,
    molten.ElementwiseUnaryOp,
    molten.CastOp,
    molten.WhereOp,
    molten.TriangleOp,
)
"""Ops that compute each result element from the operand elements at the same
(broadcast) index (triu and tril from the index too)."""

INDEX_MAPS: tuple[type[Operation], ...] = (
    molten.RotateHalfOp,
    molten.BroadcastToOp,
    molten.ReshapeOp,
    molten.TransposeOp,
    molten.FlipOp,
    molten.SliceOp,
    molten.PadOp,
    molten.TakeOp,
    molten.GatherOp,
)
"""Ops whose result element is an operand element at a remapped index: a
pointwise kernel computes them by reading at the mapped index."""

LAYOUTS: tuple[type[Operation], ...] = (molten.ReshapeOp, molten.TransposeOp)
"""Index maps that only permute a tensor's elements: a kernel that ends in a
chain of them stores its value where the chain sends each element."""

GENERATORS: tuple[type[Operation], ...] = (
    molten.ConstantOp,
    molten.CausalMaskOp,
    molten.IotaOp,
)
"""Ops without operands that every kernel using them recomputes."""


def depends_on(value: SSAValue, targets: set[SSAValue]) -> bool:
    """Whether `value` is one of `targets` or computed from one (in its
    block and the blocks it nests in)."""
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if current in targets:
            return True
        if current in seen or not isinstance(current.owner, Operation):
            continue
        seen.add(current)
        stack.extend(current.owner.operands)
    return False


def is_fusible_root(op: Operation) -> bool:
    """An op at the graph level (not already inside a kernel)."""
    return isinstance(op, molten.MoltenOp) and not isinstance(
        op.parent_op(), kernel.FusedOp | kernel.FuncOp
    )


def _positions(block: Block) -> dict[Operation, int]:
    return {op: i for i, op in enumerate(block.ops)}


def is_convex(group: set[Operation], block: Block) -> bool:
    """No op outside `group` both depends on the group and feeds it."""
    positions = _positions(block)
    indices = sorted(positions[op] for op in group)
    ops = list(block.ops)
    tainted: set[Operation] = set()
    for op in ops[indices[0] : indices[-1] + 1]:
        from_group = any(v.owner in group or v.owner in tainted for v in op.operands)
        if op in group:
            if any(v.owner in tainted for v in op.operands):
                return False
        elif from_group:
            tainted.add(op)
    return True


class _ConvexGroup:
    """A convex group of ops of one block that grows one op at a time.

    Adding `op` keeps it convex unless a path leaves the group through an op
    outside and comes back, and such a path must start or end at `op` (the
    group was convex): from `op` through an outside op into the group, or
    from the group through an outside op into `op`. Each is a search from
    `op` bounded by the group's span in the block's order, not a walk of
    the whole span, so that growing a chain of n ops costs O(n), not O(n^2).
    """

    def __init__(self, seed: Operation, positions: dict[Operation, int]):
        self.ops = {seed}
        self.positions = positions
        self.first = self.last = positions[seed]

    def _position(self, op: object) -> int | None:
        return self.positions.get(op)  # type: ignore[call-overload]

    def _reaches(self, op: Operation, forward: bool) -> bool:
        """Whether an op outside the group, reached from `op` along users
        (`forward`) or operands, is itself next to the group that way."""

        def steps(current: Operation):
            if forward:
                return [use.operation for r in current.results for use in r.uses]
            return [v.owner for v in current.operands]

        def inside_span(position: int) -> bool:
            return position < self.last if forward else position > self.first

        seen: set[Operation] = set()
        stack = [n for n in steps(op) if n not in self.ops]
        while stack:
            current = stack.pop()
            position = self._position(current)
            if current in seen or position is None or not inside_span(position):
                continue
            seen.add(current)
            for neighbour in steps(current):
                if neighbour in self.ops:
                    return True
                stack.append(neighbour)
        return False

    def convex_with(self, op: Operation) -> bool:
        return not self._reaches(op, True) and not self._reaches(op, False)

    def add(self, op: Operation) -> None:
        self.ops.add(op)
        position = self.positions[op]
        self.first, self.last = min(self.first, position), max(self.last, position)


def grow(
    seed: Sequence[Operation],
    admits: Callable[[Operation, set[Operation]], bool],
    grow_producers_of: Callable[[Operation, set[Operation]], bool] = lambda op, g: True,
    neighbours: Callable[[Operation], Iterable[Operation]] = lambda op: (),
) -> set[Operation]:
    """The largest convex group reachable from `seed` (one op) by adding the
    producers and users that `admits` accepts. `grow_producers_of(op,
    group)` says whether op's operands may pull their producers in;
    `neighbours(op)` offers further candidates beside op that no value
    links to it (the other matmuls of its lhs, for horizontal fusion).

    The group grows in sweeps over its ops in block order, each op offering
    its producers then its users; an op none of whose candidates can ever
    join (each is in the group or refused for good) is not offered again.
    A candidate refused only for convexity is offered again in later sweeps,
    as the group around it may have grown."""
    (first,) = seed
    block = first.parent_block()
    assert block is not None
    positions = _positions(block)
    group = _ConvexGroup(first, positions)
    refused: set[Operation] = set()
    open_ops = [first]
    while open_ops:
        still_open: list[Operation] = []
        added: list[Operation] = []
        for op in sorted(open_ops, key=positions.__getitem__):
            candidates: list[Operation] = []
            if grow_producers_of(op, group.ops):
                candidates += [
                    v.owner for v in op.operands if isinstance(v.owner, Operation)
                ]
            candidates += [use.operation for r in op.results for use in r.uses]
            candidates += neighbours(op)
            waiting = False
            for candidate in candidates:
                if candidate in group.ops or candidate in refused:
                    continue
                if (
                    candidate.parent_block() is not block
                    or isinstance(candidate, GENERATORS)
                    or not admits(candidate, group.ops)
                ):
                    refused.add(candidate)
                    continue
                if not group.convex_with(candidate):
                    waiting = True
                    continue
                group.add(candidate)
                added.append(candidate)
            if waiting:
                still_open.append(op)
        if not added:
            break
        open_ops = still_open + added
    return group.ops


def absorbs_producers(user: Operation) -> bool:
    """Whether `user` will be fused into a group that can recompute its
    elementwise producers: a graph-level elementwise, index-map, reduction,
    cumsum or scatter op (not a matmul operand, not a graph result)."""
    return is_fusible_root(user) and isinstance(
        user,
        (
            *ELEMENTWISE,
            *INDEX_MAPS,
            molten.ReductionOp,
            molten.ScanOp,
            molten.ScatterOp,
        ),
    )


def _users(op: Operation) -> list[Operation]:
    return [u.operation for r in op.results for u in r.uses]


def _narrows(op: Operation) -> bool:
    """Whether `op` is a cast to a narrower type."""
    if not isinstance(op, molten.CastOp):
        return False
    source, target = (v.type.element_type for v in (op.input, op.result))  # type: ignore[attr-defined]
    return element_bytes(target) < element_bytes(source)


RECOMPUTED_MAPS: tuple[type[Operation], ...] = (
    molten.ReshapeOp,
    molten.PadOp,
    molten.SliceOp,
    molten.BroadcastToOp,
)
"""Index maps that read their input's rows in order (a reshape the same
elements, a pad or slice a part, a broadcast some again): a user's kernel
reads through them as cheaply as it would read their result."""


def _is_view(op: Operation) -> bool:
    """An index map that reads its input's rows in order (`RECOMPUTED_MAPS`:
    a reshape, a concat's pads, a slice, a broadcast): a user reading
    through it costs what reading its result would, so writing it out never
    pays (its input is written instead, or recomputed in turn)."""
    return isinstance(op, RECOMPUTED_MAPS)


def kept_outside(ordered: Sequence[Operation], group: set[Operation]) -> set[Operation]:
    """Group ops that also stay in place, for users outside the group: the
    elementwise ones and views (`_is_view`) none of whose users is a graph
    result (recomputing them is cheaper than writing them out), and so on up
    through their producers,
    but not a narrowing cast of a value the group writes anyway. The group
    computes its own clones of them."""
    kept: set[Operation] = set()
    changed = True
    while changed:
        changed = False
        for op in reversed(ordered):
            if op in kept:
                continue
            outside = [u for u in _users(op) if u not in group or u in kept]
            if (
                outside
                and (isinstance(op, ELEMENTWISE) or _is_view(op))
                and all(u in kept or absorbs_producers(u) for u in outside)
            ):
                kept.add(op)
                changed = True
    # A narrowing cast whose input the group writes anyway (its producer is
    # not recomputed outside) is better stored narrow: fewer bytes.
    return {
        op
        for op in kept
        if not (
            _narrows(op)
            and op.operands[0].owner in group
            and op.operands[0].owner not in kept
        )
    }


def fuse(
    rewriter: PatternRewriter,
    group: Iterable[Operation],
    kind: kernel.KernelKind,
    recompute: bool = True,
) -> kernel.FusedOp | None:
    """Replaces the convex `group` of one block by one kernel.fused of `kind`
    (leaving elementwise ops in place for their other users to recompute
    unless not `recompute`).

    Returns None, changing nothing, when the group would yield nothing: all
    its values are recomputed by the groups of their users."""
    group = set(group)
    block = next(iter(group)).parent_block()
    assert block is not None
    positions = _positions(block)
    ordered = sorted(group, key=positions.__getitem__)

    kept = kept_outside(ordered, group) if recompute else set()
    outputs = [
        r
        for op in ordered
        if op not in kept
        for r in op.results
        if any(u.operation not in group or u.operation in kept for u in r.uses)
    ]
    if not outputs:
        return None
    # Only what the outputs need goes into the kernel: an op kept outside for
    # its own users is not copied in unless the group reads it.
    needed: set[Operation] = set()
    stack = [v.owner for v in outputs]
    while stack:
        op = stack.pop()
        if op in group and op not in needed:
            needed.add(op)
            stack.extend(v.owner for v in op.operands)
    inside = [op for op in ordered if op in needed]

    generators: list[Operation] = []
    inputs: list[SSAValue] = []
    for op in inside:
        for value in op.operands:
            owner = value.owner
            if owner in group:
                continue
            if isinstance(owner, GENERATORS):
                if owner not in generators:
                    generators.append(owner)
            elif value not in inputs:
                inputs.append(value)

    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for value, arg in zip(inputs, body.args, strict=True):
        arg.name_hint = value.name_hint
        mapping[value] = arg
    for op in [*generators, *inside]:
        body.add_op(op.clone(mapping))
    body.add_op(kernel.YieldOp(*(mapping[v] for v in outputs)))
    fused = kernel.FusedOp(kind, inputs, [v.type for v in outputs], Region(body))
    if kind == kernel.KernelKind.GEMM:  # what it matched beyond matmuls
        fused.matched = kernel.GemmMatchAttr.of_body(list(body.ops))

    # Ops between the group's first and last op that the group depends on go
    # before the fused op (convexity guarantees they do not depend on it).
    first = ordered[0]
    wanted: set[SSAValue] = set(inputs)
    span = list(block.ops)[positions[first] : positions[ordered[-1]] + 1]
    to_move: list[Operation] = []
    for op in reversed(span):
        if op not in group and any(r in wanted for r in op.results):
            to_move.append(op)
            wanted.update(op.operands)
    rewriter.insert(fused, InsertPoint.before(first))
    for op in reversed(to_move):
        op.detach()
        rewriter.insert(op, InsertPoint.before(fused))

    for old, new in zip(outputs, fused.results, strict=True):
        new.name_hint = old.name_hint
        rewriter.replace_all_uses_with(old, new)
    for op in reversed(ordered):
        if op not in kept:
            rewriter.erase(op)
    return fused


POINTWISE: tuple[type[Operation], ...] = (*ELEMENTWISE, *INDEX_MAPS)
"""What a pointwise (or scatter) kernel computes per element of its domain."""


def joins_domain(
    candidate: Operation,
    group: set[Operation],
    domain: Sequence[Dim],
    kinds: tuple[type[Operation], ...] = POINTWISE,
) -> bool:
    """Whether `candidate` can join a group computed per element of
    `domain`: a fusible op of `kinds` of that shape, one broadcast into it
    (recomputed per element), or one read only inside the group."""
    if not is_fusible_root(candidate) or not isinstance(candidate, kinds):
        return False
    if value_dims(candidate.results[0]) == domain:
        return True
    return recomputable_into(candidate, domain, kinds) or feeds_only(candidate, group)


def feeds_only(op: Operation, group: set[Operation]) -> bool:
    """Whether every use of `op`'s result is by an op of `group`: the
    group's kernel can recompute it at whatever index those ops read it
    (through a reshape or transpose, at another shape), with nothing to
    store."""
    users = [u.operation for u in op.results[0].uses]
    return bool(users) and all(u in group for u in users)


def recomputable_into(
    op: Operation,
    domain: Sequence[Dim],
    kinds: tuple[type[Operation], ...] = ELEMENTWISE,
) -> bool:
    """An op of `kinds` of a shape that broadcasts into `domain`, none of whose
    users is a graph result: a kernel over `domain` recomputes it per element."""
    return (
        isinstance(op, kinds)
        and broadcasts_to(value_dims(op.results[0]), domain)
        and not any(u.operation.has_trait(IsTerminator) for u in op.results[0].uses)
    )
