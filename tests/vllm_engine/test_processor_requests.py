"""What `structgen serve --backend vllm` asks of the logits processor beyond one
grammar per request: a second phase (the ``auto`` tool choice: free text, then the
calls once the trigger is written), a constraint that fails to compile (that
request ends; the engine goes on), grammars compiled before the request arrives
(``StructgenWorkerExtension``), and vLLM's ``tokenizer_mode``."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from vllm import SamplingParams
from vllm.v1.sample.logits_processor import BatchUpdate
from waiting import wait_until

import structgen.integrations.vllm as integration
from structgen.server.grammars import free_text_or
from structgen.constraint import make_constraint
from structgen.integrations.request_args import NEXT_AFTER_KEY, NEXT_GRAMMAR_KEY, constraint_args, structgen_args
from structgen.integrations.vllm import StructgenLogitsProcessor, StructgenWorkerExtension, served_tokenizer, tokenizer_info

VOCAB_SIZE = 49152
TAG, TRIGGER = "<tool_call>", "<tool_call>\n"
CALLS = 'start: "<tool_call>\\n" NUMBER "\\n</tool_call>"\nNUMBER: /[0-9]{1,3}/\n'


def model_config(model_dir: Path, mode: str = "auto") -> SimpleNamespace:
    return SimpleNamespace(
        tokenizer=str(model_dir),
        tokenizer_revision=None,
        tokenizer_mode=mode,
        trust_remote_code=False,
        skip_tokenizer_init=False,
        runner_type="generate",
        get_vocab_size=lambda: VOCAB_SIZE,
    )


@pytest.fixture(scope="module")
def processor(model_dir: Path) -> StructgenLogitsProcessor:
    config = SimpleNamespace(model_config=model_config(model_dir), scheduler_config=SimpleNamespace(max_num_seqs=4))
    return StructgenLogitsProcessor(config, torch.device("cpu"), False)


@pytest.fixture(scope="module")
def tokenizer(model_dir: Path) -> Any:
    return served_tokenizer(model_config(model_dir))


def allowed(processor: StructgenLogitsProcessor) -> set[int]:
    logits = processor.apply(torch.zeros((1, VOCAB_SIZE)))
    return set(torch.nonzero(logits[0] > float("-inf")).flatten().tolist())


def start(processor: StructgenLogitsProcessor, params: SamplingParams) -> list[int]:
    processor.requests.clear()
    processor.parked.clear()
    output: list[int] = []
    processor.update_state(BatchUpdate(batch_size=1, removed=[], added=[(0, params, [1], output)], moved=[]))
    return output


def test_the_calls_take_over_once_the_trigger_is_written(processor: StructgenLogitsProcessor, tokenizer: Any) -> None:
    args = {**constraint_args(free_text_or(TAG, TRIGGER)), NEXT_GRAMMAR_KEY: CALLS, NEXT_AFTER_KEY: TRIGGER}
    params = SamplingParams(extra_args=args, stop_token_ids=[2])
    output = start(processor, params)
    eos, seven, letter = 2, tokenizer.convert_tokens_to_ids("7"), tokenizer.convert_tokens_to_ids("a")
    written = tokenizer.encode("Sure." + TRIGGER, add_special_tokens=False)
    for token in written:
        assert token in allowed(processor)
        output.append(token)
    calls = allowed(processor)
    assert seven in calls and letter not in calls and eos not in calls  # the calls' grammar, past its trigger
    output.append(seven)
    assert eos not in allowed(processor)  # the call is not closed yet
    del output[-2:]  # vLLM took two tokens back: into the free text again
    again = allowed(processor)
    assert written[-1] in again and seven not in again
    output.extend([written[-1], seven])
    assert seven in allowed(processor)  # back in the calls, one digit in: more may follow
    free = start(processor, params)
    free.extend(tokenizer.encode("No call.", add_special_tokens=False))
    assert eos in allowed(processor)  # text without the trigger may end


def test_a_malformed_second_phase_is_refused_on_arrival() -> None:
    with pytest.raises(Exception, match="structgen_next_grammar"):
        StructgenLogitsProcessor.validate_params(SamplingParams(extra_args={**structgen_args(regex="a"), NEXT_GRAMMAR_KEY: CALLS}))


def test_a_compile_failure_ends_only_that_request(
    processor: StructgenLogitsProcessor, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise MemoryError("no room for the tables")

    monkeypatch.setattr(integration, "compile", broken)
    with caplog.at_level(logging.ERROR, logger=integration.__name__):
        output = start(processor, SamplingParams(extra_args=structgen_args(regex="[0-9]{3}"), stop_token_ids=[2]))
    assert "failed to compile" in caplog.text and "no room for the tables" in caplog.text
    assert allowed(processor) == {2}  # it ends at once, with no output
    output.append(2)
    assert allowed(processor) == {2}


def test_grammars_compile_in_the_worker_before_the_request(processor: StructgenLogitsProcessor, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = StructgenWorkerExtension()
    schema = {"type": "object", "properties": {"precompiled": {"type": "integer"}}, "required": ["precompiled"]}
    args = {**structgen_args(schema=schema), NEXT_GRAMMAR_KEY: CALLS, NEXT_AFTER_KEY: TRIGGER}
    assert precompiled(worker, args) == "ready"
    for grammar in (integration.request_constraint(SamplingParams(extra_args=args)).grammar, make_constraint(grammar=CALLS).grammar):
        assert grammar is not None and id(processor.info) in grammar.compiled_for  # the step finds it compiled

    def untranslated(*_: Any) -> Any:
        raise AssertionError("translated again inside the step")

    monkeypatch.setattr(integration, "request_constraint", untranslated)
    monkeypatch.setattr(integration, "next_phase_from_args", untranslated)
    start(processor, SamplingParams(extra_args=args, stop_token_ids=[2]))
    first = allowed(processor)
    assert 2 not in first and all(processor.info.decoded_vocab[t].startswith(b"{") for t in first)
    assert precompiled(worker, {"structgen_regex": "("}).startswith("error: structgen: structgen_regex")


def precompiled(worker: StructgenWorkerExtension, args: dict[str, Any], seconds: float | None = None) -> str:
    """The worker's answer once it is no longer ``pending`` (as the server asks: again and again)."""
    answers: list[str] = []

    def answered() -> bool:
        answers.append(worker.structgen_precompile(args, seconds))
        return answers[-1] != "pending"

    wait_until(answered, f"the worker compiled {args}", tries=12_000, pause=0.01)
    return answers[-1]


