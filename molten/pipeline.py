"""Molten's default pass pipeline, defined once, level by level.

`ZeroCompiler` runs exactly `DEFAULT_PIPELINE`; `molten-opt -p` accepts any
prefix of it, so a user can stop at any level and read (or, above the cuda
level, interpret) the IR.
"""

MOLTEN_PIPELINE = "molten-decompose,transpose-matvec,canonicalize,cse,dce"
"""Level 1: composites decomposed into primitives, a matrix times a column
vector made a GEMV, canonicalized."""

KERNEL_PIPELINE = (
    "split-size-classes,fuse-attention,fuse-reduction,fuse-scan,fuse-scatter,"
    "fuse-epilogue,fuse-elementwise,merge-size-classes,kernel-outline,kernel-schedule,tile,dce"
)
"""Level 2: primitives fused into kernels (a graph whose fusion depends on a
named size, once per size class), outlined, scheduled, and the gemm kernels
tiled."""

CUDA_PIPELINE = "lower-kernel-to-cuda,cse,vectorize,dce"
"""Level 3: kernels lowered to the cuda dialect (accesses vectorized where
proven aligned), which `-t cuda` prints."""

KERNEL_LEVEL_PIPELINE = f"{MOLTEN_PIPELINE},{KERNEL_PIPELINE}"
"""The prefix that ends at the kernel level, the last the interpreter runs."""

DEFAULT_PIPELINE = f"{KERNEL_LEVEL_PIPELINE},{CUDA_PIPELINE}"

OUTLINE_PIPELINE, _, _SCHEDULING = DEFAULT_PIPELINE.partition(",kernel-schedule,")
"""The default pipeline up to the kernels outlined, not yet scheduled (where
the autotuner gives kernels their schedules)."""
SCHEDULED_PIPELINE = f"kernel-schedule,{_SCHEDULING}"
"""The rest of the default pipeline: OUTLINE_PIPELINE then this is it."""


def run_pipeline(module, spec: str = DEFAULT_PIPELINE):
    """Applies the passes of `spec` (molten-opt's -p syntax) to `module` in place."""
    from xdsl.passes import PassPipeline
    from xdsl.universe import Universe

    from molten.context import molten_context

    passes = Universe.get_multiverse().all_passes
    PassPipeline.parse_spec(passes, spec).apply(molten_context(), module)
    module.verify()
    return module
