"""The tokenizer-level trie cache: one trie per vocabulary, in memory and on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from structgen import TokenizerInfo
from structgen import trie_cache
from structgen.engine.vocab import build_trie


def vocabulary(extra: bytes = b"") -> TokenizerInfo:
    pieces = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b"hello", extra or b"x y"]
    return TokenizerInfo(pieces + [b""], stop_token_ids=[len(pieces)])


def arrays(trie: object) -> list[list[int]]:
    return [list(getattr(trie, name)) for name in ("node_byte", "node_depth", "first_token", "token_ids")]


def test_disk_round_trip_and_sharing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(trie_cache, "_by_digest", {})
    info = vocabulary(b"round trip")
    built = trie_cache.trie_for(info)
    assert arrays(built) == arrays(build_trie(info.decoded_vocab, [len(info.decoded_vocab) - 1]))
    stored = list(tmp_path.glob("trie-*.bin"))
    assert len(stored) == 1
    assert trie_cache.trie_for(vocabulary(b"round trip")) is built  # same bytes: shared in memory

    monkeypatch.setattr(trie_cache, "_by_digest", {})  # a new process: read from disk
    loaded = trie_cache.trie_for(vocabulary(b"round trip"))
    assert loaded is not built and arrays(loaded) == arrays(built)
    assert trie_cache.trie_for(vocabulary(b"other")) is not loaded


DAMAGE = {
    "empty": lambda data: b"",
    "foreign": lambda data: b"garbage",
    "truncated": lambda data: data[:-3],
    # the same length, the last token id out of range: the ranges are checked too
    "flipped_id": lambda data: data[:-4] + (2**31 - 1).to_bytes(4, "little"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_files_are_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    monkeypatch.setenv("STRUCTGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(trie_cache, "_by_digest", {})
    info = vocabulary(b"damaged")
    expected = arrays(trie_cache.trie_for(info))
    (path,) = tmp_path.glob("trie-*.bin")
    data = path.read_bytes()
    path.write_bytes(DAMAGE[damage](data))
    monkeypatch.setattr(trie_cache, "_by_digest", {})
    assert arrays(trie_cache.trie_for(vocabulary(b"damaged"))) == expected
    assert path.read_bytes() == data  # rewritten whole


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRUCTGEN_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(trie_cache, "_by_digest", {})
    assert trie_cache.cache_dir() is None
    trie_cache.trie_for(vocabulary(b"off"))
    assert not any(tmp_path.rglob("*"))

