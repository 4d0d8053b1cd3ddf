"""Mistral's ``[TOOL_CALLS]`` as the special token it is in Mistral's own tokenizers.

A live server on a tiny random-weight Llama over the real Mistral v3 SentencePiece
vocabulary (``mistral-common``'s file; nothing downloaded), with a Mistral-style
chat template: the calls must start with the one ``[TOOL_CALLS]`` token (the
model's own syntax), never with the tag spelled as text, and be read back as calls.
A forward hook steers the random model toward a script, token by token; the
grammar (and the server's escape for the tag token) still decides what is allowed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import openai
import pytest

import vocabularies
from test_server import KEY, MODEL, TIME, WEATHER, arguments_of, serving
from tiny_model import tiny_model

pytestmark = pytest.mark.server

TAG = "[TOOL_CALLS]"
TEMPLATE = (
    "{% if messages[0].role == 'assistant' %}{{ raise_exception('Conversation roles must start with user') }}{% endif %}"
    "{{ bos_token }}{% if tools %}[AVAILABLE_TOOLS]{{ tools | tojson }}[/AVAILABLE_TOOLS]{% endif %}"
    "{% for m in messages %}{% if m.role == 'user' %}[INST]{{ m.content }}[/INST]"
    "{% elif m.role == 'assistant' %}{{ m.content or '' }}{% if m.tool_calls %}[TOOL_CALLS]{{ m.tool_calls | tojson }}{% endif %}{{ eos_token }}"
    "{% elif m.role == 'tool' %}[TOOL_RESULTS]{{ m.content }}[/TOOL_RESULTS]{% else %}{{ m.content }}{% endif %}{% endfor %}"
)
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


class Steer:
    """Biases the model toward writing ``text``: at each step, toward the token
    whose bytes are the longest prefix of what is left (the tag: its one token)."""

    def __init__(self, model: Any, tokenizer: Any, tag_id: int) -> None:
        from structgen.generate import tokenizer_info_for

        self.info = tokenizer_info_for(tokenizer, model.get_output_embeddings().weight.shape[0])
        self.tag_id = tag_id
        self.inst_end = tokenizer.convert_tokens_to_ids("[/INST]")
        self.text: str | None = None
        self.fed: list[int] = []
        model.register_forward_hook(self._hook, with_kwargs=True)

    def written(self) -> list[int]:
        """What came after the prompt (which ends with the last ``[/INST]``)."""
        ends = [i for i, t in enumerate(self.fed) if t == self.inst_end]
        return self.fed[ends[-1] + 1 :] if ends else []

    def _bytes(self, token_id: int) -> bytes:
        return TAG.encode() if token_id == self.tag_id else self.info.decoded_vocab[token_id]

    def _hook(self, module: Any, args: Any, kwargs: dict[str, Any], output: Any) -> Any:
        ids = kwargs["input_ids"]
        assert ids.shape[0] == 1, "a script drives one sequence"
        if int(kwargs["position_ids"][0, 0]) == 0:
            self.fed = []
        self.fed += [int(i) for i in ids[0]]
        if self.text is None:
            return output
        done = b"".join(self._bytes(t) for t in self.written())
        goal = self.text.encode()
        if goal.startswith(done):
            rest = goal[len(done) :]
            if TAG.encode() in rest:
                rest = rest[: rest.index(TAG.encode())]  # text up to the tag, then the tag's token
            if not rest:
                wanted = self.tag_id if goal[len(done) :] else self.info.stop_token_ids[0]
            else:
                wanted = max(
                    (i for i, data in enumerate(self.info.decoded_vocab) if data and rest.startswith(data)),
                    key=lambda i: len(self.info.decoded_vocab[i]),
                )
            output.logits[0, -1, wanted] += 1000.0
        return output


@pytest.fixture(scope="module")
def mistral(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[openai.OpenAI, Steer, Any]]:
    from structgen.server import create_app

    tokenizer = vocabularies.mistral_v3(Path(tmp_path_factory.mktemp("mistral")))
    tokenizer.chat_template = TEMPLATE
    model = tiny_model(tokenizer)
    tag_id = tokenizer.convert_tokens_to_ids(TAG)
    steer = Steer(model, tokenizer, tag_id)
    app = create_app(model, tokenizer, model_id=MODEL, api_key=KEY)
    with serving(app) as base:
        yield openai.OpenAI(base_url=base, api_key=KEY, max_retries=0), steer, tokenizer


def test_the_tag_is_the_special_token_of_mistral_tokenizers(tmp_path: Path) -> None:
    from structgen.server.syntax_choice import syntax_for
    from structgen.server.syntax_mistral import MISTRAL
    from structgen.server.tool_syntax import HERMES

    for name, expected in (("mistral_v3", 5), ("tekken", 9)):
        folder = tmp_path / name
        folder.mkdir()
        tokenizer = getattr(vocabularies, name)(folder)
        tokenizer.chat_template = TEMPLATE
        syntax = syntax_for(tokenizer)
        assert syntax.name == "mistral" and syntax.tag_token == expected == tokenizer.convert_tokens_to_ids(TAG)
        assert syntax.written_first == "["
        assert syntax_for(tokenizer, HERMES).tag_token is None  # <tool_call> is text there
    assert MISTRAL.tag_token is None and MISTRAL.written_first == "[TOOL_CALLS]["


class SpecialTags:
    """A tokenizer in which ``<tool_call>`` and ``[TOOL_CALLS]`` are special tokens."""

    def __init__(self) -> None:
        from types import SimpleNamespace

        self.ids = {"<tool_call>": 7, "[TOOL_CALLS]": 8}
        self.added_tokens_decoder = {i: SimpleNamespace(content=text, special=True) for text, i in self.ids.items()}
        self.all_special_ids = list(self.ids.values())

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [self.ids[text]] if text in self.ids else [ord(c) for c in text]


def test_a_tag_also_between_the_calls_stays_text() -> None:
    """Hermes' ``between`` closes one ``<tool_call>`` and opens the next: were the
    tag the special token, the grammar would have to spell it there as text, so
    the syntax keeps it as text; Mistral's tag only starts the calls."""
    from structgen.server.syntax_mistral import MISTRAL
    from structgen.server.tool_syntax import HERMES

    tokenizer = SpecialTags()
    assert HERMES.tag in HERMES.between
    assert HERMES.for_tokenizer(tokenizer) is HERMES and HERMES.written_first == "<tool_call>\n"
    assert MISTRAL.for_tokenizer(tokenizer).tag_token == 8


