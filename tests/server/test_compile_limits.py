"""The LR construction's limits: its deadline checks, its bound on work (and so on
memory), and a server that keeps answering while a compile runs.

2,400 optional integer properties (63,722 bytes, under the server's 64 KiB schema
limit) once took the LALR construction 46 s and 5 GB past a 30 s compile limit,
with ``/health`` unanswered all along: the construction checked no deadline after
its first phase, visited n² closure items, and compiled code never gave up the GIL.
"""

from __future__ import annotations

import threading
from typing import Any

import httpx2
import pytest

import structgen
from clocks import SetClock, TickingClock
from schema2grammar import Options, translate
from structgen.engine.deadline import CompileTimeout, Deadline, run_within
from structgen.engine.lr import MAX_LR_WORK, GrammarTooLargeError, build_lalr
from structgen.lark_rules import ParserTooLarge, read_lark


def optional_properties(count: int) -> dict[str, Any]:
    return {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(count)}}


def rules_of(schema: Any) -> Any:
    text, _ = translate(schema, Options(whitespace="compact", closed_objects=True))
    return read_lark(text)


def test_the_construction_counts_its_work_and_stops_at_its_bound() -> None:
    rules = rules_of(optional_properties(100))
    table = build_lalr(len(rules.terminals), rules.rules, rules.start)
    assert 0 < table.work < MAX_LR_WORK
    with pytest.raises(GrammarTooLargeError, match=f"more than {table.work - 1:,} closure items"):
        build_lalr(len(rules.terminals), rules.rules, rules.start, work_limit=table.work - 1)
    assert build_lalr(len(rules.terminals), rules.rules, rules.start, work_limit=table.work).work == table.work


def test_a_grammar_past_the_bound_is_a_grammar_error() -> None:
    """Past ``MAX_LR_WORK`` (about 820 optional properties in declared order): a
    ``GrammarError`` the server answers with a 400, not a compile that runs on."""
    with pytest.raises(ParserTooLarge, match="the grammar is too large: .* closure items"):
        structgen.Grammar.from_json_schema(optional_properties(900), whitespace="compact", closed_objects=True)


@pytest.mark.parametrize("checks", [3, 40, 120])
def test_every_phase_checks_the_deadline(checks: int) -> None:
    """A deadline of ``checks`` readings on a ticking clock stops the construction at
    exactly that check, wherever it falls: 400 properties make 4,796 states, so a
    check every ``CHECK_EVERY`` states is 74 checks in the kernels' phase, and the
    120th falls in the lookaheads' (the kernels' phase alone once checked, 18 times)."""
    rules = rules_of(optional_properties(400))
    clock = TickingClock(step=1.0)
    with pytest.raises(CompileTimeout, match=f"ran past its {checks} s limit"):
        run_within(Deadline(checks, clock), lambda: build_lalr(len(rules.terminals), rules.rules, rules.start))
    assert clock.readings == 1 + checks


def test_a_cancelled_construction_stops_at_its_next_check() -> None:
    rules = rules_of(optional_properties(400))
    deadline = Deadline(1.0, SetClock())
    deadline.cancel()
    with pytest.raises(CompileTimeout, match="was cancelled"):
        run_within(deadline, lambda: build_lalr(len(rules.terminals), rules.rules, rules.start))


@pytest.mark.server
def test_the_server_answers_while_a_compile_runs() -> None:
    """While a request's grammar is built (its LR construction, compiled code), the
    event loop still answers: ``/health`` and ``/metrics`` come back with the compile
    still counted as running; then the request gets its 400 ``grammar_too_large``."""
    from structgen.server import Limits, create_app
    from test_server import KEY, MODEL, metrics, serving
    from tiny_model import tiny_model
    from waiting import wait_until

    tokenizer = structgen.load_tokenizer()
    limits = Limits(compile_seconds=600.0, compile_clock=SetClock())  # the deadline never passes: the bound stops it
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3,
            "response_format": {"type": "json_schema", "json_schema": {"name": "big", "schema": optional_properties(1_200)}}}
    answers: list[httpx2.Response] = []
    with serving(create_app(tiny_model(tokenizer), tokenizer, model_id=MODEL, api_key=KEY, limits=limits)) as base:
        headers = {"Authorization": f"Bearer {KEY}"}
        sender = threading.Thread(target=lambda: answers.append(httpx2.post(base + "/chat/completions", json=body,
                                                                            headers=headers, timeout=600)))
        sender.start()
        wait_until(lambda: metrics(base)["structgen_compiling_requests"] == 1, "the compile started")
        healthy = 0
        while not answers and healthy < 20:
            assert httpx2.get(base.removesuffix("/v1") + "/health", timeout=600).status_code == 200
            if metrics(base)["structgen_compiling_requests"] == 1:
                healthy += 1
        sender.join()
    assert healthy >= 3, "the event loop did not answer while the compile ran"
    [answer] = answers
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "grammar_too_large"
    assert answer.json()["error"]["param"] == "response_format"
