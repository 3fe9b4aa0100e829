"""Molten's default pass pipeline, defined once.

`ZeroCompiler` runs exactly this pipeline and `molten-opt -p` accepts any
prefix of it. It grows level by level; today it ends at the molten dialect.
"""

DEFAULT_PIPELINE = "molten-decompose,canonicalize,cse,dce"


def run_pipeline(module, spec: str = DEFAULT_PIPELINE):
    """Applies the passes of `spec` (molten-opt's -p syntax) to `module` in place."""
    from xdsl.passes import PassPipeline
    from xdsl.universe import Universe

    from molten.context import molten_context

    passes = Universe.get_multiverse().all_passes
    PassPipeline.parse_spec(passes, spec).apply(molten_context(), module)
    module.verify()
    return module
