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
    "charset", "deadline", "dfa", "indentation", "int_map", "lexeme_groups", "lexer", "line_widths", "lr", "mask_entry",
    "matcher", "minimize", "partial_stacks", "precompute_order", "regex", "regex_subset", "remainders", "shifted_groups",
    "spanner", "stack", "step_bound", "table_memory", "tables", "terminal_bits", "tokenset", "views", "vocab",
)
"""Every compiled module of the engine (the build compiles all of ``engine/*.py``
but ``__init__``; ``tests/engine/test_build.py`` checks this list against the folder)."""


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of one package in its ``.py`` files, ignoring compiled ones."""

    def __init__(self, package: str, folder: Path) -> None:
        self.package = package
        self.folder = folder

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != self.package:
            return None
        source = self.folder / (name + ".py")
        if not source.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


PURE_RECURSION_LIMIT: Final = 4_000
"""Python frames the pure mode allows: interpreted, the engine takes a few frames per
group of a nested pattern where the compiled one takes none (a number bound's regex
nests some 330 groups deep), so Python's default 1,000 is raised to this."""

PURE: Final = os.environ.get("STRUCTGEN_PURE", "") not in ("", "0")


def load_sources(package: str, init_file: str) -> None:
    """Under ``STRUCTGEN_PURE=1``, load ``package``'s modules from their ``.py`` files
    (a compiled package calls this in its ``__init__`` before importing them)."""
    if PURE:
        sys.meta_path.insert(0, _SourceFinder(package, Path(init_file).parent))
        sys.setrecursionlimit(max(sys.getrecursionlimit(), PURE_RECURSION_LIMIT))


def all_compiled(package: str, names: Sequence[str]) -> bool:
    """Whether every module ``names`` of ``package`` was loaded as a compiled extension."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return all(str(sys.modules[f"{package}.{name}"].__file__).endswith(suffixes) for name in names)


load_sources(__name__, __file__)

from structgen.engine import (  # noqa: E402  (after the finder is in place)
    charset, deadline, dfa, indentation, int_map, lexeme_groups, lexer, line_widths, lr, mask_entry, matcher, minimize,
    partial_stacks, regex, regex_subset, remainders, shifted_groups, spanner, stack, step_bound, tables, terminal_bits,
    tokenset, views, vocab,
)


COMPILED: Final = all_compiled(__name__, ENGINE_MODULES)

__all__ = [
    "COMPILED", "ENGINE_MODULES", "PURE", "all_compiled", "charset", "deadline", "dfa", "indentation", "int_map",
    "lexeme_groups", "lexer", "line_widths", "load_sources", "lr", "mask_entry", "matcher", "minimize",
    "partial_stacks", "precompute_order", "regex", "regex_subset", "remainders", "shifted_groups", "spanner", "stack",
    "step_bound", "table_memory", "tables", "terminal_bits", "tokenset", "views", "vocab",
]
