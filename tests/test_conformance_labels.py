"""The conformance harness's grouping of compile errors by keyword
(benchmarks/maskbench.py): the keyword a message names, not a name in its pointer."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def maskbench(benchmark_module: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_module("maskbench")


@pytest.mark.parametrize(("message", "keyword"), [
    ("NoValue: /properties/dimensions: no value matches exactly one branch of oneOf", "oneOf"),
    ("SchemaError: #/$defs/items/properties: maxLength 2 is below minLength 3", "maxLength"),
    ("SchemaError: /properties/a: not refuses every value the other keywords allow", "not"),
    ("LexerTooLarge: the terminals' automaton: the automaton needs more than 50000 DFA states",
     "the automaton needs more than … DFA states"),
])
def test_compile_errors_are_grouped_by_the_keyword_at_fault(maskbench, message: str, keyword: str) -> None:  # type: ignore[no-untyped-def]
    assert maskbench.error_keyword(message) == keyword
