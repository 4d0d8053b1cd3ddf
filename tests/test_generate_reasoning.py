"""``generate`` with a reasoning section: found in the chat template, free text,
then the answer in its constraint; stop strings and budgets apply as documented
(a tiny random-weight model on the real DeepSeek vocabulary, steered by a script)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import structgen
import vocabularies
from steering import Steer
from structgen.reasoning import Reasoning, ReasoningError, reasoning_for
from tiny_model import tiny_model

R1 = (
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}<｜User｜>{{ m.content }}"
    "{% elif m.role == 'assistant' %}<｜Assistant｜>{{ m.content }}<｜end▁of▁sentence｜>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<｜Assistant｜><think>\n{% endif %}"
)
PLAIN = (
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}<｜User｜>{{ m.content }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<｜Assistant｜>{% endif %}"
)
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 9}}, "required": ["n"]}
ASK = [{"role": "user", "content": "A digit?"}]


@pytest.fixture(scope="module")
def setup() -> tuple[Any, Any, Steer]:
    tokenizer = vocabularies.deepseek()
    tokenizer.chat_template = R1
    model = tiny_model(tokenizer)
    return model, tokenizer, Steer(model, tokenizer, "<｜Assistant｜>")


def test_the_template_section_is_found_and_used(setup: tuple[Any, Any, Steer]) -> None:
    model, tokenizer, steer = setup
    assert reasoning_for(tokenizer, ASK) == Reasoning("<think>", "</think>", opened=True)
    steer.text = "<think>\nSeven is a digit. {[( \n</think>\n\nThe answer is 7"  # prose: the schema refuses it
    generation = structgen.generate(model, tokenizer, ASK, schema=SCHEMA, details=True, max_tokens=60)
    assert generation.reasoning == "Seven is a digit. {[( \n"  # after the prompt's "<think>\n"
    assert generation.value == json.loads(generation.text) and 0 <= generation.value["n"] <= 9


def test_reasoning_off_constrains_from_the_first_token(setup: tuple[Any, Any, Steer]) -> None:
    model, tokenizer, steer = setup
    steer.text = '<think>\n{"n":3}'
    generation = structgen.generate(model, tokenizer, ASK, schema=SCHEMA, reasoning=False, details=True, max_tokens=30)
    assert generation.reasoning is None and generation.value == {"n": 3}


def test_stop_strings_end_the_answer_not_the_reasoning(setup: tuple[Any, Any, Steer]) -> None:
    model, tokenizer, steer = setup
    steer.text = "<think>\nI will say END here.\n</think>\n\nabc END def"
    generation = structgen.generate(model, tokenizer, ASK, stop="END", details=True, max_tokens=60)
    assert generation.reasoning == "I will say END here.\n"
    assert generation.text == "abc " and generation.stop_string == "END"


def test_a_budget_closes_the_section(setup: tuple[Any, Any, Steer]) -> None:
    model, tokenizer, steer = setup
    steer.text = "<think>\n" + "thinking " * 50
    generation = structgen.generate(model, tokenizer, ASK, schema=SCHEMA, thinking_budget=4, details=True, max_tokens=60)
    assert generation.reasoning is not None
    assert len(tokenizer.encode(generation.reasoning, add_special_tokens=False)) <= 4
    assert 0 <= generation.value["n"] <= 9
    batch = structgen.generate_batch(model, tokenizer, [ASK, ASK], schema=SCHEMA, thinking_budget=2, details=True, max_tokens=40)
    assert all(g.reasoning is not None and 0 <= g.value["n"] <= 9 for g in batch)


def test_a_given_section_on_a_text_prompt(setup: tuple[Any, Any, Steer]) -> None:
    model, tokenizer, steer = setup
    steer.text = None
    section = Reasoning("<plan>", "</plan>", budget=3)
    generation = structgen.generate(model, tokenizer, "Q: a digit? A:", schema=SCHEMA, reasoning=section, details=True, max_tokens=40)
    assert tokenizer.decode(generation.token_ids).startswith("<plan>")
    assert generation.reasoning is not None and 0 <= generation.value["n"] <= 9


def test_options_that_cannot_apply(setup: tuple[Any, Any, Steer]) -> None:
    model, tokenizer, _ = setup
    plain = vocabularies.deepseek()
    plain.chat_template = PLAIN
    assert reasoning_for(plain, ASK) is None
    with pytest.raises(ReasoningError, match="reasoning section"):
        structgen.generate(model, plain, ASK, reasoning=True, max_tokens=5)
    with pytest.raises(ReasoningError, match="thinking_budget"):
        structgen.generate(model, plain, ASK, thinking_budget=5, max_tokens=5)
    with pytest.raises(ValueError, match="num_beams"):
        structgen.generate(model, tokenizer, ASK, schema=SCHEMA, num_beams=2, max_tokens=5)
    with pytest.raises(ReasoningError, match="budget"):
        Reasoning(budget=-1)


V31 = (  # DeepSeek V3.1's way: thinking off unless asked for, then the prompt opens <think>
    "{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}<｜User｜>{{ m.content }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<｜Assistant｜>{% if thinking is defined and thinking %}<think>{% else %}</think>{% endif %}{% endif %}"
)


def test_a_template_that_thinks_only_when_asked() -> None:
    tokenizer = vocabularies.deepseek()
    tokenizer.chat_template = V31
    assert reasoning_for(tokenizer, ASK) is None
    assert reasoning_for(tokenizer, ASK, thinking=True) == Reasoning("<think>", "</think>", opened=True)


def test_close_within_max_tokens_closes_the_section_too(setup: tuple[Any, Any, Steer]) -> None:
    """Near the end of the budget, a model still thinking gets the end tag and the
    answer's shortest completion: a valid, cut-short output."""
    model, tokenizer, steer = setup
    steer.text = "<think>\n" + "thinking " * 60
    generation = structgen.generate(model, tokenizer, ASK, schema=SCHEMA, max_tokens=30, close_within_max_tokens=True, details=True)
    assert generation.finish_reason == "length" and generation.reasoning is not None
    assert 0 <= generation.value["n"] <= 9
    with pytest.raises(structgen.IncompleteOutputError):  # free text cut while thinking: no answer came
        structgen.generate(model, tokenizer, ASK, max_tokens=12)
    [free] = structgen.generate_batch(model, tokenizer, [ASK], max_tokens=12, details=True)
    assert free.finish_reason == "length" and free.text == "" and free.value is None
