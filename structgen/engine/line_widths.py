"""The width automaton behind a ``LAST_LINE_WIDTH`` node (``engine.regex``).

A regex construct of the engine's own, for indentation-sensitive grammars
(``structgen.indenter``): the texts whose last line, after their last newline,
holds spaces and tabs worth exactly ``width`` columns, counted as lark's
``Indenter`` counts them (a space is one column, a tab ``tab_len``, whatever
stands between them). Its automaton runs side by side with the body (``dfa``),
as ``remainders`` does for ``divisible_by_D``.
"""

from __future__ import annotations

from typing import Final

from structgen.engine.minimize import Part

_NEWLINE_CLASS: Final = 0
_SPACE_CLASS: Final = 1
_TAB_CLASS: Final = 2
_OTHER_CLASS: Final = 3


def line_width(width: int, tab_len: int, at_least: bool = False) -> Part:
    """The counter: state 0 before any newline; state ``c + 1`` after one, with
    ``c`` columns counted since the last; state ``width + 2`` past ``width``
    (until the next newline). Texts end well in state ``width + 1`` (and, with
    ``at_least``, past it too: the last line holds ``width`` columns or more)."""
    class_of = [_OTHER_CLASS] * 256
    class_of[0x0A] = _NEWLINE_CLASS
    class_of[0x20] = _SPACE_CLASS
    class_of[0x09] = _TAB_CLASS
    over = width + 2
    table: list[int] = [1, 0, 0, 0]  # before any newline: only a newline starts the count
    for columns in range(width + 1):
        table.append(1)
        table.append(columns + 2 if columns + 1 <= width else over)
        table.append(columns + tab_len + 1 if columns + tab_len <= width else over)
        table.append(columns + 1)
    table.extend([1, over, over, over])
    accepting = [False] * (width + 3)
    accepting[width + 1] = True
    accepting[over] = at_least
    return Part(table, 4, class_of, accepting)
