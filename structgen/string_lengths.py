"""String maximum lengths the lexer does not count, counted while the text is written.

A ``maxLength: 32767`` would cost the lexer tens of automaton states a character,
each with token groups a step may wait for (``schema2grammar`` counts a plain
string's maximum up to ``Options.lexer_max_length``, 8). Past that the
translator writes the string's terminal inside a group named ``max_length_N``
(``_TAG``: its report entry), which the engine reads as plain grouping, and the matcher counts the characters:

- ``step`` follows, one byte at a time, whether the text is inside a JSON string,
  how many characters it holds so far (an escape, a ``\\u`` pair of surrogates, a
  UTF-8 sequence is one character, as JSON Schema counts them) and where inside a
  character it is;
- inside a string, the engine says which terminals the lexeme can still become
  with the stack it has (``lexeme_terminals``); when all of them are marked, their
  maximum is the one to keep to (``structgen.grammar`` leaves uncounted a marker a
  value may share with another string terminal, or another maximum, under one LR
  state: the count could learn the maximum only past it);
- per vocabulary, the characters each token adds to the string it starts in
  (``TokenCounts``) make the mask a comparison of arrays, needed only within the
  longest token's count of the maximum. A token that opens a new string can only
  pass a maximum longer than itself where a maximum is below the longest token's
  count; those few tokens are then followed one by one.

Minimum lengths need no count: the grammar's regex takes "at least ``n``
characters" in ``n`` states, and the translator writes them so.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from structgen.engine.matcher import Matcher as EngineMatcher

(OUTSIDE, PLAIN, ESCAPE, U0, U1D, U1, U2H, U2, U3H, U3, PAIR, LOW0, LOWU, L1, L2, L3,
 CONT1, CONT2, CONT3) = range(19)
"""Where a byte falls: outside any string; inside one between characters, after a
backslash, after ``\\u`` and 0-3 hex digits (``D``: the first was ``d``; ``H``: a
high surrogate so far), after a high surrogate's escape (``PAIR``: its low half
follows, which is the same character), inside that low half's escape, before 1-3
continuation bytes of a UTF-8 character. A character counts where it starts, so
a text at the maximum can always still close its string."""

QUOTE: Final = 0x22

_MARKER: Final = re.compile(r"max_length_([0-9]+)(?:_([0-9]+))?")
_sre: Final[Any] = importlib.import_module("re._parser")
_const: Final[Any] = importlib.import_module("re._constants")


def marked_maximum(pattern: str) -> tuple[int, int] | None:
    """The maximum, and the tag (-1: none; ``schema2grammar`` writes the index of
    its report entry), of a terminal whose pattern ends with its one
    ``max_length_N`` or ``max_length_N_TAG`` group at the top level, around a JSON
    string (``[ \t]*(?:(?P<max_length_32767_4>"..."))``); None for any other
    pattern (a group of that name elsewhere means nothing)."""
    names = [name for name in re.findall(r"\(\?P<(max_length_[^>]*)>", pattern) if _MARKER.fullmatch(name)]
    if len(names) != 1:
        return None
    try:
        parsed = _sre.parse(pattern)
    except (re.error, RecursionError):
        return None
    items = list(parsed.data)
    if not items or items[-1][0] is not _const.SUBPATTERN or items[-1][1][0] != parsed.state.groupdict[names[0]]:
        return None
    body = list(items[-1][1][3])
    if not body or body[0] != (_const.LITERAL, QUOTE):
        return None  # not a JSON string: nothing to count
    found = _MARKER.fullmatch(names[0])
    assert found is not None
    return int(found.group(1)), int(found.group(2)) if found.group(2) is not None else -1


def step(state: int, count: int, byte: int) -> tuple[int, int]:
    """The (state, characters) after ``byte``; inside a string the count is that
    of the characters it has started, outside it is 0. The bytes are a grammar's
    JSON text: an escape is well formed, a high surrogate's is followed by a low one."""
    if state == OUTSIDE:
        return (PLAIN, 0) if byte == QUOTE else (OUTSIDE, 0)
    if state == PLAIN or state == PAIR:
        if byte == QUOTE:
            return OUTSIDE, 0
        if byte == 0x5C:
            return (LOW0, count) if state == PAIR else (ESCAPE, count + 1)
        if byte >= 0xF0:
            return CONT3, count + 1
        if byte >= 0xE0:
            return CONT2, count + 1
        if byte >= 0xC0:
            return CONT1, count + 1
        return PLAIN, count + 1
    if state == ESCAPE:
        return (U0 if byte == 0x75 else PLAIN), count
    if state == U0:
        return (U1D if byte in b"dD" else U1), count
    if state == U1D:
        return (U2H if byte in b"89abAB" else U2), count
    if state in _FOLLOWING:
        return _FOLLOWING[state], count
    return (PLAIN if state == CONT1 else state - 1), count  # CONT2 -> CONT1, CONT3 -> CONT2


_FOLLOWING: Final = {U1: U2, U2: U3, U3: PLAIN, U2H: U3H, U3H: PAIR, LOW0: LOWU, LOWU: L1, L1: L2, L2: L3, L3: PLAIN}
"""The states a byte simply moves on from (a hex digit, the ``u`` of a low half)."""


def in_string(state: int, count: int, data: bytes) -> int:
    """The characters of the string in progress after ``data`` (read from inside
    it), up to where ``data`` closes it."""
    for byte in data:
        if state == PLAIN and byte == QUOTE:
            break
        state, count = step(state, count, byte)
    return count


