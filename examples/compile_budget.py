"""The compile's time for token groups (docs/tables.md): an object with many keys
beside a bounded string makes each key prefix a lexer state that runs beside the
string's count, and each such state's groups cost a walk of the vocabulary. By
default ``compile`` builds them for up to ``GROUPS_WALKS`` walks of the
vocabulary's worth of work and leaves the rest to first use; this compares that
with building every state up front, and with a compile under a time limit (as a
server's), where that work gives way once half the limit is gone
(``engine.deadline.optional_work_over``), on the bundled SmolLM2 vocabulary:
compile time, states built, and the steps of one instance (every mask equal).

Run: .venv/bin/python examples/compile_budget.py

Internals at work: it imports ``structgen.engine.deadline``, documented but not public API (docs/design.md §5).
"""

import json
import time

import structgen
from structgen.engine.deadline import Deadline, run_within
from structgen.engine.matcher import GROUPS_WALKS

LIMIT = 0.4  # seconds: the compile may spend 0.2 s on precomputing

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
for label, walks, limit in (
    ("every state up front", 10.0**9, None),
    (f"default ({GROUPS_WALKS} walks)", GROUPS_WALKS, None),
    (f"default, {LIMIT} s limit", GROUPS_WALKS, LIMIT),
):
    # a new grammar: compile caches per grammar; the lexer counts the name (by default the matcher would)
    grammar = structgen.Grammar.from_json_schema(SCHEMA, lexer_max_length=2048)
    started = time.perf_counter()
    matcher = structgen.Matcher(structgen.compile(grammar, info, lazy=True))
    engine = matcher._engine.compiled
    if limit is None:
        engine.precompute(groups_walks=walks)  # what compile does, with this budget
    else:
        run_within(Deadline(limit), lambda: engine.precompute(groups_walks=walks))
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
first, *others = rows.values()
print("every mask equal:", all(other == first for other in others))
