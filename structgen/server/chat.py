"""OpenAI chat messages to prompt tokens, through the model's chat template.

Templates want plain strings and, for past calls, ``arguments`` as a dict; a
template that ignores ``tools`` (SmolLM2's renders no trace of them) gets the
tools described in a system block instead, past calls written in the tool-call
syntax and tool results wrapped as that syntax's responses, in a user turn.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from structgen.tool_calls import ToolSet

from structgen.server.errors import bad_request
from structgen.server.custom_tools import INPUT
from structgen.server.protocol import Message, ToolCallParam
from structgen.server.tool_syntax import ToolSyntax

log = logging.getLogger("structgen.server")

_PROBE = "structgen_probe_tool"

MEDIA_PARTS = frozenset({"image_url", "input_audio", "file", "image", "audio", "video", "input_image", "input_file"})
"""Content parts OpenAI's chat messages may carry that a text model cannot read."""


def check_content(messages: list[Message]) -> None:
    """A 400 naming the first content part the model cannot read: list content is
    read as OpenAI reads it, ``text`` parts joined (an assistant's ``refusal``
    parts too); an image, audio or file part is ``unsupported_content`` (param
    ``messages[i].content[j]``), as is a part of any other type."""
    for index, message in enumerate(messages):
        if not isinstance(message.content, list):
            continue
        for number, part in enumerate(message.content):
            where = f"messages[{index}].content[{number}]"
            if part.type == "text":
                if part.text is None:
                    raise bad_request(f"{where}: a text part needs its text", f"{where}.text", "missing_required_parameter")
            elif part.type == "refusal" and message.role == "assistant":
                continue
            elif part.type in MEDIA_PARTS:
                raise bad_request(
                    f"{where}: this model reads text only; {part.type!r} content parts are not supported", where, "unsupported_content"
                )
            else:
                raise bad_request(f"{where}: a {message.role} message's content parts are text, not {part.type!r}", where, "unsupported_content")


def template_renders_tools(tokenizer: Any, syntax: ToolSyntax) -> bool:
    """Whether the chat template writes the tools into the prompt, and in ``syntax``'s tags."""
    probe = [{"type": "function", "function": {"name": _PROBE, "description": "", "parameters": {"type": "object"}}}]
    try:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": "hi"}], tools=probe, add_generation_prompt=True, tokenize=False
        )
    except Exception:  # a template that cannot take tools at all
        return False
    return _PROBE in text and syntax.tag in (tokenizer.chat_template or "")


class ChatPrompt:
    """Renders requests for one tokenizer and tool-call syntax."""

    def __init__(self, tokenizer: Any, syntax: ToolSyntax) -> None:
        self.tokenizer = tokenizer
        self.syntax = syntax
        self.native_tools = template_renders_tools(tokenizer, syntax)
        if not self.native_tools:
            log.info("the chat template ignores tools: they are described in a system block (%s syntax)", syntax.name)

    def token_ids(self, messages: list[Message], tools: ToolSet | None, template_kwargs: dict[str, Any] | None = None) -> list[int]:
        """The prompt's token ids, the assistant's turn opened; ``tools`` None when
        the model must not be told about tools (``tool_choice: "none"``)."""
        return self.encode(self.render(messages, tools, template_kwargs))

    def encode(self, text: str) -> list[int]:
        return [int(i) for i in self.tokenizer(text, add_special_tokens=False)["input_ids"]]

    def render(self, messages: list[Message], tools: ToolSet | None, template_kwargs: dict[str, Any] | None = None) -> str:
        """The prompt's text (``token_ids``), with the request's template variables."""
        rendered = [self._message(i, m) for i, m in enumerate(messages)]
        extra: dict[str, Any] = {}
        if tools is not None and self.native_tools:
            extra["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.schema}}
                for t in tools.tools.values()
            ]
        elif tools is not None:
            block = self.syntax.system_block(list(tools.tools.values()))
            if rendered[0]["role"] == "system":
                rendered[0] = {**rendered[0], "content": rendered[0]["content"] + "\n\n" + block}
            else:
                rendered.insert(0, {"role": "system", "content": block})
        try:
            return str(self.tokenizer.apply_chat_template(
                rendered, add_generation_prompt=True, tokenize=False, **(template_kwargs or {}), **extra
            ))
        except Exception as exc:  # jinja raises many kinds; every one is about this request's messages
            raise bad_request(f"the chat template failed on these messages: {exc}", "messages") from None

    def _message(self, index: int, message: Message) -> dict[str, Any]:
        where = f"messages[{index}]"
        role = "system" if message.role == "developer" else message.role
        if message.role == "tool":
            if not message.tool_call_id:
                raise bad_request(f"{where}: a tool message needs tool_call_id", f"{where}.tool_call_id")
            if self.native_tools:
                return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.text()}
            return {"role": "user", "content": self.syntax.render_result(message.text())}
        if message.role == "assistant" and message.tool_calls:
            calls = [self._call(c, f"{where}.tool_calls[{j}]") for j, c in enumerate(message.tool_calls)]
            if self.native_tools:
                turn: dict[str, Any] = {
                    "role": "assistant",
                    "content": message.text(),
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": name, "arguments": arguments}}
                        for c, (name, arguments) in zip(message.tool_calls, calls)
                    ],
                }
                if _reasoning_of(message) is not None:
                    turn["reasoning_content"] = _reasoning_of(message)
                return turn
            content = message.text()
            return {"role": "assistant", "content": (content + "\n" if content else "") + self.syntax.render_calls(calls)}
        if message.content is None:
            raise bad_request(f"{where}: a {message.role} message needs content", f"{where}.content")
        rendered: dict[str, Any] = {"role": role, "content": message.text()}
        thought = _reasoning_of(message)
        if thought is not None:  # a template with a reasoning section writes it back (Qwen3's)
            rendered["reasoning_content"] = thought
        return rendered

    def _call(self, call: ToolCallParam, where: str) -> tuple[str, Any]:
        """A past call's name and arguments (a custom tool's: its ``input``, as the
        function the model was shown takes it)."""
        if call.type == "custom":
            if call.custom is None:
                raise bad_request(f"{where}: a custom tool call needs its custom field", f"{where}.custom")
            return call.custom.name, {INPUT: call.custom.input}
        if call.function is None:
            raise bad_request(f"{where}: a function call needs its function field", f"{where}.function")
        return call.function.name, self._arguments(call.function.arguments, where)

    @staticmethod
    def _arguments(arguments: str | None, where: str) -> Any:
        """A past call's arguments as a value ("" and None are no arguments)."""
        if not arguments:
            return {}
        try:
            return json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise bad_request(f"{where}.function.arguments is not JSON: {exc}", f"{where}.function.arguments", "invalid_json") from None
        except RecursionError:  # limits.check_nesting bounds it first; this only backs that up
            raise bad_request(f"{where}.function.arguments nests too deeply", f"{where}.function.arguments", "json_too_deep") from None


def _reasoning_of(message: Message) -> str | None:
    """An assistant turn's reasoning as a client sends it back: ``reasoning_content``
    or ``reasoning`` (the ecosystem uses both names)."""
    if message.role != "assistant":
        return None
    extra = message.model_extra or {}
    for key in ("reasoning_content", "reasoning"):
        if isinstance(extra.get(key), str):
            return str(extra[key])
    return None
