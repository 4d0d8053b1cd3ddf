"""The tool-call syntaxes (Hermes, Llama 3 JSON, Mistral): what the grammar lets
through is what the parser reads back, whole and while streaming, and the chat
template picks the syntax."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from server.grammars import calls_constraint, free_text_or
from server.syntax_choice import syntax_for
from server.syntax_llama3 import LLAMA3_JSON
from server.syntax_mistral import MISTRAL
from server.tool_syntax import HERMES, ToolSyntax
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
