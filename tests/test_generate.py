"""generate() on a tiny random-weight model: every output valid, whatever the weights.

The model runs on CUDA when there is one (the same tests then exercise the GPU
path), else on the CPU.
"""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import Any, Literal, Optional

import jsonschema
import pytest
from pydantic import BaseModel, Field

import structgen
from structgen.constraint import make_constraint
from structgen.decoding import DecodeOptions
from structgen.generate import _decoder, tokenizer_info_for
from structgen.sampling import SamplingParams, sample
from structgen.token_encoder import TokenEncoder
from tiny_model import tiny_model

SCHEMAS: dict[str, Any] = {
    "person": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 12},
            "age": {"type": "integer", "minimum": 0, "maximum": 120},
            "born": {"type": "string", "format": "date"},
        },
        "required": ["name", "age"],
    },
    "enums and consts": {
        "type": "object",
        "properties": {
            "unit": {"enum": ["celsius", "fahrenheit", 3, None]},
            "kind": {"const": "weather"},
            "ok": {"type": "boolean"},
        },
        "required": ["unit", "kind", "ok"],
        "additionalProperties": False,
    },
    "nested arrays": {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}, "maxItems": 3},
        "minItems": 1,
        "maxItems": 3,
    },
    "any of": {"anyOf": [{"type": "integer", "minimum": 10, "maximum": 99}, {"type": "string", "maxLength": 5}, {"type": "null"}]},
    "recursive tree": {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}},
                "required": ["v"],
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    },
    "open object": {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 3},
    # uniqueItems no grammar holds: the matcher refuses repeats (structgen.json.unique_items)
    "set of letters": {"type": "array", "items": {"type": "string", "maxLength": 1}, "uniqueItems": True,
                       "minItems": 3, "maxItems": 6},
    "set of numbers": {"type": "array", "items": {"type": "integer", "minimum": 0}, "uniqueItems": True,
                       "minItems": 3, "maxItems": 6},
}


class Color(Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str = Field(max_length=10)
    zip_code: str = Field(pattern=r"^\d{5}$")


class Person(BaseModel):
    name: str = Field(max_length=10)
    age: int = Field(ge=0, le=130)
    address: Address
    nickname: Optional[str] = None


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = Field(ge=1, le=9)


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


class Pet(BaseModel):
    pet: Cat | Dog = Field(discriminator="kind")
    color: Color


class Inventory(BaseModel):
    items: list[str] = Field(max_length=3)
    counts: dict[str, int]
    pair: tuple[int, bool]


class Comment(BaseModel):
    text: str = Field(max_length=8)
    replies: list["Comment"] = Field(default_factory=list, max_length=2)


MODELS = [Person, Pet, Inventory, Comment, Address]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return structgen.load_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer: Any) -> Any:
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    return tiny_model(tokenizer).to(device)


def _check_prefix(schema: Any, text: str) -> None:
    """An incomplete output must still be a prefix of some valid one."""
    grammar = structgen.Grammar.from_json_schema(schema, closed_objects=True, whitespace="compact")
    info = tokenizer_info_for(structgen.load_tokenizer())
    matcher = structgen.Matcher(structgen.compile(grammar, info))
    assert matcher.accept_string(text), text


@pytest.mark.parametrize("name", list(SCHEMAS))
@pytest.mark.parametrize("seed", [None, 1, 2])
def test_schema_outputs_are_valid(model: Any, tokenizer: Any, name: str, seed: int | None) -> None:
    schema = SCHEMAS[name]
    temperature = 0.0 if seed is None else 1.0
    try:
        generation = structgen.generate(
            model, tokenizer, f"Write {name}:", schema=schema, max_tokens=160,
            temperature=temperature, seed=seed, details=True,
        )
    except structgen.IncompleteOutputError as exc:
        _check_prefix(schema, exc.text)
        return
    jsonschema.validate(generation.value, schema)
    assert json.loads(generation.text) == generation.value
    assert generation.finish_reason == "stop"


@pytest.mark.parametrize("model_class", MODELS, ids=lambda m: m.__name__)
def test_pydantic_outputs_validate(model: Any, tokenizer: Any, model_class: Any) -> None:
    completed = 0
    for seed in (None, 3, 4):
        try:
            value = structgen.generate(
                model, tokenizer, "JSON:", schema=model_class, max_tokens=160,
                temperature=0.0 if seed is None else 1.0, seed=seed,
            )
        except structgen.IncompleteOutputError as exc:
            _check_prefix(model_class.model_json_schema(), exc.text)
            continue
        assert isinstance(value, model_class)
        completed += 1
    assert completed >= 1, f"no output of {model_class.__name__} finished within 160 tokens"


