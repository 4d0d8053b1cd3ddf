"""``TaggedMatcher``: free text with triggered sections (``structural_tag``), as one
matcher the decoders use as any other.

The output is text, sections, text, ...: the text holds no trigger nor exclude;
where a trigger completes, the section is matched by the grammar of the tags it
opens (``StructuralTag.section``, one ``Matcher`` fed the trigger), and
the section ends as soon as that grammar is complete; then text again (or, with
``stop_after_first``, the end). A token may cross any border, even several.

Masks: in text, every text token but those that complete a trigger the section
then refuses, or an exclude; rows are built once per (text's tail, whether the
output may stop) and shared. In a section, the section matcher's row, with the
tokens that end the section inside them and go on as text: those start with
what is left of an end tag (judged per step, a handful of checks, against rows
built once), or hold a whole end tag with more after it (each followed step by
step: few for a tag like ``</function>``, more for a one-character end).

Each step keeps an immutable point, the section matcher as it stood (a fork), so
``fork`` is O(1) and ``rollback`` O(k) for k steps.
"""

from __future__ import annotations

import operator
from collections import OrderedDict
import numpy as np
import numpy.typing as npt

from structgen.bitmask import ids_row, write_row
from structgen.engine.tokenset import row_token_ids
from structgen.matcher import Matcher, compile
from structgen.structural_tag import StructuralTag
from structgen.tokenizer_info import TokenizerInfo
from structgen.vocab_index import index_for

TEXT, SECTION, END, DONE = range(4)
_MAX_TABLES = 8


class _Point:
    """The output after a step: ``phase``; in text, ``tail`` (its end that may
    still begin a trigger or an exclude); ``count`` (sections so far); in a
    section, its ``trigger`` and ``inner`` matcher (a snapshot: only forks of it
    are advanced)."""

    __slots__ = ("phase", "tail", "count", "trigger", "inner", "previous")

    def __init__(self, phase: int, tail: bytes, count: int, trigger: int, inner: Matcher | None, previous: _Point | None) -> None:
        self.phase, self.tail, self.count, self.trigger, self.inner, self.previous = phase, tail, count, trigger, inner, previous


class _Cursor:
    """A point being advanced (its ``inner`` owned, so fed in place)."""

    __slots__ = ("phase", "tail", "count", "trigger", "inner")

    def __init__(self, point: _Point) -> None:
        self.phase, self.tail, self.count, self.trigger = point.phase, point.tail, point.count, point.trigger
        self.inner = point.inner.fork() if point.inner is not None else None


