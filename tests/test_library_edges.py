"""Bad input to the library is the library's own error, naming what and where:
never a bare ``KeyError``, an approximation that hides a malformed schema, or a
bitmask written in a form its reader misreads."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import structgen
from schema2grammar import SchemaError, ecma
from structgen.bitmask import allowed_in_row


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "object", "required": [1, None]}, "#"),
        ({"properties": {"a": {"type": "object", "required": ["x", 2]}}}, "/properties/a"),
        ({"type": "object", "required": "name"}, "#"),
    ],
)
def test_required_must_list_names(schema: dict[str, Any], where: str) -> None:
    with pytest.raises(SchemaError, match=f"^{where}: required must be a list"):
        structgen.Grammar.from_json_schema(schema)


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("[", "an unterminated character class"),
        ("(?<", "an unterminated group name"),
        ("(a", "an unterminated group"),
        ("a)", "unbalanced"),
        ("a{3,2}", "n < m"),
        ("*a", "nothing to repeat"),
        ("[z-a]", "out of order"),
    ],
)
def test_an_invalid_pattern_is_a_schema_error(pattern: str, why: str) -> None:
    """Not "approximated: any string": the schema is wrong, and says where."""
    with pytest.raises(SchemaError, match=rf"^/properties/code: pattern .* is not a regular expression: .*{why}"):
        structgen.Grammar.from_json_schema({"properties": {"code": {"type": "string", "pattern": pattern}}})
    with pytest.raises(ecma.InvalidPattern):
        ecma.parse(pattern)


def test_a_pattern_no_automaton_holds_stays_an_approximation() -> None:
    grammar = structgen.Grammar.from_json_schema({"type": "string", "pattern": "(?<=a)b"})
    assert [e.status for e in grammar.report.entries if e.keyword == "pattern"] == ["approximated"]


@pytest.fixture(scope="module")

def matcher() -> Any:
    with warnings.catch_warnings():  # a toy vocabulary spells few bytes
        warnings.simplefilter("ignore")
        info = structgen.TokenizerInfo([b"a", b"b", b"c"] + [f"t{i}".encode() for i in range(40)], stop_token_ids=[0])
    return structgen.Matcher(structgen.compile(structgen.Grammar.from_regex("b+"), info))


@pytest.mark.parametrize(
    ("bitmask", "error"),
    [
        (np.zeros((1, 2), dtype=np.int8), "must be int32"),
        (np.zeros((1, 2), dtype=np.int64), "must be int32"),
        (np.zeros((1, 2), dtype=np.float64), "must be int32"),
        (np.zeros((1, 1), dtype=np.int32), "1 words a row; 43 tokens need 2"),
        (np.zeros((1, 1, 2), dtype=np.int32), "one row or \\(batch, words\\) rows"),
    ],
)
def test_the_bitmask_is_checked(matcher: Any, bitmask: Any, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        matcher.fill_next_token_bitmask(bitmask)


def test_the_bitmask_row_and_its_kind_are_checked(matcher: Any) -> None:
    with pytest.raises(ValueError, match="row 3 is not in a bitmask of 2 rows"):
        matcher.fill_next_token_bitmask(structgen.allocate_token_bitmask(2, 43), 3)
    frozen = structgen.allocate_token_bitmask(1, 43)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        matcher.fill_next_token_bitmask(frozen)
    with pytest.raises(TypeError, match="numpy array"):
        matcher.fill_next_token_bitmask([[0, 0]])
    good = structgen.allocate_token_bitmask(2, 43)
    matcher.fill_next_token_bitmask(good, 1)
    assert allowed_in_row(good, 1, 43) == [1] and allowed_in_row(good, 0, 43) == list(range(43))
    wide = np.full((1, 3), -1, dtype=np.int32)  # a word more than 43 tokens need: cleared
    matcher.fill_next_token_bitmask(wide)
    assert allowed_in_row(wide, 0, 43) == [1] and wide[0, 2] == 0
    assert (frozen == -1).all()  # the refused write left it as allocated


@pytest.mark.parametrize("schema", [{"oneOf": [{"type": {"a": 1}}, {"type": "number"}]},
                                    {"oneOf": [{"type": ["string", 3]}, {"type": "null"}]}])
def test_a_malformed_type_in_a_branch_is_named(schema: dict[str, Any]) -> None:
    """Found by ``make fuzz`` (fuzz/cases): oneOf compared the branches' types before
    reading them, and a dict among them was a ``TypeError``."""
    with pytest.raises(SchemaError, match="^/oneOf/0: unknown type"):
        structgen.Grammar.from_json_schema(schema)


def test_an_empty_type_list_is_a_schema_error() -> None:
    """Found by ``make fuzz``: ``{"type": []}`` built a grammar of the empty text."""
    with pytest.raises(SchemaError, match="^/anyOf/0: type must name at least one type"):
        structgen.Grammar.from_json_schema({"anyOf": [{"type": []}]})
