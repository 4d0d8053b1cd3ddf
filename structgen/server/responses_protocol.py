"""The Responses API's wire format (``POST /v1/responses``), as the official
``openai`` client sends and parses it.

A request is read into these models, then turned into the chat request the
generation core serves (``responses.py``); the answer is built from the models
at the end of this file. Fields that carry a constraint (``text.format``,
``tools``, ``tool_choice``) are honoured or refused; OpenAI's hosted tools and
inputs a text model cannot read are a 400 naming them, never ignored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from structgen.server.protocol import SEED_RANGE


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- requests


class InputPart(_Open):
    """One part of an input message's list ``content``: ``input_text``, or an
    earlier answer's ``output_text`` / ``refusal`` sent back; other kinds
    (``input_image``, ``input_file``, ``input_audio``) are refused by the reader."""

    type: str
    text: str | None = None
    refusal: str | None = None


class InputMessage(_Open):
    """``{"role", "content"}``, with or without ``"type": "message"`` (an earlier
    output message sent back carries ``id`` and ``status`` too)."""

    type: Literal["message"] = "message"
    role: Literal["user", "system", "developer", "assistant"]
    content: str | list[InputPart]


class FunctionCallItem(_Open):
    type: Literal["function_call"]
    call_id: str = Field(min_length=1)
    name: str
    arguments: str


class FunctionCallOutputItem(_Open):
    type: Literal["function_call_output"]
    call_id: str = Field(min_length=1)
    output: str | list[InputPart]


class CustomToolCallItem(_Open):
    type: Literal["custom_tool_call"]
    call_id: str = Field(min_length=1)
    name: str
    input: str


class CustomToolCallOutputItem(_Open):
    type: Literal["custom_tool_call_output"]
    call_id: str = Field(min_length=1)
    output: str | list[InputPart]


class OtherItem(_Open):
    """An item of a type this server reads no further: ``reasoning`` items are
    dropped (a model's own earlier thoughts); any other type is a 400."""

    type: str


class FunctionTool(_Open):
    """``{"type": "function", "name", "description", "parameters", "strict"}``, or a
    custom tool (``{"type": "custom", "name", "description", "format"}``); other
    tool types (``web_search``, ``file_search``, ...) are hosted by OpenAI: a 400."""

    type: str
    name: str | None = Field(default=None, pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class TextFormatText(_Open):
    type: Literal["text"]


class TextFormatJSONObject(_Open):
    type: Literal["json_object"]


class TextFormatJSONSchema(_Open):
    type: Literal["json_schema"]
    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str | None = None
    schema_: dict[str, Any] | bool = Field(alias="schema")
    strict: bool | None = None


TextFormat = Annotated[Union[TextFormatText, TextFormatJSONObject, TextFormatJSONSchema], Field(discriminator="type")]


class TextConfig(_Open):
    format: TextFormat | None = None
    verbosity: Literal["low", "medium", "high"] | None = None


class NamedFunctionChoice(_Open):
    type: Literal["function"]
    name: str


class NamedCustomChoice(_Open):
    type: Literal["custom"]
    name: str


class AllowedTool(_Open):
    type: str
    name: str | None = None


class AllowedToolsChoice(_Open):
    """The tools the model may call in this turn, out of those it is told about."""

    type: Literal["allowed_tools"]
    mode: Literal["auto", "required"]
    tools: list[AllowedTool] = Field(min_length=1)


class HostedToolChoice(_Open):
    """``{"type": "file_search"}`` and OpenAI's other hosted tools: a 400."""

    type: str


ToolChoice = Union[Literal["none", "auto", "required"], NamedFunctionChoice, NamedCustomChoice, AllowedToolsChoice,
                   HostedToolChoice]


class ResponsesRequest(_Open):
    model: str
    input: str | list[dict[str, Any]] = Field(default_factory=list)
    instructions: str | None = None
    text: TextConfig | None = None
    tools: list[FunctionTool] | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = Field(default=None, ge=SEED_RANGE[0], le=SEED_RANGE[1])  # an extension, as in chat
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    store: bool | None = None  # OpenAI's default: true
    previous_response_id: str | None = None
    metadata: dict[str, str] | None = None
    user: str | None = None
    truncation: Literal["auto", "disabled"] | None = None
    # accepted and answered as given, with no effect on a text model's decoding
    reasoning: dict[str, Any] | None = None
    include: list[str] | None = None
    # refused when set (a 400 naming the field): nothing here can honour them
    background: bool | None = None
    conversation: Any = None
    prompt: Any = None
    max_tool_calls: int | None = None


# -- responses


class OutputText(BaseModel):
    type: Literal["output_text"] = "output_text"
    text: str
    annotations: list[Any] = Field(default_factory=list)
    logprobs: list[Any] = Field(default_factory=list)


class OutputMessage(BaseModel):
    id: str
    type: Literal["message"] = "message"
    role: Literal["assistant"] = "assistant"
    status: Literal["in_progress", "completed", "incomplete"]
    content: list[OutputText]


class OutputFunctionCall(BaseModel):
    id: str
    type: Literal["function_call"] = "function_call"
    call_id: str
    name: str
    arguments: str
    status: Literal["in_progress", "completed", "incomplete"]


class OutputCustomToolCall(BaseModel):
    id: str
    type: Literal["custom_tool_call"] = "custom_tool_call"
    call_id: str
    name: str
    input: str
    status: Literal["in_progress", "completed", "incomplete"]


class ReasoningText(BaseModel):
    type: Literal["reasoning_text"] = "reasoning_text"
    text: str


class OutputReasoning(BaseModel):
    """A reasoning section's text, as a ``reasoning`` item (its ``content``; no summary is written)."""

    id: str
    type: Literal["reasoning"] = "reasoning"
    summary: list[Any] = Field(default_factory=list)
    content: list[ReasoningText]
    status: Literal["in_progress", "completed", "incomplete"]


OutputItem = Union[OutputReasoning, OutputMessage, OutputFunctionCall, OutputCustomToolCall]


class InputTokensDetails(BaseModel):
    cached_tokens: int = 0
    cache_write_tokens: int = 0


class OutputTokensDetails(BaseModel):
    reasoning_tokens: int = 0


class ResponseUsage(BaseModel):
    input_tokens: int
    input_tokens_details: InputTokensDetails = Field(default_factory=InputTokensDetails)
    output_tokens: int
    output_tokens_details: OutputTokensDetails = Field(default_factory=OutputTokensDetails)
    total_tokens: int


class IncompleteDetails(BaseModel):
    reason: Literal["max_output_tokens", "content_filter"]


class Response(BaseModel):
    id: str
    object: Literal["response"] = "response"
    created_at: int
    model: str
    status: Literal["completed", "incomplete", "in_progress", "failed"]
    output: list[OutputItem]
    error: None = None
    incomplete_details: IncompleteDetails | None = None
    instructions: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    parallel_tool_calls: bool = True
    tool_choice: Any = "auto"
    tools: list[dict[str, Any]] = Field(default_factory=list)
    text: dict[str, Any] = Field(default_factory=lambda: {"format": {"type": "text"}})
    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = None
    previous_response_id: str | None = None
    reasoning: dict[str, Any] | None = None
    store: bool = True
    truncation: str = "disabled"
    user: str | None = None
    usage: ResponseUsage | None = None


class DeletedResponse(BaseModel):
    id: str
    object: Literal["response"] = "response"
    deleted: Literal[True] = True
