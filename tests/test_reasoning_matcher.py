"""``ReasoningMatcher`` against an independent oracle: a token is allowed exactly
when the text it makes is still a beginning of
``start · (text without end) · end · separator · answer`` (the answer judged by
the ``regex`` package's partial matching, not by structgen's engine), and a stop
token exactly when that text is complete. Random walks compare every token of
the vocabulary at every point; rollback, fork and the budget are checked too."""

from __future__ import annotations

import random

import pytest
import regex

from structgen import Grammar, compile
from structgen.matcher import Matcher
from structgen.reasoning import MAX_SEPARATOR, Reasoning
from structgen.reasoning_matcher import ReasoningMatcher
from structgen.tokenizer_info import TokenizerInfo

ANSWER = r'\{"a":[0-9]{1,3}\}'

PIECES = [
    "<think>", "</think>", "<", "</", "/", "think", "think>", "k>", ">", "<th", "ink>", "t", "h", "i", "n", "k",
    "\n", "\n\n", " ", "  ", "\t", "hello", " world", "x", "{", "}", '"', '"a"', ":", "a", "0", "1", "12", "9",
    '{"', '{"a":', '\n{"', "</think>\n\n", "</think>{", "k>\n\n{", "nk>\n1", " {", "}\n", ">{", "</think>x",
    "\n\n\n\n\n\n\n\n\n", "<think>\nhm", "é", "\xe9t", "ello", "e", "l", "o", " w", "orld",
]


def info() -> TokenizerInfo:
    vocab = [p.encode("utf-8") for p in PIECES] + [b""]
    return TokenizerInfo(vocab, stop_token_ids=[len(PIECES)], special_token_ids=[len(PIECES)])


def oracle(reasoning: Reasoning, answer: str | None, text: bytes, complete: bool) -> bool:
    """Whether ``text`` begins (``complete``: is) an output of the language."""
    start, end = reasoning.start.encode(), reasoning.end.encode()
    if not reasoning.opened:
        if len(text) < len(start):
            return not complete and start.startswith(text)
        if not text.startswith(start):
            return False
        text = text[len(start) :]
    at = text.find(end)
    if at < 0:
        return not complete
    rest = text[at + len(end) :]
    cut = 0
    while cut < len(rest) and cut < MAX_SEPARATOR and rest[cut] in b" \t\r\n":
        cut += 1
    body = rest[cut:]
    if answer is None:
        return True
    try:
        decoded = body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if complete:
        return regex.fullmatch(answer, decoded) is not None
    return regex.fullmatch(answer, decoded, partial=True) is not None


def build(reasoning: Reasoning, answer: str | None, vocabulary: TokenizerInfo) -> ReasoningMatcher:
    inner = Matcher(compile(Grammar.from_regex(answer), vocabulary)) if answer is not None else None
    return ReasoningMatcher(reasoning, inner, vocabulary)


CASES = [
    (Reasoning(), ANSWER),
    (Reasoning(opened=True), ANSWER),
    (Reasoning(), None),
    (Reasoning(opened=True), r"[ \n]?x"),
    (Reasoning("<think>", "</think>", opened=True), r"(hello| world)+"),
]


@pytest.mark.parametrize("reasoning, answer", CASES)
def test_masks_equal_the_oracle_on_random_walks(reasoning: Reasoning, answer: str | None) -> None:
    vocabulary = info()
    stop = vocabulary.stop_token_ids[0]
    rng = random.Random(7)
    for walk in range(40):
        matcher = build(reasoning, answer, vocabulary)
        written = b""
        for _ in range(30):
            allowed = set(matcher.allowed_tokens())
            for token_id, data in enumerate(vocabulary.decoded_vocab):
                if token_id == stop:
                    expected = oracle(reasoning, answer, written, complete=True)
                else:
                    expected = oracle(reasoning, answer, written + data, complete=False)
                assert (token_id in allowed) == expected, (walk, written, data, token_id)
                trial = matcher.fork()
                assert trial.accept_token(token_id) == expected, (walk, written, data)
            if not allowed:  # a beginning this small vocabulary cannot go on from (the oracle agreed)
                break
            # leave the section sooner or later: think for a while, then prefer its end
            ending = [t for t in allowed if b"</" in vocabulary.decoded_vocab[t] or t == stop]
            choice = rng.choice(ending if ending and rng.random() < 0.3 else sorted(allowed))
            assert matcher.accept_token(choice)
            if choice == stop:
                assert matcher.is_terminated()
                break
            written += vocabulary.decoded_vocab[choice]


def test_a_token_that_ends_the_section_and_begins_the_answer() -> None:
    vocabulary = info()
    ids = {p: i for i, p in enumerate(PIECES)}
    matcher = build(Reasoning(opened=True), ANSWER, vocabulary)
    assert matcher.accept_token(ids["hello"])
    assert not matcher.fork().accept_token(ids["</think>x"])  # the answer cannot begin with x
    assert matcher.accept_token(ids["</think>{"])
    assert matcher.in_answer() and not matcher.answer_begins()
    for piece in ['"a"', ":", "12", "}"]:
        assert matcher.accept_token(ids[piece])
    assert matcher.can_terminate()
    assert matcher.allowed_tokens() == [len(PIECES)]  # only the stop token


