"""A lark grammar's terminals, rules and ignored terminals, as plain numbered data.

lark parses the grammar text (its syntax, ``%import``, templates, EBNF operators);
the engine gets back only ints and strings. ``%import`` reads only the grammars
that ship with lark (``common``, ``unicode``...) and with structgen (``json``),
never a file beside the grammar or in the working directory: a grammar may come
from a request (``shipped_grammars``). No lark parser is built, so grammars
that lark's own LALR builder would reject for conflicts are read fine: the engine
keeps conflicts as GLR forks. Grammars in the plain form ``schema2grammar`` writes
are read here instead, to the same rules, about ten times faster.

Numbering (the engine's, see ``structgen.engine.lr``): terminals ``0 .. T-1`` in
lark's order, the end marker ``T``, then nonterminals in order of first use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from lark.exceptions import LarkError
from lark.lexer import Token
from lark.load_grammar import FromPackageLoader, GrammarBuilder, _literal_to_pattern


class GrammarError(ValueError):
    """A grammar that cannot be read, with lark's explanation."""


class LexerTooLarge(GrammarError):
    """A grammar whose terminals' automaton passes its state limit (``MAX_DFA_STATES``)."""


class ImportNotAllowed(GrammarError):
    """An ``%import`` of anything but a grammar that ships (``shipped_grammars``), or a relative one."""

    code = "import_not_allowed"  # the server's error code (docs/server.md)


class ParserTooLarge(GrammarError):
    """A grammar whose LR automaton passes its limits (``engine.lr.MAX_LR_STATES``, ``MAX_LR_WORK``)."""


@dataclass(frozen=True)
class Terminal:
    name: str
    kind: str  # "str" for a literal, "re" for a regex, "none" for one the parser makes (structgen.indenter)
    value: str
    flags: str
    priority: int
    width: int = -1  # >= 0: only the texts whose last line holds this many columns (structgen.indenter)
    tab_len: int = 0  # the columns of a tab, where ``width`` counts them
    wider: bool = False  # ``width`` columns or more


@dataclass(frozen=True)
class IndentTerminals:
    """Where ``structgen.indenter`` put an indentation-sensitive grammar's parts,
    as terminal numbers: the grammar's newline (which the parser writes), the
    lexed newlines by the width of the line they leave (the last one: any
    wider), ``_INDENT`` by the width it opens (-1 at 0), ``_DEDENT``, the
    bracket terminals, and whether the text begins a line (``Indenter.starts_line``;
    None: where the start can take the newline first)."""

    newline: int
    lexed: list[int]
    indents: list[int]
    dedent: int
    opens: list[int]
    closes: list[int]
    starts_line: bool | None = None


@dataclass
class LarkRules:
    terminals: list[Terminal]
    nonterminals: list[str]
    rules: list[tuple[int, list[int]]]
    start: int
    ignore: list[int]
    indentation: IndentTerminals | None = None

    @property
    def end(self) -> int:
        return len(self.terminals)

    def terminal_index(self, name: str) -> int:
        for index, terminal in enumerate(self.terminals):
            if terminal.name == name:
                return index
        raise KeyError(name)


def read_lark(text: str, start: str = "start", rewrite: Rewrite | None = None) -> LarkRules:
    """Read a lark grammar; errors name what lark found wrong. ``rewrite``: what
    gives the terminals that have no pattern (``%declare``) to the parser
    (``structgen.indenter``)."""
    read = _read_plain(text, start) if rewrite is None else None
    if read is None:
        read = _read_with_lark(text, start)
    terminals, rule_defs, ignore_names = read
    indentation = None
    if rewrite is not None:
        terminals, rule_defs, indentation = rewrite(terminals, rule_defs, ignore_names)
    index = {t.name: i for i, t in enumerate(terminals)}
    nonterminal_index: dict[str, int] = {}

    def nonterminal(name: str) -> int:
        if name not in nonterminal_index:
            nonterminal_index[name] = len(terminals) + 1 + len(nonterminal_index)
        return nonterminal_index[name]

    nonterminal(start)
    declared = sorted({name for _, expansion in rule_defs for name, is_term in expansion if is_term and name not in index})
    if declared:
        raise GrammarError(
            f"terminals {declared} have no pattern (%declare): they come from a postlexer such as "
            "lark's Indenter, which structgen cannot run while lexing bytes"
        )
    rules: list[tuple[int, list[int]]] = []
    for origin, symbols in rule_defs:
        expansion = [index[name] if is_term else nonterminal(name) for name, is_term in symbols]
        rules.append((nonterminal(origin), expansion))
    return LarkRules(
        terminals=terminals,
        nonterminals=list(nonterminal_index),
        rules=rules,
        start=nonterminal(start),
        ignore=[index[name] for name in ignore_names],
        indentation=indentation,
    )


