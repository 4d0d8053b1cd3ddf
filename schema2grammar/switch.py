"""An ``allOf`` whose conditionals each test one property (the same one or several)
against constants or presence, as one branch per case instead of conditionals
nested in one another.

Schemas written as a switch on a discriminator (``{"if": {"properties": {"type":
{"const": "a"}}}, "then": ...}`` once per value, up to a hundred times), or as
mutually exclusive properties (``{"if": {"not": {"properties": {"a": {"const":
null}}}}, "then": {"properties": {"b": {"const": null}}}}`` for each pair) would
otherwise put each conditional into both branches of the one before: 2^n copies
of the object's grammar, so past a few only the first was kept (reported). What
each tested property holds decides every ``if`` at once. Its *kinds*:

- it holds one of the constants the ``if``\\ s test it against;
- it holds another value;
- it is absent (an ``if`` holds unless it requires the property);

and, for the whole value, it is not an object (an ``if`` holds unless it requires
the object type); an ``if`` written as ``not`` of such a test holds where the test
fails. Kinds of one property on which every ``if`` agrees are one *group*; a case
is a group per tested property (or "not an object"), its guard says so, and it
takes the ``then`` or ``else`` of every conditional. A case whose ``then`` or
``else`` tests the switch's properties in a way its guard rules out (``b`` must be
null where the guard says it holds another value) has no value and is not built.
The cases are disjoint and cover every value, so their union is the ``allOf``
exactly wherever each case's merge is exact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import product
from typing import Any, Iterator

from schema2grammar.shared import ANNOTATIONS, CONDITIONAL, has_type, json_equal

MAX_SWITCH_VALUES = 32
"""Constants one switch may test: each is a case, a copy of the object's grammar
with its own property names (so its own terminal for the other names), and the
other values' case writes the complement of all of them. Past it the conditionals
are merged as before (nested, the first few kept, reported). In MaskBench the
switches test at most 17, but for one (cloudify: 125, whose cases took minutes)."""

MAX_SWITCH_CASES = 1_024
"""Combinations of groups one switch may look at (each property's groups
multiplied, before the cases its ``then``\\ s and ``else``\\ s rule out are dropped):
six mutually exclusive properties make 64, of which 7 are built. Past it, as past
``MAX_SWITCH_VALUES``."""

MAX_SWITCH_RULES = 20_000
"""Rules the cases of one switch may add; past it, as past ``MAX_SWITCH_VALUES``."""

NOT_OBJECTS = ["array", "boolean", "null", "number", "string"]

HOLDS, OTHER, ABSENT = "holds", "other", "absent"


@dataclass(frozen=True)
class Kind:
    """How an object's tested property stands: it holds ``value`` (``HOLDS``, one of
    the constants tested), another value (``OTHER``) or is ``ABSENT``."""

    how: str
    value: Any = None

    def describe(self, name: str) -> str:
        if self.how == HOLDS:
            return f"{name!r} is {json.dumps(self.value)}"
        return f"{name!r} holds another value" if self.how == OTHER else f"{name!r} is absent"


@dataclass(frozen=True)
class Test:
    """What one ``if`` asks of the property ``name``: where present, one of
    ``values`` (None: any value); ``needs_property``: present; ``needs_object``: the
    value is an object; ``negated``: the ``if`` is the ``not`` of all that."""

    name: str
    values: tuple[Any, ...] | None
    needs_property: bool
    needs_object: bool
    negated: bool

    def holds(self, kind: Kind | None) -> bool:
        """Whether the ``if`` holds of an object whose property is of ``kind``, or
        (None) of a value that is not an object."""
        if kind is None:
            inner = not self.needs_object
        elif kind.how == ABSENT:
            inner = not self.needs_property
        elif self.values is None:
            inner = True
        else:
            inner = kind.how == HOLDS and any(json_equal(kind.value, value) for value in self.values)
        return inner != self.negated


@dataclass(frozen=True)
class Conditional:
    """One ``if``/``then``/``else`` of a switch."""

    test: Test
    then: Any
    otherwise: Any

    def chosen(self, holds: bool) -> Any:
        return self.then if holds else self.otherwise


@dataclass(frozen=True)
class Switch:
    """Conditionals whose ``if``\\ s each test one of the properties ``names``;
    ``constants``: per name, the constants tested, each once."""

    conditionals: list[Conditional]
    constants: dict[str, list[Any]]
    float_integers: bool

    @property
    def names(self) -> list[str]:
        return list(self.constants)

    def cases(self, others: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], list[Any]]]:
        """(what the case is, its guard, the then or else of each conditional, true
        left out) per case that the schema's ``others`` keywords leave possible
        (a value their ``enum``/``const`` for the property lists, absent unless they
        require it, not an object unless they say type object) and its own
        ``then``\\ s and ``else``\\ s do not rule out."""
        groups = [self._groups(name, others) for name in self.names]
        rest = None if others.get("type") in ("object", ["object"]) else \
            tuple(c.test.holds(None) for c in self.conditionals)  # the ifs' verdicts on a value that is no object
        for combination in product(*groups):
            verdicts = self._verdicts(combination)
            with_rest = verdicts == rest
            chosen = self._chosen(verdicts)
            if any(self._decided(part, dict(zip(self.names, combination)), with_rest) is False for part in chosen):
                continue  # a then or else refuses what the guard says
            rest = None if with_rest else rest
            yield (self._described(combination, with_rest), self._guard(combination, with_rest), chosen)
        if rest is not None:
            yield "the value is not an object", {"type": NOT_OBJECTS}, self._chosen(rest)

    def _groups(self, name: str, others: dict[str, Any]) -> list[list[Kind]]:
        """The kinds ``name`` may be of, those every ``if`` testing it decides alike
        together, in the order of their first kind."""
        listed = _listed(others, name)
        kinds = [Kind(HOLDS, value) for value in self.constants[name]
                 if listed is None or any(json_equal(value, item) for item in listed)]
        if listed is None or any(not any(json_equal(item, value) for value in self.constants[name]) for item in listed):
            kinds.append(Kind(OTHER))
        if name not in others.get("required", []):
            kinds.append(Kind(ABSENT))
        tests = [c.test for c in self.conditionals if c.test.name == name]
        grouped: dict[tuple[bool, ...], list[Kind]] = {}
        for kind in kinds:
            grouped.setdefault(tuple(test.holds(kind) for test in tests), []).append(kind)
        return list(grouped.values())

    def _verdicts(self, combination: tuple[list[Kind], ...]) -> tuple[bool, ...]:
        """Each ``if``'s verdict in a combination of groups (any of a group's kinds
        gives it)."""
        group_of = dict(zip(self.names, combination))
        return tuple(c.test.holds(group_of[c.test.name][0]) for c in self.conditionals)

    def _chosen(self, verdicts: tuple[bool, ...]) -> list[Any]:
        picked = [c.chosen(verdict) for c, verdict in zip(self.conditionals, verdicts)]
        return [part for part in picked if part is not True and part != {}]

    def _guard(self, combination: tuple[list[Kind], ...], with_rest: bool) -> dict[str, Any]:
        """The objects of a combination (and every value that is not an object
        ``with_rest``: no type, as ``properties`` and ``required`` hold of those)."""
        required = [name for name, group in zip(self.names, combination) if Kind(ABSENT) not in group]
        properties: dict[str, Any] = {}
        for name, group in zip(self.names, combination):
            held = [kind.value for kind in group if kind.how == HOLDS]
            if Kind(OTHER) in group:
                refused = [value for value in self.constants[name] if not any(json_equal(value, h) for h in held)]
                if refused:
                    properties[name] = {"not": {"enum": refused}}
            else:
                properties[name] = {"const": held[0]} if len(held) == 1 else {"enum": held} if held else False
        guard: dict[str, Any] = {} if with_rest else {"type": "object"}
        return guard | ({"required": required} if required else {}) | ({"properties": properties} if properties else {})

    def _described(self, combination: tuple[list[Kind], ...], with_rest: bool) -> str:
        several = len(combination) > 1
        said = []
        for name, group in zip(self.names, combination):
            either = " or ".join(kind.describe(name) for kind in group)
            said.append(f"({either})" if several and len(group) > 1 else either)
        return " and ".join(said) + (" or the value is not an object" if with_rest else "")

    def _decided(self, part: Any, groups: dict[str, list[Kind]], with_rest: bool) -> bool | None:
        """Whether ``part`` (a then or else) holds of every value of a case (True), of
        none (False), or neither or not known (None): known only where it tests the
        switch's properties against constants, presence or ``false``."""
        if part is False:
            return False
        if not isinstance(part, dict) or set(part) - ANNOTATIONS - {"properties", "required"}:
            return None
        properties, required = part.get("properties", {}), part.get("required", [])
        if not isinstance(properties, dict) or not isinstance(required, list) or not {*properties, *required} <= set(groups):
            return None
        verdicts: set[bool | None] = {True} if with_rest else set()  # neither keyword refuses a value that is no object
        failing = False
        for name, group in groups.items():
            mine = {self._holds(properties.get(name, True), name in required, kind, name) for kind in group}
            failing = failing or mine == {False}
            verdicts |= mine
        if failing and not with_rest:
            return False
        return True if verdicts == {True} else None

    def _holds(self, schema: Any, required: bool, kind: Kind, name: str) -> bool | None:
        """Whether the property ``name`` of ``kind`` satisfies ``schema`` and
        ``required`` (None: not known from the kind)."""
        if kind.how == ABSENT:
            return not required
        if schema is True or schema == {}:
            return True
        if schema is False:
            return False
        allowed = _constants(schema, self.float_integers)
        if allowed is None:
            return None
        if kind.how == HOLDS:
            return any(json_equal(kind.value, value) for value in allowed)
        tested = self.constants[name]  # another value is none of them
        return False if all(any(json_equal(value, c) for c in tested) for value in allowed) else None


