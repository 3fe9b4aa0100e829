"""The printers of scf.for (a loop over mutable locals for the values it
carries), scf.if (results declared before it, assigned in each branch) and
the terminators."""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Block, Operation

from molten.dialects import cuda
from molten.targets.cuda.body import BodyPrinter, OpPrinter
from molten.targets.cuda.c_types import c_type


def _for(printer: BodyPrinter, op: scf.ForOp) -> None:
    body = op.body.block
    iv = printer.scope.fresh(body.args[0].name_hint, "i")
    printer.names[body.args[0]] = iv
    carried = []
    for arg, init, result in zip(body.args[1:], op.iter_args, op.results, strict=True):
        name = printer.scope.fresh(result.name_hint or arg.name_hint, "acc")
        printer.variables.add(name)
        printer.emit(f"{c_type(arg.type)} {name} = {printer.name(init)};")
        printer.names[arg] = printer.names[result] = name
        carried.append(name)
    lb, ub, step = (printer.name(v) for v in (op.lb, op.ub, op.step))
    printer.emit(f"for (int64_t {iv} = {lb}; {iv} < {ub}; {iv} += {step}) {{")
    printer.depth += 1
    printer.block(body)
    terminator = body.last_op
    assert isinstance(terminator, scf.YieldOp)
    updates = [printer.name(v) for v in terminator.operands]
    if any(
        u in carried and u != name for u, name in zip(updates, carried, strict=True)
    ):
        # A yielded value is itself carried (e.g. two swapped): read all
        # before writing any.
        staged = [printer.scope.fresh(f"{name}_next") for name in carried]
        for name, update, arg in zip(staged, updates, body.args[1:], strict=True):
            printer.emit(f"const {c_type(arg.type)} {name} = {update};")
        updates = staged
    for name, update in zip(carried, updates, strict=True):
        if name != update:
            printer.emit(f"{name} = {update};")
    printer.depth -= 1
    printer.emit("}")


def _if(printer: BodyPrinter, op: scf.IfOp) -> None:
    # Results are variables declared before the if, each branch
    # assigning what it yields.
    results = []
    for result in op.results:
        name = printer.scope.fresh(result.name_hint, "v")
        printer.emit(f"{c_type(result.type)} {name};")
        printer.names[result] = name
        results.append(name)

    def branch(block: Block) -> None:
        printer.depth += 1
        printer.block(block)
        terminator = block.last_op
        if results:
            assert isinstance(terminator, scf.YieldOp)
            for name, value in zip(results, terminator.operands, strict=True):
                printer.emit(f"{name} = {printer.name(value)};")
        printer.depth -= 1

    printer.emit(f"if ({printer.name(op.cond)}) {{")
    branch(op.true_region.block)
    if op.false_region.blocks and (results or list(op.false_region.block.ops)[:-1]):
        printer.emit("} else {")
        branch(op.false_region.block)
    printer.emit("}")


def _printed_by_enclosing_op(printer: BodyPrinter, op: Operation) -> None:
    """A terminator: the enclosing scf.for or scf.if assigns what it yields,
    the end of the function returns."""


CONTROL_FLOW_PRINTERS: dict[type[Operation], OpPrinter] = {
    scf.ForOp: _for,
    scf.IfOp: _if,
    scf.YieldOp: _printed_by_enclosing_op,
    cuda.ReturnOp: _printed_by_enclosing_op,
}
