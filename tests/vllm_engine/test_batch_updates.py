"""The logits processor's bookkeeping, driven by vLLM's own ``BatchUpdate`` records as
the persistent batch emits them (added, removed, moved, swapped), with output-token
lists that grow, shrink and carry async placeholders, as vLLM's are. Each masked row
is compared with a fresh matcher fed the same tokens."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Sequence

import pytest
import torch
from pydantic import BaseModel, Field
from vllm import SamplingParams
from vllm.exceptions import VLLMValidationError
from vllm.v1.sample.logits_processor import BatchUpdate, MoveDirectionality
from vllm.v1.sample.logits_processor.state import BatchUpdateBuilder

from structgen import Matcher, allocate_token_bitmask, compile
from structgen.bitmask import allowed_in_row
from structgen.integrations.vllm import (
    StructgenLogitsProcessor,
    parse_output,
    request_constraint,
    structgen_args,
)

VOCAB_SIZE = 49152
DIGITS = SamplingParams(extra_args=structgen_args(regex="[0-9]{3}"))
YES_NO = SamplingParams(extra_args=structgen_args(choices=["yes", "no"]))
FREE = SamplingParams()
PAIR = SamplingParams(extra_args=structgen_args(schema={"type": "array", "items": {"type": "integer"}, "maxItems": 2}))


@pytest.fixture(scope="module")
def shared(model_dir: Path) -> StructgenLogitsProcessor:
    """The processor on vLLM's config reduced to what it reads."""
    config = SimpleNamespace(
        model_config=SimpleNamespace(
            tokenizer=str(model_dir),
            tokenizer_revision=None,
            tokenizer_mode="auto",
            trust_remote_code=False,
            skip_tokenizer_init=False,
            runner_type="generate",
            get_vocab_size=lambda: VOCAB_SIZE,
        ),
        scheduler_config=SimpleNamespace(max_num_seqs=8),
    )
    return StructgenLogitsProcessor(config, torch.device("cpu"), False)


@pytest.fixture
def processor(shared: StructgenLogitsProcessor) -> StructgenLogitsProcessor:
    shared.requests.clear()  # one tokenizer load for the module; a fresh batch per test
    shared.parked.clear()
    return shared


def update(size: int, removed: Sequence[int] = (), added: Sequence[Any] = (), moved: Sequence[Any] = ()) -> BatchUpdate:
    return BatchUpdate(batch_size=size, removed=list(removed), added=list(added), moved=list(moved))


def masked_rows(processor: StructgenLogitsProcessor, size: int) -> list[list[int]]:
    logits = processor.apply(torch.zeros(size, VOCAB_SIZE))
    return [torch.isfinite(row).nonzero().flatten().tolist() for row in logits]


def expected(processor: StructgenLogitsProcessor, params: SamplingParams, tokens: list[int]) -> list[int]:
    """A fresh matcher's row after ``tokens``: every id when ``params`` has no
    constraint, the stop tokens once one was accepted (vLLM may not stop on it)."""
    constraint = request_constraint(params)
    if constraint is None:
        return list(range(VOCAB_SIZE))
    matcher = Matcher(compile(constraint.grammar, processor.info))
    for token_id in tokens:
        assert matcher.accept_token(token_id)
    if matcher.is_terminated():
        return processor.info.stop_token_ids
    bitmask = allocate_token_bitmask(1, VOCAB_SIZE)
    matcher.fill_next_token_bitmask(bitmask, 0)
    return allowed_in_row(bitmask, 0, VOCAB_SIZE)


def spelled(processor: StructgenLogitsProcessor, text: str) -> list[int]:
    """``text`` as one-byte tokens."""
    return [processor.info.decoded_vocab.index(bytes([byte])) for byte in text.encode()]


def sample(rows: list[list[int]], outputs: list[list[int]], pick: int = 0) -> None:
    """What vLLM does after sampling: append a token each row allowed."""
    for row, output in zip(rows, outputs):
        output.append(row[min(pick, len(row) - 1)])


