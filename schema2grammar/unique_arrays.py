"""Which arrays must hold no item twice, told from where a value is written.

``uniqueItems`` over items that take more values than the grammar can keep sets
of (any string, objects with a free field, more than 8 listed values) has no
context-free grammar: the grammar leaves it out and the matcher checks it while
the text is written (``structgen.json.unique_items``). The
matcher knows where it is as a JSON path (keys and item positions); this module
says, for a path, whether the array there must be unique.

The schemas that apply at a path form an and/or formula over the document's
schema objects: a schema's own keywords, its ``$ref`` target and its ``allOf``
parts all apply (and); one branch of ``anyOf``/``oneOf`` and one of
``then``/``else`` does (or). An array must be unique where every way to satisfy
the formula says so: an "and" where one part says so, an "or" where every branch
that can hold an array does. Keywords that apply only sometimes (``not``,
``if`` itself, ``dependentSchemas``, ``unevaluated*``) are left out, which can
only turn a "must" into "need not": the matcher never refuses a valid text.

The matcher checks an array only where it knows how many values its items take
(``room``: endless, or counted), and there is no ``contains`` or tuple: it then
refuses a repeat without ever leaving a text with no valid end (when the values
run out, no further item may begin). The report says ``uniqueItems`` is enforced
only where every path that reaches the place is checked (``checked_places``).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Final

from schema2grammar import conditions, ecma, shared, string_sets
from schema2grammar.report import APPROXIMATED, ENFORCED, Report, ReportEntry

TRUE, FALSE, PLACE, AND, ANY, ONE = range(6)
"""Formula nodes: every value, no value, one schema object's own keywords, all of
the parts, at least one (``anyOf``, ``then``/``else``), exactly one (``oneOf``)."""

KINDS: Final = frozenset({"object", "array", "string", "number", "boolean", "null"})

CONSTRAINING: Final = frozenset({"type", "enum", "const", "nullable", "format",
                                 *(key for keys in shared.TYPE_KEYWORDS.values() for key in keys)})
"""A schema object's own keywords that constrain its value (the rest combine
schemas, annotate, or are unknown): a formula has a place for it when it holds one."""

OPEN_FORMATS: Final = frozenset({"date-time", "time", "hostname", "email", "uri", "uri-reference", "uri-template"})
"""Formats with endless values (their grammars repeat without bound)."""

LIMITING_OBJECT_KEYWORDS: Final = frozenset({"propertyNames", "minProperties", "maxProperties", "dependentSchemas",
                                            "unevaluatedProperties"})
"""Object keywords that may keep a property from being written: an object schema
without them takes endless values where one of its properties does (and
``dependentRequired``, or a draft-7 ``dependencies`` of names, lets a property be
written with the names it requires: ``_dependent_names``)."""

ROOM_CAP: Final = 10**9
"""Values counted before a kind's room is called that many (a string pattern's)."""

UNKNOWN: Final = -1
"""A room not known (``Formulas.room``)."""

MAX_EXPLORED: Final = 10_000
"""Formulas visited to tell which ``uniqueItems`` places every path checks;
past it, none is upgraded (they stay approximated)."""

MAX_PATTERN_SUBSETS: Final = 3
"""A formula whose places hold more ``patternProperties`` patterns than this is
explored with one "any of them" child for undeclared names (not each subset of
patterns a name may match): what lies below is not upgraded."""

MAX_OPEN_DEPTH: Final = 8
"""Properties and items followed to find a free one in ``room``."""

MAX_MEMO: Final = 50_000
"""Children remembered by key; the memo is emptied past it (names are free text)."""


class Formulas:
    """And/or formulas over one schema document, interned: equal formulas are one
    int, so children, verdicts and containment are remembered per node."""

    def __init__(self, root: Any, draft: conditions.Draft) -> None:
        self.root = root
        self.draft = draft
        self.kind: list[int] = [TRUE, FALSE]
        self.parts: list[tuple[int, ...]] = [(), ()]
        self.schema: list[Any] = [None, None]
        self._interned: dict[tuple[int, Any], int] = {}
        self._of: dict[int, int] = {}  # id(schema object) -> its node
        self._held: list[Any] = []  # the schema objects whose ids key _of
        self._children: dict[tuple[int, Any], int] = {}
        self._admits: dict[int, frozenset[str]] = {}
        self._unique: dict[int, bool] = {}
        self._rooms: dict[tuple[int, int], int | None] = {}
        self._checked: dict[int, bool] = {}
        self._members: dict[int, frozenset[int]] = {}

    # -- building

    def of(self, schema: Any) -> int:
        """The node of ``schema`` (a schema object or a boolean)."""
        if schema is False:
            return FALSE
        if not isinstance(schema, dict) or not schema:
            return TRUE  # true, {}, or no schema (the translator says so)
        key = id(schema)
        found = self._of.get(key)
        if found is not None:
            return found
        self._held.append(schema)
        self._of[key] = TRUE  # a reference back to a schema being read: no constraint (weaker, never wrong)
        node = self._build(schema)
        self._of[key] = node
        return node

    def _build(self, schema: dict[str, Any]) -> int:
        ref = schema.get("$ref")
        target = TRUE
        if isinstance(ref, str) and ref.startswith("#") and self.draft.resolve is not None:
            try:
                target = self.of(self.draft.resolve(ref))
            except shared.SchemaError:
                target = TRUE
        if "$ref" in schema and self.draft.ref_alone:
            return target  # drafts 3-7 ignore $ref's siblings
        parts = [target]
        if not CONSTRAINING.isdisjoint(schema):
            parts.append(self._node(PLACE, id(schema), schema))
        for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
            parts.append(self.of(part))
        for key, kind in (("anyOf", ANY), ("oneOf", ONE)):
            if isinstance(schema.get(key), list) and schema[key]:
                parts.append(self.combine(kind, [self.of(branch) for branch in schema[key]]))
        if "if" in schema and self.draft.conditional and ("then" in schema or "else" in schema):
            parts.append(self.combine(ANY, [self.of(schema.get("then", True)), self.of(schema.get("else", True))]))
        return self.combine(AND, parts)

    def combine(self, kind: int, parts: list[int]) -> int:
        """The node of ``kind`` over ``parts``, simplified (no true in an and, no
        false in an or, one part alone is itself)."""
        if kind == AND:
            if FALSE in parts:
                return FALSE
            parts = [p for p in parts if p != TRUE]
        else:
            parts = [p for p in parts if p != FALSE]
            if kind == ANY and TRUE in parts:
                return TRUE
        unique = tuple(sorted(set(parts)))
        if not unique:
            return TRUE if kind == AND else FALSE
        if len(unique) == 1 and (kind != ONE or len(parts) == 1):
            return unique[0]
        return self._node(kind, unique if kind != ONE else tuple(sorted(parts)), None)

    def _node(self, kind: int, key: Any, schema: Any) -> int:
        found = self._interned.get((kind, key))
        if found is not None:
            return found
        node = len(self.kind)
        self.kind.append(kind)
        self.parts.append(key if kind in (AND, ANY, ONE) else ())
        self.schema.append(schema)
        self._interned[(kind, key)] = node
        return node

    # -- children

    def child(self, node: int, name: str) -> int:
        """What applies to the value of property ``name`` of an object at ``node``."""
        key = (node, name)
        found = self._children.get(key)
        if found is None:
            matched = frozenset(p for p in self.patterns(node) if ecma.searches(p, name) is True)
            found = self._child(node, name, matched)
            if len(self._children) > MAX_MEMO:
                self._children.clear()
            self._children[key] = found
        return found

    def undeclared_child(self, node: int, matched: frozenset[str]) -> int:
        """What applies to a property no place of ``node`` declares, whose name the
        patterns ``matched`` (and no other) match."""
        key = (node, matched)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = self._child(node, None, matched)
        return found

    def _child(self, node: int, name: str | None, matched: frozenset[str]) -> int:
        kind = self.kind[node]
        if kind in (TRUE, FALSE):
            return kind
        if kind == PLACE:
            return self._place_child(self.schema[node], name, matched)
        parts = [p for p in self.parts[node] if "object" in self.admits(p)] if kind != AND else list(self.parts[node])
        return self.combine(_projected(kind), [self._child(p, name, matched) for p in parts])

    def _place_child(self, schema: dict[str, Any], name: str | None, matched: frozenset[str]) -> int:
        properties, patterns = _mapping(schema, "properties"), _mapping(schema, "patternProperties")
        parts = [self.of(properties[name])] if name is not None and name in properties else []
        parts += [self.of(sub) for pattern, sub in patterns.items() if pattern in matched]
        known = all(ecma.compiled(pattern) is not None for pattern in patterns)
        if not parts and known:
            parts.append(self.of(schema.get("additionalProperties", True)))
        return self.combine(AND, parts)  # an unreadable pattern: maybe additionalProperties, so neither

    def item(self, node: int, index: int) -> int:
        """What applies to item ``index`` of an array at ``node``."""
        index = min(index, self.prefix_length(node))
        key = (node, -1 - index)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = self._item(node, index)
        return found

    def _item(self, node: int, index: int) -> int:
        kind = self.kind[node]
        if kind in (TRUE, FALSE):
            return kind
        if kind == PLACE:
            schema = self.schema[node]
            items = schema.get("items", True)
            prefix = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else []
            if isinstance(items, list):  # drafts 4-2019: items as a tuple
                prefix, items = items, schema.get("additionalItems", True)
            return self.of(prefix[index]) if index < len(prefix) else self.of(items)
        parts = [p for p in self.parts[node] if "array" in self.admits(p)] if kind != AND else list(self.parts[node])
        return self.combine(_projected(kind), [self._item(p, index) for p in parts])

    def places(self, node: int) -> list[dict[str, Any]]:
        """The schema objects whose own keywords are in ``node`` (through its parts)."""
        return [self.schema[n] for n in self.members(node) if self.kind[n] == PLACE]

    def patterns(self, node: int) -> list[str]:
        return sorted({p for schema in self.places(node) for p in _mapping(schema, "patternProperties")})

    def names(self, node: int) -> list[str]:
        return sorted({n for schema in self.places(node) for n in _mapping(schema, "properties")})

    def prefix_length(self, node: int) -> int:
        """The longest tuple of item schemas among the node's places."""
        longest = 0
        for schema in self.places(node):
            prefix = schema.get("prefixItems", schema.get("items"))
            if isinstance(prefix, list):
                longest = max(longest, len(prefix))
        return longest

    def members(self, node: int) -> frozenset[int]:
        """The node and every node inside it (through and/or, not through children)."""
        found = self._members.get(node)
        if found is None:
            inside = {node}
            for part in self.parts[node]:
                inside |= self.members(part)
            found = self._members[node] = frozenset(inside)
        return found

    # -- verdicts

    def admits(self, node: int) -> frozenset[str]:
        """The kinds of value the node may hold (``number`` for integers too); more,
        never fewer."""
        found = self._admits.get(node)
        if found is None:
            kind = self.kind[node]
            if kind == TRUE:
                found = KINDS
            elif kind == FALSE:
                found = frozenset()
            elif kind == PLACE:
                found = _own_kinds(self.schema[node])
            else:
                sets = [self.admits(p) for p in self.parts[node]]
                found = frozenset.intersection(*sets) if kind == AND else frozenset.union(*sets)
            self._admits[node] = found
        return found

    def unique(self, node: int) -> bool:
        """Whether every array the node accepts holds no item twice."""
        found = self._unique.get(node)
        if found is None:
            kind = self.kind[node]
            if kind in (TRUE, FALSE):
                found = kind == FALSE
            elif kind == PLACE:
                found = self.schema[node].get("uniqueItems") is True
            elif kind == AND:
                found = any(self.unique(p) for p in self.parts[node])
            else:
                found = all(self.unique(p) for p in self.parts[node] if "array" in self.admits(p))
            self._unique[node] = found
        return found

    def checked(self, node: int) -> bool:
        """Whether the matcher checks the arrays at ``node`` for repeats: they must
        be unique, with no tuple and no ``contains``, and their items' ``room`` is
        known and holds ``minItems`` values."""
        found = self._checked.get(node)
        if found is None:
            places = self.places(node)
            room = self.room(self.item(node, 0)) if "array" in self.admits(node) else UNKNOWN
            least = max([c for p in places if (c := shared.count_of(p.get("minItems", 0))) is not None], default=0)
            found = (self.unique(node) and room != UNKNOWN and (room is None or room >= least)
                     and self.prefix_length(node) == 0 and not any("contains" in p for p in places))
            self._checked[node] = found
        return found

    def room(self, node: int, depth: int = 0) -> int | None:
        """How many values the node accepts, ``ROOM_CAP`` for that many or more;
        None where they are endless, ``UNKNOWN`` where not sure (the matcher then
        does not check the arrays of such items: it could not tell when the
        values run out)."""
        if depth > MAX_OPEN_DEPTH:
            return UNKNOWN
        key = (node, depth)
        if key in self._rooms:
            return self._rooms[key]
        kind = self.kind[node]
        found: int | None
        if kind in (TRUE, FALSE):
            found = None if kind == TRUE else 0
        elif kind == PLACE:
            found = self._place_room(node, depth)
        elif kind == ANY and all(self.kind[p] == PLACE and self._listed(self.schema[p]) is not None for p in self.parts[node]):
            found = len({conditions.value_key(v) for p in self.parts[node] for v in self._listed(self.schema[p]) or []})
        elif kind == ANY:
            rooms = [self.room(p, depth) for p in self.parts[node]]
            found = None if None in rooms else UNKNOWN
        elif kind == ONE and len(self.parts[node]) == 1:
            found = self.room(self.parts[node][0], depth)
        else:
            found = None if kind == AND and self._endless_object(node, depth) else UNKNOWN
        self._rooms[key] = found
        return found

    def _place_room(self, node: int, depth: int) -> int | None:
        schema = self.schema[node]
        listed = self._listed(schema)
        if listed is not None:
            return len({conditions.value_key(v) for v in listed})
        if "enum" in schema or "const" in schema:
            return UNKNOWN  # listed values judged by other keywords too
        rooms = [self._kind_room(node, kind, depth) for kind in sorted(self.admits(node))]
        if None in rooms:
            return None  # endless values of one kind: endless in all, whatever the others' room
        if UNKNOWN in rooms:
            return UNKNOWN
        return min(ROOM_CAP, sum(room for room in rooms if room is not None))

    def _kind_room(self, node: int, kind: str, depth: int) -> int | None:
        """The values of one kind a schema object's own keywords accept."""
        schema = self.schema[node]
        if kind in ("null", "boolean"):
            return 1 if kind == "null" else 2
        if kind == "string":
            fmt = schema.get("format")
            if fmt is not None and self.draft.format_assertion:
                return None if fmt in OPEN_FORMATS and not {"pattern", "maxLength"} & set(schema) else UNKNOWN
            if not {"pattern", "maxLength"} & set(schema):
                return None
            try:
                judged = {k: schema[k] for k in ("pattern", "minLength", "maxLength") if k in schema}
                return string_sets.count(string_sets.of_schema(judged, "", self.draft), ROOM_CAP)
            except (ecma.Unsupported, shared.SchemaError):
                return UNKNOWN
        if kind == "number":
            declared = schema.get("type")
            integer = declared == "integer" or (isinstance(declared, list) and "number" not in declared)
            bounded = any(k in schema for k in ("minimum", "exclusiveMinimum")) and \
                any(k in schema for k in ("maximum", "exclusiveMaximum"))
            return UNKNOWN if bounded and (integer or "multipleOf" in schema) else None
        if kind == "object":
            return None if self._endless_object(node, depth) else UNKNOWN
        if not {"maxItems", "prefixItems", "contains"} & set(schema) and not isinstance(schema.get("items"), list):
            return None if self.room(self.of(schema.get("items", True)), depth + 1) is None else UNKNOWN
        return UNKNOWN

    def _listed(self, schema: dict[str, Any]) -> list[Any] | None:
        """The values a schema object lists (``enum``/``const``, maybe with ``type``),
        or its ``boolean``/``null`` values; None otherwise."""
        return conditions.finite_values(schema, lambda value, allowed: shared.has_type(
            value, allowed, self.draft.float_integers))

    def _endless_object(self, node: int, depth: int) -> bool:
        """Whether objects at ``node`` (one schema object, or all of several, or one
        of a few) take endless values: some property every part lets be written
        takes endless values, and no part limits the properties otherwise."""
        parts = [node] if self.kind[node] != AND else list(self.parts[node])
        places: list[list[dict[str, Any]]] = []  # per part, the schema objects one of which holds
        for part in parts:
            if self.kind[part] == PLACE:
                places.append([self.schema[part]])
            elif self.kind[part] == ANY and all(self.kind[p] == PLACE for p in self.parts[part]):
                places.append([self.schema[p] for p in self.parts[part] if "object" in self.admits(p)])
            else:
                return False
        if any("enum" in p or "const" in p or set(p) & LIMITING_OBJECT_KEYWORDS or _dependent_names(p) is None
               for group in places for p in group):
            return False
        for name in self.names(node):
            with_it = _written_with(name, [p for group in places for p in group])
            writable = all(all(any(_writable(p, n) for p in group) for group in places) for n in with_it)
            if writable and all(self.room(self.child(node, n), depth + 1) not in (0, UNKNOWN) for n in with_it - {name}) \
                    and self.room(self.child(node, name), depth + 1) is None:
                return True
        return False

    # -- the places every path checks

    def explore(self, start: int) -> dict[int, bool] | None:
        """Every node a path from ``start`` reaches, and whether it was reached
        exactly (each name's own child, or one per subset of the patterns an
        undeclared name may match); None past ``MAX_EXPLORED``."""
        reached: dict[int, bool] = {start: True}
        todo = [start]
        while todo:
            node = todo.pop()
            exact = reached[node]
            following: list[tuple[int, bool]] = []
            admits = self.admits(node)
            if "object" in admits:
                following += [(self.child(node, name), exact) for name in self.names(node)]
                patterns = self.patterns(node)
                if len(patterns) <= MAX_PATTERN_SUBSETS and all(ecma.compiled(p) is not None for p in patterns):
                    following += [(self.undeclared_child(node, frozenset(subset)), exact)
                                  for size in range(len(patterns) + 1) for subset in combinations(patterns, size)]
                else:
                    every = [self.undeclared_child(node, frozenset([p])) for p in patterns]
                    following.append((self.combine(ANY, [*every, self.undeclared_child(node, frozenset())]), False))
            if "array" in admits:
                following += [(self.item(node, i), exact) for i in range(self.prefix_length(node) + 1)]
            for child, child_exact in following:
                before = reached.get(child)
                if before is None or (before and not child_exact):
                    reached[child] = child_exact
                    todo.append(child)
                    if len(reached) > MAX_EXPLORED:
                        return None
        return reached