def split(parts: list[Any], float_integers: bool) -> tuple[list[Any], Switch] | None:
    """``parts`` (an ``allOf``'s, its holder's own keywords first) without their
    conditionals, and those as a ``Switch``; None unless there are two or more,
    every ``if`` tests one property, and the limits hold."""
    kept: list[Any] = []
    conditionals: list[Conditional] = []
    for part in parts:
        if not isinstance(part, dict) or "if" not in part or ("then" not in part and "else" not in part):
            kept.append(part)
            continue
        test = _tested(part["if"], float_integers)
        if test is None:
            return None
        conditionals.append(Conditional(test, part.get("then", True), part.get("else", True)))
        kept.append({k: v for k, v in part.items() if k not in CONDITIONAL})
    if len(conditionals) < 2:
        return None
    constants: dict[str, list[Any]] = {}
    for conditional in conditionals:
        seen = constants.setdefault(conditional.test.name, [])
        for value in conditional.test.values or ():
            if not any(json_equal(value, known) for known in seen):
                seen.append(value)
    if sum(len(values) for values in constants.values()) > MAX_SWITCH_VALUES:
        return None
    combinations = 1
    for values in constants.values():
        combinations *= len(values) + 2  # the constants, another value, absent
    if combinations > MAX_SWITCH_CASES:
        return None
    return kept, Switch(conditionals, constants, float_integers)


