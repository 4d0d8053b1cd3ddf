"""``uniqueItems`` checked by the matcher: which arrays (schema2grammar.unique_arrays),
how values compare, and masks against an oracle that shares no code with them."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import BaseModel
from schema_checks import masks_follow_oracle

import structgen
from schema2grammar import APPROXIMATED, ENFORCED, translate, unique_arrays
from schema2grammar.unique_arrays import CHECKED_NOTE
from structgen import Grammar, TokenizerInfo
from structgen.json import unique_items
from structgen.json.unique_check import UniqueItemsCheck

STRINGS = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
OWNERS = {
    "type": "array", "uniqueItems": True,
    "items": {"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
              "required": ["name", "email"], "additionalProperties": False},
}
FIELDS = {  # SchemaStore's statamic blueprint: a field names its handle
    "type": "array", "uniqueItems": True,
    "items": {"type": "object", "properties": {"handle": {"type": "string"}, "field": {"type": "string"}},
              "dependentRequired": {"field": ["handle"]}},
}


def verdict(schema: Any) -> tuple[str, str]:
    """What the report says of the schema's uniqueItems (the same wherever it is reported)."""
    [found] = {(e.status, e.note) for e in Grammar.from_json_schema(schema).report.entries if e.keyword == "uniqueItems"}
    return found


@pytest.mark.parametrize("schema", [
    STRINGS,
    OWNERS,
    {"type": "object", "properties": {"tags": STRINGS}},
    {"$defs": {"tags": STRINGS}, "type": "object", "properties": {"a": {"$ref": "#/$defs/tags"}}},
    {"anyOf": [STRINGS, {"type": "null"}]},  # Optional[set[str]]: the other branch holds no array
    {"type": "array", "items": {"type": "integer", "minimum": 0}, "uniqueItems": True},
    {"type": "array", "items": {"type": "string", "format": "date-time"}, "uniqueItems": True},
    {"allOf": [{"type": "array", "items": {"type": "string"}}, {"uniqueItems": True}]},
    {"type": "array", "items": STRINGS, "uniqueItems": True},  # sets of sets: both levels
    {"type": "array", "items": {"type": "string", "pattern": "^[ab]$"}, "uniqueItems": True},  # two values
    {"type": "array", "items": {"type": "string", "maxLength": 3}, "uniqueItems": True},
    {"type": "array", "items": {"enum": [f"v{i}" for i in range(20)]}, "uniqueItems": True},
    {"type": "array", "items": {"allOf": [{"$ref": "#/$defs/a"}, {"properties": {"b": {"type": "integer"}}}]},
     "uniqueItems": True, "$defs": {"a": {"anyOf": [{"properties": {"x": {"type": "string"}}}, {"required": ["y"]}]}}},
    # a oneOf asks of a property what the branch that holds asks: here nothing, in either
    {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}], "properties": {"tags": STRINGS}},
    FIELDS,  # writing field writes handle too: both endless
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "uniqueItems": True,
     "items": {"type": "object", "properties": {"handle": {"type": "string"}, "field": {"type": "string"}},
               "dependencies": {"field": ["handle"]}}},
])
def test_the_matcher_checks_arrays_every_path_makes_unique(schema: Any) -> None:
    assert verdict(schema) == (ENFORCED, CHECKED_NOTE)


