"""``minLength``/``maxLength`` beside a ``pattern``, enforced exactly: the terminal
is the pattern behind a lookahead that counts the characters, and the engine
intersects the two automata; a ``format`` beside a pattern is one more lookahead.

Run: .venv/bin/python examples/pattern_lengths.py

Internals at work: it imports ``structgen.engine``, documented but not public API (docs/design.md §5).
"""

import json

import structgen
from schema2grammar import translate
from structgen.engine.dfa import build_dfa
from structgen.engine.regex import parse

schema = {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$", "minLength": 3, "maxLength": 12}

grammar_text, report = translate(schema)
print(grammar_text.splitlines()[-1][:150], "...")
print(report)

grammar = structgen.Grammar.from_json_schema(schema)
for slug in ["my-slug", "ab", "a-very-long-slug", "no--double", "twelve-chars"]:
    print(f"{json.dumps(slug):20} accepted: {grammar.accepts(json.dumps(slug))}")

# A format beside a pattern, and lengths beside a format, are the same lookahead.
dated = structgen.Grammar.from_json_schema({"type": "string", "format": "date", "pattern": "^2026-"})
print(dated.report)
for day in ["2026-02-28", "2026-02-29", "2025-01-01"]:
    print(f"{json.dumps(day):20} accepted: {dated.accepts(json.dumps(day))}")

# The same intersection on a plain regex: texts of [a-c]* that are 1 to 3 characters.
bounded = build_dfa([parse(r'(?="[^"]{1,3}")"[a-c]*"')])
print("states:", bounded.state_count, [bounded.matches(f'"{t}"'.encode()) for t in ["", "abc", "abca", "abd"]])
