"""The call syntaxes whose grammar is built tool by tool, the name outside the
arguments' JSON: Qwen3-Coder's XML and DeepSeek's (V3, V3.1). What the grammar
lets through is what the parser reads back, whole and while streaming; values
are held to their schemas; the chat template picks the syntax."""

from __future__ import annotations

import json
from typing import Any

import pytest

from structgen.server.errors import APIError
from structgen.server.grammars import calls_constraint, free_text_or
from structgen.server.syntax_choice import syntax_for
from structgen.server.syntax_deepseek import DEEPSEEK_V3, DEEPSEEK_V31, NamedCallSyntax
from structgen.server.syntax_xml import QWEN3_CODER
from structgen.server.tool_syntax import ToolSyntax
from structgen.tool_calls import ToolSet

SYNTAXES = [QWEN3_CODER, DEEPSEEK_V3, DEEPSEEK_V31]
TOOLS = ToolSet.read([
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 9}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {
        "type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}, "tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["zone"]}}},
])
CALLS = [("get_weather", {"city": 'Pa"ris }]\n</tool_call>', "days": 3}), ("get_time", {"zone": "CET", "tags": ["a", "b"]})]


def written(syntax: ToolSyntax, calls: list[tuple[str, Any]]) -> str:
    """Calls as the grammar writes them: DeepSeek's arguments compact, XML values as the template writes them."""
    if isinstance(syntax, NamedCallSyntax):
        bodies = [name + syntax.name_end + json.dumps(a, separators=(",", ":")) + syntax.arguments_end for name, a in calls]
        return syntax.first + syntax.between.join(bodies) + syntax.last
    return syntax.render_calls(calls)


def grammar_of(syntax: ToolSyntax, parallel: bool = True, tools: ToolSet = TOOLS) -> Any:
    grammar = calls_constraint(syntax, list(tools.tools.values()), parallel).grammar
    assert grammar is not None
    return grammar


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_the_grammar_and_the_parser_agree(syntax: ToolSyntax) -> None:
    text = written(syntax, CALLS)
    assert grammar_of(syntax).accepts(text)
    single = grammar_of(syntax, parallel=False)
    assert not single.accepts(text) and single.accepts(written(syntax, CALLS[:1]))
    parsed = syntax.parse("Sure. " + text, True, True, TOOLS)
    assert parsed.content == "Sure. "
    assert [(c.name, json.loads(c.arguments), c.complete) for c in parsed.calls] == [(n, a, True) for n, a in CALLS]
    rendered = syntax.parse(syntax.render_calls(CALLS), True, True, TOOLS)  # past calls, as the prompt shows them
    assert [(c.name, json.loads(c.arguments)) for c in rendered.calls] == CALLS


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_a_streamed_parse_only_grows(syntax: ToolSyntax) -> None:
    text = "Let me see. " + written(syntax, CALLS)
    final = [c.arguments for c in syntax.parse(text, True, True, TOOLS).calls]
    seen = ""
    for end in range(len(text) + 1):
        parsed = syntax.parse(text[:end], False, True, TOOLS)
        assert parsed.content.startswith(seen) and syntax.tag not in parsed.content
        seen = parsed.content
        for index, call in enumerate(parsed.calls):
            if call.name is not None:
                assert final[index].startswith(call.arguments), (text[:end], call.arguments)


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_values_are_held_to_their_schemas(syntax: ToolSyntax) -> None:
    grammar = grammar_of(syntax)
    for calls in ([("get_weather", {"city": "Paris", "days": 10})], [("get_weather", {"days": 3})],
                  [("get_time", {"zone": "PST"})], [("get_time", {"zone": "UTC", "extra": 1})], [("nope", {"zone": "UTC"})]):
        assert not grammar.accepts(written(syntax, calls)), calls
    assert grammar.accepts(written(syntax, [("get_time", {"zone": "UTC"})]))  # an optional parameter left out


