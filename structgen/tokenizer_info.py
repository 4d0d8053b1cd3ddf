"""What the engine needs to know about a tokenizer: the bytes of every token id.

The mask engine works on bytes, so a single wrong byte for a single token makes
masks wrong for every grammar. ``TokenizerInfo`` reads each token's bytes from
the tokenizer's own vocabulary tables (``token_bytes``), never from decoding,
and records which ids are special (never allowed by a grammar) and which end
generation.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Iterable, Sequence

from structgen.token_bytes import (
    PieceSpellingError,
    byte_level_piece_bytes,
    sentencepiece_piece_bytes,
)

KNOWN_STOP_TEXTS = (
    "</s>",
    "<|endoftext|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end_of_text|>",
    "<|end|>",
    "<|EOT|>",
    "<end_of_turn>",
    "<｜end▁of▁sentence｜>",
)
"""Texts of special tokens that end generation in the models that use them."""

UTF8_BYTES = [*range(0x00, 0xC0), *range(0xC2, 0xF5)]
"""The byte values that can occur in UTF-8 text (0xC0, 0xC1 and 0xF5-0xFF never do)."""

BYTE_LEVEL = "byte-level BPE"
SENTENCEPIECE = "SentencePiece"
SENTENCEPIECE_BYTE_FALLBACK = "SentencePiece with byte fallback"
CUSTOM = "custom"


class TokenizerError(ValueError):
    """A tokenizer whose token bytes cannot be known exactly."""


class TokenizerInfo:
    """The exact bytes of every token id of a model, and which ids are special.

    ``decoded_vocab[i]`` is the bytes token ``i`` stands for (``b""`` for special
    and padding ids); it has ``vocab_size`` entries, the model's logits size, which
    may exceed the tokenizer's (those extra ids are special). ``special_token_ids``
    are never allowed by a grammar; ``stop_token_ids`` (a subset of them) end
    generation and are allowed once the output is complete.

    ``prepends_space`` is True when the tokenizer puts a space before a text it
    encodes from the start (SentencePiece's dummy prefix): the first token of such
    an encoding carries one space the text does not have.
    """

    def __init__(
        self,
        decoded_vocab: Sequence[bytes],
        *,
        vocab_size: int | None = None,
        stop_token_ids: Iterable[int] = (),
        special_token_ids: Iterable[int] = (),
        special_token_texts: dict[int, str] | None = None,
        kind: str = CUSTOM,
        prepends_space: bool = False,
    ) -> None:
        size = len(decoded_vocab)
        if vocab_size is None:
            vocab_size = size
        if vocab_size < size:
            raise TokenizerError(
                f"vocab_size={vocab_size} is smaller than the tokenizer's {size} token ids"
            )
        stops = sorted(set(stop_token_ids))
        special = set(special_token_ids) | set(stops) | set(range(size, vocab_size))
        for token_id in special:
            if not 0 <= token_id < vocab_size:
                raise TokenizerError(f"token id {token_id} is outside the vocabulary (size {vocab_size})")
        vocab = list(decoded_vocab) + [b""] * (vocab_size - size)
        for token_id, spelled in enumerate(vocab):
            if not isinstance(spelled, bytes):
                raise TokenizerError(f"token {token_id}: expected bytes, got {type(spelled).__name__}")
            if not spelled:
                special.add(token_id)  # a token that spells nothing can only be special
        for token_id in special:
            vocab[token_id] = b""
        self.decoded_vocab: list[bytes] = vocab
        self.vocab_size: int = vocab_size
        self.stop_token_ids: list[int] = stops
        self.special_token_ids: list[int] = sorted(special)
        self.special_token_texts: dict[int, str] = dict(special_token_texts or {})
        self.kind = kind
        self.prepends_space = prepends_space
        single_bytes = {spelled[0] for spelled in vocab if len(spelled) == 1}
        self.unspellable_bytes: list[int] = [b for b in UTF8_BYTES if b not in single_bytes]
        if self.unspellable_bytes:
            warnings.warn(
                f"{len(self.unspellable_bytes)} byte values that UTF-8 text can contain have no "
                f"single-byte token ({self.unspellable_bytes}): text needing them may be "
                "impossible to spell with this vocabulary",
                stacklevel=2,
            )

    def __repr__(self) -> str:
        return (
            f"TokenizerInfo({self.kind}, vocab_size={self.vocab_size}, "
            f"special={len(self.special_token_ids)}, stop={self.stop_token_ids})"
        )

    def join_bytes(self, token_ids: Iterable[int]) -> bytes:
        """The bytes a sequence of token ids stands for (special ids spell nothing)."""
        vocab = self.decoded_vocab
        return b"".join(vocab[i] for i in token_ids)

    @classmethod
    def from_huggingface(
        cls,
        tokenizer: Any,
        vocab_size: int | None = None,
        *,
        stop_token_ids: Iterable[int] | None = None,
    ) -> TokenizerInfo:
        """Build from a transformers tokenizer (fast or SentencePiece-based slow) or a
        ``tokenizers.Tokenizer``.

        ``vocab_size`` is the model's logits size when it differs from the tokenizer's
        (``model.config.vocab_size``); ``stop_token_ids`` replaces the detected stop
        ids (the tokenizer's EOS plus the well-known end-of-turn tokens it has).
        """
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None and hasattr(tokenizer, "to_str") and hasattr(tokenizer, "encode"):
            backend = tokenizer  # a tokenizers.Tokenizer
        if backend is not None:
            vocab, special_texts, kind = _read_tokenizers_json(json.loads(backend.to_str()))
        elif hasattr(tokenizer, "sp_model"):
            vocab, special_texts, kind = _read_sentencepiece(tokenizer.sp_model)
            _merge_added_tokens(vocab, special_texts, tokenizer)
        elif hasattr(tokenizer, "byte_decoder") and hasattr(tokenizer, "encoder"):
            vocab, special_texts, kind = _read_slow_byte_level(tokenizer)
        else:
            raise TokenizerError(
                f"cannot read token bytes from {type(tokenizer).__name__}: expected a transformers "
                "tokenizer backed by `tokenizers` or SentencePiece, or a tokenizers.Tokenizer"
            )
        eos = getattr(tokenizer, "eos_token_id", None)
        return cls._from_pieces(vocab, special_texts, kind, vocab_size, stop_token_ids, eos, _encode_function(tokenizer))

    @classmethod
    def from_sentencepiece(
        cls,
        processor: Any,
        vocab_size: int | None = None,
        *,
        stop_token_ids: Iterable[int] | None = None,
    ) -> TokenizerInfo:
        """Build from a ``sentencepiece.SentencePieceProcessor`` or a ``.model`` file path."""
        if isinstance(processor, (str, os.PathLike)):
            import sentencepiece

            processor = sentencepiece.SentencePieceProcessor(model_file=os.fspath(processor))
        vocab, special_texts, kind = _read_sentencepiece(processor)
        eos = processor.eos_id()
        return cls._from_pieces(
            vocab, special_texts, kind, vocab_size, stop_token_ids, eos if eos >= 0 else None, processor.encode
        )

    @classmethod
    def _from_pieces(
        cls,
        vocab: list[bytes],
        special_texts: dict[int, str],
        kind: str,
        vocab_size: int | None,
        stop_token_ids: Iterable[int] | None,
        eos: Any,
        encode: Any,
    ) -> TokenizerInfo:
        """The shared end of every constructor: stop ids, then the leading-space rule."""
        if stop_token_ids is None:
            stop_token_ids = _detect_stop_ids(special_texts, eos)
        info = cls(
            vocab,
            vocab_size=vocab_size,
            stop_token_ids=stop_token_ids,
            special_token_ids=special_texts.keys(),
            special_token_texts=special_texts,
            kind=kind,
        )
        info.prepends_space = _detect_prepended_space(info, encode)
        if not info.stop_token_ids:
            warnings.warn("the tokenizer has no stop token; pass stop_token_ids", stacklevel=3)
        return info


def _read_tokenizers_json(spec: dict[str, Any]) -> tuple[list[bytes], dict[int, str], str]:
    """Token bytes from a ``tokenizers`` JSON description (what ``to_str()`` returns)."""
    model = spec["model"]
    model_type = model.get("type")
    if model_type in ("BPE", "WordLevel"):
        pieces = {int(i): p for p, i in model["vocab"].items()}
    elif model_type == "Unigram":
        pieces = {i: entry[0] for i, entry in enumerate(model["vocab"])}
    else:
        raise TokenizerError(
            f"{model_type} vocabularies (e.g. BERT's WordPiece '##' pieces) do not spell their "
            "tokens as bytes; structgen supports byte-level BPE and SentencePiece vocabularies"
        )
    added = {int(t["id"]): t for t in spec.get("added_tokens") or []}
    special_texts = {i: t["content"] for i, t in added.items() if t.get("special")}
    unknown = _unknown_id(model, pieces)
    if unknown is not None and unknown not in added:
        special_texts[unknown] = pieces[unknown]  # <unk> stands for no text

    if _mentions(spec, "ByteLevel"):
        kind = BYTE_LEVEL

        def spell(piece: str) -> bytes:
            return byte_level_piece_bytes(piece)

    elif _mentions(spec, "Metaspace") or "\u2581" in json.dumps(spec.get("decoder"), ensure_ascii=False):
        byte_fallback = bool(model.get("byte_fallback")) or _mentions(spec, "ByteFallback")
        kind = SENTENCEPIECE_BYTE_FALLBACK if byte_fallback else SENTENCEPIECE

        def spell(piece: str) -> bytes:
            return sentencepiece_piece_bytes(piece, byte_fallback)

    else:
        raise TokenizerError(
            "cannot tell how this tokenizer spells bytes: neither a ByteLevel nor a "
            "SentencePiece (▁ / Metaspace) decoder or pre-tokenizer was found"
        )

    size = 1 + max([*pieces, *added], default=-1)
    vocab = [b""] * size
    for token_id, piece in pieces.items():
        if token_id not in added and token_id not in special_texts:
            try:
                vocab[token_id] = spell(piece)
            except PieceSpellingError as exc:
                raise TokenizerError(f"token {token_id}: {exc}") from None
    for token_id, token in added.items():
        if not token.get("special"):
            # added tokens are matched in the raw text, so their content is their text
            vocab[token_id] = token["content"].encode("utf-8")
    return vocab, special_texts, kind


def _unknown_id(model: dict[str, Any], pieces: dict[int, str]) -> int | None:
    if isinstance(model.get("unk_id"), int):
        return int(model["unk_id"])
    unk = model.get("unk_token")
    for token_id, piece in pieces.items():
        if unk is not None and piece == unk:
            return token_id
    return None


def _mentions(spec: dict[str, Any], component: str) -> bool:
    """Whether the decoder or pre-tokenizer (possibly inside a Sequence) is ``component``."""
    found = False

    def visit(node: Any) -> None:
        nonlocal found
        if isinstance(node, dict):
            if node.get("type") == component:
                found = True
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(spec.get("decoder"))
    visit(spec.get("pre_tokenizer"))
    return found


def _read_sentencepiece(processor: Any) -> tuple[list[bytes], dict[int, str], str]:
    """Token bytes from a SentencePiece model: control/unknown/unused ids are special."""
    size = processor.get_piece_size()
    vocab = [b""] * size
    special_texts: dict[int, str] = {}
    has_byte_pieces = False
    for token_id in range(size):
        piece = processor.id_to_piece(token_id)
        if processor.is_control(token_id) or processor.is_unknown(token_id) or processor.is_unused(token_id):
            special_texts[token_id] = piece
        elif processor.is_byte(token_id):
            has_byte_pieces = True
            vocab[token_id] = sentencepiece_piece_bytes(piece, byte_fallback=True)
        else:
            vocab[token_id] = sentencepiece_piece_bytes(piece, byte_fallback=False)
    return vocab, special_texts, SENTENCEPIECE_BYTE_FALLBACK if has_byte_pieces else SENTENCEPIECE


def _read_slow_byte_level(tokenizer: Any) -> tuple[list[bytes], dict[int, str], str]:
    """Token bytes from a slow (pure Python) GPT-2-style tokenizer."""
    size = 1 + max(tokenizer.encoder.values(), default=-1)
    vocab = [b""] * size
    for piece, token_id in tokenizer.encoder.items():
        try:
            vocab[token_id] = byte_level_piece_bytes(piece)
        except PieceSpellingError as exc:
            raise TokenizerError(f"token {token_id}: {exc}") from None
    special_texts: dict[int, str] = {}
    _merge_added_tokens(vocab, special_texts, tokenizer)
    return vocab, special_texts, BYTE_LEVEL


def _merge_added_tokens(vocab: list[bytes], special_texts: dict[int, str], tokenizer: Any) -> None:
    """Add a slow transformers tokenizer's added tokens: special ones spell nothing,
    the others are the text they stand for (the tokenizer matches them in raw text)."""
    added = dict(getattr(tokenizer, "added_tokens_decoder", {}) or {})
    if added:
        vocab.extend([b""] * (1 + max(added) - len(vocab)))
    for token_id, token in added.items():
        if getattr(token, "special", True):
            special_texts[token_id] = str(token)
            vocab[token_id] = b""
        else:
            vocab[token_id] = str(token).encode("utf-8")


def _detect_stop_ids(special_texts: dict[int, str], eos: Any) -> list[int]:
    """The EOS id(s) plus every special token that is a well-known end-of-turn marker."""
    stops: set[int] = set()
    if isinstance(eos, int):
        stops.add(eos)
    elif isinstance(eos, (list, tuple)):
        stops.update(int(i) for i in eos)
    stops.update(i for i, text in special_texts.items() if text in KNOWN_STOP_TEXTS)
    return sorted(stops)


def _encode_function(tokenizer: Any) -> Any:
    if hasattr(tokenizer, "backend_tokenizer") or not hasattr(tokenizer, "to_str"):
        return lambda text: tokenizer.encode(text, add_special_tokens=False)
    return lambda text: tokenizer.encode(text, add_special_tokens=False).ids


def _detect_prepended_space(info: TokenizerInfo, encode: Any) -> bool:
    """Whether encoding a text from the start adds a leading space (a dummy prefix)."""
    spelled = info.join_bytes(encode("x"))
    if spelled == b"x":
        return False
    if spelled == b" x":
        return True
    raise TokenizerError(f"the tokenizer encodes 'x' as {spelled!r}: it rewrites text, so token bytes cannot be exact")
