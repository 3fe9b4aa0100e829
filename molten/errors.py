"""The errors Molten raises for a user's mistakes.

Every error a user can cause is a `MoltenError`. Shape and element-type errors
are also xDSL `VerifyException`s, so the same exception raised by an op's
verifier surfaces as a located diagnostic in `molten-opt` and as a plain
Python exception from the graph builder.
"""

from __future__ import annotations

from xdsl.utils.exceptions import VerifyException


class MoltenError(Exception):
    """Base class of every error caused by a user's graph, IR or inputs."""


class ShapeError(MoltenError, VerifyException, ValueError):
    """An op's operand shapes (or its attributes) break the op's shape rule."""


class StaticShapeNeeded(ShapeError, NotImplementedError):
    """A pass that takes static shapes met a named dimension: the graph
    compiles once per set of sizes instead (`molten.compiler.SizedPerCall`)."""


class DTypeError(MoltenError, VerifyException, TypeError):
    """An op's operand element types break the op's element-type rule."""


class GraphError(MoltenError, ValueError):
    """The graph is misused: an unknown value, a duplicate name, no outputs."""


class UnsupportedError(MoltenError, NotImplementedError):
    """A well-formed graph that Molten cannot compile yet; the message names
    what is missing and, where there is one, the way around it."""


class InputError(MoltenError, ValueError):
    """An array given to run a graph does not match the graph's input."""


class CompileError(MoltenError, RuntimeError):
    """NVRTC rejected a graph's generated source (a Molten bug: the message
    names the source line, its kernel and the graph value it computes)."""


class RuntimeUnavailableError(MoltenError, ImportError):
    """The runtime needs something this machine lacks: cuda-python, a GPU and
    driver, NVRTC or the CUDA headers."""

    @classmethod
    def no_cuda_python(cls, error: ImportError) -> RuntimeUnavailableError:
        return cls(
            f"the Molten runtime needs cuda-python (pip install 'molten[gpu]'): {error}"
        )


class LaunchError(MoltenError, RuntimeError):
    """The driver refused a launch, an allocation or a copy."""