def test_the_tokenizer_mode_is_vllms(model_dir: Path, processor: StructgenLogitsProcessor) -> None:
    assert tokenizer_info(model_config(model_dir, "hf")).decoded_vocab == processor.info.decoded_vocab
    with pytest.raises(ValueError):  # no Mistral tokenizer file here: the mode was honoured
        tokenizer_info(model_config(model_dir, "mistral"))


def test_a_worker_compile_stops_at_its_limit(processor: StructgenLogitsProcessor, monkeypatch: pytest.MonkeyPatch) -> None:
    """``structgen_precompile(args, seconds)``: a compile past its limit is an
    error answer (asked again: compiled anew), and what was queued behind it goes on.
    The compile here never ends on its own: only its deadline stops it, whatever
    the machine's speed."""
    from structgen.engine.deadline import check_deadline

    import threading

    real, entered = integration.compile, threading.Event()

    def endless(*_: Any, **__: Any) -> Any:
        entered.set()
        while True:  # a pathological grammar: stopped only by its deadline
            check_deadline()
            time.sleep(0.01)

    monkeypatch.setattr(integration, "compile", endless)
    worker = StructgenWorkerExtension()
    slow, queued = structgen_args(regex="[a-z]{2}slow"), structgen_args(regex="[a-z]{2}queued")
    assert worker.structgen_precompile(slow, 0.3) == "pending"
    assert worker.structgen_precompile(queued, 30.0) == "pending"  # behind it on the worker's one compile thread
    assert entered.wait(10)
    monkeypatch.setattr(integration, "compile", real)
    answer = precompiled(worker, slow, 0.3)
    assert answer.startswith("error: compiling ran past its 0.3 s limit")
    assert integration._args_key(slow) not in integration._compiles  # a later request tries again
    assert precompiled(worker, queued, 30.0) == "ready"
    assert precompiled(worker, slow, 30.0) == "ready"


def test_remembered_compiles_are_let_go_least_recently_used_first(
    processor: StructgenLogitsProcessor, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures import Future

    monkeypatch.setattr(integration, "_compiles", type(integration._compiles)())
    monkeypatch.setattr(integration, "MAX_REMEMBERED_COMPILES", 2)
    worker = StructgenWorkerExtension()
    keys = [structgen_args(regex=f"lru{i}") for i in range(3)]
    for args in keys[:2]:
        done: Future[Any] = Future()
        done.set_result((None, None))
        integration._compiles[integration._args_key(args)] = done
    assert worker.structgen_precompile(keys[0]) == "ready"  # used: now the most recent
    worker.structgen_precompile(keys[2])  # a new one: the least recently used (keys[1]) goes
    assert list(integration._compiles) == [integration._args_key(keys[0]), integration._args_key(keys[2])]
