"""Sizes and build times of byte automata and of whole grammars (SynCode's, read
from the installed syncode package): the figures in docs/regex.md and docs/grammar.md;
and what a grammar built after another reuses (docs/lexing.md).

Run: .venv/bin/python examples/compile_times.py

Internals at work: it imports ``structgen.engine``, documented but not public API (docs/design.md §5).
"""

import importlib.util
import pathlib
import time

from structgen import Grammar, GrammarError
from structgen.engine.dfa import build_dfa
from structgen.engine.regex import parse
from structgen.pattern_caches import SHARED_AUTOMATA, TERMINAL_TREES

PATTERNS = [r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"', r"\w+", r'[^"]{0,200}', r'[^"]{0,2000}']
for pattern in PATTERNS:
    started = time.perf_counter()
    dfa = build_dfa([parse(pattern)])
    print(f"{pattern[:40]:42} {dfa.state_count:>6} states  {time.perf_counter() - started:.3f} s")

# grammars built one after another share terminal trees and pattern automata by pattern
for names in (["name", "age"], ["city", "population"]):
    trees, automata = len(TERMINAL_TREES), len(SHARED_AUTOMATA.cache())
    started = time.perf_counter()
    Grammar.from_json_schema({"type": "object", "properties": {names[0]: {"type": "string"}, names[1]: {"type": "integer"}}})
    print(
        f"schema with {names}: {time.perf_counter() - started:.3f} s, {len(TERMINAL_TREES) - trees} terminal trees "
        f"and {len(SHARED_AUTOMATA.cache()) - automata} pattern automata built (the rest reused)"
    )

spec = importlib.util.find_spec("syncode")
if spec and spec.submodule_search_locations:
    root = pathlib.Path(list(spec.submodule_search_locations)[0])
    for name in ["c", "java", "sql", "go", "python"]:
        text = next(root.rglob(f"{name}.lark")).read_text()
        started = time.perf_counter()
        try:
            grammar = Grammar.from_lark(text)
        except GrammarError as exc:
            print(f"SynCode {name}: refused: {exc}")
            continue
        print(
            f"SynCode {name}: {len(grammar.rules.terminals)} terminals, {grammar.lexer.dfa.state_count} lexer "
            f"states, {grammar.table.state_count} LALR states, {time.perf_counter() - started:.2f} s"
        )
