"""Through a real ``vllm.LLM`` (the bundled SmolLM2, converted): every constrained
output of one batch is valid and complete."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import pytest
from vllm import LLM, SamplingParams
from vllm.exceptions import VLLMValidationError

from schema_requests import SCHEMA_REQUESTS
from structgen.integrations.vllm import parse_output, structgen_args
from vllm_setup import structgen_llm

pytestmark = pytest.mark.model

MAX_TOKENS = 256


@pytest.fixture(scope="module")
def llm(model_dir: Path) -> Iterator[LLM]:
    engine = structgen_llm(
        model_dir,
        max_model_len=1024,
        max_num_seqs=32,
        kv_cache_memory_bytes=1 << 30,  # explicit: the default claims 92% of the node's memory
    )
    yield engine
    del engine


def chat(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def run(llm: LLM, requests: list[tuple[str, SamplingParams]]) -> list[Any]:
    outputs = llm.chat([chat(prompt) for prompt, _ in requests], [params for _, params in requests], use_tqdm=False)
    return [output.outputs[0] for output in outputs]


def test_a_batch_of_sixteen_schemas_gives_only_valid_json(llm: LLM) -> None:
    assert len({json.dumps(schema) for _, schema in SCHEMA_REQUESTS}) >= 16
    requests = [
        (prompt, SamplingParams(temperature=0, max_tokens=MAX_TOKENS, extra_args=structgen_args(schema=schema)))
        for prompt, schema in SCHEMA_REQUESTS
    ]
    completions = run(llm, requests)
    invalid = []
    for (prompt, schema), (_, params), completion in zip(SCHEMA_REQUESTS, requests, completions):
        try:
            assert completion.finish_reason == "stop", "unfinished"
            value = json.loads(completion.text)
            jsonschema.validate(value, schema, format_checker=jsonschema.FormatChecker())
            assert parse_output(params, completion.text) == value
        except (AssertionError, ValueError, jsonschema.ValidationError) as exc:
            invalid.append((prompt, completion.text, str(exc)[:200]))
    assert invalid == []


def test_regex_choices_and_grammar_requests_share_a_batch_with_free_text(llm: LLM) -> None:
    grammar = 'start: "(" NUMBER ("+" NUMBER)* ")"\nNUMBER: /[0-9]{1,3}/'
    phone_number = r"\+[0-9]{2} [0-9]{3} [0-9]{4}"

    def constrained(max_tokens: int, **constraint: Any) -> SamplingParams:
        return SamplingParams(temperature=0, max_tokens=max_tokens, extra_args=structgen_args(**constraint))

    colors = structgen_args(choices=["red", "green", "blue"])
    requests = [
        ("Give a phone number.", constrained(40, regex=phone_number)),
        ("Is water wet? Answer yes or no.", constrained(10, choices=["yes", "no"])),
        ("Add some numbers.", constrained(40, grammar=grammar)),
        ("Say hello.", SamplingParams(temperature=0, max_tokens=8)),
        ("Pick a color.", SamplingParams(temperature=0.8, seed=1, max_tokens=10, extra_args=colors)),
    ]
    phone, answer, sum_, free, color = run(llm, requests)
    assert re.fullmatch(phone_number, phone.text) and phone.finish_reason == "stop"
    assert answer.text in ("yes", "no") and answer.finish_reason == "stop"
    assert re.fullmatch(r"\([0-9]{1,3}(\+[0-9]{1,3})*\)", sum_.text) and sum_.finish_reason == "stop"
    assert free.text and free.finish_reason == "length"  # unconstrained: no mask ended it
    assert color.text in ("red", "green", "blue") and color.finish_reason == "stop"


def test_a_bad_constraint_is_rejected_when_the_request_arrives(llm: LLM) -> None:
    params = SamplingParams(max_tokens=5, extra_args={"structgen_regex": 5})
    with pytest.raises(VLLMValidationError, match="structgen_regex must be a string"):
        llm.generate(["hi"], params, use_tqdm=False)


def test_a_regex_that_does_not_compile_ends_its_request_at_once(llm: LLM) -> None:
    """Not translated on arrival (validate_params checks keys and types only): the
    worker fails to compile it, and the request ends with no output."""
    (output,) = run(llm, [("hi", SamplingParams(max_tokens=5, extra_args={"structgen_regex": "("}))])
    assert output.text == "" and output.finish_reason == "stop"
