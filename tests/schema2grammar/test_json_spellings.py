"""One spelling convention for a string's characters (schema2grammar/spellings.py),
the same wherever a string's text is matched: free strings, ``const``/``enum``,
``pattern``, property names, ``propertyNames``, ``format``, and complements.

Every spelling the convention takes is accepted wherever the value is valid
(``json.dumps`` with and without ``ensure_ascii`` among them), every spelling of a
word a complement leaves out is refused, and ``\\u`` escapes of printable ASCII
(``\\u0041``), which no JSON encoder writes, are refused everywhere."""

from __future__ import annotations

import functools
import itertools
import json
import random
import re
from typing import Any, Callable

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schema_checks import draft_grammar

import structgen
from schema2grammar import SchemaError, ecma, property_names, spellings
from structgen import Grammar, TokenizerInfo

SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}

PROBES = [chr(c) for c in range(0x80)] + [chr(c) for c in (0xA0, 0xE9, 0x7FF, 0x800, 0x2028, 0x4E2D, 0xD7FF, 0xE000,
                                                         0xFDD0, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF)]
"""Characters tried one by one: all of ASCII, and the edges of the BMP and past it."""

TRICKY = ["é", 'say "hi"', "back\\slash", "a/b", "tab\there\nnext", "\x01\x1f", "😀", 'mixé/"\\\n😀\x7f', "中文"]
"""Values whose characters have several spellings."""


def spellings_of(char: str) -> list[str]:
    """Every spelling of ``char`` the convention takes (hex digits in every case)."""
    code = ord(char)
    found = [char] if code >= 0x20 and char not in '"\\' else []
    if char in SHORT:
        found.append(SHORT[char])
    if code < 0x20 or char in '"\\' or code >= 0x7F:
        units = [code] if code < 0x10000 else [0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)]
        digits = "".join(f"{unit:04x}" for unit in units)
        for cased in itertools.product(*[(d, d.upper()) if d.isalpha() else (d,) for d in digits]):
            found.append("".join(f"\\u{''.join(cased[i:i + 4])}" for i in range(0, len(cased), 4)))
    return found


def refused_spellings(char: str) -> list[str]:
    """JSON spellings of ``char`` the convention refuses: printable ASCII as ``\\u``."""
    code = ord(char)
    return [f"\\u{code:04x}", f"\\u{code:04X}"] if 0x20 <= code <= 0x7E and char not in '"\\' else []


def spelled(value: Any, pick: Callable[[str], str]) -> str:
    """``value`` as compact JSON text, each character of its strings (keys too) as ``pick`` spells it."""
    if isinstance(value, str):
        return '"' + "".join(pick(char) for char in value) + '"'
    if isinstance(value, dict):
        return "{" + ",".join(f"{spelled(k, pick)}:{spelled(v, pick)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(spelled(item, pick) for item in value) + "]"
    return json.dumps(value)


def every_spelling(value: Any, seed: int = 0) -> list[str]:
    """``value`` as ``json.dumps`` writes it both ways, each character's first and
    last spelling throughout, and a few random mixes."""
    rng = random.Random(seed)
    texts = [json.dumps(value), json.dumps(value, ensure_ascii=False), spelled(value, lambda c: spellings_of(c)[0]),
             spelled(value, lambda c: spellings_of(c)[-1])]
    texts += [spelled(value, lambda c: rng.choice(spellings_of(c))) for _ in range(6)]
    assert all(json.loads(text) == value for text in texts)
    return list(dict.fromkeys(texts))


def ecma_literal(text: str) -> str:
    """A pattern that matches exactly ``text`` (ECMA-262 and Python's ``re`` alike)."""
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 else "\\" + c if c in "\\^$.|?*+()[]{}/" else c for c in text)


# -- the regexes themselves


