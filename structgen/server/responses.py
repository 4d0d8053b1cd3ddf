"""A Responses API request as the chat request the generation core serves.

``/v1/responses`` shares everything after parsing with ``/v1/chat/completions``
(the output plan, the prompt, limits, batching, validation): this module only
translates. ``input`` items become chat messages (``function_call`` items an
assistant turn's tool calls, ``function_call_output`` items tool messages),
``instructions`` a system message, ``text.format`` the ``response_format``,
function tools and ``tool_choice`` their chat forms (``allowed_tools``: only
those tools are offered). Errors raised on the chat form name chat fields; the
``Translation`` renames them back (``text.format.schema``, ``tools[2].parameters``,
``input[3].content``), so a 400 points into what the client sent.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from structgen.reasoning import EFFORT_BUDGETS

from structgen.server.errors import APIError, bad_request
from structgen.server.protocol import ChatCompletionRequest
from structgen.server.responses_protocol import (
    AllowedToolsChoice,
    CustomToolCallItem,
    CustomToolCallOutputItem,
    FunctionCallItem,
    FunctionCallOutputItem,
    HostedToolChoice,
    InputMessage,
    InputPart,
    NamedCustomChoice,
    NamedFunctionChoice,
    OtherItem,
    ResponsesRequest,
    TextFormatJSONObject,
    TextFormatJSONSchema,
)

DROPPED_ITEMS = frozenset({"reasoning"})
"""Input item types read as nothing: a model's earlier thoughts, sent back by agents."""

TEXT_PARTS = {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}
"""The content parts a text model reads, and the field that holds their text."""

REFUSED_FIELDS = ("background", "conversation", "prompt", "max_tool_calls")
"""Fields nothing here honours: set, they are a 400 rather than silently ignored."""


@dataclass
class Translation:
    """The chat request, and where each of its parts came from in the Responses
    request (for a 400's ``param``)."""

    chat: ChatCompletionRequest
    conversation: list[dict[str, Any]]  # the chat messages without instructions: what a later turn continues
    message_params: list[str] = field(default_factory=list)  # per chat message
    tool_params: list[str] = field(default_factory=list)  # per chat tool
    call_params: dict[tuple[int, int], str] = field(default_factory=dict)  # per past call: (message, call)

    def rename(self, param: str | None) -> str | None:
        """A chat field's name as the Responses request spells it."""
        if param is None:
            return None
        match = re.match(r"messages\[(\d+)\](.*)", param)
        if match:
            index = int(match.group(1))
            where = self.message_params[index] if index < len(self.message_params) else "input"
            rest = match.group(2)
            call = re.match(r"\.tool_calls\[(\d+)\]", rest)
            if call is not None:
                where = self.call_params.get((index, int(call.group(1))), where)
                return where + ".arguments" if rest.endswith(".arguments") and where.startswith("input[") else where
            return where + (rest if where.startswith("input[") and rest.startswith(".content") else "")
        match = re.match(r"tools\[(\d+)\](?:\.function|\.custom)?(.*)", param)
        if match:
            index = int(match.group(1))
            where = self.tool_params[index] if index < len(self.tool_params) else "tools"
            return where + match.group(2)
        if param.startswith("response_format"):
            rest = param[len("response_format"):].replace(".json_schema", "", 1)
            return "text.format" + rest
        return {
            "messages": "input",
            "max_tokens": "max_output_tokens",
            "max_completion_tokens": "max_output_tokens",
        }.get(param, param)

    def renamed(self, error: APIError) -> APIError:
        """``error`` naming the Responses fields, in its ``param`` and its message."""
        error.param = self.rename(error.param)
        error.message = CHAT_PARAM.sub(lambda m: self.rename(m.group(0)) or m.group(0), error.message)
        error.args = (error.message,)
        return error


CHAT_PARAM = re.compile(
    r"messages\[\d+\](?:\.(?:tool_calls\[\d+\]\.function\.arguments|tool_call_id|content))?"
    r"|tools\[\d+\]\.(?:function|custom)(?:\.\w+)*|response_format(?:\.json_schema)?(?:\.schema)?|max_completion_tokens"
)
"""A chat field's name inside an error's message."""