def test_jump_forward_saves_forward_passes(model: Any, tokenizer: Any) -> None:
    schema = SCHEMAS["enums and consts"]
    on = structgen.generate(model, tokenizer, "x", schema=schema, details=True)
    off = structgen.generate(model, tokenizer, "x", schema=schema, details=True, jump_forward=False)
    for generation in (on, off):
        jsonschema.validate(generation.value, schema)
    assert off.forced_tokens == 0
    assert on.forced_tokens > 0
    assert on.forward_passes < off.forward_passes
    # every output token came from a forward pass or from jump-forward
    assert off.forward_passes == len(off.token_ids) + (1 if off.finish_reason == "stop" else 0) or off.forward_passes == len(off.token_ids)


def test_jump_forward_tokens_are_the_tokenizers_own(model: Any, tokenizer: Any) -> None:
    """Forced text is re-encoded with the sampled token before it: the model sees
    the split its tokenizer would make, here of `{"kind":"weather"`."""
    schema = {"type": "object", "properties": {"kind": {"const": "weather"}}, "required": ["kind"], "additionalProperties": False}
    generation = structgen.generate(model, tokenizer, "x", schema=schema, details=True)
    assert generation.text == '{"kind":"weather"}'
    assert generation.forward_passes == 0  # all of it forced: the model was never called
    assert generation.token_ids == tokenizer.encode(generation.text, add_special_tokens=False)


def test_batch_equals_one_by_one(model: Any, tokenizer: Any) -> None:
    prompts = ["a", "a much longer prompt than the others", [{"role": "user", "content": "hi"}]]
    schemas = [SCHEMAS["person"], SCHEMAS["nested arrays"], SCHEMAS["enums and consts"]]
    batch = structgen.generate_batch(model, tokenizer, prompts, schemas=schemas, max_tokens=120, details=True)
    for prompt, schema, together in zip(prompts, schemas, batch):
        alone = structgen.generate(model, tokenizer, prompt, schema=schema, max_tokens=120, details=True)
        assert together.token_ids == alone.token_ids
        assert together.value == alone.value


def test_batch_shared_constraint_and_incomplete_rows(model: Any, tokenizer: Any) -> None:
    results = structgen.generate_batch(model, tokenizer, ["p", "q"], regex=r"[a-z]{50}", max_tokens=5, details=True)
    for result in results:
        assert result.finish_reason == "length" and result.value is None
        assert re.fullmatch(r"[a-z]*", result.text)
    with pytest.raises(structgen.IncompleteOutputError):
        structgen.generate_batch(model, tokenizer, ["p"], regex=r"[a-z]{50}", max_tokens=5)


def test_regex_choices_and_lark(model: Any, tokenizer: Any) -> None:
    for seed in (1, 2, 3):
        text = structgen.generate(model, tokenizer, "Phone:", regex=r"\(\d{3}\) [0-9]{3}-[0-9]{4}", temperature=1.0, seed=seed)
        assert re.fullmatch(r"\(\d{3}\) [0-9]{3}-[0-9]{4}", text)
        choice = structgen.generate(model, tokenizer, "Pick:", choices=["yes", "no", "maybe so"], temperature=1.0, seed=seed)
        assert choice in ("yes", "no", "maybe so")
    grammar = 'start: "(" expr ")"\nexpr: NUMBER ("+" NUMBER)~0..2\nNUMBER: /[1-9][0-9]?/'
    text = structgen.generate(model, tokenizer, "Sum:", grammar=grammar)
    assert re.fullmatch(r"\([1-9][0-9]?(\+[1-9][0-9]?){0,2}\)", text)


def test_max_tokens_raises_with_the_partial_text(model: Any, tokenizer: Any) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "minLength": 40}}, "required": ["a"]}
    with pytest.raises(structgen.IncompleteOutputError) as caught:
        structgen.generate(model, tokenizer, "x", schema=schema, max_tokens=4)
    assert caught.value.text.startswith('{"a":"')
    assert caught.value.generation.finish_reason == "length"
    assert len(caught.value.generation.token_ids) == 4
    assert "max_tokens" in str(caught.value)


