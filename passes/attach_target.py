"""`attach-target`: the device a module's kernels are scheduled for, as its
`kernel.target` attribute (`#kernel.target<...>`), which the passes that
choose by device read (kernel-schedule, fuse-epilogue, fuse-prologue), as
`mlir-opt`'s `--nvvm-attach-target` gives a module its GPU.

```
molten-opt spec.mlir -p 'attach-target{target="h200"},...'
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from molten.passes.schedule.target import attach_target, pass_target


@dataclass(frozen=True)
class AttachTarget(ModulePass):
    """Gives the module the named target (a device or arch:
    `passes/schedule/target.TARGETS`), with `sm_count` SMs where given."""

    name = "attach-target"

    target: str = "sm_90"
    sm_count: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        attach_target(op, pass_target(self.name, op, self.target, None, self.sm_count))
