"""Molten's default pass pipeline, defined once.

`ZeroCompiler` runs exactly this pipeline and `molten-opt -p` accepts any
prefix of it, so a user can stop at any level and read the IR. It grows level
by level; today it ends at the kernel level (fused, outlined, scheduled
kernels), before the cuda dialect.
"""

MOLTEN_PIPELINE = "molten-decompose,canonicalize,cse,dce"
"""Level 1: composites decomposed into primitives, canonicalized."""

KERNEL_PIPELINE = (
    "fuse-reduction,fuse-epilogue,fuse-elementwise,kernel-outline,kernel-schedule,dce"
)
"""Level 2: primitives fused into kernels, outlined and scheduled."""

DEFAULT_PIPELINE = f"{MOLTEN_PIPELINE},{KERNEL_PIPELINE}"


def run_pipeline(module, spec: str = DEFAULT_PIPELINE):
    """Applies the passes of `spec` (molten-opt's -p syntax) to `module` in place."""
    from xdsl.passes import PassPipeline
    from xdsl.universe import Universe

    from molten.context import molten_context

    passes = Universe.get_multiverse().all_passes
    PassPipeline.parse_spec(passes, spec).apply(molten_context(), module)
    module.verify()
    return module
