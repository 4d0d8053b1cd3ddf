"""Structural tags: free text in which trigger strings open tagged sections, each
``begin`` · content · ``end``, whose contents are schemas, regexes or grammars.

This is the format XGrammar defines and vLLM accepts in ``response_format``:

- ``{"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": [...],
  "tags": [{"type": "tag", "begin": ..., "content": {...}, "end": ...}],
  "at_least_one": false, "stop_after_first": false, "excludes": [...]}}``;
- the older ``{"type": "structural_tag", "structures": [{"begin", "schema", "end"}],
  "triggers": [...]}``;
- a ``format`` with no free text (``tag``, ``sequence``, ``or``, ``json_schema``,
  ``regex``, ``const_string``, ``grammar``) is a grammar like any other.

A content is ``json_schema``, ``regex``, ``const_string``, ``grammar`` (lark text:
XGrammar's is EBNF), ``any_text`` (any text without the tag's end), or a
``sequence`` / ``or`` of them.

The text between sections may not hold a trigger or an exclude. Where a trigger
is written, one of the tags whose ``begin`` starts with it must follow. A section
ends where its ``end`` completes it (``tagged_matcher.TaggedMatcher`` follows the
output). ``at_least_one``: the output holds a section. ``stop_after_first``: the
output ends with its first section.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from structgen.grammar import Grammar
from structgen.lark_writer import regex_literal

MAX_TAGS = 256
"""Tags one structural tag may hold."""
MAX_TRIGGERS = 64
"""Triggers and excludes one structural tag may hold."""
MAX_NESTING = 16
"""``sequence`` / ``or`` contents nested in one another."""

_PLAIN = frozenset({"json_schema", "regex", "const_string", "grammar", "sequence", "or", "tag", "any_text"})


class StructuralTagError(ValueError):
    """A structural tag that cannot be built; ``where`` is the path of the part at fault."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(f"{where}: {message}")
        self.message, self.where = message, where


ANY_TEXT = "(?:any text)"
"""A tag's ``pattern`` for ``any_text``: any text up to the first ``end``."""


@dataclass(frozen=True)
class Tag:
    """One tagged section: ``begin``, text of ``content``, ``end``. A content that
    is one regex (``regex``, ``any_text``) is ``pattern`` instead: the section is
    then one lexer terminal, begin and end included, so the engine's context-free
    lexer cannot read the begin's rest or the end as content (docs/design.md §4)."""

    begin: str
    content: Grammar | None
    end: str
    pattern: str | None = None

    def section(self, written: int) -> Grammar:
        """The tag's text after its first ``written`` characters (a trigger)."""
        rest = self.begin[written:]
        if self.pattern is not None:
            head, tail = regex_literal(rest), regex_literal(self.end)
            if self.pattern == ANY_TEXT:  # up to the end's first occurrence
                return Grammar.from_regex(f"(?!{head}[\\s\\S]*{tail}[\\s\\S]){head}[\\s\\S]*{tail}")
            return Grammar.from_regex(f"{head}(?:{self.pattern}){tail}")
        assert self.content is not None
        parts = ([Grammar.literal(rest)] if rest else []) + [self.content, Grammar.literal(self.end)]
        return Grammar.sequence(*parts)


@dataclass(frozen=True, eq=False)
class StructuralTag:
    """Free text with triggered sections (see the module's docstring)."""

    triggers: tuple[str, ...]
    tags: tuple[Tag, ...]
    at_least_one: bool = False
    stop_after_first: bool = False
    excludes: tuple[str, ...] = ()
    _sections: dict[str, Grammar] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self.triggers:
            raise StructuralTagError("give at least one trigger", "triggers")
        if len(self.triggers) + len(self.excludes) > MAX_TRIGGERS:
            raise StructuralTagError(f"at most {MAX_TRIGGERS} triggers and excludes", "triggers")
        if not self.tags or len(self.tags) > MAX_TAGS:
            raise StructuralTagError(f"give 1 to {MAX_TAGS} tags", "tags")
        words = list(self.triggers) + list(self.excludes)
        for index, word in enumerate(words):
            where = f"triggers[{index}]" if index < len(self.triggers) else f"excludes[{index - len(self.triggers)}]"
            if not word:
                raise StructuralTagError("an empty string", where)
            if any(word != other and word in other for other in words):
                raise StructuralTagError(f"{word!r} is inside another trigger or exclude: the text could not say which came", where)
        for index, tag in enumerate(self.tags):
            if not any(tag.begin.startswith(t) for t in self.triggers):
                raise StructuralTagError(f"begin {tag.begin!r} starts with no trigger", f"tags[{index}].begin")
            if not tag.end:
                raise StructuralTagError("a tag needs an end: its section must end where free text resumes", f"tags[{index}].end")
        for trigger in self.triggers:
            if not any(tag.begin.startswith(trigger) for tag in self.tags):
                raise StructuralTagError(f"no tag begins with trigger {trigger!r}", "triggers")

    def section(self, trigger: str) -> Grammar:
        """The tags ``trigger`` opens, whole (``begin``, content, ``end``): a section's
        matcher is fed the trigger first, so the begin stays one lexeme with what
        follows it (a rest such as ``"\\n"`` alone would meet every terminal that
        starts with a newline in the context-free lexer)."""
        found = self._sections.get(trigger)
        if found is None:
            parts = [tag.section(0) for tag in self.tags if tag.begin.startswith(trigger)]
            found = parts[0] if len(parts) == 1 else Grammar.union(*parts)
            self._sections[trigger] = found
        return found


