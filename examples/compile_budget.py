"""The compile's time for token groups (docs/tables.md): an object with many keys
beside a bounded string makes each key prefix a lexer state that runs beside the
string's count, and each such state's groups cost a walk of the vocabulary. By
default ``compile`` builds them for up to ``GROUPS_WALKS`` walks of the
vocabulary's worth of work and leaves the rest to first use; this compares that
with building every state up front, on the bundled SmolLM2 vocabulary: compile
time, states built, and the steps of one instance (every mask equal).

Run: .venv/bin/python examples/compile_budget.py
"""

import json
import time

import structgen
from structgen.engine.matcher import GROUPS_WALKS

WORDS = ["poll", "push", "sms", "email", "scene", "sensor", "unit", "value", "zwave", "user", "parent", "node"]
SUFFIXES = ["Time", "Type", "ID", "State", "Version", "Info", "Template", "Support"]
KEYS = [word + suffix for word in WORDS for suffix in SUFFIXES]  # 96 keys with shared prefixes
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 40}, **{key: {"type": "string"} for key in KEYS}},
}
INSTANCE = {"name": "Kitchen dimmer", "pollTime": "60", "sceneState": "on", "zwaveVersion": "3.42", "userInfo": ""}

tokenizer = structgen.load_tokenizer()
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
ids = tokenizer.encode(json.dumps(INSTANCE), add_special_tokens=False)
structgen.compile(structgen.Grammar.from_lark('start: "a"'), info)  # the vocabulary's trie, built once
rows = {}
for label, walks in (("every state up front", 10.0**9), (f"default ({GROUPS_WALKS} walks)", GROUPS_WALKS)):
    grammar = structgen.Grammar.from_json_schema(SCHEMA)  # a new grammar: compile caches per grammar
    started = time.perf_counter()
    matcher = structgen.Matcher(structgen.compile(grammar, info, lazy=True))
    engine = matcher._engine.compiled
    engine.precompute(groups_walks=walks)  # what compile does, with this budget
    compile_s = time.perf_counter() - started
    built = sum(1 for groups in engine.tables._groups if groups is not None)
    times, rows[label] = [], []
    for token in ids:
        step = time.perf_counter()
        rows[label].append(matcher._engine.allowed_row())
        times.append(time.perf_counter() - step)
        assert matcher.accept_token(token)
    print(
        f"{label:22} {grammar.lexer.dfa.state_count} lexer states, {built} built at compile in {compile_s:.2f} s; "
        f"{len(ids)} steps: {sum(times) * 1e3:.0f} ms in all, slowest {max(times) * 1e3:.1f} ms"
    )
first, second = rows.values()
print("every mask equal:", first == second)
