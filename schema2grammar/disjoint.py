"""Whether two schemas share no object, told from property names alone.

``A`` and ``not B`` needs B's objects complemented, which is often out of reach
here (``additionalProperties`` has no complement), yet it needs none where no
object satisfies both: every object ``A`` accepts is then one ``not B`` keeps.
That is the common ``oneOf`` of tagged variants: each branch requires a name and
gives it its own ``const`` or ``enum`` (``"kind": "circle"`` against ``"kind":
"square"``), or closes its objects to a name another branch requires.

``objects_apart`` proves it from what every object of one schema holds, a
required name, and what the other refuses there: the name itself (a closed
object the name's patterns leave out, ``false`` as the name's schema, or
``propertyNames``) or every value the first allows for it (listed values, kinds
that do not meet, objects told apart again one level down). It answers True only
on such a proof; False means "not known".

It reads schemas through the ``satisfying`` and ``accepts`` its caller hands it
(``complement``'s, whose ``oneOf`` asks this module in turn): it imports only the
conditions themselves, so the two modules do not import each other.
"""

from __future__ import annotations

from typing import Any, Callable

from schema2grammar import ecma, shared
from schema2grammar.conditions import KINDS, NONE, Draft, Kinds, conjoin, finite_values

MAX_DEPTH = 8
"""References and ``allOf``/``anyOf`` nesting followed this deep; deeper, nothing
is concluded."""

MAX_STEPS = 2_000
"""Pairs of schemas one question compares (unions and nested objects multiply
them); past it, the answer is "not known"."""

Satisfying = Callable[[Any, Draft, str], Kinds]
"""Per kind, the values a schema (at a pointer) accepts: ``complement.satisfying``."""

Accepts = Callable[[Kinds, Any, Draft], bool | None]
"""Whether the schema some kinds describe accepts a value: ``complement.accepts``."""


def objects_apart(a: Any, b: Any, draft: Draft, satisfying: Satisfying, accepts: Accepts) -> bool:
    """Whether no object satisfies both schemas (proved; False: not known), each
    read by ``satisfying`` and ``accepts``."""
    return _Search(draft, satisfying, accepts).apart(a, b, 0)


