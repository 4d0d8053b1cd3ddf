"""The mask engine: the part of structgen that mypyc compiles at install.

Modules here import only the standard library, ``mypy_extensions`` and ``librt``,
so the compiled build needs nothing but mypy; numpy, torch, lark and transformers
stay outside, in the interpreted layers that feed this package plain data.

``COMPILED`` tells whether every engine module was loaded as a compiled extension.
Setting ``STRUCTGEN_PURE=1`` before the first import loads the ``.py`` sources that
ship beside the compiled modules instead: the same code, debuggable with pdb and
tracebacks, without reinstalling (with a higher recursion limit: ``PURE_RECURSION_LIMIT``).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Final, Sequence

ENGINE_MODULES: Final = (
    "charset", "deadline", "dfa", "lexer", "lr", "matcher", "regex", "regex_subset", "spanner", "stack", "tables",
    "tokenset", "unique_items", "unique_strings", "views", "vocab",
)
"""Every compiled module of the engine (the build compiles all of ``engine/*.py``
but ``__init__``; ``tests/test_build.py`` checks this list against the folder)."""


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds ``structgen.engine.*`` in the ``.py`` files, ignoring compiled ones."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != __name__:
            return None
        source = Path(__file__).with_name(name + ".py")
        if not source.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


PURE_RECURSION_LIMIT: Final = 4_000
"""Python frames the pure mode allows: interpreted, the engine takes a few frames per
group of a nested pattern where the compiled one takes none (a number bound's regex
nests some 330 groups deep), so Python's default 1,000 is raised to this."""

if os.environ.get("STRUCTGEN_PURE", "") not in ("", "0"):
    sys.meta_path.insert(0, _SourceFinder())
    sys.setrecursionlimit(max(sys.getrecursionlimit(), PURE_RECURSION_LIMIT))

from structgen.engine import (  # noqa: E402  (after the finder is in place)
    charset, deadline, dfa, lexer, lr, matcher, regex, regex_subset, spanner, stack, unique_items, unique_strings, vocab,
)


def _is_compiled(module: ModuleType) -> bool:
    return str(module.__file__).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


COMPILED: Final = all(_is_compiled(sys.modules[f"{__name__}.{name}"]) for name in ENGINE_MODULES)

__all__ = [
    "COMPILED", "ENGINE_MODULES", "charset", "deadline", "dfa", "lexer", "lr", "matcher", "regex", "regex_subset", "spanner",
    "stack", "unique_items", "unique_strings", "vocab",
]
