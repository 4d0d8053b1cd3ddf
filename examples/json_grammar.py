"""Recognize JSON with grammars/json.lark through the whole engine pipeline:
regex -> byte automata -> maximal-munch lexer -> LALR tables -> GLR stacks.

Run: .venv/bin/python examples/json_grammar.py
"""

from pathlib import Path

from structgen import Grammar

grammar = Grammar.from_lark((Path(__file__).parent.parent / "grammars" / "json.lark").read_text())
print(
    f"json.lark: {len(grammar.rules.terminals)} terminals, {grammar.lexer.dfa.state_count} lexer states, "
    f"{grammar.table.state_count} LALR states, {grammar.table.conflicts()} conflicts"
)
for text in ['{"name": "Zoë", "tags": ["a", "b"], "n": -1.5e3}', '{"a": 01}', '[1, 2,]', '"\\u00e9"', ' true ']:
    print(f"  {text!r:55} {'accepted' if grammar.accepts(text) else 'rejected'}")