def _tested(schema: Any, float_integers: bool) -> Test | None:
    """The ``Test`` of an ``if`` that tests one property (against constants, or its
    presence), or the ``not`` of one; else None."""
    if isinstance(schema, dict) and "not" in schema and not set(schema) - ANNOTATIONS - {"not"}:
        inner = _tested(schema["not"], float_integers)
        return None if inner is None or inner.negated else \
            Test(inner.name, inner.values, inner.needs_property, inner.needs_object, True)
    if not isinstance(schema, dict) or set(schema) - ANNOTATIONS - {"properties", "required", "type"}:
        return None
    if schema.get("type", "object") not in ("object", ["object"]):
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or len(properties) > 1 or not isinstance(required, list):
        return None
    if not properties:  # {"required": [name]}: the property's presence
        if len(set(required)) != 1 or not isinstance(required[0], str):
            return None
        return Test(required[0], None, True, "type" in schema, False)
    [(name, sub)] = properties.items()
    if required not in ([], [name]):
        return None
    values = _constants(sub, float_integers)
    if values is None:
        return None
    return Test(name, values, bool(required), "type" in schema, False)


def _constants(schema: Any, float_integers: bool) -> tuple[Any, ...] | None:
    """The values a ``const`` or ``enum`` (with a ``type`` they all have) allows."""
    if not isinstance(schema, dict) or set(schema) - ANNOTATIONS - {"const", "enum", "type"}:
        return None
    if "const" in schema and "enum" not in schema:
        values: tuple[Any, ...] = (schema["const"],)
    elif "enum" in schema and "const" not in schema and isinstance(schema["enum"], list) and schema["enum"]:
        values = tuple(schema["enum"])
    else:
        return None
    if "type" in schema:
        allowed = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not all(has_type(value, allowed, float_integers) for value in values):
            return None
    return values


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
