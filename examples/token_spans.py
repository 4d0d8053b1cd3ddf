"""The token-level transducer for grammars/json.lark over a real vocabulary: from
every lexer state, what each token does (lexemes ended, lexer state after it).

Run: .venv/bin/python examples/token_spans.py [MODEL_PATH]   (default: bundled SmolLM2)

Internals at work: it imports ``structgen.engine``, documented but not public API (docs/design.md §5).
"""

import sys
import time
from pathlib import Path

import structgen
from structgen.engine.spanner import SequenceTable, token_groups
from structgen.engine.vocab import build_trie

grammar = structgen.Grammar.from_lark((Path(__file__).parent.parent / "grammars" / "json.lark").read_text())
tokenizer = structgen.load_tokenizer(sys.argv[1] if len(sys.argv) > 1 else None)
info = structgen.TokenizerInfo.from_huggingface(tokenizer)
started = time.perf_counter()
trie = build_trie(info.decoded_vocab, info.special_token_ids)
built = time.perf_counter()
sequences = SequenceTable()
viable = groups = 0
states = grammar.lexer.dfa.state_count
for state in range(states):
    found = token_groups(grammar.lexer, trie, state, sequences)
    groups += len(found)
    viable += sum(len(group.token_ids) for group in found)
walked = time.perf_counter()
print(f"{info.vocab_size} tokens, trie {trie.node_count} nodes ({built - started:.2f} s)")
print(
    f"json.lark lexer: {states} states; {viable} (state, token) pairs can be lexed, "
    f"{groups} token groups, {len(sequences)} distinct lexeme sequences; all states walked in {walked - built:.2f} s"
)
