"""Shared by the schema2grammar tests: a schema's grammar against jsonschema on
hand-written instances."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

from structgen import Grammar


def agrees(schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    """The report is exact, jsonschema agrees with the lists, and so does the grammar
    (compact and indented; instances written in the schema's declared order)."""
    grammar = Grammar.from_json_schema(schema)
    assert grammar.report.exact, str(grammar.report)
    validator = jsonschema.validators.validator_for(schema)(schema)
    for instance in valid:
        assert validator.is_valid(instance), instance
        for indent in (None, 2):
            assert grammar.accepts(json.dumps(instance, ensure_ascii=False, indent=indent)), (schema, instance)
    for instance in invalid:
        assert not validator.is_valid(instance), instance
        assert not grammar.accepts(json.dumps(instance, ensure_ascii=False)), (schema, instance)