class _Tables:
    """What every matcher of one (structural tag, vocabulary) shares."""

    def __init__(self, tags: StructuralTag, info: TokenizerInfo) -> None:
        self.tags, self.info = tags, info
        self.vocab = info.decoded_vocab
        self.size = info.vocab_size
        self.words_count = (self.size + 31) // 32
        self.stops = frozenset(info.stop_token_ids)
        self.words = [w.encode("utf-8") for w in tags.triggers] + [w.encode("utf-8") for w in tags.excludes]
        self.triggers = len(tags.triggers)
        self.prefixes = {w[:i] for w in self.words for i in range(1, len(w))}
        self.longest = max(len(w) for w in self.words)
        self.compiled = [compile(tags.section(t), info) for t in tags.triggers]
        self.opened: list[Matcher] = []  # each trigger's sections, the trigger written
        for trigger, compiled in zip(tags.triggers, self.compiled):
            opened = Matcher(compiled)
            if not opened.accept_string(trigger):
                raise ValueError(f"structural tag: no tag can begin with its trigger {trigger!r} in this vocabulary")
            self.opened.append(opened)
        self.ends = [sorted({tag.end.encode("utf-8") for tag in tags.tags if tag.begin.startswith(t)}) for t in tags.triggers]
        self.index = index_for(self.vocab)
        self.by_bytes = self.index.by_bytes
        self.text_row = self.bits(self.index.text_ids)
        self.stop_row = self.bits(sorted(self.stops))
        self._text_rows: dict[tuple[bytes, bool], int] = {}
        self._leaving: dict[tuple[int, bytes], tuple[int, int]] = {}
        self._holding: list[list[int] | None] = [None] * self.triggers
        # per trigger, what may be left of an end tag, longest first: a token the section
        # could leave at two cuts leaves at the earlier one (``split``), so the shorter rest
        # has the last word in ``TaggedMatcher._row``
        self.rests = [sorted({end[-size:] for end in ends for size in range(1, len(end) + 1)}, key=len, reverse=True)
                      for ends in self.ends]
        # built now, with the grammars, rather than in a step: the rows of text before
        # and after a section, and the tokens that hold a whole end tag
        self.text_row_for(b"", 0)
        self.text_row_for(b"", 1)
        self.holding_rows = [self.bits(self.holding(trigger)) for trigger in range(self.triggers)]

    def bits(self, token_ids: list[int]) -> int:
        return ids_row(token_ids, self.words_count)

    def fresh(self, trigger: int) -> Matcher:
        """A section's matcher, just after its ``trigger``."""
        return self.opened[trigger].fork()

    def may_stop(self, count: int) -> bool:
        return count > 0 or not self.tags.at_least_one

    # -- text

    def scan(self, tail: bytes, data: bytes) -> tuple[int, int] | bytes:
        """In text ``tail + data``: the first word completed (its index, and where
        the text after it starts), or the new tail."""
        written = tail + data
        best: tuple[int, int] | None = None
        for index, word in enumerate(self.words):
            at = written.find(word)
            if at >= 0 and (best is None or at + len(word) < best[1]):
                best = (index, at + len(word))
        if best is not None:
            return best
        for size in range(min(self.longest - 1, len(written)), 0, -1):
            if written[-size:] in self.prefixes:
                return written[-size:]
        return b""

    def text_row_for(self, tail: bytes, count: int) -> int:
        key = (tail, self.may_stop(count))
        row = self._text_rows.get(key)
        if row is None:
            vocab = self.vocab
            hits = sorted({i for word in self.words for i in self.index.completing(tail, word)})
            start = _Point(TEXT, tail, count, -1, None, None)
            kept = [i for i in hits if self.feed(_Cursor(start), vocab[i])]
            row = (self.text_row & ~self.bits(hits)) | self.bits(kept) | (self.stop_row if key[1] else 0)
            self._text_rows[key] = row
        return row

    # -- sections

    def leaving(self, trigger: int, rest: bytes, count: int) -> tuple[int, int]:
        """The tokens that start with ``rest`` (the last of an end tag) and go on:
        all of them, and those whose text after ``rest`` is valid once the section
        is closed (the ``count``-th)."""
        key = (trigger, rest)
        found = self._leaving.get(key)
        if found is None:
            vocab = self.vocab
            longer = [i for i in self.index.starting_with(rest) if len(vocab[i]) > len(rest)]
            after = _Point(END if self.tags.stop_after_first else TEXT, b"", count, -1, None, None)
            kept = [i for i in longer if self._text_after(after, vocab[i][len(rest) :])]
            found = (self.bits(longer), self.bits(kept))
            self._leaving[key] = found
        return found

    def _text_after(self, point: _Point, data: bytes) -> bool:
        """Whether ``data`` may follow a closed section (``point``): as text with no
        word in it at once (most tokens), else followed step by step."""
        if point.phase == TEXT and isinstance(self.scan(b"", data), bytes):
            return True
        return self.feed(_Cursor(point), data)

    def holding(self, trigger: int) -> list[int]:
        """The tokens that hold a whole end tag of ``trigger``'s tags with more after it."""
        found = self._holding[trigger]
        if found is None:
            ends, vocab = self.ends[trigger], self.vocab
            held = sorted({i for e in ends for i in self.index.holding(e)})
            found = [i for i in held if any(0 <= vocab[i].find(e) < len(vocab[i]) - len(e) for e in ends)]
            self._holding[trigger] = found
        return found

    def split(self, cursor: _Cursor, data: bytes) -> int | None:
        """Where in ``data`` the section ends, when it ends before the end of ``data``."""
        inner = cursor.inner
        assert inner is not None
        ends = self.ends[cursor.trigger]
        for cut in range(1, len(data)):
            head = data[:cut]
            if any(head.endswith(e) or e.endswith(head) for e in ends):
                trial = inner.fork()
                if trial.accept_string(head) and trial.can_terminate():
                    return cut
        return None

    def feed(self, cursor: _Cursor, data: bytes) -> bool:
        """Advance ``cursor`` by ``data`` (text, no stop token); False where the
        language refuses it (``cursor`` is then spoilt)."""
        while True:
            if cursor.phase == TEXT:
                if not data:
                    return True
                scanned = self.scan(cursor.tail, data)
                if isinstance(scanned, bytes):
                    cursor.tail = scanned
                    return True
                word, after = scanned
                if word >= self.triggers:
                    return False  # an exclude
                data = (cursor.tail + data)[after:]
                cursor.phase, cursor.trigger, cursor.inner, cursor.tail = SECTION, word, self.fresh(word), b""
            elif cursor.phase == SECTION:
                if not data:
                    return True
                inner = cursor.inner
                assert inner is not None
                cut = self.split(cursor, data)
                taken = data if cut is None else data[:cut]
                if not inner.accept_string(taken):
                    return False
                if cut is None and not inner.can_terminate():
                    return True
                self.close(cursor)
                data = b"" if cut is None else data[cut:]
            else:
                return not data

    def close(self, cursor: _Cursor) -> None:
        cursor.count += 1
        cursor.phase = END if self.tags.stop_after_first else TEXT
        cursor.trigger, cursor.inner, cursor.tail = -1, None, b""


_tables: OrderedDict[tuple[int, int], tuple[StructuralTag, TokenizerInfo, _Tables]] = OrderedDict()