@pytest.mark.parametrize("ranges", [
    spellings.ALL, [(0x61, 0x7A)], [(0x00, 0x1F)], [(0x22, 0x22), (0x5C, 0x5C)], [(0x2F, 0x2F)], [(0x7F, 0xFF)],
    [(0xE9, 0xE9)], [(0x10000, 0x10FFFF)], [(0x1F600, 0x1F64F)], [(0xD7FF, 0xD7FF), (0xE000, 0xE000)],
    spellings.minus(spellings.ALL, [(0x41, 0x5A), (0x0A, 0x0A)]), spellings.minus(spellings.ALL, [(0xE9, 0xE9), (0x1F600, 0x1F600)]),
    [(0x20, 0x7E)], [(0x09, 0x0A), (0x2028, 0x2029), (0xFEFF, 0xFEFF)],
])
def test_one_character_in_all_its_spellings(ranges: spellings.Ranges) -> None:
    pattern = re.compile(spellings.spell_ranges(ranges))
    for char in PROBES:
        inside = any(low <= ord(char) <= high for low, high in ranges)
        for text in spellings_of(char):
            assert bool(pattern.fullmatch(text)) == inside, (ranges, text)
        for text in refused_spellings(char) + ([char] if ord(char) < 0x20 else []):
            assert not pattern.fullmatch(text), (ranges, text)
    for lone in ("\\ud800", "\\uDBFF", "\\udc00", "\\uDFFF", "\\udc00\\ud800", "\\ud83d\\u0041"):
        assert not pattern.fullmatch(lone)


@pytest.mark.parametrize("ranges", [[(0x7F, 0xD7FF), (0xE000, 0xFFFF)], [(0x00, 0x1F), (0x22, 0x22)], [(0x1234, 0xABCD)],
                                    [(0xD800, 0xDBFF)], [(0, 0), (0xFFFF, 0xFFFF)], [(0x10, 0x2F), (0x1000, 0x10FF)]])
def test_hex_digits_are_built_digit_by_digit(ranges: spellings.Ranges) -> None:
    pattern = re.compile(spellings.hex_digits(ranges, 4))
    for value in range(0x10000):
        inside = any(low <= value <= high for low, high in ranges)
        assert bool(pattern.fullmatch(f"{value:04x}")) == inside == bool(pattern.fullmatch(f"{value:04X}")), hex(value)
    assert len(spellings.hex_digits([(0x7F, 0xD7FF), (0xE000, 0xFFFF)], 4)) < 160  # compact: one branch per digit set


def test_a_text_in_every_spelling_and_plain_ones_as_literals() -> None:
    for text in TRICKY + ["", "a b", "plain_name-1"]:
        pattern = re.compile(spellings.spell_text(text))
        for written in every_spelling(text, seed=len(text)):
            assert pattern.fullmatch(written[1:-1]), (text, written)
        for char in "ab":
            assert not pattern.fullmatch(json.dumps(text + char)[1:-1])
    assert spellings.spell_text("user_id") == "user_id" and spellings.spell_text("a b.c") == re.escape("a b.c")
    with pytest.raises(ValueError):
        spellings.spell_text("\ud800")


def test_a_regex_over_decoded_text_respelled() -> None:
    """``spell_regex`` (the formats' regexes): the decoded regex's language, in every spelling."""
    source = '(?:[a/é"]|\\\\)+x?[^y]'
    decoded, pattern = re.compile(source), re.compile(spellings.spell_regex(source))
    rng = random.Random(2)
    for _ in range(500):
        text = "".join(rng.choice('a/é"\\xy\n😀') for _ in range(rng.randint(1, 4)))
        for written in every_spelling(text, seed=len(text))[:4]:
            assert bool(pattern.fullmatch(written[1:-1])) == bool(decoded.fullmatch(text)), (text, written)
    for unread in ("^a", "a(?=b)", "(?i)a", "(a)\\1", "\\d"):
        with pytest.raises(ValueError):
            spellings.spell_regex(unread)


