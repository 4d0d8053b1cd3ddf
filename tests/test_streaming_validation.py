"""``ToolCallValidator``: streamed arguments stopped at the first byte no valid call can follow."""

from __future__ import annotations

import json
import os
from functools import cache
from typing import Any

from bfcl_calls import cases, declared_order, functions_by_entry
from structgen import ToolCallValidator, validate_tool_call
from structgen.byte_matcher import ByteMatcher
from test_validation import WEATHER, mutations, strict

SAMPLE_STEP = 25
"""Every 25th BFCL call is streamed (70 of 1,747: each needs its tool's grammar)."""


def stream(validator: ToolCallValidator, name: str, text: str, chunk: int = 7) -> tuple[Any, int]:
    """Feed ``text`` in chunks; the result and how many bytes had been fed when it came."""
    assert validator.start(name) is None
    data = text.encode()
    for start in range(0, len(data), chunk):
        result = validator.feed(data[start:start + chunk])
        if result is not None:
            return result, min(start + chunk, len(data))
    return validator.finish(), len(data)


def test_a_bad_call_stops_at_its_first_bad_byte() -> None:
    validator = ToolCallValidator([WEATHER])
    for text, bad_at, keyword in [
        ('{"city": "Paris", "unit": "kelvin"}', '{"city": "Paris", "unit": "k', "enum"),
        ('{"city": 5, "unit": "celsius"}', '{"city": 5', "type"),
        ('{"city": "Oslo", "days": 3}', '{"city": "Oslo", "days": 3}', "required"),
        ('{"city": "Oslo", "town": "x"}', '{"city": "Oslo", "t', "additionalProperties"),
        ('{"city": "Oslo", "unit": "celsius", "days": 15}', '{"city": "Oslo", "unit": "celsius", "days": 15', "maximum"),
        ('{"city": "Oslo" "unit": "celsius"}', '{"city": "Oslo" "', "json"),
        ('{"city": "Oslo", "unit": "celsius"} x', '{"city": "Oslo", "unit": "celsius"} x', "json"),
    ]:
        result, _ = stream(validator, "get_weather", text, chunk=1)
        assert not result and result.offset == len(bad_at.encode()) - 1, (text, result.offset, result.message)
        error = result.errors[0]  # mid-number, every bound is named: which one breaks depends on what follows
        assert error.keyword == keyword or (isinstance(error.expected, dict) and keyword in error.expected), (text, error)


def test_valid_calls_in_any_order_and_spelling_are_never_stopped() -> None:
    """The grammar checks the declared order and json.dumps spellings; calls
    that differ only there go on (in the JSON scan) and are accepted."""
    validator = ToolCallValidator([WEATHER])
    for text in [
        '{"unit": "celsius", "city": "Paris"}',
        '{"days": 2, "unit": "fahrenheit", "city": "Paris"}',
        '{"city": "Par\\u00eds", "unit": "cel\\u0073ius", "days": 2.0}',
        '  {\n      "city":"Paris",\n' + " " * 100 + '"unit":"celsius"}\n\n',
    ]:
        for chunk in (1, 5, 1000):
            result, _ = stream(validator, "get_weather", text, chunk)
            assert result, (text, chunk, result.message)
            assert result == validate_tool_call([WEATHER], {"function": {"name": "get_weather", "arguments": text}})
    out_of_order_and_bad, _ = stream(validator, "get_weather", '{"unit": "celsius", "city": 5}', 1)
    assert out_of_order_and_bad.offset == len('{"unit": "celsius", "city": 5') - 1
    assert out_of_order_and_bad.errors[0].keyword == "type"


def test_unknown_tool_and_split_characters() -> None:
    validator = ToolCallValidator([WEATHER])
    unknown = validator.start("get_wether")
    assert unknown is not None and not unknown and unknown.errors[0].keyword == "name"
    assert validator.feed("{") is unknown and validator.finish() is unknown
    text = '{"city": "Zürich 日本", "unit": "celsius"}'.encode()
    validator.start("get_weather")
    assert all(validator.feed(text[i:i + 1]) is None for i in range(len(text)))  # UTF-8 split across chunks
    assert validator.finish() and validator.offset == len(text)
    named = ToolCallValidator([WEATHER], name="get_weather")
    assert named.feed('{"city": ') is None and named.feed("[") is not None


