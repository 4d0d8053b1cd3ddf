"""What a request's output must match: its ``tool_choice``, ``parallel_tool_calls``,
``response_format`` and ``guided_*`` fields turned into grammars.

- ``none`` (or no tools): the content's constraint (``response_format`` / ``guided_*``),
  free text without one.
- ``required``: one or more calls; ``parallel_tool_calls: false``: exactly one.
  Named: exactly one call of that tool.
- ``auto``, on a backend that follows structural tags (the built-in engine), for a
  syntax whose calls begin with their tag: free text that may not contain the tag,
  in which the tag opens a block of calls, then text again (``tagged_calls``,
  ``structgen.tagged_matcher``). Otherwise: free text that may not contain the
  call tag, optionally followed by calls. (When the tag is one special token of the tokenizer — Mistral's
  ``[TOOL_CALLS]`` — the model writes that token, which no grammar can allow: the
  decoder lets it through (``structgen.decoding.Escape``) and the calls' grammar
  takes over after it; under ``required`` and named choices it is forced first.) The engine's lexer is context-free maximal munch, so a free-text terminal
  would swallow the calls after it; instead the first phase is one regex terminal
  (text without the tag, then optionally the tag and the start of a call) and, once
  the model has written that, the engine switches the sequence to the calls'
  grammar (``engine.py``). With a JSON ``response_format`` the first phase is
  that JSON answer or the trigger instead (the format is the final answer's).

Every tool's ``parameters`` schema constrains its arguments, ``strict`` or not.
A call is the JSON object ``{"name": <const>, "arguments": <parameters>}`` (an
``anyOf`` over the allowed tools), written compact, inside the syntax's tags.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, TypeVar

from schema2grammar import Options, Report, translate
from schema2grammar.shared import NoValue
from structgen.constraint import Constraint, make_constraint
from structgen.grammar import Grammar
from structgen.lark_rules import LexerTooLarge, ParserTooLarge
from structgen.lark_writer import regex_literal as _literal
from structgen.reasoning import Reasoning
from structgen.structural_tag import StructuralTag, Tag
from structgen.tool_calls import Tool, ToolDefinitionError, ToolSet

from structgen.server.custom_tools import CustomTool, read_custom
from structgen.server.errors import bad_request
from structgen.server.protocol import (
    AllowedToolsChoice,
    ChatCompletionRequest,
    CustomToolParam,
    NamedCustomChoice,
    NamedToolChoice,
    GenerationRequest,
    JSONObjectFormat,
    JSONSchemaResponseFormat,
    StructuralTagFormat,
)
from structgen.server.tool_syntax import ToolSyntax, hold_back

T = TypeVar("T")

SCHEMA_OPTIONS = {"whitespace": "compact", "closed_objects": True}
"""Tool calls' JSON: compact (jump-forward writes the envelope and the punctuation
between forced keys) and closed objects (a small model free to invent keys wanders off)."""

CONTENT_OPTIONS = {"whitespace": "flexible", "closed_objects": True}
"""An answer's JSON (``response_format``, ``guided_json``): the layout the model
prefers (bounded whitespace, newlines and indentation included), since it chooses
the keys and their punctuation itself; compact where the request asks for it
(``structured_outputs.disable_any_whitespace``)."""


@dataclass(frozen=True)
class OutputPlan:
    """The constraint from the first token; in ``auto``, the calls' constraint that
    takes over once the output ends with ``trigger``. ``content`` is what an answer
    without calls must match (re-checked after generation)."""

    constraint: Constraint
    content: Constraint
    tools: ToolSet | None = None  # set when the output may hold calls
    calls: Constraint | None = None
    trigger: str | None = None
    text_first: bool = True  # False: calls can only start the output (a JSON answer may hold the tag)
    finish_calls_as: str = "tool_calls"  # OpenAI answers a named tool_choice with "stop"
    # the tag as a special token (ToolSyntax.tag_token): written before the calls'
    # grammar — forced first (start_tokens), or in auto let through by the server
    # (escape_token: then ``calls`` takes over) — and shown in the text as the tag
    start_tokens: tuple[int, ...] = ()
    escape_token: int | None = None
    shown: tuple[tuple[int, str], ...] = ()
    param: str | None = None  # the request field whose constraint comes first (a 400's ``param``)
    tag: str = ""  # the text that starts the calls (``ToolSyntax.tag``), where the output may hold calls
    reasoning: Reasoning | None = None  # a reasoning section before all of the above (``reasoning_plan``)
    custom: tuple[str, ...] = ()  # the names of the custom tools among ``tools`` (their calls are ``type: custom``)
    blocks: bool = False  # calls come in blocks between texts (``tagged_calls``), not only at the end

    def stop_scope(self, text: str, final: bool) -> int:
        """How much of ``text`` the request's stop strings are looked for in
        (``structgen.decoding.StopScope``): the content. Calls are the constraint's,
        so a stop string never ends one: under ``required`` and a named tool (the
        calls alone) nothing; in ``auto`` the text before the calls' tag, less,
        while the output goes on, a tail that may still become the tag."""
        if self.tools is None:
            return len(text)
        if self.calls is None:
            return 0
        if self.text_first:
            start = text.find(self.tag)
            if start >= 0:
                return start
            return len(text) if final else len(hold_back(text, (self.tag,)))
        # calls only at the very start (a JSON answer may hold the tag)
        return 0 if text.startswith(self.tag) or (not final and self.tag.startswith(text)) else len(text)


@dataclass(frozen=True)
class ContentFormat:
    """The one field that constrains the content: its name and ``make_constraint`` keywords."""

    param: str
    keywords: dict[str, Any]
    options: tuple[tuple[str, Any], ...] = tuple(CONTENT_OPTIONS.items())  # schema translation options
    strict: bool = False  # OpenAI's strict: every output must be valid, or a 400 now


def plan_output(request: ChatCompletionRequest, syntax: ToolSyntax, structural: bool = False) -> OutputPlan:
    """The plan for ``request``; a 400 for every inconsistent or invalid part.
    A format with tools applies to the answer: in ``auto`` the output is that
    answer or calls; ``required`` and named choices leave no room for an answer.
    ``structural``: the backend follows structural tags (``TaggedMatcher``), so in
    ``auto`` calls may come between texts (``tagged_calls``)."""
    tools, customs = read_tools(request)
    choice = request.tool_choice or ("auto" if tools is not None else "none")
    raws = {name: custom.raw() for name, custom in customs.items()}
    if not syntax.raw_text:
        for index, param in enumerate(request.tools or ()):
            raw = raws.get(param.custom.name) if isinstance(param, CustomToolParam) else None
            if raw is not None and raw[0] == "lark":
                raise bad_request(f"tools[{index}].custom.format: a lark grammar constrains raw text, and this model's "
                                  f"tool-call syntax ({syntax.name}) writes a custom tool's input inside a JSON string; "
                                  "give a regex format, or serve a model whose calls are XML (qwen3_coder)",
                                  f"tools[{index}].custom.format", "unsupported_value")
    for index, tool in enumerate(tools.tools.values() if tools is not None else ()):
        if tool.strict or choice != "none":  # translated for the calls' grammar (strict: checked sound with none too)
            report = _tool_report(json.dumps(object_arguments(tool.schema), ensure_ascii=False), f"tools[{index}].function.parameters")
            if tool.strict:
                check_sound(report, f"tools[{index}].function.parameters")
    if tools is None and choice != "none":
        raise bad_request("tool_choice is set but no tools are given", "tool_choice")
    callable_tools = list(tools.tools.values()) if tools is not None else []
    if isinstance(choice, AllowedToolsChoice):
        callable_tools = _allowed(choice, tools)
        choice = choice.allowed_tools.mode
    form = content_format(request)
    content = content_constraint(form)
    if tools is None or choice == "none":
        return OutputPlan(content, content, param=form.param if form is not None else None)
    tagged, tag = syntax.tag_token, syntax.tag
    shown = ((tagged, syntax.tag),) if tagged is not None else ()
    custom_names = tuple(customs)
    if choice == "auto":
        calls = calls_constraint(syntax, callable_tools, request.parallel_tool_calls, raws)
        if tagged is not None:  # text without the tag, or any format's answer; the tag token starts the calls
            first = free_text_without(syntax.tag) if form is None else content
            return OutputPlan(first, content, tools, calls, text_first=form is None, escape_token=tagged, shown=shown,
                              param="tools" if form is None else form.param, tag=tag, custom=custom_names)
        trigger = syntax.first + syntax.call_prefix
        tagged_auto = tagged_calls(syntax, callable_tools, request.parallel_tool_calls, raws) if structural and form is None else None
        if tagged_auto is not None:
            return OutputPlan(tagged_auto, content, tools, calls, param="tools", tag=tag, custom=custom_names, blocks=True)
        if form is None:
            return OutputPlan(free_text_or(syntax.tag, trigger), content, tools, calls, trigger, param="tools", tag=tag,
                              custom=custom_names)
        if "schema" in form.keywords:
            return OutputPlan(answer_or_call(form, trigger, content), content, tools, calls, trigger, text_first=False,
                              param=form.param, tag=tag, custom=custom_names)
        raise bad_request(f"{form.param} together with tool_choice 'auto' is not supported yet (a JSON Schema is)", form.param)
    start = (tagged,) if tagged is not None else ()
    if choice == "required":
        calls = calls_constraint(syntax, callable_tools, request.parallel_tool_calls, raws)
        return OutputPlan(calls, content, tools, start_tokens=start, shown=shown, param="tools", tag=tag, custom=custom_names)
    name = _choice_name(choice)
    if name not in tools.tools or isinstance(choice, NamedCustomChoice) != (name in customs):
        kind = "custom tool" if isinstance(choice, NamedCustomChoice) else "function"
        raise bad_request(
            f"tool_choice names the {kind} {name!r}, which is not among the tools ({', '.join(tools.names())})", "tool_choice"
        )
    calls = calls_constraint(syntax, [tools.tools[name]], False, raws)
    return OutputPlan(calls, content, tools, finish_calls_as="stop", start_tokens=start, shown=shown, param="tools", tag=tag,
                      custom=custom_names)


def _choice_name(choice: NamedToolChoice | NamedCustomChoice) -> str:
    return choice.custom.name if isinstance(choice, NamedCustomChoice) else choice.function.name


def _allowed(choice: AllowedToolsChoice, tools: ToolSet | None) -> list[Tool]:
    """The tools ``allowed_tools`` lets the model call (all stay in the prompt)."""
    assert tools is not None
    allowed: list[Tool] = []
    for index, ref in enumerate(choice.allowed_tools.tools):
        tool = tools.tools.get(_choice_name(ref))
        if tool is None:
            raise bad_request(f"allowed_tools names {_choice_name(ref)!r}, which is not among the tools "
                              f"({', '.join(tools.names())})", f"tool_choice.allowed_tools.tools[{index}]")
        if tool not in allowed:
            allowed.append(tool)
    return allowed


def read_tools(request: ChatCompletionRequest) -> tuple[ToolSet | None, dict[str, CustomTool]]:
    """The request's tools (a custom tool as the function the model sees:
    ``custom_tools.CustomTool.as_function``), and its custom tools by name."""
    if request.tools is None:
        return None, {}
    if not request.tools:
        raise bad_request("tools must not be an empty array", "tools")
    functions: list[dict[str, Any]] = []
    customs: dict[str, CustomTool] = {}
    for index, param in enumerate(request.tools):
        if isinstance(param, CustomToolParam):
            custom = read_custom(param, f"tools[{index}]")
            customs[custom.name] = custom
            functions.append(custom.as_function())
        else:
            functions.append(param.model_dump(exclude_none=True))
    try:
        tools = ToolSet.read(functions)
    except ToolDefinitionError as exc:
        raise bad_request(str(exc), "tools") from None
    for index, tool in enumerate(tools.tools.values()):
        check_object_parameters(tool.schema, f"tools[{index}].function.parameters")
    return tools, customs


def check_object_parameters(schema: dict[str, Any], param: str) -> None:
    """A 400 for a tool whose ``parameters`` declare a ``type`` without ``object``:
    a function's arguments are a JSON object (OpenAI's API, and every tool-call
    syntax's envelope). A schema that allows no object otherwise (``{"enum": [1]}``)
    is found when its calls' grammar is translated (``_tool_report``)."""
    declared = schema.get("type")
    if declared is None:
        return
    types = declared if isinstance(declared, list) else [declared]
    if "object" not in types:
        raise bad_request(f"{param}: a function's arguments are a JSON object; these parameters allow "
                          f"{' or '.join(map(str, types))} only (give \"type\": \"object\")", param)


