"""Lexer views (docs/tables.md): a schema whose bounded strings run beside patterns
and a date multiplies them into thousands of lexer states, each of whose token
groups costs a walk of the vocabulary on first visit. Built in the view of the
terminals the parser takes there, the groups are those of far fewer states.
This feeds one instance through the same schema with and without views, on the
bundled SmolLM2 vocabulary, and compares every mask and the slow steps.

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
for views in (False, True):
    grammar = structgen.Grammar.from_json_schema(SCHEMA)  # a new grammar: compile caches per grammar
    compiled = structgen.compile(grammar, info, lazy=True)  # every token group built on first use
    matcher = structgen.Matcher(compiled)
    tables = matcher._engine.compiled.tables
    if not views:
        tables.views = None  # views are on by default past 8,000 lexer states (GROUPS_LIMIT)
    rows, times = [], []
    for token in ids:
        started = time.perf_counter()
        rows.append(matcher._engine.allowed_row())
        times.append(time.perf_counter() - started)
        assert matcher.accept_token(token)
    runs[views] = rows
    slow = sorted(times, reverse=True)
    print(
        f"views {'on ' if views else 'off'}: {grammar.lexer.dfa.state_count} lexer states; {len(ids)} steps, "
        f"{sum(times):.2f} s in all, {sum(1 for t in times if t > 1e-3)} over 1 ms, slowest {slow[0] * 1e3:.0f} ms"
    )
    if views and tables.views is not None:
        built = [view for view in tables.views._views.values() if view is not None]
        print(f"  views built: {len(built)}, of {[view.count for view in built]} states")
print("every mask equal:", runs[False] == runs[True])
