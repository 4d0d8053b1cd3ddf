"""A ``maxLength`` longer than the lexer counts (``Options.lexer_max_length``, 8
characters, for a string with no format; beside a pattern where the maximum
leaves room for what a text may still need to end): the grammar's string is
unbounded, marked ``max_length_N``, and the matcher counts its characters as the
text is written (``structgen.json.string_lengths``). The lexer counting them instead
takes some 20 automaton states a character, each with token groups to build.

Run: .venv/bin/python examples/long_strings.py

Internals at work: it imports ``structgen.json``, documented but not public API (docs/design.md §5).
"""

import json

from pydantic import BaseModel, Field

import structgen
from structgen.json.string_lengths import StringLengths


class Post(BaseModel):
    code: str = Field(default="", max_length=3)  # counted by the grammar
    title: str = Field(max_length=80)  # counted by the matcher, as the body is
    body: str = Field(max_length=32767)


grammar = structgen.Grammar.from_pydantic(Post, whitespace="compact")
print(grammar.report)
lexed = structgen.Grammar.from_pydantic(Post, whitespace="compact", lexer_max_length=2048)  # the title in the lexer
print(f"lexer states: {grammar.lexer.dfa.state_count} (title counted by the matcher), "
      f"{lexed.lexer.dfa.state_count} (by the lexer)")

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

# Beside a pattern a text may need more characters before it can end: a summary
# of words wants a word after a space. The matcher keeps room for it (the
# pattern's closing distance, 1 here, written in the marker's name).
class Summary(BaseModel):
    summary: str = Field(max_length=40, pattern=r"^(?:\S+\s+){0,9}\S+$")


words = structgen.Grammar.from_pydantic(Summary, whitespace="compact")
assert words.check(StringLengths) is not None
print("closing distance:", words.check(StringLengths).late)
matcher = structgen.Matcher(structgen.compile(words, info))
matcher.accept_string('{"summary":"' + "a" * 38)
allowed = {info.decoded_vocab[t] for t in matcher.allowed_tokens()}
print("at 38 of 40:", {spelled.decode(): spelled in allowed for spelled in [b" ", b"a ", b"ab", b'"']})
