"""An ``allOf`` whose conditionals each test one property against a constant, as
one branch per case instead of conditionals nested in one another.

Schemas written as a switch on a discriminator (``{"if": {"properties": {"type":
{"const": "a"}}}, "then": ...}`` once per value, up to a hundred times) would
otherwise put each conditional into both branches of the one before: 2^n copies of
the object's grammar, so past a few only the first was kept (reported). Each value
the property may take decides every ``if`` of such a switch at once:

- the property holds one of the tested constants: the ``if``s testing that one
  hold, the others fail;
- the property holds another value: every ``if`` fails;
- the property is absent: an ``if`` holds unless it requires the property;
- the value is not an object: an ``if`` holds unless it requires the object type.

Each case is the schema's other keywords, the case's guard, and the ``then`` or
``else`` of every conditional. The cases are disjoint and cover every value, so
their union is the ``allOf`` exactly wherever each case's merge is exact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator

from schema2grammar.applicators import CONDITIONAL
from schema2grammar.shared import ANNOTATIONS, has_type, json_equal

MAX_SWITCH_VALUES = 32
"""Constants one switch may test: each is a case, a copy of the object's grammar
with its own property names (so its own terminal for the other names), and the
other values' case writes the complement of all of them. Past it the conditionals
are merged as before (nested, the first few kept, reported). In MaskBench the
switches test at most 17, but for one (cloudify: 125, whose cases took minutes)."""

MAX_SWITCH_RULES = 20_000
"""Rules the cases of one switch may add; past it, as past ``MAX_SWITCH_VALUES``."""

NOT_OBJECTS = ["array", "boolean", "null", "number", "string"]


@dataclass(frozen=True)
class Conditional:
    """One ``if``/``then``/``else`` of a switch: its ``if`` tests the switch's
    property against ``value``."""

    value: Any
    needs_property: bool  # the if lists the property in required
    needs_object: bool  # the if says type object
    then: Any
    otherwise: Any

    def chosen(self, holds: bool) -> Any:
        return self.then if holds else self.otherwise


@dataclass(frozen=True)
class Switch:
    """Conditionals whose ``if``s each test the property ``name`` against one of
    ``values``."""

    name: str
    conditionals: list[Conditional]
    values: list[Any]  # the constants they test, each once

    def cases(self, others: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], list[Any]]]:
        """(what the case is, its guard, the then or else of each conditional, true
        left out) per case that the schema's ``others`` keywords leave possible:
        a value their ``enum``/``const`` for the property lists, absent unless they
        require it, not an object unless they say type object."""
        name, values = self.name, self.values
        listed = _listed(others, name)
        for value in values:
            if listed is None or any(json_equal(value, item) for item in listed):
                yield (f"{name!r} is {json.dumps(value)}",
                       {"type": "object", "required": [name], "properties": {name: {"const": value}}},
                       self._chosen([json_equal(c.value, value) for c in self.conditionals]))
        if listed is None or any(not any(json_equal(item, value) for value in values) for item in listed):
            yield (f"{name!r} holds another value",
                   {"type": "object", "required": [name], "properties": {name: {"not": {"enum": values}}}},
                   self._chosen([False] * len(self.conditionals)))
        absent = None if name in others.get("required", []) else \
            self._chosen([not c.needs_property for c in self.conditionals])
        not_object = None if others.get("type") in ("object", ["object"]) else \
            self._chosen([not c.needs_object for c in self.conditionals])
        if absent is not None and absent == not_object:  # "no such property" holds of every non-object too
            yield f"{name!r} is absent or the value is not an object", {"properties": {name: False}}, absent
            return
        if absent is not None:
            yield f"{name!r} is absent", {"type": "object", "properties": {name: False}}, absent
        if not_object is not None:
            yield "the value is not an object", {"type": NOT_OBJECTS}, not_object

    def _chosen(self, holds: list[bool]) -> list[Any]:
        picked = [c.chosen(verdict) for c, verdict in zip(self.conditionals, holds)]
        return [part for part in picked if part is not True and part != {}]


def split(parts: list[Any], float_integers: bool) -> tuple[list[Any], Switch] | None:
    """``parts`` (an ``allOf``'s, its holder's own keywords first) without their
    conditionals, and those as a ``Switch``; None unless there are two or more and
    every ``if`` tests the same property against a constant."""
    kept: list[Any] = []
    conditionals: list[Conditional] = []
    names: set[str] = set()
    for part in parts:
        if not isinstance(part, dict) or "if" not in part or ("then" not in part and "else" not in part):
            kept.append(part)
            continue
        tested = _tested(part["if"], float_integers)
        if tested is None:
            return None
        name, value, needs_property, needs_object = tested
        names.add(name)
        conditionals.append(Conditional(value, needs_property, needs_object,
                                        part.get("then", True), part.get("else", True)))
        kept.append({k: v for k, v in part.items() if k not in CONDITIONAL})
    if len(conditionals) < 2 or len(names) != 1:
        return None
    values: list[Any] = []
    for conditional in conditionals:
        if not any(json_equal(conditional.value, seen) for seen in values):
            values.append(conditional.value)
    if len(values) > MAX_SWITCH_VALUES:
        return None
    return kept, Switch(names.pop(), conditionals, values)


def _tested(schema: Any, float_integers: bool) -> tuple[str, Any, bool, bool] | None:
    """(property, constant, whether the property is required, whether an object
    is) for an ``if`` that tests one property against one constant, else None."""
    if not isinstance(schema, dict) or set(schema) - ANNOTATIONS - {"properties", "required", "type"}:
        return None
    if schema.get("type", "object") not in ("object", ["object"]):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict) or len(properties) != 1:
        return None
    [(name, sub)] = properties.items()
    if schema.get("required", []) not in ([], [name]):
        return None
    if not isinstance(sub, dict) or set(sub) - ANNOTATIONS - {"const", "enum", "type"}:
        return None
    if "const" in sub and "enum" not in sub:
        value = sub["const"]
    elif "enum" in sub and "const" not in sub and isinstance(sub["enum"], list) and len(sub["enum"]) == 1:
        value = sub["enum"][0]
    else:
        return None
    if "type" in sub and not has_type(value, sub["type"] if isinstance(sub["type"], list) else [sub["type"]],
                                      float_integers):
        return None
    return name, value, bool(schema.get("required")), "type" in schema


def _listed(others: dict[str, Any], name: str) -> list[Any] | None:
    """The values the property's own ``enum``/``const`` allows (None: any): a case
    for a value they leave out has no object, so it is not built."""
    properties = others.get("properties")
    declared = properties.get(name) if isinstance(properties, dict) else None
    if not isinstance(declared, dict):
        return None
    if "const" in declared:
        return [declared["const"]]
    return declared["enum"] if isinstance(declared.get("enum"), list) else None