def test_rows_follow_requests_added_removed_moved_and_swapped(processor: StructgenLogitsProcessor) -> None:
    a, b, c, d = [], [], [], []  # vLLM's live output-token lists
    processor.update_state(update(3, added=[(0, DIGITS, [1], a), (1, YES_NO, [1], b), (2, FREE, [1], c)]))
    rows = masked_rows(processor, 3)
    assert rows == [expected(processor, DIGITS, a), expected(processor, YES_NO, b), expected(processor, FREE, c)]
    sample(rows, [a, b, c], pick=5)
    processor.update_state(None)
    rows = masked_rows(processor, 3)
    assert rows == [expected(processor, DIGITS, a), expected(processor, YES_NO, b), expected(processor, FREE, c)]

    # request 0 finishes; vLLM condenses the batch by moving the last row into its slot
    processor.update_state(update(2, removed=[0], moved=[(2, 0, MoveDirectionality.UNIDIRECTIONAL)]))
    assert masked_rows(processor, 2) == [expected(processor, FREE, c), expected(processor, YES_NO, b)]

    # a new request, then a swap (vLLM reorders the batch)
    processor.update_state(update(3, added=[(2, PAIR, [1], d)], moved=[(1, 2, MoveDirectionality.SWAP)]))
    rows = masked_rows(processor, 3)
    assert rows == [expected(processor, FREE, c), expected(processor, PAIR, d), expected(processor, YES_NO, b)]
    sample(rows, [c, d, b])
    assert masked_rows(processor, 3)[1:] == [expected(processor, PAIR, d), expected(processor, YES_NO, b)]

    # a new request in a slot whose old request was constrained
    processor.update_state(update(3, removed=[1], added=[(1, FREE, [1], [])]))
    assert sorted(processor.requests) == [2]


def test_the_matcher_follows_what_vllm_takes_back(processor: StructgenLogitsProcessor) -> None:
    out: list[int] = []
    processor.update_state(update(1, added=[(0, PAIR, [1], out)]))
    for _ in range(4):
        sample(masked_rows(processor, 1), [out], pick=3)
    assert masked_rows(processor, 1) == [expected(processor, PAIR, out)]
    del out[-2:]  # tokens discarded (a failed KV load), then others sampled in their place
    sample(masked_rows(processor, 1), [out], pick=7)
    assert masked_rows(processor, 1) == [expected(processor, PAIR, out)]
    [row] = masked_rows(processor, 1)
    out.append(row[3])
    masked_rows(processor, 1)
    out[-1] = row[5]  # rewritten in place: same length, another token
    assert masked_rows(processor, 1) == [expected(processor, PAIR, out)]
    out.append(-1)  # async scheduling: a placeholder until the sampled id arrives
    assert masked_rows(processor, 1) == [expected(processor, PAIR, out[:-1])]
    out.clear()
    assert masked_rows(processor, 1) == [expected(processor, PAIR, [])]


def test_a_request_vllm_takes_out_of_the_batch_comes_back_where_it_was(processor: StructgenLogitsProcessor) -> None:
    out: list[int] = []
    processor.update_state(update(1, added=[(0, PAIR, [1], out)]))
    for _ in range(3):
        sample(masked_rows(processor, 1), [out], pick=2)
    tracked = processor.requests[0]
    processor.update_state(update(0, removed=[0]))  # preempted, or not scheduled this step
    assert processor.apply(torch.zeros(0, VOCAB_SIZE)).shape == (0, VOCAB_SIZE)
    processor.update_state(update(1, added=[(0, PAIR, [1], out)]))  # back, with its own list
    assert processor.requests[0] is tracked  # its matcher, not a replay
    assert masked_rows(processor, 1) == [expected(processor, PAIR, out)]

    processor.update_state(update(0, removed=[0]))
    resumed = list(out)  # async scheduling rebuilds the list of a resumed request: replayed
    processor.update_state(update(1, added=[(0, PAIR, [1], resumed)]))
    assert processor.requests[0] is not tracked
    assert masked_rows(processor, 1) == [expected(processor, PAIR, out)]

    processor.update_state(update(0, removed=[0]))
    other = SamplingParams(extra_args=PAIR.extra_args)  # another request's list is never taken for it
    processor.update_state(update(1, added=[(0, other, [1], resumed)]))
    assert processor.requests[0] is not tracked and processor.requests[0].params is other


Slot = tuple[SamplingParams, list[int]]


