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

import json
from dataclasses import replace
from typing import Any

from schema2grammar import applicators, unevaluated, unique_arrays
from schema2grammar.arrays import ArrayKeywords
from schema2grammar.combinators import MAX_MERGED_REFERENCES, Combinators
from schema2grammar.constants import MAX_UNORDERED_MEMBERS, ConstantKeywords
from schema2grammar.core import MAX_DEPTH, OverBudget
from schema2grammar.dependent_schemas import (MAX_DEPENDENT_RULES, MAX_DEPENDENT_SCHEMAS, DependentSchemas,
                                              schema_dependency_keys)
from schema2grammar.merging import MAX_DISTRIBUTED, all_of_references
from schema2grammar.number_keywords import NumberKeywords
from schema2grammar.object_states import MAX_OBJECT_STATES, MAX_UNORDERED_STATES
from schema2grammar.objects import MAX_WITNESSES, ObjectKeywords
from schema2grammar.options import Options
from schema2grammar.references import References
from schema2grammar.report import ENFORCED, Report
from schema2grammar.shared import (ANNOTATIONS, NOWHERE, NoValue, SchemaError, check_reserved, check_shapes,
                                   follow_pointer)
from schema2grammar.strings import COUNTED_NOTE, MAX_CLOSING_DISTANCE, StringKeywords
from schema2grammar.translation import CountedString, Translation

__all__ = ["COUNTED_NOTE", "MAX_CLOSING_DISTANCE", "MAX_DEPENDENT_RULES", "MAX_DEPENDENT_SCHEMAS", "MAX_DEPTH",
           "MAX_DISTRIBUTED", "MAX_MERGED_REFERENCES", "MAX_OBJECT_STATES", "MAX_SCHEMA_NODES", "MAX_UNORDERED_MEMBERS",
           "MAX_UNORDERED_STATES", "MAX_WITNESSES", "NOWHERE", "CountedString", "Translation", "Translator",
           "follow_pointer", "translate", "translate_checked"]

MAX_SCHEMA_NODES = 20_000
"""Schema places one translation may visit (a bound on grammar size and time)."""


def translate(schema: Any, options: Options | None = None) -> tuple[str, Report]:
    """The lark grammar of ``schema`` (a dict, a bool, or JSON text) and the report."""
    found = _translated(schema, options, checks=False)
    return found.lark, found.report


def translate_checked(schema: Any, options: Options | None = None) -> Translation:
    """``translate``, with what a matcher checks beside the grammar, as data
    (``Translation``): the arrays whose ``uniqueItems`` no grammar holds
    (``unique_arrays``) and the string maxima it counts. Their report entries say
    enforced: use the grammar with the checks (``structgen.Grammar.from_json_schema`` does)."""
    return _translated(schema, options, checks=True)


def _translated(schema: Any, options: Options | None, checks: bool) -> Translation:
    if isinstance(schema, (str, bytes)):
        try:
            schema = json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"the schema is not valid JSON: {exc}") from None
        except RecursionError:
            raise SchemaError("the schema's JSON nests values too deeply to read") from None
    check_reserved(schema)
    try:
        translator = Translator(schema, options or Options())
        found = translator.run()
        if not checks:
            return found
        return replace(found, unique_arrays=unique_arrays.checked_places(schema, applicators.draft_of(translator), found.report))
    except RecursionError:  # a value nested past Python's stack (a listed one: MAX_DEPTH bounds the places)
        raise SchemaError("the schema nests values too deeply to translate") from None


class Translator(References, StringKeywords, NumberKeywords, ArrayKeywords, ObjectKeywords, Combinators,
                 DependentSchemas, ConstantKeywords):
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
