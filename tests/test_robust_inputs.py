"""Issue 42, the library side: hostile inputs are the library's own errors, never
a ``RecursionError`` or a ``FileNotFoundError``.

``structgen.validate_tool_call`` with arguments nested 100,000 deep raised
``RecursionError``; a lark grammar's ``%import`` of a missing module raised
``FileNotFoundError`` naming a path, and a relative one read a file from the
working directory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import structgen
from structgen.lark_rules import GrammarError, ImportNotAllowed, shipped_grammars
from structgen.tool_calls import MAX_JSON_DEPTH, ToolDefinitionError, json_depth, value_depth

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
RECURSIVE = {
    "$defs": {"n": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/$defs/n"}}]}},
    "type": "object",
    "properties": {"a": {"$ref": "#/$defs/n"}},
}


def nested(levels: int) -> Any:
    """``levels`` lists in one another, built without recursion."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def test_json_depth_counts_brackets_outside_strings() -> None:
    assert [json_depth(text) for text in ("1", '"[{"', "[]", '[1, "]]]", {"a": [[]]}]', '"\\"[" ', "[[", "[" * 100_000)] == [
        0, 0, 1, 4, 0, 2, 100_000,
    ]  # fmt: skip
    assert value_depth(nested(5)) == 5 and value_depth({"a": {"b": []}}) == 3 and value_depth(nested(100_000), limit=10) == 11


@pytest.mark.parametrize(
    "call",
    [
        {"name": "f", "arguments": '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"},  # arguments as JSON text
        '{"name": "f", "arguments": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}",  # a raw call
        {"type": "tool_use", "name": "f", "input": {"a": nested(100_000)}},  # already parsed
    ],
    ids=["text", "raw", "value"],
)
def test_a_call_nested_100000_deep_is_a_rejected_call(call: Any) -> None:
    result = structgen.validate_tool_call(TOOLS, call)
    assert not result and f"more than {MAX_JSON_DEPTH}" in result.message


def test_arguments_at_the_depth_limit_are_checked() -> None:
    tools = [{"name": "f", "parameters": RECURSIVE}]
    inside = nested(MAX_JSON_DEPTH - 1)  # with the arguments' own object: at the limit
    assert structgen.validate_tool_call(tools, {"name": "f", "arguments": json.dumps({"a": inside})})
    assert not structgen.validate_tool_call(tools, {"name": "f", "arguments": json.dumps({"a": [inside]})})
    wrong = structgen.validate_tool_call(tools, {"name": "f", "arguments": json.dumps({"a": [[["x"]]]})})
    assert not wrong and wrong.errors[0].keyword == "anyOf"


def test_a_check_deep_in_the_callers_stack_is_an_error_in_the_result() -> None:
    """A recursive schema on arguments within the bound, validated from a caller
    already deep in its stack: an error in the result, not a ``RecursionError``."""
    import sys

    tools = [{"name": "f", "parameters": RECURSIVE}]
    arguments = json.dumps({"a": nested(MAX_JSON_DEPTH - 1)})

    def deep(levels: int) -> Any:
        return deep(levels - 1) if levels else structgen.validate_tool_call(tools, {"name": "f", "arguments": arguments})

    result = deep(sys.getrecursionlimit() - 150)
    assert not result and result.errors[0].keyword == "depth"


def test_a_tool_schema_nested_too_deep_is_a_tool_definition_error() -> None:
    schema: Any = {"type": "integer"}
    for _ in range(100_000):
        schema = {"type": "array", "items": schema}
    with pytest.raises(ToolDefinitionError, match=f"more than {MAX_JSON_DEPTH}"):
        structgen.validate_tool_call([{"name": "f", "parameters": schema}], {"name": "f", "arguments": "{}"})


def test_import_reads_only_the_grammars_that_ship(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grammar given as text imports lark's grammars and structgen's; never a file,
    not even one in the working directory."""
    assert {"common", "json"} <= set(shipped_grammars())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "secret.lark").write_text('SECRET: "the secret"\n')
    (tmp_path / "nosuchmodule.lark").write_text('FOO: "the secret"\n')
    for grammar, named in (
        ("start: FOO\n%import nosuchmodule.FOO\n", "%import nosuchmodule:"),
        ("start: SECRET\n%import .secret.SECRET\n", "%import .secret:"),
        ("start: FOO\n%import common.sub.FOO\n", "%import common.sub:"),
    ):
        with pytest.raises(ImportNotAllowed) as raised:
            structgen.Grammar.from_lark(grammar)
        assert isinstance(raised.value, GrammarError) and raised.value.code == "import_not_allowed"
        message = str(raised.value)
        assert message.startswith(named) and str(tmp_path) not in message and "the secret" not in message
    number = structgen.Grammar.from_lark("start: NUMBER\n%import common.NUMBER\n")
    assert number.accepts("12.5") and not number.accepts("x")
    value = structgen.Grammar.from_lark("start: value\n%import json (value, WS)\n%ignore WS\n")
    assert value.accepts('{"a": [1, true]}') and not value.accepts("{a}")
