"""shortest_completion: the shortest text that lets an output end."""

from __future__ import annotations

import warnings

import pytest

import structgen
from structgen.completion import shortest_completion

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2},
        "age": {"type": "integer", "minimum": 10},
        "tags": {"type": "array", "items": {"enum": ["x", "yy"]}, "minItems": 1},
    },
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def info() -> structgen.TokenizerInfo:
    vocab = [bytes([b]) for b in range(32, 127)] + [b""]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no tokens for control bytes: on purpose
        return structgen.TokenizerInfo(vocab, stop_token_ids=[len(vocab) - 1], special_token_ids=[len(vocab) - 1])


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ('{"name":"A', '0","age":10,"tags":["x"]}'),
        ('{"name":"Al","age":1', '0,"tags":["x"]}'),
        ('{"name":"Al","age":12,"tags":["yy",', '"x"]}'),
        ('{"name":"Al","age":12,"tags":["x"]', "}"),
        ('{"name":"Al","age":12,"tags":["x"]}', ""),
        ("", '{"name":"00","age":10,"tags":["x"]}'),
    ],
)
def test_shortest_completion(info: structgen.TokenizerInfo, prefix: str, expected: str) -> None:
    grammar = structgen.Grammar.from_json_schema(SCHEMA, whitespace="compact")
    matcher = structgen.Matcher(structgen.compile(grammar, info))
    assert matcher.accept_string(prefix)
    before = matcher.allowed_tokens()
    completion = shortest_completion(matcher)
    assert completion == expected.encode()
    assert grammar.accepts(prefix + expected)
    assert matcher.allowed_tokens() == before  # not moved


def test_bounds_give_no_answer_rather_than_a_long_search(info: structgen.TokenizerInfo) -> None:
    grammar = structgen.Grammar.from_regex(r"a{300}")
    matcher = structgen.Matcher(structgen.compile(grammar, info))
    assert shortest_completion(matcher, max_bytes=100) is None
    assert shortest_completion(matcher) == b"a" * 300
    assert shortest_completion(matcher, max_nodes=10) is None
