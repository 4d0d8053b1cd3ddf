"""``ReasoningMatcher``: a reasoning section (``structgen.reasoning``), then an
answer that its own ``Matcher`` governs, as one matcher the decoders use as any other.

The output is read byte by byte as the language
``start · (text without end) · end · separator · answer``: the start tag unless
the prompt opened the section, free text until the first end tag, at most
``MAX_SEPARATOR`` whitespace bytes, then the answer. A token may cross any of
these borders (``"</think>\\n\\n{"`` is one step). Inside the section every text
token is allowed but a stop token, and a token that writes the end tag only
where the answer's matcher takes what follows it in that token; once ``budget``
tokens are spent, only tokens that go on writing the end tag. The rows of the
section and the separator depend on the answer's start only, so they are built
once per (answer grammar, vocabulary, tags) and shared (``_Tables``); the
answer's rows are its matcher's.

Each accepted step keeps its state in an immutable list, with how many steps the
answer's matcher took in it, so ``fork`` is O(1) and ``rollback`` O(k) for k
steps, as the answer matcher's own. The shared rows hold the answer's compiled
grammar: the last ``_MAX_TABLES`` are kept, beyond ``compiled_budget``'s bound.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from typing import Any, TypeAlias, Union

import numpy as np
import numpy.typing as npt

from structgen.bitmask import ids_row, write_row
from structgen.engine.tokenset import row_token_ids
from structgen.matcher import Matcher
from structgen.reasoning import MAX_SEPARATOR, SEPARATOR_BYTES, Reasoning
from structgen.tagged_matcher import TaggedMatcher
from structgen.tokenizer_info import TokenizerInfo
from structgen.utf8 import whole_characters
from structgen.vocab_index import index_for

OPENING, THINKING, SEPARATING, ANSWERING, DONE = range(5)

Answer: TypeAlias = Union[Matcher, TaggedMatcher]
"""What follows the section: a grammar's matcher, or a structural tag's."""

_MAX_TABLES = 8


class _State:
    """One point of the output: ``phase``, ``n`` (bytes of the start tag written
    while OPENING, of the end tag matched while THINKING, of separator while
    SEPARATING), ``used`` (tokens in the section), and how many steps the answer's
    matcher took to get here from the point before."""

    __slots__ = ("phase", "n", "used", "inner_steps", "previous")

    def __init__(self, phase: int, n: int, used: int, inner_steps: int, previous: _State | None) -> None:
        self.phase = phase
        self.n = n
        self.used = used
        self.inner_steps = inner_steps
        self.previous = previous


class _Move:
    """What one step does: the next (phase, n, used), and what the answer's matcher
    is fed (``token`` for a whole token, else ``data`` bytes; neither: nothing)."""

    __slots__ = ("phase", "n", "used", "data", "token")

    def __init__(self, phase: int, n: int, used: int, data: bytes | None = None, token: int | None = None) -> None:
        self.phase, self.n, self.used, self.data, self.token = phase, n, used, data, token


class _Tables:
    """What every matcher of one (answer grammar, vocabulary, tags) shares: the
    section's and the separator's rows, built on first use, and the answer's
    matcher at its start, which judges what a token writes after the end tag."""

    def __init__(self, info: TokenizerInfo, reasoning: Reasoning, answer: Answer | None) -> None:
        self.vocab = info.decoded_vocab
        self.size = info.vocab_size
        self.words = (self.size + 31) // 32
        self.stops = frozenset(info.stop_token_ids)
        self.start = reasoning.start.encode("utf-8")
        self.end = reasoning.end.encode("utf-8")
        self.answer = answer  # at its start; only forks of it are fed
        self.index = index_for(self.vocab)
        self.by_bytes = self.index.by_bytes
        self.text_row = self._bits(self.index.text_ids)
        self.stop_row = self._bits(sorted(self.stops))
        self._answer_row: int | None = None
        self._rows: dict[tuple[int, int, bool], int] = {}
        self._verdicts: dict[bytes, bool] = {}
        self._spaced_tokens: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]] | None = None

    def row(self, phase: int, n: int, forced: bool) -> int:
        key = (phase, n, forced)
        row = self._rows.get(key)
        if row is None:
            row = self._build(phase, n, forced)
            self._rows[key] = row
        return row

    def answer_row(self) -> int:
        """The answer's first row: every text token and the stop tokens without a matcher."""
        if self._answer_row is None:
            if self.answer is None:
                self._answer_row = self.text_row | self.stop_row
            else:
                self._answer_row = int.from_bytes(self.answer.allowed_row(), "little")
        return self._answer_row

    def takes(self, data: bytes) -> bool:
        """Whether the answer may begin with ``data`` (one step of its matcher)."""
        if self.answer is None:
            return True
        verdict = self._verdicts.get(data)
        if verdict is None:
            token_id = self.by_bytes.get(data)
            first = self.by_bytes.get(data[:1])
            if first is not None and not self.answer_row() >> first & 1:
                verdict = False  # its first byte already is no beginning of an answer (the masks are exact)
            elif token_id is not None:
                verdict = bool(self.answer_row() >> token_id & 1)
            else:
                verdict = self.answer.fork().accept_string(data)
            self._verdicts[data] = verdict
        return verdict

    def allowed(self, move: _Move | None) -> bool:
        return move is not None and (move.data is None or self.takes(move.data))

    def _build(self, phase: int, n: int, forced: bool) -> int:
        vocab, start, end = self.vocab, self.start, self.end
        if phase == OPENING or (phase == THINKING and forced):
            rest = start[n:] if phase == OPENING else end[n:]
            return self._of(self._writing(rest), _State(phase, n, 0, 0, None), forced)
        if phase == THINKING:
            closing = self.index.completing(end[:n], end)
            state = _State(THINKING, n, 0, 0, None)
            refused = [i for i in closing if not self.allowed(step(self, state, i, vocab[i], None))]
            return self.text_row & ~self._bits(refused)
        assert phase == SEPARATING
        ids, widths, verdicts = self._spaced()
        room = MAX_SEPARATOR - n
        fits = widths <= room
        state = _State(SEPARATING, n, 0, 0, None)
        longer = [i for i in ids[~fits].tolist() if self.allowed(step(self, state, i, vocab[i], None))]
        return self.answer_row() & ~self._bits(ids) | self._bits(ids[fits & verdicts]) | self._bits(longer)

    def _spaced(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """The tokens that begin with whitespace: their ids, how much, and whether
        the answer takes the rest (or the rest is empty) once all of it is separator."""
        if self._spaced_tokens is None:
            spaced = _spaced_vocabulary(self.vocab)
            first_ok = np.ones(257, dtype=np.bool_)  # 256: the rest is empty
            if self.answer is not None:
                row, by_bytes = self.answer_row(), self.by_bytes
                for byte in range(256):  # a rest whose first byte is refused is refused (the masks are exact)
                    token_id = by_bytes.get(bytes([byte]))
                    first_ok[byte] = token_id is None or bool(row >> token_id & 1)
            verdicts = first_ok[spaced.firsts]
            if self.answer is not None:
                for j in np.nonzero(verdicts & (spaced.firsts < 256))[0].tolist():
                    verdicts[j] = self.takes(spaced.rests[j])
            self._spaced_tokens = (spaced.ids, spaced.widths, verdicts)
        return self._spaced_tokens

    def _writing(self, rest: bytes) -> list[int]:
        """The tokens that go on writing ``rest``: a beginning of it, or all of it and more."""
        shorter = [self.by_bytes[rest[:size]] for size in range(1, len(rest)) if rest[:size] in self.by_bytes]
        return shorter + self.index.starting_with(rest)

    def _of(self, candidates: list[int], state: _State, forced: bool) -> int:
        budget = 0 if forced else None
        vocab = self.vocab
        return self._bits([i for i in candidates if self.allowed(step(self, state, i, vocab[i], budget))])

    def _bits(self, token_ids: list[int] | npt.NDArray[np.int64]) -> int:
        return ids_row(token_ids, self.words)


class _SpacedTokens:
    """The tokens of a vocabulary that begin with whitespace: ids, how much
    whitespace, the rest's first byte (256: no rest) and the rests."""

    def __init__(self, vocab: list[bytes]) -> None:
        ids, widths, firsts, rests = [], [], [], []
        for token_id, data in enumerate(vocab):
            if data and data[0] in SEPARATOR_BYTES:
                rest = data.lstrip(SEPARATOR_BYTES)
                ids.append(token_id)
                widths.append(len(data) - len(rest))
                firsts.append(rest[0] if rest else 256)
                rests.append(rest)
        self.ids = np.array(ids, dtype=np.int64)
        self.widths = np.array(widths, dtype=np.int64)
        self.firsts = np.array(firsts, dtype=np.int64)
        self.rests = rests


_spaced_by_vocabulary: OrderedDict[int, tuple[list[bytes], _SpacedTokens]] = OrderedDict()


def _spaced_vocabulary(vocab: list[bytes]) -> _SpacedTokens:
    """``_SpacedTokens`` of ``vocab``, once per vocabulary: every answer grammar reads the same."""
    found = _spaced_by_vocabulary.get(id(vocab))
    if found is not None and found[0] is vocab:
        return found[1]
    spaced = _SpacedTokens(vocab)
    _spaced_by_vocabulary[id(vocab)] = (vocab, spaced)
    if len(_spaced_by_vocabulary) > 4:
        _spaced_by_vocabulary.popitem(last=False)
    return spaced


def step(tables: _Tables, state: _State, token_id: int | None, data: bytes, budget: int | None) -> _Move | None:
    """The move of one step writing ``data`` (a token ``token_id``, or raw text when
    None) from ``state``; None where the language refuses it. What the answer's
    matcher is fed is left to the caller to judge."""
    phase, n, used = state.phase, state.n, state.used
    if token_id is not None and token_id in tables.stops:
        if phase == SEPARATING or phase == ANSWERING:
            return _Move(ANSWERING if tables.answer is not None else DONE, 0, used, token=token_id)
        return None
    if not data:
        return None  # a special token: no text, so nothing of this language
    if phase == ANSWERING:
        return _Move(ANSWERING, 0, used, token=token_id, data=None if token_id is not None else data)
    if phase == DONE:
        return None
    forced = budget is not None and used >= budget
    if phase == OPENING:
        rest = tables.start[n:]
        if rest.startswith(data):
            if len(data) < len(rest):
                return _Move(OPENING, n + len(data), used + 1)
            return _Move(THINKING, 0, used + 1)
        if not data.startswith(rest):
            return None
        data = data[len(rest) :]
        phase, n = THINKING, 0
    if phase == THINKING:
        end = tables.end
        if forced:
            rest = end[n:]
            if rest.startswith(data) and len(data) < len(rest):
                return _Move(THINKING, n + len(data), used + 1)
            if not data.startswith(rest):
                return None
            data = data[len(rest) :]
        else:
            written = end[:n] + data
            at = written.find(end)
            if at < 0:
                return _Move(THINKING, _matched(written, end), used + 1)
            data = written[at + len(end) :]
        phase, n = SEPARATING, 0
        used += 1
    assert phase == SEPARATING
    cut = 0
    while cut < len(data) and n + cut < MAX_SEPARATOR and data[cut] in SEPARATOR_BYTES:
        cut += 1
    if cut == len(data):
        return _Move(SEPARATING, n + cut, used)
    return _Move(ANSWERING, 0, used, data=data[cut:])


def _matched(written: bytes, end: bytes) -> int:
    """The longest tail of ``written`` that is a proper beginning of ``end``."""
    for size in range(min(len(end) - 1, len(written)), 0, -1):
        if written.endswith(end[:size]):
            return size
    return 0


_tables: OrderedDict[tuple[int, int, str, str], tuple[Any, _Tables]] = OrderedDict()


def tables_for(info: TokenizerInfo, reasoning: Reasoning, answer: Answer | None) -> _Tables:
    """The shared rows of (answer grammar, vocabulary, tags): built once, the last
    ``_MAX_TABLES`` kept. ``answer`` is at its start."""
    owner: Any = info if answer is None else answer.compiled if isinstance(answer, Matcher) else answer.tags
    key = (id(owner), id(info), reasoning.start, reasoning.end)
    found = _tables.get(key)
    if found is not None and found[0] is owner:
        _tables.move_to_end(key)
        return found[1]
    tables = _Tables(info, reasoning, answer.fork() if answer is not None else None)
    # built now, with the grammars, rather than in a step: the section's first row and the separator's
    tables.row(THINKING if reasoning.opened else OPENING, 0, reasoning.budget == 0)
    tables.row(SEPARATING, 0, False)
    _tables[key] = (owner, tables)
    if len(_tables) > _MAX_TABLES:
        _tables.popitem(last=False)
    return tables


class ReasoningMatcher:
    """A ``Matcher`` for a reasoning section and then ``answer`` (None: free text;
    given at its start)."""

    def __init__(self, reasoning: Reasoning, answer: Answer | None, info: TokenizerInfo,
                 _tables: _Tables | None = None, _state: _State | None = None) -> None:
        self.reasoning = reasoning
        self.answer = answer
        self.info = info
        self._tables = _tables if _tables is not None else tables_for(info, reasoning, answer)
        if _state is None:
            _state = _State(THINKING if reasoning.opened else OPENING, 0, 0, 0, None)
        self._state = _state
        self.words = self._tables.words
        self.vocab_size = self._tables.size

    # -- where the output is

    def in_answer(self) -> bool:
        """Whether the section has ended (the separator or the answer is being written)."""
        return self._state.phase >= SEPARATING

    def answer_begins(self) -> bool:
        """Whether nothing of the answer is written yet (the section may still go on)."""
        return self._state.phase <= SEPARATING

    def closing_text(self) -> str | None:
        """What ends the section from here: the rest of the start tag and the end
        tag ("" between the end tag and the answer); None once the answer began."""
        state, tables = self._state, self._tables
        if state.phase == OPENING:
            return whole_characters(tables.start[state.n :] + tables.end)
        if state.phase == THINKING:
            return whole_characters(tables.end[state.n :])
        return "" if state.phase == SEPARATING else None

    def answer_at_start(self) -> Answer | None:
        """A fresh fork of the answer's matcher at its start (None: free text)."""
        start = self._tables.answer
        return start.fork() if start is not None else None

    def _forced(self) -> bool:
        budget = self.reasoning.budget
        return budget is not None and self._state.used >= budget

    # -- masks

    def allowed_row(self) -> bytes:
        """The allowed tokens as a bitmask row (``Matcher.allowed_row``'s layout)."""
        state = self._state
        if state.phase == ANSWERING:
            if self.answer is not None:
                return self.answer.allowed_row()
            return self._bytes(self._tables.text_row | self._tables.stop_row)
        if state.phase == DONE:
            return bytes(4 * self.words)
        if state.phase == SEPARATING:
            return self._bytes(self._tables.row(SEPARATING, state.n, False))
        return self._bytes(self._tables.row(state.phase, state.n, self._forced()))

    def _bytes(self, row: int) -> bytes:
        return row.to_bytes(4 * self.words, "little")

    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32], index: int = 0) -> None:
        write_row(bitmask, self.allowed_row(), self.words, self.vocab_size, index)

    def allowed_tokens(self) -> list[int]:
        return row_token_ids(self.allowed_row())

    # -- steps

    def accept_token(self, token_id: int) -> bool:
        token_id = operator.index(token_id)
        if not 0 <= token_id < self.vocab_size:
            return False
        return self._take(token_id, self._tables.vocab[token_id])

    def accept_string(self, text: str | bytes | bytearray | memoryview) -> bool:
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        return not data or self._take(None, data)

    def _take(self, token_id: int | None, data: bytes) -> bool:
        state = self._state
        move = step(self._tables, state, token_id, data, self.reasoning.budget)
        if move is None:
            return False
        inner = 0
        if move.token is not None or move.data is not None:
            if self.answer is None:
                pass
            elif move.token is not None:
                if not self.answer.accept_token(move.token):
                    return False
                inner = 1
            else:
                assert move.data is not None
                if not self.answer.accept_string(move.data):
                    return False
                inner = 1
        self._state = _State(move.phase, move.n, move.used, inner, state)
        return True

    def rollback(self, num_tokens: int) -> None:
        state, inner = self._state, 0
        for _ in range(operator.index(num_tokens)):
            if state.previous is None:
                raise ValueError("cannot roll back past the start of the output")
            inner += state.inner_steps
            state = state.previous
        if inner and self.answer is not None:
            self.answer.rollback(inner)
        self._state = state

    def fork(self) -> ReasoningMatcher:
        answer = self.answer.fork() if self.answer is not None else None
        return ReasoningMatcher(self.reasoning, answer, self.info, self._tables, self._state)

    def reset(self) -> None:
        while self._state.previous is not None:
            self.rollback(1)

    def find_jump_forward_string(self) -> str:
        """The start tag's rest, the end tag's rest once the budget is spent, or
        the answer's own."""
        state, tables = self._state, self._tables
        if state.phase == OPENING:
            return whole_characters(tables.start[state.n :])
        if state.phase == THINKING:
            return whole_characters(tables.end[state.n :]) if self._forced() else ""
        if state.phase == ANSWERING and self.answer is not None:
            return self.answer.find_jump_forward_string()
        return ""

    def can_terminate(self) -> bool:
        phase = self._state.phase
        if phase < SEPARATING:
            return False
        return self.answer is None or self.answer.can_terminate()

    def is_terminated(self) -> bool:
        phase = self._state.phase
        if phase == DONE:
            return True
        return phase == ANSWERING and self.answer is not None and self.answer.is_terminated()
