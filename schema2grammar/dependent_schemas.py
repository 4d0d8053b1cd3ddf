"""``dependentSchemas`` (and the schema form of ``dependencies``): the object's
grammar split into one branch per subset of the names present, each present
name's schema merged in as ``allOf`` merges."""

from __future__ import annotations

import itertools
import json
from typing import Any

from schema2grammar.core import TranslatorCore
from schema2grammar.report import ENFORCED
from schema2grammar.shared import ANNOTATIONS, NoValue, SchemaError

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


class DependentSchemas(TranslatorCore):
    """One branch per subset of the names with a dependent schema present."""

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
