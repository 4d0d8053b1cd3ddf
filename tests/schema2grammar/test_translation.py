"""``schema2grammar.Translation``: the translator's result as data, and the counted
maxima it names by terminal are the ones the compiled grammar's check counts."""

from __future__ import annotations

from typing import Any

import pytest

from schema2grammar import CountedString, Options, Translation, translate, translate_checked
from structgen import Grammar
from structgen.json.string_lengths import StringLengths

WORDS = "^[a-z]+( [a-z]+)*$"
SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"a": {"type": "string", "maxLength": 100}, "b": {"type": "string", "maxLength": 3},
                                      "c": {"type": "string", "pattern": WORDS, "maxLength": 50}},
     "required": ["a", "b", "c"]},
    {"type": "array", "items": {"type": "string", "maxLength": 40}, "uniqueItems": True},
    {"anyOf": [{"type": "string", "maxLength": 1000}, {"type": "integer"}]},
    {"type": "string", "maxLength": 5},
]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_counted_strings_are_the_grammars_counted_terminals(schema: dict[str, Any]) -> None:
    translation = translate_checked(schema)
    assert isinstance(translation, Translation)
    assert translation.lark == translate(schema)[0]  # (the report differs where the matcher checks uniqueItems)
    grammar = Grammar.from_json_schema(schema)
    check = grammar.check(StringLengths)
    names = [terminal.name for terminal in grammar.rules.terminals]
    counted = {names[terminal]: most for terminal, most in check.maxima.items()} if check is not None else {}
    assert counted == {name: found.maximum for name, found in translation.counted_strings.items()}
    late = {names[terminal]: most for terminal, most in check.late.items()} if check is not None else {}
    assert late == {name: found.late for name, found in translation.counted_strings.items() if found.late}
    for name, found in translation.counted_strings.items():
        assert translation.report.entries[found.tag].keyword == "maxLength"
        line = next(line for line in translation.lark.splitlines() if line.startswith(f"{name}: "))
        assert found.group("")[:-1] in line  # the group that carries it in the text


def test_unique_arrays_come_as_data() -> None:
    assert translate_checked(SCHEMAS[1]).unique_arrays is not None
    assert translate_checked(SCHEMAS[0]).unique_arrays is None


def test_no_counted_string_where_the_lexer_counts() -> None:
    assert translate_checked(SCHEMAS[3]).counted_strings == {}
    assert translate_checked(SCHEMAS[0], Options(lexer_max_length=200)).counted_strings == {}


@pytest.mark.parametrize("counted", [CountedString(7), CountedString(32767, 4), CountedString(50, 9, 3)])
def test_the_group_name_reads_back(counted: CountedString) -> None:
    group = counted.group('"x"')
    name = group[len("(?P<"): group.index(">")]
    assert CountedString.read(name) == counted
    assert CountedString.read("max_length_x") is None and CountedString.read("other") is None
