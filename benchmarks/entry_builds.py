"""Time building the mask entries MaskBench's tests visit, apart from the rest of a step.

Between p90 and p99 nearly every MaskBench step builds a table entry on its first
visit (docs/tables.md), and on a noisy machine whole-step percentiles move by 10%
from run to run. This runs each schema's tests once (structgen), then rebuilds
every one-state entry they visited on fresh tables that keep the groups, several
times, and keeps each entry's fastest build: a measure of entry building alone
that two builds of the engine can be compared on. Schemas whose groups are built
in views (large lexers) are left out: their entries' groups depend on the views.

    python benchmarks/entry_builds.py --every 40 --reps 5 --out /tmp/entries.json
"""

from __future__ import annotations

import argparse
import gc
import json
from pathlib import Path
from time import perf_counter_ns

import numpy as np

import maskbench
import workloads
from structgen.engine.tables import MaskTables


def entry_times(record: dict[str, object], state: dict[str, object], reps: int) -> list[int] | None:
    """Each visited entry's fastest build in ns, in the order the tests built them."""
    engine = state["engines"]["structgen"]  # type: ignore[index]
    tokenizer = state["tokenizer"]
    try:
        compiled, _ = maskbench.compile_schema(engine, record["schema"])
    except maskbench.CompileError:
        return None
    for test in record["tests"]:  # type: ignore[attr-defined]
        session = compiled.session()
        for token in tokenizer.encode(json.dumps(test["data"], ensure_ascii=False), add_special_tokens=False):  # type: ignore[attr-defined]
            if not session.step(token)[2]:
                break
    grammar = compiled.compiled
    tables = grammar.tables
    if tables.views is not None:
        return None
    pairs = [divmod(index, tables.lr_state_count) for index in tables._entries]
    best: list[int] = []
    for _ in range(reps):
        fresh = tables_sharing_groups(tables)
        gc.disable()
        times = []
        for lexer_state, lr_state in pairs:
            started = perf_counter_ns()
            fresh.entry(lexer_state, lr_state)
            times.append(perf_counter_ns() - started)
        gc.enable()
        best = times if not best else [min(a, b) for a, b in zip(best, times)]
    return best


def tables_sharing_groups(tables: MaskTables) -> MaskTables:
    """New tables for the same grammar that keep ``tables``' groups and sequences:
    no entry built, no group to build again."""
    fresh = MaskTables(tables.lexer, tables.table, tables.ignored, tables.trie, tables.vocab_size)
    fresh._groups = tables._groups
    fresh.sequences = tables.sequences
    return fresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=40)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--id", action="append", default=[], dest="ids")
    parser.add_argument("--maskbench", help=f"MaskBench jsonl.gz (default $STRUCTGEN_MASKBENCH or {workloads.DEFAULT_MASKBENCH})")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    records = maskbench.load(workloads.maskbench_path(args.maskbench), args.every, None, args.ids)
    state = maskbench.setup(["structgen"])
    results = {}
    for record in records:
        times = entry_times(record, state, args.reps)
        if times is not None:
            results[record["id"]] = times
    every = np.array([t for times in results.values() for t in times]) / 1000
    p50, p90, p99 = np.percentile(every, [50, 90, 99])
    print(f"{len(results)} schemas, {len(every)} entries: {every.sum() / 1000:,.0f} ms in all; "
          f"per entry p50 {p50:.1f} / p90 {p90:.1f} / p99 {p99:.1f} / max {every.max():.1f} µs")
    if args.out:
        args.out.write_text(json.dumps(results))


if __name__ == "__main__":
    main()