def _projected(kind: int) -> int:
    """The kind of the node that applies to a property or item of a node of
    ``kind``: a ``oneOf``'s branches hold one at a time, but what one of them asks of a
    property is all that applies to it, as for ``anyOf`` (the one holding is some
    one): "exactly one" of the branches' properties would refuse a property that two
    branches ask alike (a ``oneOf`` of two ``required``s asks nothing of either)."""
    return ANY if kind == ONE else kind


def _dependent_names(schema: dict[str, Any]) -> dict[str, list[str]] | None:
    """The names each property requires beside it (``dependentRequired``, and
    ``dependencies`` whose values are lists of names); None where a dependency is
    a schema, or not read here (it may keep a property from being written)."""
    found: dict[str, list[str]] = {}
    for key in ("dependentRequired", "dependencies"):
        mapping = schema.get(key, {})
        if not isinstance(mapping, dict):
            return None
        for name, required in mapping.items():
            if not isinstance(required, list) or not all(isinstance(n, str) for n in required):
                return None
            found.setdefault(name, []).extend(required)
    return found


def _written_with(name: str, places: list[dict[str, Any]]) -> set[str]:
    """``name`` and every name that writing it requires, through each other."""
    found = {name}
    todo = [name]
    while todo:
        current = todo.pop()
        for place in places:
            for required in (_dependent_names(place) or {}).get(current, []):
                if required not in found:
                    found.add(required)
                    todo.append(required)
    return found


