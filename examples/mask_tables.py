"""What the mask tables settle ahead of time: for grammars/json.lark and SynCode's Go
grammar on the bundled SmolLM2 vocabulary, how many token groups each lexer state
has, and how many of them a table entry leaves for the stack to decide.

Run: .venv/bin/python examples/mask_tables.py
"""

import importlib.util
import time
from pathlib import Path

import structgen

info = structgen.TokenizerInfo.from_huggingface(structgen.load_tokenizer())
syncode = Path(list(importlib.util.find_spec("syncode").submodule_search_locations)[0])
grammars = {
    "json": (Path(__file__).parent.parent / "grammars" / "json.lark").read_text(),
    "go": next(syncode.rglob("go.lark")).read_text(),
}
for name, text in grammars.items():
    grammar = structgen.Grammar.from_lark(text)
    started = time.perf_counter()
    compiled = structgen.compile(grammar, info)
    elapsed = time.perf_counter() - started
    tables = compiled.tables
    lexer_states = grammar.lexer.dfa.state_count
    groups = [len(compiled.groups(state)) for state in range(lexer_states)]
    # one-state entries of the start lexer state (between lexemes), for every LR state
    entries = [tables.entry(0, lr_state) for lr_state in range(grammar.table.state_count)]
    dependent = sorted(len(entry.dependent) for entry in entries)
    print(
        f"{name}: compile {elapsed:.2f} s; {lexer_states} lexer states, {grammar.table.state_count} LR states; "
        f"groups per lexer state: max {max(groups)}, total {sum(groups)}"
    )
    print(
        f"  between lexemes ({groups[0]} groups), per LR state: dependent groups median "
        f"{dependent[len(dependent) // 2]}, max {dependent[-1]}; "
        f"{sum(1 for d in dependent if d == 0)} of {len(dependent)} entries settle every group"
    )
