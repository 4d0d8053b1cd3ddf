"""A KV cache too small for the batch makes vLLM preempt requests and recompute them
later; their matchers must pick up exactly where the outputs were, so every output
is still valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import jsonschema
import pytest
from vllm import LLM, SamplingParams

from schema_requests import SCHEMA_REQUESTS
from structgen.integrations.vllm import structgen_args
from vllm_setup import structgen_llm

pytestmark = pytest.mark.model

KV_CACHE_BYTES = 16 << 20  # about 350 tokens of SmolLM2's KV cache: far less than 16 requests need


@pytest.fixture(scope="module")
def small_cache_llm(model_dir: Path) -> Iterator[LLM]:
    engine = structgen_llm(
        model_dir,
        max_model_len=320,
        max_num_seqs=16,
        enable_prefix_caching=False,  # shared prompt blocks would leave more room
        kv_cache_memory_bytes=KV_CACHE_BYTES,
        block_size=32,  # the CPU backend's smallest: requests outgrow their blocks every 32 tokens
        disable_log_stats=False,  # counts preemptions
    )
    yield engine
    del engine


def preemptions(llm: LLM) -> float:
    return sum(getattr(m, "value", 0) for m in llm.get_metrics() if m.name == "vllm:num_preemptions")


def test_preempted_requests_still_give_valid_outputs(small_cache_llm: LLM) -> None:
    params = [
        SamplingParams(temperature=0, max_tokens=200, extra_args=structgen_args(schema=schema))
        for _, schema in SCHEMA_REQUESTS
    ]
    conversations = [[{"role": "user", "content": prompt}] for prompt, _ in SCHEMA_REQUESTS]
    outputs = small_cache_llm.chat(conversations, params, use_tqdm=False)
    assert preemptions(small_cache_llm) > 0
    for (prompt, schema), output in zip(SCHEMA_REQUESTS, outputs):
        completion = output.outputs[0]
        assert completion.finish_reason == "stop", (prompt, completion.text)
        jsonschema.validate(json.loads(completion.text), schema, format_checker=jsonschema.FormatChecker())
