"""Replay MaskBench's tests on fresh tables that keep the groups: steps as a first visit takes them.

A step's tail (p90-p99) is the table entries it builds on a first visit
(docs/tables.md), and one run's percentiles move by 10-20% with the machine.
This compiles each schema and runs its tests once (so every lexer state's groups
the tests need are built), then several times more, each time on fresh tables
sharing those groups, with the words large groups keep dropped first: each
replay builds every entry, refinement and kept word again, as the first run did,
and leaves the group building out. Per step the fastest replay is kept, a
measure two builds of the engine can be compared on. Schemas whose groups are
built in views (large lexers) are left out: their entries' groups depend on the
views.

    python benchmarks/step_replay.py --every 100 --reps 3
"""

from __future__ import annotations

import argparse
import gc
import json
from typing import Any

import numpy as np
from librt.vecs import vec
from mypy_extensions import i64

import maskbench
import workloads
from entry_builds import tables_sharing_groups


def replayed_steps(record: dict[str, Any], state: dict[str, Any], reps: int) -> list[list[int]] | None:
    """Each replay's step times in ns, in the tests' order."""
    engine = state["engines"]["structgen"]
    try:
        compiled, _ = maskbench.compile_schema(engine, record["schema"])
    except maskbench.CompileError:
        return None
    grammar = compiled.compiled
    if grammar.tables.views is not None:
        return None
    tests = [state["tokenizer"].encode(json.dumps(test["data"], ensure_ascii=False), add_special_tokens=False)
             for test in record["tests"]]
    _run(compiled, tests)  # builds the groups
    replays = []
    gc.collect()
    gc.freeze()
    try:
        for _ in range(reps):
            for groups in grammar.tables._groups:
                for group in groups or ():
                    group._words = vec[i64]()
            grammar.tables = tables_sharing_groups(grammar.tables)
            grammar.empty_row = grammar.tables.empty_row
            replays.append(_run(compiled, tests))
    finally:
        gc.unfreeze()
    return replays


def _run(compiled: Any, tests: list[list[int]]) -> list[int]:
    """The tests' steps (mask + accept, as MaskBench times them), each test until refused."""
    times = []
    for tokens in tests:
        session = compiled.session()
        for token in tokens:
            elapsed, _, accepted = session.step(token)
            times.append(elapsed)
            if not accepted:
                break
    return times


def _summary(name: str, times_ns: list[int]) -> str:
    every = np.array(times_ns) / 1000
    p50, p90, p99 = np.percentile(every, [50, 90, 99])
    return (f"{name}: {len(every)} steps, {every.sum() / 1000:,.1f} ms in all; p50 {p50:.1f} / p90 {p90:.1f} / "
            f"p99 {p99:.1f} µs; over 100 µs {(every > 100).sum()}, over 150 µs {(every > 150).sum()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--id", action="append", default=[], dest="ids")
    parser.add_argument("--maskbench", help=f"MaskBench jsonl.gz (default $STRUCTGEN_MASKBENCH or {workloads.DEFAULT_MASKBENCH})")
    args = parser.parse_args()
    records = maskbench.load(workloads.maskbench_path(args.maskbench), args.every, None, args.ids)
    state = maskbench.setup(["structgen"])
    by_rep: list[list[int]] = [[] for _ in range(args.reps)]
    fastest: list[int] = []
    schemas = 0
    for record in records:
        replays = replayed_steps(record, state, args.reps)
        if replays is None:
            continue
        schemas += 1
        for rep, times in enumerate(replays):
            by_rep[rep].extend(times)
        fastest.extend(min(step) for step in zip(*replays))
    print(f"{schemas} schemas")
    for rep, times in enumerate(by_rep):
        print(_summary(f"replay {rep + 1}", times))
    print(_summary("fastest of each step", fastest))


if __name__ == "__main__":
    main()