def object_arguments(schema: dict[str, Any], base: str = "#") -> dict[str, Any]:
    """A tool's ``parameters`` as its calls' arguments: in conjunction with
    ``{"type": "object"}`` (a schema that allows any value, ``{}``, must not let the
    model write a string there), its local ``$ref``s pointing where the result puts
    it under ``base`` (the pointer of the arguments in the schema translated).
    ``check_object_parameters`` has refused a ``type`` without ``object``."""
    declared = schema.get("type")
    if declared is not None or "$ref" not in schema:
        rebased: dict[str, Any] = _rebase(schema if declared == "object" else {**schema, "type": "object"}, base)
        return rebased
    # a $ref beside which an older draft ignores other keywords: conjoined by allOf
    return {"allOf": [{"type": "object"}, _rebase(schema, base + "/allOf/1")]}


def content_format(request: GenerationRequest) -> ContentFormat | None:
    """The ``response_format`` or ``guided_*`` field that constrains the content, if any."""
    given: list[ContentFormat] = []
    response_format = request.response_format
    if isinstance(response_format, JSONObjectFormat):
        lenient = (response_format.model_extra or {}).get("schema")  # instructor's / SGLang's json_object + schema
        schema = {"type": "object"} if lenient is None else _json_value(lenient, "response_format")
        given.append(ContentFormat("response_format", {"schema": schema}))
    elif isinstance(response_format, JSONSchemaResponseFormat):
        schema = response_format.json_schema.schema_
        given.append(ContentFormat("response_format", {"schema": {"type": "object"} if schema is None else schema},
                                   strict=bool(response_format.json_schema.strict)))
    elif isinstance(response_format, StructuralTagFormat):
        given.append(ContentFormat("response_format", {"structural_tag": response_format.model_dump()}))
    if request.guided_json is not None:
        given.append(ContentFormat("guided_json", {"schema": _json_value(request.guided_json, "guided_json")}))
    for param, keyword in (("guided_regex", "regex"), ("guided_grammar", "grammar"), ("guided_choice", "choices")):
        value = getattr(request, param)
        if value is not None:
            given.append(ContentFormat(param, {keyword: value}))
    given += extension_formats(request)
    if _compact_asked(request):
        compact = tuple({**CONTENT_OPTIONS, "whitespace": "compact"}.items())
        given = [ContentFormat(form.param, form.keywords, compact, form.strict) for form in given]
    if len(given) > 1:
        raise bad_request(f"give at most one output constraint (got {', '.join(f.param for f in given)})", given[1].param)
    if given and "schema" in given[0].keywords:
        check_schema(given[0].keywords["schema"], given[0].param)
    return given[0] if given else None