def tables_for(tags: StructuralTag, info: TokenizerInfo) -> _Tables:
    key = (id(tags), id(info))
    found = _tables.get(key)
    if found is not None and found[0] is tags and found[1] is info:
        _tables.move_to_end(key)
        return found[2]
    tables = _Tables(tags, info)
    _tables[key] = (tags, info, tables)
    if len(_tables) > _MAX_TABLES:
        _tables.popitem(last=False)
    return tables


class TaggedMatcher:
    """A ``Matcher`` for a structural tag's text and sections."""

    def __init__(self, tags: StructuralTag, info: TokenizerInfo, _tables: _Tables | None = None,
                 _point: _Point | None = None) -> None:
        self.tags = tags
        self.info = info
        self._tables = _tables if _tables is not None else tables_for(tags, info)
        self._point = _point if _point is not None else _Point(TEXT, b"", 0, -1, None, None)
        self.words = self._tables.words_count
        self.vocab_size = self._tables.size

    def allowed_row(self) -> bytes:
        """The allowed tokens as a bitmask row (``Matcher.allowed_row``'s layout)."""
        return self._row().to_bytes(4 * self.words, "little")

    def _row(self) -> int:
        point, tables = self._point, self._tables
        if point.phase == TEXT:
            return tables.text_row_for(point.tail, point.count)
        if point.phase == END:
            return tables.stop_row
        if point.phase == DONE:
            return 0
        inner = point.inner
        assert inner is not None
        base = int.from_bytes(inner.allowed_row(), "little") & ~tables.stop_row
        row = base
        for rest in tables.rests[point.trigger]:
            if not self._ends_with(inner, rest, base):
                continue
            longer, kept = tables.leaving(point.trigger, rest, point.count + 1)
            row = (row & ~longer) | kept
        holding = tables.holding(point.trigger)
        if holding:
            row &= ~tables.holding_rows[point.trigger]
            row |= tables.bits([i for i in holding if tables.feed(_Cursor(point), tables.vocab[i])])
        return row

    def _ends_with(self, inner: Matcher, rest: bytes, row: int) -> bool:
        """Whether the section is complete after exactly ``rest``."""
        first = self._tables.by_bytes.get(rest[:1])
        if first is not None and not row >> first & 1:
            return False  # its first byte is already refused (the masks are exact)
        trial = inner.fork()
        return trial.accept_string(rest) and trial.can_terminate()

    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32], index: int = 0) -> None:
        write_row(bitmask, self.allowed_row(), self.words, self.vocab_size, index)

    def allowed_tokens(self) -> list[int]:
        return row_token_ids(self.allowed_row())

    def accept_token(self, token_id: int) -> bool:
        token_id = operator.index(token_id)
        if not 0 <= token_id < self.vocab_size:
            return False
        point, tables = self._point, self._tables
        if token_id in tables.stops:
            if not self.can_terminate():
                return False
            self._point = _Point(DONE, b"", point.count, -1, None, point)
            return True
        data = tables.vocab[token_id]
        return bool(data) and self._take(data)

    def accept_string(self, text: str | bytes | bytearray | memoryview) -> bool:
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        return not data or self._take(data)

    def _take(self, data: bytes) -> bool:
        point = self._point
        if point.phase == DONE:
            return False
        cursor = _Cursor(point)
        if not self._tables.feed(cursor, data):
            return False
        self._point = _Point(cursor.phase, cursor.tail, cursor.count, cursor.trigger, cursor.inner, point)
        return True

    def rollback(self, num_tokens: int) -> None:
        point = self._point
        for _ in range(operator.index(num_tokens)):
            if point.previous is None:
                raise ValueError("cannot roll back past the start of the output")
            point = point.previous
        self._point = point

    def fork(self) -> TaggedMatcher:
        return TaggedMatcher(self.tags, self.info, self._tables, self._point)

    def reset(self) -> None:
        while self._point.previous is not None:
            self._point = self._point.previous

    def find_jump_forward_string(self) -> str:
        point = self._point
        if point.phase == SECTION and point.inner is not None:
            return point.inner.find_jump_forward_string()
        return ""

    def can_terminate(self) -> bool:
        point = self._point
        return point.phase == END or (point.phase == TEXT and self._tables.may_stop(point.count))

    def is_terminated(self) -> bool:
        return self._point.phase == DONE

    def sections(self) -> int:
        """How many sections the output holds so far."""
        return self._point.count



_bytes_info: TokenizerInfo | None = None


def tags_accept(tags: StructuralTag, text: str | bytes) -> bool:
    """Whether ``text`` is a whole output of ``tags`` (followed byte by byte)."""
    global _bytes_info
    if _bytes_info is None:
        _bytes_info = TokenizerInfo([bytes([b]) for b in range(256)] + [b""], stop_token_ids=[256], special_token_ids=[256])
    matcher = TaggedMatcher(tags, _bytes_info)
    return matcher.accept_string(text) and matcher.can_terminate()