def vllm_step(builder: BatchUpdateBuilder, slots: list[Slot | None], rng: random.Random, waiting: list[Slot]) -> None:
    """One step of vLLM's persistent batch (``InputBatch``: remove_request, add_request,
    condense, then the attention backend's swaps), recorded by vLLM's own builder."""
    for index, slot in enumerate(slots):
        if slot is not None and rng.random() < 0.25:  # finished, preempted or not scheduled
            builder.removed_append(index)
            if rng.random() < 0.5:
                waiting.append(slot)
            slots[index] = None
    for _ in range(rng.randint(0, 3)):
        if sum(slot is not None for slot in slots) == 8:
            break
        slot = waiting.pop() if waiting and rng.random() < 0.5 else (rng.choice([DIGITS, PAIR, FREE]), [])
        target = builder.pop_removed()
        if target is None:
            target = len(slots)
            slots.append(None)
        builder.added.append((target, slot[0], [1], slot[1]))
        slots[target] = slot
    size = sum(slot is not None for slot in slots)
    if builder.removed:
        last = size + len(builder.removed) - 1
        while builder.removed:
            while last in builder.removed:
                last -= 1
            empty = builder.peek_removed()
            assert empty is not None
            if empty >= last:
                break
            builder.pop_removed()
            slots[empty], slots[last] = slots[last], None
            builder.moved.append((last, empty, MoveDirectionality.UNIDIRECTIONAL))
            last -= 1
        del slots[size:]
    for _ in range(rng.randint(0, 2) if size > 1 else 0):
        i, j = rng.sample(range(size), 2)
        slots[i], slots[j] = slots[j], slots[i]
        builder.moved.append((i, j, MoveDirectionality.SWAP))


def test_rows_follow_vllms_own_batch_update_builder(processor: StructgenLogitsProcessor) -> None:
    rng = random.Random(0)
    for _ in range(20):
        processor.requests.clear()
        processor.parked.clear()
        slots: list[Slot | None] = []
        builder, waiting = BatchUpdateBuilder(), list[Slot]()
        for _ in range(12):
            vllm_step(builder, slots, rng, waiting)
            processor.update_state(builder.get_and_reset(len(slots)))
            batch = [slot for slot in slots if slot is not None]
            tracked = {index: request.output_ids for index, request in processor.requests.items()}
            assert tracked.keys() == {i for i, (params, _) in enumerate(batch) if params is not FREE}
            assert all(tracked[i] is batch[i][1] for i in tracked)
            rows = masked_rows(processor, len(batch))
            for row, (params, output) in zip(rows, batch):
                output.append(rng.choice(row))
            assert not any(request.refused for request in processor.requests.values())


def test_a_stop_token_is_allowed_only_once_the_output_is_complete(processor: StructgenLogitsProcessor) -> None:
    stops = processor.info.stop_token_ids
    eos = 2  # <|im_end|>, what vLLM stops on for SmolLM2-Instruct
    assert eos in stops and len(stops) > 1
    vllm_stops = SamplingParams(stop_token_ids=[eos], extra_args=DIGITS.extra_args)
    out: list[int] = []
    processor.update_state(update(1, added=[(0, vllm_stops, [1], out)]))
    for _ in range(3):
        [row] = masked_rows(processor, 1)
        assert not set(stops) & set(row)
        out.append(row[0])
    [row] = masked_rows(processor, 1)
    assert row == [eos]  # complete: only the stop token vLLM stops on (not the grammar's others)
    out.append(eos)
    assert masked_rows(processor, 1) == [[eos]]


def test_a_request_stop_token_that_is_also_text_waits_for_the_complete_output(
    processor: StructgenLogitsProcessor,
) -> None:
    """vLLM ends a request on any of its ``stop_token_ids``, text or not: one the
    grammar allows as text must not be allowed before the output is complete."""
    eos, five = 2, processor.info.decoded_vocab.index(b"5")
    params = SamplingParams(stop_token_ids=[five], extra_args=DIGITS.extra_args)
    params.update_from_generation_config({}, eos_token_id=eos)  # as vLLM's input processor does
    out: list[int] = []
    processor.update_state(update(1, added=[(0, params, [1], out)]))
    for _ in range(3):
        [row] = masked_rows(processor, 1)
        assert five not in row and eos not in row
        out.append(row[0])
    assert masked_rows(processor, 1) == [sorted([eos, five])]  # complete: what vLLM stops on