def test_free_text_stop_strings_and_seeds(model: Any, tokenizer: Any) -> None:
    text = structgen.generate(model, tokenizer, "Once", max_tokens=12, temperature=1.0, seed=7)
    again = structgen.generate(model, tokenizer, "Once", max_tokens=12, temperature=1.0, seed=7)
    assert text == again and text
    cut = text[len(text) // 2 : len(text) // 2 + 2]
    if cut.strip():
        stopped = structgen.generate(model, tokenizer, "Once", max_tokens=12, temperature=1.0, seed=7, stop=[cut])
        assert stopped == text[: text.find(cut)]
    greedy = structgen.generate(model, tokenizer, "Once", max_tokens=6)
    top1 = structgen.generate(model, tokenizer, "Once", max_tokens=6, temperature=0.8, top_k=1, seed=3)
    assert greedy == top1


def test_sampling_never_picks_a_masked_token() -> None:
    import torch

    logits = torch.randn(64, 100)
    logits[:, ::2] = float("-inf")  # odd ids only
    for params in (SamplingParams(1.0, 0.9, 0, 1), SamplingParams(2.0, 1.0, 5, 2), SamplingParams(0.5, 0.3, 3, 3)):
        generator = torch.Generator().manual_seed(params.seed or 0)
        chosen = sample(logits, params, generator)
        assert all(int(t) % 2 == 1 for t in chosen)
    with pytest.raises(ValueError, match="top_p"):
        SamplingParams(1.0, 0.0)


def test_beam_search_is_valid(model: Any, tokenizer: Any) -> None:
    for schema in (SCHEMAS["enums and consts"], SCHEMAS["nested arrays"]):
        generation = structgen.generate(model, tokenizer, "x", schema=schema, num_beams=3, max_tokens=80, details=True)
        jsonschema.validate(generation.value, schema)
    text = structgen.generate(model, tokenizer, "x", choices=["alpha", "beta", "gamma"], num_beams=2)
    assert text in ("alpha", "beta", "gamma")


def test_verify_draft(tokenizer: Any) -> None:
    info = structgen.TokenizerInfo.from_huggingface(tokenizer)
    grammar = structgen.Grammar.from_json_schema(SCHEMAS["enums and consts"], whitespace="compact")
    matcher = structgen.Matcher(structgen.compile(grammar, info))
    valid = tokenizer.encode('{"unit":"celsius","kind":"weather","ok":true}', add_special_tokens=False)
    bad = tokenizer.encode("]", add_special_tokens=False)
    draft = valid[:5] + bad + valid[5:]
    before = matcher.allowed_tokens()
    check = structgen.verify_draft(matcher, draft)
    assert check.accepted == 5
    assert check.bitmask.shape[0] == 6
    assert matcher.allowed_tokens() == before  # rolled back
    step = structgen.Matcher(structgen.compile(grammar, info))
    expected = structgen.allocate_token_bitmask(6, info.vocab_size)
    for position in range(6):
        step.fill_next_token_bitmask(expected, position)
        if position < 5:
            assert step.accept_token(draft[position])
    assert (check.bitmask == expected).all()
    whole = structgen.verify_draft(matcher, valid + info.stop_token_ids[:1])
    assert whole.accepted == len(valid) + 1


def test_logits_processor_with_model_generate(model: Any, tokenizer: Any) -> None:
    from transformers import LogitsProcessorList

    schema = SCHEMAS["enums and consts"]
    inputs = tokenizer(["Weather:", "Weather:"], return_tensors="pt").to(model.device)
    for kwargs in ({"do_sample": False}, {"do_sample": True, "top_k": 50}, {"num_beams": 2, "do_sample": False}):
        processor = structgen.StructgenLogitsProcessor(tokenizer, schema=schema, vocab_size=model.config.vocab_size)
        out = model.generate(
            **inputs, max_new_tokens=60, logits_processor=LogitsProcessorList([processor]),
            pad_token_id=tokenizer.eos_token_id, **kwargs,
        )
        for row in out[:, inputs["input_ids"].shape[1] :].tolist():
            text = tokenizer.decode(row, skip_special_tokens=True)
            jsonschema.validate(json.loads(text), schema)


def test_bad_arguments_get_clear_errors(model: Any, tokenizer: Any) -> None:
    with pytest.raises(ValueError, match="at most one"):
        structgen.generate(model, tokenizer, "x", schema={}, regex="a")
    for choices in ([], "yes"):
        with pytest.raises(ValueError, match="choices"):
            structgen.generate(model, tokenizer, "x", choices=choices)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_tokens"):
        structgen.generate(model, tokenizer, "x", regex="a", max_tokens=0)
    with pytest.raises(TypeError, match="grammar= is lark text"):
        structgen.generate(model, tokenizer, "x", grammar={"start": "a"})
    with pytest.raises(TypeError, match="prompt"):
        structgen.generate(model, tokenizer, 42, regex="a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2 schemas for 1 prompts"):
        structgen.generate_batch(model, tokenizer, ["x"], schemas=[{}, {}])
    with pytest.raises(ValueError, match="not JSON"):
        structgen.generate(model, tokenizer, "x", schema="{not json")


def test_approximated_keywords_are_checked_after(model: Any, tokenizer: Any) -> None:
    """multipleOf is not in the grammar: the finished output is checked by jsonschema."""
    schema = {"type": "integer", "minimum": 1, "maximum": 10**6, "multipleOf": 999983}
    grammar = structgen.Grammar.from_json_schema(schema)
    assert not grammar.report.exact
    outcomes = set()
    for seed in range(4):
        try:
            value = structgen.generate(model, tokenizer, "n:", schema=schema, temperature=1.0, seed=seed)
            assert value == 999983
            outcomes.add("valid")
        except structgen.OutputValidationError as exc:
            assert "multipleOf" in str(exc) or "multiple of" in str(exc)
            outcomes.add("rejected")
    assert "rejected" in outcomes


def test_token_encoder_spells_exact_bytes(tokenizer: Any) -> None:
    info = structgen.TokenizerInfo.from_huggingface(tokenizer)
    encoder = TokenEncoder(tokenizer, info)
    for data in (b'{"name": "', "日本語 ok".encode(), "😀".encode()[:3], b"<|im_end|>", b""):
        assert info.join_bytes(encoder.encode(data)) == data
    assert encoder.encode(b'"name"') == tokenizer.encode('"name"', add_special_tokens=False)


def test_a_forced_start_that_fills_max_tokens_ends_there(model: Any, tokenizer: Any) -> None:
    """Jump-forward before the first forward pass may already fill ``max_tokens``."""
    [generation] = structgen.generate_batch(model, tokenizer, ["x"], regex=r"hello[0-9]{3}", max_tokens=1, details=True)
    assert len(generation.token_ids) == 1
    assert generation.finish_reason == "length" and generation.forward_passes == 0


def test_a_stop_string_that_cuts_a_constrained_output_short(model: Any, tokenizer: Any) -> None:
    schema = SCHEMAS["enums and consts"]
    with pytest.raises(structgen.IncompleteOutputError, match="stop string"):
        structgen.generate(model, tokenizer, "x", schema=schema, stop='"kind"')
    [generation] = structgen.generate_batch(model, tokenizer, ["x"], schema=schema, stop='"kind"', details=True)
    assert generation.value is None and generation.stop_string == '"kind"'
    assert generation.text.startswith('{"unit":') and '"kind"' not in generation.text
    # what a stop string leaves may be complete: then it is the value
    assert structgen.generate(model, tokenizer, "x", choices=["yes", "yes sir"], stop=" sir") == "yes"


def test_forced_tokens_leave_out_the_re_encoded_sampled_token(model: Any, tokenizer: Any) -> None:
    """Re-encoding a sampled `{` with the forced `"name"` replaces it: the replacement
    cost a forward pass, so it is not counted as forced."""
    decoder = _decoder(model, tokenizer)
    sequence = decoder.new_sequence([1], make_constraint(regex=r'(\{|\[)"name"[0-9]'), 10)
    [brace] = tokenizer.encode("{", add_special_tokens=False)
    assert sequence.matcher is not None and sequence.matcher.accept_token(brace)
    sequence.output.append(brace)
    sequence.pending.append(brace)
    decoder._jump_forward(sequence, brace)
    assert sequence.output == tokenizer.encode('{"name"', add_special_tokens=False)
    assert sequence.output[0] != brace
    assert len(sequence.forced) == len(sequence.output) - 1


def test_a_stop_string_after_an_invalid_byte_cuts_at_the_right_place(model: Any, tokenizer: Any) -> None:
    """A lone UTF-8 lead byte decodes to one replacement character of three bytes."""
    decoder = _decoder(model, tokenizer)
    info = decoder.info
    sequence = decoder.new_sequence([1], make_constraint(), 10, DecodeOptions(SamplingParams(), stop=(";",)))
    sequence.output = [info.decoded_vocab.index(b"\xe6"), *tokenizer.encode("ab;cd", add_special_tokens=False)]
    decoder._check_end(sequence)
    assert sequence.finish_reason == "stop"
    assert sequence.text(info) == "\ufffdab"


def test_generate_keeps_no_model_alive(tokenizer: Any) -> None:
    """Caches must not hold a model (and its memory) after the user dropped it."""
    import gc
    import weakref

    model = tiny_model(tokenizer, seed=1)
    structgen.generate(model, tokenizer, "x", regex="[ab]{1,3}", max_tokens=4)
    structgen.generate(model, tokenizer, "x", regex="[ab]{1,3}", num_beams=2, max_tokens=4)
    dropped = weakref.ref(model)
    del model
    gc.collect()
    assert dropped() is None


def test_logits_processor_allows_only_stop_tokens_after_a_stop(tokenizer: Any) -> None:
    """A row that took a stop token transformers does not stop on goes on with stop tokens only."""
    import torch

    processor = structgen.StructgenLogitsProcessor(tokenizer, choices=["yes"])
    stops = processor.info.stop_token_ids
    prompt = tokenizer.encode("Answer:", add_special_tokens=False)
    row = prompt + tokenizer.encode("yes", add_special_tokens=False) + [stops[0], stops[0]]
    for end in range(len(prompt), len(row) + 1):
        scores = processor(torch.tensor([row[:end]]), torch.zeros(1, processor.info.vocab_size))
    allowed = torch.isfinite(scores[0]).nonzero().flatten().tolist()
    assert allowed and set(allowed) <= set(stops)


def test_beam_search_checks_its_arguments(model: Any, tokenizer: Any) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        structgen.generate(model, tokenizer, "x", regex="a+", num_beams=2, max_tokens=0)
    for num_beams in (1, 2):
        with pytest.raises(ValueError, match="prompt is empty"):
            structgen.generate(model, tokenizer, "", regex="a+", num_beams=num_beams)
    with pytest.raises(ValueError, match="num_beams"):
        structgen.generate(model, tokenizer, "x", regex="a+", num_beams=0)
    for extra in ({"temperature": 0.7}, {"stop": "a"}, {"repetition_penalty": 1.2}):
        with pytest.raises(ValueError, match="do not apply"):
            structgen.generate(model, tokenizer, "x", regex="a+", num_beams=2, **extra)


def test_beam_search_prefers_a_complete_output(model: Any, tokenizer: Any) -> None:
    """A beam that ``max_tokens`` cut short never wins over a complete one."""
    for prompt in ("x", "Answer:", "Say no", "Is it?"):
        text = structgen.generate(
            model, tokenizer, prompt, choices=["no", "a long answer that takes many tokens"], num_beams=2, max_tokens=1
        )
        assert text == "no"


def test_logits_processor_follows_rows_it_did_not_see_last(tokenizer: Any) -> None:
    """Assisted generation calls the processor along a draft, then goes on from a
    shorter prefix when draft tokens are rejected: that row is still constrained."""
    import torch

    processor = structgen.StructgenLogitsProcessor(tokenizer, schema=SCHEMAS["enums and consts"])
    vocab = processor.info.vocab_size
    prompt = tokenizer.encode("Weather:", add_special_tokens=False)
    draft = tokenizer.encode('{"unit":"celsius"', add_special_tokens=False)
    for end in range(len(draft) + 1):
        processor(torch.tensor([prompt + draft[:end]]), torch.zeros(1, vocab))
    scores = processor(torch.tensor([prompt + draft[:2]]), torch.zeros(1, vocab))
    [bracket] = tokenizer.encode("]", add_special_tokens=False)
    assert scores[0, bracket] == float("-inf")
    assert torch.isfinite(scores[0]).sum() < vocab // 2


def test_close_within_max_tokens_ends_every_output_validly(model: Any, tokenizer: Any) -> None:
    """Where the budget would cut a constrained output short, its shortest completion
    is appended in time: every output parses, and none is longer than max_tokens."""
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "array", "items": {"type": "integer"}}},
              "required": ["a", "b"]}
    with pytest.raises(structgen.IncompleteOutputError):
        structgen.generate(model, tokenizer, "x", schema=schema, max_tokens=12, temperature=1.0, seed=5)
    for seed in range(4):
        result = structgen.generate(model, tokenizer, "x", schema=schema, max_tokens=12, temperature=1.0, seed=seed,
                                    close_within_max_tokens=True, details=True)
        jsonschema.validate(result.value, schema)
        assert len(result.token_ids) <= 12
    closed = structgen.generate(model, tokenizer, "x", schema=schema, max_tokens=12, temperature=1.0, seed=5,
                                close_within_max_tokens=True, details=True)
    assert closed.finish_reason == "length" and closed.forced_tokens > 0
    with pytest.raises(ValueError, match="close_within_max_tokens"):
        structgen.generate(model, tokenizer, "x", schema=schema, num_beams=2, close_within_max_tokens=True)


