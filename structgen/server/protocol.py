"""The Chat Completions wire format, as the official ``openai`` client sends and parses it.

Requests accept unknown fields (clients send many we do not act on; they are
logged), but every field that carries a constraint is either honoured or
rejected. Responses are built from these models and dumped with their ``null``s:
``content: null`` is what a turn of only tool calls must carry.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

# -- requests

SEED_RANGE = (-(2**63), 2**64 - 1)
"""The seeds torch's generators take (a negative one is mapped onto the unsigned
range); OpenAI's own are 64-bit signed integers, all inside it. Outside it, a 400
naming ``seed`` (torch raised "Overflow when unpacking long long", a 500)."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ContentPart(_Open):
    """One part of a message's list ``content``: a ``text`` part's ``text`` is read
    (an assistant's ``refusal`` part's ``refusal`` too); an ``image_url``,
    ``input_audio`` or ``file`` part is a 400 ``unsupported_content`` for a text
    model (``chat.check_content``), never a pydantic error about strings."""

    type: str
    text: str | None = None

    def read(self) -> str:
        if self.type == "refusal":
            refusal = (self.model_extra or {}).get("refusal")
            return refusal if isinstance(refusal, str) else ""
        return self.text or ""


class FunctionCallParam(_Open):
    name: str
    arguments: str | None = None  # a JSON string; "" and None mean {}


class CustomCallParam(_Open):
    name: str
    input: str


class ToolCallParam(_Open):
    """A past call: a function's (``function``) or a custom tool's (``custom``)."""

    id: str
    type: Literal["function", "custom"] = "function"
    function: FunctionCallParam | None = None
    custom: CustomCallParam | None = None


class Message(_Open):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCallParam] | None = None
    tool_call_id: str | None = None

    def text(self) -> str:
        """The content as one string (text parts joined, as templates want strings)."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(part.read() for part in self.content)


class FunctionDefinition(_Open):
    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class ToolParam(_Open):
    type: Literal["function"]
    function: FunctionDefinition


class CustomGrammar(_Open):
    definition: str
    syntax: Literal["lark", "regex"]


class CustomFormat(_Open):
    type: Literal["text", "grammar"]
    grammar: CustomGrammar | None = None


class CustomDefinition(_Open):
    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str | None = None
    format: CustomFormat | None = None


class CustomToolParam(_Open):
    """A custom tool: its input is text, free or held to a lark grammar or a regex."""

    type: Literal["custom"]
    custom: CustomDefinition


AnyToolParam = Annotated[Union[ToolParam, CustomToolParam], Field(discriminator="type")]


class NamedFunction(_Open):
    name: str


class NamedToolChoice(_Open):
    type: Literal["function"]
    function: NamedFunction


class NamedCustomChoice(_Open):
    type: Literal["custom"]
    custom: NamedFunction


class AllowedTools(_Open):
    mode: Literal["auto", "required"]
    tools: list[Annotated[Union[NamedToolChoice, NamedCustomChoice], Field(discriminator="type")]] = Field(min_length=1)


class AllowedToolsChoice(_Open):
    """OpenAI's ``{"type": "allowed_tools", "allowed_tools": {"mode", "tools"}}``: every
    tool stays in the prompt (so it caches), only these may be called."""

    type: Literal["allowed_tools"]
    allowed_tools: AllowedTools


ToolChoice = Union[Literal["none", "auto", "required"], NamedToolChoice, NamedCustomChoice, AllowedToolsChoice]


class JSONSchemaFormat(_Open):
    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str | None = None
    schema_: dict[str, Any] | bool | None = Field(default=None, alias="schema")
    strict: bool | None = None


class TextFormat(_Open):
    type: Literal["text"]


class JSONObjectFormat(_Open):
    type: Literal["json_object"]


class JSONSchemaResponseFormat(_Open):
    type: Literal["json_schema"]
    json_schema: JSONSchemaFormat


class StructuralTagFormat(_Open):
    """XGrammar's and vLLM's structural tag (``structgen.structural_tag``): ``format``,
    or the older ``structures`` and ``triggers``, kept as sent."""

    type: Literal["structural_tag"]


ResponseFormat = Annotated[Union[TextFormat, JSONObjectFormat, JSONSchemaResponseFormat, StructuralTagFormat],
                           Field(discriminator="type")]


class StreamOptions(_Open):
    include_usage: bool = False


class GenerationRequest(_Open):
    """What chat and text completions share: sampling and the content's constraint."""

    model: str
    response_format: ResponseFormat | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    n: int = Field(default=1, ge=1, le=16)
    seed: int | None = Field(default=None, ge=SEED_RANGE[0], le=SEED_RANGE[1])
    stop: str | list[str] | None = None
    # extensions (vLLM's former names): constraints without a response_format
    repetition_penalty: float | None = Field(default=None, gt=0)
    guided_json: dict[str, Any] | bool | str | None = None
    guided_regex: str | None = None
    guided_grammar: str | None = None
    guided_choice: list[str] | None = None