@pytest.mark.parametrize("schema", [
    {"anyOf": [STRINGS, {"type": "array", "items": {"type": "integer"}}]},  # the text cannot tell which
    {"type": "array", "items": {"type": "string", "pattern": "^[ab]$"}, "minItems": 3, "uniqueItems": True},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 100}, "uniqueItems": True},  # not counted
    {"type": "array", "items": {"type": "string", "pattern": "a(?=b)"}, "uniqueItems": True},  # no automaton
    {"type": "array", "items": {"type": "string"}, "contains": {"const": "a"}, "uniqueItems": True},
    {"type": "array", "prefixItems": [{"type": "string"}], "uniqueItems": True},
    {"type": "array", "items": {"$ref": "#"}, "uniqueItems": True},  # arrays of arrays of ...: past MAX_OPEN_DEPTH
    {"type": "object", "dependentSchemas": {"x": {"properties": {"a": STRINGS}}}},  # only sometimes: not followed
    # the one endless property needs a name that cannot be written: only {} is left (not counted)
    {"type": "array", "uniqueItems": True, "items": {"type": "object", "properties": {"a": {"type": "string"}},
                                                    "additionalProperties": False, "dependentRequired": {"a": ["b"]}}},
    {"type": "array", "uniqueItems": True, "items": {"type": "object", "properties": {"a": {"type": "string"}},
                                                    "dependencies": {"a": {"required": ["b"]}}}},  # a schema
])
def test_other_arrays_stay_approximated(schema: Any) -> None:
    assert verdict(schema)[0] == APPROXIMATED


def test_items_of_several_kinds_one_endless_are_checked_whatever_the_hash_order(tmp_path: Path) -> None:
    """Items of one endless kind take endless values whatever the room of the
    others: the verdict does not hang on the order a set of kinds is walked in
    (it did: the hash seed decided it for SchemaStore behat's ``contexts``)."""
    code = ("from structgen import Grammar; g = Grammar.from_json_schema({'type': 'array', 'uniqueItems': True, "
            "'items': {'type': ['string', 'object', 'integer'], 'minimum': 0, 'maximum': 9}}); "
            "print(sorted({e.status for e in g.report.entries if e.keyword == 'uniqueItems'}))")
    for seed in range(6):
        found = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": str(seed)},
                               cwd=tmp_path, capture_output=True, text=True, check=True).stdout
        assert found.strip() == "['enforced']", (seed, found)


def test_translate_alone_says_approximated_the_grammar_text_does_not_check() -> None:
    _, report = translate(STRINGS)
    assert [e.status for e in report.entries if e.keyword == "uniqueItems"] == [APPROXIMATED]