def test_a_draw_that_lands_on_a_masked_token_takes_the_best_instead() -> None:
    """Inverse-CDF sampling never lands on a masked token on a CPU; where rounding
    (a parallel scan) could make it, the best allowed token is taken."""
    import torch

    logits = torch.full((1, 8), float("-inf"))
    logits[0, 5] = 1.0
    logits[0, 2] = 0.5
    for seed in range(20):
        chosen = sample(logits, SamplingParams(1.0, 1.0, 0, seed), torch.Generator().manual_seed(seed))
        assert int(chosen) in (2, 5)


def test_sequences_joining_a_running_batch_decode_what_they_decode_alone(model: Any, tokenizer: Any) -> None:
    """Continuous batching: a sequence prefilled and joined mid-way (its cache
    left-padded to the batch's, or the batch's to its) gets the greedy tokens it
    gets alone, and so do the sequences already running."""
    from structgen.decoding import Batch
    from structgen.generate import _prompt_ids

    decoder = _decoder(model, tokenizer)
    person = make_constraint(schema=SCHEMAS["person"])
    words = make_constraint(regex=r"[a-z ]{20,40}\.")
    work = [
        (_prompt_ids(tokenizer, "Hello, write a JSON object please"), person),
        (_prompt_ids(tokenizer, "x"), words),  # one token: nothing to prefill
        (_prompt_ids(tokenizer, "A much longer prompt than the others, so that the batch's cache is the shorter one"), person),
    ]

    def alone(prompt: list[int], constraint: Any) -> list[int]:
        sequence = decoder.new_sequence(prompt, constraint, 60)
        decoder.run([sequence])
        return sequence.output

    expected = [alone(p, c) for p, c in work]
    batch = Batch()
    joined = [decoder.new_sequence(p, c, 60) for p, c in work]
    sizes = [decoder.step(batch, [joined[0]])]
    sizes += [decoder.step(batch) for _ in range(3)]
    sizes += [decoder.step(batch, joined[1:])]
    while (stats := decoder.step(batch)) is not None:
        sizes.append(stats)
    assert [s.output for s in joined] == expected
    assert max(s.batch_size for s in sizes if s is not None) == 3 and batch.sequences == []