@cache
def strict_validator(entry_id: str) -> ToolCallValidator:
    """One validator (and so one grammar per tool) for a BFCL entry's functions,
    made strict (no undeclared parameters), shared by the tests below."""
    functions = functions_by_entry()[entry_id]
    return ToolCallValidator([strict(f) for f in functions])


def bfcl_sample() -> list[Any]:
    return [case for case in cases()[::SAMPLE_STEP] if not case.data_error]


def test_bfcl_ground_truths_stream_through_in_any_order() -> None:
    """Each sampled ground truth (its tools made strict), in declared order and in
    reverse order, byte by byte and in 7-byte chunks: never stopped, valid at the end; and the grammar
    alone (generation's) accepts the declared-order text, so the grammar and
    jsonschema agree on it."""
    for case in bfcl_sample():
        validator = strict_validator(case.id)
        schema = validator.toolset.tools[case.name].schema
        ordered = declared_order(schema, case.arguments)
        reverse = dict(reversed(list(ordered.items())))
        for arguments in (ordered, reverse):
            for chunk in (1, 7):
                result, _ = stream(validator, case.name, json.dumps(arguments, ensure_ascii=False), chunk)
                assert result, (case.id, chunk, result.message)
        grammar = validator.grammar(case.name)
        assert grammar is not None and grammar.accepts(json.dumps(ordered, ensure_ascii=False)), case.id


def expected_stop(kind: str, text: str, schema: dict[str, Any], key: str) -> int:
    """Where a streamed mutation becomes unrecoverable, worked out from the text
    alone: the value's first byte for a number where a string must be; the object's
    closing brace for a missing required key (it could still come until then); the
    first byte of an undeclared key that no declared name begins with."""
    data = text.encode()
    if kind == "wrong type":
        return data.index(f'{json.dumps(key)}: 12345'.encode()) + len(json.dumps(key)) + 2
    if kind == "missing required":
        return len(data) - 1
    start = data.index(b'"zz_not_a_parameter"') + 1
    written = set(json.loads(data[: start - 1].rstrip(b", ") + b"}"))
    left = [name for name in schema["properties"] if name not in written]
    if not left:  # every declared key is written: the comma before this one is too many
        return data.index(b', "zz_not_a_parameter"')
    return start + max(len(os.path.commonprefix([name, "zz_not_a_parameter"])) for name in left)


def test_bfcl_streamed_mutations_stop_at_the_first_unrecoverable_byte() -> None:
    """The mutations of test_validation, in declared order and in reverse order,
    streamed byte by byte: stopped exactly where expected_stop says, and the
    whole-call verdict agrees that the call is invalid."""
    checked = 0
    for case in bfcl_sample():
        validator = strict_validator(case.id)
        tools = validator.toolset
        schema = tools.tools[case.name].schema
        for kind, arguments, pointer, keyword in mutations(schema, case.arguments):
            ordered = declared_order(schema, arguments)
            for variant in (ordered, dict(reversed(list(ordered.items())))):
                text = json.dumps(variant, ensure_ascii=False)
                result, _ = stream(validator, case.name, text, chunk=1)
                key = pointer[1:]
                assert not result and result.offset == expected_stop(kind, text, schema, key), (case.id, kind, text, result)
                assert not validate_tool_call(tools, {"function": {"name": case.name, "arguments": text}})
                checked += 1
    assert checked >= 150


def test_byte_matcher_follows_the_grammar_exactly() -> None:
    """The vocabulary-free matcher refuses exactly the bytes after which
    Grammar.accepts can no longer hold for any completion tried here."""
    grammar = ToolCallValidator([WEATHER]).grammar("get_weather")
    assert grammar is not None
    text = b'{"city": "Oslo", "unit": "celsius", "days": 14}'
    matcher = ByteMatcher(grammar)
    assert matcher.accept(text) == len(text) and matcher.can_terminate()
    matcher = ByteMatcher(grammar)
    assert matcher.accept(b'{"city": "Oslo", "unit": "celsius", "days": 15') == len(b'{"city": "Oslo", "unit": "celsius", "days": 1')
    assert not matcher.can_terminate()


