"""A response's answer, whole (a ``response`` object) or as the Responses API's
stream of typed events.

The text is read as for a chat completion (``output.py``: content and calls, the
same validation); here it becomes output items: a ``message`` with one
``output_text`` part, then one ``function_call`` item per call. A stream sends
``response.created`` and ``response.in_progress``, then per item
``output_item.added`` (and a message's ``content_part.added``), its deltas
(``output_text.delta``, ``function_call_arguments.delta``), its ``.done`` events
and ``output_item.done``, and last ``response.completed`` (``response.incomplete``
when ``max_output_tokens`` cut it) holding the same items. Every event has the
next ``sequence_number``; a failure after the stream started is an ``error`` event.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, AsyncIterator

from pydantic import BaseModel
from structgen.decoding import Sequence

from structgen.server.engine import Engine, Handle
from structgen.server.errors import APIError
from structgen.server.grammars import OutputPlan
from structgen.server.metrics import ServerMetrics
from structgen.server.output import ChoiceStream, Reading, check_output, read_output, reasoning_tokens
from structgen.server.response_store import ResponseStore
from structgen.server.responses import Translation
from structgen.server.custom_tools import input_of
from structgen.server.responses_protocol import (
    IncompleteDetails,
    OutputCustomToolCall,
    OutputFunctionCall,
    OutputItem,
    OutputMessage,
    OutputReasoning,
    OutputText,
    ReasoningText,
    Response,
    ResponsesRequest,
    ResponseUsage,
)
from structgen.server.serving import Updates
from structgen.server.sse import guarded
from structgen.server.tool_syntax import ToolSyntax


def item_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(16)}"


class ResponsesReply:
    """One request's answer, stored when the request says ``store`` (the default)."""

    def __init__(
        self,
        id: str,
        created: int,
        model: str,
        engine: Engine,
        plan: OutputPlan,
        syntax: ToolSyntax,
        stops: tuple[str, ...],
        metrics: ServerMetrics,
        body: ResponsesRequest,
        translation: Translation,
        store: ResponseStore,
    ) -> None:
        self.id, self.created, self.model = id, created, model
        self.engine, self.plan, self.syntax, self.stops, self.metrics = engine, plan, syntax, stops, metrics
        self.body, self.translation, self.store = body, translation, store

    # -- whole

    def completion(self, sequences: list[Sequence]) -> Response:
        sequence = sequences[0]
        reading = self._read(sequence)
        cut = sequence.finish_reason == "length"
        items: list[OutputItem] = []
        if reading.reasoning is not None:
            ended = reading.content is not None or bool(reading.calls) or not cut
            items.append(_reasoning(item_id("rs"), reading.reasoning, "completed" if ended else "incomplete"))
        if reading.content is not None:
            items.append(_message(item_id("msg"), reading.content, "incomplete" if cut else "completed"))
        for call in reading.calls:
            if call.name is None:
                continue
            status = "completed" if call.complete else "incomplete"
            if call.name in self.plan.custom:
                items.append(OutputCustomToolCall(id=item_id("ctc"), call_id=self.syntax.new_call_id(), name=call.name,
                                                  input=input_of(call.arguments, call.complete), status=status))
            else:
                items.append(OutputFunctionCall(id=item_id("fc"), call_id=self.syntax.new_call_id(), name=call.name,
                                                arguments=call.arguments, status=status))
        return self._finished(sequence, items)

    def _read(self, sequence: Sequence) -> Reading:
        reading = read_output(self.plan, self.syntax, sequence.text(self.engine.info), True, self.stops)
        check_output(self.plan, reading)
        return reading

    def _finished(self, sequence: Sequence, items: list[OutputItem]) -> Response:
        """The response with its items, its usage counted and, asked, kept."""
        response = self.snapshot("incomplete" if sequence.finish_reason == "length" else "completed", items)
        output = len(sequence.output)
        prompt = len(sequence.prompt_ids)
        self.metrics.prompt_tokens.add(prompt)
        self.metrics.completion_tokens.add(output)
        response.usage = ResponseUsage(input_tokens=prompt, output_tokens=output, total_tokens=prompt + output)
        response.usage.output_tokens_details.reasoning_tokens = reasoning_tokens(self.plan, sequence.output, self.engine.info.decoded_vocab)
        if response.status == "incomplete":
            response.incomplete_details = IncompleteDetails(reason="max_output_tokens")
        if self.body.store is not False:
            self.store.put(response, self.translation.conversation + [_assistant_turn(items)])
        return response

    def snapshot(self, status: str, items: list[OutputItem]) -> Response:
        """The response object as it stands, with the request's settings echoed."""
        body = self.body
        text: dict[str, Any] = {"format": {"type": "text"}}
        if body.text is not None and body.text.format is not None:
            text = {"format": body.text.format.model_dump(by_alias=True, exclude_none=True)}
        tools = [
            {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters,
             "strict": t.strict if t.strict is not None else False}
            for t in body.tools or ()
        ]
        choice = body.tool_choice
        return Response(
            id=self.id, created_at=self.created, model=self.model, status=status, output=list(items),
            instructions=body.instructions, metadata=body.metadata or {},
            parallel_tool_calls=body.parallel_tool_calls is not False,
            tool_choice=choice.model_dump(exclude_none=True) if isinstance(choice, BaseModel) else (choice or "auto"),
            tools=tools, text=text, temperature=body.temperature, top_p=body.top_p,
            max_output_tokens=body.max_output_tokens, previous_response_id=body.previous_response_id,
            reasoning=body.reasoning, store=body.store is not False, truncation=body.truncation or "disabled", user=body.user,
        )

    # -- streamed

    def events(self, handle: Handle, updates: Updates, include_usage: bool = True) -> AsyncIterator[str]:
        """The stream of events (usage is always in the last one); a failure after
        it started is an ``error`` event."""
        stream = _EventStream(self)
        return guarded(self.id, self._events(stream, handle, updates), handle.cancel, done=None, on_error=stream.error)

    async def _events(self, stream: _EventStream, handle: Handle, updates: Updates) -> AsyncIterator[str]:
        yield stream.lifecycle("response.created", self.snapshot("in_progress", []))
        yield stream.lifecycle("response.in_progress", self.snapshot("in_progress", []))
        choice = ChoiceStream(self.plan, self.syntax, self.stops)
        async for texts in updates:
            for delta in choice.deltas(texts[0], final=False):
                for event in stream.apply(delta):
                    yield event
        sequences = await handle.result()
        sequence = sequences[0]
        self._read(sequence)  # validated as a whole answer is
        for delta in choice.deltas(sequence.text(self.engine.info), final=True):
            for event in stream.apply(delta):
                yield event
        cut = sequence.finish_reason == "length"
        for event in stream.close_item("incomplete" if cut else "completed"):
            yield event
        response = self._finished(sequence, stream.items)
        yield stream.lifecycle("response.incomplete" if cut else "response.completed", response)


