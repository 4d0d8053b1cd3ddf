"""Lexer views (docs/tables.md): a schema whose bounded strings run beside patterns
and a date multiplies them into thousands of lexer states, each of whose token
groups costs a walk of the vocabulary on first visit. Built in the view of the
terminals the parser takes there, the groups are those of far fewer states.
This feeds one instance through the same schema without views, with views built
on first use, and as ``compile`` does by default (the views' automata and their
states' groups, within the work budget, at compile), on the bundled SmolLM2
vocabulary, and compares every mask, the compile and the slow steps.

Run: .venv/bin/python examples/lexer_views.py
"""

import json
import time

import structgen

SCHEMA = {
    "type": "object",
    "properties": {
        "etag": {"type": "string", "pattern": "^[\\w\\.:-]+$"},
        "css_class": {"type": "string", "pattern": "^[\\w\\s-]+$"},
        "updated": {"type": "string", "format": "date-time"},
        "title": {"type": "string", "maxLength": 255},
        "cta_text": {"type": "string", "maxLength": 255},
        "node_ref": {"type": "string", "pattern": "^[\\w\\/\\.:-]+$"},
    },
    "additionalProperties": True,
}
INSTANCE = {
    "etag": "block-123",
    "css_class": "article block",
    "updated": "2022-01-01T12:00:00Z",
    "title": "Example Article",
    "cta_text": "Read More",
    "node_ref": "article/123",
}

tokenizer = structgen.load_tokenizer()
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
ids = tokenizer.encode(json.dumps(INSTANCE), add_special_tokens=False)
runs = {}
for mode in ("views off", "on first use", "at compile"):
    # a new grammar: compile caches per grammar; the lexer counts the 255 characters (by default the matcher would)
    grammar = structgen.Grammar.from_json_schema(SCHEMA, lexer_max_length=2048)
    started = time.perf_counter()
    compiled = structgen.compile(grammar, info, lazy=mode != "at compile")  # lazy: every group on first use
    compile_s = time.perf_counter() - started
    matcher = structgen.Matcher(compiled)
    tables = matcher._engine.compiled.tables
    if mode == "views off":
        tables.views = None  # views are on by default past 8,000 lexer states (GROUPS_LIMIT)
    rows, times = [], []
    for token in ids:
        started = time.perf_counter()
        rows.append(matcher._engine.allowed_row())
        times.append(time.perf_counter() - started)
        assert matcher.accept_token(token)
    runs[mode] = rows
    slow = sorted(times, reverse=True)
    print(
        f"{mode:12}: {grammar.lexer.dfa.state_count} lexer states, compiled in {compile_s:.2f} s; {len(ids)} steps, "
        f"{sum(times):.2f} s in all, {sum(1 for t in times if t > 1e-3)} over 1 ms, slowest {slow[0] * 1e3:.0f} ms"
    )
    if tables.views is not None:
        built = [view for view in tables.views._views.values() if view is not None]
        print(f"  views built: {len(built)}, of {[view.count for view in built]} states")
first, *others = runs.values()
print("every mask equal:", all(rows == first for rows in others))
