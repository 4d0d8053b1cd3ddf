"""The vocabulary trie, built once per tokenizer and kept in memory and on disk.

The trie is the only compile-time table that depends on the tokenizer alone, and
the slowest part of compiling a small grammar on a large vocabulary (about half a
second at 128k tokens). It is keyed by a digest of the token bytes and of the ids
left out, so every grammar compiled for the same vocabulary shares one, in this
process and the next.

The disk copy lives in ``$STRUCTGEN_CACHE_DIR`` (default
``$XDG_CACHE_HOME/structgen`` or ``~/.cache/structgen``; ``off`` disables it). A
file that cannot be read is ignored and rewritten.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import tempfile
import weakref
from array import array
from pathlib import Path

from structgen.engine.matcher import special_tokens
from structgen.engine.vocab import TokenTrie, build_trie
from structgen.tokenizer_info import TokenizerInfo

FORMAT = b"structgen-trie-1\n"
_by_digest: dict[str, TokenTrie] = {}
_digest_of: weakref.WeakKeyDictionary[TokenizerInfo, str] = weakref.WeakKeyDictionary()


def cache_dir() -> Path | None:
    """Where tries are stored, or None when the disk cache is off."""
    configured = os.environ.get("STRUCTGEN_CACHE_DIR")
    if configured is not None:
        return None if configured.strip().lower() in ("", "off") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "structgen"


def trie_for(info: TokenizerInfo) -> TokenTrie:
    """The trie of ``info``'s text tokens (special and stop ids left out)."""
    digest = _digest_of.get(info)
    if digest is None:
        digest = vocabulary_digest(info.decoded_vocab, _excluded(info))
        _digest_of[info] = digest
    trie = _by_digest.get(digest)
    if trie is None:
        trie = _load(digest, len(info.decoded_vocab))
        if trie is None:
            trie = build_trie(info.decoded_vocab, _excluded(info))
            _store(digest, trie)
        _by_digest[digest] = trie
    return trie


def vocabulary_digest(vocab: list[bytes], excluded: list[int]) -> str:
    h = hashlib.sha256(FORMAT)
    for data in vocab:
        h.update(struct.pack("<I", len(data)))
        h.update(data)
    h.update(array("i", excluded).tobytes())
    return h.hexdigest()


def _excluded(info: TokenizerInfo) -> list[int]:
    """The ids the trie leaves out (special, stop, spelling nothing)."""
    return special_tokens(info.decoded_vocab, info.special_token_ids, info.stop_token_ids)


def _path(digest: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / f"trie-{digest[:32]}.bin"


def _store(digest: str, trie: TokenTrie) -> None:
    path = _path(digest)
    if path is None:
        return
    parts = [trie.node_byte, trie.node_depth, trie.first_token, trie.token_ids]
    temporary = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as out:
            temporary = out.name
            out.write(FORMAT + digest.encode() + b"\n")
            for part in parts:
                out.write(struct.pack("<Q", len(part)))
                out.write(array("i", part).tobytes())
        os.chmod(temporary, 0o644)  # a shared cache folder serves every user
        os.replace(temporary, path)
    except OSError as exc:  # a read-only home is not an error: the cache is an optimization
        if temporary:
            Path(temporary).unlink(missing_ok=True)
        print(f"structgen: cannot write the trie cache {path}: {exc}", file=sys.stderr)


def _load(digest: str, vocab_size: int) -> TokenTrie | None:
    path = _path(digest)
    if path is None or not path.is_file():
        return None
    try:
        data = path.read_bytes()
        header = FORMAT + digest.encode() + b"\n"
        if not data.startswith(header):
            return None
        offset = len(header)
        parts: list[list[int]] = []
        for _ in range(4):
            (count,) = struct.unpack_from("<Q", data, offset)
            offset += 8
            values = array("i")
            values.frombytes(data[offset : offset + 4 * count])
            if len(values) != count:
                return None
            parts.append(values.tolist())
            offset += 4 * count
        node_byte, node_depth, first_token, token_ids = parts
        if offset != len(data) or not (len(node_byte) == len(node_depth) == len(first_token) - 1):
            return None
        # a damaged file of the right length must not reach the engine
        if token_ids and not (0 <= min(token_ids) and max(token_ids) < vocab_size):
            return None
        if not node_byte or node_byte[0] != -1 or not all(0 <= b < 256 for b in node_byte[1:]):
            return None
        if first_token[-1] != len(token_ids) or any(a > b for a, b in zip(first_token, first_token[1:])):
            return None
        return TokenTrie(node_byte, node_depth, first_token, token_ids)
    except (OSError, ValueError, struct.error):  # unreadable, truncated, foreign
        return None
