"""What one step of a compiled grammar may still cost (docs/design.md §11).

A schema compiled eagerly (the default) and lazily, on the bundled SmolLM2
vocabulary: ``compiled.step_bound()`` before any step says how many vocabulary
walks a step may still make and how many table entries are left to first use;
the steps of one instance are then timed, and the bound read again after them.

Run: .venv/bin/python examples/step_bound.py
"""

import json
import time

import structgen

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 40}, "days": {"type": "integer", "minimum": 1},
                   "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "days"],
}
TEXT = json.dumps({"city": "Lisbon", "days": 3, "unit": "celsius"})

tokenizer = structgen.load_tokenizer()
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
tokens = tokenizer.encode(TEXT, add_special_tokens=False)
bitmask = structgen.allocate_token_bitmask(1, info.vocab_size)

for lazy in (False, True):
    grammar = structgen.Grammar.from_json_schema(SCHEMA)
    started = time.perf_counter()
    compiled = structgen.compile(grammar, info, lazy=lazy)
    compile_ms = (time.perf_counter() - started) * 1e3
    before = compiled.step_bound()
    matcher = structgen.Matcher(compiled)
    steps = []
    for token in tokens:
        started = time.perf_counter()
        matcher.fill_next_token_bitmask(bitmask)
        assert matcher.accept_token(token)
        steps.append((time.perf_counter() - started) * 1e6)
    after = compiled.step_bound()
    print(f"{'lazy' if lazy else 'eager'}: compile {compile_ms:.0f} ms; before the steps: {before.walks} walks a step "
          f"may make ({before.states_left} of {before.lexer_states} lexer states unbuilt), "
          f"{before.entries_built} of {before.entries_possible} entries built")
    print(f"    {len(steps)} steps: max {max(steps):.0f} µs; after them: {after.states_left} states unbuilt, "
          f"{after.entries_built} entries built, at most {after.most_dependent} groups checked online a step")
