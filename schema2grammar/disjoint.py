"""Whether two schemas share no object, told from property names alone.

``A`` and ``not B`` needs B's objects complemented, which is often out of reach
here (``additionalProperties`` has no complement), yet it needs none where no
object satisfies both: every object ``A`` accepts is then one ``not B`` keeps.
That is the common ``oneOf`` of tagged variants: each branch requires a name and
gives it its own ``const`` or ``enum`` (``"kind": "circle"`` against ``"kind":
"square"``), or closes its objects to a name another branch requires.

``objects_apart`` proves it from what every object of one schema holds, a
required name, and what the other refuses there: the name itself (a closed
object, or ``false`` as the name's schema) or every value the first allows for
it. It answers True only on such a proof; False means "not known".
"""

from __future__ import annotations

from typing import Any

from schema2grammar import complement, shared
from schema2grammar.complement import KINDS, NONE

MAX_DEPTH = 8
"""References and ``allOf``/``anyOf`` nesting followed this deep; deeper, nothing
is concluded."""


def objects_apart(a: Any, b: Any, draft: complement.Draft) -> bool:
    """Whether no object satisfies both schemas (proved; False: not known)."""
    return _apart(a, b, draft, 0)


def _apart(a: Any, b: Any, draft: complement.Draft, depth: int) -> bool:
    if depth > MAX_DEPTH:
        return False
    ours, theirs = _conjuncts(a, draft, depth), _conjuncts(b, draft, depth)
    if ours is None or theirs is None:
        return True  # one of them accepts nothing
    if _told_apart(ours, theirs, draft) or _told_apart(theirs, ours, draft):
        return True
    for side, other in ((b, a), (a, b)):  # a union is apart when each of its branches is
        if not isinstance(side, dict):
            continue
        for key in ("anyOf", "oneOf"):
            branches = side.get(key)
            if isinstance(branches, list) and branches:
                rest = {k: v for k, v in side.items() if k != key}
                if all(_apart(other, {"allOf": [rest, branch]}, draft, depth + 1) for branch in branches):
                    return True
    return False


def _conjuncts(schema: Any, draft: complement.Draft, depth: int) -> list[dict[str, Any]] | None:
    """The schema objects every value of ``schema`` satisfies: itself, what its
    ``$ref`` and ``allOf`` hold, to ``MAX_DEPTH``; None when one is ``false``."""
    found: list[dict[str, Any]] = []
    work = [(schema, depth)]
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


def _told_apart(ours: list[dict[str, Any]], theirs: list[dict[str, Any]], draft: complement.Draft) -> bool:
    """Whether a name ``ours`` requires is one ``theirs`` refuses, or holds there
    only values ``theirs`` refuses."""
    required = {name for schema in ours for name in _listed(schema.get("required"))}
    for name in required:
        allowed = [_properties(schema)[name] for schema in ours if name in _properties(schema)]
        for other in theirs:
            properties = _properties(other)
            if name not in properties:
                if other.get("additionalProperties") is False and not other.get("patternProperties"):
                    return True
                continue
            if properties[name] is False or any(_values_apart(mine, properties[name], draft) for mine in allowed):
                return True
    return False


def _listed(required: Any) -> list[str]:
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    found = schema.get("properties")
    return found if isinstance(found, dict) else {}


def _values_apart(x: Any, y: Any, draft: complement.Draft) -> bool:
    """Whether no value satisfies both schemas: every value one lists is one the
    other refuses, or for every kind one of them takes none."""
    def has_type(value: Any, allowed: list[Any]) -> bool:
        return shared.has_type(value, allowed, draft.float_integers)

    try:
        for first, second in ((x, y), (y, x)):
            listed = complement.finite_values(first, has_type)
            if listed is not None:
                kinds = complement.satisfying(second, draft, "")
                if all(complement.accepts(kinds, value, draft) is False for value in listed):
                    return True
        ours, theirs = complement.satisfying(x, draft, ""), complement.satisfying(y, draft, "")
    except shared.SchemaError:  # malformed: the translator names it where it reads it
        return False
    return all(ours[kind] == NONE or theirs[kind] == NONE for kind in KINDS)
