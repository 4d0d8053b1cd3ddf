"""Continuous batching on models whose KV cache is not plain full attention.

Tiny random-weight models (built offline on the real SmolLM2 tokenizer) of a
sliding-window architecture — Mistral, every layer windowed, and Qwen 2 with
windowed and full layers mixed — decode sequences that join a running batch at
different steps, longer and shorter than it, past the window; each must get the
very tokens it gets decoded alone (greedy). A layout that cannot take more rows
(a recurrent state: a tiny LFM2) makes the joining request wait for the batch to drain.
"""

from __future__ import annotations

from typing import Any

import pytest

import structgen
from structgen.constraint import make_constraint
from structgen.decoding import Batch, DecodeOptions, Decoder
from structgen.generate import tokenizer_info_for
from structgen.token_encoder import TokenEncoder
from tiny_model import tiny_shape
from waiting import wait_until

WINDOW = 6


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return structgen.load_tokenizer()


def tiny(tokenizer: Any, kind: str) -> Any:
    import torch
    from transformers import MistralConfig, MistralForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    shape = tiny_shape(tokenizer)
    if kind == "mistral":
        model = MistralForCausalLM(MistralConfig(sliding_window=WINDOW, **shape))
    else:
        config = Qwen2Config(use_sliding_window=True, sliding_window=WINDOW, layer_types=["sliding_attention", "full_attention"], **shape)
        model = Qwen2ForCausalLM(config)
    model.eval()
    with torch.no_grad():  # never stop early: every sequence runs past the window
        model.get_output_embeddings().weight[tokenizer.all_special_ids] = 0.0
    return model


def decoder_for(model: Any, tokenizer: Any) -> Decoder:
    info = tokenizer_info_for(tokenizer, model.get_output_embeddings().weight.shape[0])
    return Decoder(model, tokenizer, info, TokenEncoder(tokenizer, info))


PROMPTS = ["Tell me a story about a dragon.", "Hi", "List three colors, please, and then say why you like them so much."]
# free text, and a regex whose forced literals make jump-forward feed several tokens in one step
CONSTRAINTS = [None, r"The answer is [a-z]{2,5} and then [0-9]{1,3} more words for [a-z ]{4,20}\.", None]


def sequences(decoder: Decoder, tokenizer: Any) -> list[Any]:
    made = []
    for prompt, regex in zip(PROMPTS, CONSTRAINTS):
        constraint = make_constraint(regex=regex) if regex else make_constraint()
        ids = tokenizer.encode(prompt, add_special_tokens=False)
        made.append(decoder.new_sequence(ids, constraint, 20, DecodeOptions()))
    return made


@pytest.mark.parametrize("kind", ["mistral", "qwen2_hybrid"])
def test_sequences_joining_a_windowed_batch_decode_as_alone(tokenizer: Any, kind: str) -> None:
    from structgen.batch_cache import SLIDING, contiguous, joinable, layer_kind

    model = tiny(tokenizer, kind)
    decoder = decoder_for(model, tokenizer)
    alone = []
    for sequence in sequences(decoder, tokenizer):
        decoder.run([sequence])
        alone.append(sequence.output)
    assert all(len(output) > WINDOW for output in alone)

    first, second, third = sequences(decoder, tokenizer)
    batch = Batch()
    decoder.step(batch, [first])
    for _ in range(WINDOW + 2):  # past the window before anyone joins
        decoder.step(batch, [])
    assert joinable(batch.cache) and contiguous(batch.cache)
    assert SLIDING in {layer_kind(layer) for layer in batch.cache.layers}
    decoder.step(batch, [second])  # a shorter prompt than the batch's slots
    decoder.step(batch, [])
    decoder.step(batch, [third])  # a longer one: the batch's rows are padded on the left
    while decoder.step(batch, []) is not None:
        pass
    assert [first.output, second.output, third.output] == alone
    together = sequences(decoder, tokenizer)  # a fixed batch from the start (generate_batch)
    decoder.run(together)
    assert [s.output for s in together] == alone