Symbol = tuple[str, bool]  # a rule's symbol: its name, and whether it is a terminal
RuleDefs = list[tuple[str, list[Symbol]]]  # BNF rules: origin, expansion
Rewrite = Callable[[list[Terminal], RuleDefs, list[str]], tuple[list[Terminal], RuleDefs, IndentTerminals]]
"""Turns a grammar's terminals, rules and ignored names into new ones and where
its indentation lives (``structgen.indenter.indented``)."""


@lru_cache(maxsize=1)
def shipped_grammars() -> dict[str, str]:
    """The grammars ``%import`` may name: lark's own (``common``, ``unicode``,
    ``python``, ``lark``) and structgen's (``json``), name -> the package holding it."""
    from importlib import resources

    found: dict[str, str] = {}
    for package, folder in (("lark", "grammars"), ("structgen.grammars", "")):
        try:
            files = resources.files(package)
        except ModuleNotFoundError:  # a source checkout: grammars/ installs as structgen.grammars
            continue
        for entry in (files / folder if folder else files).iterdir():
            if entry.name.endswith(".lark"):
                found.setdefault(entry.name[: -len(".lark")], package)
    return found


class _ShippedImports(GrammarBuilder):
    """lark's grammar reader with ``%import`` limited to ``shipped_grammars()``:
    lark's own would open a relative import's file beside the grammar (for a
    grammar given as text: in the working directory) and, for an unknown name,
    raise ``FileNotFoundError`` naming a path."""

    def do_import(self, dotted_path: tuple[str, ...], base_path: Any, aliases: dict[str, str], base_mangle: Any = None) -> None:
        name = ".".join(dotted_path)
        shipped = shipped_grammars()
        if base_path is not None:  # "%import .name...": a file relative to the grammar's own
            raise ImportNotAllowed(f"%import .{name}: relative imports are not allowed; import one of the grammars that ship: {', '.join(sorted(shipped))}")
        if name not in shipped:
            raise ImportNotAllowed(f"%import {name}: no such grammar; the grammars that can be imported are {', '.join(sorted(shipped))}")
        super().do_import(dotted_path, None, aliases, base_mangle)


_STRUCTGEN_GRAMMARS = FromPackageLoader("structgen.grammars", ("",))


def _read_with_lark(text: str, start: str) -> tuple[list[Terminal], RuleDefs, list[str]]:
    try:
        builder = _ShippedImports(False, [_STRUCTGEN_GRAMMARS])
        builder.load_grammar(text, "<grammar>")
        terminal_defs, rule_defs, ignore_names = builder.build().compile([start], set())
    except LarkError as exc:
        raise GrammarError(f"invalid lark grammar: {exc}") from None
    except RecursionError:  # lark's reading recurses once per nested expression
        raise GrammarError("the grammar nests expressions too deeply for lark to read") from None
    except OSError:  # a shipped grammar that cannot be read: never a path in the message
        raise GrammarError("invalid lark grammar: an imported grammar could not be read") from None
    terminals = [
        Terminal(t.name, t.pattern.type, t.pattern.value, "".join(sorted(t.pattern.flags)), t.priority)
        for t in terminal_defs
    ]
    rules = [(r.origin.name, [(s.name, bool(s.is_term)) for s in r.expansion]) for r in rule_defs]
    return terminals, rules, list(ignore_names)