STRUCTURED_OUTPUTS = {"json": "schema", "regex": "regex", "choice": "choices", "grammar": "grammar", "structural_tag": "structural_tag"}
"""vLLM's ``structured_outputs`` keys, honoured as the ``guided_*`` aliases are."""
STRUCTURED_OUTPUT_OPTIONS = frozenset({"disable_any_whitespace", "disable_additional_properties", "whitespace_pattern", "disable_fallback"})
"""Its options: ``disable_any_whitespace`` makes the answer compact (``_compact_asked``);
objects are closed anyway, and there is no fallback to leave."""
SGLANG_KEYS = {"regex": "regex", "json_schema": "schema"}
"""SGLang's top-level constraint fields, honoured likewise."""
REJECTED = {
    "ebnf": "EBNF grammars are not supported; give a lark grammar in guided_grammar",
    "structural_tag": "give a structural tag as response_format (type structural_tag) or structured_outputs.structural_tag",
    "functions": "the deprecated functions field is not supported; use tools",
    "function_call": "the deprecated function_call field is not supported; use tool_choice",
}
"""Constraint-bearing fields that are not built: a 400, never a 200 with the constraint ignored."""


def extension_formats(request: GenerationRequest) -> list[ContentFormat]:
    """Constraints given in other servers' extension fields (``request.model_extra``):
    honoured, or a 400 — never accepted and silently ignored."""
    extra = request.model_extra or {}
    for key, reason in REJECTED.items():
        if extra.get(key) is not None:
            raise bad_request(reason, key)
    if extra.get("logit_bias"):
        raise bad_request("logit_bias is not supported", "logit_bias")
    found: list[ContentFormat] = []
    outputs = extra.get("structured_outputs")
    if outputs is not None:
        if not isinstance(outputs, dict):
            raise bad_request("structured_outputs must be an object", "structured_outputs")
        for key, value in outputs.items():
            param = f"structured_outputs.{key}"
            if value is None or key in STRUCTURED_OUTPUT_OPTIONS:
                continue
            if key == "json_object":
                if value:
                    found.append(ContentFormat(param, {"schema": {"type": "object"}}))
                continue
            if key not in STRUCTURED_OUTPUTS:
                raise bad_request(f"{param} is not supported (only {', '.join(STRUCTURED_OUTPUTS)} and json_object)", param)
            found.append(_extension_format(param, STRUCTURED_OUTPUTS[key], value))
    for key, keyword in SGLANG_KEYS.items():
        if extra.get(key) is not None:
            found.append(_extension_format(key, keyword, extra[key]))
    return found