def tiny_recurrent(tokenizer: Any, initializer_range: float = 0.02) -> Any:
    """A tiny LFM2: a short-convolution layer (a recurrent state in the cache) and an attention layer."""
    import torch
    from transformers import Lfm2Config, Lfm2ForCausalLM

    torch.manual_seed(0)
    config = Lfm2Config(
        layer_types=["conv", "full_attention"], pad_token_id=0, initializer_range=initializer_range, **tiny_shape(tokenizer)
    )
    model = Lfm2ForCausalLM(config).eval()
    with torch.no_grad():
        model.get_output_embeddings().weight[tokenizer.all_special_ids] = 0.0
    return model


def recorded_logits(decoder: Decoder) -> dict[int, list[Any]]:
    """The logits each sequence (by ``id``) sampled from, step by step."""
    seen: dict[int, list[Any]] = {}
    choose = decoder._choose

    def recording(logits: Any, fed: list[Any]) -> list[int]:
        for row, sequence in enumerate(fed):
            seen.setdefault(id(sequence), []).append(logits[row].detach().clone())
        return choose(logits, fed)

    decoder._choose = recording  # type: ignore[method-assign]
    return seen


def test_a_fixed_recurrent_batch_decodes_as_alone(tokenizer: Any) -> None:
    """Rows of a recurrent model's batch (several sequences from the first step, as
    ``generate_batch`` or n > 1 make) must get no padding between their tokens: a
    short convolution runs over padded positions too. Different prompt lengths and
    jump-forward (several tokens fed in one step for one row only) would otherwise
    pad the other rows mid-sequence. Compared on the logits (weights scaled up so
    they are not flat), not only on the greedy tokens."""
    import torch

    model = tiny_recurrent(tokenizer, initializer_range=0.5)
    decoder = decoder_for(model, tokenizer)
    assert decoder.contiguous_rows
    seen = recorded_logits(decoder)
    alone = sequences(decoder, tokenizer)  # (kept alive: ``seen`` is keyed by id)
    for sequence in alone:
        decoder.run([sequence])
    assert any(len(seen[id(s)]) < len(s.output) for s in alone)  # jump-forward fed forced tokens
    together = sequences(decoder, tokenizer)
    decoder.run(together)
    for sequence, single in zip(together, alone):
        batched, logits, output = seen[id(sequence)], seen[id(single)], single.output
        assert len(batched) == len(logits)
        for step, (one, other) in enumerate(zip(batched, logits)):
            finite = torch.isfinite(other)
            assert torch.equal(finite, torch.isfinite(one)), step
            difference = (one[finite] - other[finite]).abs().max().item()
            assert difference < 1e-3, (step, difference)
        assert sequence.output == output


def test_a_layout_that_cannot_join_makes_the_request_wait(tokenizer: Any) -> None:
    """A cache with a recurrent state cannot take more rows: the second request
    waits for the first to finish, then decodes (no failure), each as alone."""
    from structgen.server.scheduler import Job, Scheduler
    from structgen.batch_cache import joinable

    model = tiny_recurrent(tokenizer)
    decoder = decoder_for(model, tokenizer)

    def two() -> list[Any]:  # the first long enough to be running when the second comes
        first, second = sequences(decoder, tokenizer)[:2]
        return [decoder.new_sequence(first.prompt_ids, first.constraint, 400, first.options), second]

    expected = []
    for sequence in two():
        batch = Batch()
        decoder.step(batch, [sequence])
        assert not joinable(batch.cache) and not decoder.can_join(batch)
        while decoder.step(batch, []) is not None:
            pass
        expected.append(sequence.output)
    sizes: list[int] = []
    scheduler = Scheduler(decoder, max_batch=4, observe=lambda stats: sizes.append(stats.batch_size))
    try:
        first, second = two()
        jobs = [Job([first]), Job([second])]
        scheduler.submit(jobs[0])
        wait_until(lambda: sizes, "the first job decoding")  # then its cache exists
        scheduler.submit(jobs[1])
        assert not jobs[0].done.done()  # the second is submitted while the first runs
        for job in jobs:
            job.done.result(timeout=120)
    finally:
        scheduler.stop()
    assert [first.output, second.output] == expected
    assert len(first.output) > 100
    assert max(sizes) == 1  # never in one batch
