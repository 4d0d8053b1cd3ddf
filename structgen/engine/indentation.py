"""What the parser of an indentation-sensitive grammar needs (``structgen.indenter``).

lark's ``Indenter`` keeps a stack of indentation levels and a count of open
brackets beside its parser. Here both are read off the parse stack itself, so
rollback and fork keep them at no cost: the grammar is rewritten so that the
state after ``_INDENT@w`` says it opened level ``w``, the state after
``_DEDENT`` that it closed one, the state after a bracket that it opened or
closed one (an LR state is entered by one symbol only). A stack's *view* folds
those effects from the bottom up: the open brackets, then the levels.

A lexed newline of width ``w`` (``lexed[t] == w``) is then, on a stack whose
view has brackets open, nothing (lark drops it); else the grammar's newline,
followed by ``_INDENT@w`` when ``w`` is deeper than the innermost level, by a
``_DEDENT`` per level deeper than ``w`` when ``w`` is one of the enclosing
levels, and by nothing when it is the innermost: any other width is refused
(lark's ``DedentError``). At the end of the text every open level is closed.
"""

from __future__ import annotations

from typing import Final

NONE: Final = 0
DEDENT: Final = -1
OPEN: Final = -2
CLOSE: Final = -3
"""A state's effect on the view (``Indentation.effects``); a positive one is the
width of the level ``_INDENT`` opened."""

View = tuple[int, ...]
"""A stack's view: the brackets open, then the levels (the first 0, innermost last)."""

BOTTOM: Final[View] = (0, 0)


class Indentation:
    """The terminals of the rewriting (``structgen.lark_rules.IndentTerminals``)
    and each LR state's effect on a stack's view."""

    newline: Final[int]
    dedent: Final[int]
    indents: Final[list[int]]
    lexed: Final[list[int]]
    effects: Final[list[int]]
    line_start: bytes

    def __init__(self, newline: int, lexed_terminals: list[int], indents: list[int], dedent: int, opens: list[int],
                 closes: list[int], terminal_count: int, actions: list[dict[int, tuple[int, ...]]]) -> None:
        """``lexed_terminals[w]``: the lexed newline of width ``w`` (the last one
        stands for every wider line, which opens no level); ``indents[w]``:
        ``_INDENT`` of width ``w`` (-1 at 0); ``actions``: the LR table's."""
        # read before every text (``GLRParser.start``): b"\n" where the text begins a line, so
        # its first line's indentation is judged as any other line's (``Indenter.starts_line``)
        self.line_start = b""
        self.newline = newline
        self.dedent = dedent
        self.indents = indents
        lexed = [-1] * terminal_count
        for width in range(len(lexed_terminals)):
            lexed[lexed_terminals[width]] = width
        self.lexed = lexed
        role = [NONE] * terminal_count
        for width in range(1, len(indents)):
            role[indents[width]] = width
        role[dedent] = DEDENT
        for terminal in opens:
            role[terminal] = OPEN
        for terminal in closes:
            role[terminal] = CLOSE
        effects = [NONE] * len(actions)
        for row in actions:
            for terminal, encoded in row.items():
                if terminal < terminal_count and role[terminal] != NONE:
                    for action in encoded:
                        if action >= 0 and action & 1 == 0:  # a shift: the state it enters
                            effects[action >> 1] = role[terminal]
        self.effects = effects

    def lexed_bits(self) -> int:
        """The lexed newlines, as a bit set of terminals."""
        bits = 0
        for terminal in range(len(self.lexed)):
            if self.lexed[terminal] >= 0:
                bits |= 1 << terminal
        return bits

    def apply(self, view: View, state: int) -> View:
        """``view`` with the state ``state`` pushed on its stack."""
        effect = self.effects[state]
        if effect == NONE:
            return view
        if effect > 0:
            return view + (effect,)
        if effect == DEDENT:
            return view[:-1] if len(view) > 2 else view
        if effect == OPEN:
            return (view[0] + 1,) + view[1:]
        return (view[0] - 1,) + view[1:]

    def after_newline(self, view: View, width: int) -> list[int] | None:
        """The terminals a lexed newline of ``width`` is on a stack of ``view``
        ([]: none, inside brackets); None where it is refused (a dedent to no
        enclosing level)."""
        if view[0] > 0:
            return []
        innermost = view[len(view) - 1]
        if width > innermost:
            return [self.newline, self.indents[width]] if width < len(self.indents) else None
        if width == innermost:
            return [self.newline]
        closed = [self.newline]
        index = len(view) - 1
        while index > 1 and view[index] > width:
            closed.append(self.dedent)
            index -= 1
        return closed if view[index] == width else None

    def at_end(self, view: View) -> list[int]:
        """The ``_DEDENT`` terminals that close every level still open at the end."""
        return [self.dedent] * (len(view) - 2)
