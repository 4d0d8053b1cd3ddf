"""``TextCheck``: a condition on the text that no context-free grammar holds.

Some constraints are not context free: a JSON array whose items must not repeat,
a string whose length is counted past what the lexer's automaton counts. A
grammar carries such conditions as checks (``Grammar.checks``); the matcher runs
them beside the engine, and ``Grammar.accepts`` beside the parser. This module
is what the matcher and the grammar know of them: the protocol below. The
checks themselves live with what they check (``structgen.json``), so the
generic layers know nothing of JSON.

A check is immutable per grammar; the point of the text it has reached is a
*state* it hands out and takes back (any immutable value), kept by the matcher
beside the engine's, one per accepted step, so rollback and fork stay O(1).
"""

from __future__ import annotations

from typing import Any, Protocol

from structgen.engine.matcher import Matcher as EngineMatcher

__all__ = ["REFUSED", "TextCheck"]


class _Refused:
    __slots__ = ()

    def __repr__(self) -> str:
        return "REFUSED"


REFUSED: Any = _Refused()
"""What ``TextCheck.before`` returns for bytes the check refuses."""


class TextCheck(Protocol):
    """One condition beyond the grammar, checked as the text is written."""

    def prepare(self, vocab: list[bytes]) -> None:
        """Precompute what masks over ``vocab`` need (at compile, so no mask waits)."""

    def start(self) -> Any:
        """The state at the beginning of the text."""

    def shared(self) -> Any:
        """A memo one generation and all its forks share (None: none)."""

    def refuse(self, state: Any, engine: EngineMatcher, row: bytes, vocab: list[bytes], shared: Any) -> bytes:
        """The bitmask row ``row`` (the grammar's allowed tokens at ``engine``'s
        point) less the tokens this check refuses there."""

    def before(self, state: Any, engine: EngineMatcher, data: bytes, judged: bool) -> Any:
        """The state after ``data``, before the engine takes it, or ``REFUSED``.
        ``judged``: a mask of this check already allowed ``data`` as one token."""

    def after(self, state: Any, engine: EngineMatcher, shared: Any, judged: bool) -> bool:
        """Whether the step that led to ``state`` stands, now that ``engine`` took its
        bytes (False: the matcher undoes the step)."""

    def text_kept(self, data: bytes) -> bool:
        """Whether a whole text the grammar accepts keeps to this check."""

    def lexeme_kept(self, terminals: list[int], lexeme: bytes) -> bool:
        """Whether one lexeme, taken by the parser as one of ``terminals``, keeps to it."""

    def for_grammar(self, lexer: Any, table: Any, terminals: list[Any]) -> TextCheck | None:
        """This check for a grammar rebuilt from the same rules (``structgen.spelling``
        cuts the terminals' patterns to what a vocabulary spells); None when it has
        nothing left to check there."""