class ChatCompletionRequest(GenerationRequest):
    messages: list[Message] = Field(min_length=1)
    tools: list[AnyToolParam] | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool = True
    max_completion_tokens: int | None = Field(default=None, ge=1)
    logprobs: bool | None = None
    # a reasoning model's section before the answer (``structgen.reasoning``)
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high"] | None = None
    thinking_budget: int | None = Field(default=None, ge=0)  # extension: the section's most tokens
    chat_template_kwargs: dict[str, Any] | None = None  # extension (vLLM's): variables for the chat template


Prompt = Union[str, list[str], list[int], list[list[int]]]


class CompletionRequest(GenerationRequest):
    prompt: Prompt
    echo: bool = False
    suffix: str | None = None
    logprobs: int | None = None
    best_of: int | None = Field(default=None, ge=1)

    def prompts(self) -> list[str | list[int]]:
        """Each prompt, as text or token ids."""
        if isinstance(self.prompt, str):
            return [self.prompt]
        if self.prompt and all(isinstance(p, int) for p in self.prompt):
            return [list(self.prompt)]  # type: ignore[arg-type]
        return list(self.prompt)  # type: ignore[arg-type]


# -- responses


class FunctionCall(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class CustomCall(BaseModel):
    name: str
    input: str


class CustomToolCall(BaseModel):
    id: str
    type: Literal["custom"] = "custom"
    custom: CustomCall


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None
    refusal: None = None
    tool_calls: list[ToolCall | CustomToolCall] | None = None
    reasoning_content: str | None = None  # the reasoning section's text (DeepSeek's field, vLLM's former one)
    reasoning: str | None = None  # the same text (vLLM's current field: clients read one or the other)


class Choice(BaseModel):
    index: int
    message: AssistantMessage
    logprobs: None = None
    finish_reason: str


class CompletionTokensDetails(BaseModel):
    reasoning_tokens: int = 0


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    completion_tokens_details: CompletionTokensDetails | None = None  # with a reasoning section: its tokens


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    system_fingerprint: None = None
    choices: list[Choice]
    usage: Usage


class ChunkChoice(BaseModel):
    index: int
    delta: dict[str, Any]  # only the keys this chunk sets: the SDK concatenates repeats
    logprobs: None = None
    finish_reason: str | None = None


class ChatCompletionChunk(BaseModel):
    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    system_fingerprint: None = None
    choices: list[ChunkChoice]
    usage: Usage | None = None


class CompletionChoice(BaseModel):
    index: int
    text: str
    logprobs: None = None
    finish_reason: str | None


class Completion(BaseModel):
    """A text completion; streamed, each chunk is one of these too."""

    id: str
    object: Literal["text_completion"] = "text_completion"
    created: int
    model: str
    system_fingerprint: None = None
    choices: list[CompletionChoice]
    usage: Usage | None = None


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "structgen"
    tool_call_syntax: str  # which envelope tool calls use
    tools_in_template: bool  # False: the server describes the tools in a system block


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]
