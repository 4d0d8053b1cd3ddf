"""One bad request fails no other (issue 42, "Isolation").

A request's constraint is checked before it joins the shared batch — a language
that no finite text is in, a text this vocabulary cannot spell — and refused with
a 400 and a ``code``; a failure that is one sequence's own inside a step (its mask,
its token) fails that request alone. Each test here keeps good requests decoding —
one streamed, one whole — while a bad one arrives, and checks that they finish as
they would alone: ``[DONE]`` and a 200.

The good requests are free text on a tiny model that never wants to stop
(``NoStop``), so they run to ``max_tokens``. ``Gate`` parks the scheduler in the
forward pass of the first step that decodes both of them, and the bad request is
sent while it is parked: refused at once, or queued to join at the next step
(what it did before these checks, where it then failed the whole batch). No test
depends on how fast a step is.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Iterator

import pytest

import structgen
from test_server import KEY, MODEL, NoStop, metrics, serving, wait_for_idle
from tiny_model import tiny_model
from waiting import wait_until

pytestmark = pytest.mark.server

HEADERS = {"Authorization": f"Bearer {KEY}"}
GOOD_TOKENS = 48
FAULT = "please fail"  # in a prompt: FaultyEngine breaks that request's masks


class Gate:
    """A forward hook that, once ``arm``ed, parks the first forward pass of a batch
    of at least ``rows`` rows until ``release``."""

    def __init__(self, model: Any, rows: int = 2) -> None:
        self.rows = rows
        self.armed = False
        self.parked = threading.Event()
        self.opened = threading.Event()
        model.register_forward_hook(self._hook)

    def arm(self) -> None:
        self.parked.clear()
        self.opened.clear()
        self.armed = True

    def release(self) -> None:
        self.armed = False
        self.opened.set()

    def _hook(self, module: Any, args: Any, output: Any) -> Any:
        if self.armed and output.logits.shape[0] >= self.rows:
            self.armed = False
            self.parked.set()
            self.opened.wait()
        return output


class FailingMask:
    """A matcher whose masks fail after ``good`` of them (an injected fault inside a step)."""

    def __init__(self, matcher: Any, good: int) -> None:
        self._matcher = matcher
        self._good = good

    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> None:
        if self._good <= 0:
            raise RuntimeError("injected fault: this mask fails")
        self._good -= 1
        self._matcher.fill_next_token_bitmask(bitmask, index)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._matcher, name)


def faulty_engine(model: Any, tokenizer: Any) -> Any:
    """The server's engine, but a request whose prompt holds ``FAULT`` gets matchers
    whose masks fail at its third step."""
    from structgen.server.engine import Engine

    class FaultyEngine(Engine):
        def prepare(self, prompts: list[list[int]], *args: Any, **kwargs: Any) -> Any:
            sequences = super().prepare(prompts, *args, **kwargs)
            if FAULT in tokenizer.decode(prompts[0]):
                for sequence in sequences:
                    sequence.matcher = FailingMask(sequence.matcher, good=2)
            return sequences

    return FaultyEngine(model, tokenizer, 16)


@pytest.fixture(scope="module")
def isolated() -> Iterator[tuple[str, Gate]]:
    from structgen.server import create_app

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer, seed=2)
    NoStop(model, tokenizer)
    gate = Gate(model)
    engine = faulty_engine(model, tokenizer)
    with serving(create_app(model, tokenizer, model_id=MODEL, api_key=KEY, engine=engine)) as base:
        yield base, gate
        gate.release()


def chat(base: str, fields: dict[str, Any], stream: bool, content: str = "Tell me a story.") -> tuple[int, Any]:
    """A chat request: its status and its JSON body, or (streamed, status 200) its SSE
    events' data (``[DONE]`` as the string)."""
    import httpx2

    body = {"model": MODEL, "messages": [{"role": "user", "content": content}], "stream": stream, **fields}
    with httpx2.stream("POST", base + "/chat/completions", json=body, headers=HEADERS, timeout=120) as response:
        if not stream or response.status_code != 200:
            response.read()
            return response.status_code, response.json()
        events: list[Any] = []
        for line in response.iter_lines():
            if line.startswith("data: "):
                data = line[len("data: ") :]
                events.append(data if data == "[DONE]" else json.loads(data))
        return response.status_code, events


def assert_finished_normally(streamed: tuple[int, Any], whole: tuple[int, Any]) -> None:
    status, events = streamed
    assert status == 200 and events[-1] == "[DONE]", events[-3:]
    assert not any(isinstance(e, dict) and "error" in e for e in events), [e for e in events if "error" in e]
    assert events[-2]["choices"][0]["finish_reason"] == "length"
    status, body = whole
    assert status == 200, body
    assert body["choices"][0]["finish_reason"] == "length" and body["usage"]["completion_tokens"] == GOOD_TOKENS