def test_free_strings_refuse_escaped_printable_ascii() -> None:
    grammar = Grammar.from_json_schema({"type": "string"})
    for text in ['"\\u0041"', '"\\u002f"', '"\\u002F"', '"a\\u0020"', '"\\u007e"', '"\\ud800"', '"\\udc00"',
                 '"\\ude00\\ud83d"', '"\\ud83d"', '"\x01"']:
        assert not grammar.accepts(text), text
    for text in ['"\\u00e9"', '"\\u0022"', '"\\u005C"', '"\\/"', '"\\ud83d\\ude00"', '"\\u007F"', '"\\u0000"', '"\\uFFFF"']:
        assert grammar.accepts(text), text
    counted = Grammar.from_json_schema({"type": "string", "maxLength": 2, "minLength": 2})
    assert counted.accepts('"\\u00e9\\uD83D\\uDE00"') and counted.accepts('"\\/\\""')
    assert not counted.accepts('"\\u00e9\\ud83d\\ude00x"') and not counted.accepts('"\\u0041b"')


def test_names_other_than_declared_ones_write_the_escapes_a_few_times() -> None:
    """A region of names (``automata.to_regex``) leaving out many declared names:
    every escape leaves the trie of names at most of its nodes, and the states that
    escape to one state share a hub, so the long regex of nearly all escapes is
    written a few times, not once per trie node; exact in every spelling."""
    declared = [f"{word}{i}" for word in ("name", "key", "id") for i in range(20)] + ["é", "a/b", 'q"', "😀x"]
    regions = {region.matched: re.compile(region.regex) for region in property_names.regions(["^x"], declared)}
    assert list(regions) == [(), (0,)] and regions[()].pattern.count("[dD][89abAB]") < 10  # 23 without hubs
    rng = random.Random(4)
    names = declared + ["", "x", "xé", "name", "name300", "é!", "a", "a/", "q", "😀", "key\n", "id1\\"] + [
        "".join(rng.choice(["n", "a", "m", "e", "1", "é", "/", '"', "x", "😀", "\n", "q", "k", "i", "d"])
                for _ in range(rng.randint(0, 6)))
        for _ in range(1500)]
    for name in names:
        expected = [] if name in declared else [(0,) if name.startswith("x") else ()]
        for written in every_spelling(name, seed=len(name))[:5]:
            assert [m for m, regex in regions.items() if regex.fullmatch(written[1:-1])] == expected, (name, written)


# -- schemas: every spelling of a valid value accepted


def _places(value: str) -> list[tuple[dict[str, Any], Any]]:
    """Schemas where ``value`` constrains a string, each with an instance it makes valid."""
    literal = f"^{ecma_literal(value)}$"
    return [
        ({"const": value}, value),
        ({"enum": [value, "other", 1]}, value),
        ({"type": "string", "pattern": literal}, value),
        ({"type": "string", "pattern": ecma_literal(value[1:])}, "x" + value),  # a search, free on either side
        ({"type": "object", "properties": {value: {"type": "integer"}}, "required": [value],
          "additionalProperties": False}, {value: 1}),
        ({"type": "object", "properties": {value: {"type": "integer"}}, "additionalProperties": {"type": "string"}},
         {value: 2, "x": "y"}),
        ({"type": "object", "propertyNames": {"enum": [value, "x"]}}, {value: 1}),
        ({"type": "object", "propertyNames": {"pattern": literal}}, {value: None}),
        ({"type": "object", "patternProperties": {literal: {"type": "integer"}}, "additionalProperties": False},
         {value: 3}),
        ({"type": "object", "properties": {"a": {"const": value}, "b": {"enum": [[value], {value: value}]}}},
         {"a": value, "b": {value: value}}),
    ]


@pytest.mark.parametrize("value", TRICKY)
def test_every_spelling_of_a_valid_value_is_accepted(value: str) -> None:
    for schema, instance in _places(value):
        assert jsonschema.Draft202012Validator(schema).is_valid(instance), (schema, instance)
        grammar = draft_grammar(schema)
        assert grammar.report.exact, (schema, str(grammar.report))
        for text in every_spelling(instance, seed=len(value)):
            assert grammar.accepts(text), (schema, text)
        for char in value:
            for wrong in refused_spellings(char):
                assert not grammar.accepts(spelled(instance, lambda c, w=wrong, x=char: w if c == x else json.dumps(c)[1:-1])), \
                    (schema, wrong)


