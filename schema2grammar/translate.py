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

This module holds the entry points and ``Translator``, which composes the keyword
families (``core`` holds what they share) and dispatches a schema place to them.
"""

from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

from schema2grammar import applicators, ecma, spellings, switch, unevaluated, unique_arrays
from schema2grammar.arrays import ArrayKeywords
from schema2grammar.constants import MAX_UNORDERED_MEMBERS, ConstantKeywords
from schema2grammar.core import MAX_DEPTH, OverBudget, TranslatorCore
from schema2grammar.number_keywords import NumberKeywords
from schema2grammar.object_states import MAX_OBJECT_STATES, MAX_UNORDERED_STATES
from schema2grammar.objects import MAX_WITNESSES, ObjectKeywords
from schema2grammar.options import Options
from schema2grammar.property_names import found_by, matchable
from schema2grammar.references import References
from schema2grammar.report import ENFORCED, Report
from schema2grammar.shared import (ANNOTATIONS, CONDITIONAL, DEFINITIONS, LATER, NOWHERE, SOME, VALIDATION_KEYWORDS,
                                   NoValue, SchemaError, check_shapes, count_of, disjoint_types, follow_pointer,
                                   json_equal, written_before)
from schema2grammar.strings import COUNTED_NOTE, MAX_CLOSING_DISTANCE, StringKeywords
from schema2grammar.unique_arrays import UniqueArrays

__all__ = ["COUNTED_NOTE", "MAX_CLOSING_DISTANCE", "MAX_DEPENDENT_RULES", "MAX_DEPENDENT_SCHEMAS", "MAX_DEPTH",
           "MAX_DISTRIBUTED", "MAX_MERGED_REFERENCES", "MAX_OBJECT_STATES", "MAX_SCHEMA_NODES", "MAX_UNORDERED_MEMBERS",
           "MAX_UNORDERED_STATES", "MAX_WITNESSES", "NOWHERE", "Translator", "follow_pointer", "translate",
           "translate_checked"]

MAX_SCHEMA_NODES = 20_000
"""Schema places one translation may visit (a bound on grammar size and time)."""


def translate(schema: Any, options: Options | None = None) -> tuple[str, Report]:
    """The lark grammar of ``schema`` (a dict, a bool, or JSON text) and the report."""
    text, report, _ = _translated(schema, options, checks=False)
    return text, report


def translate_checked(schema: Any, options: Options | None = None) -> tuple[str, Report, UniqueArrays | None]:
    """``translate``, and what a matcher checks beside the grammar: the arrays whose
    ``uniqueItems`` no grammar holds (``unique_arrays``; None where there are
    none). Their report entries say enforced: use the grammar with the checks
    (``structgen.Grammar.from_json_schema`` does)."""
    return _translated(schema, options, checks=True)


def _translated(schema: Any, options: Options | None, checks: bool) -> tuple[str, Report, UniqueArrays | None]:
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"the schema is not valid JSON: {exc}") from None
        except RecursionError:
            raise SchemaError("the schema's JSON nests values too deeply to read") from None
    try:
        translator = Translator(schema, options or Options())
        text, report = translator.run()
        arrays = unique_arrays.checked_places(schema, applicators.draft_of(translator), report) if checks else None
        return text, report, arrays
    except RecursionError:  # a value nested past Python's stack (a listed one: MAX_DEPTH bounds the places)
        raise SchemaError("the schema nests values too deeply to translate") from None


class Translator(References, StringKeywords, NumberKeywords, ArrayKeywords, ObjectKeywords, ConstantKeywords, TranslatorCore):
    """One translation: the keyword families composed, and a schema place
    dispatched to them."""

    def node(self, schema: Any, pointer: str) -> str:
        """The nonterminal (or terminal) for the values ``schema`` accepts."""
        self.visited += 1
        if self.visited > MAX_SCHEMA_NODES:
            raise SchemaError(f"the schema has more than {MAX_SCHEMA_NODES} places to translate")
        if self.made > self.rule_limit:
            raise OverBudget
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
        if "$ref" in schema and not unevaluated.present(self, schema):
            return self.reference(schema, pointer)
        if "$ref" in schema:  # evaluated in place with its siblings; memoized as a reference, for recursion
            return self.cached(f"{schema['$ref']} {json.dumps(schema, sort_keys=True)}", lambda: self.body(schema, pointer),
                               pointer)
        parts = all_of_references(schema)
        if parts is not None:
            return self.merged_references(parts, pointer)
        name = self.fresh("n")
        self.rules[name] = "<building>"  # reserve the name
        try:
            self.rules[name] = self.body(schema, pointer)
        except NoValue:
            del self.rules[name]
            raise
        return name

    def body(self, schema: dict[str, Any], pointer: str) -> str:
        """The alternatives of one schema object: its type branches, combined with
        enum/const and the combinators."""
        report = self.report
        check_shapes(schema, pointer)
        if unevaluated.present(self, schema):
            return unevaluated.evaluated_place(self, schema, pointer)
        for key in schema:
            if key in ANNOTATIONS:
                report.add(pointer, key, ENFORCED, "annotation")
        if "const" in schema or "enum" in schema:
            return self.constants(schema, pointer)
        if "anyOf" in schema or "oneOf" in schema:
            return self.alternatives(schema, pointer)
        if "allOf" in schema:
            return self.all_of(schema, pointer)
        if "if" in schema and self.conditional_keywords:
            # memoized like a reference: recursion through a branch ($ref in else) is a cycle of rules
            return self.cached("if " + json.dumps(schema, sort_keys=True, default=str),
                               lambda: applicators.conditional(self, schema, pointer), pointer)
        if schema_dependency_keys(schema, self.dependent_keywords):
            return self.dependent_schemas(schema, pointer)
        if "not" in schema:
            return applicators.negation(self, schema, pointer)
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

    def merged_references(self, parts: list[Any], pointer: str) -> str:
        """An ``allOf`` with references among its parts, built once per list of parts
        (as a reference is): merging recursive targets (one part's
        additionalProperties judging the names another declares) recurs through
        them. A later place gets the first one's verdict in the report."""
        key = "allOf " + json.dumps(parts)

        def build() -> str:
            return self.all_of({"allOf": parts}, pointer)

        if key in self.by_pointer or key in self.empty:  # built (or being built) already
            status, note = self.merge_verdicts.get(key, (ENFORCED, "merged where first met, which says whether exactly"))
            self.report.add(pointer, "allOf", status, note)
            return self.cached(key, build, pointer)
        start = len(self.report.entries)
        name = self.cached(key, build, pointer)
        verdicts = [e for e in self.report.entries[start:] if (e.pointer, e.keyword) == (pointer, "allOf")]
        self.merge_verdicts[key] = (verdicts[-1].status, verdicts[-1].note) if verdicts else (ENFORCED, "merged")
        return name

    def alternatives(self, schema: dict[str, Any], pointer: str) -> str:
        keyword = "anyOf" if "anyOf" in schema else "oneOf"
        options = schema[keyword]
        if not isinstance(options, list) or not options:
            raise SchemaError(f"{pointer or '#'}: {keyword} must be a non-empty list")
        rest = {k: v for k, v in schema.items() if k != keyword and k not in ANNOTATIONS and k not in DEFINITIONS}
        for key in DEFINITIONS:
            if key in schema:
                self.report.add(pointer, key, ENFORCED, "definitions, used through $ref")
        # written before the schema's properties, the branches declare theirs first: an
        # allOf written first says so (merged), $ref aside (drafts 3-7 ignore its siblings)
        option_first = written_before(schema, keyword, "properties") and "allOf" not in rest and "$ref" not in rest

        def branch(i: int) -> Any:
            if not rest:
                return options[i]
            # the schema's own keywords first where a merge needs one value
            return {"allOf": [options[i]], **rest} if option_first else {"allOf": [rest, options[i]]}

        overlapping = keyword == "oneOf" and len(options) > 1 and not disjoint_types(options)
        if overlapping:
            exclusive, reason = applicators.exclusive(self, options, branch, pointer)
            if exclusive is not None:
                return exclusive
        branches = []
        for i in range(len(options)):
            try:
                branches.append(self.node(branch(i), f"{pointer}/{keyword}/{i}"))
            except NoValue:
                continue  # a branch no value satisfies
        if not branches:
            raise NoValue(f"{pointer or '#'}: no branch of {keyword} accepts a value")
        if overlapping:
            self.approximate(pointer, "oneOf", f"treated as anyOf ({reason}): a value matching several branches is "
                             "not refused")
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
        text = self.switched(schema, parts, pointer) if self.conditional_keywords else None
        if text is not None:
            return text
        merged, exact = self.merged(schema, parts, pointer)
        if exact:
            self.report.add(pointer, "allOf", ENFORCED, "merged")
        else:
            self.approximate(pointer, "allOf", "branches disagree on a keyword, or one limits the others' "
                             "properties: the first one's value is used")
        return self.body(merged, pointer)

    def switched(self, schema: dict[str, Any], parts: list[Any], pointer: str) -> str | None:
        """The ``allOf`` as one branch per case of its conditionals (``switch``),
        when each tests one property against constants or its presence; None
        otherwise, or past ``MAX_SWITCH_VALUES``, ``MAX_SWITCH_CASES`` or
        ``MAX_SWITCH_RULES``, for ``merge`` to nest them."""
        own = {k: v for k, v in schema.items() if k != "allOf"}
        if any(unevaluated.present(self, part) for part in [own, *parts]):
            return None  # then's properties count as evaluated: the conditionals stay with their part
        found = switch.split([own, *parts], self.float_integers)
        if found is None:
            return None
        [kept, *rest], on = found
        written = [k for k in CONDITIONAL if any(isinstance(part, dict) and k in part for part in [schema, *parts])]
        own = {k: v for k, v in schema.items() if k in kept or k == "allOf"}  # allOf's place orders the properties
        start, known, visited = len(self.report.entries), set(self.by_pointer), self.visited
        merged, exact = self.merged(own, rest, pointer)
        inexact: list[str] = []  # the cases whose merge is not exact

        def branches() -> str:
            built: list[str] = []
            for case, guard, chosen in on.cases(merged):
                before, cached = len(self.report.entries), set(self.by_pointer)
                try:
                    built.append(self.node({"allOf": [merged, guard, *chosen]}, pointer))
                except NoValue:
                    continue  # no value of this case satisfies the others
                except SchemaError as exc:  # a limit in a then or else (a reference to itself in allOf...)
                    if self.options.strict or not chosen:
                        raise
                    del self.report.entries[before:]
                    self.forget_cached(cached)
                    inexact.append(f"{case} (its then and else left out: {exc})")
                    try:
                        built.append(self.node({"allOf": [merged, guard]}, pointer))
                    except NoValue:
                        pass
                    continue
                verdicts = self.report.entries[before:]
                if any(e.pointer == pointer and e.keyword == "allOf" and e.status != ENFORCED for e in verdicts):
                    inexact.append(case)
            return " | ".join(built)

        self.depth += 1  # a case may hold this schema again (a $ref): nesting, as through node()
        try:
            text = self.within_budget(switch.MAX_SWITCH_RULES, branches)
        finally:
            self.depth -= 1
        if text is None:
            del self.report.entries[start:]
            self.forget_cached(known)
            self.visited = visited
            return None
        self.report.entries[start:] = [e for e in self.report.entries[start:]
                                       if (e.pointer, e.keyword) != (pointer, "allOf")]
        [name, *more] = on.names
        note = f"one branch per case of {', '.join(map(repr, on.names))}, the properties the ifs test" if more else \
            f"one branch per value of {name!r}, the property the ifs test"
        for key in written:
            self.report.add(pointer, key, ENFORCED, note)
        if exact and not inexact:
            self.report.add(pointer, "allOf", ENFORCED, "merged, one branch per case of its conditionals")
        else:
            where = "" if not inexact else " where " + "; where ".join(inexact)
            self.approximate(pointer, "allOf", f"merged not exactly{where}: the parts disagree on a keyword, or one "
                             "limits the others' properties, and the first one's value is used")
        self.collapse_report(start)
        if not text:
            raise NoValue(f"{pointer or '#'}: no value satisfies the allOf in any case of its conditionals")
        return text

    def merged(self, schema: dict[str, Any], parts: list[Any], pointer: str) -> tuple[dict[str, Any], bool]:
        """``schema`` (its own ``allOf`` aside) and ``parts`` as one schema object, and
        whether that one accepts exactly what all of them do."""
        if self.depth > MAX_DEPTH:
            raise SchemaError(f"{pointer or '#'}: allOf nests more than {MAX_DEPTH} deep")
        merged, _ = applicators.conditional_merge(self, {}, {k: v for k, v in schema.items() if k != "allOf"}, pointer)
        if "additionalItems" in merged and not isinstance(merged.get("items"), list):
            del merged["additionalItems"]  # a no-op without its own tuple items (the parts' do not count)
        sources = [merged.copy()]
        exact = True
        aside: set[str] | None = None  # the names declared before the first part's anyOf/oneOf kept aside
        own = set(schema["properties"]) if isinstance(schema.get("properties"), dict) else set()
        own_last = written_before(schema, "allOf", "properties")  # then the schema's own names follow its parts'
        declared: set[str] = set() if own_last else set(own)  # the names declared so far, in the text's order
        resolved = self.referenced_parts(parts, pointer)
        conditionals = ("if" in merged) + sum(isinstance(part, dict) and "if" in part for part in resolved)
        nest = conditionals <= applicators.MAX_NESTED_CONDITIONALS \
            and self.depth + applicators.NESTING_PER_CONDITIONAL * conditionals <= MAX_DEPTH
        for part in resolved:
            if part is True or part == {}:
                continue
            if part is False:
                raise NoValue(f"{pointer or '#'}: allOf holds false")
            if not isinstance(part, dict):
                raise SchemaError(f"{pointer or '#'}: allOf holds {part!r}")
            check_shapes(part, pointer)
            if "additionalItems" in part and not isinstance(part.get("items"), list):
                part = {k: v for k, v in part.items() if k != "additionalItems"}  # a no-op without tuple items
            part, agrees = applicators.conditional_merge(self, merged, part, pointer, nest)
            exact = exact and agrees
            sources.append(part)
            combinator = next((k for k in ("anyOf", "oneOf") if k in part and k not in merged), None)
            names = set(part["properties"]) if isinstance(part.get("properties"), dict) else set()
            if aside is None and combinator is not None:
                aside = declared if written_before(part, combinator, "properties") else declared | names
                aside = aside - own if own_last else aside
            declared = declared | names
            for key, value in part.items():
                if key in _TUPLE_KEYWORDS and key in merged:
                    continue  # _merge_tuples, once every part is in
                if key not in merged:
                    merged[key] = value
                elif key in ("properties", "patternProperties"):  # a name both declare: its value must satisfy both
                    merged[key] = _merged_schemas(merged[key], value)
                elif key == "required":
                    merged[key] = list(dict.fromkeys(merged[key] + value))
                elif key == "not":  # not A, and not B: not (A or B)
                    merged[key] = {"anyOf": [merged[key], value]}
                elif key == SOME:  # each part's witnesses
                    merged[key] = [*merged[key], *value]
                elif key == "propertyNames":  # every name holds to both
                    merged[key] = _both(merged[key], value)
                elif key == "type" and "nullable" not in merged and "nullable" not in part:
                    merged[key] = _common_type(merged[key], value, pointer)
                elif key in ("enum", "const"):  # the values both list
                    merged[key] = _common_values(key, merged[key], value, pointer)
                elif merged[key] == value or key not in _MERGE_KEYWORDS:
                    continue  # the same, or an annotation (a key JSON Schema does not define): the first one's
                elif key in _BOUNDS and (tighter := _tighter(key, merged, part)) is not None:
                    merged[key] = tighter
                elif key == "multipleOf" and (common := _common_multiple(merged[key], value)) is not None:
                    merged[key] = common
                elif key == "pattern" and (both := _both_patterns(merged[key], value)) is not None:
                    merged[key] = both
                elif key in ("anyOf", "oneOf") and (pairs := _distributed(merged[key], value)) is not None:
                    merged[key] = pairs
                else:
                    exact = False
        _merge_additional(merged, sources)
        for source in sources:
            exact = _judge_foreign_names(merged, source) and exact
        if own_last and "properties" in merged:  # the parts' anyOf/oneOf names come first too (LATER)
            merged["properties"] = _parts_names_first(merged["properties"], schema["properties"])
        _order_later(merged, aside)
        return merged, _merge_tuples(merged, sources) and exact

    def dependent_schemas(self, schema: dict[str, Any], pointer: str) -> str:
        """``dependentSchemas`` (and the schema form of ``dependencies``): one
        branch per subset of their names present, where each present name is
        required and its schema merged in, each absent one has schema ``false``.
        Exact when every merge is (``merged``); the branches' keywords are listed
        once each."""
        start = len(self.report.entries)
        keys = schema_dependency_keys(schema, self.dependent_keywords)
        found = self.schema_dependencies(schema, keys, pointer)
        rest = {k: v for k, v in _without_schema_dependencies(schema, keys).items() if k not in ANNOTATIONS}
        spelled = json.dumps(schema, sort_keys=True)
        if len(found) > MAX_DEPENDENT_SCHEMAS:
            for key in keys:
                self.approximate(pointer, key, f"more than {MAX_DEPENDENT_SCHEMAS} names with a dependent schema "
                                 "(a copy of the object's grammar for each subset of them present): not enforced")
            text = self.body(rest, pointer)
        elif spelled in self.splitting:
            for key in keys:  # a dependent schema that holds this one again, inline: no end to the copies
                self.approximate(pointer, key, "a dependent schema leads back to this schema: not enforced there")
            text = self.body(rest, pointer)
        elif found and _may_be_object(rest):
            text = self.split_within_budget(spelled, rest, found, keys, pointer)
        else:  # nothing to split on, or no object to split
            for key in keys:
                self.report.add(pointer, key, ENFORCED)
            text = self.body(rest, pointer)
        self.collapse_report(start)
        return text

    def schema_dependencies(self, schema: dict[str, Any], keys: list[str], pointer: str) -> dict[str, list[Any]]:
        """name -> the schemas an object holding it must satisfy too (``true`` left out)."""
        found: dict[str, list[Any]] = {}
        for key in keys:
            if not isinstance(schema[key], dict):
                raise SchemaError(f"{pointer or '#'}: {key} must be an object")
            for name, sub in schema[key].items():
                if not isinstance(sub, list) and sub is not True and sub != {}:  # a list: dependentRequired's kind
                    found.setdefault(name, []).append(sub)
        return found

    def split_within_budget(self, spelled: str, rest: dict[str, Any], found: dict[str, list[Any]], keys: list[str],
                            pointer: str) -> str:
        """``dependency_branches``, given up (reported) when they would add more
        than ``MAX_DEPENDENT_RULES`` rules; the rules built meanwhile are left
        unreachable."""
        self.splitting.add(spelled)
        try:
            text = self.within_budget(MAX_DEPENDENT_RULES, lambda: self.dependency_branches(rest, found, keys, pointer))
        finally:
            self.splitting.discard(spelled)
        if text is not None:
            return text
        for key in keys:
            self.approximate(pointer, key, f"the branches (a copy of the object's grammar for each subset of the "
                             f"names present) would take more than {MAX_DEPENDENT_RULES} rules: not enforced")
        return self.body(rest, pointer)

    def dependency_branches(self, rest: dict[str, Any], found: dict[str, list[Any]], keys: list[str], pointer: str) -> str:
        branches: list[str] = []
        exact = True
        for present in _subsets(list(found)):
            try:
                merged, merged_exact = self.merged(
                    _dependency_branch(rest, list(found), present), [sub for name in present for sub in found[name]], pointer)
                exact = exact and merged_exact
                branches.append(self.node(merged, pointer))
            except NoValue:
                continue  # these names cannot be present together
        for key in keys:
            if exact:
                self.report.add(pointer, key, ENFORCED, "one branch per subset of the names present")
            else:
                self.approximate(pointer, key, "a dependent schema disagrees with the object's own keywords, or one "
                                 "limits the other's properties: merged as allOf merges, the first one's value used")
        if not branches:
            raise NoValue(f"{pointer or '#'}: no object satisfies the dependent schemas")
        return " | ".join(branches)

    def referenced_parts(self, parts: list[Any], pointer: str) -> list[Any]:
        """``allOf``'s parts with each local ``$ref`` replaced by what it points to,
        plus its siblings from 2019-09 on (before, they are ignored beside it), each
        part's own ``allOf`` by its parts (in the text's place: declared order), and
        each part holding ``unevaluated*`` by what it means on its own (its ``$ref``
        evaluated with it: ``unevaluated.expanded_part``)."""
        pending = list(reversed(parts))
        found: list[Any] = []
        followed = 0
        while pending:
            part = pending.pop()
            if unevaluated.present(self, part):
                pending.extend(reversed(unevaluated.expanded_part(self, part, pointer)))
                continue
            if flattened_in_place(part):
                own = {k: v for k, v in part.items() if k != "allOf"}  # a part's allOf: its parts in its place
                inner = part["allOf"]
                pending.extend(reversed([*inner, own] if written_before(part, "allOf", "properties") else [own, *inner]))
                continue
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


