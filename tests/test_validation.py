"""``validate_tool_call``: tools and calls in every shape, BFCL's ground truths and their mutations."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import pytest
from pydantic import BaseModel

import structgen
from bfcl_calls import DATA_ERRORS, cases, functions_by_entry
from structgen import ToolDefinitionError, ToolSet, validate_tool_call

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
            },
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


def openai_call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


def test_every_call_shape_is_read() -> None:
    arguments = {"city": "Paris", "unit": "celsius"}
    sdk_object = SimpleNamespace(id="call_9", type="function",
                                 function=SimpleNamespace(name="get_weather", arguments=json.dumps(arguments)))
    shapes: list[Any] = [
        openai_call("get_weather", json.dumps(arguments)),
        sdk_object,  # the openai SDK's objects are read by attribute
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": arguments},
        json.dumps({"name": "get_weather", "arguments": arguments}),  # Hermes
        json.dumps({"name": "get_weather", "parameters": arguments}),  # Llama 3.1
        "<tool_call>" + json.dumps({"name": "get_weather", "arguments": arguments}) + "</tool_call>",
        {"type": "function_call", "call_id": "fc_1", "name": "get_weather", "arguments": json.dumps(arguments)},
    ]
    for shape in shapes:
        result = validate_tool_call([WEATHER], shape)
        assert result, (shape, result.message)
        assert result.name == "get_weather" and result.arguments == arguments
    assert validate_tool_call([WEATHER], sdk_object).call_id == "call_9"


def test_every_tool_shape_is_read() -> None:
    class Forecast(BaseModel):
        """Weather for a city."""

        city: str
        unit: Literal["celsius", "fahrenheit"]
        days: int = 1

    def forecast(city: str, unit: Literal["celsius", "fahrenheit"], days: int = 1) -> str:
        """Weather for a city."""
        return city

    function = WEATHER["function"]
    for tool, name in [
        (WEATHER, "get_weather"),
        (function, "get_weather"),  # a bare function object (BFCL, legacy functions)
        ({"name": "get_weather", "description": function["description"], "input_schema": function["parameters"]},
         "get_weather"),  # Anthropic
        (Forecast, "Forecast"),
        (forecast, "forecast"),
    ]:
        toolset = ToolSet.read([tool])
        assert toolset.tools[name].description == "Weather for a city."
        assert validate_tool_call([tool], openai_call(name, '{"city": "Oslo", "unit": "celsius", "days": 3}'))
        wrong = validate_tool_call([tool], openai_call(name, '{"city": "Oslo", "unit": "kelvin", "days": "3"}'))
        assert {(e.pointer, e.keyword) for e in wrong.errors} >= {("/unit", "enum"), ("/days", "type")}, name


def test_errors_say_where_what_and_how_to_fix() -> None:
    result = validate_tool_call([WEATHER], openai_call("get_weather", '{"unit": "kelvin", "days": "3", "town": "Oslo"}'))
    assert not result
    found = {(e.pointer, e.keyword): e for e in result.errors}
    assert set(found) == {("/city", "required"), ("/town", "additionalProperties"), ("/days", "type"), ("/unit", "enum")}
    assert found[("/days", "type")].expected == "integer" and found[("/days", "type")].got == "3"
    assert found[("/unit", "enum")].expected == ["celsius", "fahrenheit"]
    assert found[("/town", "additionalProperties")].got == "town"
    assert 'the required argument "city" is missing' in result.message.lower()
    assert result.message.endswith("Fix the arguments and call get_weather again.")


def test_unknown_names_get_suggestions() -> None:
    result = validate_tool_call([WEATHER], openai_call("get_wether", "{}"))
    (error,) = result.errors
    assert (error.pointer, error.keyword, error.got) == ("", "name", "get_wether")
    assert 'Did you mean "get_weather"?' in error.message


def test_broken_json_is_located() -> None:
    text = '{"city": "Paris", "unit" "celsius"}'
    result = validate_tool_call([WEATHER], openai_call("get_weather", text))
    (error,) = result.errors
    assert error.keyword == "json" and result.offset == text.index('"celsius"')
    assert "line 1 column 26" in error.message
    duplicate = validate_tool_call([WEATHER], openai_call("get_weather", '{"city": "a", "unit": "celsius", "city": "b"}'))
    assert "written twice" in duplicate.errors[0].message
    assert validate_tool_call([WEATHER], "not json").errors[0].keyword == "call"
    assert validate_tool_call([WEATHER], {"something": 1}).errors[0].keyword == "call"


def test_bad_tools_are_clear_errors() -> None:
    with pytest.raises(ToolDefinitionError, match=r"tool 0: #/properties/x/type: unknown type 'strnig'"):
        ToolSet.read([{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "strnig"}}}}])
    with pytest.raises(ToolDefinitionError, match="not a valid JSON Schema"):
        ToolSet.read([{"name": "f", "parameters": {"type": "object", "required": "x"}}])
    with pytest.raises(ToolDefinitionError, match="non-empty string 'name'"):
        ToolSet.read([{"parameters": {}}])
    with pytest.raises(ToolDefinitionError, match=r"\*rest cannot be described"):
        ToolSet.read([lambda_free])


def lambda_free(*rest: int) -> None:
    """A function whose parameters no schema describes."""


def test_bfcl_type_names_are_normalised() -> None:
    tool = ToolSet.read([{"name": "f", "parameters": {"type": "dict", "properties": {
        "x": {"type": "float"}, "t": {"type": "tuple", "items": {"type": "String"}}, "a": {"type": "any"},
        "type": {"type": "long"},  # a property named "type" is a name, not a keyword
    }}}]).tools["f"]
    assert tool.schema["type"] == "object"
    assert tool.schema["properties"] == {
        "x": {"type": "number"}, "t": {"type": "array", "items": {"type": "string"}}, "a": {}, "type": {"type": "integer"},
    }


def test_bfcl_ground_truths_are_accepted() -> None:
    """All 1,747 ground-truth calls of BFCL's four Python categories, as OpenAI
    tool calls; the three that break their own schema are rejected where they do."""
    accepted = 0
    for case in cases():
        result = validate_tool_call(toolset(case.id), openai_call(case.name, json.dumps(case.arguments)))
        if case.data_error:
            assert not result and case.data_error in {e.pointer for e in result.errors}, case.id
            continue
        assert result, (case.id, result.message)
        accepted += 1
    assert accepted == len(cases()) - len(DATA_ERRORS) == 1744


@cache
def toolset(entry_id: str) -> ToolSet:
    """A BFCL entry's functions, read once."""
    functions = functions_by_entry()[entry_id]
    return ToolSet.read(functions)


