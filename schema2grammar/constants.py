"""``const`` and ``enum``: the listed values the schema's other keywords allow
(judged value by value, ``complement`` and a validator), each written as a rule;
a listed object's members in any order."""

from __future__ import annotations

import re
from typing import Any

from schema2grammar import applicators, complement, conditions, ecma, regexes
from schema2grammar.core import TranslatorCore, spellable
from schema2grammar.report import ENFORCED
from schema2grammar.shared import ANNOTATIONS, VALIDATION_KEYWORDS, NoValue, SchemaError, json_equal

MAX_UNORDERED_MEMBERS = 9
"""Members of a listed object (``const``, ``enum``) written in any order: a rule per
set of members still to write, 512 for nine; a wider object keeps the listed order."""

_VALUE_COMBINATORS = ("allOf", "anyOf", "oneOf", "not", "if")
"""Keywords ``judged`` takes one value at a time (``if`` where it is a keyword: draft
7 on)."""


def _widest_object(value: Any) -> int:
    """The most members of an object in ``value`` (0: none)."""
    widest, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            widest = max(widest, len(item))
            stack += item.values()
        elif isinstance(item, list):
            stack += item
    return widest


class ConstantKeywords(TranslatorCore):
    """The symbols of listed values."""

    def constants(self, schema: dict[str, Any], pointer: str) -> str:
        """The listed values that the schema's type (and ``enum`` beside ``const``)
        allow; other keywords beside them are not checked against them (approximated)."""
        key = "const" if "const" in schema else "enum"
        values = [schema["const"]] if key == "const" else schema["enum"]
        if not isinstance(values, list) or not values:
            raise SchemaError(f"{pointer or '#'}: enum must be a non-empty list")
        widest = max((_widest_object(value) for value in values), default=0)
        if widest > MAX_UNORDERED_MEMBERS:
            self.approximate(pointer, key, f"an object of {widest} members: in the order listed (narrower), past "
                             f"{MAX_UNORDERED_MEMBERS} members written in any order", narrower=True)
        else:
            self.report.add(pointer, key, ENFORCED, "objects with their members in any order" if widest > 1 else "")
        if key == "const" and "enum" in schema:
            if not isinstance(schema["enum"], list):
                raise SchemaError(f"{pointer or '#'}: enum must be a list")
            self.report.add(pointer, "enum", ENFORCED, "checked against const")
            values = [v for v in values if any(json_equal(v, other) for other in schema["enum"])]
        if "type" in schema:
            self.report.add(pointer, "type", ENFORCED, f"checked against {key}")
            allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            values = [v for v in values if self.has_type(v, allowed)]
        if "not" in schema:
            values = applicators.listed_by_not(self, schema["not"], values, pointer)
        others = {k: v for k, v in schema.items() if k not in ("const", "enum", "type", "not") and k not in ANNOTATIONS}
        self.unknown_keywords({k: v for k, v in others.items() if k not in VALIDATION_KEYWORDS}, pointer)
        checked = {k: v for k, v in others.items() if k in VALIDATION_KEYWORDS}
        if checked:
            values = self.listed_within(checked, values, key, pointer)
        values = [value for value in values if spellable(value)]
        if not values:
            raise NoValue(f"{pointer or '#'}: no value of {key} satisfies the schema")
        return " | ".join(dict.fromkeys(self.constant(value) for value in values))

    def listed_within(self, keywords: dict[str, Any], values: list[Any], key: str, pointer: str) -> list[Any]:
        """The listed ``values`` that the other ``keywords`` beside them accept, judged
        one by one (``pattern`` by its ECMA-262 search, the rest as ``complement``
        reads them); where a value cannot be judged, all are kept and the keywords
        reported approximated."""
        pattern = keywords.get("pattern")
        rest = {k: v for k, v in keywords.items() if k != "pattern"}
        draft = applicators.draft_of(self)
        branching = any(k in rest for k in _VALUE_COMBINATORS)  # value by value, branch by branch
        kinds = complement.satisfying(rest, draft, pointer) if rest and not branching else None
        try:
            search = re.compile(ecma.python_regex(pattern)) if isinstance(pattern, str) else None
        except (ecma.Unsupported, re.error):
            search = None
        verdicts: list[bool | None] = []
        for value in values:
            verdict: bool | None = (self.judged(rest, value, draft, pointer) if branching else
                                    True if kinds is None else complement.accepts(kinds, value, draft))
            if "pattern" in keywords and isinstance(value, str) and verdict is not False:
                verdict = None if search is None else verdict and search.search(value) is not None
            verdicts.append(verdict)
        if None in verdicts or "x-url" in keywords:  # URLs are not judged here
            for other in keywords:
                self.approximate(pointer, other, f"not checked against the {key} values")
            return values
        for other in keywords:
            self.report.add(pointer, other, ENFORCED, f"checked against the {key} values")
        return [value for value, verdict in zip(values, verdicts) if verdict]

    def judged(self, schema: Any, value: Any, draft: conditions.Draft, pointer: str) -> bool | None:
        """Whether ``schema`` accepts ``value`` (None: not known here): its combinators
        one value at a time (``not`` the opposite verdict, an ``if`` the branch its
        verdict picks), the other keywords as ``complement`` reads them."""
        combinators = [k for k in _VALUE_COMBINATORS if isinstance(schema, dict) and k in schema
                       and (k != "if" or self.conditional_keywords)]
        if not combinators:
            return complement.accepts(complement.satisfying(schema, draft, pointer), value, draft)
        branches = ("then", "else") if "if" in combinators else ()
        rest = {k: v for k, v in schema.items() if k not in combinators and k not in branches}
        found = [self.judged(rest, value, draft, pointer)] if rest else []
        for key in combinators:
            where = f"{pointer}/{key}"
            if key == "not":
                verdict = self.judged(schema[key], value, draft, where)
                found.append(None if verdict is None else not verdict)
            elif key == "if":
                test = self.judged(schema["if"], value, draft, where)
                branch = "then" if test else "else"
                found.append(None if test is None else self.judged(schema.get(branch, True), value, draft,
                                                                   f"{pointer}/{branch}"))
            elif not isinstance(schema[key], list) or not schema[key]:
                raise SchemaError(f"{where}: {key} must be a non-empty list")
            else:
                each = [self.judged(part, value, draft, f"{where}/{i}") for i, part in enumerate(schema[key])]
                if key == "allOf":
                    found.append(False if False in each else None if None in each else True)
                elif key == "anyOf":
                    found.append(True if True in each else None if None in each else False)
                else:
                    found.append(None if None in each else each.count(True) == 1)
        return False if False in found else None if None in found else True

    def constant(self, value: Any) -> str:
        if isinstance(value, dict):
            return self.rule("const", f"{self.punct('{')} {self.constant_members(value)} {self.punct('}')}")
        if isinstance(value, list):
            comma = self.punct(",")
            items = f" {comma} ".join(self.constant(v) for v in value)
            return self.rule("const", f"{self.punct('[')} {items} {self.punct(']')}")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and self.float_integers and not self.readable:
            return self.terminal(regexes.number_equal_to(value))
        return self.literal(value)

    def constant_members(self, value: dict[str, Any]) -> str:
        """A listed object's members: in any order, each once, as JSON Schema
        compares objects (``{"a": 1, "b": 2}`` equals ``{"b": 2, "a": 1}``). A rule
        per set of members still to write (``2**n``); past ``MAX_UNORDERED_MEMBERS``
        members, in the order listed."""
        colon, comma = self.punct(":"), self.punct(",")
        members = [f"{self.literal(k)} {colon} {self.constant(v)}" for k, v in value.items()]
        if len(members) <= 1 or len(members) > MAX_UNORDERED_MEMBERS:
            return f" {comma} ".join(members)
        rest: dict[int, str] = {}  # members left (a bit each) -> the rule writing them, a comma between
        for left in sorted(range(1, 1 << len(members)), key=int.bit_count):
            ways = [members[i] if left == 1 << i else f"{members[i]} {comma} {rest[left & ~(1 << i)]}"
                    for i in range(len(members)) if left >> i & 1]
            rest[left] = self.rule("members", " | ".join(ways))
        return rest[(1 << len(members)) - 1]
