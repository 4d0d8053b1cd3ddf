"""The translator's shared state and the writing of a grammar: what every keyword
family builds on.

``TranslatorCore`` holds one translation's state (the document's draft, the
options, the rules and terminals written so far, the report) and the methods
that write rules, terminals and report entries. Each keyword family
(``references``, ``strings``, ``number_keywords``, ``arrays``, ``objects``,
``combinators``, ``dependent_schemas``, ``constants``) is a subclass of it, and
``applicators`` and ``unevaluated`` take one; the methods a family calls in
another (``node``, ``body``, ``merged``, ...) are declared here and defined by the
family that owns them, and ``translate.Translator`` composes the families. So no
family module imports another, nor ``translate``: no import runs in a circle.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any, Callable

from schema2grammar import numbers, regexes, spellings
from schema2grammar.judge import Judge
from schema2grammar.options import MAX_INDENT_LEVELS, Options
from schema2grammar.report import APPROXIMATED, ENFORCED, REJECTED, Report, ReportEntry
from schema2grammar.shared import (ANNOTATIONS, CONDITIONAL, LATER, TYPE_KEYWORDS, NoValue, SchemaError, count_of,
                                   has_type, without_keyword)
from schema2grammar.translation import CountedString, Translation

MAX_DEPTH = 100
"""Schema places nested in one another (through ``allOf`` merges too): deeper is an
error, not a Python stack overflow."""

JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
"""The values of ``type``, in the order a place's type branches are written."""

ANNOTATION_IGNORED = "an annotation in this draft: not checked (format_annotations='asserted' checks it)"
ANNOTATION_ASSERTED = "asserted: an annotation in this draft (format_annotations='ignored' leaves it unchecked)"
"""How a ``format`` that is an annotation in the document's draft is reported."""

_UNSUPPORTED_KEYWORDS = frozenset(
    "$ref $dynamicRef $recursiveRef $recursiveAnchor disallow extends divisibleBy".split()
)
"""Keywords that validate in some draft and that no translation here enforces."""

_RULE_NAME = re.compile(r"\b[a-z]\w*")
_TERMINAL_NAME = re.compile(r"\bT\d+\b")


class OverBudget(Exception):
    """A split into branches (dependent schemas, ``not``, ``if``) grew past its rule budget."""


def _escape_whitespace(text: str) -> str:
    """``text`` as a regex, its newlines, tabs and returns as escapes (lark refuses
    a raw newline in a pattern)."""
    return "".join({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c, re.escape(c)) for c in text)


def _lark_regex(pattern: str) -> str:
    """``pattern`` inside lark's ``/.../``. Lark reads ``\\\\"`` there as ``\\"`` (a
    bare quote), so every quote is written ``\\x22``; our regexes never escape a
    quote themselves (``re.escape`` leaves it bare)."""
    return pattern.replace("/", "\\/").replace('"', "\\x22")


def spellable(value: Any) -> bool:
    """Whether some JSON text spells ``value``: no string in it (a key included)
    holds a lone surrogate (``spellings``)."""
    if isinstance(value, str):
        return spellings.spellable(value)
    if isinstance(value, list):
        return all(map(spellable, value))
    if isinstance(value, dict):
        return all(spellable(k) and spellable(v) for k, v in value.items())
    return True


