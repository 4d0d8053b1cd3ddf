"""Which tokens of a vocabulary start with, or hold, given bytes.

The matchers of reasoning sections and structural tags ask this at their first
masks (which tokens could write the end tag, which start with what is left of
it). A scan of 128k tokens per question costs 10-20 ms, and a tag asks it once
per suffix of its end. So the answers come from an index built once per
vocabulary and shared by every grammar: the tokens sorted by their bytes (a
prefix is a range found by bisection), and the tokens holding a given string,
each string scanned once.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict

MAX_INDEXES = 4
"""Vocabularies indexed at once (the least recently used dropped)."""
MAX_NEEDLES = 256
"""Strings per vocabulary whose holding tokens are kept."""


class VocabIndex:
    """The tokens of ``vocab`` (special ids, which spell nothing, left out)."""

    def __init__(self, vocab: list[bytes]) -> None:
        self.vocab = vocab
        self.by_bytes: dict[bytes, int] = {}  # a token of each text, the first of its id
        for token_id, data in enumerate(vocab):
            if data:
                self.by_bytes.setdefault(data, token_id)
        self.text_ids = [token_id for token_id, data in enumerate(vocab) if data]  # every token that spells text
        pairs = sorted((data, token_id) for token_id, data in enumerate(vocab) if data)
        self._keys = [data for data, _ in pairs]
        self._ids = [token_id for _, token_id in pairs]
        self._holding: OrderedDict[bytes, list[int]] = OrderedDict()

    def starting_with(self, prefix: bytes) -> list[int]:
        """The tokens whose bytes start with ``prefix`` (``prefix`` itself included)."""
        keys, found = self._keys, []
        at = bisect_left(keys, prefix)
        while at < len(keys) and keys[at].startswith(prefix):
            found.append(self._ids[at])
            at += 1
        return found

    def holding(self, needle: bytes) -> list[int]:
        """The tokens whose bytes hold ``needle``."""
        found = self._holding.get(needle)
        if found is None:
            found = [token_id for token_id, data in enumerate(self.vocab) if needle in data]
            self._holding[needle] = found
            if len(self._holding) > MAX_NEEDLES:
                self._holding.popitem(last=False)
        else:
            self._holding.move_to_end(needle)
        return found

    def completing(self, head: bytes, word: bytes) -> list[int]:
        """The tokens ``t`` such that ``head + t`` holds ``word`` (``head`` holds no
        ``word``): those holding it, and those that finish it after a tail of ``head``
        that begins it."""
        found = set(self.holding(word))
        for size in range(1, min(len(head), len(word) - 1) + 1):
            if word.startswith(head[-size:]):
                found.update(self.starting_with(word[size:]))
        return sorted(found)


_indexes: OrderedDict[int, tuple[list[bytes], VocabIndex]] = OrderedDict()


def index_for(vocab: list[bytes]) -> VocabIndex:
    """``vocab``'s index, built once (the last ``MAX_INDEXES`` kept)."""
    found = _indexes.get(id(vocab))
    if found is not None and found[0] is vocab:
        _indexes.move_to_end(id(vocab))
        return found[1]
    index = VocabIndex(vocab)
    _indexes[id(vocab)] = (vocab, index)
    if len(_indexes) > MAX_INDEXES:
        _indexes.popitem(last=False)
    return index