def translate(body: ResponsesRequest, history: list[dict[str, Any]]) -> Translation:
    """``body`` as a chat request; ``history``: the conversation of the response
    named by ``previous_response_id`` (its messages, then its output)."""
    for name in REFUSED_FIELDS:
        if getattr(body, name) is not None:
            raise bad_request(f"{name} is not supported by this server", name, "unsupported_parameter")
    if body.stream_options is not None and not body.stream:
        raise bad_request("stream_options is only allowed with stream: true", "stream_options", "invalid_value")
    messages: list[dict[str, Any]] = []
    params: list[str] = []
    if body.instructions:
        messages.append({"role": "system", "content": body.instructions})
        params.append("instructions")
    start = len(messages)  # the conversation a later turn continues starts here
    for message in history:
        messages.append(copy.deepcopy(message))
        params.append("previous_response_id")
    calls: dict[tuple[int, int], str] = {}
    _read_input(body.input, messages, params, calls)
    if not messages:
        raise bad_request("input is empty: give a string or at least one message", "input", "invalid_value")
    chat: dict[str, Any] = {"model": body.model, "messages": messages, "stream": body.stream}
    for name in ("temperature", "top_p", "seed"):
        if getattr(body, name) is not None:
            chat[name] = getattr(body, name)
    if body.max_output_tokens is not None:
        chat["max_completion_tokens"] = body.max_output_tokens
    if body.parallel_tool_calls is not None:
        chat["parallel_tool_calls"] = body.parallel_tool_calls
    effort = (body.reasoning or {}).get("effort")
    if effort is not None:
        if effort not in EFFORT_BUDGETS:
            raise bad_request(f"reasoning.effort is one of {', '.join(EFFORT_BUDGETS)}, not {effort!r}", "reasoning.effort", "invalid_value")
        chat["reasoning_effort"] = effort
    format = body.text.format if body.text is not None else None
    if isinstance(format, TextFormatJSONSchema):
        schema: dict[str, Any] = {"name": format.name, "schema": format.schema_}
        if format.description is not None:
            schema["description"] = format.description
        if format.strict is not None:
            schema["strict"] = format.strict
        chat["response_format"] = {"type": "json_schema", "json_schema": schema}
    elif isinstance(format, TextFormatJSONObject):
        chat["response_format"] = {"type": "json_object"}
    tools, tool_params = _tools(body)
    if tools:
        chat["tools"] = tools
    choice = _tool_choice(body, tools, tool_params)
    if choice is not None:
        chat["tool_choice"] = choice
    for name, value in (body.model_extra or {}).items():  # extensions (guided_*, structured_outputs) go through
        chat.setdefault(name, value)
    try:
        request = ChatCompletionRequest.model_validate(chat)
    except ValidationError as exc:  # a message the chat form cannot hold: name the input item
        error = exc.errors()[0]
        where = [str(p) for p in error["loc"]]
        raise bad_request(f"{'.'.join(where)}: {error['msg']}", "input", "invalid_value") from None
    return Translation(request, messages[start:], params, tool_params, calls)


