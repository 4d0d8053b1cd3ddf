"""Exact token masks for grammars/json.lark on a real vocabulary, timed per step
the way MaskBench times them (mask, then commit the token).

Run: .venv/bin/python examples/json_masks.py [MODEL_PATH]   (default: bundled SmolLM2)
"""

import json
import statistics
import sys
import time
from pathlib import Path

import structgen

tokenizer = structgen.load_tokenizer(sys.argv[1] if len(sys.argv) > 1 else None)
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
grammar = structgen.Grammar.from_lark((Path(__file__).parent.parent / "grammars" / "json.lark").read_text())
started = time.perf_counter()
compiled = structgen.compile(grammar, info)
print(f"{info.vocab_size} tokens; compile {time.perf_counter() - started:.2f} s")

documents = [
    {"name": "Zoë", "tags": ["a", "b"], "n": -1.5e3, "ok": True, "none": None},
    [{"id": i, "text": "line\nbreak \"quoted\" 日本 😀", "score": i / 7} for i in range(20)],
    {"nested": {"deeper": {"deepest": [1, [2, [3, [4]]]]}}, "empty": {}, "list": []},
]
bitmask = structgen.allocate_token_bitmask(1, info.vocab_size)
samples = []
for document in documents:
    for indent in (None, 2):
        ids = tokenizer.encode(json.dumps(document, ensure_ascii=False, indent=indent), add_special_tokens=False)
        matcher = structgen.Matcher(compiled)
        for token in ids:
            started = time.perf_counter()
            matcher.fill_next_token_bitmask(bitmask)
            assert matcher.accept_token(token)
            samples.append(time.perf_counter() - started)
        assert matcher.can_terminate()

samples.sort()
def at(q: float) -> float:
    return samples[min(len(samples) - 1, int(q * len(samples)))] * 1e6
print(
    f"{len(samples)} steps (mask + commit): mean {statistics.mean(samples) * 1e6:.0f} µs, "
    f"p50 {at(0.5):.0f} µs, p99 {at(0.99):.0f} µs, max {samples[-1] * 1e6:.0f} µs"
)
