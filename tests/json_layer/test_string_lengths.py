"""Maximum string lengths past the lexer's count, counted by the matcher
(``structgen.json.string_lengths``): the count against Python's, the report, the
marker, and masks against an oracle that shares no code with them."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from schema_checks import masks_follow_oracle

import structgen
from schema2grammar import APPROXIMATED, ENFORCED, SchemaError, automata, ecma, translate
from schema2grammar.options import LEXER_MAX_LENGTH
from schema2grammar.translate import COUNTED_NOTE, MAX_CLOSING_DISTANCE
from structgen import Grammar, TokenizerInfo
from structgen.json.string_lengths import OUTSIDE, PLAIN, StringLengths, marked_maximum, step

ALPHABET = ["a", "b", " ", "é", "中", "😀", "\n", '"', "\\", "/", "\x01", "\u00e9", "\U0001f600"]


def _count(data: bytes, state: int = OUTSIDE, count: int = 0) -> tuple[int, int]:
    for byte in data:
        state, count = step(state, count, byte)
    return state, count


@pytest.mark.parametrize("ascii_only", [False, True])
def test_the_count_is_pythons_whatever_the_spelling(ascii_only: bool) -> None:
    """Escapes, surrogate pairs and UTF-8 sequences are one character each, and a
    string's count is its length however its bytes are cut."""
    rng = random.Random(int(ascii_only))
    for _ in range(2000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 14)))
        data = json.dumps(text, ensure_ascii=ascii_only).encode()
        state, count = _count(data[:-1])
        assert state == PLAIN and count == len(text), (data, count)
        assert _count(data[-1:], state, count) == (OUTSIDE, 0)


def test_a_character_counts_where_it_starts() -> None:
    """At a string's maximum, a started escape or UTF-8 sequence already counts: what
    is left may only close the string."""
    assert _count(b'"ab\\')[1] == 3 and _count(b'"ab\\u00')[1] == 3
    assert _count(b'"\xe4')[1] == 1 and _count(b'"\\ud83d\\ude')[1] == 1  # the low half of a pair adds nothing


def test_a_maximum_past_the_length_bound_is_counted_by_the_matcher() -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 32767},
                                               "short": {"type": "string", "maxLength": LEXER_MAX_LENGTH},
                                               "long": {"type": "string", "minLength": 3000}}}
    text, report = translate(schema)
    statuses = {(e.pointer, e.keyword): (e.status, e.note) for e in report.entries}
    assert statuses[("/properties/text", "maxLength")] == (ENFORCED, COUNTED_NOTE)
    assert statuses[("/properties/short", "maxLength")] == (ENFORCED, "")
    assert statuses[("/properties/long", "minLength")][0] == APPROXIMATED  # minima are counted by the grammar alone
    assert "(?P<max_length_32767_" in text and text.count("max_length_") == 1
    grammar = Grammar.from_json_schema(schema)
    assert grammar.check(StringLengths) is not None and sorted(grammar.check(StringLengths).maxima.values()) == [32767]
    assert grammar.accepts(json.dumps({"text": "é" * 32767})) and not grammar.accepts(json.dumps({"text": "é" * 32768}))
    assert grammar.accepts(json.dumps({"text": "\U0001f600" * 32767}))  # ensure_ascii: 32,767 pairs


@pytest.mark.parametrize("pattern, found", [
    (r'[ \t]{0,3}(?:(?P<max_length_40>"[a-z]*"))', (40, -1, 0)),
    (r'(?P<max_length_7_12>"[a-z]*")', (7, 12, 0)),  # the tag: the report entry it stands for
    (r'(?P<max_length_7_12_1>"[a-z ]*")', (7, 12, 1)),  # and the closing distance: a space wants a letter
    (r'(?P<max_length_7>"[a-z]*")|x', None),  # not the whole terminal
    (r'x(?P<max_length_7>"a")y', None),
    (r'(?P<max_length_1>"a")(?P<max_length_2>"b")', None),
    (r'(?P<max_length>"a")', None),
    (r'(?P<max_length_3>[a-z]+)', None),  # no JSON string to count
])
def test_only_a_marker_closing_the_terminal_around_a_string_counts(pattern: str, found: tuple[int, int, int] | None
                                                                  ) -> None:
    assert marked_maximum(pattern) == found
    assert Grammar.from_lark("start: WORD\nWORD: /(?P<max_length_3>[a-z]+)/\n").accepts("abcdef")


