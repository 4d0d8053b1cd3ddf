"""What a generation must match, and how its text becomes the value returned.

``generate`` takes one of ``schema=`` (a Pydantic model class, a JSON Schema dict or
bool, or JSON text), ``grammar=`` (lark text or a ``Grammar``), ``regex=`` or
``choices=``; this module turns it into a ``Grammar`` (cached, so a second call with
the same schema compiles nothing) and parses the finished text: a model instance, a
JSON value, or the text itself.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from typing import Any, Callable

from structgen.grammar import PYDANTIC_OPTIONS, Grammar
from structgen.pydantic_schema import model_schema
from structgen.structural_tag import StructuralTag, read_structural_tag

MAX_CACHED_GRAMMARS = 64


class OutputValidationError(ValueError):
    """A finished output that its schema rejects (possible only where the grammar
    approximates the schema: ``grammar.report`` lists where)."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


class Constraint:
    """A grammar (None: free text) and the function that reads a finished output;
    or ``tags``, free text with triggered sections (``structural_tag``)."""

    def __init__(self, grammar: Grammar | None, parse: Callable[[str], Any], description: str,
                 tags: StructuralTag | None = None) -> None:
        self.grammar = grammar
        self.parse = parse
        self.description = description
        self.tags = tags

    @property
    def free(self) -> bool:
        """Whether any text is allowed (no grammar, no structural tag)."""
        return self.grammar is None and self.tags is None

    def __repr__(self) -> str:
        return f"Constraint({self.description})"


_grammars: OrderedDict[tuple[str, str], Grammar] = OrderedDict()


def make_constraint(
    *,
    schema: Any = None,
    grammar: Grammar | str | None = None,
    regex: str | None = None,
    choices: list[str] | None = None,
    structural_tag: Any = None,
    schema_options: dict[str, Any] | None = None,
) -> Constraint:
    """The constraint named by at most one of the keywords (none: free text).
    ``schema_options`` go to ``schema2grammar.Options`` (here ``closed_objects``
    defaults to True and ``whitespace`` to ``"compact"``). ``structural_tag``: its
    JSON form, or a ``StructuralTag`` (``structgen.structural_tag``)."""
    given = [name for name, value in (("schema", schema), ("grammar", grammar), ("regex", regex), ("choices", choices),
                                      ("structural_tag", structural_tag)) if value is not None]
    if len(given) > 1:
        raise ValueError(f"give at most one of schema=, grammar=, regex=, choices=, structural_tag= (got {', '.join(given)})")
    # generation closes objects unless told otherwise (a model free to invent keys wanders)
    # and writes compact JSON, so jump-forward can append every key and punctuation mark
    options = {"closed_objects": True, "whitespace": "compact", **(schema_options or {})}
    if structural_tag is not None:
        return _tagged_constraint(structural_tag, options)
    if schema is not None:
        if _is_pydantic_model(schema):
            return _pydantic_constraint(schema, options)
        return _schema_constraint(schema, options)
    if isinstance(grammar, Grammar):
        source = getattr(grammar, "source", None)
        if source is not None and source[0] == "lark":  # a composed grammar: its text names it here too
            grammar = _cached("lark", source[1], lambda: grammar)
        return Constraint(grammar, _text, "grammar")
    if grammar is not None:
        if not isinstance(grammar, str):
            raise TypeError(f"grammar= is lark text or a Grammar, not {type(grammar).__name__}")
        return Constraint(_cached("lark", grammar, lambda: Grammar.from_lark(grammar)), _text, "lark grammar")
    if regex is not None:
        return Constraint(_cached("regex", regex, lambda: Grammar.from_regex(regex)), _text, f"regex {regex!r}")
    if choices is not None:
        # a bare string would pass as a list of one-character choices
        valid = isinstance(choices, (list, tuple)) and all(isinstance(c, str) and c for c in choices)
        if not choices or not valid:
            raise ValueError("choices= must be a non-empty list of non-empty strings")
        pattern = "|".join(re.escape(c) for c in choices)
        return Constraint(_cached("regex", pattern, lambda: Grammar.from_regex(pattern)), _text, f"one of {choices!r}")
    return Constraint(None, _text, "free text")


def _text(text: str) -> str:
    return text


def _tagged_constraint(spec: Any, options: dict[str, Any]) -> Constraint:
    """A structural tag: free text with sections, or (a format without free text) a grammar."""
    tags = spec if isinstance(spec, StructuralTag) else read_structural_tag(spec, options)
    if isinstance(tags, Grammar):
        return Constraint(tags, _text, "structural tag")
    return Constraint(None, _text, "structural tag", tags=tags)


def _is_pydantic_model(value: Any) -> bool:
    return isinstance(value, type) and hasattr(value, "model_json_schema") and hasattr(value, "model_validate_json")


def _cached(kind: str, key: str, build: Callable[[], Grammar]) -> Grammar:
    grammar = _grammars.get((kind, key))
    if grammar is None:
        grammar = build()
        grammar.source = (kind, key)  # what it was built from (integrations.request_args.constraint_args)
        _grammars[(kind, key)] = grammar
        if len(_grammars) > MAX_CACHED_GRAMMARS:
            _grammars.popitem(last=False)
    else:
        _grammars.move_to_end((kind, key))
    return grammar


def _schema_key(schema: Any, options: dict[str, Any]) -> str:
    # not sort_keys: property order is part of the grammar
    return json.dumps([schema, sorted(options.items())], ensure_ascii=False)


def _pydantic_constraint(model: Any, options: dict[str, Any]) -> Constraint:
    schema = model_schema(model)
    options = {**PYDANTIC_OPTIONS, **options}  # as Grammar.from_pydantic
    grammar = _cached("schema", _schema_key(schema, options), lambda: Grammar.from_json_schema(schema, **options))

    def parse(text: str) -> Any:
        from pydantic import ValidationError

        try:
            return model.model_validate_json(text)
        except ValidationError as exc:
            raise OutputValidationError(f"the output does not validate as {model.__name__}: {exc}", text) from None

    return Constraint(grammar, parse, f"Pydantic model {model.__name__}")


def _schema_constraint(schema: Any, options: dict[str, Any]) -> Constraint:
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise ValueError(f"schema= is text but not JSON: {exc}") from None
    grammar = _cached("schema", _schema_key(schema, options), lambda: Grammar.from_json_schema(schema, **options))
    exact = grammar.report is not None and grammar.report.exact

    def parse(text: str) -> Any:
        value = json.loads(text)
        if not exact:  # the grammar approximated something: jsonschema has the last word
            from jsonschema.exceptions import best_match

            from structgen.schema_validator import json_schema_validator  # ECMA patterns, formats asserted

            error = best_match(json_schema_validator(schema).iter_errors(value))
            if error is not None:
                where = "/" + "/".join(str(p) for p in error.absolute_path)
                raise OutputValidationError(
                    f"the output violates the schema at {where}: {error.message} "
                    "(a keyword the grammar only approximates; see grammar.report)",
                    text,
                )
        return value

    return Constraint(grammar, parse, "JSON Schema")