class _EventStream:
    """Chat deltas (``output.ChoiceStream``) as Responses events, numbered."""

    def __init__(self, reply: ResponsesReply) -> None:
        self.reply = reply
        self.sequence_number = 0
        self.items: list[OutputItem] = []
        self.open: OutputItem | None = None

    def event(self, type: str, **fields: Any) -> str:
        payload = {"type": type, **fields, "sequence_number": self.sequence_number}
        self.sequence_number += 1
        return f"event: {type}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n"

    def lifecycle(self, type: str, response: Response) -> str:
        return self.event(type, response=response.model_dump(mode="json"))

    def error(self, error: APIError) -> str:
        body = error.body()["error"]
        return self.event("error", code=body.get("code"), message=body.get("message"), param=body.get("param"))

    def apply(self, delta: dict[str, Any]) -> list[str]:
        out: list[str] = []
        thought = delta.get("reasoning_content")
        if isinstance(thought, str):
            if not isinstance(self.open, OutputReasoning):
                out += self.close_item("completed")
                out += self._add(_reasoning(item_id("rs"), "", "in_progress"))
            item = self.open
            assert isinstance(item, OutputReasoning)
            if thought:
                item.content[0].text += thought
                out.append(self.event("response.reasoning_text.delta", item_id=item.id, output_index=len(self.items) - 1,
                                      content_index=0, delta=thought))
        text = delta.get("content")
        if isinstance(text, str):
            if not isinstance(self.open, OutputMessage):
                out += self.close_item("completed")
                added = _message(item_id("msg"), "", "in_progress")
                out += self._add(added)
                out.append(self.event("response.content_part.added", item_id=added.id, output_index=len(self.items) - 1,
                                      content_index=0, part=OutputText(text="").model_dump()))
            message = self.open
            assert isinstance(message, OutputMessage)
            if text:
                message.content[0].text += text
                out.append(self.event("response.output_text.delta", item_id=message.id, output_index=len(self.items) - 1,
                                      content_index=0, delta=text, logprobs=[]))
        for call in delta.get("tool_calls") or ():
            function = call.get("function") or {}
            custom = call.get("custom") or {}
            if "id" in call:  # a new call: its header, with arguments "" (a custom tool's: input "")
                out += self.close_item("completed")
                if call.get("type") == "custom":
                    out += self._add(OutputCustomToolCall(id=item_id("ctc"), call_id=call["id"], name=custom["name"], input="",
                                                          status="in_progress"))
                else:
                    out += self._add(OutputFunctionCall(id=item_id("fc"), call_id=call["id"], name=function["name"], arguments="",
                                                        status="in_progress"))
            fragment = function.get("arguments")
            if fragment and isinstance(self.open, OutputFunctionCall):
                self.open.arguments += fragment
                out.append(self.event("response.function_call_arguments.delta", item_id=self.open.id,
                                      output_index=len(self.items) - 1, delta=fragment))
            piece = custom.get("input")
            if piece and isinstance(self.open, OutputCustomToolCall):
                self.open.input += piece
                out.append(self.event("response.custom_tool_call_input.delta", item_id=self.open.id,
                                      output_index=len(self.items) - 1, delta=piece))
        return out

    def _add(self, item: OutputItem) -> list[str]:
        self.items.append(item)
        self.open = item
        return [self.event("response.output_item.added", output_index=len(self.items) - 1, item=item.model_dump())]

    def close_item(self, status: str) -> list[str]:
        """The open item's ``.done`` events, ``status`` given to it."""
        item, self.open = self.open, None
        if item is None:
            return []
        index = len(self.items) - 1
        out: list[str] = []
        item.status = status
        if isinstance(item, OutputReasoning):
            out.append(self.event("response.reasoning_text.done", item_id=item.id, output_index=index, content_index=0,
                                  text=item.content[0].text))
        elif isinstance(item, OutputMessage):
            part = item.content[0]
            out.append(self.event("response.output_text.done", item_id=item.id, output_index=index, content_index=0,
                                  text=part.text, logprobs=[]))
            out.append(self.event("response.content_part.done", item_id=item.id, output_index=index, content_index=0,
                                  part=part.model_dump()))
        elif isinstance(item, OutputCustomToolCall):
            out.append(self.event("response.custom_tool_call_input.done", item_id=item.id, output_index=index, input=item.input))
        else:
            out.append(self.event("response.function_call_arguments.done", item_id=item.id, output_index=index,
                                  name=item.name, arguments=item.arguments))
        out.append(self.event("response.output_item.done", output_index=index, item=item.model_dump()))
        return out


def _reasoning(id: str, text: str, status: str) -> OutputReasoning:
    return OutputReasoning(id=id, status=status, content=[ReasoningText(text=text)])


def _message(id: str, text: str, status: str) -> OutputMessage:
    return OutputMessage(id=id, status=status, content=[OutputText(text=text)])


def _assistant_turn(items: list[OutputItem]) -> dict[str, Any]:
    """The output as the chat message a later turn (``previous_response_id``) reads."""
    text = "".join(part.text for item in items if isinstance(item, OutputMessage) for part in item.content)
    calls: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, OutputFunctionCall):
            calls.append({"id": item.call_id, "type": "function", "function": {"name": item.name, "arguments": item.arguments}})
        elif isinstance(item, OutputCustomToolCall):
            calls.append({"id": item.call_id, "type": "custom", "custom": {"name": item.name, "input": item.input}})
    turn: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        turn["tool_calls"] = calls
    return turn

