"""How much a compiled grammar holds, and the budget that bounds all of them
(docs/design.md §12).

Compiles a few tool schemas on the bundled SmolLM2 vocabulary, prints each one's
tables in bytes (``CompiledGrammar.memory_bytes``) before and after following
one call, then shrinks the process's budget to two grammars and shows the least
recently used one giving its tables up: asked for again, it compiles again.

Run: .venv/bin/python examples/compiled_memory.py

Internals at work: it imports ``structgen.compiled_budget``, documented but not public API (docs/design.md §5).
"""

import json

import structgen
from structgen.compiled_budget import BUDGET

TOOLS = [
    {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]},
    {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "maximum": 50}}},
    {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
]

tokenizer = structgen.load_tokenizer()
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
bitmask = structgen.allocate_token_bitmask(1, info.vocab_size)
grammars = [structgen.Grammar.from_json_schema(schema) for schema in TOOLS]

compiled = structgen.compile(grammars[0], info, lazy=True)
print(f"lazily compiled: {compiled.memory_bytes() / 1e6:.2f} MB")
matcher = structgen.Matcher(compiled)
for token in tokenizer.encode(json.dumps({"city": "Lisbon", "days": 3}), add_special_tokens=False):
    matcher.fill_next_token_bitmask(bitmask)
    assert matcher.accept_token(token)
print(f"after one call's steps: {compiled.memory_bytes() / 1e6:.2f} MB")

saved = (BUDGET.max_grammars, BUDGET.max_bytes)
BUDGET.configure(2, saved[1])
try:
    kept = [structgen.compile(grammar, info) for grammar in grammars]
    print(f"budget of 2 grammars: {len(BUDGET)} kept, {BUDGET.kept_bytes() / 1e6:.2f} MB")
    print("the first tool's tables were given up:", not grammars[0].compiled_for)
    again = structgen.compile(grammars[0], info)
    print("asked again, it compiles again:", again is not kept[0])
finally:
    BUDGET.configure(*saved)
