"""``compile`` and ``Matcher``: a grammar joined with a vocabulary, and its masks.

The heavy work is in ``structgen.engine.matcher`` (compiled); this module adds the
public API of docs/design.md §5 around it: caching, text input, numpy bitmasks, and the
checks a grammar leaves to the matcher (``structgen.checks``: each check's state
after each step is kept beside the engine's, so rollback and fork stay O(1)).
"""

from __future__ import annotations

import operator

import numpy as np
import numpy.typing as npt

from typing import Any

from structgen.bitmask import write_row
from structgen.checks import REFUSED, TextCheck
from structgen.engine.matcher import CompiledGrammar
from structgen.engine.matcher import Matcher as _EngineMatcher
from structgen.gc_pause import paused_gc
from structgen.grammar import Grammar
from structgen.spelling import spellable
from structgen.tokenizer_info import TokenizerInfo
from structgen.engine.tokenset import row_token_ids
from structgen.compiled_budget import BUDGET
from structgen.trie_cache import trie_for
from structgen.utf8 import whole_characters


def compile(grammar: Grammar, tokenizer_info: TokenizerInfo, *, lazy: bool = False) -> CompiledGrammar:  # noqa: A001
    """Join ``grammar`` with a vocabulary; cached on the grammar per tokenizer.

    By default the token tables of the lexer states are built now, for up to
    250 walks of the vocabulary's worth of work (``engine.matcher.GROUPS_WALKS``,
    about 2-5 s at 128k tokens; and, for small grammars, every table entry), so
    no mask pays for them later: the worst step stays fast. A grammar
    whose tables take longer (a schema with thousands of states inside bounded
    strings) gets the rest on first use, as ``lazy=True`` builds them all: the
    first mask comes sooner, some later ones take longer.

    Where some of the grammar's texts need a byte no token of the vocabulary holds,
    the grammar compiled is the rest of it (``structgen.spelling``): the mask never
    opens a path that cannot be finished; ``Unspellable`` when nothing is left.
    """
    return _compiled(spellable(grammar, tokenizer_info), tokenizer_info, lazy)


def _compiled(grammar: Grammar, tokenizer_info: TokenizerInfo, lazy: bool) -> CompiledGrammar:
    """``compile`` of a grammar taken as it is (tests build masks that dead-end with it)."""
    cache = grammar.compiled_for
    entry = cache.get(id(tokenizer_info))
    if entry is not None and entry[0] is tokenizer_info:
        BUDGET.used(grammar, id(tokenizer_info))
        return entry[1]
    with paused_gc():
        compiled = CompiledGrammar(
            grammar.lexer,
            grammar.table,
            grammar.ignored,
            tokenizer_info.decoded_vocab,
            tokenizer_info.stop_token_ids,
            trie_for(tokenizer_info),
        )
        if grammar.checks:
            compiled.checks = tuple(grammar.checks)
            for check in grammar.checks:  # once per vocabulary, now rather than in a mask
                check.prepare(tokenizer_info.decoded_vocab)
        if not lazy:
            compiled.precompute()  # checks the compile's deadline between lexer states
    cache[id(tokenizer_info)] = (tokenizer_info, compiled)
    BUDGET.admit(grammar, id(tokenizer_info), compiled)  # bounds every grammar's kept tables, in count and bytes
    return compiled


