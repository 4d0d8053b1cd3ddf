"""Objects: declared properties, ``required``, extra properties (``additionalProperties``,
``patternProperties``, ``propertyNames``), property counts and dependencies, as
rules over the states of one object (``object_states``)."""

from __future__ import annotations

import re
from typing import Any

from schema2grammar import applicators, ecma, property_names, regexes, string_sets
from schema2grammar.core import TranslatorCore, spellable
from schema2grammar.object_states import (MAX_OBJECT_STATES, MAX_UNORDERED_STATES, Move, ObjectStates, State,
                                          TooManyStates)
from schema2grammar.property_names import found_by, matchable
from schema2grammar.report import APPROXIMATED, ENFORCED
from schema2grammar.shared import SOME, NoValue, SchemaError, pointer_token

MAX_WITNESSES = 3
"""Witnesses (``shared.SOME``: some property a pattern finds holds a value of a
schema) one object keeps: a bit each in its states, and a property their patterns
find has a value symbol per subset of them; past it they are left out (the
``not`` that wrote them reported approximated)."""

NAMES_SPELLED = "names in every JSON spelling but \\u escapes of printable ASCII (spellings)"
"""How property names are matched (``spellings``): ``"é"`` and ``"\\u00e9"`` are one name."""


def _other_names(declared: list[str]) -> str:
    """A quoted name that is none of ``declared``, however either is spelled
    (``regexes.string_except``)."""
    return regexes.string_except(declared)


