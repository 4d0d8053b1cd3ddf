"""Masks: equal to trying every token, never a dead end, and the real tokens of
real texts always allowed."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import corpus
import structgen
from structgen import Grammar, Matcher, TokenizerInfo
from structgen.bitmask import allowed_in_row

JSON_LARK = (Path(__file__).resolve().parent.parent / "grammars" / "json.lark").read_text()
GRAMMARS = {
    "json": JSON_LARK,
    "keywords": 'start: ("if" NAME | NAME NAME) ";"\nNAME: /[a-z]+/\n%ignore " "',
    "arithmetic": 'start: e\ne: e "+" t | t\nt: t "*" f | f\nf: "(" e ")" | NUMBER\nNUMBER: /[0-9]+/\n%ignore /[ \\t]+/',
    "ambiguous": 'start: e\ne: e "+" e | e "*" e | "(" e ")" | "x"',
    "prefixes": 'start: ("a" | "abc" | "bd")+',
    "utf8": 'start: WORD (" " WORD)*\nWORD: /[éèa-z日本]+/',
}
DEVICES = ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]
ALPHABET = b'{}[],:" 0123456789.-+*()eEtrufalsnixabcdf;\t\\'


def small_vocabulary(seed: int) -> TokenizerInfo:
    rng = random.Random(seed)
    pieces = [bytes([b]) for b in range(256)]
    pieces += [bytes(rng.choice(ALPHABET) for _ in range(rng.randint(2, 5))) for _ in range(600)]
    pieces += ["é".encode(), "日本".encode(), "日".encode()[:2], "è ".encode()]
    pieces.append(b"")  # the stop token
    return TokenizerInfo(pieces, stop_token_ids=[len(pieces) - 1])


def oracle(matcher: Matcher, vocab_size: int) -> list[int]:
    allowed = []
    for token_id in range(vocab_size):
        fork = matcher.fork()
        if fork.accept_token(token_id):
            allowed.append(token_id)
    return allowed


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_masks_equal_trying_every_token(name: str) -> None:
    info = small_vocabulary(len(name))
    grammar = Grammar.from_lark(GRAMMARS[name])
    compiled = structgen.compile(grammar, info)
    rng = random.Random(name)
    for _ in range(8):
        matcher = Matcher(compiled)
        text = b""
        for _step in range(12):
            allowed = sorted(matcher.allowed_tokens())
            assert allowed == oracle(matcher, info.vocab_size), (name, text)
            assert allowed, (name, text)  # never a dead end
            token = rng.choice(allowed)
            assert matcher.accept_token(token)
            if matcher.is_terminated():
                assert grammar.accepts(text), (name, text)
                break
            text += info.decoded_vocab[token]
    assert structgen.compile(grammar, info) is compiled  # cached


@pytest.mark.parametrize("name", list(GRAMMARS))
def test_masks_are_the_same_without_trial_stacks(name: str) -> None:
    """A mask checks its context-dependent groups on trial stacks (engine/stack.py
    ``Trial``), and on real stacks past the parser's ``max_trial_work``: with no
    trial work allowed at all, every mask of random walks is the same."""
    from structgen.engine.matcher import Matcher as EngineMatcher
    from structgen.engine.stack import GLRParser

    info = small_vocabulary(len(name) + 7)
    compiled = structgen.compile(Grammar.from_lark(GRAMMARS[name]), info)
    engine = Matcher(compiled)._engine.compiled
    rng = random.Random(name)
    for _ in range(6):
        trial = EngineMatcher(engine)
        real = EngineMatcher(engine, GLRParser(engine.table, max_trial_work=0))
        for _step in range(16):
            allowed = trial.allowed_row()
            assert allowed == real.allowed_row(), name
            ids = [t for t in trial.allowed_tokens() if t not in info.stop_token_ids]
            if not ids:
                break
            token = rng.choice(ids)
            assert trial.accept_token(token) and real.accept_token(token)


def test_stop_token_only_when_complete() -> None:
    info = small_vocabulary(1)
    stop = info.stop_token_ids[0]
    matcher = Matcher(structgen.compile(Grammar.from_lark(JSON_LARK), info))
    assert not matcher.can_terminate() and stop not in matcher.allowed_tokens()
    assert matcher.accept_string("[1, 2")
    assert not matcher.accept_token(stop)
    assert matcher.accept_string("]")
    assert matcher.can_terminate() and stop in matcher.allowed_tokens()
    assert matcher.accept_token(stop) and matcher.is_terminated()
    assert matcher.allowed_tokens() == [] and not matcher.accept_string(" ")


def test_rollback_and_fork_equal_replay() -> None:
    info = small_vocabulary(2)
    compiled = structgen.compile(Grammar.from_lark(GRAMMARS["arithmetic"]), info)
    rng = random.Random(4)
    matcher = Matcher(compiled)
    accepted: list[int] = []
    for _ in range(15):
        token = rng.choice([t for t in matcher.allowed_tokens() if t not in info.stop_token_ids])
        assert matcher.accept_token(token)
        accepted.append(token)
    for _ in range(10):
        k = rng.randrange(len(accepted) + 1)
        fork = matcher.fork()
        fork.rollback(k)
        replay = Matcher(compiled)
        for token in accepted[: len(accepted) - k]:
            assert replay.accept_token(token)
        assert sorted(fork.allowed_tokens()) == sorted(replay.allowed_tokens())
    with pytest.raises(ValueError, match="cannot roll back"):
        matcher.fork().rollback(len(accepted) + 1)


def test_rejected_token_leaves_the_matcher_unchanged() -> None:
    info = small_vocabulary(3)
    matcher = Matcher(structgen.compile(Grammar.from_lark(JSON_LARK), info))
    before = sorted(matcher.allowed_tokens())
    assert not matcher.accept_token(ord("x"))
    assert not matcher.accept_string("]")
    assert sorted(matcher.allowed_tokens()) == before


@pytest.fixture(scope="module")
def smollm2_json(hf_tokenizers: dict[str, Any], infos: dict[str, TokenizerInfo]) -> tuple[Any, TokenizerInfo, Any]:
    info = infos["smollm2"]
    return hf_tokenizers["smollm2"], info, structgen.compile(Grammar.from_lark(JSON_LARK), info)


def test_real_json_texts_are_allowed_token_by_token(smollm2_json: tuple[Any, TokenizerInfo, Any]) -> None:
    """Forced paths: every token of json.dumps output, as SmolLM2 tokenizes it and cut
    into random other tokens, is allowed at its step; a stop token at the end."""
    tokenizer, info, compiled = smollm2_json
    rng = random.Random(9)
    documents = [t for t in corpus.texts() if t.strip().startswith(("{", "["))][:25]
    assert len(documents) >= 10
    for text in documents:
        tokenizations = [tokenizer.encode(text, add_special_tokens=False)]
        pieces = []
        position = 0
        while position < len(text):  # the same text cut elsewhere
            step = rng.randint(1, 3)
            pieces.extend(tokenizer.encode(text[position : position + step], add_special_tokens=False))
            position += step
        tokenizations.append(pieces)
        for ids in tokenizations:
            assert info.join_bytes(ids) == text.encode()
            matcher = Matcher(compiled)
            for token in ids:
                assert token in set(matcher.allowed_tokens()), (text, info.decoded_vocab[token])
                assert matcher.accept_token(token)
            assert matcher.can_terminate() and info.stop_token_ids[0] in matcher.allowed_tokens()


def test_real_vocabulary_masks_match_the_oracle_and_walks_finish(smollm2_json: tuple[Any, TokenizerInfo, Any]) -> None:
    """Random constrained walks over the 49k vocabulary: masks equal trying every
    token, never empty, and finished texts are JSON."""
    _tokenizer, info, compiled = smollm2_json
    rng = random.Random(11)
    finished = 0
    for walk in range(6):
        matcher = Matcher(compiled)
        text = b""
        for step in range(120):
            allowed = matcher.allowed_tokens()
            assert allowed, text
            if step % 20 == 0:
                assert sorted(allowed) == oracle(matcher, info.vocab_size), text
            stops = [t for t in allowed if t in info.stop_token_ids]
            # later on, prefer stopping and one-byte tokens (which close structures), so walks finish
            short = [t for t in allowed if len(info.decoded_vocab[t]) == 1]
            if stops and step > 10:
                token = stops[0]
            elif step > 40 and short and rng.random() < 0.8:
                token = rng.choice(short)
            else:
                token = rng.choice(allowed)
            assert matcher.accept_token(token)
            if matcher.is_terminated():
                json.loads(text.decode())
                finished += 1
                break
            text += info.decoded_vocab[token]
    assert finished >= 1


def test_bitmask_layout_and_torch_masking(smollm2_json: tuple[Any, TokenizerInfo, Any]) -> None:
    _tokenizer, info, compiled = smollm2_json
    matcher = Matcher(compiled)
    bitmask = structgen.allocate_token_bitmask(2, info.vocab_size)
    assert bitmask.shape == (2, (info.vocab_size + 31) // 32) and bitmask.dtype == np.int32
    matcher.fill_next_token_bitmask(bitmask, index=1)
    allowed = sorted(matcher.allowed_tokens())
    assert allowed_in_row(bitmask, 1, info.vocab_size) == allowed
    assert allowed_in_row(bitmask, 0, info.vocab_size) == list(range(info.vocab_size))  # unfilled: all
    allowed_set = set(allowed)
    for token in range(info.vocab_size):  # bit token % 32 of word token // 32, read by hand
        bit = (int(bitmask[1, token // 32]) & 0xFFFFFFFF) >> (token % 32) & 1
        assert bit == (token in allowed_set), token
    for device in DEVICES:  # the logits' own device: CUDA too where this machine has one
        logits = torch.zeros(2, info.vocab_size + 64, device=device)  # padded logits
        structgen.apply_token_bitmask_inplace(logits, bitmask)
        assert torch.isfinite(logits[1]).nonzero().flatten().tolist() == allowed
        assert torch.isfinite(logits[0]).nonzero().flatten().tolist() == list(range(info.vocab_size))
        one = torch.zeros(info.vocab_size, device=device)  # 1-D logits with a 1-D mask row
        structgen.apply_token_bitmask_inplace(one, bitmask[1])
        assert torch.isfinite(one).nonzero().flatten().tolist() == allowed
        wide = torch.zeros(2, 3 * info.vocab_size, device=device)  # a strided view: filled in place, through the view
        structgen.apply_token_bitmask_inplace(wide[:, ::3], bitmask)
        assert torch.isfinite(wide[1, ::3]).nonzero().flatten().tolist() == allowed
        assert torch.isfinite(wide[:, 1::3]).all()
        with pytest.raises(ValueError, match="the bitmask has 2 rows for logits of shape"):
            structgen.apply_token_bitmask_inplace(torch.zeros(3, info.vocab_size, device=device), bitmask)


REGEXES = [r"[a-z ]*\.", r"(ab)*c", r"-?(0|[1-9][0-9]*)(\.[0-9]+)?", r"\d{3}-\d{4}", r"(true|false|null)", r'"[^"]*"', r"(é|日本)+x?"]


@pytest.mark.parametrize("pattern", REGEXES)
def test_regex_masks_equal_an_independent_oracle(pattern: str) -> None:
    """For one regex, a token is allowed iff text + token is a prefix of a match,
    which the `regex` module decides on its own (partial matching); a stop token
    iff the text fullmatches."""
    import regex

    pieces = sorted({*"abcdefxyz .-0123456789\"tfnrulsé", "日", "本", "日本", "ab", "abc", "12", "0.", "tr", "ue", "é.", ".x"})
    with pytest.warns(UserWarning, match="no single-byte token"):  # a vocabulary of a few letters
        info = TokenizerInfo([p.encode() for p in pieces] + [b""], stop_token_ids=[len(pieces)])
    compiled = structgen.compile(Grammar.from_regex(pattern), info)
    rng = random.Random(pattern)
    for _ in range(10):
        matcher = Matcher(compiled)
        text = ""
        for _step in range(10):
            expected = [i for i, p in enumerate(pieces) if regex.fullmatch(pattern, text + p, partial=True)]
            if regex.fullmatch(pattern, text):
                expected.append(len(pieces))
            assert sorted(matcher.allowed_tokens()) == expected, (pattern, text)
            if not expected:
                break
            token = rng.choice(expected)
            assert matcher.accept_token(np.int64(token))  # numpy ints are token ids too
            if token == len(pieces):
                break
            text += pieces[token]


def test_rollback_across_stop_and_strings_and_fork_independence() -> None:
    info = small_vocabulary(5)
    stop = info.stop_token_ids[0]
    matcher = Matcher(structgen.compile(Grammar.from_lark(JSON_LARK), info))
    assert matcher.accept_string('{"k": ') and matcher.accept_string("[1]}") and matcher.accept_string("")
    assert matcher.accept_token(stop) and matcher.is_terminated()
    matcher.rollback(1)
    assert not matcher.is_terminated() and matcher.can_terminate()
    matcher.rollback(1)  # "[1]}" was one step
    assert not matcher.can_terminate() and matcher.accept_string("null}")
    fork = matcher.fork()
    assert fork.accept_token(stop)
    assert not matcher.is_terminated() and fork.is_terminated()
    with pytest.raises(ValueError, match="cannot roll back -1 tokens"):
        matcher.rollback(-1)


@pytest.mark.parametrize(
    ("grammar", "prefix", "expected"),
    [
        (JSON_LARK, "", ""),  # any value may start
        (JSON_LARK, "[tr", "ue"),
        (JSON_LARK, "[nu", "ll"),
        (JSON_LARK, '{"a": fa', "lse"),
        (JSON_LARK, "[1", ""),  # more digits, ".", "e", ",", "]" or whitespace
        ('start: "{\\"name\\": " STRING "}"\nSTRING: /"[a-z]*"/', "", '{"name": "'),
        ('start: "{\\"name\\": " STRING "}"\nSTRING: /"[a-z]*"/', '{"name": "ab"', "}"),
        ('start: "日本語" | "日本詞"', "", "日本"),  # 語 and 詞 share their first byte: cut off
        ('start: "ab" "c"?', "", "ab"),  # then "c" or the end: a choice
    ],
)
def test_jump_forward_is_what_every_continuation_starts_with(grammar: str, prefix: str, expected: str) -> None:
    info = small_vocabulary(6)
    matcher = Matcher(structgen.compile(Grammar.from_lark(grammar), info))
    assert matcher.accept_string(prefix)
    before = sorted(matcher.allowed_tokens())
    assert matcher.find_jump_forward_string() == expected
    assert sorted(matcher.allowed_tokens()) == before  # the matcher did not move
    assert matcher.accept_string(expected)


def test_jump_forward_matches_the_regex_oracle() -> None:
    """For a regex, the forced text is the longest string every match continuing the
    text starts with: each forced character is the only one partial matching allows."""
    import regex

    pattern = r"(abc|abd)x(yz)+|q"
    with pytest.warns(UserWarning):
        info = TokenizerInfo([bytes([b]) for b in b"abcdxyzq"] + [b""], stop_token_ids=[8])
    compiled = structgen.compile(Grammar.from_regex(pattern), info)
    for text in ["", "a", "ab", "abc", "abcx", "abcxy", "abcxyz", "q"]:
        matcher = Matcher(compiled)
        assert matcher.accept_string(text)
        forced = ""
        while not regex.fullmatch(pattern, text + forced):
            options = [ch for ch in "abcdxyzq" if regex.fullmatch(pattern, text + forced + ch, partial=True)]
            if len(options) != 1:
                break
            forced += options[0]
        assert matcher.find_jump_forward_string() == forced, text


def test_refinements_built_a_few_per_mask() -> None:
    """A deep stack's first mask builds at most ``MAX_NEW_REFINEMENTS`` refined
    entries and checks the rest of its dependent groups against the stack; the next
    masks there build the others. Every one of them is exact."""
    from structgen.engine.matcher import MAX_NEW_REFINEMENTS
    from structgen.engine.tables import MAX_CONTEXT

    pieces = [bytes([b]) for b in range(256)]
    pieces += [bytes(p) for n in (2, 3, 4) for p in itertools.product(b")+*1(", repeat=n)]
    pieces.append(b"")
    info = TokenizerInfo(pieces, stop_token_ids=[len(pieces) - 1])
    compiled = structgen.compile(Grammar.from_lark(GRAMMARS["arithmetic"]), info)
    tables = Matcher(compiled)._engine.compiled.tables

    def refined() -> int:
        count = 0
        work = list(tables._entries.values())
        while work:
            entry = work.pop()
            count += len(entry.deeper)
            work.extend(entry.deeper.values())
        return count

    built = []
    for _ in range(4):
        matcher = Matcher(compiled)  # a new mask cache: the mask is computed again
        assert matcher.accept_string("1*(2+(3*((4+5*(6")
        assert sorted(matcher.allowed_tokens()) == oracle(matcher, info.vocab_size)
        built.append(refined())
    assert built[0] == MAX_NEW_REFINEMENTS
    assert built[-1] == MAX_CONTEXT - 1 > built[0]  # a chain down to the deepest context