class _Search:
    """One ``objects_apart`` question: the document's draft, how schemas are read
    and the steps left."""

    def __init__(self, draft: Draft, satisfying: Satisfying, accepts: Accepts) -> None:
        self.draft = draft
        self.satisfying = satisfying
        self.accepts = accepts
        self.steps = MAX_STEPS

    def apart(self, a: Any, b: Any, depth: int) -> bool:
        self.steps -= 1
        if depth > MAX_DEPTH or self.steps < 0:
            return False
        ours, theirs = self.conjuncts(a, depth), self.conjuncts(b, depth)
        if ours is None or theirs is None or self.no_object(a) or self.no_object(b):
            return True  # one of them accepts no object
        if self.told_apart(ours, theirs, depth) or self.told_apart(theirs, ours, depth):
            return True
        for side, other in ((b, a), (a, b)):  # a union is apart when each of its branches is
            if not isinstance(side, dict):
                continue
            for key in ("anyOf", "oneOf"):
                branches = side.get(key)
                if isinstance(branches, list) and branches:
                    rest = {k: v for k, v in side.items() if k != key}
                    if all(self.apart(other, {"allOf": [rest, branch]}, depth + 1) for branch in branches):
                        return True
        return False

    def no_object(self, schema: Any) -> bool:
        """Whether the kinds say ``schema`` accepts no object (``type: string``)."""
        try:
            return self.satisfying(schema, self.draft, "")["object"] == NONE
        except shared.SchemaError:  # malformed: the translator names it where it reads it
            return False

    def conjuncts(self, schema: Any, depth: int) -> list[dict[str, Any]] | None:
        """The schema objects every value of ``schema`` satisfies: itself, what its
        ``$ref`` and ``allOf`` hold, to ``MAX_DEPTH``; None when one is ``false``."""
        found: list[dict[str, Any]] = []
        work = [(schema, depth)]
        draft = self.draft
        while work:
            current, level = work.pop()
            if current is False:
                return None
            if not isinstance(current, dict) or level > MAX_DEPTH:
                continue  # true, malformed or too deep: no fact taken from it
            target = current.get("$ref")
            if isinstance(target, str) and target.startswith("#") and draft.resolve is not None:
                try:
                    work.append((draft.resolve(target), level + 1))
                except ValueError:  # a dangling reference: the translator names it
                    pass
                if draft.ref_alone:
                    continue  # drafts 3-7: a $ref's siblings are ignored
            found.append(current)
            parts = current.get("allOf")
            if isinstance(parts, list):
                work += [(part, level + 1) for part in parts]
        return found

    def told_apart(self, ours: list[dict[str, Any]], theirs: list[dict[str, Any]], depth: int) -> bool:
        """Whether a name ``ours`` requires is one ``theirs`` refuses, or holds there
        only values ``theirs`` refuses."""
        required = {name for schema in ours for name in _listed(schema.get("required"))}
        for name in required:
            allowed = [_properties(schema)[name] for schema in ours if name in _properties(schema)]
            for other in theirs:
                names = other.get("propertyNames")
                if names is not None and self.judged(names, name) is False:
                    return True
                values = _value_schemas(other, name)
                if values is None or any(value is False for value in values):
                    return True
                if any(self.values_apart(mine, value, depth) for mine in allowed for value in values):
                    return True
        return False

    def judged(self, schema: Any, value: Any) -> bool | None:
        try:
            return self.accepts(self.satisfying(schema, self.draft, ""), value, self.draft)
        except shared.SchemaError:  # malformed: the translator names it where it reads it
            return None

    def values_apart(self, x: Any, y: Any, depth: int) -> bool:
        """Whether no value satisfies both schemas: every value one lists is one the
        other refuses, or for every kind the two share none (objects: told apart by
        their names, one level down)."""
        draft = self.draft

        def has_type(value: Any, allowed: list[Any]) -> bool:
            return shared.has_type(value, allowed, draft.float_integers)

        try:
            for first, second in ((x, y), (y, x)):
                listed = finite_values(first, has_type)
                if listed is not None:
                    kinds = self.satisfying(second, draft, "")
                    if all(self.accepts(kinds, value, draft) is False for value in listed):
                        return True
            ours, theirs = self.satisfying(x, draft, ""), self.satisfying(y, draft, "")
        except shared.SchemaError:  # malformed: the translator names it where it reads it
            return False
        return all(conjoin(ours[kind], theirs[kind]) == NONE
                   or kind == "object" and self.apart(x, y, depth + 1) for kind in KINDS)


def _value_schemas(schema: dict[str, Any], name: str) -> list[Any] | None:
    """The schemas ``schema`` holds the value of property ``name`` to: its own,
    those of the patterns it matches, else ``additionalProperties``; None where
    the name is refused (no pattern matches, and no other name is allowed). A
    pattern that cannot be read here makes the rest unknown: only what is sure is
    listed."""
    properties = _properties(schema)
    found = [properties[name]] if name in properties else []
    patterns = schema.get("patternProperties")
    unknown = False
    matched = False
    for pattern, sub in (patterns.items() if isinstance(patterns, dict) else []):
        verdict = ecma.searches(pattern, name) if isinstance(pattern, str) else None
        unknown |= verdict is None
        if verdict:
            matched = True
            found.append(sub)
    if name not in properties and not matched and not unknown and "additionalProperties" in schema:
        if schema["additionalProperties"] is False:
            return None
        found.append(schema["additionalProperties"])
    return found


def _listed(required: Any) -> list[str]:
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    found = schema.get("properties")
    return found if isinstance(found, dict) else {}
