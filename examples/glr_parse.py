"""Build LALR(1) tables that keep conflicts, and follow an ambiguous grammar with
the persistent GLR stack; then time the tables of SynCode's big grammars.

Run: .venv/bin/python examples/glr_parse.py

Internals at work: it imports ``structgen.engine``, documented but not public API (docs/design.md §5).
"""

import importlib.util
import pathlib
import time

from structgen.engine.lr import build_lalr
from structgen.engine.stack import GLRParser
from structgen.lark_rules import read_lark

rules = read_lark('start: e\ne: e "+" e | e "*" e | "(" e ")" | "x"')
table = build_lalr(len(rules.terminals), rules.rules, rules.start)
print(f"ambiguous expressions: {table.state_count} states, {table.conflicts()} cells with conflicts")
by_char = {t.value: i for i, t in enumerate(rules.terminals)}
parser = GLRParser(table)
history = [parser.initial()]
for ch in "x+x*x":
    history.append(parser.feed(history[-1], by_char[ch]))
    print(f"  after {ch!r}: {len(history[-1])} stack(s)")
print("  complete:", parser.accepts_end(history[-1]))
snapshot = history[2]  # rollback to "x+" is just the old tops
for ch in "()":
    print(f"  from the snapshot 'x+', {ch!r} can come next:", bool(parser.feed(snapshot, by_char[ch])))

spec = importlib.util.find_spec("syncode")
if spec and spec.submodule_search_locations:
    root = pathlib.Path(list(spec.submodule_search_locations)[0])
    for name in ["json", "java", "sql", "go"]:
        grammar = read_lark(next(root.rglob(f"{name}.lark")).read_text())
        started = time.perf_counter()
        big = build_lalr(len(grammar.terminals), grammar.rules, grammar.start)
        elapsed = time.perf_counter() - started
        print(
            f"SynCode {name}: {len(grammar.terminals)} terminals, {len(grammar.rules)} rules, "
            f"{big.state_count} states, {big.conflicts()} conflict cells, {elapsed:.2f} s"
        )