def read_structural_tag(spec: Any, schema_options: dict[str, Any] | None = None) -> StructuralTag | Grammar:
    """A structural tag from its JSON form (``response_format``'s, or its
    ``format``): a ``StructuralTag`` where free text holds triggered sections, a
    ``Grammar`` where the format has no free text. ``schema_options`` go to the
    contents' ``Grammar.from_json_schema``."""
    options = {"closed_objects": True, "whitespace": "flexible", **(schema_options or {})}
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except json.JSONDecodeError as exc:
            raise StructuralTagError(f"not JSON: {exc}", "structural_tag") from None
    if not isinstance(spec, dict):
        raise StructuralTagError("a structural tag is an object", "structural_tag")
    if "structures" in spec:  # the older form
        structures = _list(spec.get("structures"), "structures")
        tags = []
        for index, item in enumerate(structures):
            where = f"structures[{index}]"
            item = _object(item, where)
            schema = item.get("schema", {})
            tags.append(Tag(_text(item.get("begin"), f"{where}.begin"), _schema(schema, options, f"{where}.schema"),
                            _text(item.get("end"), f"{where}.end")))
        triggers = [_text(t, f"triggers[{i}]") for i, t in enumerate(_list(spec.get("triggers"), "triggers"))]
        return StructuralTag(tuple(triggers), tuple(tags))
    form = _object(spec.get("format", spec), "format")
    if form.get("type") == "triggered_tags":
        return _triggered(form, options)
    if form.get("type") == "tag":
        return _tag(form, options, "format").section(0)
    return _content(form, options, "format", 0)


def _triggered(form: dict[str, Any], options: dict[str, Any]) -> StructuralTag:
    tags = []
    for index, item in enumerate(_list(form.get("tags"), "format.tags")):
        tags.append(_tag(_object(item, f"format.tags[{index}]"), options, f"format.tags[{index}]"))
    triggers = tuple(_text(t, f"format.triggers[{i}]") for i, t in enumerate(_list(form.get("triggers"), "format.triggers")))
    given = form.get("excludes")
    excludes = tuple(_text(t, f"format.excludes[{i}]") for i, t in enumerate(_list(given, "format.excludes") if given is not None else []))
    try:
        return StructuralTag(triggers, tuple(tags), bool(form.get("at_least_one", False)),
                             bool(form.get("stop_after_first", False)), excludes)
    except StructuralTagError as exc:  # named where the request has it
        raise StructuralTagError(exc.message, "format." + exc.where) from None


def _tag(form: dict[str, Any], options: dict[str, Any], where: str) -> Tag:
    begin = _text(form.get("begin"), f"{where}.begin", empty=True)
    end = _text(form.get("end"), f"{where}.end")
    content = _object(form.get("content"), f"{where}.content")
    if content.get("type") == "any_text":
        return Tag(begin, None, end, ANY_TEXT)
    if content.get("type") == "regex":
        pattern = _text(content.get("pattern"), f"{where}.content.pattern")
        _built(lambda: Grammar.from_regex(pattern), f"{where}.content")  # its errors, named here
        return Tag(begin, None, end, pattern)
    return Tag(begin, _content(content, options, f"{where}.content", 0), end)


def _content(form: dict[str, Any], options: dict[str, Any], where: str, depth: int) -> Grammar:
    """A content's grammar (``any_text`` only as a tag's whole content)."""
    if depth > MAX_NESTING:
        raise StructuralTagError(f"contents nest more than {MAX_NESTING} deep", where)
    kind = form.get("type")
    if kind == "json_schema":
        return _schema(form.get("json_schema", {}), options, f"{where}.json_schema")
    if kind == "regex":
        return _built(lambda: Grammar.from_regex(_text(form.get("pattern"), f"{where}.pattern")), where)
    if kind == "const_string":
        return Grammar.literal(_text(form.get("value"), f"{where}.value"))
    if kind == "grammar":
        return _built(lambda: Grammar.from_lark(_text(form.get("grammar"), f"{where}.grammar")), where)
    if kind == "any_text":
        raise StructuralTagError("any_text is a tag's whole content (it runs until the tag's end)", where)
    if kind in ("sequence", "or"):
        elements = _list(form.get("elements"), f"{where}.elements")
        parts = [_content(_object(e, f"{where}.elements[{i}]"), options, f"{where}.elements[{i}]", depth + 1)
                 for i, e in enumerate(elements)]
        if not parts:
            raise StructuralTagError("no elements", f"{where}.elements")
        return parts[0] if len(parts) == 1 else (Grammar.sequence(*parts) if kind == "sequence" else Grammar.union(*parts))
    if kind == "tag":
        return _tag(form, options, where).section(0)
    supported = ", ".join(sorted(_PLAIN | {"triggered_tags"}))
    raise StructuralTagError(f"type {kind!r} is not supported here (supported: {supported}; triggered_tags only at the top)",
                             f"{where}.type")


def _schema(schema: Any, options: dict[str, Any], where: str) -> Grammar:
    if not isinstance(schema, (dict, bool)):
        raise StructuralTagError("a JSON Schema is an object or a boolean", where)
    return _built(lambda: Grammar.from_json_schema(schema, **options), where)


def _built(build: Any, where: str) -> Grammar:
    try:
        grammar: Grammar = build()
    except StructuralTagError:
        raise
    except (ValueError, RecursionError) as exc:  # SchemaError, GrammarError, RegexError
        raise StructuralTagError(str(exc), where) from None
    return grammar


def _text(value: Any, where: str, empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not empty):
        raise StructuralTagError("a non-empty string is needed" if not empty else "a string is needed", where)
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise StructuralTagError("a list is needed", where)
    return value


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise StructuralTagError("an object is needed", where)
    return value
