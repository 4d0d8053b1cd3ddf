"""Indentation-sensitive grammars: lark's ``Indenter`` as part of the grammar.

lark parses Python with a postlexer (``lark.indenter.Indenter``): after each
newline token it compares the indentation of the next line with a stack of
levels and emits ``_INDENT`` or as many ``_DEDENT`` as the levels it closes;
inside brackets newlines are dropped. Its two terminals have no pattern
(``%declare``). structgen makes that rule exact in the masks
(docs/indentation.md) by rewriting the grammar so that the parser's stack holds
the levels:

- the newline terminal is lexed as one terminal per width of the line it leaves
  (``NL@w``: the newline's pattern whose last line holds ``w`` columns,
  ``engine.regex.last_line_width``); the parser turns each into the grammar's
  newline followed by ``_INDENT`` or one ``_DEDENT`` per level it closes, from
  the levels on its stack (``engine.indentation``);
- ``_INDENT`` becomes one terminal per width (``_INDENT@w``), each rule using it
  copied per width, so the state after it says the level it opened;
- a bracket is open while its terminal is on the stack: each rule must close in
  itself the brackets it opens, as Python's grammars do (checked here);
- a text may begin a line (``Indenter.starts_line``): it is read as if a newline
  came before it, so its first line keeps the rule as every other line does
  (Python's "unexpected indent"), where lark ignores whitespace before the
  first token.

Levels are bounded by ``Indenter.max_width`` columns (``MAX_INDENT_WIDTH``): a
line indented deeper can only be written inside brackets (one lexed newline
stands for every wider line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from structgen.lark_rules import GrammarError, IndentTerminals, RuleDefs, Terminal

MAX_INDENT_WIDTH = 64
"""Default for ``Indenter.max_width``: the deepest indentation, in columns (a
tab counts ``tab_len``), a text may have; each column is a lexer terminal and
each opening rule a copy per column."""

MAX_INDENT_LIMIT = 256
"""The largest ``max_width`` accepted."""

WIDTH_MARK = "@"
"""Joins a terminal's name and a width in the names the rewriting makes (no
lark name holds it)."""


@dataclass(frozen=True)
class Indenter:
    """Where a grammar's indentation lives, as lark's ``Indenter`` says it:
    the newline terminal, the two declared terminals, the bracket terminals
    (lark names ``"("`` ``LPAR`` and so on) and a tab's width in columns.

    ``starts_line``: whether the text begins a line, as a Python file does (read
    as if a newline came before it: a first line indented is refused, as Python
    refuses it). None, the default, decides by the grammar: a text begins a line
    where the grammar's start can take its newline first (``file_input: (_NEWLINE
    | stmt)*``), so the newline read before the text changes nothing else. False
    is lark's postlexer, which lets whitespace come before the first token."""

    newline: str = "_NEWLINE"
    indent: str = "_INDENT"
    dedent: str = "_DEDENT"
    open_brackets: tuple[str, ...] = ("LPAR", "LSQB", "LBRACE")
    close_brackets: tuple[str, ...] = ("RPAR", "RSQB", "RBRACE")
    tab_len: int = 8
    max_width: int = MAX_INDENT_WIDTH
    starts_line: bool | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.max_width <= MAX_INDENT_LIMIT:
            raise GrammarError(f"an indenter's max_width must be between 1 and {MAX_INDENT_LIMIT}, not {self.max_width}")
        if self.tab_len < 1:
            raise GrammarError(f"an indenter's tab_len must be at least 1, not {self.tab_len}")
        if len(self.open_brackets) != len(self.close_brackets):
            raise GrammarError("an indenter needs as many closing brackets as opening ones")

    @classmethod
    def python(cls, newline: str = "_NEWLINE", **options: Any) -> Indenter:
        """lark's ``PythonIndenter`` (SynCode's ``python.lark`` calls its newline ``_NL``)."""
        return cls(newline=newline, **options)

    @classmethod
    def of(cls, indenter: Any) -> Indenter:
        """An ``Indenter``, or one read from a lark ``Indenter`` (class or instance):
        ``NL_type``, ``INDENT_type``, ``DEDENT_type``, ``OPEN_PAREN_types``,
        ``CLOSE_PAREN_types``, ``tab_len`` (and ``starts_line`` where it has one)."""
        if isinstance(indenter, Indenter):
            return indenter
        try:
            return cls(newline=str(indenter.NL_type), indent=str(indenter.INDENT_type),
                       dedent=str(indenter.DEDENT_type), open_brackets=tuple(indenter.OPEN_PAREN_types),
                       close_brackets=tuple(indenter.CLOSE_PAREN_types), tab_len=int(indenter.tab_len),
                       starts_line=getattr(indenter, "starts_line", None))
        except AttributeError as exc:
            raise GrammarError(f"indenter: neither a structgen Indenter nor a lark Indenter ({exc})") from None