@pytest.mark.parametrize("fmt, value", [
    ("uri", "http://example.com/a/b?q=/x#/frag"), ("uri-reference", "//host/path/%C3%A9"),
    ("uri-template", "http://example.com/é/{name}/😀"), ("email", '"quoted\\"at/x"@example.com'),
    ("email", "first/last@example.com"), ("regex", '^[é"\\\\/]+\\n$'), ("date-time", "2024-02-29T12:00:00Z"),
])
def test_formats_take_every_spelling(fmt: str, value: str) -> None:
    grammar = Grammar.from_json_schema({"type": "string", "format": fmt})
    for text in every_spelling(value, seed=3):
        assert grammar.accepts(text), (fmt, text)
    for char in set(value):
        for wrong in refused_spellings(char):
            assert not grammar.accepts(spelled(value, lambda c: wrong if c == char else json.dumps(c)[1:-1])), (fmt, wrong)


# -- complements: every spelling of an excluded word refused


def _complements(value: str) -> list[tuple[dict[str, Any], Any]]:
    """Schemas that leave ``value`` out, each with an instance holding it (invalid)."""
    literal = f"^{ecma_literal(value)}$"
    return [
        ({"not": {"const": value}}, value),
        ({"type": "string", "not": {"enum": [value, "x"]}}, value),
        ({"type": "string", "not": {"pattern": literal}}, value),
        ({"type": "object", "properties": {value: {"type": "integer"}}, "additionalProperties": {"type": "string"}},
         {value: "s"}),  # the declared name is no extra name, however spelled
        ({"type": "object", "propertyNames": {"not": {"const": value}}}, {value: 1}),
        ({"type": "object", "patternProperties": {literal: {"type": "integer"}}}, {value: "s"}),
        ({"type": "array", "items": {"enum": [value, "x", "y"]}, "uniqueItems": True}, [value, value]),
        ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, [value, "z", value]),
    ]


@pytest.mark.parametrize("value", TRICKY)
def test_every_spelling_of_an_excluded_word_is_refused(value: str) -> None:
    for schema, instance in _complements(value):
        assert not jsonschema.Draft202012Validator(schema).is_valid(instance), (schema, instance)
        grammar = draft_grammar(schema)
        assert grammar.report.exact, (schema, str(grammar.report))
        texts = every_spelling(instance, seed=len(value))
        if isinstance(instance, list):  # the repeat in another spelling than the first item
            texts += [f"[{json.dumps(instance[0], ensure_ascii=False)},{text[1:]}" for text in every_spelling(instance[1:])]
        for text in texts:
            assert not grammar.accepts(text), (schema, text)
        other = value + "!"  # a word next to it: taken
        if "not" in schema:
            for text in every_spelling(other):
                assert grammar.accepts(text), (schema, text)


# -- random strings of a small alphabet against jsonschema


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not ecma.searches(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


VALIDATOR = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})
"""jsonschema, with ``pattern`` searched as ECMA-262 searches (its own runs Python's
``re``, whose ``$`` also matches before a final newline)."""

ALPHABET = ["a", "é", '"', "\\", "/", "\n", "😀"]
KINDS = ["const", "enum", "not const", "pattern", "search", "not pattern", "name"]