def _compact_asked(request: GenerationRequest) -> bool:
    """Whether the request asks for JSON without whitespace (vLLM's
    ``structured_outputs.disable_any_whitespace``)."""
    outputs = (request.model_extra or {}).get("structured_outputs")
    return isinstance(outputs, dict) and outputs.get("disable_any_whitespace") is True


def _extension_format(param: str, keyword: str, value: Any) -> ContentFormat:
    if keyword == "schema":
        return ContentFormat(param, {"schema": _json_value(value, param)})
    if keyword == "structural_tag":  # vLLM's: JSON text
        return ContentFormat(param, {"structural_tag": _json_value(value, param)})
    if keyword == "choices":
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise bad_request(f"{param} must be a list of strings", param)
    elif not isinstance(value, str):
        raise bad_request(f"{param} must be a string", param)
    return ContentFormat(param, {keyword: value})


def content_constraint(form: ContentFormat | None) -> Constraint:
    """The content's constraint (free text without a format)."""
    if form is None:
        return make_constraint()
    try:
        constraint = make_constraint(**form.keywords, schema_options=dict(form.options))
    except (LexerTooLarge, ParserTooLarge) as exc:
        raise bad_request(f"{form.param}: {exc}", form.param, "grammar_too_large") from None
    except (ValueError, RecursionError) as exc:  # SchemaError, GrammarError, RegexError are ValueErrors
        raise bad_request(f"{form.param}: {exc}", form.param) from None
    if form.strict and constraint.grammar is not None:
        check_sound(constraint.grammar.report, form.param)
    return constraint