def test_each_sequence_keeps_its_own_options(model: Any, tokenizer: Any) -> None:
    """Per-sequence sampling and stop strings in one batch: a row's options and
    random stream decide its output, not the rows beside it."""
    decoder = _decoder(model, tokenizer)
    free = make_constraint()
    alone = decoder.new_sequence([1], free, 12)
    decoder.run([alone])
    text = alone.text(decoder.info)
    stop = text[4:6]
    greedy = decoder.new_sequence([1], free, 12)
    stopped = decoder.new_sequence([1], free, 12, DecodeOptions(stop=(stop,)))
    sampled = [decoder.new_sequence([1], free, 12, DecodeOptions(SamplingParams(temperature=1.0, seed=5))) for _ in range(2)]
    decoder.run([greedy, sampled[0], stopped, sampled[1]])
    assert greedy.output == alone.output and greedy.finish_reason == alone.finish_reason
    assert stopped.finish_reason == "stop" and stopped.stop_string == stop and stopped.text(decoder.info) == text[: text.index(stop)]
    assert sampled[0].generator is not sampled[1].generator and sampled[0].output == sampled[1].output  # same seed, own streams
    again = decoder.new_sequence([1], free, 12, DecodeOptions(SamplingParams(temperature=1.0, seed=5)))
    decoder.run([again])
    assert again.output == sampled[0].output


def test_a_long_feed_does_not_make_the_whole_batch_compute_padding() -> None:
    from structgen.decoding import step_width

    assert step_width([7]) == 7  # alone: everything at once
    assert step_width([66, 70, 60]) == 70  # alike: everything at once
    assert step_width([1] * 15 + [8]) == 2  # one jump-forward among many single tokens: fed over steps
    assert step_width([1, 1, 1, 8]) == 3  # at most half of what the step computes is padding