def opened_most(state: int, data: bytes) -> int:
    """The most characters ``data`` (read from ``state``) writes into a string it
    opens itself (0: it opens none)."""
    most = 0
    inside_own = False
    count = 0
    for byte in data:
        before = state
        state, count = step(state, count, byte)
        if before == OUTSIDE and state == PLAIN:
            inside_own = True
        elif inside_own and state != OUTSIDE:
            most = max(most, count)
    return most


class TokenCounts:
    """Per token: the characters it adds to a string it starts inside of (read from
    ``PLAIN``), and the most it writes into a string it opens, read from outside
    and from inside one (it may close that one first). Built once per vocabulary
    (``counts_for``)."""

    def __init__(self, vocab: list[bytes]) -> None:
        size = len(vocab)
        self.chars: npt.NDArray[np.int32] = np.zeros(size, dtype=np.int32)
        opened_outside = np.zeros(size, dtype=np.int32)
        opened_inside = np.zeros(size, dtype=np.int32)
        self.quoted: npt.NDArray[np.bool_] = np.zeros(size, dtype=np.bool_)
        for token_id, data in enumerate(vocab):
            self.chars[token_id] = in_string(PLAIN, 0, data)
            if QUOTE in data:
                self.quoted[token_id] = True
                opened_outside[token_id] = opened_most(OUTSIDE, data)
                opened_inside[token_id] = opened_most(PLAIN, data)
        self.longest = int(self.chars.max()) if size else 0
        self.longest_bytes = max((len(data) for data in vocab), default=0)  # what a token adds at most from any state
        self.opened = {OUTSIDE: opened_outside, PLAIN: opened_inside}
        self.longest_opened = max(int(opened_outside.max()), int(opened_inside.max())) if size else 0


_COUNTS: dict[int, tuple[list[bytes], TokenCounts]] = {}


def counts_for(vocab: list[bytes]) -> TokenCounts:
    """The vocabulary's ``TokenCounts``, built once (``structgen.compile`` builds them
    with a grammar that needs them, so no mask waits for them)."""
    found = _COUNTS.get(id(vocab))
    if found is None or found[0] is not vocab:
        found = _COUNTS[id(vocab)] = (vocab, TokenCounts(vocab))
    return found[1]


class StringLengths:
    """The maxima of one grammar's marked terminals: ``refused`` and ``kept``."""

    def __init__(self, maxima: dict[int, int]) -> None:
        self.maxima = maxima  # terminal -> its maxLength
        self.least = min(maxima.values())
        self._marked = 0
        for terminal in maxima:
            self._marked |= 1 << terminal

    def maximum(self, engine: EngineMatcher) -> int | None:
        """The largest maximum of the terminals the lexeme in progress can still
        become (None: one of them has none)."""
        terminals = engine.lexeme_terminals()
        if terminals == 0 or terminals & ~self._marked:
            return None
        return max(most for terminal, most in self.maxima.items() if terminals >> terminal & 1)

    def kept(self, engine: EngineMatcher, state: int, count: int, data: bytes) -> bool:
        """Whether ``data``, written at (``state``, ``count``) where ``engine`` is,
        keeps the string in progress and each it opens to their maxima (the engine
        is advanced on a fork to where each begins)."""
        if state != OUTSIDE:
            most = self.maximum(engine)
            if most is not None and in_string(state, count, data) > most:
                return False
        fork: EngineMatcher | None = None
        done = 0  # bytes of data the fork has read
        for index, byte in enumerate(data):
            before = state
            state, count = step(state, count, byte)
            if before == OUTSIDE and state == PLAIN:  # a string opens: its bounds are known after the quote
                fork = fork if fork is not None else engine.fork()
                if not fork.accept_bytes(data[done : index + 1]):
                    return True  # the grammar refuses the text: not a length's business
                done = index + 1
                most = self.maximum(fork)
                if most is not None and in_string(PLAIN, 0, data[index + 1 :]) > most:
                    return False
        return True

    def refused(self, engine: EngineMatcher, state: int, count: int, allowed: bytes, vocab: list[bytes]
                ) -> npt.NDArray[np.uint8] | None:
        """The tokens of the row ``allowed`` that would take a string past its
        maximum, as a bitmask row of bytes (None: none would)."""
        counts = counts_for(vocab)
        most = self.maximum(engine) if state != OUTSIDE else None
        near = most is not None and count + (counts.longest if state == PLAIN else counts.longest_bytes) > most
        opening = self.least < counts.longest_opened  # a token's own new string may pass a maximum
        if not near and not opening:
            return None
        bits = np.unpackbits(np.frombuffer(allowed, dtype=np.uint8), bitorder="little")[: len(vocab)].astype(np.bool_)
        refuse = np.zeros(len(vocab), dtype=np.bool_)
        if near and most is not None:
            if state == PLAIN:
                refuse |= counts.chars > most - count
            else:  # inside a character, read alone (after a backslash: the tokens that can go on)
                for token_id in np.flatnonzero(bits):
                    refuse[token_id] = in_string(state, count, vocab[token_id]) > most
        if opening:
            among = counts.opened[state] > self.least if state in counts.opened else counts.quoted
            for token_id in np.flatnonzero(bits & among):
                refuse[token_id] |= not self.kept(engine, state, count, vocab[token_id])
        refuse &= bits
        if not refuse.any():
            return None
        row = np.zeros(len(allowed) * 8, dtype=np.bool_)
        row[: len(refuse)] = refuse
        return np.packbits(row, bitorder="little")