class TranslatorCore:
    """One translation's state, and the writing of its rules, terminals and report."""

    def __init__(self, root: Any, options: Options) -> None:
        self.root = root
        self.options = options
        self.report = Report()
        self.rules: dict[str, str] = {}  # nonterminal -> its alternatives
        self.terminals: dict[str, str] = {}  # regex -> terminal name
        self.counted: dict[str, CountedString] = {}  # terminal name -> the maximum the matcher counts
        self.by_pointer: dict[str, str] = {}  # $ref target -> nonterminal
        self.visited = 0
        self.depth = 0
        self.empty: set[str] = set()  # $ref targets found to accept no value
        self.splitting: set[str] = set()  # schemas whose dependent schemas are being split on
        self.made = 0  # rule names given
        self.merge_verdicts: dict[str, tuple[str, str]] = {}  # merged_references key -> its allOf's status and note
        self.rule_limit = math.inf  # the rule names a split into branches may reach (within_budget)
        self.lenient = 0  # inside a schema built for a keyword (contains, if): strict mode blames that keyword
        declared = root.get("$schema") if isinstance(root, dict) else None
        # drafts 3-7 ignore $ref's siblings; drafts 3-4 count 1.0 as no integer
        self.ref_alone = isinstance(declared, str) and re.search(r"draft-0[3-7]/", declared) is not None
        self.float_integers = not (isinstance(declared, str) and re.search(r"draft-0[34]/", declared) is not None)
        # contains came with draft 6, if/then/else with draft 7: before, annotations
        self.contains_keyword = self.float_integers
        self.conditional_keywords = not (isinstance(declared, str) and re.search(r"draft-0[3-6]/", declared) is not None)
        # dependentRequired and dependentSchemas came with 2019-09: before, unknown keywords (annotations)
        self.dependent_keywords = not self.ref_alone
        # prefixItems came with 2020-12: before, an unknown keyword, which constrains nothing
        if isinstance(declared, str) and re.search(r"draft-0[3-7]/|/draft/2019-09/", declared) and "prefixItems" in json.dumps(root):
            self.root = root = without_keyword(root, "prefixItems")
            self.report.add("", "prefixItems", ENFORCED, "not a keyword before draft 2020-12: no constraint")
        if options.float_integers is not None:
            self.float_integers = options.float_integers
        # 2019-09 and 2020-12 make format an annotation unless a vocabulary asks for more
        self.format_assertion = not (isinstance(declared, str) and re.search(r"/draft/20(19-09|20-12)/", declared) is not None)
        if options.format_assertion is not None:
            self.format_assertion = options.format_assertion
        # where a format describes a value: asserted by default even where the draft makes it
        # an annotation (narrower: every output stays valid); judging (not, if) keeps the draft's
        self.format_checked = self.format_assertion or (options.format_assertion is None
                                                        and options.format_annotations == "asserted")
        self.format_note = "" if self.format_assertion else ANNOTATION_ASSERTED
        self.readable = options.numbers == "readable"  # numbers spelled as readers read them back
        self.doubles = self.readable and options.multiple_of == "double"  # multipleOf as doubles read it
        # a readable number (not an integer) under a step with trailing zeros is written as json.dumps
        # writes a float: plain below 1e16, with an exponent from there (UNREADABLE's count of digits
        # beside the step's run of zeros makes a product of automata: 7 s for 1e100)
        self.most_number_digits = len(str(regexes.BIG)) - 1 if self.readable else None
        gap = 0 if options.indent is not None or options.separators is not None else options.gap
        self.ws = f"[ \\t\\n\\r]{{0,{gap}}}" if gap else ""

    def run(self) -> Translation:
        start = self.node(self.root, "")
        lines = [f"start: {start}"]
        rules = self.reachable(start)
        lines += [f"{name}: {self.rules[name]}" for name in rules]
        used = set(_TERMINAL_NAME.findall(" ".join([start] + [self.rules[name] for name in rules])))
        lines += [f"{name}: /{_lark_regex(pattern)}/" for pattern, name in self.terminals.items() if name in used]
        counted = {name: found for name, found in self.counted.items() if name in used}
        return Translation("\n".join(lines) + "\n", self.report, counted_strings=counted)

    def reachable(self, start: str) -> list[str]:
        """The rules ``start`` uses, in definition order (a dropped place leaves
        rules, and terminals, behind that nothing refers to)."""
        seen = {start} if start in self.rules else set()
        todo = list(seen)
        while todo:
            for word in _RULE_NAME.findall(self.rules[todo.pop()]):
                if word in self.rules and word not in seen:
                    seen.add(word)
                    todo.append(word)
        return [name for name in self.rules if name in seen]

    # -- terminals and rules

    def terminal(self, pattern: str) -> str:
        """The terminal of one JSON token, with the gap before it."""
        if self.ws:
            pattern = f"{self.ws}(?:{pattern})"
        name = self.terminals.get(pattern)
        if name is None:
            name = f"T{len(self.terminals)}"
            self.terminals[pattern] = name
        return name

    def counted_terminal(self, counted: CountedString, quoted: str, ahead: str = "") -> str:
        """The terminal of a JSON string (``quoted``, after a lookahead ``ahead``)
        whose maximum the matcher counts."""
        name = self.terminal(ahead + counted.group(quoted))
        self.counted[name] = counted
        return name

    def number_terminal(self, pattern: str, integer: bool) -> str:
        """The terminal of a number (an integer where ``integer``): its readable
        spellings only, unless ``Options.numbers`` is ``"draft"``."""
        return self.terminal(regexes.readable(pattern, integer) if self.readable else pattern)

    def punct(self, char: str) -> str:
        """A punctuation mark: laid out exactly, or (as every token) after a gap."""
        if self.options.indent is not None or self.options.separators is not None:
            return self.terminal(self.laid_out(char))
        return self.terminal(re.escape(char))

    def laid_out(self, char: str) -> str:
        """The pattern of ``char`` in an exact layout (``Options.separators``/``indent``)."""
        options = self.options
        escaped = re.escape(char)
        spelled = options.separators or ((",", ": ") if options.indent is not None else (",", ":"))
        item, key = (_escape_whitespace(text) for text in spelled)
        if options.indent is None:
            return {",": item, ":": key}.get(char, escaped)
        step = f"(?: {{{options.indent}}})" if options.indent else ""
        if char in "[{":  # a newline, one level or more, unless the container is empty
            return f"{escaped}(?:\\n{step}{{1,{MAX_INDENT_LEVELS}}})?" if step else f"{escaped}\\n?"
        if char in "]}":
            return f"(?:\\n{step}{{0,{MAX_INDENT_LEVELS - 1}}})?{escaped}" if step else f"\\n?{escaped}"
        if char == ",":
            return item + (f"\\n{step}{{1,{MAX_INDENT_LEVELS}}}" if step else "\\n")
        return key

    def literal(self, value: Any) -> str:
        """A terminal for one JSON scalar (a value, or an object's key): a number as
        ``json.dumps`` spells it, a string in each spelling of its characters
        (``spellings``: ``"é"`` and ``"\\u00e9"``)."""
        if isinstance(value, str):
            try:
                return self.terminal('"' + spellings.spell_text(value) + '"')
            except ValueError:
                raise NoValue(f"the string {value!r} holds a lone surrogate, which no text here spells") from None
        return self.terminal(re.escape(json.dumps(value)))

    def fresh(self, hint: str) -> str:
        """A rule name never given before (rules of a place no value satisfies are
        deleted: their count is no source of new names)."""
        self.made += 1
        return f"{hint}{self.made}"

    def rule(self, hint: str, body: str) -> str:
        name = self.fresh(hint)
        self.rules[name] = body
        return name

    def reserve(self, hint: str) -> str:
        """A rule's name, its body to come (rules that refer to one another)."""
        return self.rule(hint, "<building>")

    def any_value(self) -> str:
        """Any JSON value (with this translation's whitespace)."""
        if "value" not in self.rules:
            colon, comma = self.punct(":"), self.punct(",")
            string = self.terminal(regexes.STRING)
            self.rules["value"] = (
                f"{self.punct('{')} [{string} {colon} value ({comma} {string} {colon} value)*] {self.punct('}')}"
                f" | {self.punct('[')} [value ({comma} value)*] {self.punct(']')}"
                f" | {string} | {self.number_terminal(regexes.NUMBER, False)}"
                f" | {self.literal(True)} | {self.literal(False)} | {self.literal(None)}"
            )
        return "value"

    # -- memoized places, and budgets

    def cached(self, key: str, build: Callable[[], str], pointer: str) -> str:
        """One rule per reference ``key`` (or ``allOf`` of references), built once
        by ``build``: recursion of any depth is a cycle of rules."""
        if key in self.empty:
            what = "allOf" if key.startswith("allOf ") else f"$ref {key.split(' ')[0]!r}"
            raise NoValue(f"{pointer or '#'}: {what} accepts no value")
        found = self.by_pointer.get(key)
        if found is not None:
            return found
        name = self.fresh("r")
        known = set(self.by_pointer)
        self.by_pointer[key] = name
        self.rules[name] = "<building>"
        try:
            self.rules[name] = build()
        except (NoValue, OverBudget) as exc:
            # forget what was cached meanwhile: those rules may stand on this one
            if isinstance(exc, NoValue):
                self.empty.add(key)
            self.forget_cached(known)
            raise
        return name

    def forget_cached(self, known: set[str]) -> None:
        """Forget the references cached since ``known`` was taken: the rules they
        name may stand on rules being given up."""
        for later in set(self.by_pointer) - known:
            del self.by_pointer[later]

    def within_budget(self, limit: int, build: Callable[[], str]) -> str | None:
        """``build()``, or None when it would add more than ``limit`` rules (a split
        into branches that each copy a schema's grammar: the caller reports its
        keyword approximated and builds without it); the rules made meanwhile are
        left unreachable, and their places do not count towards ``MAX_SCHEMA_NODES``."""
        outer, visited = self.rule_limit, self.visited
        own = self.made + limit
        self.rule_limit = min(outer, own)
        try:
            text = build()
            if self.made > self.rule_limit:
                raise OverBudget
            return text
        except OverBudget:
            if own > outer:
                raise  # an enclosing split's budget: that one gives up
            self.visited = visited
            return None
        finally:
            self.rule_limit = outer

    @functools.cached_property
    def judge(self) -> Judge:
        """Listed values judged by a validator (``applicators.listed_by_not``), made on first use."""
        return Judge(self.root, self.float_integers, self.format_assertion)

    # -- keywords every type reads

    def types(self, schema: dict[str, Any], pointer: str) -> list[str]:
        declared = schema.get("type")
        if declared is None:  # every type: each keyword constrains its own type only
            return [t for t in JSON_TYPES if t != "integer"]
        listed = declared if isinstance(declared, list) else [declared]
        if not listed:  # the metaschema asks for one type at least; none would be an empty grammar
            raise SchemaError(f"{pointer or '#'}: type must name at least one type, not []")
        for json_type in listed:
            if json_type not in JSON_TYPES:
                raise SchemaError(f"{pointer or '#'}: unknown type {json_type!r}")
        self.report.add(pointer, "type", ENFORCED)
        types = [t for t in JSON_TYPES if t in listed]
        if "integer" in types and "number" in types:
            types.remove("integer")
        if schema.get("nullable") is True and "null" not in types:
            types.append("null")
        if "nullable" in schema:
            self.report.add(pointer, "nullable", ENFORCED)
        return types

    def type_null(self, schema: dict[str, Any], pointer: str) -> str:
        return self.literal(None)

    def type_boolean(self, schema: dict[str, Any], pointer: str) -> str:
        return f"{self.literal(True)} | {self.literal(False)}"

    def has_type(self, value: Any, allowed: list[Any]) -> bool:
        """Whether ``value`` has one of the types (``1.0`` is an integer from draft 6 on)."""
        return has_type(value, allowed, self.float_integers)

    def count(self, schema: dict[str, Any], key: str, pointer: str) -> int | None:
        """A length or item count keyword's value, reported enforced."""
        value = self.count_value(schema, key, pointer)
        if value is not None:
            self.report.add(pointer, key, ENFORCED)
        return value

    def count_value(self, schema: dict[str, Any], key: str, pointer: str) -> int | None:
        """A count keyword's value (``2.0`` is 2), checked; None when absent."""
        if key not in schema:
            return None
        value = count_of(schema[key])
        if value is None:
            raise SchemaError(f"{pointer or '#'}: {key} must be a non-negative integer, not {schema[key]!r}")
        return value

    def unevaluated_annotation(self, schema: dict[str, Any], key: str, pointer: str) -> None:
        """``unevaluated*`` where a type's keywords are read: before 2019-09 an
        unknown keyword (an annotation); from 2019-09 on ``body`` takes it apart
        first (``unevaluated``), and a schema reaching here with it is wider, said so."""
        if key in schema and self.dependent_keywords:
            self.approximate(pointer, key, "not enforced here")
        elif key in schema:
            self.report.add(pointer, key, ENFORCED, "not a keyword before draft 2019-09: an annotation")

    # -- reporting

    def collapse_report(self, start: int) -> None:
        """One entry per place and keyword among those since ``start`` (branches of
        one place list its keywords each): the worst status, its first note (an
        approximation that widens is worse than one that narrows)."""
        rank = {ENFORCED: 0, APPROXIMATED: 2, REJECTED: 3}
        kept: dict[tuple[str, str], ReportEntry] = {}
        for entry in self.report.entries[start:]:
            key = (entry.pointer, entry.keyword)
            if key not in kept or rank[entry.status] - entry.narrower > rank[kept[key].status] - kept[key].narrower:
                kept[key] = entry
        self.report.entries[start:] = list(kept.values())

    def approximate(self, pointer: str, keyword: str, note: str, narrower: bool = False) -> None:
        """Reported approximated; an error under ``strict`` (a grammar ``narrower`` than the
        schema too: strict promises the schema's own language)."""
        if self.options.strict and not self.lenient:
            raise SchemaError(f"{pointer or '#'}: {keyword} cannot be enforced exactly ({note})")
        self.report.add(pointer, keyword, APPROXIMATED, note, narrower)

    def unsupported(self, pointer: str, keyword: str, note: str) -> str:
        if self.options.strict and not self.lenient:
            raise SchemaError(f"{pointer or '#'}: {keyword}: {note}")
        self.report.add(pointer, keyword, REJECTED, note + "; any value accepted")
        return self.any_value()

    def unknown_keywords(self, schema: dict[str, Any], pointer: str) -> None:
        known = set(ANNOTATIONS) | {k for keys in TYPE_KEYWORDS.values() for k in keys}
        known |= {"type", "nullable", "$defs", "definitions", "format", LATER}
        for key in schema:
            if key in ("$defs", "definitions"):
                self.report.add(pointer, key, ENFORCED, "definitions, used through $ref")
            elif key in CONDITIONAL and not self.conditional_keywords:
                self.report.add(pointer, key, ENFORCED, "not a keyword before draft 7: an annotation")
            elif key in ("then", "else"):  # with if, body() splits on them first
                self.report.add(pointer, key, ENFORCED, "no constraint without if")
            elif key in _UNSUPPORTED_KEYWORDS:
                self.approximate(pointer, key, "not enforced")
            elif key == "x-url":
                types = schema.get("type", "string")
                if types != "string" and not (isinstance(types, list) and "string" in types):
                    self.report.add(pointer, key, ENFORCED, "no string here: nothing to constrain")
                # else type_string reports it
            elif key not in known:
                # JSON Schema treats a keyword it does not define as an annotation: ignoring it is exact
                self.report.add(pointer, key, ENFORCED, "not a JSON Schema keyword: an annotation")

    # -- defined by the keyword families (``translate.Translator`` composes them)

    def node(self, schema: Any, pointer: str) -> str:
        """The nonterminal (or terminal) for the values ``schema`` accepts (``translate``)."""
        raise NotImplementedError

    def body(self, schema: dict[str, Any], pointer: str) -> str:
        """The alternatives of one schema object (``translate``)."""
        raise NotImplementedError

    def resolve(self, target: str, pointer: str) -> Any:
        """The subschema a local ``$ref`` names (``references``)."""
        raise NotImplementedError

    def merged(self, schema: dict[str, Any], parts: list[Any], pointer: str) -> tuple[dict[str, Any], bool]:
        """``schema`` and ``parts`` merged as ``allOf`` merges them, and whether exactly (``combinators``)."""
        raise NotImplementedError

    def bounds(self, schema: dict[str, Any], pointer: str, integer: bool) -> tuple[int | None, int | None]:
        """Integer bounds from ``minimum``/``maximum``/``exclusive*`` (``number_keywords``)."""
        raise NotImplementedError

    def number_bounds(self, schema: dict[str, Any], pointer: str
                      ) -> tuple[numbers.Bound | None, numbers.Bound | None] | None:
        """A number's tightest bounds as exact decimals (``number_keywords``)."""
        raise NotImplementedError

    def constant(self, value: Any) -> str:
        """The symbol of one listed value (``constants``)."""
        raise NotImplementedError