@functools.lru_cache(maxsize=None)
def _grammar(kind: str, word: str) -> tuple[Grammar, dict[str, Any]]:
    literal = ecma_literal(word)
    schema: dict[str, Any] = {
        "const": {"const": word}, "enum": {"enum": [word, "a" + word]}, "not const": {"not": {"const": word}},
        "pattern": {"type": "string", "pattern": f"^{literal}$"}, "search": {"type": "string", "pattern": literal},
        "not pattern": {"type": "string", "not": {"pattern": f"^(?:{literal})+$"}},
        "name": {"type": "object", "properties": {word: {"type": "integer"}}, "additionalProperties": {"type": "null"}},
    }[kind]
    grammar = draft_grammar(schema)
    assert grammar.report.exact, (schema, str(grammar.report))
    return grammar, schema


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(KINDS), st.text(st.sampled_from(ALPHABET), max_size=3),
       st.text(st.sampled_from(ALPHABET), max_size=3))
def test_random_strings_agree_with_jsonschema(kind: str, word: str, text: str) -> None:
    grammar, schema = _grammar(kind, word)
    instance: Any = {text: 1} if kind == "name" else text
    valid = VALIDATOR(schema).is_valid(instance)
    for ascii_only in (True, False):
        assert grammar.accepts(json.dumps(instance, ensure_ascii=ascii_only)) == valid, (schema, instance, ascii_only)
    mixed = spelled(instance, lambda c: spellings_of(c)[-1])
    assert grammar.accepts(mixed) == valid, (schema, mixed)


# -- masks: each token allowed exactly where some spelling goes on with it


@pytest.fixture(scope="module")
def bundled() -> tuple[TokenizerInfo, Any]:
    tokenizer = structgen.load_tokenizer()
    return TokenizerInfo.from_huggingface(tokenizer), tokenizer


def _all_spellings(value: str) -> set[bytes]:
    return {('"' + "".join(parts) + '"').encode() for parts in itertools.product(*map(spellings_of, value))}


@pytest.mark.parametrize("schema, words", [
    ({"const": "é/😀"}, ["é/😀"]),
    ({"enum": ['q"\\', "a\nb", "中"]}, ['q"\\', "a\nb", "中"]),
])
def test_masks_allow_every_spelling_and_nothing_else(schema: dict[str, Any], words: list[str],
                                                      bundled: tuple[TokenizerInfo, Any]) -> None:
    info, tokenizer = bundled
    texts = set().union(*map(_all_spellings, words))
    prefixes = {text[:end] for text in texts for end in range(len(text) + 1)}
    compiled = structgen.compile(Grammar.from_json_schema(schema, whitespace="compact"), info)
    vocab = info.decoded_vocab
    special = set(info.special_token_ids)
    ordinary = [t for t in range(info.vocab_size) if t not in special and vocab[t]]
    for text in sorted(texts)[:: max(1, len(texts) // 12)]:
        matcher = structgen.Matcher(compiled)
        written = b""
        for token in tokenizer.encode(text.decode(), add_special_tokens=False):
            allowed = set(matcher.allowed_tokens())
            expected = {t for t in ordinary if written + vocab[t] in prefixes}
            assert allowed - special == expected, (text, written)
            assert matcher.accept_token(token), (text, written)
            written += vocab[token]
        assert written == text and matcher.can_terminate()
        assert all(stop in matcher.allowed_tokens() for stop in info.stop_token_ids)


def test_a_lone_surrogate_has_no_spelling() -> None:
    """JSON can escape a lone surrogate, but it is no character: no grammar writes
    one, and a listed string or a name holding one is a value no text spells (it
    was a ``UnicodeEncodeError``)."""
    assert Grammar.from_json_schema({"enum": ["a\ud800", "b"]}).accepts('"b"')
    assert Grammar.from_json_schema({"anyOf": [{"const": "\ud800"}, {"type": "integer"}]}).accepts("1")
    named = Grammar.from_json_schema({"type": "object", "properties": {"\udc00": {"type": "integer"}, "k": {}}})
    assert named.accepts('{"k": 1}') and not named.accepts('{"\\udc00": 1}')
    with pytest.raises(SchemaError, match="no value of const"):
        Grammar.from_json_schema({"const": "\ud800"})
    with pytest.raises(SchemaError, match="lone surrogate"):
        Grammar.from_json_schema({"type": "object", "properties": {"\ud800": {}}, "required": ["\ud800"]})