def _writable(schema: dict[str, Any], name: str) -> bool:
    return name in _mapping(schema, "properties") or schema.get("additionalProperties", True) is not False


def _mapping(schema: dict[str, Any], key: str) -> dict[str, Any]:
    """A keyword whose value is an object (``properties``), or {} (a malformed one
    is the translator's to report)."""
    value = schema.get(key)
    return value if isinstance(value, dict) else {}


def _own_kinds(schema: dict[str, Any]) -> frozenset[str]:
    """The kinds ``type``, ``enum`` and ``const`` leave to a schema object."""
    kinds = set(KINDS)
    declared = schema.get("type")
    if isinstance(declared, (str, list)):
        listed = declared if isinstance(declared, list) else [declared]
        kinds = {"number" if t == "integer" else t for t in listed if isinstance(t, str)} & KINDS
        if schema.get("nullable") is True:
            kinds.add("null")
    for key, values in (("const", [schema.get("const")]), ("enum", schema.get("enum"))):
        if key in schema and isinstance(values, list):
            kinds &= {"number" if shared.json_type(v) == "integer" else shared.json_type(v) for v in values}
    return frozenset(kinds)


CHECKED_NOTE: Final = "checked by the matcher as the text is written (no grammar holds the items seen)"
"""The report's note where ``uniqueItems`` is left to the matcher."""