def test_a_maximum_beside_another_kind_of_string_is_not_counted(infos: dict[str, TokenizerInfo]) -> None:
    """Under ``anyOf`` a value may be written as either string; the count could
    learn which only once the other gives way, past the maximum, with no valid end
    left. Such a marker is left uncounted and its entry approximated (strict: an
    error); two maxima that differ, the same."""
    schema = {"properties": {"x": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "string", "pattern": "^a*$"}]},
                             "y": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "string", "maxLength": 50}]},
                             "z": {"type": "string", "maxLength": 60}}}
    grammar = Grammar.from_json_schema(schema, length_bound=32)
    statuses = {e.pointer: e.status for e in grammar.report.entries if e.keyword == "maxLength"}
    assert statuses == {"/properties/x/anyOf/0": APPROXIMATED, "/properties/y/anyOf/0": APPROXIMATED,
                        "/properties/y/anyOf/1": APPROXIMATED, "/properties/z": ENFORCED}
    assert grammar.accepts(json.dumps({"x": "a" * 45, "y": "b" * 45})) and not grammar.accepts(json.dumps({"z": "c" * 61}))
    matcher = structgen.Matcher(structgen.compile(grammar, infos["smollm2"]))
    assert matcher.accept_string('{"x": "' + "a" * 45)
    assert matcher.allowed_tokens()  # "b" may follow (the pattern is gone, so is the count): never a dead end
    with pytest.raises(SchemaError, match="/properties/x/anyOf/0: maxLength cannot be enforced exactly"):
        Grammar.from_json_schema(schema, length_bound=32, strict=True)


def test_a_maximum_past_the_lexers_count_is_the_matchers_at_a_fraction_of_the_states() -> None:
    """Past ``lexer_max_length`` (8) a plain string's maximum is the matcher's: the
    same strings, with a lexer of tens of states where counting 1,000 characters
    took some 20 a character (each one's token groups a step may wait for)."""
    schema = {"type": "object", "properties": {"long": {"type": "string", "maxLength": 1000},
                                               "edge": {"type": "string", "maxLength": LEXER_MAX_LENGTH}}}
    matched = Grammar.from_json_schema(schema)
    lexed = Grammar.from_json_schema(schema, lexer_max_length=2048)
    notes = {e.pointer: e.note for e in matched.report.entries if e.keyword == "maxLength"}
    assert notes == {"/properties/long": COUNTED_NOTE, "/properties/edge": ""}
    assert {e.note for e in lexed.report.entries if e.keyword == "maxLength"} == {""}
    assert matched.report.exact and lexed.report.exact
    assert lexed.lexer.dfa.state_count > 10 * matched.lexer.dfa.state_count
    for value in ["a" * 1000, "a" * 1001, "é" * 999 + r"\n", r"\u00e9" * 1000 + "x", r"\ud83d\ude00" * 1000, ""]:
        text = '{"long": "' + value + '"}'
        assert matched.accepts(text) == lexed.accepts(text) == (len(json.loads('"' + value + '"')) <= 1000), value
    for grammar in (matched, lexed):
        assert grammar.accepts(json.dumps({"edge": "b" * LEXER_MAX_LENGTH}))
        assert not grammar.accepts(json.dumps({"edge": "b" * (LEXER_MAX_LENGTH + 1)}))
    with pytest.raises(ValueError, match="lexer_max_length must be between 0 and 2048"):
        Grammar.from_json_schema(schema, lexer_max_length=2049)


def test_a_maximum_the_matcher_cannot_count_is_counted_by_the_lexer_again() -> None:
    """Beside another kind of string, or another maximum, the matcher cannot count
    a maximum (``_mixed_strings``): the schema is translated again with the lexer
    counting up to the longest such maximum, exact (a strict translation raises
    nothing), while a longer one elsewhere stays the matcher's."""
    schema = {"properties": {"x": {"anyOf": [{"type": "string", "maxLength": 100}, {"type": "string", "pattern": "^a*$"}]},
                             "y": {"anyOf": [{"type": "string", "maxLength": 20}, {"type": "string", "maxLength": 30}]},
                             "z": {"type": "string", "maxLength": 1000}}}
    for grammar in (Grammar.from_json_schema(schema), Grammar.from_json_schema(schema, strict=True)):
        assert grammar.report.exact and not grammar._marked.uncounted_tags and grammar._marked.longest_uncounted == 0
        notes = {e.pointer: e.note for e in grammar.report.entries if e.keyword == "maxLength"}
        assert notes == {"/properties/x/anyOf/0": "", "/properties/y/anyOf/0": "", "/properties/y/anyOf/1": "",
                         "/properties/z": COUNTED_NOTE}
        assert grammar.accepts(json.dumps({"x": "b" * 100, "y": "d" * 30, "z": "c" * 1000}))
        assert grammar.accepts(json.dumps({"x": "a" * 300}))
        for wrong in ({"x": "b" * 101}, {"y": "d" * 31}, {"z": "c" * 1001}):
            assert not grammar.accepts(json.dumps(wrong)), wrong