def beside_good_requests(base: str, gate: Gate, send_bad: Any, bad_sequences: int = 1) -> tuple[Any, tuple[int, Any], tuple[int, Any]]:
    """Start a good streamed and a good whole request; once both decode (the gate
    parks that step), call ``send_bad`` in a thread; once it has been answered, or its
    ``bad_sequences`` are queued to join, let the step go. Returns what ``send_bad``
    returned and the good requests' results."""
    wait_for_idle(base)
    good = {"max_tokens": GOOD_TOKENS}
    with ThreadPoolExecutor(4) as pool:
        gate.arm()
        streamed = pool.submit(chat, base, good, True)
        whole = pool.submit(chat, base, good, False)
        try:
            wait_until(gate.parked.is_set, "a step decoding both good requests")
            bad: Future[Any] = pool.submit(send_bad)
            wait_until(lambda: bad.done() or metrics(base)["structgen_queued_sequences"] >= bad_sequences, "the bad request answered or queued")
        finally:
            gate.release()
        return bad.result(), streamed.result(), whole.result()


BAD_CONSTRAINTS = [
    pytest.param({"guided_regex": "\U00050000"}, "guided_regex", "unspellable", id="regex-U+50000"),
    pytest.param({"guided_regex": "[\U00040000-\U000bffff]+"}, "guided_regex", "unspellable", id="regex-U+40000-U+BFFFF"),
    pytest.param({"guided_regex": "\x04"}, "guided_regex", "unspellable", id="regex-0x04"),
    pytest.param({"response_format": {"type": "json_schema", "json_schema": {"name": "loop", "schema": {"$ref": "#"}}}},
                 "response_format", "empty_language", id="schema-ref-itself"),
    pytest.param({"guided_json": {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}},
                 "guided_json", "empty_language", id="schema-ref-cycle"),
    pytest.param({"guided_json": {"type": "object", "properties": {"x": {"$ref": "#"}}, "required": ["x"]}},
                 "guided_json", "empty_language", id="schema-no-finite-value"),
    pytest.param({"guided_grammar": 'start: start "a"'}, "guided_grammar", "empty_language", id="lark-start-needs-itself"),
    pytest.param({"guided_grammar": 'value: "a"'}, "guided_grammar", "empty_language", id="lark-without-start"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "param", "code"), BAD_CONSTRAINTS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_bad_constraint_is_a_400_and_the_others_finish(
    isolated: tuple[str, Gate], fields: dict[str, Any], param: str | None, code: str, stream: bool
) -> None:
    base, gate = isolated
    (status, error), streamed, whole = beside_good_requests(base, gate, lambda: chat(base, {"max_tokens": 40, **fields}, stream))
    assert status == 400, error
    assert error["error"]["code"] == code and error["error"]["param"] == param and error["error"]["message"]
    assert error["error"]["type"] == "invalid_request_error"
    assert_finished_normally(streamed, whole)


def test_a_failure_inside_a_step_fails_only_its_own_request(isolated: tuple[str, Gate]) -> None:
    """A fault in one request's masks (injected: they fail at its third step) after
    it joined: that request alone fails — a 500 whole, an error event and no
    ``[DONE]`` streamed — and the good ones finish."""
    base, gate = isolated
    faulty = {"max_tokens": 40, "guided_regex": "[a-z ]{1,300}"}

    def send_bad() -> tuple[tuple[int, Any], tuple[int, Any]]:
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(chat, base, faulty, False, FAULT)
            second = pool.submit(chat, base, faulty, True, FAULT)
            return first.result(), second.result()

    (whole_bad, streamed_bad), streamed, whole = beside_good_requests(base, gate, send_bad, bad_sequences=2)
    status, body = whole_bad
    assert status == 500 and body["error"]["type"] == "server_error", body
    status, events = streamed_bad
    assert status == 200 and "[DONE]" not in events and events[-1]["error"]["type"] == "server_error", events[-3:]
    assert_finished_normally(streamed, whole)
    wait_for_idle(base)
    assert chat(base, {"max_tokens": 3}, False)[0] == 200  # and the server goes on serving


def test_a_dead_end_fails_its_sequence_alone() -> None:
    """In the decoder: a sequence whose mask allows no token (a text its vocabulary
    cannot spell, compiled here without ``structgen.spelling``, as before the check)
    ends alone with ``DeadEnd``; before, its argmax took token 0 and the step raised
    for the whole batch. The other sequence decodes to its end."""
    from structgen.constraint import make_constraint
    from structgen.decoding import DeadEnd
    from structgen.generate import _decoder
    from structgen.matcher import Matcher, _compiled

    tokenizer = structgen.load_tokenizer()
    model = tiny_model(tokenizer, seed=3)
    NoStop(model, tokenizer)
    decoder = _decoder(model, tokenizer)
    prompt = [int(i) for i in tokenizer("Once")["input_ids"]]
    good = decoder.new_sequence(prompt, make_constraint(regex="[a-z]{1,12}"), 12)
    bad = decoder.new_sequence(prompt, make_constraint(regex="[a-z]{1,12}"), 12)
    bad.matcher = Matcher(_compiled(structgen.Grammar.from_regex("x\U00050000"), decoder.info, False))  # after x, nothing
    with pytest.raises(DeadEnd, match="allows no token"):
        decoder.run([good, bad])
    assert bad.finish_reason == "error" and isinstance(bad.error, DeadEnd) and bad.text(decoder.info) == "x"
    assert good.error is None and good.finish_reason in ("stop", "length") and good.text(decoder.info)