def check_sound(report: Report | None, param: str) -> None:
    """A strict request's schema must be one every output of whose grammar is valid
    (``Report.sound``): a keyword the grammar takes more values for than the schema
    (a lookbehind in a pattern, say) is a 400 now, not a check that fails after
    generating (a 500 for an output the server's own constraint allowed)."""
    widened = [] if report is None else report.widened()
    if widened:
        places = "; ".join(f"{e.pointer or '#'} {e.keyword}: {e.note}" for e in widened[:5])
        raise bad_request(f"{param}: strict, but the schema cannot be enforced exactly here: {places} "
                          "(without strict, keywords the grammar only approximates are checked after generating)",
                          param, "schema_not_enforceable")


def answer_or_call(form: ContentFormat, trigger: str, content: Constraint) -> Constraint:
    """The JSON answer of ``form``'s schema (``content``'s grammar, as
    ``content_constraint`` built it), or the start of a call: a JSON value never
    starts with ``<``, so the lexer tells them apart at the first byte."""
    assert content.grammar is not None
    answer = content.grammar
    return _composed(lambda: _answer_or_call(answer, trigger), form.param, form.param)


@lru_cache(maxsize=64)
def _answer_or_call(answer: Grammar, trigger: str) -> Constraint:
    return make_constraint(grammar=Grammar.union(answer, Grammar.literal(trigger)))


