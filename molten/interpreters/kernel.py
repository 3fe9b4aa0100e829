"""Interpreter implementations of the kernel dialect: a fused group runs its
region, a launch calls its kernel.func, so fusion and outlining can be checked
by running the IR before and after them."""

from typing import Any

from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)

from molten.dialects import kernel


@register_impls
class KernelFunctions(InterpreterFunctions):
    @impl(kernel.FusedOp)
    def run_fused(
        self, interpreter: Interpreter, op: kernel.FusedOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, "kernel.fused")

    @impl_terminator(kernel.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: kernel.YieldOp, args: tuple[Any, ...]
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl(kernel.LaunchOp)
    def run_launch(
        self, interpreter: Interpreter, op: kernel.LaunchOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.call_op(op.callee.string_value(), args)

    @impl_callable(kernel.FuncOp)
    def call_kernel(
        self, interpreter: Interpreter, op: kernel.FuncOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, op.sym_name.data)