_TERMINAL_HEAD = re.compile(r"([A-Z][_A-Z0-9]*)[ \t]*:[ \t]*")
_RULE_HEAD = re.compile(r"([a-z][_a-z0-9]*)[ \t]*:")
_REGEXP = re.compile(r"/(?!/)(\\/|\\\\|[^/])*?/[imslux]*")  # lark's REGEXP token
_BODY_TOKEN = re.compile(r"[ \t]*(?:([A-Za-z0-9_]+)|(.))")
_SYMBOL = re.compile(r"[a-z][_a-z0-9]*|[A-Z][_A-Z0-9]*")


class _Group:
    """``[items]`` (kind ``"maybe"``) or ``(items)*`` (``"star"``) in a rule."""

    def __init__(self, kind: str, items: list[str | _Group]) -> None:
        self.kind = kind
        self.items = items


def _read_plain(text: str, start: str) -> tuple[list[Terminal], RuleDefs, list[str]] | None:
    """The grammar without lark, when it is written in the plain subset that
    ``schema2grammar`` emits: one definition a line, ``NAME: /regex/flags``
    terminals and ``name: a B | [c (D e)*] |`` rules. None for anything else
    (comments, directives, literals, other operators, errors), which lark reads.

    The result is what lark's reading gives, rule for rule and in the same order
    (tests compare them): lark's parser and tree transforms, all interpreted, were
    the slowest step of compiling a schema's grammar."""
    if "\r" in text:
        return None
    terminals: list[Terminal] = []
    bodies: list[tuple[str, list[list[str | _Group]]]] = []
    defined: set[str] = set()
    for line in text.split("\n"):
        if not line.strip(" \t"):
            continue
        head = _TERMINAL_HEAD.match(line) or _RULE_HEAD.match(line)
        if head is None or head.group(1) in defined:
            return None
        name = head.group(1)
        defined.add(name)
        rest = line[head.end() :]
        if name[0].isupper():
            terminal = _plain_terminal(name, rest)
            if terminal is None:
                return None
            terminals.append(terminal)
        else:
            alternatives = _plain_alternatives(rest.rstrip(" \t"))
            if alternatives is None:
                return None
            bodies.append((name, alternatives))
    if start not in defined or start[0].isupper():
        return None
    rules = _plain_bnf(bodies)
    if rules is None or any(sym not in defined for _, expansion in rules for sym, _ in expansion if sym[:2] != "__"):
        return None
    rules = _used_rules(rules, start)
    used_terminals = {sym for _, expansion in rules for sym, is_term in expansion if is_term}
    return [t for t in terminals if t.name in used_terminals], rules, []


def _plain_terminal(name: str, rest: str) -> Terminal | None:
    """A ``/regex/flags`` terminal as lark reads it (escapes evaluated as lark does)."""
    found = _REGEXP.match(rest)
    if found is None or rest[found.end() :].strip(" \t"):
        return None
    try:
        pattern = _literal_to_pattern(Token("REGEXP", found.group(0)))
    except LarkError:
        return None
    return Terminal(name, "re", pattern.value, "".join(sorted(pattern.flags)), 0)


def _plain_alternatives(body: str) -> list[list[str | _Group]] | None:
    """A rule's alternatives: names, ``[...]`` of two or more names and ``(...)*``
    groups, ``(...)*`` of two or more names; None for any other syntax."""
    tokens: list[str] = []
    for found in _BODY_TOKEN.finditer(body):
        word, mark = found.group(1), found.group(2)
        if word is not None:
            if _SYMBOL.fullmatch(word) is None:
                return None
            tokens.append(word)
        elif mark is not None:
            if mark not in "|[]()*":
                return None
            tokens.append(mark)
    alternatives: list[list[str | _Group]] = []
    position = 0
    while True:
        items, position = _plain_sequence(tokens, position, "")
        if items is None:
            return None
        alternatives.append(items)
        if position == len(tokens):
            return alternatives
        position += 1  # a "|"


