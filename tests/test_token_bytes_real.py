"""Token bytes of four real vocabularies, checked against their real tokenizers.

For every text: encode with the tokenizer, join our bytes for the ids, and the
result must be the text's UTF-8 exactly (after the tokenizer's own leading-space
rule, where it has one).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import corpus
import vocabularies
from vocabularies import NAMES
from structgen import TokenizerInfo
from structgen.token_bytes import SENTENCEPIECE_SPACE

TEXTS = corpus.texts()


def expected_bytes(info: TokenizerInfo, text: str) -> bytes:
    prefix = b" " if info.prepends_space else b""
    return prefix + text.encode("utf-8")


def round_trip_failures(info: TokenizerInfo, encode: Any, texts: list[str]) -> list[tuple[str, bytes]]:
    failures = []
    for text in texts:
        joined = info.join_bytes(encode(text))
        if joined != expected_bytes(info, text):
            failures.append((text, joined))
    return failures


def test_corpus_is_large_and_varied() -> None:
    assert len(TEXTS) >= 300
    assert len(set(TEXTS)) >= 300
    assert any("\\n" in t and '\\"' in t for t in TEXTS)  # JSON escapes
    assert any(ord(c) > 0xFFFF for t in TEXTS for c in t)  # 4-byte UTF-8
    assert any("\u200d" in t for t in TEXTS)  # emoji ZWJ sequences
    assert any("\u0301" in t for t in TEXTS)  # combining marks
    assert any(t.startswith(" ") for t in TEXTS) and any(t.endswith(" ") for t in TEXTS)
    assert any("\t" in t and "\n" in t for t in TEXTS)


@pytest.mark.parametrize("name", NAMES)
def test_every_corpus_text_round_trips(name: str, hf_tokenizers: dict[str, Any], infos: dict[str, TokenizerInfo]) -> None:
    tokenizer = hf_tokenizers[name]
    failures = round_trip_failures(infos[name], lambda t: tokenizer.encode(t, add_special_tokens=False), TEXTS)
    assert failures == [], f"{len(failures)} of {len(TEXTS)} texts differ, first: {failures[:3]}"


@pytest.mark.parametrize("name", NAMES)
def test_partial_utf8_tokens_are_exercised(name: str, hf_tokenizers: dict[str, Any], infos: dict[str, TokenizerInfo]) -> None:
    """Texts whose tokens split a character's UTF-8 bytes (so byte-exactness matters) occur."""
    info, tokenizer = infos[name], hf_tokenizers[name]
    partial = set()
    for text in TEXTS:
        for token_id in tokenizer.encode(text, add_special_tokens=False):
            try:
                info.decoded_vocab[token_id].decode("utf-8")
            except UnicodeDecodeError:
                partial.add(token_id)
    assert len(partial) >= 5


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_characters=SENTENCEPIECE_SPACE), max_size=60))
def test_random_texts_round_trip(name: str, text: str, hf_tokenizers: dict[str, Any], infos: dict[str, TokenizerInfo]) -> None:
    # U+2581 is excluded: SentencePiece spells a space with it, so a literal one is lost
    # by the tokenizer itself (it encodes to the space piece), not by our bytes.
    info, tokenizer = infos[name], hf_tokenizers[name]
    # the tokenizer turns a special token's text into the special id
    assume(not any(special in text for special in info.special_token_texts.values()))
    # the vocabulary cannot spell these bytes: the tokenizer drops them
    assume(not set(text.encode()) & set(info.unspellable_bytes))
    assert info.join_bytes(tokenizer.encode(text, add_special_tokens=False)) == expected_bytes(info, text)


def test_sentencepiece_processor_applies_the_leading_space_rule() -> None:
    """Raw SentencePiece prepends ▁ to a text; transformers' converted Mistral v3 does not."""
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(vocabularies.mistral_v3_file()))
    info = TokenizerInfo.from_sentencepiece(processor)
    assert info.prepends_space
    assert info.join_bytes(processor.encode("Hello")) == b" Hello"
    assert round_trip_failures(info, processor.encode, TEXTS) == []