class UniqueArrays:
    """What the matcher needs to check ``uniqueItems``: the formulas of one schema
    and its root node (``structgen.json.unique_items`` follows paths through them)."""

    def __init__(self, formulas: Formulas, root: int) -> None:
        self.formulas = formulas
        self.root = root


def checked_places(schema: Any, draft: conditions.Draft, report: Report) -> UniqueArrays | None:
    """Where the report says ``uniqueItems`` is approximated, mark it enforced (by
    the matcher) when every path that reaches its place is checked; the formulas
    the matcher follows, or None where no place is.

    A report entry names the place the grammar built, which is not always a
    schema object of the document (an ``anyOf`` branch merged with its holder's
    keywords). One that is, holding ``uniqueItems``, is judged alone; the others
    are upgraded only when every ``uniqueItems`` the document's schemas use is
    checked on every path (``_unique_places``)."""
    pending = [i for i, e in enumerate(report.entries) if e.keyword == "uniqueItems" and e.status == APPROXIMATED]
    if not pending:
        return None
    formulas = Formulas(schema, draft)
    root = formulas.of(schema)
    reached = formulas.explore(root)
    if reached is None:
        return None

    def covered(place: dict[str, Any]) -> bool:
        node = formulas.of(place)
        holding = [n for n in reached if node in formulas.members(n)]
        return bool(holding) and all(reached[n] and (formulas.checked(n) or "array" not in formulas.admits(n))
                                     for n in holding)

    everywhere: bool | None = None  # whether every place with uniqueItems is covered (found once, if needed)
    upgraded = 0
    for index in pending:
        entry = report.entries[index]
        place = shared.follow_pointer(schema, "#" + entry.pointer)
        if isinstance(place, dict) and place.get("uniqueItems") is True:
            upgrade = covered(place)
        else:
            if everywhere is None:
                everywhere = all(covered(p) for p in _unique_places(schema, draft))
            upgrade = everywhere
        if upgrade:
            report.entries[index] = ReportEntry(entry.pointer, "uniqueItems", ENFORCED, CHECKED_NOTE)
            upgraded += 1
    return UniqueArrays(formulas, root) if upgraded else None