def test_where_the_lexer_cannot_count_it_either_the_maximum_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A translation again that would pass the lexer's limit (stood in for here by
    any grammar counting the mixed maximum in its terminals) leaves the first
    grammar, its uncounted maxima reported approximated."""
    from structgen import grammar as grammar_module
    from structgen.lark_rules import LexerTooLarge

    built = grammar_module.Grammar.from_lark.__func__  # type: ignore[attr-defined]

    def no_counts_of_100(cls: type, text: str, start: str = "start") -> Grammar:
        if "max_length_100_" not in text:
            raise LexerTooLarge("the terminals' automaton: the automaton needs more than 50000 DFA states")
        return built(cls, text, start)

    monkeypatch.setattr(grammar_module.Grammar, "from_lark", classmethod(no_counts_of_100))
    schema = {"properties": {"x": {"anyOf": [{"type": "string", "maxLength": 100}, {"type": "string", "pattern": "^a*$"}]}}}
    grammar = Grammar.from_json_schema(schema)
    assert grammar._marked.longest_uncounted == 100
    assert {e.pointer: e.status for e in grammar.report.entries if e.keyword == "maxLength"} == {
        "/properties/x/anyOf/0": APPROXIMATED}
    with pytest.raises(SchemaError, match="maxLength cannot be enforced exactly"):
        Grammar.from_json_schema(schema, strict=True)


@pytest.mark.parametrize("pattern, low, closing", [
    ("^[a-z]+$", 0, (1, 0)), ("^[a-z]+$", 5, (5, 0)), ("^[0-9]{16}$", 0, (16, 0)), ("^ab?$", 0, (1, 0)),
    ("^(?:\\S+\\s+){0,9}\\S+$", 1, (1, 1)),  # after a space, a word is wanted
    ("^$|^\\d{1,15}(?:\\.\\d{1,5})?$", 0, (0, 1)),  # after the point, a digit
    ("[a-z]", 0, (1, 1)),  # a search: a text with no letter yet wants one
    ("^a$|^bbbbb$", 0, (1, 4)),  # after one b, four
    ("^a{2}$", 5, None),  # nothing long enough
])
def test_how_far_a_long_enough_text_is_from_its_end(pattern: str, low: int, closing: tuple[int, int] | None) -> None:
    assert automata.closing_distance(ecma.parse(ecma.conjuncts(pattern)[0][1]), low) == closing


def test_a_maximum_beside_a_pattern_that_can_end_anywhere_is_the_matchers() -> None:
    """Beside a pattern every text of which, from some length on, can end at once,
    the matcher's count of a maximum no shorter is exact (it never leaves a text
    at its maximum where the pattern wants more): the lexer counts no characters.
    Beside a pattern of words, or a search, the matcher keeps the character a text
    may still need (its closing distance, 1); where that is more than
    ``MAX_CLOSING_DISTANCE`` the lexer still counts."""
    slug = {"type": "string", "pattern": "^[a-z0-9-]+$", "minLength": 3, "maxLength": 255}
    matched = Grammar.from_json_schema(slug)
    lexed = Grammar.from_json_schema(slug, lexer_max_length=2048)
    assert {(e.keyword, e.note) for e in matched.report.entries} >= {("maxLength", COUNTED_NOTE),
                                                                    ("minLength", "beside the pattern")}
    assert matched.report.exact and lexed.lexer.dfa.state_count > 255 > matched.lexer.dfa.state_count  # a state a character
    for value in ["ab", "abc", "a-b" * 85, "a" * 256, "aBc", "a" * 254 + "é"]:
        assert matched.accepts(json.dumps(value)) == lexed.accepts(json.dumps(value)), value
    assert matched.accepts(json.dumps("a" * 255)) and not matched.accepts(json.dumps("a" * 256))
    for pattern in ("^(?:\\S+\\s+){0,9}\\S+$", "[a-z]"):
        counted = Grammar.from_json_schema({"type": "string", "pattern": pattern, "maxLength": 100})
        assert {e.note for e in counted.report.entries if e.keyword == "maxLength"} == {COUNTED_NOTE}, pattern
        assert counted.check(StringLengths) is not None and list(counted.check(StringLengths).late.values()) == [1]
    far = {"type": "string", "pattern": "^(?:a|b{20})+$", "maxLength": 100}  # inside the b's, up to 19 to go
    assert MAX_CLOSING_DISTANCE < 19
    kept = Grammar.from_json_schema(far)
    assert {e.note for e in kept.report.entries if e.keyword == "maxLength"} == {"beside the pattern"}
    assert kept.check(StringLengths) is None


WORDS = "^(?:\\S+\\s+){0,9}\\S+$"
WORD_PIECES = [bytes([b]) for b in range(256)] + [
    b"ab", b"a b", b"abc ", b" x", b"  ", b"aaaa", b"\\n", b"\\t ", b"\\u00e9", "\u00e9 ".encode(), b'a"',
    b'", "k": "', b'", "k": "a ', b'", "k": "ab', b'"a ', b'"ab ', b"",
]
WRITTEN = [i for i, piece in enumerate(WORD_PIECES) if piece in (b"a", b" ", b"ab", b"a b", b"abc ", b" x", b"  ", b"aaaa",
                                                                  b"\\n", b"\\t ", "\u00e9 ".encode(), b'a"', b'", "k": "a ')]


@pytest.mark.parametrize("seed", range(3))
def test_beside_a_pattern_of_words_masks_equal_the_lexers_count(seed: int) -> None:
    """The matcher's count, keeping room for the character a text may still need
    (after a space, a word), allows and accepts what the lexer's own count does:
    in the string in progress (``d``) and in one a token opens (``k``), through
    escapes and UTF-8; without that room it would allow a space at the maximum."""
    info = TokenizerInfo(WORD_PIECES, stop_token_ids=[len(WORD_PIECES) - 1])
    schema = {"type": "object", "properties": {"d": {"type": "string", "maxLength": 12, "pattern": WORDS},
                                               "k": {"type": "string", "maxLength": 3, "pattern": WORDS}},
              "required": ["d", "k"], "additionalProperties": False}
    counted = Grammar.from_json_schema(schema, lexer_max_length=2)
    lexed = Grammar.from_json_schema(schema, lexer_max_length=2048)
    assert counted.check(StringLengths) is not None and sorted(counted.check(StringLengths).maxima.values()) == [3, 12]
    assert set(counted.check(StringLengths).late.values()) == {1} and lexed.check(StringLengths) is None
    ours, theirs = structgen.Matcher(structgen.compile(counted, info)), structgen.Matcher(structgen.compile(lexed, info))
    rng = random.Random(seed)
    for _ in range(60):
        ours.reset()
        theirs.reset()
        assert ours.accept_string('{"d": "') and theirs.accept_string('{"d": "')
        while not ours.is_terminated():
            allowed = ours.allowed_tokens()
            assert allowed == theirs.allowed_tokens(), WORD_PIECES
            for piece in rng.sample(WORD_PIECES[:-1], 8):  # what accepting text does, beside the masks
                assert ours.fork().accept_string(piece) == theirs.fork().accept_string(piece), piece
            preferred = [token for token in WRITTEN if token in allowed]
            token = rng.choice(preferred if preferred and rng.random() < 0.85 else allowed)
            assert ours.accept_token(token) and theirs.accept_token(token)
    unroomed = structgen.Matcher(structgen.compile(Grammar.from_json_schema(schema, lexer_max_length=2), info))
    [lengths] = [check for check in unroomed.compiled.checks if isinstance(check, StringLengths)]
    lengths.late = {}
    ours.reset()
    assert ours.accept_string('{"d": "' + "a" * 11)
    assert unroomed.accept_string('{"d": "' + "a" * 11)
    assert ord(" ") not in ours.allowed_tokens()
    assert ord(" ") in unroomed.allowed_tokens()


def test_a_token_read_from_inside_an_escape_counts_all_it_adds() -> None:
    """After a backslash, a token that starts with a quote (an escaped one) adds its
    whole length, which read from between characters it would not."""
    pieces = [bytes([b]) for b in range(256)] + [b"aaaa", b'"' + b"x" * 12, b""]
    info = TokenizerInfo(pieces, stop_token_ids=[len(pieces) - 1])
    grammar = Grammar.from_json_schema({"type": "string", "maxLength": 40}, length_bound=32)
    matcher = structgen.Matcher(structgen.compile(grammar, info))
    assert matcher.accept_string('"' + "a" * 29 + "\\")  # 30 characters, the last an escape begun
    long_quote = len(pieces) - 2
    assert long_quote not in matcher.allowed_tokens() and not matcher.fork().accept_token(long_quote)
    assert matcher.accept_string('"' + "x" * 10 + '"') and matcher.can_terminate()  # 40 characters


SCHEMA = {"type": "object", "properties": {"d": {"type": "string", "maxLength": 40}, "k": {"type": "string"}},
          "required": ["d", "k"], "additionalProperties": False}


def started(raw: str) -> int:
    """Characters begun in a JSON string's written part: complete ones, plus one
    for an escape or UTF-8 sequence cut short (no code shared with the matcher's)."""
    whole = re.sub(r'(?<!\\)((?:\\\\)*)\\(?:u[0-9a-fA-F]{0,3})?$', lambda m: m.group(1) + "#", raw)
    return len(json.loads('"' + whole + '"'))


def oracle(allowed: list[int], written: bytes, vocab: list[bytes]) -> set[int]:
    """The grammar's tokens, less those that write the value of ``d`` past 40
    characters."""
    closed = re.match(r'\{"d": "((?:[^"\\]|\\.)*)"', written.decode("utf-8", "replace"))
    if closed is not None:  # the value is written: no token can change its length
        return set(allowed) if started(closed.group(1)) <= 40 else set()
    kept = set()
    for token in allowed:
        text = (written + vocab[token]).decode("utf-8", "replace")  # a cut UTF-8 sequence: one character begun
        found = re.match(r'\{"d": "((?:[^"\\]|\\.?)*)', text)
        if found is None or started(found.group(1)) <= 40:
            kept.add(token)
    return kept


# the same strings, but for "#", beside a pattern that can end wherever it goes on
PATTERNED = {**SCHEMA, "properties": {**SCHEMA["properties"], "d": {"type": "string", "maxLength": 40, "pattern": "^[^#]*$"}}}


VALUES = ["a" * 40, "a" * 41, "é" * 39 + "中", "x" * 37 + "\\n\\t", "ab" * 30, "", "q" * 38 + "é"]
"""Values of ``d`` around its maximum of 40 characters: ASCII, multibyte, escapes."""


@pytest.mark.parametrize("schema, options, value", [
    *[pytest.param(SCHEMA, {"length_bound": 32}, value, id=f"past the bound-{value}") for value in VALUES],
    *[pytest.param(SCHEMA, {}, value, id=f"plain-{value}") for value in VALUES],
    # the pattern only decides where a value may end: the ASCII values try it
    *[pytest.param(PATTERNED, {}, value, id=f"patterned-{value}") for value in VALUES
      if value.isascii() and "\\" not in value],
])
def test_masks_equal_the_oracle_at_every_token(value: str, schema: dict[str, Any], options: dict[str, Any],
                                               infos: dict[str, TokenizerInfo], hf_tokenizers: dict[str, Any]) -> None:
    info, tokenizer = infos["smollm2"], hf_tokenizers["smollm2"]
    grammar = Grammar.from_json_schema(schema, **options)
    assert grammar.check(StringLengths) is not None and list(grammar.check(StringLengths).maxima.values()) == [40]
    compiled = structgen.compile(grammar, info)
    vocab = info.decoded_vocab
    text = '{"d": "' + value + '", "k": "' + "z" * 50 + '"}'
    matcher = structgen.Matcher(compiled)
    written, _ = masks_follow_oracle(matcher, tokenizer.encode(text, add_special_tokens=False), vocab, oracle, value)
    length = len(json.loads('"' + value + '"'))
    assert (written == text.encode() and matcher.can_terminate()) == (length <= 40)


def test_accepting_text_keeps_to_the_maximum_and_rolls_back(infos: dict[str, TokenizerInfo]) -> None:
    compiled = structgen.compile(Grammar.from_json_schema(SCHEMA, length_bound=32), infos["smollm2"])
    matcher = structgen.Matcher(compiled)
    assert matcher.accept_string('{"d": "' + "a" * 39)
    fork = matcher.fork()
    assert not matcher.accept_string("bc") and matcher.accept_string("b")
    assert not matcher.accept_string("c") and matcher.accept_string('", "k": "')
    assert matcher.accept_string("z" * 100 + '"}') and matcher.can_terminate()  # k has no maximum
    matcher.rollback(2)  # back to 40 characters
    assert not matcher.accept_string("c") and not fork.accept_string('bb"') and fork.accept_string('b"')
