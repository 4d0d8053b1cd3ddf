"""Generated text to the message the client gets: content, tool calls, finish_reason.

The same reading serves a whole response and a stream. A stream sends only what
can no longer change: a tail that may still become a call tag or a stop string is
held back, a call's id, type and name go once (with ``arguments: ""``, as OpenAI
sends them), then its argument fragments; the SDK concatenates every string it
gets twice, so nothing is ever repeated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from structgen.constraint import OutputValidationError
from structgen.validation import validate_tool_call

from structgen.server.errors import APIError
from structgen.server.grammars import OutputPlan
from structgen.server.custom_tools import input_of
from structgen.server.protocol import AssistantMessage, CustomCall, CustomToolCall, FunctionCall, ToolCall
from structgen.server.tool_syntax import ParsedCall, ToolSyntax, hold_back


@dataclass
class Reading:
    """The message's parts: content (None when there is none), calls, and the
    reasoning section's text (None without one)."""

    content: str | None
    calls: list[ParsedCall]
    reasoning: str | None = None


def read_output(plan: OutputPlan, syntax: ToolSyntax, text: str, final: bool, stops: tuple[str, ...]) -> Reading:
    """Content and calls of ``text`` (after its reasoning section, if it has one);
    while streaming, without what may still change."""
    reasoning = None
    if plan.reasoning is not None:
        split = plan.reasoning.split(text, final)
        if split.answer is None:
            return Reading(None, [], split.reasoning)
        text, reasoning = split.answer, split.reasoning
    if not final:
        text = settled(plan, text, stops)
    if plan.tools is None:
        return Reading(text, [], reasoning)
    parsed = syntax.parse(text, final, plan.text_first, plan.tools)
    content, calls = parsed.content, parsed.calls
    while plan.blocks and parsed.end is not None:  # text after a block of calls, maybe another block
        text = text[parsed.end :]
        parsed = syntax.parse(text, final, True, plan.tools)
        content, calls = content + parsed.content, calls + parsed.calls
    if not content.strip() and (calls or not final):
        return Reading(None, calls, reasoning)  # whitespace around calls is no content
    return Reading(content, calls, reasoning)


def settled(plan: OutputPlan, text: str, stops: tuple[str, ...]) -> str:
    """``text`` less a tail of its content that may still become a stop string (a
    stop string, once complete, cuts the text there). Stop strings are looked for
    in the content alone (``OutputPlan.stop_scope``): once the calls have begun,
    the content before them is settled."""
    if not stops:
        return text
    scope = plan.stop_scope(text, False)
    if scope < len(text) and text.startswith(plan.tag, scope):
        return text
    return hold_back(text[:scope], stops) + text[scope:]


def reasoning_tokens(plan: OutputPlan, output: list[int], vocab: list[bytes]) -> int:
    """How many of ``output``'s tokens the reasoning section took (its tags included;
    a token that crosses into the answer counts as the section's)."""
    if plan.reasoning is None:
        return 0
    text = b"".join(vocab[t] for t in output).decode("utf-8", errors="replace")
    begins = plan.reasoning.answer_offset(text)
    if begins is None:
        return len(output)
    section = len(text[:begins].encode("utf-8"))
    written = 0
    for count, token_id in enumerate(output, 1):
        written += len(vocab[token_id])
        if written >= section:
            return count
    return len(output)


def finish_reason(plan: OutputPlan, reason: str | None, calls: list[ParsedCall]) -> str:
    if reason == "length":
        return "length"
    return plan.finish_calls_as if calls else "stop"


def check_output(plan: OutputPlan, reading: Reading) -> None:
    """Re-validate what the grammar only approximates (its report says which
    keywords); a failure is the server's, and retrying would fail the same way."""
    try:
        grammar = plan.content.grammar
        if not reading.calls and reading.content is not None and grammar is not None and grammar.accepts(reading.content):
            plan.content.parse(reading.content)
        for call in reading.calls:
            if call.complete:
                result = validate_tool_call(plan.tools, {"name": call.name, "arguments": call.arguments})
                if not result:
                    raise OutputValidationError(result.message, call.arguments)
    except OutputValidationError as exc:
        raise APIError(f"the generated output failed validation: {exc}", status=500, code="output_validation_failed") from None


def message(reading: Reading, syntax: ToolSyntax, custom: tuple[str, ...] = ()) -> AssistantMessage:
    """The assistant's message; a call of one of the ``custom`` tools is a custom
    tool call (its input read from the arguments)."""
    calls: list[ToolCall | CustomToolCall] = []
    for c in reading.calls:
        if c.name is None:
            continue
        if c.name in custom:
            calls.append(CustomToolCall(id=syntax.new_call_id(), custom=CustomCall(name=c.name, input=input_of(c.arguments, c.complete))))
        else:
            calls.append(ToolCall(id=syntax.new_call_id(), function=FunctionCall(name=c.name, arguments=c.arguments)))
    return AssistantMessage(content=reading.content, tool_calls=calls or None, reasoning_content=reading.reasoning,
                            reasoning=reading.reasoning)


@dataclass
class ChoiceStream:
    """What one choice has sent so far, and the deltas that bring a client up to date."""

    plan: OutputPlan
    syntax: ToolSyntax
    stops: tuple[str, ...]
    started: bool = False
    reasoning_sent: int = 0
    content_sent: int = 0
    calls_sent: list[int] = field(default_factory=list)  # argument characters sent, per call

    def deltas(self, text: str, final: bool) -> list[dict[str, Any]]:
        reading = read_output(self.plan, self.syntax, text, final, self.stops)
        out: list[dict[str, Any]] = []
        if reading.reasoning is not None and len(reading.reasoning) > self.reasoning_sent:
            piece = reading.reasoning[self.reasoning_sent :]
            out.append({"reasoning_content": piece, "reasoning": piece})  # each client reads one of the two
            self.reasoning_sent = len(reading.reasoning)
        if reading.content is not None and len(reading.content) > self.content_sent:
            out.append({"content": reading.content[self.content_sent :]})
            self.content_sent = len(reading.content)
        for index, call in enumerate(reading.calls):
            if call.name is None:
                break
            custom = call.name in self.plan.custom
            kind, field = ("custom", "input") if custom else ("function", "arguments")
            if index == len(self.calls_sent):
                header = {"id": self.syntax.new_call_id(), "type": kind, kind: {"name": call.name, field: ""}}
                out.append({"tool_calls": [{"index": index, **header}]})
                self.calls_sent.append(0)
            written = input_of(call.arguments, call.complete) if custom else call.arguments
            if len(written) > self.calls_sent[index]:
                fragment = written[self.calls_sent[index] :]
                out.append({"tool_calls": [{"index": index, kind: {field: fragment}}]})
                self.calls_sent[index] = len(written)
        if final and not self.started and not out:
            out.append({"content": ""})
        if out and not self.started:
            out[0] = {"role": "assistant", "content": None, **out[0]}
            self.started = True
        return out