def test_sentencepiece_and_transformers_agree_on_mistral_v3(infos: dict[str, TokenizerInfo]) -> None:
    from_transformers = infos["mistral_v3"]
    from_sentencepiece = TokenizerInfo.from_sentencepiece(vocabularies.mistral_v3_file())
    assert not from_transformers.prepends_space
    assert from_sentencepiece.vocab_size == from_transformers.vocab_size == 32768
    # control tokens are special; [REFERENCE_DOC_n] (ids 751-770) are user-defined text pieces
    assert from_sentencepiece.special_token_ids == from_transformers.special_token_ids == list(range(751))
    assert from_sentencepiece.decoded_vocab == from_transformers.decoded_vocab
    assert from_transformers.decoded_vocab[770] == b"[REFERENCE_DOC_0]"
    assert from_transformers.decoded_vocab[771] == b"\x00" and from_transformers.decoded_vocab[1026] == b"\xff"


def test_tekken_bytes_equal_the_files_own_token_bytes(infos: dict[str, TokenizerInfo]) -> None:
    """Tekken's JSON stores every token's bytes (base64): ours must equal them, all 130k."""
    data = json.loads(vocabularies.tekken_file().read_text(encoding="utf-8"))
    specials = data["config"]["default_num_special_tokens"]
    info = infos["tekken"]
    assert info.vocab_size == data["config"]["default_vocab_size"] == 131072
    assert info.special_token_ids == list(range(specials))
    mismatched = [
        entry["rank"]
        for entry in data["vocab"][: info.vocab_size - specials]
        if info.decoded_vocab[specials + entry["rank"]] != base64.b64decode(entry["token_bytes"])
    ]
    assert mismatched == []


@pytest.mark.parametrize("name", ["smollm2", "deepseek"])
def test_byte_level_tokens_agree_with_the_tokenizers_decoder(name: str, hf_tokenizers: dict[str, Any], infos: dict[str, TokenizerInfo]) -> None:
    """Cross-check (never a source of bytes): tokens that are whole UTF-8 decode the same."""
    info, tokenizer = infos[name], hf_tokenizers[name]
    special = set(info.special_token_ids)
    checked = 0
    for token_id, spelled in enumerate(info.decoded_vocab):
        if token_id in special:
            continue
        try:
            text = spelled.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert tokenizer.decode([token_id], clean_up_tokenization_spaces=False) == text, token_id
        checked += 1
    assert checked > 0.9 * (info.vocab_size - len(special))


def test_stop_and_special_ids(infos: dict[str, TokenizerInfo], hf_tokenizers: dict[str, Any]) -> None:
    smol = infos["smollm2"]
    assert smol.stop_token_ids == [0, 2]  # <|endoftext|>, <|im_end|>
    assert smol.special_token_ids == list(range(17))
    assert all(smol.decoded_vocab[i] == b"" for i in smol.special_token_ids)
    assert infos["mistral_v3"].stop_token_ids == [2]  # </s>
    assert infos["tekken"].stop_token_ids == [2]  # </s>, found by name (the tokenizer sets no EOS)
    deepseek = infos["deepseek"]
    assert 1 in deepseek.stop_token_ids  # <｜end▁of▁sentence｜>
    # added tokens that are not special are text the tokenizer itself produces
    user = hf_tokenizers["deepseek"].convert_tokens_to_ids("<｜User｜>")
    assert user not in deepseek.special_token_ids
    assert deepseek.decoded_vocab[user] == "<｜User｜>".encode()
    assert deepseek.join_bytes(hf_tokenizers["deepseek"].encode("a<｜User｜>b", add_special_tokens=False)) == "a<｜User｜>b".encode()


UNSPELLABLE = {"smollm2": [4, 6, 19, 20, 22, 29, 241, 242], "deepseek": [], "mistral_v3": [], "tekken": []}


@pytest.mark.parametrize("name", NAMES)
def test_bytes_without_a_single_byte_token_are_flagged(name: str, infos: dict[str, TokenizerInfo], hf_tokenizers: dict[str, Any]) -> None:
    info = infos[name]
    assert info.unspellable_bytes == UNSPELLABLE[name]
    for byte in info.unspellable_bytes:  # the tokenizer itself loses them
        text = chr(byte) if byte < 0x80 else bytes([byte, 0x80, 0x80, 0x80]).decode()  # F1-F3 lead bytes
        ids = hf_tokenizers[name].encode(text, add_special_tokens=False)
        assert info.join_bytes(ids) != text.encode()


def test_padded_vocab_size_makes_extra_ids_special(hf_tokenizers: dict[str, Any]) -> None:
    info = TokenizerInfo.from_huggingface(hf_tokenizers["smollm2"], vocab_size=49152 + 64)
    assert info.vocab_size == len(info.decoded_vocab) == 49216
    assert set(range(49152, 49216)) <= set(info.special_token_ids)
    assert info.decoded_vocab[49200] == b""