def _json_value(value: Any, param: str) -> Any:
    """A schema given as JSON text, read (a 400 when it is not JSON)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise bad_request(f"{param} is text but not JSON: {exc}", param) from None


def check_schema(schema: Any, param: str) -> None:
    """A 400 naming the place where ``schema`` is not a valid JSON Schema."""
    from jsonschema import SchemaError, validators

    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise bad_request(f"{param}: a JSON Schema must be an object or a boolean", param)
    try:
        validators.validator_for(schema, default=validators.Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise bad_request(f"{param}: not a valid JSON Schema at #/{where}: {exc.message}", param) from None


@dataclass(frozen=True)
class CallsGrammars:
    """A tool set's calls: the envelope with the calls (``constraint``), the calls
    alone (``body``: one, or several with the separator), how the schemas were
    translated (``report``)."""

    constraint: Constraint
    body: Grammar
    report: Report


def calls_constraint(syntax: ToolSyntax, tools: list[Tool], parallel: bool,
                     raws: dict[str, tuple[str, str] | None] | None = None) -> Constraint:
    """One call of one of ``tools`` (``parallel``: one or more) in the syntax's envelope.
    ``raws``: custom tools' input grammars (``custom_tools.CustomTool.raw``), which a
    syntax that writes raw text enforces itself (the others, a regex as the input's pattern)."""
    return _calls_grammars(syntax, tools, parallel, raws or {}).constraint


def tagged_calls(syntax: ToolSyntax, tools: list[Tool], parallel: bool,
                 raws: dict[str, tuple[str, str] | None] | None = None) -> Constraint | None:
    """``auto`` as a structural tag (``structgen.structural_tag``): free text in which
    the syntax's tag opens a block of calls, then text again (``parallel`` False: the
    output ends with its one call). None where the envelope does not begin with the
    tag (Llama 3's bare JSON) or the tag is a special token."""
    if syntax.tag_token is not None or not syntax.written_first.startswith(syntax.tag):
        return None
    calls = _calls_grammars(syntax, tools, parallel, raws or {})
    return _tagged(calls.body, syntax.tag, syntax.written_first, syntax.last, parallel)


@lru_cache(maxsize=64)
def _tagged(body: Grammar, tag: str, first: str, last: str, parallel: bool) -> Constraint:
    tags = StructuralTag((tag,), (Tag(first, body, last),), stop_after_first=not parallel)
    return make_constraint(structural_tag=tags)


def _calls_grammars(syntax: ToolSyntax, tools: list[Tool], parallel: bool, raws: dict[str, tuple[str, str] | None]) -> CallsGrammars:
    if syntax.per_tool:
        return _per_tool_calls_grammars(syntax, tools, parallel, raws)
    if len(tools) == 1:
        schema = syntax.call_schema(_arguments_of(tools[0], f"#/properties/{syntax.arguments_key}"))
    else:
        schema = {
            "anyOf": [
                syntax.call_schema(_arguments_of(tool, f"#/anyOf/{i}/properties/{syntax.arguments_key}"))
                for i, tool in enumerate(tools)
            ]
        }
    envelope = (syntax.written_first, syntax.between, syntax.last)
    calls = _composed(lambda: _calls(json.dumps(schema, ensure_ascii=False), envelope, parallel), "tools",
                      "tools: a tool's parameters cannot be translated")
    strict = [f"/anyOf/{i}" if len(tools) > 1 else "" for i, tool in enumerate(tools) if tool.strict]
    if strict:  # the grammar may have stepped down its lexer-limit ladder: strict tools must stay exact
        arguments = [f"{prefix}/properties/{syntax.arguments_key}" for prefix in strict]
        check_sound(_restricted(calls.report, arguments), "tools")
    return calls


def _per_tool_calls_grammars(syntax: ToolSyntax, tools: list[Tool], parallel: bool,
                             raws: dict[str, tuple[str, str] | None]) -> CallsGrammars:
    """``_calls_grammars`` for a syntax that builds each tool's calls itself
    (``ToolSyntax.per_tool``: the name outside the arguments' JSON)."""
    key = json.dumps([[t.name, t.description, object_arguments(t.schema), t.strict, raws.get(t.name) if syntax.raw_text else None]
                      for t in tools], ensure_ascii=False)
    calls = _composed(lambda: _per_tool_calls(syntax, key, parallel), "tools",
                      f"tools: a tool's parameters cannot be written in {syntax.name}'s call syntax")
    strict = [f"#/{i}" for i, tool in enumerate(tools) if tool.strict]
    if strict:
        check_sound(_restricted(calls.report, strict), "tools")
    return calls


@lru_cache(maxsize=64)
def _per_tool_calls(syntax: ToolSyntax, key: str, parallel: bool) -> CallsGrammars:
    report = Report()
    read = json.loads(key)
    tools = [Tool(name, description, schema, strict) for name, description, schema, strict, _ in read]
    options = CONTENT_OPTIONS if syntax.spaced_values else SCHEMA_OPTIONS
    calls = [syntax.tool_call_grammar(tool, f"#/{i}", report, options, tuple(raw) if raw else None)
             for i, (tool, (*_, raw)) in enumerate(zip(tools, read))]
    body = calls[0] if len(calls) == 1 else Grammar.union(*calls)
    if parallel:
        body = Grammar.repeat(body, Grammar.literal(syntax.between))
    parts = [Grammar.literal(syntax.written_first), body, Grammar.literal(syntax.last)]
    return CallsGrammars(make_constraint(grammar=Grammar.sequence(*parts)), body, report)


def _restricted(report: Report, pointers: list[str]) -> Report:
    """``report``'s entries at or below one of ``pointers``."""
    return Report([e for e in report.entries if any(e.pointer == p or e.pointer.startswith(p + "/") for p in pointers)])


@lru_cache(maxsize=64)
def _calls(schema_text: str, envelope: tuple[str, str, str], parallel: bool) -> CallsGrammars:
    """The calls' grammars, and how the calls' schema was translated for them: the
    envelope's parts (an empty one, as Llama 3's bare JSON, is left out) around one
    call, or calls with the separator between."""
    first, between, last = envelope
    body = Grammar.from_json_schema(schema_text, **SCHEMA_OPTIONS)
    report = body.report
    if parallel:
        body = Grammar.repeat(body, Grammar.literal(between) if between else None)
    parts = ([Grammar.literal(first)] if first else []) + [body] + ([Grammar.literal(last)] if last else [])
    return CallsGrammars(make_constraint(grammar=Grammar.sequence(*parts)), body, report)


def _composed(build: Callable[[], T], param: str, problem: str) -> T:
    """A grammar the server composes of schema grammars (``Grammar.union``,
    ``sequence``, ``repeat``: the schema's grammar as ``Grammar.from_json_schema``
    builds it); a 400 naming ``param`` where it passes the lexer's or the parser's
    size limits, or the schema cannot be translated (``problem`` says how)."""
    try:
        return build()
    except (LexerTooLarge, ParserTooLarge) as exc:
        raise bad_request(f"{param}: {exc}", param, "grammar_too_large") from None
    except (ValueError, RecursionError) as exc:  # SchemaError, GrammarError are ValueErrors
        raise bad_request(f"{problem}: {exc}", param) from None


def _tool_report(schema_text: str, param: str) -> Report | None:
    """How a tool's arguments (``object_arguments``) are translated for its calls
    (the grammar has no matcher checks there: what the report marks approximated
    is not enforced); a 400 naming ``param`` where they cannot be, or allow no
    value (no object: ``{"enum": [1]}``, ``{"not": {}}``)."""
    try:
        return _translated_report(schema_text)
    except NoValue as exc:
        raise bad_request(f"{param}: a function's arguments are a JSON object, and these parameters allow none: {exc}",
                          param) from None
    except (ValueError, RecursionError) as exc:
        raise bad_request(f"{param}: cannot be translated: {exc}", param) from None


@lru_cache(maxsize=64)
def _translated_report(schema_text: str) -> Report | None:
    return translate(schema_text, Options(**SCHEMA_OPTIONS))[1]  # type: ignore[arg-type]


def _arguments_of(tool: Tool, base: str) -> Tool:
    """``tool`` with its schema as its calls' arguments (``object_arguments``), its
    local ``$ref``s pointing where the call schema puts it."""
    return Tool(tool.name, tool.description, object_arguments(tool.schema, base), tool.strict)


_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def _rebase(schema: Any, base: str) -> Any:
    if isinstance(schema, list):
        return [_rebase(item, base) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str) and value.startswith("#"):
            out[key] = base + value[1:]
        elif key in _DATA_KEYWORDS:
            out[key] = value
        else:
            out[key] = _rebase(value, base)
    return out


def free_text_or(tag: str, trigger: str) -> Constraint:
    """Free text that never contains ``tag``, optionally followed by ``trigger``
    (which starts with ``tag``): one terminal, so the lexer cannot split it."""
    text = "|".join(_without(tag))
    lark = f"start: [FREE_TEXT]\nFREE_TEXT: /(?:{text})(?:{_literal(trigger)})?|{_literal(trigger)}/\n"
    return make_constraint(grammar=lark)


def free_text_without(tag: str) -> Constraint:
    """Free text that never contains ``tag`` (which the model writes as one special
    token instead, outside the grammar)."""
    text = "|".join(_without(tag))
    return make_constraint(grammar=f"start: [FREE_TEXT]\nFREE_TEXT: /{text}/\n")


def _without(tag: str) -> list[str]:
    """Regex pieces of the non-empty texts without ``tag`` (its first character
    must not occur in the rest of it: then a failed attempt at the tag can only
    restart at a new first character)."""
    head, rest = tag[0], tag[1:]
    assert head not in rest
    prefixes = "|".join(_literal(rest[:j]) for j in range(len(rest)))
    fails = "|".join(_literal(rest[:j]) + f"[^{_literal(head)}{_literal(rest[j])}]" for j in range(len(rest)))
    aborted = f"{_literal(head)}(?:{prefixes})"  # an attempt cut short by the next head
    element = f"[^{_literal(head)}]|(?:{aborted})*{_literal(head)}(?:{fails})"
    return [f"(?:{element})+(?:{aborted})*", f"(?:{aborted})+"]
