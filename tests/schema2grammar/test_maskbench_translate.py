"""The translator on the public MaskBench file (../shared/data): each schema gives a
grammar text or a clean ``SchemaError``, never another exception, and never
unbounded work (the translator's own limits: ``MAX_SCHEMA_NODES``, ``MAX_DEPTH``,
``MAX_ITEMS_CHAIN``, the length bound). Every fourth schema here (a quarter of
the file's 90 s on two cores); ``make conformance`` compiles all 8,527 and counts
any other exception as a crash."""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest
from data_files import maskbench_path, translated_schemas
from schema2grammar import SchemaError, translate

pytestmark = pytest.mark.slow


def test_maskbench_schemas_translate_or_fail_cleanly() -> None:
    outcomes: Counter[str] = Counter()
    with gzip.open(maskbench_path(), "rt", encoding="utf-8") as lines:  # a clear error when it is missing
        for number, line in enumerate(lines):
            if number % 4:
                continue
            record = json.loads(line)
            try:
                text, report = translate(record["schema"])
            except SchemaError as exc:
                assert str(exc), record["id"]
                outcomes["refused"] += 1
                continue
            assert text.startswith("start: ") and report.entries is not None, record["id"]
            outcomes["translated"] += 1
    assert sum(outcomes.values()) == len(range(0, 8527, 4))
    assert outcomes["translated"] > 0.98 * sum(outcomes.values()), outcomes


def test_schema_grammars_read_without_lark_as_lark_reads_them() -> None:
    """``lark_rules`` reads the plain grammars the translator writes without lark;
    on every 40th MaskBench schema the rules are lark's, rule for rule."""
    from structgen import GrammarError, lark_rules

    compared = 0
    for record, text in translated_schemas(every=40):
        plain = lark_rules._read_plain(text, "start")
        try:
            by_lark = lark_rules._read_with_lark(text, "start")
        except GrammarError:
            assert plain is None, record["id"]
            continue
        assert plain is None or plain == by_lark, record["id"]
        compared += plain is not None
    assert compared > 150
