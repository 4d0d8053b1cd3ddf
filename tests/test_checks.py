"""``structgen.checks``: a condition beyond the grammar, plugged in through the
protocol alone, is obeyed by masks, acceptance, rollback, fork and ``accepts``.

The check here knows nothing of JSON (at most ``LIMIT`` letters ``x`` in the whole
text): what the JSON layer's checks rely on is the protocol, nothing else.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import structgen
from structgen import Grammar, TokenizerInfo
from structgen.checks import REFUSED
from structgen.engine.matcher import Matcher as EngineMatcher

LIMIT = 2
PIECES = [b"x", b"y", b"xx", b"xy", b"yx", b"xxx", b";"]


class AtMostXs:
    """At most ``LIMIT`` bytes ``x``; the state is how many came so far."""

    def __init__(self) -> None:
        self.prepared: list[int] = []
        self.after_calls = 0

    def prepare(self, vocab: list[bytes]) -> None:
        self.prepared.append(len(vocab))

    def start(self) -> int:
        return 0

    def shared(self) -> list[int]:
        return []

    def refuse(self, state: int, engine: EngineMatcher, row: bytes, vocab: list[bytes], shared: list[int]) -> bytes:
        shared.append(state)  # one memo for a matcher and its forks
        cleared = bytearray(row)
        for token, spelled in enumerate(vocab):
            if state + spelled.count(b"x") > LIMIT:
                cleared[token >> 3] &= ~(1 << (token & 7)) & 0xFF
        return bytes(cleared)

    def before(self, state: int, engine: EngineMatcher, data: bytes, judged: bool) -> Any:
        state += data.count(b"x")
        return REFUSED if state > LIMIT else state

    def after(self, state: int, engine: EngineMatcher, shared: list[int], judged: bool) -> bool:
        self.after_calls += 1
        return True

    def text_kept(self, data: bytes) -> bool:
        return data.count(b"x") <= LIMIT

    def lexeme_kept(self, terminals: list[int], lexeme: bytes) -> bool:
        return True

    def for_grammar(self, lexer: Any, table: Any, terminals: list[Any]) -> AtMostXs:
        return self


def checked() -> tuple[Grammar, AtMostXs, TokenizerInfo]:
    grammar = Grammar.from_lark('start: /[xy]+/ ";"')
    check = AtMostXs()
    grammar.checks = (check,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a toy vocabulary spells few bytes: said once, on purpose
        info = TokenizerInfo(PIECES + [b""], stop_token_ids=[len(PIECES)])
    return grammar, check, info


def allowed(matcher: structgen.Matcher) -> set[bytes]:
    return {PIECES[t] for t in matcher.allowed_tokens() if t < len(PIECES)}


def test_accepts_keeps_to_the_check() -> None:
    grammar, _, _ = checked()
    assert grammar.accepts("xyx;") and grammar.accepts("yy;")
    assert not grammar.accepts("xxx;") and not grammar.accepts("xyxyx;")


def test_masks_and_steps_keep_to_the_check_and_the_check_is_prepared_once() -> None:
    grammar, check, info = checked()
    compiled = structgen.compile(grammar, info)
    assert check.prepared == [len(PIECES) + 1]
    matcher = structgen.Matcher(compiled)
    assert allowed(matcher) == {b"x", b"y", b"xx", b"xy", b"yx"}  # not xxx, not ; before a letter
    assert matcher.accept_token(PIECES.index(b"xy"))
    assert allowed(matcher) == {b"x", b"y", b"xy", b"yx", b";"}
    assert not matcher.accept_token(PIECES.index(b"xx"))  # refused without a change
    assert matcher.accept_token(PIECES.index(b"yx"))
    assert allowed(matcher) == {b"y", b";"}
    assert not matcher.accept_string("x")  # raw text goes through the check too
    assert check.after_calls == 2


def test_rollback_fork_and_reset_restore_the_checks_state() -> None:
    grammar, _, info = checked()
    matcher = structgen.Matcher(structgen.compile(grammar, info))
    assert matcher.accept_string("xx")
    fork = matcher.fork()
    assert allowed(fork) == {b"y", b";"}
    matcher.rollback(1)
    assert allowed(matcher) == {b"x", b"y", b"xx", b"xy", b"yx"}
    assert allowed(fork) == {b"y", b";"}  # the fork kept its own point
    assert matcher._shared is fork._shared  # and shares the generation's memo
    matcher.accept_string("xy")
    matcher.reset()
    assert allowed(matcher) == {b"x", b"y", b"xx", b"xy", b"yx"}


def test_every_path_the_masks_allow_is_accepted_and_every_other_refused() -> None:
    """Token sequences of up to four pieces: a mask allows exactly the tokens whose
    text keeps the grammar and the check, as ``accepts`` on prefixes judges."""
    grammar, _, info = checked()
    compiled = structgen.compile(grammar, info)
    for length in range(1, 5):
        for path in itertools.product(range(len(PIECES)), repeat=length):
            matcher = structgen.Matcher(compiled)
            text = b""
            for token in path:
                may = token in matcher.allowed_tokens()
                assert matcher.accept_token(token) == may
                if not may:
                    break
                text += PIECES[token]
            else:
                assert matcher.can_terminate() == grammar.accepts(text)
                assert text.count(b"x") <= LIMIT
