"""A mask table entry: what the tokens do from one lexer state and a known top of
the stack (``tables``)."""

from __future__ import annotations

from typing import Final

from mypy_extensions import mypyc_attr

from structgen.engine.spanner import Groups


@mypyc_attr(acyclic=True)  # never in a reference cycle: left untracked by the collector (docs/tables.md)
class MaskEntry:
    """What the tokens do from one lexer state and a known top of the stack.

    ``row`` is the tokens always accepted, as a bitmask row (one object for every
    entry with the same set); ``context`` is the known LR states, bottom first;
    ``deeper`` holds entries for the same lexer state with one more state known
    under ``context``, built when too many groups depend on what lies there, keyed
    by that state (and, for an indentation-sensitive grammar, the view under it:
    ``MaskTables.refine_key``); and the entry with the view under ``context``
    known (``MaskTables.in_view``, keyed ``-1 - view``).
    """

    row: Final[bytes]
    dependent: Final[Groups]
    context: Final[list[int]]
    deeper: Final[dict[int, MaskEntry]]

    def __init__(self, row: bytes, dependent: Groups, context: list[int]) -> None:
        self.row = row
        self.dependent = dependent
        self.context = context
        self.deeper = {}