def mutations(schema: dict[str, Any], arguments: dict[str, Any]) -> list[tuple[str, dict[str, Any], str, str]]:
    """(kind, mutated arguments, pointer, keyword) for the mutations that apply."""
    properties = schema.get("properties", {})
    found = []
    for key, value in arguments.items():
        if properties.get(key, {}).get("type") == "string":
            found.append(("wrong type", {**arguments, key: 12345}, f"/{key}", "type"))
            break
    for key in schema.get("required", []):
        if key in arguments:
            found.append(("missing required", {k: v for k, v in arguments.items() if k != key}, f"/{key}", "required"))
            break
    found.append(("extra key", {**arguments, "zz_not_a_parameter": 1}, "/zz_not_a_parameter", "additionalProperties"))
    return found


def test_bfcl_mutations_are_rejected() -> None:
    """Every fifth BFCL call, mutated: a string given as a number, a required
    parameter left out, an undeclared parameter (the tool made strict:
    additionalProperties false), an unknown function, broken JSON."""
    checked = 0
    for case in cases()[::5]:
        if case.data_error:
            continue
        tools = ToolSet.read([strict(f) for f in case.functions])
        schema = tools.tools[case.name].schema
        for kind, arguments, pointer, keyword in mutations(schema, case.arguments):
            result = validate_tool_call(tools, openai_call(case.name, json.dumps(arguments)))
            assert not result and (pointer, keyword) in {(e.pointer, e.keyword) for e in result.errors}, (case.id, kind)
            checked += 1
        unknown = validate_tool_call(tools, openai_call(case.name + "_v2", json.dumps(case.arguments)))
        assert unknown.errors[0].keyword == "name" and case.name in unknown.errors[0].message
        checked += 1
        text = json.dumps(case.arguments, ensure_ascii=False)
        if ":" in text:
            broken = text.replace(":", "=", 1)
            result = validate_tool_call(tools, openai_call(case.name, broken))
            assert result.errors[0].keyword == "json", case.id
            assert result.offset == len(broken[: broken.index("=")].encode()), case.id
            checked += 1
    assert checked > 1000


def strict(function: dict[str, Any]) -> dict[str, Any]:
    """A BFCL function as an OpenAI strict tool: no undeclared parameters."""
    parameters = {**function["parameters"], "additionalProperties": False}
    return {"type": "function", "function": {**function, "parameters": parameters, "strict": True}}


def test_result_serialises() -> None:
    result = validate_tool_call([WEATHER], openai_call("get_weather", '{"city": 1, "unit": "celsius"}'))
    data = json.loads(json.dumps(result.as_dict()))
    assert data["valid"] is False and data["errors"][0]["pointer"] == "/city"
    assert structgen.ValidationResult is type(result)


COMMAND = str(Path(sys.executable).with_name("structgen"))