_DECLARED = re.compile(r"^[ \t]*%declare\b([^\n]*)", re.MULTILINE)


def declared_indenter(text: str) -> Indenter | None:
    """The indenter a grammar asks for by itself: lark's ``PythonIndenter``
    where its text ``%declare``s ``_INDENT`` and ``_DEDENT``, its newline
    ``_NEWLINE`` (or ``_NL`` where no ``_NEWLINE`` is named); None otherwise."""
    declared = {name for names in _DECLARED.findall(text) for name in names.split()}
    if not {"_INDENT", "_DEDENT"} <= declared:
        return None
    newline = "_NEWLINE" if re.search(r"\b_NEWLINE\b", text) else "_NL"
    return Indenter.python(newline=newline)


def indented(terminals: list[Terminal], rule_defs: RuleDefs, ignore: list[str], indenter: Indenter
             ) -> tuple[list[Terminal], RuleDefs, IndentTerminals]:
    """The terminals and rules of a grammar rewritten for ``indenter`` (see the
    module's docstring), and where the rewriting put each part."""
    names = [terminal.name for terminal in terminals]
    if indenter.newline not in names:
        raise GrammarError(f"indenter: the grammar has no newline terminal {indenter.newline}")
    if indenter.newline in ignore:
        raise GrammarError(f"indenter: the newline terminal {indenter.newline} is %ignore'd")
    for name in (indenter.indent, indenter.dedent):
        if name in names:
            raise GrammarError(f"indenter: {name} must have no pattern (%declare {name}); the indenter writes it")
    opens = [name for name in indenter.open_brackets if name in names]
    closes = [name for name in indenter.close_brackets if name in names]
    _check_balanced(rule_defs, indenter)
    newline = names.index(indenter.newline)
    lexed = terminals[newline]
    out = [replace(terminal, kind="none") if index == newline else terminal for index, terminal in enumerate(terminals)]
    first_lexed = len(out)
    out += [replace(lexed, name=f"{lexed.name}{WIDTH_MARK}{width}", width=width, tab_len=indenter.tab_len)
            for width in range(indenter.max_width + 1)]
    # a line wider than max_width: nothing inside brackets, refused elsewhere (no level opens there)
    out.append(replace(lexed, name=f"{lexed.name}{WIDTH_MARK}wider", width=indenter.max_width + 1,
                       tab_len=indenter.tab_len, wider=True))
    first_indent = len(out)
    out += [Terminal(f"{indenter.indent}{WIDTH_MARK}{width}", "none", "", "", 0) for width in range(1, indenter.max_width + 1)]
    dedent = len(out)
    out.append(Terminal(indenter.dedent, "none", "", "", 0))
    rules: RuleDefs = []
    for origin, expansion in rule_defs:
        places = [i for i, (name, is_term) in enumerate(expansion) if is_term and name == indenter.indent]
        if not places:
            rules.append((origin, expansion))
            continue
        if len(places) > 1:
            raise GrammarError(f"indenter: rule {origin} opens two blocks ({indenter.indent} twice in one expansion)")
        for width in range(1, indenter.max_width + 1):
            copy = list(expansion)
            copy[places[0]] = (f"{indenter.indent}{WIDTH_MARK}{width}", True)
            rules.append((origin, copy))
    found = IndentTerminals(
        newline=newline,
        lexed=list(range(first_lexed, first_lexed + indenter.max_width + 2)),
        indents=[-1] + list(range(first_indent, first_indent + indenter.max_width)),
        dedent=dedent,
        opens=[names.index(name) for name in opens],
        closes=[names.index(name) for name in closes],
        starts_line=indenter.starts_line,
    )
    return out, rules, found


def _check_balanced(rule_defs: RuleDefs, indenter: Indenter) -> None:
    """Each expansion opens and closes its own blocks and brackets, in order: the
    parser reads the open ones off its stack, where an expansion's symbols stay
    until it is reduced (lark's indenter counts them over the text instead;
    the two agree exactly when this holds)."""
    pairs = {indenter.indent: indenter.dedent}
    pairs.update(zip(indenter.open_brackets, indenter.close_brackets))
    closing = set(pairs.values())
    for origin, expansion in rule_defs:
        waiting: list[str] = []
        for name, is_term in expansion:
            if not is_term:
                continue
            if name in pairs:
                waiting.append(pairs[name])
            elif name in closing:
                if not waiting or waiting[-1] != name:
                    raise GrammarError(f"indenter: rule {origin} closes {name} without opening it in the same "
                                       "expansion; each rule must open and close its own brackets and blocks")
                waiting.pop()
        if waiting:
            raise GrammarError(f"indenter: rule {origin} leaves {waiting[-1]} to another rule to close; each rule "
                               "must open and close its own brackets and blocks")