def _plain_sequence(tokens: list[str], position: int, closer: str) -> tuple[list[str | _Group] | None, int]:
    """Items from ``position`` to ``closer`` (``"]"``, ``")"``, or a ``"|"`` or the end
    for ``""``), and the position after them."""
    items: list[str | _Group] = []
    while position < len(tokens):
        token = tokens[position]
        if token == "|" and not closer:
            return items, position
        if token == closer:
            return items, position + 1
        if token in "[(":
            inner, position = _plain_sequence(tokens, position + 1, "]" if token == "[" else ")")
            if inner is None or len(inner) < 2:
                return None, position
            if token == "(":
                if position == len(tokens) or tokens[position] != "*" or not all(isinstance(i, str) for i in inner):
                    return None, position
                position += 1
                items.append(_Group("star", inner))
            elif any(isinstance(i, _Group) and i.kind == "maybe" for i in inner):
                return None, position
            else:
                items.append(_Group("maybe", inner))
            continue
        if token in "|])*":
            return None, position
        items.append(token)
        position += 1
    return (None, position) if closer else (items, position)


_EMPTY = ("", False)  # lark's placeholder for an omitted [...]: dropped from the rule


def _plain_bnf(bodies: list[tuple[str, list[list[str | _Group]]]]) -> RuleDefs | None:
    """Lark's EBNF-to-BNF for these rules: ``(x y)*`` becomes a rule
    ``__<rule>_star_<n>: x y | __<rule>_star_<n> x y`` (shared by equal groups; ``n``
    counts such rules over the grammar), and alternatives multiply out in order,
    ``[...]`` as its content or nothing, ``(...)*`` as that rule or nothing. None
    when an expansion repeats (lark merges or rejects those)."""
    star_rules: dict[tuple[str, ...], str] = {}
    new_rules: RuleDefs = []
    rules: RuleDefs = []
    for name, alternatives in bodies:
        expansions: list[list[Symbol]] = []
        for items in alternatives:
            expansions.extend(_multiplied(name, items, star_rules, new_rules))
        kept = [[symbol for symbol in expansion if symbol != _EMPTY] for expansion in expansions]
        if len({tuple(expansion) for expansion in kept}) != len(kept):
            return None
        rules.extend((name, expansion) for expansion in kept)
    return rules + new_rules


def _multiplied(
    prefix: str, items: list[str | _Group], star_rules: dict[tuple[str, ...], str], new_rules: RuleDefs
) -> list[list[Symbol]]:
    """The expansions of one alternative, the choices of its first group varying slowest."""
    choices: list[list[list[Symbol]]] = []
    for item in items:
        if isinstance(item, str):
            choices.append([[_symbol(item)]])
        elif item.kind == "star":
            choices.append([[(_star_rule(prefix, item.items, star_rules, new_rules), False)], []])
        else:
            size = sum(1 for inner in item.items if isinstance(inner, str))  # lark's FindRuleSize
            options = _multiplied(prefix, item.items, star_rules, new_rules)
            choices.append(options + [[_EMPTY] * size])
    expansions: list[list[Symbol]] = [[]]
    for options in choices:
        expansions = [expansion + option for expansion in expansions for option in options]
    return expansions


def _star_rule(prefix: str, names: list[str | _Group], star_rules: dict[tuple[str, ...], str], new_rules: RuleDefs) -> str:
    key = tuple(str(name) for name in names)
    name = star_rules.get(key)
    if name is None:
        name = f"__{prefix}_star_{len(star_rules)}"
        star_rules[key] = name
        body = [_symbol(item) for item in key]
        new_rules.append((name, body))
        new_rules.append((name, [(name, False), *body]))
    return name


def _symbol(name: str) -> Symbol:
    return name, name[0].isupper()


def _used_rules(rules: RuleDefs, start: str) -> RuleDefs:
    """Lark's pruning: rules for nonterminals that no other rule uses go, until none do."""
    while True:
        used = {start} | {sym for origin, expansion in rules for sym, is_term in expansion if not is_term and sym != origin}
        kept = [rule for rule in rules if rule[0] in used]
        if len(kept) == len(rules):
            return kept
        rules = kept