def _read_input(given: str | list[dict[str, Any]], messages: list[dict[str, Any]], params: list[str],
                calls: dict[tuple[int, int], str]) -> None:
    """The input's items appended to ``messages`` as chat messages, each one's
    place in the request to ``params`` (and each past call's to ``calls``)."""
    if isinstance(given, str):
        messages.append({"role": "user", "content": given})
        params.append("input")
        return
    for index, raw in enumerate(given):
        where = f"input[{index}]"
        kind = raw.get("type", "message") if isinstance(raw, dict) else None
        if kind is None:
            raise bad_request(f"{where} must be an object", where, "invalid_type")
        item = _item(raw, kind, where)
        if isinstance(item, InputMessage):
            messages.append({"role": item.role, "content": _text(item.content, item.role, f"{where}.content")})
            params.append(where)
        elif isinstance(item, (FunctionCallItem, CustomToolCallItem)):
            if isinstance(item, CustomToolCallItem):
                call = {"id": item.call_id, "type": "custom", "custom": {"name": item.name, "input": item.input}}
            else:
                call = {"id": item.call_id, "type": "function", "function": {"name": item.name, "arguments": item.arguments}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant" and params[-1].startswith("input["):
                last.setdefault("tool_calls", []).append(call)  # the same turn: its text, then its calls
                if last.get("content") == "":
                    last["content"] = None
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
                params.append(where)
            calls[(len(messages) - 1, len(messages[-1]["tool_calls"]) - 1)] = where
        elif isinstance(item, (FunctionCallOutputItem, CustomToolCallOutputItem)):
            output = _text(item.output, "tool", f"{where}.output")
            message = {"role": "tool", "tool_call_id": item.call_id, "content": output}
            name = _call_name(messages, item.call_id)
            if name is not None:
                message["name"] = name
            messages.append(message)
            params.append(where)


def _item(raw: dict[str, Any], kind: str, where: str) -> Any:
    models: dict[str, Any] = {"message": InputMessage, "function_call": FunctionCallItem, "function_call_output": FunctionCallOutputItem,
                              "custom_tool_call": CustomToolCallItem, "custom_tool_call_output": CustomToolCallOutputItem}
    model = models.get(kind)
    if model is None:
        if kind in DROPPED_ITEMS:
            return OtherItem(type=kind)
        raise bad_request(
            f"{where} is a {kind!r} item; this server reads message, function_call, function_call_output, custom_tool_call "
            "and custom_tool_call_output items (and drops reasoning items)", f"{where}.type", "unsupported_value")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field_path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        raise bad_request(f"{where}{field_path}: {error['msg']}", f"{where}{field_path}", "invalid_value") from None


def _text(content: str | list[InputPart], role: str, where: str) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for index, part in enumerate(content):
        key = TEXT_PARTS.get(part.type)
        if key is None:
            raise bad_request(
                f"{where}[{index}] is an {part.type!r} part: this model reads text only "
                f"({', '.join(TEXT_PARTS)})", f"{where}[{index}]", "unsupported_content")
        text = getattr(part, key)
        if not isinstance(text, str):
            raise bad_request(f"{where}[{index}].{key} must be a string", f"{where}[{index}].{key}", "invalid_type")
        texts.append(text)
    return "".join(texts)


def _call_name(messages: list[dict[str, Any]], call_id: str) -> str | None:
    for message in reversed(messages):
        for call in message.get("tool_calls") or ():
            if call["id"] == call_id:
                return str(call[call.get("type", "function")]["name"])
    return None


def _tools(body: ResponsesRequest) -> tuple[list[dict[str, Any]], list[str]]:
    """The function tools in chat form (all of them, or those ``allowed_tools``
    names), and each one's place in the request."""
    allowed: set[str] | None = None
    if isinstance(body.tool_choice, AllowedToolsChoice):
        allowed = set()
        for index, tool in enumerate(body.tool_choice.tools):
            if tool.type not in ("function", "custom") or not tool.name:
                raise bad_request("allowed_tools lists function and custom tools by name only", f"tool_choice.tools[{index}]",
                                  "unsupported_value")
            allowed.add(tool.name)
    tools: list[dict[str, Any]] = []
    params: list[str] = []
    names: set[str] = set()
    for index, tool in enumerate(body.tools or ()):
        where = f"tools[{index}]"
        if tool.type not in ("function", "custom"):
            raise bad_request(
                f"{where} is a {tool.type!r} tool, which OpenAI hosts; this server runs function and custom tools only",
                f"{where}.type", "unsupported_value")
        if tool.name is None:
            raise bad_request(f"{where}: a {tool.type} tool needs a name", f"{where}.name", "missing_required_parameter")
        names.add(tool.name)
        if allowed is not None and tool.name not in allowed:
            continue
        if tool.type == "custom":
            custom: dict[str, Any] = {"name": tool.name, "description": tool.description or ""}
            form = (tool.model_extra or {}).get("format")
            if form is not None:
                custom["format"] = form
            tools.append({"type": "custom", "custom": custom})
            params.append(where)
            continue
        function: dict[str, Any] = {"name": tool.name}
        for key in ("description", "parameters", "strict"):
            if getattr(tool, key) is not None:
                function[key] = getattr(tool, key)
        tools.append({"type": "function", "function": function})
        params.append(where)
    if allowed is not None:
        unknown = sorted(allowed - names)
        if unknown:
            raise bad_request(f"allowed_tools names {', '.join(map(repr, unknown))}, which is not among the tools",
                              "tool_choice.tools", "invalid_value")
    return tools, params


def _tool_choice(body: ResponsesRequest, tools: list[dict[str, Any]], params: list[str]) -> Any:
    choice = body.tool_choice
    if choice is None or isinstance(choice, str):
        return choice
    if isinstance(choice, NamedFunctionChoice):
        return {"type": "function", "function": {"name": choice.name}}
    if isinstance(choice, NamedCustomChoice):
        return {"type": "custom", "custom": {"name": choice.name}}
    if isinstance(choice, AllowedToolsChoice):
        return choice.mode
    assert isinstance(choice, HostedToolChoice)
    if choice.type in ("function", "allowed_tools"):
        raise bad_request(f"a {choice.type!r} tool_choice is malformed", "tool_choice", "invalid_value")
    raise bad_request(f"tool_choice {choice.type!r} names a tool OpenAI hosts; this server runs function tools only",
                      "tool_choice", "unsupported_value")
