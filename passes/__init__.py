"""Molten's passes, one `ModulePass` per module.

Importing the package gives the molten dialect's ops their canonicalization
patterns (see `MoltenCanonicalization`): they fold constants with the
interpreter, which is built on the dialect, so the dialect cannot import
them itself.
"""

from molten.dialects.molten import MoltenCanonicalization
from molten.passes.canonicalization_patterns.molten import canonicalization_patterns

MoltenCanonicalization.register(canonicalization_patterns())
