"""A map from non-negative ints to ints, in two packed vectors.

The tables keep a few maps with an entry for every sequence or verdict class
(Go at 128k tokens: 80,000 sequences, 85,000 classes, 140,000 memoized results).
In a ``dict`` each entry is a slot and a boxed key, about 90 bytes; here it is
two ``i64`` slots at most half full, 32 bytes, and the collector never sees it.
Open addressing with linear probing; nothing is ever removed.
"""

from __future__ import annotations

from typing import Final

from librt.vecs import vec
from mypy_extensions import i64, mypyc_attr

FREE: Final = -1
"""A slot's key when the slot holds nothing (every key is at least 0)."""

_FIRST_SLOTS: Final = 8


@mypyc_attr(acyclic=True)
class IntMap:
    """``key -> value`` for keys >= 0, grown to stay at most half full."""

    def __init__(self) -> None:
        self._keys = vec[i64]([i64(FREE)] * _FIRST_SLOTS)
        self._values = vec[i64]([i64(0)] * _FIRST_SLOTS)
        self._mask: i64 = _FIRST_SLOTS - 1
        self.count = 0

    def get(self, key: i64, default: i64) -> i64:
        """The value of ``key``, or ``default`` when it has none."""
        if key < 0:
            return default  # no key is negative (and -1 marks a free slot)
        slot = self._find(key)
        return self._values[slot] if self._keys[slot] == key else default

    def put(self, key: i64, value: i64) -> None:
        """Set ``key``'s value (``key`` >= 0)."""
        if key < 0:
            raise ValueError(f"IntMap keys are at least 0, not {key}")
        if (self.count + 1) * 2 > self._mask + 1:
            self._grow()
        slot = self._find(key)
        if self._keys[slot] == FREE:
            self._keys[slot] = key
            self.count += 1
        self._values[slot] = value

    def _find(self, key: i64) -> i64:
        """The slot holding ``key``, or the free one where it would go."""
        keys = self._keys
        mask = self._mask
        slot = _slot(key, mask)
        while True:
            found = keys[slot]
            if found == key or found == FREE:
                return slot
            slot = (slot + 1) & mask

    def __len__(self) -> int:
        return self.count

    def slots(self) -> int:
        """Slots allocated (each 16 bytes): for counting the map's memory."""
        return len(self._keys)

    def _grow(self) -> None:
        old_keys = self._keys
        old_values = self._values
        size = len(old_keys) * 2
        self._keys = vec[i64]([i64(FREE)] * size)
        self._values = vec[i64]([i64(0)] * size)
        self._mask = size - 1
        self.count = 0
        for i in range(len(old_keys)):
            if old_keys[i] != FREE:
                self.put(old_keys[i], old_values[i])


def _slot(key: i64, mask: i64) -> i64:
    """Where ``key``'s probe starts: its two halves folded and mixed (the keys are
    often a sequence shifted up past a small number), no product past 63 bits."""
    folded = (key ^ (key >> 32)) & 0xFFFFFFFF
    mixed = folded * 0x5BD1E995
    return (mixed ^ (mixed >> 24)) & mask
