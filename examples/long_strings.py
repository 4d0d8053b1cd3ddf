"""A ``maxLength`` longer than the lexer counts (2,048 characters): the grammar's
string is unbounded, marked ``max_length_N``, and the matcher counts its
characters as the text is written (``structgen.string_lengths``).

Run: .venv/bin/python examples/long_strings.py
"""

import json

from pydantic import BaseModel, Field

import structgen


class Post(BaseModel):
    title: str = Field(max_length=80)  # counted by the grammar
    body: str = Field(max_length=32767)  # counted by the matcher


grammar = structgen.Grammar.from_pydantic(Post, whitespace="compact")
print(grammar.report)

# The language: Grammar.accepts counts the marked string as JSON Schema does
# (an escape, a surrogate pair, a UTF-8 character is one character each).
for body in ["é" * 32767, "\U0001f600" * 32767, "a" * 32768]:
    text = json.dumps({"title": "t", "body": body}, separators=(",", ":"))
    print(f"body of {len(body)} characters, {len(text)} bytes: {'accepted' if grammar.accepts(text) else 'refused'}")

# Masks: one character short of the maximum, a token of one more letter is
# allowed, one of two is not; at the maximum only what closes the string is.
tokenizer = structgen.load_tokenizer()  # the bundled SmolLM2's
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
matcher = structgen.Matcher(structgen.compile(grammar, info))
matcher.accept_string('{"title":"t","body":"' + "a" * 32766)
allowed = {info.decoded_vocab[t] for t in matcher.allowed_tokens()}
print("at 32,766:", {spelled.decode(): spelled in allowed for spelled in [b"b", b"bc", b'"', b'"}']})
matcher.accept_string("b")
allowed = {info.decoded_vocab[t] for t in matcher.allowed_tokens()}
print("at 32,767:", {spelled.decode(): spelled in allowed for spelled in [b"b", b"\\", b'"', b'"}']},
      f"({len(allowed)} tokens allowed)")
print("accept_string('c'):", matcher.fork().accept_string("c"), "  accept_string('\"}'):", matcher.accept_string('"}'),
      " complete:", matcher.can_terminate())