class ObjectKeywords(TranslatorCore):
    """The rules of an object place."""

    def type_object(self, schema: dict[str, Any], pointer: str) -> str:
        """The members in declared order, then the extra properties; the chain of
        states (``object_states``) counts them and keeps the dependencies' facts."""
        report = self.report
        properties: dict[str, Any] = schema.get("properties", {})
        listed = schema.get("required", [])
        if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
            raise SchemaError(f"{pointer or '#'}: required must be a list of property names (strings), not {listed!r}")
        required = set(listed)
        for key in ("properties", "required"):
            if key in schema:
                report.add(pointer, key, ENFORCED)
        additional = schema.get("additionalProperties", True)
        if self.options.closed_objects and "properties" in schema and "additionalProperties" not in schema \
                and "patternProperties" not in schema:
            # narrower than the schema: valid outputs stay valid; an object that names no
            # property is left open, or its only instance would be {}
            additional = False
            report.add(pointer, "additionalProperties", APPROXIMATED, "absent: no extra properties (closed_objects)",
                       narrower=True)
        self.unevaluated_annotation(schema, "unevaluatedProperties", pointer)
        for key in ("dependentRequired", "dependentSchemas"):
            if key in schema and not self.dependent_keywords:
                report.add(pointer, key, ENFORCED, "not a keyword before draft 2019-09: an annotation")
        needs = self.dependent_required(schema, pointer)
        language = self.name_language(schema, pointer)
        absent: list[str] = []
        if language is not None:
            properties, needs, absent = self.names_allowed(language, properties, required, needs, pointer)
        missing = [key for key in dict.fromkeys(listed) if key not in properties]
        undeclared = [name for name in dict.fromkeys(n for source, wanted in needs.items() for n in (source, *wanted))
                      if name not in properties and name not in missing]
        patterns = self.pattern_properties(schema, pointer)
        some = self.witnesses(schema, pointer)
        names = None
        if patterns is not None or some or language is not None and additional is not False:
            declared = list(properties) + missing + undeclared + absent
            names = self.name_regions(patterns, declared, additional is not False, language, pointer,
                                      [pattern for pattern, _ in some])
            if names is None and some:
                self.witnesses_left_out(pointer, "the names are not told apart by the patterns")
                some = []
                names = self.name_regions(patterns, declared, additional is not False, language, pointer) \
                    if patterns is not None or language is not None and additional is not False else None
            patterns = {} if patterns is None and names is not None else patterns
        elif language is not None:
            report.add(pointer, "propertyNames", ENFORCED, "the declared names judged one by one (no extra names)")
        if names is None:
            patterns = matchable(patterns)  # declared names are still matched one by one
        own_additional = additional  # an undeclared name's schema where no pattern finds it
        if names is None and "patternProperties" in schema and additional is not True:
            # an extra name may match a pattern or not: its value satisfies one of their schemas
            self.approximate(pointer, "additionalProperties", "beside patternProperties whose names are not "
                             "enforced: an extra property takes a value of some pattern's schema or of this one")
            others = list(schema["patternProperties"].values())
            additional = {"anyOf": others if additional is False else [*others, additional]}
        elif "additionalProperties" in schema:
            place = ("extra properties come after the declared ones" if self.options.property_order == "declared"
                     else "extra properties among the declared ones")
            report.add(
                pointer, "additionalProperties", ENFORCED,
                f"{place}; {NAMES_SPELLED}",
            )
        colon = self.punct(":")
        written: dict[str, dict[int, str]] = {}  # name -> its member's text, per mark
        members: list[tuple[str, bool]] = []
        for key, sub in properties.items():
            key_pointer = f"{pointer}/properties/{pointer_token(key)}"
            if not spellable(key):  # no text writes the name: the property is absent
                if key in required:
                    raise NoValue(f"{key_pointer}: the name {key!r} holds a lone surrogate, which no text spells")
                continue
            matched = found_by(patterns, key)
            try:
                values = self.marked_values({"allOf": [sub, *matched]} if matched else sub, some, key, key_pointer)
            except NoValue:
                if key in required:
                    raise
                continue  # a property no value satisfies must be absent
            written[key] = {mark: f"{self.literal(key)} {colon} {value}" for mark, value in values.items()}
            members.append((key, key in required))
        for key in missing:  # required but undeclared: in the order `required` lists them
            matched = found_by(patterns, key)
            if matched:
                sub = {"allOf": matched}
            elif additional is False:
                raise NoValue(f"{pointer or '#'}: required property {key!r} is not allowed")
            else:
                sub = additional
            literal = self.literal(key)
            values = self.marked_values(sub, some, key, f"{pointer}/required")
            written[key] = {mark: f"{literal} {colon} {value}" for mark, value in values.items()}
            members.append((key, True))
        # an undeclared name's own schema is known unless patterns Python cannot run may match it
        known = names is not None or "patternProperties" not in schema or patterns is not None
        extra = self.extra_properties(
            names, patterns, additional, list(properties) + missing + absent, undeclared if known else [], some, pointer)
        specials: list[str] = []
        for name in undeclared if known else []:
            matched = found_by(patterns, name)
            sub = {"allOf": matched} if matched else own_additional
            try:
                if sub is not False:
                    literal = self.literal(name)
                    values = self.marked_values(sub, some, name, f"{pointer}/additionalProperties")
                    written[name] = {mark: f"{literal} {colon} {value}" for mark, value in values.items()}
                    specials.append(name)
            except NoValue:
                pass  # no value for it: an object holding it is no instance
        if not known:  # a name only an extra property can hold is not told apart from the others
            needs = {source: wanted for source, wanted in needs.items() if not {source, *wanted} & set(undeclared)}
        unseparated = bool(undeclared) and not known
        marks = {name: tuple(values) for name, values in written.items()}
        states = self.counted_states(schema, members, specials, (len(some), marks, tuple(extra)), needs, unseparated,
                                     pointer)
        return f"{self.punct('{')} {self.object_rules(states, written, extra)} {self.punct('}')}"

    def witnesses(self, schema: dict[str, Any], pointer: str) -> list[tuple[str, Any]]:
        """The object's witnesses (``shared.SOME``, which ``complement`` writes):
        (pattern, schema) pairs. Past ``MAX_WITNESSES``, or with a pattern Python
        cannot run on the declared names, none (the ``not`` that made them reported)."""
        found = schema.get(SOME, [])
        if not isinstance(found, list) or not all(isinstance(pair, (list, tuple)) and len(pair) == 2
                                                  and isinstance(pair[0], str) for pair in found):
            raise SchemaError(f"{pointer or '#'}: {SOME} must list [pattern, schema] pairs")
        pairs = [(pattern, sub) for pattern, sub in found]
        if len(pairs) > MAX_WITNESSES or (pairs and matchable(dict(pairs)) is None):
            self.witnesses_left_out(pointer, f"more than {MAX_WITNESSES} such conditions, or a pattern Python cannot run")
            return []
        return pairs

    def witnesses_left_out(self, pointer: str, why: str) -> None:
        """Reported on the ``not`` (or ``oneOf``) whose complement wrote them."""
        self.approximate(pointer, "not", f"some property a pattern finds holds a value: not enforced, {why}")

    def marked_values(self, schema: Any, some: list[tuple[str, Any]], name: str | None, pointer: str,
                      found: list[int] | None = None) -> dict[int, str]:
        """The value symbols of a property (``name``, or an extra one the witnesses
        ``found`` find), one per mark: ``schema``, and for each witness in the
        mark (a bit each, among those whose pattern finds the name) its schema.
        Mark 0 is ``schema`` alone, so the marks overlap: the parser keeps each
        reading until the object tells them apart (no complement is needed, and
        each witness's schema is reported as any other). Raises ``NoValue`` when
        ``schema`` has no value."""
        if found is None:  # the patterns run in Python (``witnesses`` checked)
            found = [i for i, (pattern, _) in enumerate(some)
                     if name is not None and re.search(ecma.python_regex(pattern), name) is not None]
        values = {0: self.node(schema, pointer)}
        for mark in range(1, 1 << len(some)):
            if all(mark >> i & 1 == 0 or i in found for i in range(len(some))):
                try:
                    values[mark] = self.node({"allOf": [schema, *(sub for i, (_, sub) in enumerate(some) if mark >> i & 1)]},
                                             pointer)
                except NoValue:
                    continue
        return values

    def dependent_required(self, schema: dict[str, Any], pointer: str) -> dict[str, tuple[str, ...]]:
        """name -> the other names that must be present beside it: ``dependentRequired``
        (from 2019-09 on) and the array form of ``dependencies``."""
        needs: dict[str, tuple[str, ...]] = {}
        for key in ("dependentRequired", "dependencies"):
            value = schema.get(key)
            if value is None or (key == "dependentRequired" and not self.dependent_keywords):
                continue
            if not isinstance(value, dict):
                raise SchemaError(f"{pointer or '#'}: {key} must be an object")
            for name, wanted in value.items():
                if key == "dependencies" and not isinstance(wanted, list):
                    continue  # a dependent schema: body() splits the object on it
                if not isinstance(wanted, list) or not all(isinstance(other, str) for other in wanted):
                    raise SchemaError(f"{pointer or '#'}/{key}: {name!r} must list property names")
                needs[name] = tuple(dict.fromkeys((*needs.get(name, ()), *(o for o in wanted if o != name))))
        return {name: wanted for name, wanted in needs.items() if wanted}

    def extra_properties(self, names: list[property_names.Region] | None, patterns: dict[str, Any] | None,
                         additional: Any, declared: list[str], apart: list[str], some: list[tuple[str, Any]],
                         pointer: str) -> dict[int, str]:
        """The symbol of one undeclared property per mark (none: none allowed), names
        ``apart`` left out (in any spelling: ``_other_names``). ``names`` were split by the
        witnesses' patterns too (``some``: after the ``patterns`` in each region's
        ``matched``)."""
        colon = self.punct(":")
        extras: dict[int, list[str]] = {}
        if names is not None:
            assert patterns is not None
            keys = list(patterns)
            for region in names:
                chosen = [keys[i] for i in region.matched if i < len(keys)]
                if chosen:
                    sub = patterns[chosen[0]] if len(chosen) == 1 else {"allOf": [patterns[p] for p in chosen]}
                    where = f"{pointer}/patternProperties/{pointer_token(chosen[0])}"
                elif additional is False:
                    continue
                else:
                    sub, where = additional, f"{pointer}/additionalProperties"
                try:
                    values = self.marked_values(sub, some, None, where, [i - len(keys) for i in region.matched
                                                                         if i >= len(keys)])
                except NoValue:  # no value satisfies these names' schemas: none of them allowed
                    continue
                key = self.terminal(chr(34) + region.regex + chr(34))
                for mark, value in values.items():
                    extras.setdefault(mark, []).append(f"{key} {colon} {value}")
        else:
            try:
                extra_value = None if additional is False else self.node(additional, f"{pointer}/additionalProperties")
            except NoValue:  # additionalProperties no value satisfies: none allowed
                extra_value = None
            if extra_value is not None:
                extras[0] = [f"{self.terminal(_other_names(declared + apart))} {colon} {extra_value}"]
        return {mark: found[0] if len(found) == 1 else self.rule("extra", " | ".join(found))
                for mark, found in sorted(extras.items())}

    def counted_states(self, schema: dict[str, Any], members: list[tuple[str, bool]], specials: list[str],
                       marked: tuple[int, dict[str, tuple[int, ...]], tuple[int, ...]], needs: dict[str, tuple[str, ...]],
                       unseparated: bool, pointer: str) -> ObjectStates:
        """The object's states with as much of the property counts and dependencies
        as ``MAX_OBJECT_STATES`` allows: past it, maxProperties goes first, then
        minProperties, then the dependencies (each reported approximated).
        ``marked``: how many witnesses, the marks of each name, and those of the
        extra properties (none: no extra property)."""
        witnesses, marks, extra_marks = marked
        low = self.count_value(schema, "minProperties", pointer) or 0
        high = self.count_value(schema, "maxProperties", pointer)
        dependency_keys: list[str] = [key for key in ("dependentRequired", "dependencies") if key in schema
                                      and (key != "dependentRequired" or self.dependent_keywords)]
        counts: list[str] = [key for key in ("minProperties", "maxProperties") if key in schema]
        attempts: list[tuple[int, int | None, dict[str, tuple[str, ...]], list[str]]] = [(low, high, needs, [])]
        if high is not None:
            attempts.append((low, None, needs, ["maxProperties"]))
        if low:
            attempts.append((0, None, needs, counts))
        if needs:
            attempts.append((0, None, {}, counts + dependency_keys))
        any_order = self.options.property_order == "any"
        states: ObjectStates | None = None
        for unordered in [True, False] if any_order else [False]:
            limit = MAX_UNORDERED_STATES if unordered else MAX_OBJECT_STATES
            for low, high, kept, dropped in attempts:
                plain = (low, high, kept) == (0, None, {}) and not unordered and not witnesses  # never limited
                try:
                    states = ObjectStates(members, specials, bool(extra_marks), low, high, kept,
                                          None if plain else limit, unordered, witnesses, marks, extra_marks)
                    break
                except TooManyStates:
                    continue
            if states is not None:
                break
        if states is None:  # the plain chain in declared order has no limit: witnesses past it
            self.witnesses_left_out(pointer, f"the object would need more than {MAX_OBJECT_STATES} grammar rules")
            states = ObjectStates(members, specials, bool(extra_marks), low, high, kept, None)
        if any_order and not states.unordered:
            self.approximate(pointer, "properties", f"property_order 'any' would need more than {MAX_UNORDERED_STATES} "
                             "grammar rules here: the declared order is kept (narrower)", narrower=True)
        if states.start is None:
            keys = ", ".join(key for key in ("required", "minProperties", "maxProperties", *dependency_keys) if key in schema)
            raise NoValue(f"{pointer or '#'}: no object satisfies {keys} with the properties allowed")
        for key in ("minProperties", "maxProperties", *dependency_keys):
            if key in dropped:
                self.approximate(pointer, key, f"the object would need more than {MAX_OBJECT_STATES} grammar rules "
                                 "to count its properties and keep its dependencies: not enforced")
            elif key in dependency_keys and unseparated:
                self.approximate(pointer, key, "not enforced for a name only an extra property can hold, beside "
                                 "patternProperties that are not enforced")
            elif key in schema:
                self.report.add(pointer, key, ENFORCED, NAMES_SPELLED if key in dependency_keys else "")
        return states

    def object_rules(self, states: ObjectStates, written: dict[str, dict[int, str]], extra: dict[int, str]) -> str:
        """One rule per state, from the extras back to the first member (a state
        whose one way on is to skip its member is that next state's rule); the
        text of the start state."""
        comma = self.punct(",")
        text: dict[State, str] = {}
        last = states.extras_at
        for state in states.moves:  # the extras' rules first: they loop on one another
            if state.position == last:
                ends = [move.kind for move in states.moves[state]] == ["end"]
                text[state] = "" if ends else self.reserve("more" if state.written else "first")

        def alternative(state: State, move: Move) -> str:
            if move.kind == "end":
                return ""
            assert move.target is not None
            if move.kind == "skip":
                return text[move.target]
            symbol = extra[move.mark] if move.kind == "extra" else written[move.name or ""][move.mark]
            return f"{comma if state.written else ''} {symbol} {text[move.target]}".strip()

        for state in sorted(states.moves, key=lambda state: -state.position):
            moves = states.moves[state]
            if state.position < last and [move.kind for move in moves] == ["skip"]:
                text[state] = alternative(state, moves[0])
                continue
            if state.position < last:
                text[state] = self.reserve("more" if state.written else "first")
            if text[state]:
                self.rules[text[state]] = " | ".join(dict.fromkeys(alternative(state, move) for move in moves))
        assert states.start is not None
        return text[states.start]

    def pattern_properties(self, schema: dict[str, Any], pointer: str) -> dict[str, Any] | None:
        """``patternProperties`` checked (None when absent)."""
        if "patternProperties" not in schema:
            return None
        patterns = schema["patternProperties"]
        if not isinstance(patterns, dict):
            raise SchemaError(f"{pointer or '#'}/patternProperties: must be an object")
        return patterns

    def name_language(self, schema: dict[str, Any], pointer: str) -> string_sets.StringSet | None:
        """The names ``propertyNames`` allows (None: any name, or when it cannot be
        read, which is reported)."""
        if "propertyNames" not in schema:
            return None
        try:
            found = string_sets.of_schema(schema["propertyNames"], f"{pointer}/propertyNames", applicators.draft_of(self))
        except ecma.Unsupported as exc:
            self.approximate(pointer, "propertyNames", f"not enforced: {exc}")
            return None
        if found.formula == string_sets.TRUE:
            self.report.add(pointer, "propertyNames", ENFORCED, "every string is a name it allows")
            return None
        return found

    def names_allowed(self, language: string_sets.StringSet, properties: dict[str, Any], required: set[str],
                      needs: dict[str, tuple[str, ...]], pointer: str
                      ) -> tuple[dict[str, Any], dict[str, tuple[str, ...]], list[str]]:
        """The declared ``properties`` and dependencies ``needs`` left once the
        names ``language`` refuses are absent, with the names now absent (a name
        whose dependencies need an absent name is absent too)."""
        named = dict.fromkeys([*properties, *required, *(n for source, wanted in needs.items() for n in (source, *wanted))])
        refused = {name for name in named if not language.holds(name)}
        absent = set(refused)
        grown = True
        while grown:
            grown = False
            for source, wanted in needs.items():
                if source not in absent and absent.intersection(wanted):
                    absent.add(source)
                    grown = True
        for name in named:
            if name in absent and name in required:
                why = "is a name propertyNames refuses" if name in refused else \
                    "needs a property whose name propertyNames refuses (dependentRequired)"
                raise NoValue(f"{pointer or '#'}: required property {name!r} {why}")
        kept = {name: sub for name, sub in properties.items() if name not in absent}
        return kept, {source: wanted for source, wanted in needs.items() if source not in absent}, \
            [name for name in named if name in absent]

    def name_regions(self, patterns: dict[str, Any] | None, declared: list[str], unmatched: bool,
                     language: string_sets.StringSet | None, pointer: str,
                     witnesses: list[str] | None = None) -> list[property_names.Region] | None:
        """The names beside the ``declared`` ones, split by the patterns they match
        (those matching none only when ``unmatched``), of the ``language`` where
        there is one; None, reported, when no regex of bounded size says so. The
        ``witnesses``' patterns split them too (after the others in ``matched``;
        unreported where they do not, for the caller to try without them)."""
        try:
            found = property_names.regions(list(patterns or {}) + (witnesses or []), declared, unmatched, language)
        except ecma.Unsupported as exc:
            if witnesses:
                return None
            if patterns is not None:
                self.approximate(pointer, "patternProperties", f"not enforced: {exc}")
            if language is not None:
                self.approximate(pointer, "propertyNames", f"the declared names judged one by one, extra names not: {exc}")
            return None
        if patterns is not None:
            self.report.add(pointer, "patternProperties", ENFORCED, NAMES_SPELLED)
        if language is not None:
            self.report.add(pointer, "propertyNames", ENFORCED, NAMES_SPELLED)
        return found