def test_a_complete_output_ends_on_what_vllm_stops_on_even_outside_the_grammars_stops(
    processor: StructgenLogitsProcessor,
) -> None:
    """A request whose stop tokens are none of the tokenizer's (another EOS in the
    model's generation config): the complete output is offered those, not stop
    tokens vLLM would not stop on."""
    stops = processor.info.stop_token_ids
    other = next(i for i in processor.info.special_token_ids if i not in stops)
    params = SamplingParams(stop_token_ids=[other], extra_args=YES_NO.extra_args)
    out: list[int] = []
    processor.update_state(update(1, added=[(0, params, [1], out)]))
    out.extend(spelled(processor, "yes"))
    assert masked_rows(processor, 1) == [[other]]


def test_under_ignore_eos_a_complete_output_is_offered_the_grammars_stop_tokens(
    processor: StructgenLogitsProcessor,
) -> None:
    params = SamplingParams(ignore_eos=True, extra_args=YES_NO.extra_args)
    params.update_from_generation_config({"eos_token_id": 2}, eos_token_id=2)
    out: list[int] = []
    processor.update_state(update(1, added=[(0, params, [1], out)]))
    out.extend(spelled(processor, "no"))
    assert masked_rows(processor, 1) == [processor.info.stop_token_ids]


def test_a_token_the_grammar_refused_leaves_only_stop_tokens_until_taken_back(
    processor: StructgenLogitsProcessor, caplog: pytest.LogCaptureFixture
) -> None:
    out: list[int] = []
    processor.update_state(update(1, added=[(0, DIGITS, [1], out)]))
    [row] = masked_rows(processor, 1)
    out.append(next(i for i in range(VOCAB_SIZE) if i not in row and i not in processor.info.stop_token_ids))
    assert masked_rows(processor, 1) == [sorted(processor.info.stop_token_ids)]
    assert "does not allow it" in caplog.text
    out.pop()
    assert masked_rows(processor, 1) == [expected(processor, DIGITS, [])]


class City(BaseModel):
    name: str = Field(max_length=20)
    population: int


def test_requests_are_configured_from_flat_plain_extra_args() -> None:
    """Strings and lists of strings only: what ``vllm_xargs`` accepts over HTTP."""
    params = SamplingParams(extra_args=structgen_args(schema=City))
    assert params.extra_args is not None
    assert json.loads(params.extra_args["structgen_json_schema"]) == City.model_json_schema()
    assert json.loads(params.extra_args["structgen_options"])["float_integers"] is False
    assert all(isinstance(v, (str, list)) for a in (params, YES_NO, PAIR) for v in (a.extra_args or {}).values())
    assert parse_output(params, '{"name":"Oslo","population":700000}') == {"name": "Oslo", "population": 700000}
    assert parse_output(FREE, "anything") == "anything"
    assert request_constraint(SamplingParams(extra_args={"other_processor": 1})) is None
    bad_args = [
        {"structgen_regex": "a", "structgen_choices": ["b"]},
        {"structgen_pattern": "a"},
        {"structgen_choices": []},
        {"structgen_choices": ["a", 1]},
        {"structgen_regex": "a", "structgen_options": "[1]"},
        {"structgen_json_schema": "{}", "structgen_options": '{"no_such_option": 1}'},
        {"structgen_options": "{}"},
        {"structgen_regex": "a", "structgen_next_grammar": "start: /a/"},
    ]
    for bad in bad_args:
        with pytest.raises(VLLMValidationError, match="structgen"):
            StructgenLogitsProcessor.validate_params(SamplingParams(extra_args=bad))
    # keys and types only, on arrival: what does not translate is found where it is built
    for untranslatable in ({"structgen_regex": "("}, {"structgen_json_schema": "{not json"}):
        StructgenLogitsProcessor.validate_params(SamplingParams(extra_args=untranslatable))
        with pytest.raises(ValueError, match="structgen"):
            request_constraint(SamplingParams(extra_args=untranslatable))
    StructgenLogitsProcessor.validate_params(FREE)
    with pytest.raises(VLLMValidationError, match="structgen_regex must be a string"):  # vllm_xargs may carry numbers
        StructgenLogitsProcessor.validate_params(SamplingParams(extra_args={"structgen_regex": 5}))
