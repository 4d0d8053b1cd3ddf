"""The vLLM integration's pure logic, without vLLM: per-request arguments
(``request_args``) and the matcher that follows vLLM's output-token list
(``request_matcher``), on a small byte vocabulary."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from structgen import Grammar, Matcher, TokenizerInfo, allocate_token_bitmask, compile
from structgen.bitmask import allowed_in_row
from structgen.integrations.request_args import constraint_from_args, structgen_args
from structgen.integrations.request_matcher import PLACEHOLDER, RequestMatcher, token_row

EOS, OTHER_STOP = 256, 257
INFO = TokenizerInfo([bytes([b]) for b in range(256)] + [b"", b""], stop_token_ids=[EOS, OTHER_STOP])
SIZE = INFO.vocab_size


def digit(text: str) -> int:
    return text.encode()[0]  # token id == byte value


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"structgen_regex": 5}, "structgen_regex must be a string, not int"),
        ({"structgen_regex": None}, "structgen_regex must be a string, not NoneType"),
        ({"structgen_grammar": ["x"]}, "structgen_grammar must be lark text, not list"),
        ({"structgen_choices": "yes"}, "structgen_choices must be a list of strings, not str"),
        ({"structgen_choices": []}, "structgen_choices: "),
        ({"structgen_regex": "("}, "structgen_regex: "),
        ({"structgen_json_schema": "{not json"}, "structgen_json_schema: "),
        ({"structgen_json_schema": "{}", "structgen_options": '{"bogus": 1}'}, "structgen_options: .*bogus"),
        ({"structgen_json_schema": "{}", "structgen_options": '{"whitespace": "pretty"}'}, "structgen_options: "),
        ({"structgen_json_schema": "{}", "structgen_options": "[1]"}, "structgen_options: not a JSON object"),
        ({"structgen_regex": "a", "structgen_options": '{"whitespace": "compact"}'}, "applies to structgen_json_schema only"),
        ({"structgen_regex": "a", "structgen_choices": ["b"]}, "name exactly one of"),
        ({"structgen_pattern": "a"}, "structgen_pattern"),
    ],
)
def test_a_bad_argument_is_refused_by_its_name(args: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=f"^structgen: .*{message}"):
        constraint_from_args(args)


def test_good_arguments_name_their_constraint() -> None:
    assert constraint_from_args({"other_processor": 1}) is None
    assert constraint_from_args(None) is None
    schema = {"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "integer"}}}
    args = structgen_args(schema=schema, whitespace="flexible")
    assert list(json.loads(args["structgen_json_schema"])["properties"]) == ["b", "a"]  # order kept
    for given in (args, {"structgen_json_schema": schema}, structgen_args(regex="[0-9]+"), structgen_args(choices=["a", "b"])):
        constraint = constraint_from_args(given)
        assert constraint is not None and constraint.grammar is not None
    with pytest.raises(ValueError, match="apply to schema= only"):
        structgen_args(regex="a", whitespace="compact")  # would be refused when the request arrives
    with pytest.raises(ValueError, match="exactly one"):
        structgen_args(regex="a", choices=["b"])
    with pytest.raises(ValueError, match="not one string"):
        structgen_args(choices="yes")  # not the choices y, e and s


def tracked(output: list[int], ends: tuple[int, ...] = (EOS,), pattern: str = "[0-9]{3}") -> RequestMatcher:
    matcher = Matcher(compile(Grammar.from_regex(pattern), INFO))
    not_stops = ~token_row({EOS, OTHER_STOP, *ends}, SIZE)
    return RequestMatcher(matcher, object(), output, token_row(ends, SIZE), not_stops)


def row(request: RequestMatcher) -> list[int]:
    bitmask = allocate_token_bitmask(1, SIZE)
    request.sync()
    request.fill(bitmask, 0)
    return allowed_in_row(bitmask, 0, SIZE)


DIGITS = [digit(str(d)) for d in range(10)]


def test_stop_tokens_only_once_complete_and_only_those_vllm_stops_on() -> None:
    five = digit("5")
    out: list[int] = []
    request = tracked(out, ends=(EOS, five))
    assert row(request) == [d for d in DIGITS if d != five]  # vLLM would stop on "5" mid-output
    out += [digit("1"), digit("2")]
    assert five not in row(request)
    out.append(digit("3"))
    assert row(request) == sorted([five, EOS])  # complete: OTHER_STOP is no end vLLM knows
    out.append(EOS)
    assert row(request) == sorted([five, EOS])


def test_the_matcher_follows_what_vllm_takes_back_and_skips_placeholders() -> None:
    out = [digit("1"), digit("2"), PLACEHOLDER]
    request = tracked(out)
    assert row(request) == DIGITS and request.fed == 2
    out[2:] = [digit("3")]
    assert row(request) == [EOS]
    del out[1:]  # discarded (a failed KV load), then another sampled in its place
    out.append(digit("9"))
    assert row(request) == DIGITS and request.consumed == [digit("1"), digit("9")]
    out.clear()
    assert row(request) == DIGITS and request.fed == 0


def test_a_refused_token_leaves_only_ends_until_taken_back() -> None:
    out = [digit("x")]
    request = tracked(out)
    assert row(request) == [EOS] and request.refused
    out[0] = digit("7")  # rewritten in place
    assert row(request) == DIGITS and not request.refused


def test_token_row_ignores_ids_past_the_vocabulary() -> None:
    assert allowed_in_row(token_row([0, 33, SIZE, -1], SIZE)[np.newaxis], 0, SIZE) == [0, 33]


def test_request_args_and_matcher_import_no_engine() -> None:
    code = (
        "import sys, structgen.integrations.request_args, structgen.integrations.request_matcher; "
        "print([m for m in ('vllm', 'torch') if m in sys.modules])"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_an_output_nothing_can_continue_is_ended_not_sampled_from_nothing() -> None:
    out: list[int] = []
    request = tracked(out, ends=(EOS, digit("5")), pattern="5[0-9]")  # its only start is a token vLLM stops on
    assert row(request) == sorted([EOS, digit("5")])
    from structgen.productive import EmptyLanguage

    with pytest.raises(EmptyLanguage):  # a grammar with no string at all is refused when it is built
        tracked([], pattern="[^\\x00-\\U0010ffff]")


def test_a_second_phase_takes_over_after_its_text_and_gives_way_on_rollback() -> None:
    from structgen.integrations.request_matcher import NextPhase

    first = Matcher(compile(Grammar.from_lark("start: [TEXT]\nTEXT: /[a-z]+(>>)?|>>/\n"), INFO))  # text, optionally the trigger ">>"
    phase = NextPhase(compile(Grammar.from_regex(">>[0-9]"), INFO), ">>", INFO.join_bytes, frozenset({EOS, OTHER_STOP}))
    out: list[int] = []
    request = RequestMatcher(first, object(), out, token_row([EOS], SIZE), ~token_row({EOS, OTHER_STOP}, SIZE), phase)
    out += [digit("h"), digit("i"), digit(">")]
    assert row(request) == [digit(">")]
    out.append(digit(">"))
    assert row(request) == DIGITS and request.switched == 4  # the second phase: a digit, no end yet
    out.append(digit("7"))
    assert row(request) == [EOS]
    del out[3:]  # vLLM took back the trigger's end: the first phase again
    assert row(request) == [digit(">")] and request.switched is None
    out += [digit(">"), digit("3")]  # two tokens at once (a replay) cross into the second phase
    assert row(request) == [EOS] and request.switched == 4


def test_a_failed_request_may_only_end() -> None:
    out: list[int] = []
    request = RequestMatcher(None, object(), out, token_row([EOS], SIZE), ~token_row({EOS}, SIZE), failed=True)  # type: ignore[arg-type]
    assert row(request) == [EOS]
    out.append(digit("1"))
    del out[:]
    assert row(request) == [EOS]  # a rollback does not revive it


def test_constraint_args_name_the_server_constraints_again() -> None:
    from structgen.constraint import make_constraint
    from structgen.integrations.request_args import (
        NEXT_AFTER_KEY,
        NEXT_GRAMMAR_KEY,
        constraint_args,
        next_phase_from_args,
    )

    schema = {"type": "object", "properties": {"é": {"type": "integer"}}, "required": ["é"]}
    for constraint in (
        make_constraint(schema=schema, schema_options={"whitespace": "compact", "closed_objects": True}),
        make_constraint(regex="[0-9]+"),
        make_constraint(choices=["yes", "no"]),
        make_constraint(grammar='start: "a"+\n'),
    ):
        args = constraint_args(constraint)
        again = constraint_from_args(args)
        assert again is not None and again.grammar is constraint.grammar  # the same cached grammar
    assert constraint_args(make_constraint()) == {}
    with pytest.raises(ValueError, match="not built from text"):
        constraint_args(make_constraint(grammar=Grammar.from_regex("a")))
    phase = next_phase_from_args({NEXT_GRAMMAR_KEY: 'start: "x"\n', NEXT_AFTER_KEY: "<"})
    assert phase is not None and phase[1] == "<"
    with pytest.raises(ValueError, match="go together"):
        next_phase_from_args({NEXT_GRAMMAR_KEY: 'start: "x"\n'})
    with pytest.raises(ValueError, match="name exactly one"):
        constraint_from_args({NEXT_GRAMMAR_KEY: 'start: "x"\n', NEXT_AFTER_KEY: "<"})  # a second phase needs a first