def test_an_xml_string_ends_at_its_closing_tag() -> None:
    grammar = grammar_of(QWEN3_CODER)
    assert grammar.accepts(written(QWEN3_CODER, [("get_weather", {"city": "a\n</parameter>b"})]))  # not the closing tag
    assert not grammar.accepts(written(QWEN3_CODER, [("get_weather", {"city": "a\n</parameter>\nb"})]))


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_auto_free_text_stops_at_the_tag(syntax: ToolSyntax) -> None:
    trigger = syntax.first + syntax.call_prefix
    grammar = free_text_or(syntax.tag, trigger).grammar
    assert grammar is not None and grammar.accepts("Checking." + trigger) and not grammar.accepts("a " + syntax.tag + " b")
    calls = grammar_of(syntax)
    assert calls.accepts(written(syntax, CALLS)) and written(syntax, CALLS).startswith(trigger)


@pytest.mark.parametrize(
    ("template", "syntax"),
    [
        ("<tool_call>\n<function={{ name }}>\n<parameter={{ k }}>\n", QWEN3_CODER),
        ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{{ n }}\n```json\n", DEEPSEEK_V3),
        ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{{ n }}<｜tool▁sep｜>", DEEPSEEK_V31),
    ],
)
def test_the_template_picks_the_syntax(template: str, syntax: ToolSyntax) -> None:
    class Tokenizer:
        chat_template = template

    assert syntax_for(Tokenizer()) is syntax


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_every_calls_grammar_travels_to_vllm_as_text(syntax: ToolSyntax) -> None:
    from structgen.integrations.request_args import constraint_args, constraint_from_args

    constraint = calls_constraint(syntax, list(TOOLS.tools.values()), True)
    again = constraint_from_args(constraint_args(constraint))
    assert again is not None and again.grammar is constraint.grammar


def test_a_strict_tool_the_xml_grammar_approximates_is_a_400() -> None:
    pattern = {"type": "function", "function": {"name": "f", "strict": True, "parameters": {
        "type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}, "required": ["code"]}}}
    tools = ToolSet.read([pattern])
    with pytest.raises(APIError, match="strict") as raised:
        calls_constraint(QWEN3_CODER, list(tools.tools.values()), True)
    assert raised.value.status == 400 and raised.value.code == "schema_not_enforceable"
    calm = ToolSet.read([{"type": "function", "function": {**pattern["function"], "strict": False}}])  # type: ignore[dict-item]
    assert calls_constraint(DEEPSEEK_V3, list(calm.tools.values()), True).grammar is not None  # JSON keeps the pattern


def test_custom_tools_raw_in_xml_and_a_pattern_in_json() -> None:
    """A custom tool's input: raw text held to its lark grammar or regex in XML calls;
    a JSON string with the regex as its pattern in JSON calls."""
    from structgen.server.custom_tools import CustomTool

    sql = CustomTool("sql", "", "lark", 'start: "SELECT " NAME (", " NAME)* " FROM " NAME\nNAME: /[a-z]+/\n')
    code = CustomTool("code", "", "regex", "[0-9]+ [+*] [0-9]+")
    tools = ToolSet.read([sql.as_function(), code.as_function()])
    raws = {"sql": sql.raw(), "code": code.raw()}
    xml = calls_constraint(QWEN3_CODER, list(tools.tools.values()), True, raws).grammar
    assert xml is not None
    assert xml.accepts(written(QWEN3_CODER, [("sql", {"input": "SELECT a, b FROM t"}), ("code", {"input": "1 * 22"})]))
    for bad in ({"input": "SELECT * FROM t"}, {"input": "SELECT a FROM t;"}, {"input": "SELECT a FROM t\n</parameter>\nx"}):
        assert not xml.accepts(written(QWEN3_CODER, [("sql", bad)])), bad
    assert not xml.accepts(written(QWEN3_CODER, [("code", {"input": "1 - 2"})]))
    json_calls = calls_constraint(DEEPSEEK_V31, [tools.tools["code"]], True).grammar
    assert json_calls is not None
    assert json_calls.accepts(written(DEEPSEEK_V31, [("code", {"input": "7 + 8"})]))
    assert not json_calls.accepts(written(DEEPSEEK_V31, [("code", {"input": "7 - 8"})]))
