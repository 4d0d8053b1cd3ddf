"""Bytes to the token ids a model's tokenizer would produce for them.

Jump-forward appends text the grammar forces; the model should then see the
tokens its own tokenizer makes of that text, not some other split of the same
bytes. ``TokenEncoder.encode`` asks the tokenizer and checks that the ids spell
exactly the bytes asked for; where they do not (bytes that are not whole UTF-8
characters, SentencePiece's prepended space, text that looks like a special token)
it falls back to the longest-match split over the ordinary tokens, which always
spells the bytes exactly.
"""

from __future__ import annotations

import weakref
from typing import Any

from structgen.tokenizer_info import TokenizerInfo


# the bytes -> id table of each TokenizerInfo (a walk over the whole vocabulary), kept
# as long as the info is: an encoder is made per generate() call
_tables: weakref.WeakKeyDictionary[TokenizerInfo, tuple[dict[bytes, int], int]] = weakref.WeakKeyDictionary()


def _table(info: TokenizerInfo) -> tuple[dict[bytes, int], int]:
    """The ordinary tokens by their bytes, and the longest one's length."""
    found = _tables.get(info)
    if found is None:
        special = frozenset(info.special_token_ids)
        ids: dict[bytes, int] = {}
        for token_id, data in enumerate(info.decoded_vocab):
            if data and token_id not in special:
                ids.setdefault(data, token_id)
        found = _tables[info] = (ids, max((len(data) for data in ids), default=1))
    return found


class TokenEncoder:
    """Encodes bytes into token ids that spell them exactly."""

    def __init__(self, tokenizer: Any, info: TokenizerInfo) -> None:
        self.tokenizer = tokenizer
        self.info = info
        self._special = frozenset(info.special_token_ids)
        self._ids, self._longest = _table(info)

    def encode(self, data: bytes) -> list[int]:
        """Token ids whose bytes are ``data``: the tokenizer's own split when it spells
        ``data`` exactly with ordinary tokens, else the longest-match split."""
        if not data:
            return []
        ids = self._tokenizer_ids(data)
        if ids is not None:
            return ids
        return self.longest_match(data)

    def _tokenizer_ids(self, data: bytes) -> list[int] | None:
        if self.info.prepends_space:
            return None  # its first token carries a space the text lacks
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        ids = [int(i) for i in self.tokenizer.encode(text, add_special_tokens=False)]
        if any(i in self._special for i in ids) or self.info.join_bytes(ids) != data:
            return None
        return ids

    def longest_match(self, data: bytes) -> list[int]:
        """The greedy longest-token split of ``data`` (every byte must have a token)."""
        ids: list[int] = []
        start = 0
        while start < len(data):
            for end in range(min(len(data), start + self._longest), start, -1):
                token_id = self._ids.get(data[start:end])
                if token_id is not None:
                    ids.append(token_id)
                    start = end
                    break
            else:
                raise ValueError(f"byte {data[start]:#04x} has no token in this vocabulary")
        return ids