def _tool(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "f", "parameters": schema}}


def test_a_branch_chosen_by_key_order_does_not_decide_a_value() -> None:
    """Under anyOf, the grammar may follow a branch only because of the order the
    keys came in; a value that branch refuses may fit another one, in another order."""
    tool = _tool({"type": "object", "anyOf": [
        {"properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}, "a": {"type": "integer"}}, "required": ["b", "a"]},
    ]})
    for text in ('{"a": 5, "b": 1}', '{"a": 5, "b": 1, "c": {"d": 1}}'):
        result, _ = stream(ToolCallValidator([tool]), "f", text, chunk=1)
        assert result, (text, result.message)
    stopped, _ = stream(ToolCallValidator([tool]), "f", '{"a": 5, "b": 1, "a": [1]}', chunk=1)
    assert not stopped and stopped.errors[0].keyword == "json"  # a key twice: the scan still sees it
    stopped, _ = stream(ToolCallValidator([tool]), "f", '{"a": [1]}', chunk=1)
    assert not stopped and stopped.offset == len('{"a": ')


def test_a_number_constant_spelled_otherwise_is_not_stopped_at_its_first_byte() -> None:
    tool = _tool({"type": "object", "properties": {"x": {"const": 0.5}, "n": {"enum": [100, 200]}}})
    for text in ('{"x": 5e-1}', '{"n": 1e2}', '{"x": 0.50, "n": 2.0e2}'):
        result, _ = stream(ToolCallValidator([tool]), "f", text, chunk=1)
        assert result, (text, result.message)
    stopped, _ = stream(ToolCallValidator([tool]), "f", '{"x": "0.5"}', chunk=1)
    assert not stopped and stopped.offset == len('{"x": ')


def test_bytes_that_are_not_utf8_stop_where_they_become_so() -> None:
    """In keys too (where the JSON scan decides), and without an exception."""
    tool = _tool({"type": "object", "properties": {"a": {}}})
    for data, bad_at in [(b'{"a": 1, "\xff": 2}', len(b'{"a": 1, "')), (b'{"\xe2\x82": 1}', len(b'{"\xe2\x82')),
                         (b'{"\xed\xa0\x80": 1}', len(b'{"\xed')), (b'{"b": 1, "\xc0\xaf": 2}', len(b'{"b": 1, "'))]:
        validator = ToolCallValidator([tool], name="f")
        result = validator.feed(data)
        assert result is not None and not result and result.offset == bad_at, (data, result)
        assert result.errors[0].keyword == "json"
    closed = _tool({"type": "object", "properties": {"a": {}}, "additionalProperties": False})
    for tool_ in (tool, closed):  # a lone surrogate escaped in a key: a key like any other
        result, _ = stream(ToolCallValidator([tool_]), "f", '{"\\ud800": 1}', chunk=1)
        assert bool(result) == (tool_ is tool), result
    validator = ToolCallValidator([tool], name="f")
    text = '{"ключ": "日本 \U0001f600"}'.encode()
    assert all(validator.feed(text[i:i + 1]) is None for i in range(len(text))) and validator.finish()


def test_arguments_that_are_no_object_stop_at_their_first_byte() -> None:
    """Arguments are a JSON object whatever the schema allows: a string, array,
    number or literal is stopped at its first byte, with ``finish``'s verdict."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    validator = ToolCallValidator(tools)
    for text in ['"x"', ' \n[1, 2]', "-1", "true", "null"]:
        result, fed = stream(validator, "f", text, chunk=1)
        assert not result and result.offset == len(text) - len(text.lstrip()) and fed == result.offset + 1, text
        assert result.errors[0].keyword == "type" and validator.finish() is result
        assert validate_tool_call(tools, {"function": {"name": "f", "arguments": text}}).errors == result.errors
    result, _ = stream(validator, "f", '{"a": ["x"]}', chunk=1)
    assert result
