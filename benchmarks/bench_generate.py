"""What constraints cost and save in generation, on the bundled SmolLM2 (docs/generate.md).

- throughput: constrained ÷ unconstrained tokens per second, same model, prompts,
  greedy decoding, jump-forward off (so both produce every token with a forward
  pass and the ratio is the cost of masks); the compile is not in the time;
- jump-forward: forward passes with it on and off for the same schema-heavy outputs;
- time to first token: a schema never seen (compile included) and the same again.

Run: .venv/bin/python benchmarks/bench_generate.py [--repeats 3] [--out benchmarks/generate_results.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

PARAGRAPHS = [
    "Maria Lopez is a 34-year-old software engineer on the payments team. She lives in Lisbon.",
    "Order 1042: three Aurora desk lamps at 49.90 each, in stock; contact sam@example.com.",
    "The design review is on 2025-03-14 in room 4; Ana, Bo and Chen will attend, Dee is optional.",
    "Flight LH 1234 from Frankfurt to Lisbon leaves at 09:40 from gate B12 and lands at 11:35.",
]

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 60},
        "people": {"type": "array", "items": {"type": "string", "maxLength": 30}, "maxItems": 4},
        "place": {"type": "string", "maxLength": 40},
        "date": {"type": "string", "format": "date"},
        "kind": {"enum": ["meeting", "order", "travel", "person"]},
        "details": {
            "type": "object",
            "properties": {"count": {"type": "integer", "minimum": 0, "maximum": 1000}, "note": {"type": "string", "maxLength": 80}},
            "required": ["count", "note"],
        },
    },
    "required": ["title", "people", "place", "date", "kind", "details"],
}


# every run alike: greedy, with the penalty that keeps a 135M model from looping
SAME: dict[str, Any] = {"repetition_penalty": 1.3, "details": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "generate_results.json")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning, module="structgen")
    os.environ.setdefault("TQDM_DISABLE", "1")
    import torch

    import structgen

    model, tokenizer = structgen.load_model()
    prompts = [[{"role": "user", "content": f"Describe this as JSON.\n{p}"}] for p in PARAGRAPHS]
    structgen.generate(model, tokenizer, prompts[0], schema=SCHEMA, max_tokens=256, **SAME)  # warm up
    results: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads",
        "model": structgen.bundled_model_path().name,
        "throughput": throughput(structgen, model, tokenizer, prompts, args.repeats),
        "jump_forward": jump_forward(structgen, model, tokenizer, prompts),
        "time_to_first_token": time_to_first_token(structgen, model, tokenizer, prompts[0], args.repeats),
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


def throughput(structgen: Any, model: Any, tokenizer: Any, prompts: list[Any], repeats: int) -> dict[str, Any]:
    """Seconds per token, constrained (no jump-forward) against free generation of
    the same number of tokens from the same prompts; medians over ``repeats``."""
    constrained, free = [], []
    for _ in range(repeats):
        tokens = seconds = 0.0
        counts = []
        for prompt in prompts:
            g = structgen.generate(model, tokenizer, prompt, schema=SCHEMA, max_tokens=256, jump_forward=False, **SAME)
            tokens += g.forward_passes
            seconds += g.seconds
            counts.append(g.forward_passes)
        constrained.append(tokens / seconds)
        tokens = seconds = 0.0
        for prompt, count in zip(prompts, counts):
            g = structgen.generate(model, tokenizer, prompt, max_tokens=count, **SAME)
            tokens += g.forward_passes
            seconds += g.seconds
        free.append(tokens / seconds)
    c, f = statistics.median(constrained), statistics.median(free)
    return {"constrained_tokens_per_s": round(c, 2), "unconstrained_tokens_per_s": round(f, 2), "ratio": round(c / f, 3)}


def jump_forward(structgen: Any, model: Any, tokenizer: Any, prompts: list[Any]) -> dict[str, Any]:
    on = [structgen.generate(model, tokenizer, p, schema=SCHEMA, max_tokens=256, **SAME) for p in prompts]
    off = [structgen.generate(model, tokenizer, p, schema=SCHEMA, max_tokens=256, jump_forward=False, **SAME) for p in prompts]
    passes_on = sum(g.forward_passes for g in on)
    passes_off = sum(g.forward_passes for g in off)
    return {
        "forward_passes_on": passes_on,
        "forward_passes_off": passes_off,
        "saved": round(1 - passes_on / passes_off, 3),
        "seconds_on": round(sum(g.seconds for g in on), 2),
        "seconds_off": round(sum(g.seconds for g in off), 2),
    }


def time_to_first_token(structgen: Any, model: Any, tokenizer: Any, prompt: Any, repeats: int) -> dict[str, Any]:
    """One token out (jump-forward off): cold = a schema not compiled before."""
    cold, warm = [], []
    for repeat in range(repeats):
        schema = dict(SCHEMA, title=f"cold {repeat} {time.time()}")  # a new grammar each time
        for times in (cold, warm):
            started = time.perf_counter()
            try:
                structgen.generate(model, tokenizer, prompt, schema=schema, max_tokens=1, jump_forward=False, **SAME)
            except structgen.IncompleteOutputError:
                pass  # one token is not a whole object: expected
            times.append(time.perf_counter() - started)
    return {"cold_ms": round(1000 * statistics.median(cold), 1), "warm_ms": round(1000 * statistics.median(warm), 1)}


if __name__ == "__main__":
    main()
