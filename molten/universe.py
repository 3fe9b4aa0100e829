"""Registers Molten's dialects and passes with xDSL's tools (`xdsl.universe`)."""

from xdsl.universe import Universe


def _molten_dialect():
    from molten.dialects.molten import Molten

    return Molten


def _kernel_dialect():
    from molten.dialects.kernel import Kernel

    return Kernel


def _molten_decompose():
    from molten.passes.decompose import MoltenDecompose

    return MoltenDecompose


MOLTEN_UNIVERSE = Universe(
    all_dialects={"molten": _molten_dialect, "kernel": _kernel_dialect},
    all_passes={"molten-decompose": _molten_decompose},
)
