"""String maximum lengths the lexer does not count, counted while the text is written.

A ``maxLength: 32767`` would cost the lexer tens of automaton states a character,
each with token groups a step may wait for (``schema2grammar`` counts a plain
string's maximum up to ``Options.lexer_max_length``, 8). Past that the
translator hands the maximum over as a ``schema2grammar.CountedString``, which
also travels in the terminal's regex as a named group (``max_length_N``,
``_TAG``: its report entry; ``_LATE``: beside a pattern, how many characters a
long enough text may still need to end) that the engine reads as plain
grouping, and the matcher counts the characters:

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
  count; those few tokens are then followed one by one;
- beside a pattern that may still want characters (a pattern of words, after a
  space), within that many of the maximum a token is followed to the lexer state
  it leaves, whose distance to the string's end must fit in what is left
  (``StringLengths._distance``).

Minimum lengths need no count: the grammar's regex takes "at least ``n``
characters" in ``n`` states, and the translator writes them so.
"""

from __future__ import annotations

import importlib
import json
import re
from collections import deque
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from schema2grammar.translation import CountedString
from structgen.checks import REFUSED
from structgen.engine.dfa import DEAD
from structgen.engine.lexer import START, Lexer
from structgen.engine.lr import LRTable
from structgen.engine.matcher import Matcher as EngineMatcher
from structgen.json.syntax import CLOSED, ERROR, PLAIN, STRING_STATES, starts_character, string_next

OUTSIDE: Final = STRING_STATES
"""Where a byte falls outside any string; inside one, the string states of
``structgen.json.syntax`` (``PLAIN``: between characters). A character counts
where it starts, so a text at the maximum can always still close its string."""

QUOTE: Final = 0x22

_sre: Final[Any] = importlib.import_module("re._parser")
_const: Final[Any] = importlib.import_module("re._constants")


def marked_maximum(pattern: str) -> tuple[int, int, int] | None:
    """The maximum, the tag (-1: none; ``schema2grammar`` writes the index of its
    report entry) and the closing distance (``_LATE``: 0 unless written) of a
    terminal whose pattern ends with its one ``max_length_N``,
    ``max_length_N_TAG`` or ``max_length_N_TAG_LATE`` group at the top level,
    around a JSON string (``[ \t]*(?:(?P<max_length_32767_4>"..."))``); None for
    any other pattern (a group of that name elsewhere means nothing)."""
    names = [name for name in re.findall(r"\(\?P<(max_length_[^>]*)>", pattern) if CountedString.read(name) is not None]
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
    found = CountedString.read(names[0])
    assert found is not None
    return found.maximum, found.tag, found.late


def step(state: int, count: int, byte: int) -> tuple[int, int]:
    """The (state, characters) after ``byte``; inside a string the count is that
    of the characters it has started, outside it is 0. The bytes are a grammar's
    JSON text: a byte no JSON string takes (which the grammar refuses anyway)
    counts as a character of its own."""
    if state == OUTSIDE:
        return (PLAIN, 0) if byte == QUOTE else (OUTSIDE, 0)
    following = string_next(state, byte)
    if following == CLOSED:
        return OUTSIDE, 0
    if following == ERROR:
        return PLAIN, count + 1
    return following, count + 1 if starts_character(state, byte) else count


