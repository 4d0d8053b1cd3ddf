"""TokenizerInfo's rules, on small hand-made vocabularies."""

from __future__ import annotations

import warnings

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from structgen import TokenizerError, TokenizerInfo
from structgen.token_bytes import (
    byte_level_piece_bytes,
    gpt2_byte_decoder,
    is_byte_piece,
    sentencepiece_piece_bytes,
)

ALL_BYTES = [bytes([b]) for b in range(256)]


def test_gpt2_byte_alphabet_is_a_bijection_onto_bytes() -> None:
    decoder = gpt2_byte_decoder()
    assert sorted(decoder.values()) == list(range(256))
    assert all(ch.isprintable() and not ch.isspace() for ch in decoder)
    assert decoder["Ġ"] == 0x20 and decoder["Ċ"] == 0x0A and decoder["A"] == 0x41


def test_byte_level_pieces() -> None:
    assert byte_level_piece_bytes("ĠðŁĺ") == b" \xf0\x9f\x98"  # a partial UTF-8 sequence
    with pytest.raises(ValueError, match="outside the byte-level alphabet"):
        byte_level_piece_bytes("日")


def test_sentencepiece_pieces() -> None:
    assert sentencepiece_piece_bytes("▁Hello", byte_fallback=True) == b" Hello"
    assert sentencepiece_piece_bytes("<0x0A>", byte_fallback=True) == b"\n"
    assert sentencepiece_piece_bytes("<0x0A>", byte_fallback=False) == b"<0x0A>"
    assert is_byte_piece("<0xFF>") and not is_byte_piece("<0xFFF>")


def test_special_and_stop_ids_spell_nothing() -> None:
    info = TokenizerInfo([b"<s>", *ALL_BYTES, b"ab"], stop_token_ids=[0], special_token_ids=[0])
    assert info.decoded_vocab[0] == b""
    assert info.stop_token_ids == [0] and info.special_token_ids == [0]
    assert info.join_bytes([0, 98, 99, 257]) == b"abab"


def test_stop_ids_are_special_even_if_not_declared() -> None:
    info = TokenizerInfo([b"", *ALL_BYTES], stop_token_ids=[0])
    assert info.special_token_ids == [0]


def test_empty_tokens_are_special() -> None:
    info = TokenizerInfo([*ALL_BYTES, b""])
    assert info.special_token_ids == [256]


def test_padding_ids_are_special() -> None:
    info = TokenizerInfo(ALL_BYTES, vocab_size=300)
    assert info.vocab_size == len(info.decoded_vocab) == 300
    assert info.special_token_ids == list(range(256, 300))


def test_vocab_size_smaller_than_the_tokenizer_is_an_error() -> None:
    with pytest.raises(TokenizerError, match="vocab_size=10 is smaller than the tokenizer's 256"):
        TokenizerInfo(ALL_BYTES, vocab_size=10)


def test_out_of_range_ids_are_an_error() -> None:
    with pytest.raises(TokenizerError, match="token id 400 is outside"):
        TokenizerInfo(ALL_BYTES, stop_token_ids=[400])


def test_non_bytes_token_is_an_error() -> None:
    with pytest.raises(TokenizerError, match="token 1: expected bytes, got str"):
        TokenizerInfo([b"a", "b"])  # type: ignore[list-item]


def test_vocabulary_missing_bytes_is_flagged() -> None:
    with pytest.warns(UserWarning, match="241 byte values that UTF-8 text can contain have no single-byte token"):
        info = TokenizerInfo([b"a", b"b", b"ab"])
    assert 0 in info.unspellable_bytes and 97 not in info.unspellable_bytes


def test_wordpiece_tokenizer_is_rejected_clearly() -> None:
    tokenizer = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"))
    with pytest.raises(TokenizerError, match="WordPiece vocabularies .* do not spell their tokens as bytes"):
        TokenizerInfo.from_huggingface(tokenizer)


def test_plain_tokenizers_object_is_accepted() -> None:
    """A ``tokenizers.Tokenizer`` built by hand: byte-level BPE over all 256 bytes."""
    alphabet = list(gpt2_byte_decoder())
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    vocab["ĠĠ"] = 256
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[("Ġ", "Ġ")]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(["<|endoftext|>"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        info = TokenizerInfo.from_huggingface(tokenizer)
    assert info.vocab_size == 258
    assert info.stop_token_ids == [257] and info.special_token_texts == {257: "<|endoftext|>"}
    assert info.decoded_vocab[256] == b"  "
    text = "  x\ty é 😀"
    assert info.join_bytes(tokenizer.encode(text).ids) == text.encode()


def test_unknown_piece_is_special_and_stop_ids_can_be_set() -> None:
    """A model's <unk> piece stands for no text, even when it is not an added token."""
    alphabet = list(gpt2_byte_decoder())
    vocab = {"<unk>": 0, **{ch: i + 1 for i, ch in enumerate(alphabet)}}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    info = TokenizerInfo.from_huggingface(tokenizer, stop_token_ids=[0])
    assert info.special_token_ids == [0] and info.stop_token_ids == [0]
    assert info.decoded_vocab[0] == b"" and info.special_token_texts == {0: "<unk>"}
