"""A lark grammar's terminals, rules and ignored terminals, as plain numbered data.

lark parses the grammar text (its syntax, ``%import``, templates, EBNF operators);
the engine gets back only ints and strings. No lark parser is built, so grammars
that lark's own LALR builder would reject for conflicts are read fine: the engine
keeps conflicts as GLR forks.

Numbering (the engine's, see ``structgen.engine.lr``): terminals ``0 .. T-1`` in
lark's order, the end marker ``T``, then nonterminals in order of first use.
"""

from __future__ import annotations

from dataclasses import dataclass

from lark.exceptions import LarkError
from lark.load_grammar import load_grammar


class GrammarError(ValueError):
    """A grammar that cannot be read, with lark's explanation."""


@dataclass(frozen=True)
class Terminal:
    name: str
    kind: str  # "str" for a literal, "re" for a regex
    value: str
    flags: str
    priority: int


@dataclass
class LarkRules:
    terminals: list[Terminal]
    nonterminals: list[str]
    rules: list[tuple[int, list[int]]]
    start: int
    ignore: list[int]

    @property
    def end(self) -> int:
        return len(self.terminals)

    def terminal_index(self, name: str) -> int:
        for index, terminal in enumerate(self.terminals):
            if terminal.name == name:
                return index
        raise KeyError(name)


def read_lark(text: str, start: str = "start") -> LarkRules:
    """Read a lark grammar; errors name what lark found wrong."""
    try:
        grammar, _ = load_grammar(text, "<grammar>", None, False)
        terminal_defs, rule_defs, ignore_names = grammar.compile([start], set())
    except LarkError as exc:
        raise GrammarError(f"invalid lark grammar: {exc}") from None
    terminals = [
        Terminal(t.name, t.pattern.type, t.pattern.value, "".join(sorted(t.pattern.flags)), t.priority)
        for t in terminal_defs
    ]
    index = {t.name: i for i, t in enumerate(terminals)}
    nonterminal_index: dict[str, int] = {}

    def nonterminal(name: str) -> int:
        if name not in nonterminal_index:
            nonterminal_index[name] = len(terminals) + 1 + len(nonterminal_index)
        return nonterminal_index[name]

    nonterminal(start)
    declared = sorted({s.name for r in rule_defs for s in r.expansion if s.is_term and s.name not in index})
    if declared:
        raise GrammarError(
            f"terminals {declared} have no pattern (%declare): they come from a postlexer such as "
            "lark's Indenter, which structgen cannot run while lexing bytes"
        )
    rules: list[tuple[int, list[int]]] = []
    for rule in rule_defs:
        expansion = [index[s.name] if s.is_term else nonterminal(s.name) for s in rule.expansion]
        rules.append((nonterminal(rule.origin.name), expansion))
    return LarkRules(
        terminals=terminals,
        nonterminals=list(nonterminal_index),
        rules=rules,
        start=nonterminal(start),
        ignore=[index[name] for name in ignore_names],
    )
