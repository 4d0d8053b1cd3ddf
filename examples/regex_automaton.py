"""Build a byte automaton for a regex and walk a real vocabulary with it.

Which tokens of the bundled SmolLM2 vocabulary can start a JSON number?
Run: .venv/bin/python examples/regex_automaton.py

Internals at work: it imports ``structgen.engine``, documented but not public API (docs/design.md §5).
"""

import structgen
from structgen.engine.dfa import build_dfa
from structgen.engine.regex import parse
from structgen.engine.vocab import build_trie

number = build_dfa([parse(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")])
print(f"JSON number automaton: {number.state_count} states")
for text in ["-12.5e3", "012", "3.", "1e+9"]:
    print(f"  {text!r:10} is a whole number: {number.matches(text.encode())}")

info = structgen.TokenizerInfo.from_huggingface(structgen.load_tokenizer())
trie = build_trie(info.decoded_vocab, info.special_token_ids)
ids, states = trie.walk(list(number.table), 0)  # the walk takes a list; a ByteDFA keeps a tuple
complete = [i for i, s in zip(ids, states) if number.accepts[s]]
print(f"{len(ids)} of {info.vocab_size} tokens can start a JSON number; {len(complete)} are whole numbers")
print("some of them:", [info.decoded_vocab[i].decode() for i in ids[:: max(1, len(ids) // 12)]])