def test_rollback_and_fork_cross_the_section_border() -> None:
    vocabulary = info()
    ids = {p: i for i, p in enumerate(PIECES)}
    matcher = build(Reasoning(), ANSWER, vocabulary)
    path = ["<think>", "hello", "</", "think>", "\n", '{"a":', "1"]
    rows = []
    for piece in path:
        rows.append(matcher.allowed_tokens())
        assert matcher.accept_token(ids[piece]), piece
    fork = matcher.fork()
    matcher.rollback(4)  # back inside the section, after "hello"
    assert matcher.allowed_tokens() == rows[2] and not matcher.in_answer()
    assert fork.accept_token(ids["}"]) and fork.can_terminate()
    for piece, row in zip(path[3:], rows[3:]):
        assert matcher.allowed_tokens() == row
        assert matcher.accept_token(ids[piece])
    matcher.reset()
    assert matcher.allowed_tokens() == rows[0]


def test_the_budget_forces_the_end_tag() -> None:
    vocabulary = info()
    ids = {p: i for i, p in enumerate(PIECES)}
    matcher = build(Reasoning(budget=2), ANSWER, vocabulary)
    assert matcher.find_jump_forward_string() == "<think>"
    assert matcher.accept_token(ids["<think>"]) and matcher.accept_token(ids["hello"])
    assert matcher.find_jump_forward_string() == "</think>"
    allowed = {PIECES[t] for t in matcher.allowed_tokens()}
    assert allowed == {"</think>", "<", "</", "</think>\n\n", "</think>{"}
    assert matcher.accept_token(ids["</"])
    assert {PIECES[t] for t in matcher.allowed_tokens()} == {"think", "think>", "t"}
    assert matcher.find_jump_forward_string() == "think>"
    assert matcher.accept_token(ids["think>"]) and matcher.in_answer()


def test_a_zero_budget_closes_the_section_at_once() -> None:
    vocabulary = info()
    matcher = build(Reasoning(opened=True, budget=0), ANSWER, vocabulary)
    assert matcher.find_jump_forward_string() == "</think>"
    assert matcher.accept_string("</think>\n") and matcher.accept_string('{"a":7}')
    assert matcher.can_terminate()


def test_a_stop_token_never_ends_the_section() -> None:
    vocabulary = info()
    stop = vocabulary.stop_token_ids[0]
    matcher = build(Reasoning(opened=True), None, vocabulary)
    assert stop not in matcher.allowed_tokens() and not matcher.accept_token(stop)
    assert matcher.accept_string("hmm</think>")
    assert stop in matcher.allowed_tokens()  # an empty answer, free text
    assert matcher.accept_token(stop) and matcher.is_terminated()


def test_the_separator_is_bounded() -> None:
    vocabulary = info()
    matcher = build(Reasoning(opened=True), r"x", vocabulary)
    assert matcher.accept_string("</think>")
    assert matcher.accept_string("\n" * MAX_SEPARATOR)
    assert not matcher.fork().accept_string("\n")  # past the separator, the answer's own: x refuses it
    assert matcher.accept_string("x") and matcher.can_terminate()


def test_bitmask_rows_match_allowed_tokens() -> None:
    import numpy as np

    from structgen.bitmask import allocate_token_bitmask, allowed_in_row

    vocabulary = info()
    matcher = build(Reasoning(), ANSWER, vocabulary)
    bitmask = allocate_token_bitmask(2, vocabulary.vocab_size)
    bitmask[:] = -1
    for text in ("", "<think>", "x</think>", '{"a":'):
        assert matcher.accept_string(text)
        matcher.fill_next_token_bitmask(bitmask, 1)
        assert allowed_in_row(bitmask, 1, vocabulary.vocab_size) == matcher.allowed_tokens()
        assert np.all(bitmask[0] == -1)


def test_split_reads_what_the_matcher_allows() -> None:
    reasoning = Reasoning()
    split = reasoning.split("<think>\nplan\n</think>\n\n{\"a\":1}")
    assert split.reasoning == "\nplan\n" and split.answer == '{"a":1}'
    assert reasoning.split("<think>plan</th", final=False).reasoning == "plan"
    assert reasoning.split("<think>plan</th", final=True).reasoning == "plan</th"
    assert reasoning.split("<think>plan").answer is None
    assert reasoning.answer_offset("<think>a</think>\n\nb") == len("<think>a</think>\n\n")
    assert reasoning.answer_offset("<think>a</thi") is None
    opened = Reasoning(opened=True)
    assert opened.split("a</think>" + " " * 10 + "b").answer == "  b"
