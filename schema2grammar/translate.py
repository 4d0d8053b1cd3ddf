"""JSON Schema to a lark grammar, one rule per schema place.

Each schema object becomes a nonterminal (``$ref`` targets once, so recursion of
any depth is a cycle of rules). Every terminal (a whole JSON token: punctuation,
string, number, literal) carries the whitespace before it, bounded per gap
(``Options.max_whitespace``), so the grammar stays LALR(1) where the schema allows
and no gap can grow without end. Leading whitespace only: the lexer's automaton
then has one run of whitespace states, shared by all terminals, instead of one
run after every punctuation mark (a run per mark is most of a schema's lexer
states, and each lexer state costs a walk of the vocabulary at compile time). Every keyword lands in
the report: enforced by the grammar, approximated (the grammar is wider, or in a
few named cases narrower), or rejected.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import unquote

from schema2grammar import ecma, property_names, regexes
from schema2grammar.options import MAX_INDENT_LEVELS, Options
from schema2grammar.report import APPROXIMATED, ENFORCED, REJECTED, Report

MAX_SCHEMA_NODES = 20_000
"""Schema places one translation may visit (a bound on grammar size and time)."""

MAX_DEPTH = 100
"""Schema places nested in one another (through ``allOf`` merges too): deeper is an
error, not a Python stack overflow."""

MAX_ITEMS_CHAIN = 256
"""``minItems``/``maxItems`` above this are enforced only up to it (reported)."""

ANNOTATIONS = frozenset(
    "$schema $id $comment $anchor $dynamicAnchor $vocabulary title description default examples "
    "deprecated readOnly writeOnly contentEncoding contentMediaType contentSchema discriminator "
    "x-guidance".split()
)
JSON_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
DEFINITIONS = ("$defs", "definitions")
MAX_MERGED_REFERENCES = 1_000
"""References one ``allOf`` merge may follow (a chain of them, or a cycle)."""


class SchemaError(ValueError):
    """A schema that cannot be translated (or, in strict mode, not exactly), naming
    the keyword and its JSON pointer."""


class NoValue(SchemaError):
    """A schema place that no value satisfies: an optional property, an ``anyOf``
    branch or a type of a list drops out; elsewhere the whole schema fails."""


def translate(schema: Any, options: Options | None = None) -> tuple[str, Report]:
    """The lark grammar of ``schema`` (a dict, a bool, or JSON text) and the report."""
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"the schema is not valid JSON: {exc}") from None
    return _Translator(schema, options or Options()).run()


def _escape_whitespace(text: str) -> str:
    """``text`` as a regex, its newlines, tabs and returns as escapes (lark refuses
    a raw newline in a pattern)."""
    return "".join({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c, re.escape(c)) for c in text)


NOWHERE = object()


def follow_pointer(root: Any, target: str) -> Any:
    """The value a ``#/...`` JSON pointer (percent-encoded, ``~0``/``~1`` escaped)
    names inside ``root``; ``NOWHERE`` when it names nothing."""
    current = root
    for raw in target[1:].split("/")[1:] if target != "#" else []:
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return NOWHERE
    return current


def _found_by(patterns: dict[str, Any] | None, name: str) -> list[Any]:
    """The schemas of the ``patterns`` (ECMA-262) that match somewhere in ``name``."""
    if patterns is None:
        return []
    return [sub for pattern, sub in patterns.items() if re.search(ecma.python_regex(pattern), name) is not None]


def _matchable(patterns: dict[str, Any] | None) -> dict[str, Any] | None:
    """``patterns`` when Python's ``re`` can run every one of them (to match declared
    names one by one), else None."""
    if patterns is None:
        return None
    try:
        for pattern in patterns:
            re.compile(ecma.python_regex(pattern))
    except (ecma.Unsupported, re.error):
        return None
    return patterns


def _pointer_token(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


class _Translator:
    def __init__(self, root: Any, options: Options) -> None:
        self.root = root
        self.options = options
        self.report = Report()
        self.rules: dict[str, str] = {}  # nonterminal -> its alternatives
        self.terminals: dict[str, str] = {}  # regex -> terminal name
        self.by_pointer: dict[str, str] = {}  # $ref target -> nonterminal
        self.visited = 0
        self.depth = 0
        self.empty: set[str] = set()  # $ref targets found to accept no value
        declared = root.get("$schema") if isinstance(root, dict) else None
        # drafts 3-7 ignore $ref's siblings; drafts 3-4 count 1.0 as no integer
        self.ref_alone = isinstance(declared, str) and re.search(r"draft-0[3-7]/", declared) is not None
        self.float_integers = not (isinstance(declared, str) and re.search(r"draft-0[34]/", declared) is not None)
        if options.float_integers is not None:
            self.float_integers = options.float_integers
        # 2019-09 and 2020-12 make format an annotation unless a vocabulary asks for more
        self.format_assertion = not (isinstance(declared, str) and re.search(r"/draft/20(19-09|20-12)/", declared) is not None)
        if options.format_assertion is not None:
            self.format_assertion = options.format_assertion
        gap = 0 if options.indent is not None or options.separators is not None else options.gap
        self.ws = f"[ \\t\\n\\r]{{0,{gap}}}" if gap else ""

    def run(self) -> tuple[str, Report]:
        start = self.node(self.root, "")
        lines = [f"start: {start}"]
        lines += [f"{name}: {self.rules[name]}" for name in self.reachable(start)]
        lines += [f"{name}: /{_lark_regex(pattern)}/" for pattern, name in self.terminals.items()]
        return "\n".join(lines) + "\n", self.report

    def reachable(self, start: str) -> list[str]:
        """The rules ``start`` uses, in definition order (a dropped place leaves
        rules behind that nothing refers to)."""
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
        """A terminal for one JSON scalar, spelled as ``json.dumps`` spells it."""
        return self.terminal(re.escape(json.dumps(value, ensure_ascii=False)))

    def rule(self, hint: str, body: str) -> str:
        name = f"{hint}{len(self.rules)}"
        self.rules[name] = body
        return name

    # -- schema places

    def node(self, schema: Any, pointer: str) -> str:
        """The nonterminal (or terminal) for the values ``schema`` accepts."""
        self.visited += 1
        if self.visited > MAX_SCHEMA_NODES:
            raise SchemaError(f"the schema has more than {MAX_SCHEMA_NODES} places to translate")
        self.depth += 1
        try:
            return self.place(schema, pointer)
        finally:
            self.depth -= 1

    def place(self, schema: Any, pointer: str) -> str:
        if self.depth > MAX_DEPTH:
            raise SchemaError(f"{pointer or '#'}: the schema nests more than {MAX_DEPTH} places deep")
        if schema is True or schema == {}:
            return self.any_value()
        if schema is False:
            raise NoValue(f"{pointer or '#'}: the schema false accepts no value")
        if not isinstance(schema, dict):
            raise SchemaError(f"{pointer or '#'}: a schema must be an object or a boolean, not {type(schema).__name__}")
        if "$ref" in schema:
            return self.reference(schema, pointer)
        name = f"n{len(self.rules)}"
        self.rules[name] = "<building>"  # reserve the name
        try:
            self.rules[name] = self.body(schema, pointer)
        except NoValue:
            del self.rules[name]
            raise
        return name

    def reference(self, schema: dict[str, Any], pointer: str) -> str:
        target = schema["$ref"]
        others = [key for key in schema if key != "$ref" and key not in ANNOTATIONS and key not in ("$defs", "definitions")]
        if not isinstance(target, str) or not target.startswith("#"):
            return self.unsupported(pointer, "$ref", f"only references inside the document are followed, not {target!r}")
        self.report.add(pointer, "$ref", ENFORCED)
        for key in schema:
            if key in ANNOTATIONS or key in ("$defs", "definitions"):
                self.report.add(pointer, key, ENFORCED, "annotation" if key in ANNOTATIONS else "")
        if others and self.ref_alone:
            for key in others:
                self.report.add(pointer, key, ENFORCED, "ignored beside $ref (drafts 3 to 7)")
        elif others:
            # memoized like a plain reference: a recursive target with siblings is a cycle too
            sibling = {key: schema[key] for key in others}
            return self.cached(target + " " + json.dumps(sibling, sort_keys=True), pointer,
                               lambda: {"allOf": [{"$ref": target}, sibling]}, pointer)
        return self.cached(target, target[1:], lambda: self.resolve(target, pointer), pointer)

    def cached(self, key: str, place: str, schema: Any, pointer: str) -> str:
        """One rule per reference ``key``, built once (``schema()`` gives what it
        stands for): recursion of any depth is a cycle of rules."""
        if key in self.empty:
            raise NoValue(f"{pointer or '#'}: $ref {key.split(' ')[0]!r} accepts no value")
        found = self.by_pointer.get(key)
        if found is not None:
            return found
        name = f"r{len(self.rules)}"
        known = set(self.by_pointer)
        self.by_pointer[key] = name
        self.rules[name] = "<building>"
        try:
            self.rules[name] = self.node(schema(), place)
        except NoValue:
            # forget what was cached meanwhile: those rules may stand on this one
            self.empty.add(key)
            for later in set(self.by_pointer) - known:
                del self.by_pointer[later]
            raise
        return name

    def resolve(self, target: str, pointer: str) -> Any:
        if not target.startswith("#/") and target != "#":
            return self.anchor(target, pointer)
        found = follow_pointer(self.root, target)
        if found is NOWHERE:
            raise SchemaError(f"{pointer or '#'}: $ref {target!r} points to nothing")
        return found

    def anchor(self, target: str, pointer: str) -> Any:
        """The subschema named ``#name`` by ``$anchor`` (2019+) or ``$id`` (drafts 6-7)."""
        name = target[1:]
        todo = [self.root]
        while todo:
            current = todo.pop()
            if isinstance(current, dict):
                if current.get("$anchor") == name or current.get("$id") == target:
                    return current
                # a subschema with an $id of its own is another resource: its anchors are not this one's
                todo.extend(value for value in current.values()
                            if not (isinstance(value, dict) and isinstance(value.get("$id"), str) and not value["$id"].startswith("#")))
            elif isinstance(current, list):
                todo.extend(current)
        raise SchemaError(f"{pointer or '#'}: $ref {target!r} points to nothing")

    def body(self, schema: dict[str, Any], pointer: str) -> str:
        """The alternatives of one schema object: its type branches, combined with
        enum/const and the combinators."""
        report = self.report
        for key in schema:
            if key in ANNOTATIONS:
                report.add(pointer, key, ENFORCED, "annotation")
        if "const" in schema or "enum" in schema:
            return self.constants(schema, pointer)
        if "anyOf" in schema or "oneOf" in schema:
            return self.alternatives(schema, pointer)
        if "allOf" in schema:
            return self.all_of(schema, pointer)
        branches = []
        empty: NoValue | None = None
        for json_type in self.types(schema, pointer):
            try:
                branches.append(getattr(self, "type_" + json_type)(schema, pointer))
            except NoValue as exc:  # that type has no value here; the others may
                empty = exc
        self.unknown_keywords(schema, pointer)
        if empty is not None and not branches:
            raise empty
        return " | ".join(branches)

    def types(self, schema: dict[str, Any], pointer: str) -> list[str]:
        declared = schema.get("type")
        if declared is None:  # every type: each keyword constrains its own type only
            return [t for t in JSON_TYPES if t != "integer"]
        listed = declared if isinstance(declared, list) else [declared]
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

    # -- keywords by type

    def type_null(self, schema: dict[str, Any], pointer: str) -> str:
        return self.literal(None)

    def type_boolean(self, schema: dict[str, Any], pointer: str) -> str:
        return f"{self.literal(True)} | {self.literal(False)}"

    def type_string(self, schema: dict[str, Any], pointer: str) -> str:
        """One terminal: the pattern, else the format, else the length range (one
        terminal cannot intersect them: what is left out is approximated)."""
        report = self.report
        pattern = self.pattern(schema, pointer)
        if pattern is not None:
            for key in ("minLength", "maxLength", "format"):
                if key in schema:
                    self.approximate(pointer, key, "not enforced beside pattern")
            return self.terminal('"' + pattern + '"')
        low = self.count(schema, "minLength", pointer) or 0
        high = self.count(schema, "maxLength", pointer)
        if high is not None and high > regexes.MAX_LENGTH_BOUND or low > regexes.MAX_LENGTH_BOUND:
            self.approximate(pointer, "maxLength", f"length bounds above {regexes.MAX_LENGTH_BOUND} are not enforced")
            low, high = min(low, regexes.MAX_LENGTH_BOUND), None
        if high is not None and high < low:
            raise NoValue(f"{pointer or '#'}: maxLength {high} is below minLength {low}")
        fmt = schema.get("format")
        if fmt is not None and not self.format_assertion:
            report.add(pointer, "format", ENFORCED, "an annotation in this draft: not checked (format_assertion=True checks it)")
        elif fmt is not None:
            if fmt in regexes.FORMATS and low == 0 and high is None:
                report.add(pointer, "format", ENFORCED, regexes.FORMAT_NOTES.get(fmt, ""))
                pattern = regexes.FORMATS[fmt]
                if not self.options.leap_seconds:
                    pattern = pattern.replace(regexes.LEAP_SECOND, ")")
                return self.terminal('"' + pattern + '"')
            self.approximate(pointer, "format", f"format {fmt!r} is not enforced: any string")
        return self.terminal(regexes.string_of_length(low, high))

    def pattern(self, schema: dict[str, Any], pointer: str) -> str | None:
        """The regex for ``pattern`` (None when there is none, or it cannot be exact)."""
        if "pattern" not in schema:
            return None
        source = schema["pattern"]
        if not isinstance(source, str):
            raise SchemaError(f"{pointer or '#'}: pattern must be a string")
        try:
            regex = ecma.json_string_regex(source)
        except ecma.Unsupported as exc:
            self.approximate(pointer, "pattern", f"{exc}: any string")
            return None
        self.report.add(pointer, "pattern", ENFORCED, "characters it names are spelled as json.dumps spells them")
        return regex

    def type_integer(self, schema: dict[str, Any], pointer: str) -> str:
        low, high = self.bounds(schema, pointer, integer=True)
        if "multipleOf" in schema:
            self.approximate(pointer, "multipleOf", "not enforced")
        if low is not None and high is not None and low > high:
            raise NoValue(f"{pointer or '#'}: no integer lies within the bounds")
        if not self.float_integers:
            return self.terminal(regexes.INTEGER if low is None and high is None else regexes.integer_range(low, high))
        return self.terminal(regexes.integer_spellings(low, high))

    def type_number(self, schema: dict[str, Any], pointer: str) -> str:
        if "multipleOf" in schema:
            self.approximate(pointer, "multipleOf", "not enforced on non-integer numbers")
        keys = [key for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if key in schema]
        if not keys:
            return self.terminal(regexes.NUMBER)
        found = self.number_bounds(schema, pointer)
        if found is None:
            for key in keys:
                self.approximate(pointer, key, "bounds that are not integers (or above 1e15) are not enforced on numbers yet")
            return self.terminal(regexes.NUMBER)
        regex = regexes.number_range(*found)
        if regex is None:
            raise NoValue(f"{pointer or '#'}: no number lies within the bounds")
        for key in keys:
            self.report.add(pointer, key, ENFORCED, "numbers spelled as json.dumps spells them")
        return self.terminal(regex)

    def number_bounds(self, schema: dict[str, Any], pointer: str) -> tuple[regexes.Bound | None, regexes.Bound | None] | None:
        """The tightest lower and upper bounds, when every bound is an integer within
        ``MAX_NUMBER_BOUND`` (None otherwise: not enforced)."""
        low: regexes.Bound | None = None
        high: regexes.Bound | None = None
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            value = schema.get(key)
            if value is None or isinstance(value, bool):  # draft 4: exclusive* qualify minimum/maximum
                continue
            if not isinstance(value, (int, float)) or value != value:
                raise SchemaError(f"{pointer or '#'}: {key} must be a number")
            if isinstance(value, float) and (math.isinf(value) or value != int(value)) or abs(value) > regexes.MAX_NUMBER_BOUND:
                return None
            exclusive = key.startswith("exclusive") or schema.get("exclusive" + key[0].upper() + key[1:]) is True
            bound = (int(value), exclusive)
            if key in ("minimum", "exclusiveMinimum"):
                low = bound if low is None or (bound[0], bound[1]) > (low[0], low[1]) else low
            else:
                high = bound if high is None or (bound[0], not bound[1]) < (high[0], not high[1]) else high
        return low, high

    def bounds(self, schema: dict[str, Any], pointer: str, integer: bool) -> tuple[int | None, int | None]:
        """Integer bounds from minimum/maximum/exclusive* (drafts 4 and 6+)."""
        low: int | None = None
        high: int | None = None
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if key not in schema:
                continue
            value = schema[key]
            self.report.add(pointer, key, ENFORCED)
            if isinstance(value, bool):  # draft 4: exclusive* qualify minimum/maximum
                continue
            if not isinstance(value, (int, float)) or value != value:
                raise SchemaError(f"{pointer or '#'}: {key} must be a number")
            if isinstance(value, float) and math.isinf(value):  # 1e400 read as infinity: a bound beyond every integer
                if (value < 0) == (key in ("minimum", "exclusiveMinimum")):
                    continue
                raise NoValue(f"{pointer or '#'}: no integer lies within the bounds")
            exclusive = key.startswith("exclusive") or schema.get("exclusive" + key[0].upper() + key[1:]) is True
            if key in ("minimum", "exclusiveMinimum"):
                bound = int(value) + 1 if exclusive and value == int(value) else -(-value // 1)
                low = int(bound) if low is None else max(low, int(bound))
            else:
                bound = int(value) - 1 if exclusive and value == int(value) else value // 1
                high = int(bound) if high is None else min(high, int(bound))
        return low, high

    def type_array(self, schema: dict[str, Any], pointer: str) -> str:
        report = self.report
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # draft 4-2019: items as a tuple
            prefix, items = items, schema.get("additionalItems", True)
            if "additionalItems" in schema:
                report.add(pointer, "additionalItems", ENFORCED)
        if "prefixItems" in schema or isinstance(schema.get("items"), list):
            report.add(pointer, "prefixItems" if "prefixItems" in schema else "items", ENFORCED)
        if "items" in schema and not isinstance(schema.get("items"), list):
            report.add(pointer, "items", ENFORCED)
        low = self.count(schema, "minItems", pointer) or 0
        high = self.count(schema, "maxItems", pointer)
        for key in ("uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems"):
            if key in schema and not (key == "uniqueItems" and schema[key] is False):
                self.approximate(pointer, key, "not enforced yet")
        if high is not None and high < low:
            raise NoValue(f"{pointer or '#'}: maxItems {high} is below minItems {low}")
        fixed: list[str] = []
        rest: str | None = None
        try:
            for i, sub in enumerate(prefix or []):
                fixed.append(self.node(sub, f"{pointer}/prefixItems/{i}"))
            rest = self.node(items, f"{pointer}/items")
        except NoValue:  # no value for item k: arrays end before it
            high = len(fixed) if high is None else min(high, len(fixed))
            if high < low:
                raise
        return self.sequence(fixed, rest, low, high, pointer)

    def sequence(self, fixed: list[str], rest: str | None, low: int, high: int | None, pointer: str) -> str:
        """``[`` fixed items, then ``rest`` items, ``low..high`` items in all ``]``."""
        open_, close, comma = self.punct("["), self.punct("]"), self.punct(",")
        if low > MAX_ITEMS_CHAIN or (high is not None and high > MAX_ITEMS_CHAIN):
            self.approximate(pointer, "maxItems", f"item counts above {MAX_ITEMS_CHAIN} are not enforced")
            low = min(low, MAX_ITEMS_CHAIN)
            high = None
        # tail[k]: what may follow once k items are written
        tail: dict[int, str] = {}
        if high is None:
            # from `loop` items on, the same rule repeats: close, or one more rest item
            loop = max(low, len(fixed), 1)
            name = f"items{len(self.rules)}"
            self.rules[name] = f"{close} | {comma} {rest} {name}" if rest is not None else close
            tail[loop] = name
            top = loop - 1
        else:
            tail[high] = close
            top = high - 1
        for k in range(top, -1, -1):
            options = [close] if k >= low else []
            item = fixed[k] if k < len(fixed) else rest
            if item is not None:
                options.append(f"{comma if k else ''} {item} {tail[k + 1]}".strip())
            if not options:
                raise NoValue(f"{pointer or '#'}: no array satisfies the item constraints")
            tail[k] = self.rule("items", " | ".join(options))
        return f"{open_} {tail[0]}"

    def type_object(self, schema: dict[str, Any], pointer: str) -> str:
        report = self.report
        properties: dict[str, Any] = schema.get("properties", {})
        listed = schema.get("required", [])
        required = set(listed)
        for key in ("properties", "required"):
            if key in schema:
                report.add(pointer, key, ENFORCED)
        additional = schema.get("additionalProperties", True)
        if self.options.closed_objects and "additionalProperties" not in schema and "patternProperties" not in schema:
            additional = False  # narrower than the schema: valid outputs stay valid
            report.add(pointer, "additionalProperties", APPROXIMATED, "absent: no extra properties (closed_objects)")
        for key in ("propertyNames", "minProperties", "maxProperties", "dependentRequired",
                    "dependentSchemas", "dependencies", "unevaluatedProperties"):
            if key in schema:
                self.approximate(pointer, key, "not enforced yet")
        missing = [key for key in dict.fromkeys(listed) if key not in properties]
        patterns = self.pattern_properties(schema, pointer)
        names = None if patterns is None else self.name_regions(
            patterns, list(properties) + missing, additional is not False, pointer)
        if names is None:
            patterns = _matchable(patterns)  # declared names are still matched one by one
        if names is None and "patternProperties" in schema and additional is not True:
            # an extra name may match a pattern or not: its value satisfies one of their schemas
            self.approximate(pointer, "additionalProperties", "beside patternProperties whose names are not "
                             "enforced: an extra property takes a value of some pattern's schema or of this one")
            others = list(schema["patternProperties"].values())
            additional = {"anyOf": others if additional is False else [*others, additional]}
        elif "additionalProperties" in schema:
            report.add(
                pointer, "additionalProperties", ENFORCED,
                "extra properties come after the declared ones; a declared name spelled with \\u escapes counts as extra"
                if names is None else "extra properties come after the declared ones, names spelled as json.dumps spells them",
            )
        colon, comma = self.punct(":"), self.punct(",")
        members: list[tuple[str, bool]] = []
        for key, sub in properties.items():
            key_pointer = f"{pointer}/properties/{_pointer_token(key)}"
            matched = _found_by(patterns, key)
            try:
                value = self.node({"allOf": [sub, *matched]} if matched else sub, key_pointer)
            except NoValue:
                if key in required:
                    raise
                continue  # a property no value satisfies must be absent
            members.append((f"{self.literal(key)} {colon} {value}", key in required))
        for key in missing:  # required but undeclared: in the order `required` lists them
            matched = _found_by(patterns, key)
            if matched:
                sub = {"allOf": matched}
            elif additional is False:
                raise NoValue(f"{pointer or '#'}: required property {key!r} is not allowed")
            else:
                sub = additional
            members.append((f"{self.literal(key)} {colon} {self.node(sub, f'{pointer}/required')}", True))
        extras: list[str] = []
        if names is not None:
            assert patterns is not None
            for region in names:
                chosen = [list(patterns)[i] for i in region.matched]
                if chosen:
                    sub = patterns[chosen[0]] if len(chosen) == 1 else {"allOf": [patterns[p] for p in chosen]}
                    where = f"{pointer}/patternProperties/{_pointer_token(chosen[0])}"
                elif additional is False:
                    continue
                else:
                    sub, where = additional, f"{pointer}/additionalProperties"
                try:
                    value = self.node(sub, where)
                except NoValue:  # no value satisfies these names' schemas: none of them allowed
                    continue
                extras.append(f"{self.terminal(chr(34) + region.regex + chr(34))} {colon} {value}")
        else:
            try:
                extra_value = None if additional is False else self.node(additional, f"{pointer}/additionalProperties")
            except NoValue:  # additionalProperties no value satisfies: none allowed
                extra_value = None
            if extra_value is not None:
                other = regexes.string_except(list(properties) + missing)
                if other is None:
                    self.approximate(pointer, "additionalProperties", "a declared name with an escaped character may repeat as an extra property")
                    other = regexes.STRING
                extras.append(f"{self.terminal(other)} {colon} {extra_value}")
        extra = None if not extras else extras[0] if len(extras) == 1 else self.rule("extra", " | ".join(extras))
        # started: what may follow once a member was written; fresh: before any
        started = fresh = ""  # "" stands for nothing more
        if extra is not None:
            started = f"more{len(self.rules)}"
            self.rules[started] = f"{comma} {extra} {started} |"
            fresh = self.rule("first", f"{extra} {started} |")
        for member, needed in reversed(members):
            new_started = [f"{comma} {member} {started}".strip()]
            new_fresh = [f"{member} {started}".strip()]
            if not needed:
                new_started.append(started)
                new_fresh.append(fresh)
            started = self.rule("more", " | ".join(new_started))
            fresh = self.rule("first", " | ".join(new_fresh))
        return f"{self.punct('{')} {fresh} {self.punct('}')}"

    def pattern_properties(self, schema: dict[str, Any], pointer: str) -> dict[str, Any] | None:
        """``patternProperties`` checked (None when absent)."""
        if "patternProperties" not in schema:
            return None
        patterns = schema["patternProperties"]
        if not isinstance(patterns, dict):
            raise SchemaError(f"{pointer or '#'}/patternProperties: must be an object")
        return patterns

    def name_regions(
        self, patterns: dict[str, Any], declared: list[str], unmatched: bool, pointer: str
    ) -> list[property_names.Region] | None:
        """The names beside the ``declared`` ones, split by the patterns they match
        (those matching none only when ``unmatched``); None, reported, when no
        regex of bounded size says so."""
        try:
            found = property_names.regions(list(patterns), declared, unmatched)
        except ecma.Unsupported as exc:
            self.approximate(pointer, "patternProperties", f"not enforced: {exc}")
            return None
        self.report.add(pointer, "patternProperties", ENFORCED, "names spelled as json.dumps spells them")
        return found

    # -- combinators, constants, any value

    def alternatives(self, schema: dict[str, Any], pointer: str) -> str:
        keyword = "anyOf" if "anyOf" in schema else "oneOf"
        options = schema[keyword]
        if not isinstance(options, list) or not options:
            raise SchemaError(f"{pointer or '#'}: {keyword} must be a non-empty list")
        rest = {k: v for k, v in schema.items() if k != keyword and k not in ANNOTATIONS and k not in DEFINITIONS}
        for key in DEFINITIONS:
            if key in schema:
                self.report.add(pointer, key, ENFORCED, "definitions, used through $ref")
        branches = []
        for i, option in enumerate(options):
            merged = {"allOf": [rest, option]} if rest else option  # the schema's own properties first
            try:
                branches.append(self.node(merged, f"{pointer}/{keyword}/{i}"))
            except NoValue:
                continue  # a branch no value satisfies
        if not branches:
            raise NoValue(f"{pointer or '#'}: no branch of {keyword} accepts a value")
        if keyword == "oneOf" and not _disjoint_types(options):
            self.approximate(pointer, "oneOf", "treated as anyOf: a value matching several branches is not refused")
        else:
            self.report.add(pointer, keyword, ENFORCED)
        return " | ".join(branches)

    def all_of(self, schema: dict[str, Any], pointer: str) -> str:
        parts = schema["allOf"]
        if not isinstance(parts, list):
            raise SchemaError(f"{pointer or '#'}: allOf must be a list")
        self.depth += 1  # merged parts may hold allOf again: nesting, as through node()
        try:
            return self.merge(schema, parts, pointer)
        finally:
            self.depth -= 1

    def merge(self, schema: dict[str, Any], parts: list[Any], pointer: str) -> str:
        if self.depth > MAX_DEPTH:
            raise SchemaError(f"{pointer or '#'}: allOf nests more than {MAX_DEPTH} deep")
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        if "additionalItems" in merged and not isinstance(merged.get("items"), list):
            del merged["additionalItems"]  # a no-op without its own tuple items (the parts' do not count)
        sources = [merged.copy()]
        exact = True
        for part in self.referenced_parts(parts, pointer):
            if part is True or part == {}:
                continue
            if part is False:
                raise NoValue(f"{pointer or '#'}: allOf holds false")
            if not isinstance(part, dict):
                raise SchemaError(f"{pointer or '#'}: allOf holds {part!r}")
            if "additionalItems" in part and not isinstance(part.get("items"), list):
                part = {k: v for k, v in part.items() if k != "additionalItems"}  # a no-op without tuple items
            sources.append(part)
            for key, value in part.items():
                if key not in merged:
                    merged[key] = value
                elif key == "properties":  # a name both declare: its value must satisfy both
                    merged[key] = {**merged[key], **{
                        name: {"allOf": [merged[key][name], sub]} if name in merged[key] and merged[key][name] != sub else sub
                        for name, sub in value.items()}}
                elif key == "required":
                    merged[key] = list(dict.fromkeys(merged[key] + value))
                elif merged[key] != value and key not in ANNOTATIONS:
                    exact = False
        names = _names(merged)
        if any(key in source for source in sources for key in _SIBLING_BOUND if names - _names(source)):
            exact = False  # additionalProperties would judge the other parts' names too: left to them
        if any(_after_prefix(source) and _prefix(merged) != _prefix(source) for source in sources):
            exact = False  # items would start after the other parts' prefixItems: left to them
        if exact:
            self.report.add(pointer, "allOf", ENFORCED, "merged")
        else:
            self.approximate(pointer, "allOf", "branches disagree on a keyword, or one limits the others' "
                             "properties: the first one's value is used")
        return self.body(merged, pointer)

    def referenced_parts(self, parts: list[Any], pointer: str) -> list[Any]:
        """``allOf``'s parts with each local ``$ref`` replaced by what it points to,
        plus its siblings from 2019-09 on (before, they are ignored beside it)."""
        pending = list(reversed(parts))
        found: list[Any] = []
        followed = 0
        while pending:
            part = pending.pop()
            if not isinstance(part, dict) or "$ref" not in part:
                found.append(part)
                continue
            target = part["$ref"]
            if not isinstance(target, str) or not target.startswith("#"):
                self.unsupported(pointer, "$ref", f"only references inside the document are followed, not {target!r}")
                found.append({k: v for k, v in part.items() if k != "$ref"})  # its siblings still apply
                continue
            followed += 1
            if followed > MAX_MERGED_REFERENCES:
                raise SchemaError(f"{pointer or '#'}: allOf follows more than {MAX_MERGED_REFERENCES} references "
                                  "(a reference to itself?)")
            siblings = {k: v for k, v in part.items() if k != "$ref" and k not in ANNOTATIONS and k not in DEFINITIONS}
            if siblings and self.ref_alone:
                for key in siblings:
                    self.report.add(pointer, key, ENFORCED, "ignored beside $ref (drafts 3 to 7)")
                siblings = {}
            if siblings:
                pending.append(siblings)
            pending.append(self.resolve(target, pointer))
        return found

    def constants(self, schema: dict[str, Any], pointer: str) -> str:
        """The listed values that the schema's type (and ``enum`` beside ``const``)
        allow; other keywords beside them are not checked against them (approximated)."""
        key = "const" if "const" in schema else "enum"
        values = [schema["const"]] if key == "const" else schema["enum"]
        if not isinstance(values, list) or not values:
            raise SchemaError(f"{pointer or '#'}: enum must be a non-empty list")
        self.report.add(pointer, key, ENFORCED)
        if key == "const" and "enum" in schema:
            if not isinstance(schema["enum"], list):
                raise SchemaError(f"{pointer or '#'}: enum must be a list")
            self.report.add(pointer, "enum", ENFORCED, "checked against const")
            values = [v for v in values if any(_json_equal(v, other) for other in schema["enum"])]
        if "type" in schema:
            self.report.add(pointer, "type", ENFORCED, f"checked against {key}")
            allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            values = [v for v in values if self.has_type(v, allowed)]
        for other in schema:
            if other in ("$defs", "definitions"):
                self.report.add(pointer, other, ENFORCED, "definitions, used through $ref")
            elif other not in ("const", "enum", "type") and other not in ANNOTATIONS:
                self.approximate(pointer, other, f"not checked against the {key} values")
        if not values:
            raise NoValue(f"{pointer or '#'}: no value of {key} satisfies the schema")
        return " | ".join(dict.fromkeys(self.constant(value) for value in values))

    def has_type(self, value: Any, allowed: list[Any]) -> bool:
        """Whether ``value`` has one of the types (``1.0`` is an integer from draft 6 on)."""
        kind = _json_type(value)
        if kind == "number" and self.float_integers and isinstance(value, float) and value.is_integer():
            kind = "integer"
        return kind in allowed or (kind == "integer" and "number" in allowed)

    def constant(self, value: Any) -> str:
        if isinstance(value, dict):
            colon, comma = self.punct(":"), self.punct(",")
            members = f" {comma} ".join(f"{self.literal(k)} {colon} {self.constant(v)}" for k, v in value.items())
            return self.rule("const", f"{self.punct('{')} {members} {self.punct('}')}")
        if isinstance(value, list):
            comma = self.punct(",")
            items = f" {comma} ".join(self.constant(v) for v in value)
            return self.rule("const", f"{self.punct('[')} {items} {self.punct(']')}")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and self.float_integers:
            return self.terminal(regexes.number_equal_to(value))
        return self.literal(value)

    def any_value(self) -> str:
        """Any JSON value (with this translation's whitespace)."""
        if "value" not in self.rules:
            colon, comma = self.punct(":"), self.punct(",")
            string = self.terminal(regexes.STRING)
            self.rules["value"] = (
                f"{self.punct('{')} [{string} {colon} value ({comma} {string} {colon} value)*] {self.punct('}')}"
                f" | {self.punct('[')} [value ({comma} value)*] {self.punct(']')}"
                f" | {string} | {self.terminal(regexes.NUMBER)}"
                f" | {self.literal(True)} | {self.literal(False)} | {self.literal(None)}"
            )
        return "value"

    def count(self, schema: dict[str, Any], key: str, pointer: str) -> int | None:
        """A length or item count keyword's value (``2.0`` is 2), reported enforced."""
        if key not in schema:
            return None
        value = schema[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 or (
                isinstance(value, float) and not value.is_integer()):
            raise SchemaError(f"{pointer or '#'}: {key} must be a non-negative integer, not {value!r}")
        self.report.add(pointer, key, ENFORCED)
        return int(value)

    # -- reporting

    def approximate(self, pointer: str, keyword: str, note: str) -> None:
        if self.options.strict:
            raise SchemaError(f"{pointer or '#'}: {keyword} cannot be enforced exactly ({note})")
        self.report.add(pointer, keyword, APPROXIMATED, note)

    def unsupported(self, pointer: str, keyword: str, note: str) -> str:
        if self.options.strict:
            raise SchemaError(f"{pointer or '#'}: {keyword}: {note}")
        self.report.add(pointer, keyword, REJECTED, note + "; any value accepted")
        return self.any_value()

    def unknown_keywords(self, schema: dict[str, Any], pointer: str) -> None:
        known = set(ANNOTATIONS) | {k for keys in _TYPE_KEYWORDS.values() for k in keys}
        known |= {"type", "nullable", "$defs", "definitions", "format"}
        for key in schema:
            if key in ("$defs", "definitions"):
                self.report.add(pointer, key, ENFORCED, "definitions, used through $ref")
            elif key in ("not", "if", "then", "else"):
                self.approximate(pointer, key, "not enforced yet")
            elif key in _UNSUPPORTED_KEYWORDS:
                self.approximate(pointer, key, "not enforced")
            elif key not in known:
                # JSON Schema treats a keyword it does not define as an annotation: ignoring it is exact
                self.report.add(pointer, key, ENFORCED, "not a JSON Schema keyword: an annotation")


_UNSUPPORTED_KEYWORDS = frozenset(
    "$ref $dynamicRef $recursiveRef $recursiveAnchor disallow extends divisibleBy".split()
)
"""Keywords that validate in some draft and that no translation here enforces."""

_TYPE_KEYWORDS = {
    "object": ("properties", "required", "additionalProperties", "patternProperties", "propertyNames",
               "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "dependencies",
               "unevaluatedProperties"),
    "array": ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains",
              "minContains", "maxContains", "unevaluatedItems"),
    "string": ("minLength", "maxLength", "pattern"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}


_RULE_NAME = re.compile(r"\b[a-z]\w*")
_SIBLING_BOUND = frozenset({"additionalProperties", "unevaluatedProperties"})
"""Keywords whose meaning depends on their own schema's ``properties``."""


def _after_prefix(schema: dict[str, Any]) -> bool:
    """Whether a schema object constrains the items after its own tuple (whose
    meaning then depends on that tuple's length)."""
    items = schema.get("items")
    return "additionalItems" in schema or "unevaluatedItems" in schema or (items is not None and not isinstance(items, list))


def _prefix(schema: dict[str, Any]) -> int:
    """How many items a schema object's tuple (``prefixItems``, or a list ``items``) holds."""
    items = schema.get("prefixItems", schema.get("items"))
    return len(items) if isinstance(items, list) else 0


def _names(schema: dict[str, Any]) -> set[str]:
    """The property names (and patterns) a schema object declares."""
    return set(schema.get("properties", {})) | set(schema.get("patternProperties", {}))


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``true != 1``, containers item by item."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _disjoint_types(options: list[Any]) -> bool:
    """Whether the branches' declared types exclude each other (then oneOf = anyOf)."""
    seen: set[str] = set()
    for option in options:
        if not isinstance(option, dict) or "type" not in option:
            return False
        declared = option["type"] if isinstance(option["type"], list) else [option["type"]]
        kinds = {"number" if t == "integer" else t for t in declared}
        if kinds & seen:
            return False
        seen |= kinds
    return True


def _lark_regex(pattern: str) -> str:
    """``pattern`` inside lark's ``/.../``. Lark reads ``\\\\"`` there as ``\\"`` (a
    bare quote), so every quote is written ``\\x22``; our regexes never escape a
    quote themselves (``re.escape`` leaves it bare)."""
    return pattern.replace("/", "\\/").replace('"', "\\x22")