def call_text(city: str) -> str:
    return TAG + json.dumps([{"name": "get_weather", "arguments": {"city": city}}], separators=(",", ":"))


def test_auto_writes_the_tag_token_then_calls(mistral: tuple[openai.OpenAI, Steer, Any]) -> None:
    client, steer, tokenizer = mistral
    steer.text = "Sure." + call_text("Tokyo")
    try:
        whole = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], max_tokens=60)
        written = steer.written()
        with client.chat.completions.stream(model=MODEL, messages=ASK, tools=[WEATHER, TIME], max_tokens=60) as stream:
            streamed = stream.get_final_completion().choices[0]
    finally:
        steer.text = None
    assert written.count(steer.tag_id) == 1  # the one special token, not "[", "TOOL", "_", ...
    assert tokenizer.convert_ids_to_tokens(written[written.index(steer.tag_id) + 1]) == "["  # the envelope's "[" follows as text
    for choice in (whole.choices[0], streamed):
        assert choice.message.content == "Sure." and choice.finish_reason == "tool_calls"
        [call] = choice.message.tool_calls or []
        assert arguments_of(call, WEATHER) == {"city": "Tokyo"} and len(call.id) == 9


def test_required_and_named_start_with_the_tag_token(mistral: tuple[openai.OpenAI, Steer, Any]) -> None:
    client, steer, _ = mistral
    steer.text = call_text("Berlin")
    named = {"type": "function", "function": {"name": "get_weather"}}
    try:
        for choice, reason in (("required", "tool_calls"), (named, "stop")):
            reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER, TIME], tool_choice=choice, max_tokens=60)
            assert steer.written()[0] == steer.tag_id  # forced first
            [call] = reply.choices[0].message.tool_calls or []
            assert arguments_of(call, WEATHER) == {"city": "Berlin"}
            assert reply.choices[0].message.content is None and reply.choices[0].finish_reason == reason
    finally:
        steer.text = None


def test_text_only_and_an_answer_or_calls(mistral: tuple[openai.OpenAI, Steer, Any]) -> None:
    client, steer, _ = mistral
    steer.text = "No call [TOOL needed."
    try:
        text = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], max_tokens=30)
        assert text.choices[0].message.content == steer.text and text.choices[0].message.tool_calls is None
        assert steer.tag_id not in steer.written()
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}
        form = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        steer.text = call_text("Paris")
        called = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], response_format=form, max_tokens=60)
        [call] = called.choices[0].message.tool_calls or []
        assert arguments_of(call, WEATHER) == {"city": "Paris"} and steer.written()[0] == steer.tag_id
        steer.text = '{"ok":true}'
        answered = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER], response_format=form, max_tokens=60)
        assert json.loads(answered.choices[0].message.content or "") == {"ok": True}
        assert answered.choices[0].message.tool_calls is None and answered.choices[0].finish_reason == "stop"
    finally:
        steer.text = None


def test_a_template_exception_is_a_400(mistral: tuple[openai.OpenAI, Steer, Any]) -> None:
    """Templates raising on role order were answered 500 elsewhere (research §7 P10)."""
    client, _, _ = mistral
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(model=MODEL, messages=[{"role": "assistant", "content": "hi"}], max_tokens=5)
    assert isinstance(raised.value.body, dict) and raised.value.body["param"] == "messages"
    assert "must start with user" in raised.value.body["message"]
