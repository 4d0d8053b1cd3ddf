"""``uniqueItems`` over free strings and objects: no grammar holds the items seen,
so the matcher checks them as the text is written (``structgen.json.unique_items``).

Run: .venv/bin/python examples/unique_items.py
"""

import json

from pydantic import BaseModel, ConfigDict

import structgen


class Owner(BaseModel):
    model_config = ConfigDict(extra="forbid")  # additionalProperties: false
    name: str
    email: str


class Repository(BaseModel):
    tags: set[str]  # uniqueItems: true over any string
    owners: list[Owner]


schema = Repository.model_json_schema()
schema["properties"]["owners"]["uniqueItems"] = True  # no owner twice
grammar = structgen.Grammar.from_json_schema(schema, whitespace="compact")
print(grammar.report)

# The language itself: Grammar.accepts refuses a repeat, as JSON Schema compares values.
for text in ['{"tags":["a","b"],"owners":[]}', '{"tags":["a","\\u0061"],"owners":[]}',
             '{"tags":[],"owners":[{"name":"ann","email":"a@b"},{"name":"ann","email":"a@b"}]}']:
    print(f"{'accepted' if grammar.accepts(text) else 'refused '}  {text}")

# Masks: after the same owner's name and most of the same e-mail, the closing quote
# is refused (only } could follow it: the first owner again), another letter is not.
tokenizer = structgen.load_tokenizer()  # the bundled SmolLM2's
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
matcher = structgen.Matcher(structgen.compile(grammar, info))
prefix = '{"tags":["red","green","red'
matcher.accept_string(prefix)
allowed = {info.decoded_vocab[t] for t in matcher.allowed_tokens()}
print(prefix, "then", {spelled.decode(): spelled in allowed for spelled in [b'"', b'",', b'"]', b"2", b"dish"]})

matcher.reset()
prefix = '{"tags":[],"owners":[{"name":"ann","email":"a@b"},{"name":"ann","email":"a@b'
matcher.accept_string(prefix)
allowed = {info.decoded_vocab[t] for t in matcher.allowed_tokens()}
print("...a@b then", {spelled.decode(): spelled in allowed for spelled in [b'"', b'"}', b"c", b"cd"]})
print("accept_string('\"}'):", matcher.fork().accept_string('"}'), "  accept_string('c\"}]}'):",
      matcher.accept_string('c"}]}'), " complete:", matcher.can_terminate())
print(json.loads(prefix + 'c"}]}'))
