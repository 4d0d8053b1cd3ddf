"""``IntMap``: the packed int -> int map the tables keep per sequence and verdict class."""

from __future__ import annotations

import random

import pytest

from structgen.engine.int_map import IntMap


def test_an_int_map_answers_as_a_dict_does() -> None:
    """Keys of every shape the tables use (a sequence shifted up past a small
    number, small ints, 62-bit ints), overwritten, grown through many sizes."""
    rng = random.Random(1)
    expected: dict[int, int] = {}
    found = IntMap()
    for _ in range(50_000):
        key = rng.choice([rng.randrange(1 << 62), rng.randrange(100), rng.randrange(1 << 20) << 32 | rng.randrange(40)])
        value = rng.randrange(-5, 1 << 40)
        expected[key] = value
        found.put(key, value)
    assert len(found) == len(expected)
    assert all(found.get(key, -7) == value for key, value in expected.items())
    missing = [key for key in (rng.randrange(1 << 62) for _ in range(2_000)) if key not in expected]
    assert all(found.get(key, -7) == -7 for key in missing)
    assert len(expected) * 2 <= found.slots() <= len(expected) * 4  # at most half full, at least a quarter


def test_an_int_map_refuses_a_negative_key() -> None:
    """-1 marks a free slot: a negative key is an error to set and has no value."""
    found = IntMap()
    with pytest.raises(ValueError, match="at least 0"):
        found.put(-1, 0)
    assert found.get(-1, -7) == -7 and len(found) == 0