SUBSCHEMAS: Final = ("additionalProperties", "additionalItems", "items", "contains", "propertyNames", "not", "if", "then",
                     "else", "unevaluatedProperties", "unevaluatedItems")
SUBSCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
SUBSCHEMA_MAPS: Final = ("properties", "patternProperties", "dependentSchemas", "dependencies")


def _unique_places(schema: Any, draft: conditions.Draft) -> list[dict[str, Any]]:
    """The schema objects with ``uniqueItems: true`` that the document's schema uses:
    every subschema from the root, through references (definitions nothing
    refers to are left out)."""
    found: list[dict[str, Any]] = []
    seen: set[int] = set()
    todo = [schema]
    while todo:
        current = todo.pop()
        if not isinstance(current, dict) or id(current) in seen:
            continue
        seen.add(id(current))
        if current.get("uniqueItems") is True:
            found.append(current)
        ref = current.get("$ref")
        if isinstance(ref, str) and ref.startswith("#") and draft.resolve is not None:
            try:
                todo.append(draft.resolve(ref))
            except shared.SchemaError:
                pass
        todo += [current[key] for key in SUBSCHEMAS if key in current]
        todo += [sub for key in SUBSCHEMA_LISTS if isinstance(current.get(key), list) for sub in current[key]]
        todo += [sub for key in SUBSCHEMA_MAPS if isinstance(current.get(key), dict) for sub in current[key].values()]
    return found