"""The tool-call syntaxes (Hermes, Llama 3 JSON, Mistral): what the grammar lets
through is what the parser reads back, whole and while streaming, and the chat
template picks the syntax."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from structgen.server.grammars import calls_constraint, free_text_or
from structgen.server.syntax_choice import syntax_for
from structgen.server.syntax_llama3 import LLAMA3_JSON
from structgen.server.syntax_mistral import MISTRAL
from structgen.server.tool_syntax import HERMES, ToolSyntax
from structgen.tool_calls import ToolSet

SYNTAXES = [HERMES, LLAMA3_JSON, MISTRAL]
TOOLS = ToolSet.read(
    [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
        {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"]}}},
    ]
)
CALLS = [("get_weather", {"city": 'Pa"ris }]'}), ("get_time", {"zone": "CET"})]


def compact(syntax: ToolSyntax, calls: list[tuple[str, Any]]) -> str:
    """Calls as the grammar writes them (compact JSON)."""
    bodies = [json.dumps({syntax.name_key: n, syntax.arguments_key: a}, separators=(",", ":")) for n, a in calls]
    return syntax.first + syntax.between.join(bodies) + syntax.last


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_the_grammar_and_the_parser_agree(syntax: ToolSyntax) -> None:
    text = compact(syntax, CALLS)
    grammar = calls_constraint(syntax, list(TOOLS.tools.values()), parallel=True).grammar
    assert grammar is not None and grammar.accepts(text)
    single = calls_constraint(syntax, list(TOOLS.tools.values()), parallel=False).grammar
    assert single is not None and not single.accepts(text) and single.accepts(compact(syntax, CALLS[:1]))
    parsed = syntax.parse("Sure. " + text, final=True)
    assert parsed.content == "Sure. "
    assert [(c.name, json.loads(c.arguments), c.complete) for c in parsed.calls] == [(n, a, True) for n, a in CALLS]
    rendered = syntax.parse(syntax.render_calls(CALLS), final=True)  # past calls, as the prompt shows them
    assert [(c.name, json.loads(c.arguments)) for c in rendered.calls] == CALLS


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_a_streamed_parse_only_grows(syntax: ToolSyntax) -> None:
    text = "Let me see. " + compact(syntax, CALLS)
    seen_content = ""
    seen: list[tuple[str | None, str]] = []
    for end in range(len(text) + 1):
        parsed = syntax.parse(text[:end], final=False)
        assert parsed.content.startswith(seen_content) or parsed.calls
        assert "".join(syntax.tag) not in parsed.content
        seen_content = parsed.content
        for index, call in enumerate(parsed.calls):
            if call.name is not None and index < len(seen) and seen[index][0] is not None:
                assert call.name == seen[index][0] and call.arguments.startswith(seen[index][1])
        seen = [(c.name, c.arguments) for c in parsed.calls]
    assert [c.name for c in syntax.parse(text, final=True).calls] == ["get_weather", "get_time"]


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_auto_free_text_stops_at_the_tag(syntax: ToolSyntax) -> None:
    trigger = syntax.first + syntax.call_prefix
    grammar = free_text_or(syntax.tag, trigger).grammar
    assert grammar is not None
    assert grammar.accepts("It is sunny.") and grammar.accepts("Checking." + trigger) and grammar.accepts(trigger)
    assert not grammar.accepts("a " + syntax.tag + " b")


def test_call_ids() -> None:
    assert re.fullmatch(r"call_[A-Za-z0-9]{24}", HERMES.new_call_id())
    assert re.fullmatch(r"[A-Za-z0-9]{9}", MISTRAL.new_call_id())  # Mistral's templates refuse other ids


@pytest.mark.parametrize(
    ("template", "syntax"),
    [
        ("{{ bos_token }}{% for m in messages %}[INST]{{ m.content }}[/INST]{% if m.tool_calls %}[TOOL_CALLS]{% endif %}{% endfor %}", MISTRAL),
        ("<|start_header_id|>ipython<|end_header_id|>{{ messages }}", LLAMA3_JSON),
        ("<|im_start|>{{ messages }}<tool_call>", HERMES),
        (None, HERMES),
    ],
)
def test_the_template_picks_the_syntax(template: str | None, syntax: ToolSyntax) -> None:
    class Tokenizer:
        chat_template = template

    assert syntax_for(Tokenizer()) is syntax


SCALARS = ['"][\\"}\\n</tool_call>"', "12.5e3", "true", "null", '[1, "]", {"a": "}"}]', '{"a": [1, "]"]}']


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
def test_the_parser_reads_any_value_to_its_end(syntax: ToolSyntax) -> None:
    """Arguments are objects (the calls' grammar makes them so), but whatever value
    the text holds is read to its own end, never into the envelope after it: a
    string holding the envelope's ``}`` and closing tag is that string, whole
    and while streaming."""
    for arguments in SCALARS:
        body = "{" + json.dumps(syntax.name_key) + ':"f",' + json.dumps(syntax.arguments_key) + ":" + arguments + "}"
        text = syntax.first + body + syntax.between + compact(syntax, CALLS[1:])[len(syntax.first):]
        parsed = syntax.parse(text, final=True)
        assert [(c.name, c.arguments, c.complete) for c in parsed.calls] == [("f", arguments, True), ("get_time", '{"zone":"CET"}', True)]
        for end in range(len(text)):
            calls = syntax.parse(text[:end], final=False).calls
            if calls and calls[0].name is not None:
                assert arguments.startswith(calls[0].arguments) if not calls[0].complete else calls[0].arguments == arguments


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
@pytest.mark.parametrize(
    "parameters",
    [{}, {"description": "anything"}, {"type": ["object", "string"]},
     {"$ref": "#/$defs/any", "$defs": {"any": {"properties": {"a": {"$ref": "#/$defs/any"}}}}}],
    ids=["empty", "untyped", "object-or-string", "ref"],
)
def test_arguments_are_an_object_whatever_the_parameters_allow(syntax: ToolSyntax, parameters: dict[str, Any]) -> None:
    """A function's arguments are a JSON object: a tool whose ``parameters`` also
    allow a string or a number gets the object alone (the parameters in
    conjunction with ``{"type": "object"}``, their ``$ref``s still resolved)."""
    tools = ToolSet.read([{"type": "function", "function": {"name": "f", "parameters": parameters}}])
    grammar = calls_constraint(syntax, list(tools.tools.values()), parallel=False).grammar
    assert grammar is not None
    for arguments in ['"x"', "1", "[]", "null", "true"]:
        assert not grammar.accepts(compact(syntax, [("f", json.loads(arguments))])), arguments
    for arguments in [{}, {"a": {"a": {}}}]:
        assert grammar.accepts(compact(syntax, [("f", arguments)])), arguments


def plan_of(syntax: ToolSyntax = HERMES, **fields: Any) -> Any:
    from structgen.server.grammars import plan_output
    from structgen.server.protocol import ChatCompletionRequest

    request = ChatCompletionRequest.model_validate({"model": "m", "messages": [{"role": "user", "content": "hi"}], **fields})
    return plan_output(request, syntax)


@pytest.mark.parametrize(
    ("parameters", "choice"),
    [({"type": "string"}, "auto"), ({"type": ["array", "null"]}, "none"), ({"enum": [1, "a"]}, "auto"),
     ({"not": {}}, "required"), ({"$ref": "#/$defs/s", "$defs": {"s": {"type": "string"}}}, "auto"),
     ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"type": "function", "function": {"name": "w"}})],
)
def test_parameters_that_allow_no_object_are_a_400(parameters: dict[str, Any], choice: Any) -> None:
    """Parameters that cannot be an object: a 400 naming the tool's parameters
    (a declared ``type`` without ``object`` whatever the tool_choice; other
    schemas where their calls' grammar is built)."""
    from structgen.server.errors import APIError

    weather = {"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}
    tools = [weather, {"type": "function", "function": {"name": "f", "parameters": parameters}}]
    with pytest.raises(APIError) as raised:
        plan_of(tools=tools, tool_choice=choice)
    assert raised.value.status == 400 and raised.value.param == "tools[1].function.parameters"
    assert "object" in raised.value.message


def test_stop_strings_are_looked_for_in_the_content_alone() -> None:
    """``OutputPlan.stop_scope``: the whole text without tools (or with ``none``);
    nothing of a forced call; in ``auto`` the text before the tag, less (while the
    output goes on) a tail that may still become the tag; with a JSON answer the
    calls start the output or not at all."""
    from structgen.server.output import settled

    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    call = '<tool_call>\n{"name":"f","arguments":{}}\n</tool_call>'
    plain, none = plan_of(), plan_of(tools=tools, tool_choice="none")
    required, named = plan_of(tools=tools, tool_choice="required"), plan_of(tools=tools, tool_choice={"type": "function", "function": {"name": "f"}})
    auto = plan_of(tools=tools)
    answer = plan_of(tools=tools, response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}})
    for text in ("Hi. " + call, call, "Hi <tool", "Hi <tool_call", ""):
        for final in (False, True):
            assert plain.stop_scope(text, final) == none.stop_scope(text, final) == len(text)
            assert required.stop_scope(text, final) == named.stop_scope(text, final) == 0
    assert [auto.stop_scope(t, False) for t in ("Hi. " + call, call, "Hi <tool", "Hi <x")] == [4, 0, 3, 5]
    assert [auto.stop_scope(t, True) for t in ("Hi. " + call, "Hi <tool")] == [4, 8]
    assert [answer.stop_scope(t, False) for t in (call, "<tool", '{"a": "<tool_call>"}')] == [0, 0, 20]
    assert answer.stop_scope("<tool", True) == 5
    # while streaming, a tail of the content that may still become a stop string waits; a call never does
    assert settled(auto, "Hi. Bye" + call[:20], ("Bye.",)) == "Hi. Bye" + call[:20]
    assert settled(auto, "Hi. Bye<tool", ("Bye.",)) == "Hi. <tool"
    assert settled(required, call[:-3], ("}\n",)) == call[:-3]
    assert settled(plain, "Hi. Bye", ("Bye.",)) == "Hi. "


@pytest.mark.parametrize("syntax", SYNTAXES, ids=lambda s: s.name)
@pytest.mark.parametrize("parallel", [True, False])
def test_every_calls_grammar_travels_to_vllm_as_text(syntax: ToolSyntax, parallel: bool) -> None:
    """A calls' grammar is composed; its text names it again (what a vLLM worker
    gets): the same cached grammar, for every syntax, Llama 3's bare JSON included."""
    from structgen.integrations.request_args import constraint_args, constraint_from_args

    constraint = calls_constraint(syntax, list(TOOLS.tools.values()), parallel=parallel)
    again = constraint_from_args(constraint_args(constraint))
    assert again is not None and again.grammar is constraint.grammar


def test_a_strict_tool_whose_grammar_widens_is_a_400(monkeypatch: pytest.MonkeyPatch) -> None:
    """The calls' grammar may step down the lexer-limit ladder (a format read as any
    string): for a strict tool that is no longer exact, so the request is refused
    before generating, as a strict response format is; a widened non-strict tool beside it is not."""
    from schema2grammar import APPROXIMATED
    from structgen import Grammar
    from structgen.server import grammars
    from structgen.server.errors import APIError

    built = Grammar.from_json_schema

    def widened(schema_text: str, **options: Any) -> Grammar:
        grammar = built(schema_text, **options)
        grammar.report.add("/anyOf/1/properties/arguments/properties/zone", "format", APPROXIMATED, "any string")
        return grammar

    monkeypatch.setattr(grammars.Grammar, "from_json_schema", staticmethod(widened))
    grammars._calls.cache_clear()
    strict_first = ToolSet.read([{**tool, "function": {**tool["function"], "strict": True}} if i == 0 else tool
                                 for i, tool in enumerate(_openai(TOOLS))])
    assert calls_constraint(HERMES, list(strict_first.tools.values()), parallel=True).grammar is not None
    strict_second = ToolSet.read([{**tool, "function": {**tool["function"], "strict": True}} if i == 1 else tool
                                  for i, tool in enumerate(_openai(TOOLS))])
    with pytest.raises(APIError, match="strict") as raised:
        calls_constraint(HERMES, list(strict_second.tools.values()), parallel=True)
    assert raised.value.status == 400 and raised.value.code == "schema_not_enforceable"
    grammars._calls.cache_clear()


def _openai(tools: ToolSet) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "parameters": t.schema}} for t in tools.tools.values()]
