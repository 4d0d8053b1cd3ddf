"""``anyOf``, ``oneOf`` and ``allOf``: alternatives as a union of rules, an ``allOf``
merged into one schema object (``merging``) after its references are followed,
or split into one branch per case of its conditionals (``switch``)."""

from __future__ import annotations

import json
from typing import Any

from schema2grammar import applicators, switch, unevaluated
from schema2grammar.core import MAX_DEPTH, TranslatorCore
from schema2grammar.merging import finish_merge, flattened_in_place, merge_keywords
from schema2grammar.report import ENFORCED
from schema2grammar.shared import (ANNOTATIONS, CONDITIONAL, DEFINITIONS, NoValue, SchemaError, check_shapes,
                                   disjoint_types, written_before)

MAX_MERGED_REFERENCES = 1_000
"""References one ``allOf`` merge may follow (a chain of them, or a cycle)."""


class Combinators(TranslatorCore):
    """The combinators of a schema place, and ``allOf``'s merge."""

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
            exact = merge_keywords(merged, part, pointer) and exact
        return merged, finish_merge(merged, sources, schema["properties"] if own_last else None, aside) and exact

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