MAX_MERGED_REFERENCES = 1_000
"""References one ``allOf`` merge may follow (a chain of them, or a cycle)."""


MAX_DEPENDENT_SCHEMAS = 4
"""Names with a dependent schema at one place: each splits the object's grammar in
two (the name absent, or present with its schema merged in), so 2**4 copies at most;
past it they are reported approximated."""


MAX_DEPENDENT_RULES = 2_000
"""Grammar rules the branches of one split on dependent schemas may add (each
branch copies the object's grammar); past it the split is given up, reported."""


def schema_dependency_keys(schema: dict[str, Any], dependent_keywords: bool) -> list[str]:
    """The keywords of ``schema`` that hold dependent schemas: ``dependentSchemas``
    (when the draft has it) and ``dependencies`` unless every value is a list."""
    keys = ["dependentSchemas"] if dependent_keywords and "dependentSchemas" in schema else []
    value = schema.get("dependencies")
    if value is not None and (not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values())):
        keys.append("dependencies")
    return keys


def _without_schema_dependencies(schema: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """``schema`` without its dependent schemas (``dependencies``' lists stay)."""
    rest = {k: v for k, v in schema.items() if k not in keys}
    lists = {name: v for name, v in schema.get("dependencies", {}).items() if isinstance(v, list)} if "dependencies" in keys else {}
    if lists:
        rest["dependencies"] = lists
    return rest


def _dependency_branch(rest: dict[str, Any], names: list[str], present: tuple[str, ...]) -> dict[str, Any]:
    """``rest`` with the ``present`` names required (an object, then) and the
    other ``names`` absent (schema ``false``)."""
    branch = dict(rest)
    absent = {name: False for name in names if name not in present}
    if absent:
        branch["properties"] = {**rest.get("properties", {}), **absent}
    if present:
        branch["required"] = list(dict.fromkeys([*rest.get("required", []), *present]))
        branch["type"] = "object"
    return branch


def _subsets(names: list[str]) -> list[tuple[str, ...]]:
    """Every subset of ``names``, in their order, the smaller first."""
    return [subset for size in range(len(names) + 1) for subset in itertools.combinations(names, size)]


def _may_be_object(schema: dict[str, Any]) -> bool:
    declared = schema.get("type", "object")
    return declared == "object" or (isinstance(declared, list) and "object" in declared)


def all_of_references(schema: dict[str, Any]) -> list[Any] | None:
    """The parts of a schema that is only ``allOf`` when one of them is a ``$ref``:
    such a merge may recur through the references, so it is built once per list
    of parts."""
    parts = flat_all_of(schema)
    return parts if parts is not None and any(isinstance(part, dict) and "$ref" in part for part in parts) else None


def flat_all_of(schema: Any) -> list[Any] | None:
    """The parts of a schema that is only ``allOf``, nested ones flattened (None for another schema)."""
    if not isinstance(schema, dict) or set(schema) != {"allOf"} or not isinstance(schema["allOf"], list):
        return None
    parts: list[Any] = []
    for part in schema["allOf"]:
        inner = flat_all_of(part)
        parts.extend(inner if inner is not None else [part])
    return parts


def _both(first: Any, second: Any) -> Any:
    """A schema both ``first`` and ``second`` hold to (one of them where the other is true)."""
    if second is True or second == {} or first == second:
        return first
    if first is True or first == {}:
        return second
    if isinstance(first, dict) and set(first) == {"allOf"} and isinstance(first["allOf"], list):
        return {"allOf": [*first["allOf"], second]}  # flat: a hundred parts merged one by one nest no deeper
    return {"allOf": [first, second]}


def _parts_names_first(properties: dict[str, Any], own: Any) -> dict[str, Any]:
    """Merged ``properties`` in the declared order of a schema whose ``allOf`` is
    written before its own ``properties``: the names only its parts declare come
    first, then its own in their order (a part that only narrows a property the
    schema declares does not move it: Github o10011's oneOf is written first and
    narrows two of its four properties; o89710's declares two more)."""
    if not isinstance(own, dict):
        return properties
    return {**{n: s for n, s in properties.items() if n not in own}, **{n: s for n, s in properties.items() if n in own}}


def flattened_in_place(part: Any) -> bool:
    """Whether an ``allOf`` part's own ``allOf`` is merged as its parts, in its
    place (declared order): not where a conditional is among them, which the
    nested ``allOf``'s own merge splits into cases (``switched``)."""
    if not isinstance(part, dict) or "$ref" in part or not isinstance(part.get("allOf"), list):
        return False
    return not any(isinstance(p, dict) and any(k in p for k in CONDITIONAL) for p in [part, *part["allOf"]])


def _order_later(merged: dict[str, Any], aside: set[str] | None) -> None:
    """Keep the text's order where a merge keeps an ``anyOf``/``oneOf`` aside: the
    names declared after it (not in ``aside``) are marked ``LATER`` while it is
    there, for each branch's merge; once merged without one, those names go last
    (after the branch's own) and the mark goes."""
    names = merged.get("properties")
    if aside is not None and isinstance(names, dict):
        later = [name for name in names if name not in aside and name not in merged.get(LATER, [])]
        if later:
            merged[LATER] = [*merged.get(LATER, []), *later]
    if LATER in merged and "anyOf" not in merged and "oneOf" not in merged:
        last = set(merged.pop(LATER))
        if isinstance(names, dict):
            merged["properties"] = {**{n: s for n, s in names.items() if n not in last},
                                    **{n: s for n, s in names.items() if n in last}}


def _common_values(key: str, first: Any, second: Any, pointer: str) -> Any:
    """Two parts' ``enum`` (the values both list, JSON equality) or ``const`` (one
    value, if they are equal); none in common is no value."""
    if key == "const":
        if not json_equal(first, second):
            raise NoValue(f"{pointer or '#'}: allOf's parts have different const values")
        return first
    if not isinstance(first, list) or not isinstance(second, list):
        raise SchemaError(f"{pointer or '#'}: enum must be a list")
    common = [value for value in first if any(json_equal(value, other) for other in second)]
    if not common:
        raise NoValue(f"{pointer or '#'}: allOf's parts list no enum value in common")
    return common


def _merged_schemas(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two ``allOf`` parts' ``properties`` (or ``patternProperties``) as one: a name
    (pattern) both hold takes both schemas; the first part's order, then the second's."""
    return {**first, **{name: _both(first[name], sub) if name in first else sub for name, sub in second.items()}}


def _merge_additional(merged: dict[str, Any], sources: list[dict[str, Any]]) -> None:
    """A name no part declares is extra in each: every part's
    ``additionalProperties`` judges it (``allOf`` of them). Where the parts see
    different patterns, the first one's only (``_judge_foreign_names`` reports it):
    another part's pattern may let a name pass that the others would judge."""
    judging = [source for source in sources if "additionalProperties" in source]
    values = list({json.dumps(s["additionalProperties"], sort_keys=True): s["additionalProperties"] for s in judging}.values())
    if len(values) < 2:
        return
    patterns = set(merged.get("patternProperties", {}))
    same = all(set(source.get("patternProperties", {})) == patterns for source in judging)
    merged["additionalProperties"] = {"allOf": values} if same else judging[0]["additionalProperties"]


def _judge_foreign_names(merged: dict[str, Any], source: dict[str, Any]) -> bool:
    """Hold each property another part declares to what ``source``'s
    ``additionalProperties`` (or the patterns of ``source`` that find its name)
    says of it: in ``source`` that name is an extra one. False when that cannot be
    said exactly (another part's patterns, patterns Python cannot run): ``merged``
    is then wider. (A part's ``unevaluatedProperties`` became ``additionalProperties``
    beside what it evaluates before the merge: ``unevaluated.expanded_part``.)"""
    foreign = [name for name in merged.get("properties", {}) if name not in source.get("properties", {})]
    others = set(merged.get("patternProperties", {})) - set(source.get("patternProperties", {}))
    if "additionalProperties" not in source or not (foreign or others):
        return True
    patterns = matchable(source.get("patternProperties"))
    if others or (patterns is None and "patternProperties" in source):
        return False
    properties = dict(merged["properties"])
    for name in foreign:
        judges = [sub for sub in found_by(patterns, name) or [source["additionalProperties"]] if sub is not True and sub != {}]
        if judges:
            properties[name] = {"allOf": [properties[name], *judges]}
    merged["properties"] = properties
    return True


_TUPLE_KEYWORDS = ("prefixItems", "items", "additionalItems")


_MERGE_KEYWORDS = (VALIDATION_KEYWORDS | {"type", "enum", "const", "not", "divisibleBy", "disallow", "extends"}) \
    - {"additionalProperties"}
"""Keys on which ``allOf``'s parts may disagree (``additionalProperties`` is merged
apart); any other key is an annotation, and the first part's value is kept."""


_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains",
           "maxContains")


_BOUNDS = _COUNTS + ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
"""Keys whose values two parts' tighter one replaces (the larger of ``min*``, the
smaller of ``max*``)."""


MAX_DISTRIBUTED = 64
"""Branches of two ``anyOf``s (or ``oneOf``s) merged as one: one per pair; past it,
the merge is not exact (the first part's is kept, reported)."""


def _bound_of(schema: dict[str, Any], key: str) -> Any:
    """``schema``'s ``key`` (one of ``_BOUNDS``) where the tighter of two replaces it: a
    count, or a number beside no draft-4 boolean ``exclusiveMinimum``/
    ``exclusiveMaximum``; None otherwise."""
    value = schema.get(key)
    if key in _COUNTS:
        return count_of(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return None if any(isinstance(schema.get(flag), bool) for flag in ("exclusiveMinimum", "exclusiveMaximum")) else value


def _tighter(key: str, first: dict[str, Any], second: dict[str, Any]) -> Any:
    """The tighter of two schemas' ``key`` (None where either is no such bound)."""
    a, b = _bound_of(first, key), _bound_of(second, key)
    if a is None or b is None:
        return None
    return max(a, b) if key.startswith(("min", "exclusiveMin")) else min(a, b)


def _common_multiple(first: Any, second: Any) -> int | float | None:
    """The least common multiple of two ``multipleOf``s (a multiple of both is one
    of it), as JSON writes a number; None where either is no positive number or the
    result would lose digits as a float."""
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0
           for v in (first, second)):
        return None
    a, b = Fraction(Decimal(repr(first))), Fraction(Decimal(repr(second)))
    denominator = math.lcm(a.denominator, b.denominator)  # over it, both are integers
    found = Fraction(math.lcm(a.numerator * (denominator // a.denominator), b.numerator * (denominator // b.denominator)),
                     denominator)
    if found.denominator == 1:
        return found.numerator
    as_float = float(found)
    return as_float if Fraction(Decimal(repr(as_float))) == found else None


def _both_patterns(first: Any, second: Any) -> str | None:
    """One pattern that finds what both do: the first as a lookahead from the
    start (which ``ecma.conjuncts`` reads as a second automaton). None where either
    has lookarounds of its own (they would not be leading ones) or does not parse."""
    if not isinstance(first, str) or not isinstance(second, str):
        return None
    try:
        if any(ecma.conjuncts(pattern) != [(True, pattern)] for pattern in (first, second)):
            return None
    except ecma.Unsupported:
        return None
    return f"^(?=[\\s\\S]*?(?:{first}))[\\s\\S]*?(?:{second})"


def _distributed(first: Any, second: Any) -> list[Any] | None:
    """Two parts' ``anyOf`` (or ``oneOf``) as one: a branch per pair, both branches
    merged. (Some a and some b) is some pair; (exactly one a and exactly one b) is
    exactly one pair, since the pairs matched are the a's times the b's. None past
    ``MAX_DISTRIBUTED`` or where either is no list."""
    if not isinstance(first, list) or not isinstance(second, list) or len(first) * len(second) > MAX_DISTRIBUTED:
        return None
    return [_both(a, b) for a in first for b in second]


def _tuple_of(source: dict[str, Any]) -> tuple[list[Any], Any, str] | None:
    """A part's tuple, the schema of the items after it (None: no constraint),
    and how it spells the tuple ("items" as a list, "prefixItems", or "" for
    none); None when the part says nothing of items."""
    items = source.get("items")
    if isinstance(items, list):
        return items, source.get("additionalItems"), "items"
    prefix = source.get("prefixItems")
    if prefix is None and items is None:
        return None
    return prefix if isinstance(prefix, list) else [], items, "prefixItems" if isinstance(prefix, list) else ""


def _merge_tuples(merged: dict[str, Any], sources: list[dict[str, Any]]) -> bool:
    """The parts' tuples as one, item by item, as long as the longest: where a part's
    own tuple is shorter, its schema for the items after it holds there, and the
    items after every tuple take every part's. False (the first part's kept) when
    the parts spell tuples both ways."""
    found = [tuple_ for tuple_ in map(_tuple_of, sources) if tuple_ is not None]
    spellings = {spelling for _, _, spelling in found if spelling}
    if len(found) < 2 or len(spellings) > 1:
        return len(spellings) < 2
    length = max(len(prefix) for prefix, _, _ in found)
    prefix = [_all([p[i] if i < len(p) else rest for p, rest, _ in found if i < len(p) or rest is not None])
              for i in range(length)]
    rests = [rest for _, rest, _ in found if rest is not None]
    for key in _TUPLE_KEYWORDS:
        merged.pop(key, None)
    as_list = spellings == {"items"}
    if length:
        merged["items" if as_list else "prefixItems"] = prefix
    if rests:
        merged["additionalItems" if as_list and length else "items"] = _all(rests)
    return True


def _all(schemas: list[Any]) -> Any:
    """One schema that holds to each of ``schemas`` (true for none)."""
    found: Any = True
    for schema in schemas:
        found = _both(found, schema)
    return found


def _common_type(a: Any, b: Any, pointer: str) -> Any:
    """The types two ``allOf`` parts both allow (an integer is a number)."""
    first, second = (value if isinstance(value, list) else [value] for value in (a, b))
    common = [kind for kind in first if kind in second or (kind == "integer" and "number" in second)]
    common += [kind for kind in second if kind == "integer" and "number" in first and kind not in common]
    if not common:
        raise NoValue(f"{pointer or '#'}: allOf parts allow no common type")
    return common[0] if len(common) == 1 else common