def test_past_the_explored_limit_nothing_is_upgraded(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {"type": "object", "properties": {f"p{i}": {**STRINGS, "title": f"{i}"} for i in range(20)}}
    assert verdict({"type": "object", "properties": {"p": STRINGS}})[0] == ENFORCED
    monkeypatch.setattr(unique_arrays, "MAX_EXPLORED", 10)
    grammar = Grammar.from_json_schema(schema)
    assert grammar.check(UniqueItemsCheck) is None
    assert {e.status for e in grammar.report.entries if e.keyword == "uniqueItems"} == {APPROXIMATED}


def test_names_matching_too_many_patterns_are_not_followed_exactly() -> None:
    """Each subset of the patterns an undeclared name may match is a child, up to
    ``MAX_PATTERN_SUBSETS`` patterns; past it, the places below stay approximated."""
    def schema(count: int) -> dict[str, Any]:
        return {"type": "object", "patternProperties": {f"^p{i}": STRINGS for i in range(count)}}

    assert verdict(schema(unique_arrays.MAX_PATTERN_SUBSETS))[0] == ENFORCED
    assert verdict(schema(unique_arrays.MAX_PATTERN_SUBSETS + 1))[0] == APPROXIMATED


def test_pydantic_sets() -> None:
    class Article(BaseModel):
        tags: set[str]
        scores: frozenset[int] = frozenset()

    grammar = Grammar.from_pydantic(Article)
    assert [e.status for e in grammar.report.entries if e.keyword == "uniqueItems"] == [ENFORCED, ENFORCED]
    assert grammar.accepts('{"tags": ["a", "b"], "scores": [1, 2]}')
    assert not grammar.accepts('{"tags": ["a", "a"], "scores": []}')
    assert not grammar.accepts('{"tags": [], "scores": [2, 2]}')


@pytest.mark.parametrize("schema, texts", [
    (STRINGS, ['["a", "b"]', '["a", "a"]', '["a", "\\u0061"]', '["\\u00e9", "é"]', '["ab", "a"]', '["a", "b", "a"]',
               '["\\ud83d\\ude00", "😀"]', '["\\\\", "\\\\\\\\"]', '[]', '["", ""]']),
    ({"type": "array", "items": {"type": "number"}, "uniqueItems": True},
     ['[1, 1.0]', '[1, 10e-1]', '[100, 1e2]', '[0, -0]', '[0.5, 0.50]', '[1, 2, 3]', '[1.5, 15e-1]', '[12, 1.2]']),
    ({"type": "array", "items": {}, "uniqueItems": True},
     ['[1, true]', '[0, false]', '[null, null]', '[{"a": 1}, {"a": 1.0}]', '[[1], [1]]', '[[1, 2], [2, 1]]',
      '["1", 1]', '[{"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}]', '[{"a": 1}, {"a": 1, "b": 2}]']),
    (OWNERS, ['[{"name": "a", "email": "b"}, {"name": "a", "email": "b"}]',
              '[{"name": "a", "email": "b"}, {"name": "a", "email": "c"}]']),
    ({"type": "array", "items": STRINGS, "uniqueItems": True},
     ['[["a"], ["a"]]', '[["a", "b"], ["b", "a"]]', '[["a", "a"]]', '[[], []]']),
    (FIELDS, ['[{"handle": "a", "field": "x"}, {"handle": "a", "field": "x"}]', '[{"handle": "a"}, {"handle": "b"}]',
              '[{"field": "x"}]', '[{"handle": "a", "field": "x"}, {"field": "x", "handle": "a"}]', '[{}, {}]']),
])
def test_accepts_compares_values_as_json_schema_does(schema: Any, texts: list[str]) -> None:
    grammar = Grammar.from_json_schema(schema)
    assert grammar.check(UniqueItemsCheck) is not None
    for text in texts:
        valid = jsonschema.Draft202012Validator(schema).is_valid(json.loads(text))
        assert grammar.accepts(text) == valid, text


def test_objects_in_any_key_order_are_one_value() -> None:
    schema = {"type": "array", "uniqueItems": True,
              "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}}
    grammar = Grammar.from_json_schema(schema, property_order="any")
    assert grammar.accepts('[{"a": "x", "b": 1}, {"b": 2, "a": "x"}]')
    assert not grammar.accepts('[{"a": "x", "b": 1}, {"b": 1, "a": "x"}]')


# -- masks


def completed_items(text: str) -> list[str] | None:
    """Keys of the whole items of the arrays ``text`` (a prefix of JSON) has opened,
    read with ``json.JSONDecoder.raw_decode`` (numbers as Decimals); None where
    two items of one array, anywhere, are equal. Shares no code with structgen."""
    decoder = json.JSONDecoder(parse_float=Decimal, parse_int=Decimal)

    def key(value: Any) -> str:
        return json.dumps(value, sort_keys=True, default=lambda d: {"#": format(d.normalize(), "f") if d else "0"})

    def repeats(value: Any) -> bool:
        if isinstance(value, list):
            keys = [key(item) for item in value]
            return len(set(keys)) < len(keys) or any(repeats(item) for item in value)
        return isinstance(value, dict) and any(repeats(item) for item in value.values())

    stack: list[list[str]] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char in " \t\n\r,":
            position += 1
            continue
        if char == "]":
            stack.pop()
            position += 1
            continue
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            if char != "[":
                return []  # an item still being written
            stack.append([])
            position += 1
            continue
        if isinstance(value, Decimal) and (end == len(text) or text[end] in ".eE+-"):
            return []  # a number may still go on (raw_decode reads "1" of "1.")
        if repeats(value) or (stack and key(value) in stack[-1]):
            return None
        if stack:
            stack[-1].append(key(value))
        position = end
    return []


def oracle(engine_allowed: list[int], prefix: bytes, vocab: list[bytes]) -> set[int]:
    """The grammar's tokens, less those after which an array has a repeated item
    (the items of these schemas can always go on to a new value)."""
    return {t for t in engine_allowed if completed_items((prefix + vocab[t]).decode("utf-8", "ignore")) is not None}


@pytest.fixture(scope="module")
def smollm2(infos: dict[str, TokenizerInfo], hf_tokenizers: dict[str, Any]) -> tuple[TokenizerInfo, Any]:
    return infos["smollm2"], hf_tokenizers["smollm2"]


@pytest.mark.parametrize("schema, texts", [
    (STRINGS, ['["alpha", "beta", "alpha"]', '["a", "b", "c", "ab", "b"]', '["\\/", "/"]', '["é", "\\u00e9"]',
               '["x", "y"]']),
    ({"type": "array", "items": {"type": "number"}, "uniqueItems": True},
     ['[1, 12, 123, 12]', '[10, 1, 100, 10.0]', '[0.5, 5e-1]']),
    ({"type": "array", "items": STRINGS, "uniqueItems": True}, ['[["a"], ["a", "b"], ["b", "a"], ["a"]]']),
    (FIELDS, ['[{"handle": "a", "field": "x"}, {"handle": "a", "field": "y"}, {"handle": "a", "field": "x"}]']),
])
def test_masks_equal_the_oracle_at_every_token(schema: Any, texts: list[str], smollm2: tuple[TokenizerInfo, Any]) -> None:
    info, tokenizer = smollm2
    compiled = structgen.compile(Grammar.from_json_schema(schema), info)
    vocab = info.decoded_vocab
    for text in texts:
        matcher = structgen.Matcher(compiled)
        written, refused = masks_follow_oracle(matcher, tokenizer.encode(text, add_special_tokens=False), vocab, oracle, text)
        if refused is not None:
            assert completed_items((written + vocab[refused]).decode("utf-8", "ignore")) is None, (text, written)
        else:
            assert matcher.can_terminate() == (completed_items(text) is not None)


def test_an_item_that_can_only_end_as_a_repeat_is_refused(smollm2: tuple[TokenizerInfo, Any]) -> None:
    info, _ = smollm2
    compiled = structgen.compile(Grammar.from_json_schema(OWNERS, whitespace="compact"), info)
    vocab = info.decoded_vocab
    matcher = structgen.Matcher(compiled)
    assert matcher.accept_string('[{"name":"ann","email":"a@b"},{"name":"ann","email":"a@b')
    allowed = {vocab[t] for t in matcher.allowed_tokens()}
    assert b'"' not in allowed and b'"}' not in allowed  # after the quote only } can come: the first item again
    assert b"c" in allowed and b"b" in allowed
    assert not matcher.fork().accept_string('"')
    assert matcher.accept_string("c")
    matcher.rollback(1)
    assert not matcher.accept_string('"}')
    assert matcher.accept_string('x"}]')
    assert matcher.can_terminate()


def test_a_way_out_is_tried_again_only_where_the_grammar_takes_it(smollm2: tuple[TokenizerInfo, Any]) -> None:
    """``avoidable`` keeps the bytes that got out by the point of the JSON text
    (``SearchMemo.ways_out``) and tries them first at a point like it; the engine
    must take them there: bytes kept for the trap's point do not open it."""
    info, tokenizer = smollm2
    compiled = structgen.compile(Grammar.from_json_schema(OWNERS, whitespace="compact"), info)
    unique = compiled.checks[0].unique
    matcher = structgen.Matcher(compiled)
    text = '[{"name":"ann","email":"a@b"},{"name":"ann","email":"a@b"}]'
    for token in tokenizer.encode(text, add_special_tokens=False)[:-2]:
        assert matcher.allowed_tokens() and matcher.accept_token(token)
    assert matcher._shared[0].ways_out  # found on the way: an item in progress got out
    trap = '[{"name":"ann","email":"a@b"},{"name":"ann","email":"a@b"'  # only } may come: the first item again
    engine = structgen.Matcher(compiled)._engine
    assert engine.accept_bytes(trap.encode())
    scan = unique.feed(unique.start(), trap.encode())
    memo = unique_items.SearchMemo()
    memo.ways_out[unique._scan_key(scan)] = b"}"  # bytes the engine takes, after which the item is a repeat
    assert not unique.avoidable(engine, scan, memo)
    memo = unique_items.SearchMemo()
    memo.ways_out[unique._scan_key(scan)] = b"x"  # bytes that would get out, which the grammar refuses
    assert not unique.avoidable(engine, scan, memo)
    before = structgen.Matcher(compiled)._engine  # one character earlier "c" gets out, which the kept bytes do not
    assert before.accept_bytes(trap[:-1].encode())
    assert unique.avoidable(before, unique.feed(unique.start(), trap[:-1].encode()), memo)


def test_tokens_the_lexer_takes_alike_leave_one_configuration(smollm2: tuple[TokenizerInfo, Any]) -> None:
    """``refused`` judges a token by a way out another token took when ``_lexed``
    says both end the same lexemes and reach one lexer state on the way out's first
    byte: the engine is then in one configuration after that byte, whichever came."""
    info, _ = smollm2
    compiled = structgen.compile(Grammar.from_json_schema(OWNERS), info)
    engine = structgen.Matcher(compiled)._engine
    assert engine.accept_bytes(b'[{"name": "ann", "email": "a@b"}, {"name":')  # a value next
    lexer, state = compiled.lexer, engine.state_key()[0]
    vocab = info.decoded_vocab
    gaps = [t for t, spelled in enumerate(vocab) if spelled and set(spelled) <= set(b" \n\t")]
    tried = 0
    for first in (ord('"'), ord("x"), ord("{")):
        by_key: dict[Any, list[tuple[int, ...]]] = {}
        for token in gaps:
            probe = engine.fork()
            taken = probe.accept_bytes(vocab[token] + bytes([first]))
            by_key.setdefault(unique_items._lexed(lexer, state, vocab[token], first), []).append(
                probe.state_key() if taken else ())
        for key, configurations in by_key.items():
            assert len(set(configurations)) == 1, (chr(first), key)
            tried += len(configurations) > 1 and key != ()
    assert tried >= 2  # whitespace of several lengths, one configuration after a quote


def test_past_the_search_limit_an_item_is_taken_to_have_a_way_out(smollm2: tuple[TokenizerInfo, Any]) -> None:
    """After the closing quote only whitespace and ``}`` may come: the search follows
    the whitespace (flexible here) before it knows; with no points allowed, it stops
    at once and takes the quote."""
    info, _ = smollm2
    compiled = structgen.compile(Grammar.from_json_schema(OWNERS), info)
    prefix = '[{"name":"ann","email":"a@b"},{"name":"ann","email":"a@b'
    matcher = structgen.Matcher(compiled)
    assert matcher.accept_string(prefix) and not matcher.accept_string('"')
    unique = compiled.checks[0].unique
    unique.max_search = 0
    try:
        matcher = structgen.Matcher(compiled)
        assert matcher.accept_string(prefix) and matcher.accept_string('"')  # the limit: not refused, a dead end
    finally:
        unique.max_search = unique_items.MAX_SEARCH


def test_number_items_that_cannot_change_value(smollm2: tuple[TokenizerInfo, Any]) -> None:
    info, _ = smollm2
    schema = {"type": "array", "items": {"type": "number"}, "uniqueItems": True}
    matcher = structgen.Matcher(structgen.compile(Grammar.from_json_schema(schema, whitespace="compact"), info))
    assert matcher.accept_string("[0,0.5,1,")
    assert not matcher.fork().accept_string("0e")  # 0 whatever the exponent: the first item again
    assert matcher.fork().accept_string("1e")  # 1e1, 1e2: new values
    assert matcher.fork().accept_string("0.5")  # 0.55 is new
    assert not matcher.fork().accept_string("0.50,")
    assert not matcher.fork().accept_string("1.0]")
    assert not matcher.fork().accept_string("10e-1]")
    assert matcher.accept_string("0.50e1]")
    integers = {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    matcher = structgen.Matcher(structgen.compile(Grammar.from_json_schema(integers, whitespace="compact"), info))
    assert matcher.accept_string("[12,12")
    assert not matcher.fork().accept_string(".")  # an integer spelled as json.dumps does: only 12.0 follows
    assert matcher.accept_string("3]")


def test_no_item_may_begin_once_the_values_run_out(smollm2: tuple[TokenizerInfo, Any]) -> None:
    info, _ = smollm2
    values = [f"v{i}" for i in range(10)]  # more than the grammar's own sets of used values hold
    for schema, written in [
        ({"type": "array", "items": {"enum": values}, "uniqueItems": True}, json.dumps(values, separators=(",", ":"))),
        ({"type": "array", "items": {"type": "string", "pattern": "^[ab]$"}, "uniqueItems": True}, '["b","a"]'),
        ({"type": "array", "items": {"type": "string", "pattern": "^a$"}, "uniqueItems": True}, '["a"]'),
    ]:
        matcher = structgen.Matcher(structgen.compile(Grammar.from_json_schema(schema, whitespace="compact"), info))
        assert matcher.accept_string(written[:-2])
        allowed = {info.decoded_vocab[t] for t in matcher.allowed_tokens()}
        assert b'"' in allowed and b'",' not in allowed and b'"]' in allowed
        assert matcher.accept_string('"') and not matcher.fork().accept_string(",") and matcher.accept_string("]")


def test_rollback_fork_and_reset_keep_the_items(smollm2: tuple[TokenizerInfo, Any]) -> None:
    info, tokenizer = smollm2
    compiled = structgen.compile(Grammar.from_json_schema(STRINGS, whitespace="compact"), info)
    matcher = structgen.Matcher(compiled)
    tokens = tokenizer.encode('["red","green","re', add_special_tokens=False)
    for token in tokens:
        assert matcher.accept_token(token)
    before = matcher.allowed_tokens()
    branch = matcher.fork()
    assert branch.accept_string('d2","red')
    assert not branch.accept_string('"')
    assert matcher.allowed_tokens() == before
    matcher.rollback(len(tokens) - 1)
    assert matcher.accept_string(b'["red","green","red2"]'[len(info.decoded_vocab[tokens[0]]):])
    matcher.reset()
    assert matcher.accept_string('["red","red2"]') and matcher.can_terminate()


def test_accept_token_agrees_with_the_mask_for_every_token(smollm2: tuple[TokenizerInfo, Any]) -> None:
    info, _ = smollm2
    compiled = structgen.compile(Grammar.from_json_schema(OWNERS, whitespace="compact"), info)
    for prefix in ['[{"name":"ann","email":"a@b"},{"name":"an', '[{"name":"ann","email":"a@b"},{"name":"ann","email":"a@',
                   '[{"name":"ann","email":"a@b"}']:
        matcher = structgen.Matcher(compiled)
        assert matcher.accept_string(prefix)
        allowed = set(matcher.allowed_tokens())
        fresh = structgen.Matcher(compiled)
        assert fresh.accept_string(prefix)  # no mask computed here: accept_token judges on its own
        for token in range(info.vocab_size):
            assert fresh.fork().accept_token(token) == (token in allowed), (prefix, info.decoded_vocab[token])


def test_random_walks_end_in_valid_documents(smollm2: tuple[TokenizerInfo, Any]) -> None:
    """Tokens drawn from the masks, over few letters (so items repeat often): every
    mask has a token until the end, and every end validates."""
    info, _ = smollm2
    schema = {"type": "object", "properties": {"tags": STRINGS, "owners": OWNERS}, "required": ["tags", "owners"],
              "additionalProperties": False}
    compiled = structgen.compile(Grammar.from_json_schema(schema, whitespace="compact"), info)
    vocab = info.decoded_vocab
    letters = set(b'ab"[]{},:')
    rng = random.Random(7)
    ended = 0
    for _ in range(12):
        matcher = structgen.Matcher(compiled)
        text = b""
        while not matcher.can_terminate() and len(text) < 400:
            allowed = matcher.allowed_tokens()
            assert allowed, text
            few = [t for t in allowed if set(vocab[t]) <= letters]
            token = rng.choice(few or allowed)
            assert matcher.accept_token(token)
            text += vocab[token]
        if matcher.can_terminate():
            jsonschema.validate(json.loads(text), schema)
            ended += 1
    assert ended >= 6
