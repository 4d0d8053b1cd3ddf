"""A request's constraint as flat, plain per-request arguments.

vLLM carries ``SamplingParams.extra_args`` to its engine processes untouched, and
its OpenAI server fills them from a request's ``vllm_xargs``, whose values may only
be strings, numbers or lists of them. So a constraint is named by one flat key
whose value is text (a JSON Schema as JSON text, a regex, lark text) or a list of
strings (choices), with translation options as JSON text: the same dict works
from ``vllm.LLM`` and over HTTP. Nothing here imports vLLM.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from schema2grammar import Options
from structgen.constraint import Constraint, make_constraint
from structgen.grammar import PYDANTIC_OPTIONS
from structgen.pydantic_schema import model_schema

PREFIX = "structgen_"
CONSTRAINT_KEYWORDS = {
    "structgen_json_schema": "schema",
    "structgen_regex": "regex",
    "structgen_grammar": "grammar",
    "structgen_choices": "choices",
}
"""The keys that name a constraint (exactly one per request), each with its
``make_constraint`` keyword."""
ARG_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "structgen_json_schema": ((str, dict, bool), "JSON text"),
    "structgen_regex": (str, "a string"),
    "structgen_grammar": (str, "lark text"),
    "structgen_choices": ((list, tuple), "a list of strings"),
}
"""What each constraint key's value must be (a schema may also be a dict or bool
from Python), checked first so that a wrong type is named as such."""
OPTIONS_KEY = "structgen_options"
"""Schema translation options (``whitespace``, ``strict``, ``closed_objects``, ...) as JSON text."""
NEXT_GRAMMAR_KEY = "structgen_next_grammar"
NEXT_AFTER_KEY = "structgen_next_after"
"""A second phase (both keys, or neither): once the output ends with the text of
``structgen_next_after`` and the first constraint allows nothing but stopping, the
lark grammar ``structgen_next_grammar`` takes over, fed that text (the server's
``auto`` tool choice: free text, then the calls once the call trigger is written)."""


def structgen_args(
    *,
    schema: Any = None,
    grammar: str | None = None,
    regex: str | None = None,
    choices: Sequence[str] | None = None,
    **schema_options: Any,
) -> dict[str, Any]:
    """Per-request arguments (vLLM's ``extra_args`` or ``vllm_xargs``) for one of
    ``schema=`` (a Pydantic model class, a JSON Schema dict or bool, or JSON text),
    ``grammar=`` (lark text), ``regex=``, ``choices=``. A Pydantic model travels as
    its JSON Schema with the Pydantic translation options, as ``Grammar.from_pydantic``."""
    given = zip(CONSTRAINT_KEYWORDS, (schema, regex, grammar, choices))
    named = {key: value for key, value in given if value is not None}
    if len(named) != 1:
        raise ValueError("give exactly one of schema=, grammar=, regex=, choices=")
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        schema = model_schema(schema)
        schema_options = {**PYDANTIC_OPTIONS, **schema_options}
    if schema is not None and not isinstance(schema, str):
        named["structgen_json_schema"] = json.dumps(schema, ensure_ascii=False)  # key order kept: it is the output's
    if choices is not None:
        if isinstance(choices, str):  # list() would make it one-character choices
            raise ValueError("choices= is a list of strings, not one string")
        named["structgen_choices"] = list(choices)
    if schema_options:
        if schema is None:
            raise ValueError(f"schema options ({', '.join(schema_options)}) apply to schema= only")
        named[OPTIONS_KEY] = json.dumps(schema_options)
    return named


def check_args(args: dict[str, Any] | None) -> bool:
    """Whether ``args`` name a constraint; ValueError when their keys or value types
    are wrong. Nothing is translated or compiled (cheap enough for vLLM's
    ``validate_params``, on the server's event loop): a regex, grammar or schema
    that does not translate is found where it is built."""
    ours = {key: value for key, value in (args or {}).items() if key.startswith(PREFIX)}
    if not ours:
        return False
    named = [key for key in CONSTRAINT_KEYWORDS if key in ours]
    unknown = set(ours) - {*CONSTRAINT_KEYWORDS, OPTIONS_KEY, NEXT_GRAMMAR_KEY, NEXT_AFTER_KEY}
    if unknown or len(named) != 1:
        raise ValueError(
            f"structgen: name exactly one of {', '.join(CONSTRAINT_KEYWORDS)} (and optionally "
            f"{OPTIONS_KEY}); got {', '.join(sorted(ours))}"
        )
    key, value = named[0], ours[named[0]]
    wanted = ARG_TYPES[key]
    if not isinstance(value, wanted[0]):
        raise ValueError(f"structgen: {key} must be {wanted[1]}, not {type(value).__name__}")
    if key == "structgen_choices" and (not value or not all(isinstance(choice, str) for choice in value)):
        raise ValueError(f"structgen: {key}: give at least one choice, each a string")
    options = _schema_options(ours.get(OPTIONS_KEY))
    if options and key != "structgen_json_schema":
        raise ValueError(f"structgen: {OPTIONS_KEY} applies to structgen_json_schema only, not {key}")
    _check_next_phase(args or {})
    return True


def constraint_from_args(args: dict[str, Any] | None) -> Constraint | None:
    """The constraint ``args`` name, None when they name none; ValueError for a
    malformed or untranslatable one. Keys without the ``structgen_`` prefix belong
    to others and are ignored."""
    if not check_args(args):
        return None
    assert args is not None
    key = next(key for key in CONSTRAINT_KEYWORDS if key in args)
    constraint: dict[str, Any] = {CONSTRAINT_KEYWORDS[key]: args[key]}
    try:
        return make_constraint(**constraint, schema_options=_schema_options(args.get(OPTIONS_KEY)))
    except (TypeError, ValueError) as exc:  # JSON, schema and grammar errors are ValueErrors
        raise ValueError(f"structgen: {key}: {exc}") from exc


def next_phase_from_args(args: dict[str, Any] | None) -> tuple[Constraint, str] | None:
    """The second phase ``args`` name (its constraint and the text that starts it),
    None when they name none; ValueError when it is malformed."""
    args = args or {}
    if not _check_next_phase(args):
        return None
    grammar, after = args[NEXT_GRAMMAR_KEY], args[NEXT_AFTER_KEY]
    try:
        return make_constraint(grammar=grammar), after
    except (TypeError, ValueError) as exc:
        raise ValueError(f"structgen: {NEXT_GRAMMAR_KEY}: {exc}") from exc


def _check_next_phase(args: dict[str, Any]) -> bool:
    """Whether ``args`` name a second phase; ValueError when its keys or types are wrong."""
    given = [key for key in (NEXT_GRAMMAR_KEY, NEXT_AFTER_KEY) if key in args]
    if not given:
        return False
    grammar, after = args.get(NEXT_GRAMMAR_KEY), args.get(NEXT_AFTER_KEY)
    if len(given) != 2 or not isinstance(grammar, str) or not isinstance(after, str) or not after:
        raise ValueError(f"structgen: {NEXT_GRAMMAR_KEY} (lark text) and {NEXT_AFTER_KEY} (non-empty text) go together")
    return True


def constraint_args(constraint: Constraint) -> dict[str, Any]:
    """The arguments that name ``constraint`` again (what ``make_constraint`` built
    it from, which its grammar records): {} for free text. ValueError for a grammar
    that ``make_constraint`` did not build from text (a ``Grammar`` object)."""
    if constraint.tags is not None:
        raise ValueError("structgen: a structural tag's constraint cannot travel to vLLM yet")
    grammar = constraint.grammar
    if grammar is None:
        return {}
    source = getattr(grammar, "source", None)
    if source is None:
        raise ValueError(f"structgen: {constraint!r} was not built from text, so it cannot travel to vLLM")
    kind, key = source
    if kind == "lark":
        return {"structgen_grammar": key}
    if kind == "regex":
        return {"structgen_regex": key}
    schema, options = json.loads(key)  # constraint._schema_key: [schema, sorted options]
    return {"structgen_json_schema": json.dumps(schema, ensure_ascii=False), OPTIONS_KEY: json.dumps(dict(options))}


def _schema_options(text: Any) -> dict[str, Any]:
    """``structgen_options`` read and checked, so that a bad option is named as one."""
    try:
        options = json.loads(text) if isinstance(text, str) else text or {}
        if not isinstance(options, dict):
            raise ValueError("not a JSON object")
        Options(**options)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"structgen: {OPTIONS_KEY}: {exc}") from exc
    return options