class Matcher:
    """Follows one generation: which tokens may come next, and what came."""

    def __init__(self, compiled: CompiledGrammar, _engine: _EngineMatcher | None = None,
                 _points: _Points | None = None, _shared: tuple[Any, ...] | None = None) -> None:
        self.compiled = compiled
        self._engine = _engine if _engine is not None else _EngineMatcher(compiled)
        checks = compiled.checks
        self._checks: tuple[TextCheck, ...] = checks if isinstance(checks, tuple) else ()
        if _points is None and self._checks:
            _points = self._start()
        self._points = _points  # the checks' states after each step (None without checks)
        # what a generation's checks remember, shared with forks (as the engine's parser is)
        self._shared = _shared if _shared is not None else tuple(check.shared() for check in self._checks)
        self._allowed: tuple[_Points | None, bytes] = (None, b"")  # the last row computed, and where

    def _start(self) -> _Points:
        return _Points(tuple(check.start() for check in self._checks), None)

    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32], index: int = 0) -> None:
        """Write the allowed next tokens into row ``index`` of ``bitmask`` (all
        bits clear once a stop token was accepted; words past the vocabulary clear)."""
        write_row(bitmask, self._row(), self.compiled.words, self.compiled.vocab_size, index)

    def allowed_tokens(self) -> list[int]:
        if self._points is None:
            return self._engine.allowed_tokens()
        return row_token_ids(self._row())

    def allowed_row(self) -> bytes:
        """The allowed next tokens as one bitmask row's bytes (``compiled.words``
        little-endian 32-bit words): what ``fill_next_token_bitmask`` writes."""
        return self._row()

    def _row(self) -> bytes:
        """The allowed tokens as a bitmask row: the grammar's, less what the checks refuse."""
        row = self._engine.allowed_row()
        points = self._points
        if points is None or self._engine.is_terminated():
            return row
        if self._allowed[0] is points:
            return self._allowed[1]
        vocab = self.compiled.vocab
        for check, state, shared in zip(self._checks, points.states, self._shared):
            row = check.refuse(state, self._engine, row, vocab, shared)
        self._allowed = (points, row)
        return row

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; False, and no change, when it is not allowed."""
        token_id = operator.index(token_id)  # numpy ints too
        if self._points is None or token_id in self.compiled.stop_token_ids:
            accepted = self._engine.accept_token(token_id)
            if accepted and self._points is not None:
                self._points = self._points.again()
            return accepted
        if not 0 <= token_id < self.compiled.vocab_size or self.compiled.special[token_id]:
            return False
        allowed = self._allowed
        if allowed[0] is self._points and allowed[0] is not None:  # the mask of this point judged it
            if not allowed[1][token_id >> 3] >> (token_id & 7) & 1:
                return False
            return self._advance(self.compiled.vocab[token_id], judged=True)
        return self._advance(self.compiled.vocab[token_id], judged=False)

    def accept_string(self, text: str | bytes | bytearray | memoryview) -> bool:
        """Advance by raw text (one step for ``rollback``); False, and no change, if not allowed."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        if self._points is None:
            return self._engine.accept_bytes(data)
        return not data or self._advance(data, judged=False)

    def _advance(self, data: bytes, judged: bool) -> bool:
        """``data`` as one step, through the checks and the engine: refused where a
        check refuses it before the engine takes it (unless a mask ``judged`` it, a
        check may look ahead for that) or after."""
        points = self._points
        assert points is not None
        states = []
        for check, state in zip(self._checks, points.states):
            state = check.before(state, self._engine, data, judged)
            if state is REFUSED:
                return False
            states.append(state)
        if not self._engine.accept_bytes(data):
            return False
        for check, state, shared in zip(self._checks, states, self._shared):
            if not check.after(state, self._engine, shared, judged):
                self._engine.rollback(1)
                return False
        self._points = _Points(tuple(states), points)
        return True

    def find_jump_forward_string(self) -> str:
        """What every valid continuation starts with (whole characters only); the
        matcher is not advanced — accept it with ``accept_string`` to use it."""
        return whole_characters(self._engine.find_jump_forward_bytes())

    def rollback(self, num_tokens: int) -> None:
        num_tokens = operator.index(num_tokens)
        self._engine.rollback(num_tokens)
        for _ in range(num_tokens if self._points is not None else 0):
            assert self._points is not None and self._points.previous is not None
            self._points = self._points.previous

    def fork(self) -> Matcher:
        return Matcher(self.compiled, self._engine.fork(), self._points, self._shared)

    def can_terminate(self) -> bool:
        return self._engine.can_terminate()

    def is_terminated(self) -> bool:
        return self._engine.is_terminated()

    def reset(self) -> None:
        self._engine.reset()
        if self._points is not None:
            self._points = self._start()


class _Points:
    """The checks' states after each accepted step, newest first (immutable, shared
    by forks)."""

    __slots__ = ("states", "previous")

    def __init__(self, states: tuple[Any, ...], previous: _Points | None) -> None:
        self.states = states
        self.previous = previous

    def again(self) -> _Points:
        """The same point, one step later (a stop token)."""
        return _Points(self.states, self)