def test_cli_validates_a_file_of_calls(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([WEATHER]))
    calls = tmp_path / "calls.jsonl"
    good = openai_call("get_weather", '{"city": "Paris", "unit": "celsius"}')
    bad = {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris", "unit": "kelvin"}}
    calls.write_text(json.dumps(good) + "\n\n" + json.dumps(bad) + "\n")
    run = subprocess.run([COMMAND, "validate", "--tools", str(tools), str(calls)], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert "line 1: valid" in run.stdout and "line 3: invalid" in run.stdout and '"kelvin"' in run.stdout
    assert "1 of 2 calls valid" in run.stdout
    as_json = subprocess.run([COMMAND, "validate", "--json", "--tools", str(tools), str(calls)], capture_output=True, text=True)
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [(r["line"], r["valid"]) for r in rows] == [(1, True), (3, False)]
    calls.write_text(json.dumps(good) + "\n")
    assert subprocess.run([COMMAND, "validate", "--tools", str(tools), str(calls)], capture_output=True).returncode == 0


def test_cli_reports_bad_input_without_a_traceback(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('[{"name": "f", "parameters": {"type": "strnig"}}]')
    calls = tmp_path / "calls.jsonl"
    calls.write_text("{}\n")
    run = subprocess.run([COMMAND, "validate", "--tools", str(tools), str(calls)], capture_output=True, text=True)
    assert run.returncode == 2 and "unknown type 'strnig'" in run.stderr and "Traceback" not in run.stderr
    missing = subprocess.run([COMMAND, "validate", "--tools", str(tmp_path / "none.json"), str(calls)], capture_output=True, text=True)
    assert missing.returncode == 2 and "none.json" in missing.stderr and "Traceback" not in missing.stderr


def _args_valid(schema: dict[str, Any], arguments: Any) -> bool:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"v": schema}}}}
    return bool(validate_tool_call([tool], {"name": "f", "arguments": {"v": arguments}}))


@pytest.mark.parametrize(("pattern", "valid", "invalid"), [
    ("^\\d+$", ["0123"], ["\u0663", "12\n"]),  # ECMA's \d is ASCII; $ is the end, not before a last newline
    ("^\\w$", ["_"], ["é"]),
    ("^\\s$", ["\u00a0", "\ufeff", "\u2028"], ["x"]),
    ("^.$", ["\U0001f600", "é"], ["\n", "\u2028"]),
    ("^\\u00e9$", ["é"], ["e"]),
    ("[^]", ["\n"], [""]),  # ECMA patterns Python's re cannot read are read, not refused
    ("^(?<year>\\d{2})$", ["12"], ["1"]),
])
def test_patterns_have_ecma_meaning_in_the_verdict(pattern: str, valid: list[str], invalid: list[str]) -> None:
    """The grammar enforces ECMA-262; the verdict must mean the same, not Python's re."""
    schema = {"type": "string", "pattern": pattern}
    assert all(_args_valid(schema, v) for v in valid), pattern
    assert not any(_args_valid(schema, v) for v in invalid), pattern


def test_date_time_and_time_formats_are_asserted() -> None:
    """The grammar enforces them; so must the verdict (jsonschema alone asserts
    them only when rfc3339-validator happens to be installed)."""
    stamp, time = {"type": "string", "format": "date-time"}, {"type": "string", "format": "time"}
    for value in ("1963-06-19T08:30:06.283185Z", "1963-06-19t08:30:06z", "1998-12-31T23:59:60Z", "1998-12-31T15:59:60-08:00"):
        assert _args_valid(stamp, value), value
    for value in ("tomorrow", "1963-06-19 08:30:06Z", "2021-02-30T08:30:06Z", "1998-12-31T22:59:60Z", "1963-06-19T08:30:06"):
        assert not _args_valid(stamp, value), value
    assert _args_valid(time, "08:30:06+01:00") and not _args_valid(time, "8:30:06Z") and not _args_valid(time, "24:00:00Z")
    assert _args_valid({"format": "date-time"}, 5)  # a format says nothing of other types


def test_the_verdict_knows_year_zero_and_february() -> None:
    """`date` as the grammar enforces it: month lengths, leap years, no year 0
    (which Python and Pydantic cannot read)."""
    from structgen.schema_validator import json_schema_validator

    validator = json_schema_validator({"type": "string", "format": "date"})
    assert not validator.is_valid("0000-02-29")
    assert validator.is_valid("0400-02-29")
    assert validator.is_valid("2024-02-29")
    assert not validator.is_valid("1900-02-29")
    assert not validator.is_valid("2025-04-31")


def test_arguments_are_an_object_whatever_the_schema_allows() -> None:
    """A function's arguments are a JSON object (OpenAI's ``arguments``, Anthropic's
    ``input``): a value of another type is refused even where the tool's schema
    (``{}``, or one without ``"type": "object"``) would take it, located at its first byte."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}},
             {"name": "g", "input_schema": {"anyOf": [{"type": "string"}, {"type": "object"}]}}]
    for arguments, kind in [('"x"', "string"), ("  [1]", "array"), ("3", "integer"), ("null", "null"), ("false", "boolean")]:
        result = validate_tool_call(tools, openai_call("f", arguments))
        (error,) = result.errors
        assert (error.pointer, error.keyword, error.expected, error.got) == ("", "type", "object", kind)
        assert result.offset == len(arguments) - len(arguments.lstrip()) and "must be a JSON object" in error.message
        assert not validate_tool_call(tools, {"type": "tool_use", "name": "g", "input": json.loads(arguments)})
    assert validate_tool_call(tools, openai_call("f", '{"any": ["thing"]}'))
    assert validate_tool_call(tools, {"type": "tool_use", "name": "g", "input": {}})
    raw = validate_tool_call(tools, '<tool_call>{"name": "f", "arguments": "\\"x\\""}</tool_call>')
    assert raw.errors[0].keyword == "type"  # stringified arguments holding a string: still no object