def read_string(state: int, count: int, data: bytes) -> tuple[int, int, bool]:
    """The string in progress after ``data`` (read from inside it), up to where
    ``data`` closes it: the state and characters there, and whether it closed."""
    for byte in data:
        if state == PLAIN and byte == QUOTE:
            return state, count, True
        state, count = step(state, count, byte)
    return state, count, False


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
    ``PLAIN``), whether it closes that string and else where inside a character
    it ends, and the most it writes into a string it opens, read from outside
    and from inside one (it may close that one first). Built once per vocabulary
    (``counts_for``)."""

    def __init__(self, vocab: list[bytes]) -> None:
        size = len(vocab)
        self.chars: npt.NDArray[np.int32] = np.zeros(size, dtype=np.int32)
        self.closing: npt.NDArray[np.bool_] = np.zeros(size, dtype=np.bool_)
        self.ends: npt.NDArray[np.int8] = np.zeros(size, dtype=np.int8)  # the state a token leaves its string in
        opened_outside: npt.NDArray[np.int32] = np.zeros(size, dtype=np.int32)
        opened_inside: npt.NDArray[np.int32] = np.zeros(size, dtype=np.int32)
        self.quoted: npt.NDArray[np.bool_] = np.zeros(size, dtype=np.bool_)
        for token_id, data in enumerate(vocab):
            self.ends[token_id], self.chars[token_id], self.closing[token_id] = read_string(PLAIN, 0, data)
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


class MarkedStrings:
    """What a grammar's ``max_length_N`` markers ask of the matcher: the check of the
    maxima it can count (None: none), and the markers it cannot (their report tags,
    and the longest of their maxima), which the translation reports approximated."""

    def __init__(self, check: StringLengths | None, uncounted_tags: list[int], longest_uncounted: int) -> None:
        self.check = check
        self.uncounted_tags = uncounted_tags
        self.longest_uncounted = longest_uncounted


def marked_strings(lexer: Lexer, table: LRTable, terminals: list[Any]) -> MarkedStrings:
    """The markers of a grammar's terminals (``marked_maximum``), less those a value
    may share with another string terminal or another maximum (``mixed_strings``)."""
    marked = {index: found for index, terminal in enumerate(terminals)
              if terminal.kind == "re" and (found := marked_maximum(terminal.value)) is not None}
    mixed = mixed_strings(lexer, table, set(marked), {index: most for index, (most, _, _) in marked.items()})
    maxima = {index: most for index, (most, _, _) in marked.items() if index not in mixed}
    late = {index: marked[index][2] for index in maxima}
    return MarkedStrings(StringLengths(maxima, late) if maxima else None, sorted(marked[index][1] for index in mixed),
                         max((marked[index][0] for index in mixed), default=0))


def mixed_strings(lexer: Lexer, table: LRTable, marked: set[int], maxima: dict[int, int]) -> set[int]:
    """The marked terminals a string may still be written as beside another
    string terminal, unmarked or of another maximum, under one LR state (an
    ``anyOf`` of two kinds of string): the count would know the string's
    maximum only once the other gives way, possibly past it, with no valid end
    left. They are not counted (a lexeme that starts with a quote is one of
    ``strings``; a shared prefix that soon parts is counted as mixing too)."""
    if not marked:
        return set()
    opened, _ = lexer.step(START, QUOTE)
    strings = set(lexer.reachable_terminals[opened]) if opened != DEAD else set()
    mixed: set[int] = set()
    for row in table.actions:
        here = [terminal for terminal in row if terminal in strings]
        ours = [terminal for terminal in here if terminal in marked]
        if ours and (len(here) > len(ours) or len({maxima[terminal] for terminal in ours}) > 1):
            mixed.update(ours)
    return mixed


class StringLengths:
    """The maxima of one grammar's marked terminals, a ``structgen.checks.TextCheck``
    whose state is (where the text is in a string, the characters it holds).

    Beside a pattern a text may need more characters before it can end (a pattern
    of words, after a space: a word); ``late`` holds, per terminal, the most a long
    enough text may need (``schema2grammar.automata.closing_distance``). Within
    that many characters of the maximum a token is followed to the lexer state it
    leaves its string in, whose distance to the string's end (``_distance``) must
    fit in what the maximum leaves."""

    def __init__(self, maxima: dict[int, int], late: dict[int, int] | None = None) -> None:
        self.maxima = maxima  # terminal -> its maxLength
        self.late = {terminal: most for terminal, most in (late or {}).items() if most}  # terminal -> closing distance
        self.latest = max(self.late.values(), default=0)
        # a token writing no more than this into a string it opens is never refused for it
        self.least = min(most - self.late.get(terminal, 0) for terminal, most in maxima.items())
        self._marked = 0
        for terminal in maxima:
            self._marked |= 1 << terminal
        self._distances: dict[tuple[int, int, int], int] = {}  # (lexer state, string state, terminals) -> _distance

    # -- structgen.checks.TextCheck

    def prepare(self, vocab: list[bytes]) -> None:
        counts_for(vocab)

    def start(self) -> tuple[int, int]:
        return (OUTSIDE, 0)

    def shared(self) -> None:
        return None

    def refuse(self, state: tuple[int, int], engine: EngineMatcher, row: bytes, vocab: list[bytes], shared: None) -> bytes:
        too_long = self.refused(engine, state[0], state[1], row, vocab)
        return row if too_long is None else (np.frombuffer(row, dtype=np.uint8) & ~too_long).tobytes()

    def before(self, state: tuple[int, int], engine: EngineMatcher, data: bytes, judged: bool) -> Any:
        string, count = state
        if not judged and not self.kept(engine, string, count, data):
            return REFUSED
        for byte in data:
            string, count = step(string, count, byte)
        return (string, count)

    def after(self, state: tuple[int, int], engine: EngineMatcher, shared: None, judged: bool) -> bool:
        return True

    def text_kept(self, data: bytes) -> bool:
        return True

    def lexeme_kept(self, terminals: list[int], lexeme: bytes) -> bool:
        """Whether a lexeme taken as one of ``terminals`` keeps to the largest of their
        maxima (any of them unmarked: no maximum)."""
        if not terminals or any(terminal not in self.maxima for terminal in terminals):
            return True
        try:
            characters = len(json.loads(lexeme[lexeme.index(b'"'):]))
        except ValueError:  # not a JSON string after all: nothing a length says
            return True
        return characters <= max(self.maxima[t] for t in terminals)

    def for_grammar(self, lexer: Lexer, table: LRTable, terminals: list[Any]) -> StringLengths | None:
        return marked_strings(lexer, table, terminals).check

    def bounds(self, engine: EngineMatcher) -> tuple[int, int, int] | None:
        """The largest maximum and closing distance of the terminals the lexeme in
        progress can still become, and those terminals (None: one has no maximum)."""
        terminals = engine.lexeme_terminals()
        if terminals == 0 or terminals & ~self._marked:
            return None
        ours = [terminal for terminal in self.maxima if terminals >> terminal & 1]
        return max(self.maxima[t] for t in ours), max(self.late.get(t, 0) for t in ours), terminals

    def kept(self, engine: EngineMatcher, state: int, count: int, data: bytes) -> bool:
        """Whether ``data``, written at (``state``, ``count``) where ``engine`` is,
        keeps the string in progress and each it opens to their maxima, with room
        for the characters each needs to end (the engine is advanced on a fork to
        where each begins)."""
        if state != OUTSIDE:
            found = self.bounds(engine)
            if found is not None:
                ended, written, closed = read_string(state, count, data)
                if not self._fits(engine, data, ended, written, closed, found):
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
                found = self.bounds(fork)
                if found is not None:
                    ended, written, closed = read_string(PLAIN, 0, data[done:])
                    if not self._fits(fork, data[done:], ended, written, closed, found):
                        return False
        return True

    def _fits(self, engine: EngineMatcher, data: bytes, ended: int, written: int, closed: bool,
              found: tuple[int, int, int]) -> bool:
        """Whether ``data`` (read from ``engine``'s point inside a string, where it
        writes ``written`` characters and ends in string state ``ended``, or closes
        it) keeps that string within its maximum, with room to end."""
        most, late, terminals = found
        if written > most:
            return False
        if closed or written <= most - late:
            return True
        lexer = engine.compiled.lexer
        [end] = lexer.ends_within(engine.config.lexer_state, [data])
        return end == DEAD or self._distance(lexer, end, ended, terminals) <= most - written

    def refused(self, engine: EngineMatcher, state: int, count: int, allowed: bytes, vocab: list[bytes]
                ) -> npt.NDArray[np.uint8] | None:
        """The tokens of the row ``allowed`` that would take a string past its
        maximum, or leave it too little room to end, as a bitmask row of bytes
        (None: none would)."""
        counts = counts_for(vocab)
        found = self.bounds(engine) if state != OUTSIDE else None
        most, late = (found[0], found[1]) if found is not None else (0, 0)
        near = found is not None and count + (counts.longest if state == PLAIN else counts.longest_bytes) > most - late
        opening = self.least < counts.longest_opened  # a token's own new string may pass a maximum
        if not near and not opening:
            return None
        bits = np.unpackbits(np.frombuffer(allowed, dtype=np.uint8), bitorder="little")[: len(vocab)].astype(np.bool_)
        refuse: npt.NDArray[np.bool_] = np.zeros(len(vocab), dtype=np.bool_)
        if near and found is not None:
            if state == PLAIN:
                refuse |= counts.chars > most - count
                if late:
                    self._refuse_unending(engine, count, found, bits & ~refuse & ~counts.closing
                                          & (counts.chars > most - count - late), refuse, vocab, counts)
            else:  # inside a character, read alone (after a backslash: the tokens that can go on)
                for token_id in np.flatnonzero(bits):
                    ended, written, closed = read_string(state, count, vocab[token_id])
                    refuse[token_id] = not self._fits(engine, vocab[token_id], ended, written, closed, found)
        if opening:
            among = counts.opened[state] > self.least if state in counts.opened else counts.quoted
            for token_id in np.flatnonzero(bits & among & ~refuse):
                refuse[token_id] = not self.kept(engine, state, count, vocab[token_id])
        refuse &= bits
        if not refuse.any():
            return None
        row: npt.NDArray[np.bool_] = np.zeros(len(allowed) * 8, dtype=np.bool_)
        row[: len(refuse)] = refuse
        return np.packbits(row, bitorder="little")

    def _refuse_unending(self, engine: EngineMatcher, count: int, found: tuple[int, int, int],
                         window: npt.NDArray[np.bool_], refuse: npt.NDArray[np.bool_], vocab: list[bytes],
                         counts: TokenCounts) -> None:
        """Refuse the tokens in ``window`` (each stays inside the string, read from
        between characters) that leave fewer characters than the text's distance to
        its end: followed to their lexer states, each distinct end judged once."""
        ids = np.flatnonzero(window)
        if not len(ids):
            return
        most, _, terminals = found
        lexer = engine.compiled.lexer
        ends = np.array(lexer.ends_within(engine.config.lexer_state, [vocab[i] for i in ids]), dtype=np.int64)
        keys = ends * 32 + counts.ends[ids]  # the string states are fewer than 32
        distinct, where = np.unique(keys, return_inverse=True)
        distance = np.array([0 if key // 32 == DEAD else self._distance(lexer, key // 32, key % 32, terminals)
                             for key in distinct.tolist()], dtype=np.int64)
        refuse[ids] |= counts.chars[ids] + distance[where] > most - count

    def _distance(self, lexer: Lexer, lexer_state: int, state: int, terminals: int) -> int:
        """The fewest characters after which a string in ``lexer_state`` (and string
        ``state``) can close as one of ``terminals`` (a bit set); ``latest`` + 1
        where it needs more. Breadth first over (lexer state, string state), the
        bytes after a character's first free (0-1 breadth first: those go first)."""
        key = (lexer_state, state, terminals)
        known = self._distances.get(key)
        if known is not None:
            return known
        table, accepts = lexer.table, lexer.accepts
        best = {(lexer_state, state): 0}
        pending = deque([(0, lexer_state, state)])
        found = self.latest + 1
        while pending:
            distance, current, inside = pending.popleft()
            if distance >= found:
                break  # taken in order of distance: nothing shorter is left
            if distance > best[(current, inside)]:
                continue  # reached sooner since
            for byte in range(256):
                target = table[current * 256 + byte]
                if target == DEAD:
                    continue
                after, added = step(inside, 0, byte)
                if after == OUTSIDE:  # closed here: as one of the terminals?
                    if any(terminals >> terminal & 1 for terminal in accepts[target]):
                        found = distance
                        break
                    continue
                if distance + added < best.get((target, after), found):
                    best[(target, after)] = distance + added
                    if added:
                        pending.append((distance + 1, target, after))
                    else:
                        pending.appendleft((distance, target, after))
        self._distances[key] = found
        return found
