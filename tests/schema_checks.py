"""Shared by the schema2grammar tests: a schema's grammar against jsonschema on
hand-written instances, and a matcher's masks against an oracle token by token."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import jsonschema

from schema2grammar import DRAFT_SEMANTICS
from structgen import Grammar


def draft_grammar(schema: Any, **options: Any) -> Grammar:
    """``Grammar.from_json_schema`` under ``DRAFT_SEMANTICS``, to compare with a validator."""
    return Grammar.from_json_schema(schema, **{**DRAFT_SEMANTICS, **options})


def agrees(schema: Any, valid: list[Any], invalid: list[Any]) -> None:
    """The report is exact, jsonschema agrees with the lists, and so does the grammar
    (compact and indented; instances written in the schema's declared order)."""
    grammar = draft_grammar(schema)
    assert grammar.report.exact, str(grammar.report)
    validator = jsonschema.validators.validator_for(schema)(schema)
    for instance in valid:
        assert validator.is_valid(instance), instance
        for indent in (None, 2):
            assert grammar.accepts(json.dumps(instance, ensure_ascii=False, indent=indent)), (schema, instance)
    for instance in invalid:
        assert not validator.is_valid(instance), instance
        assert not grammar.accepts(json.dumps(instance, ensure_ascii=False)), (schema, instance)


def masks_follow_oracle(matcher: Any, token_ids: list[int], vocab: list[bytes],
                        oracle: Callable[[list[int], bytes, list[bytes]], set[int]], label: Any) -> tuple[bytes, int | None]:
    """Feed ``token_ids`` one by one, asserting at each that the matcher's mask is
    ``oracle(grammar's tokens, text so far, vocab)`` and that ``accept_token``
    agrees with it; the text written, and the token refused (None: all taken)."""
    written = b""
    for token in token_ids:
        allowed = set(matcher.allowed_tokens())
        assert allowed == oracle(matcher._engine.allowed_tokens(), written, vocab), (label, written)
        if not matcher.accept_token(token):
            assert token not in allowed
            return written, token
        assert token in allowed
        written += vocab[token]
    return written, None
