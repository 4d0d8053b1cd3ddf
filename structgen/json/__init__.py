"""The JSON layer: what JSON Schema asks of the text beyond what a grammar holds.

The engine (``structgen.engine``) follows any grammar and knows nothing of JSON;
``schema2grammar`` turns a schema into a grammar. What no context-free grammar
holds is checked here, as ``structgen.checks.TextCheck``s a grammar carries:

- ``syntax`` (compiled with the engine): JSON's lexical automata (strings,
  numbers, literals), the one scanner below the structure that the checks here
  and the streaming validator (``structgen.json_scan``) follow text through;
- ``unique_items`` / ``unique_strings`` / ``prefixes`` (compiled with the engine):
  arrays whose items must not repeat, followed through the text as JSON values;
  ``unique_check`` puts them behind the matcher's protocol;
- ``string_lengths``: string maxima the lexer does not count, counted per
  character (and ``marked_strings``: which of a grammar's strings carry one).

``STRUCTGEN_PURE=1`` loads the compiled modules from their sources, as in the engine.
"""

from __future__ import annotations

from typing import Final

from structgen.engine import all_compiled, load_sources

COMPILED_MODULES: Final = ("prefixes", "syntax", "unique_items", "unique_strings")
"""The modules the build compiles with mypyc (``setup.py`` reads this tuple;
``tests/engine/test_build.py`` checks it against the installed files)."""

load_sources(__name__, __file__)

from structgen.json import prefixes, syntax, unique_items, unique_strings  # noqa: E402  (after the finder is in place)

COMPILED: Final = all_compiled(__name__, COMPILED_MODULES)

__all__ = ["COMPILED", "COMPILED_MODULES", "prefixes", "syntax", "unique_items", "unique_strings"]
