"""Compose grammars: Hermes-style tool calls around a schema's JSON, and an answer
that is either a JSON report or the start of a call (docs/grammar.md).

Run: .venv/bin/python examples/compose_grammars.py
"""

from structgen import Grammar

weather = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
           "required": ["city"], "additionalProperties": False}
report = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}

call = Grammar.from_json_schema(weather, whitespace="compact")
calls = Grammar.sequence(
    Grammar.literal("<tool_call>"),
    Grammar.repeat(call, separator=Grammar.literal("</tool_call>\n<tool_call>")),
    Grammar.literal("</tool_call>"),
)
for text in ['<tool_call>{"city":"Oslo"}</tool_call>',
             '<tool_call>{"city":"Oslo"}</tool_call>\n<tool_call>{"city":"Rome","days":3}</tool_call>',
             '<tool_call>{"city":"Oslo","days":0}</tool_call>',
             '<tool_call></tool_call>']:
    print(f"calls   {text!r:90} {'accepted' if calls.accepts(text) else 'rejected'}")

answer_or_call = Grammar.union(Grammar.from_json_schema(report, whitespace="compact"), Grammar.literal("<tool_call>"))
for text in ['{"summary":"sunny"}', "<tool_call>", '{"city":"Oslo"}']:
    print(f"answer  {text!r:90} {'accepted' if answer_or_call.accepts(text) else 'rejected'}")

kind, lark_text = calls.source  # what a vLLM worker rebuilds the grammar from
print(f"\nthe composed grammar as {kind} text: {len(lark_text.splitlines())} lines; its start rule:")
print("  " + lark_text.splitlines()[len(calls.rules.terminals)])
