"""What a full collection costs a process for the grammars it holds: the pause
CPython's cyclic collector adds to whichever step triggers a full collection.

One process, one vocabulary (DeepSeek's 128k by default): what is loaded is
frozen (``gc.freeze()``, as ``structgen serve`` does after loading), then every
``--every``-th MaskBench schema (up to ``--schemas``) and ``grammars/python.lark``
are compiled and each gives one mask. Reported: the objects the collector tracks
and a full collection's time (``gc.collect()``, best of five), with the grammars
held and after they are dropped; the difference is the grammars' share.

Writes ``benchmarks/collector_results.json`` and ``benchmarks/COLLECTOR.md``:
``python benchmarks/bench_collector.py [--vocab deepseek] [--every 200] [--schemas 40]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402  (puts tests/ on the path)
from bench_masks import machine  # noqa: E402

import structgen  # noqa: E402

ROUNDS = 5


def full_collection() -> tuple[int, float]:
    """Tracked objects, and the best of ``ROUNDS`` full collections in ms."""
    gc.collect()
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        gc.collect()
        best = min(best, time.perf_counter() - start)
    return len(gc.get_objects()), best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vocab", default="deepseek", choices=workloads.VOCABS)
    parser.add_argument("--every", type=int, default=200, help="every n-th MaskBench schema")
    parser.add_argument("--schemas", type=int, default=40, help="at most this many schemas")
    parser.add_argument("--maskbench", help=f"MaskBench jsonl.gz (default {workloads.DEFAULT_MASKBENCH})")
    parser.add_argument("--out", default=str(HERE / "collector_results.json"))
    parser.add_argument("--markdown", default=str(HERE / "COLLECTOR.md"))
    args = parser.parse_args()
    maskbench = workloads.maskbench_path(args.maskbench)
    if not maskbench.exists():
        sys.exit(f"bench_collector: no MaskBench file at {maskbench} (--maskbench or $STRUCTGEN_MASKBENCH)")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        info = structgen.TokenizerInfo.from_huggingface(workloads.load_vocab(args.vocab, Path(scratch)))
    records = list(workloads.jsonl(maskbench))[:: args.every]
    gc.collect()
    gc.freeze()
    before = full_collection()
    held: list[Any] = []
    refused = 0
    for record in records:
        if len(held) >= args.schemas:
            break
        schema = json.loads(record["schema"]) if isinstance(record["schema"], str) else record["schema"]
        try:
            held.append(structgen.compile(structgen.Grammar.from_json_schema(schema), info))
        except (structgen.SchemaError, structgen.GrammarError, ValueError):
            refused += 1  # a schema the project refuses (or one past a limit): not part of the count
            continue
    held.append(structgen.compile(structgen.Grammar.builtin("python"), info))
    for compiled in held:
        structgen.Matcher(compiled).allowed_tokens()
    holding = full_collection()
    count = len(held)
    del held, compiled
    dropped = full_collection()
    gc.unfreeze()
    result = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "wall_s": round(time.perf_counter() - started, 1),
        "command": " ".join(["python benchmarks/bench_collector.py"] + sys.argv[1:]),
        "machine": machine(),
        "vocab": args.vocab,
        "grammars": count,
        "schemas_refused": refused,
        "tracked_loaded": before[0],
        "tracked_with_grammars": holding[0],
        "tracked_after_drop": dropped[0],
        "full_ms_loaded": round(before[1], 2),
        "full_ms_with_grammars": round(holding[1], 2),
        "full_ms_after_drop": round(dropped[1], 2),
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    Path(args.markdown).write_text(render(result))
    print(render(result))


def render(result: dict[str, Any]) -> str:
    grammars = result["grammars"]
    return "\n".join([
        "# Full collections and the grammars a process holds",
        "",
        f"- date: {result['date']}; wall time {result['wall_s']} s",
        f"- command: `{result['command']}`",
        f"- machine: {result['machine']['cpu']}, {result['machine']['cores']} cores; "
        f"Python {result['machine']['python']}; structgen commit {result['machine']['structgen_commit']}",
        f"- {grammars} grammars ({grammars - 1} MaskBench schemas and `grammars/python.lark`) at {result['vocab']}, "
        f"one mask each; what was loaded before them frozen (`gc.freeze()`, as `structgen serve` does)",
        "",
        "| | objects the collector tracks | full collection (ms, best of 5) |",
        "|---|---:|---:|",
        f"| holding the grammars | {result['tracked_with_grammars']:,} | {result['full_ms_with_grammars']} |",
        f"| after dropping them | {result['tracked_after_drop']:,} | {result['full_ms_after_drop']} |",
        f"| the grammars' share | {result['tracked_with_grammars'] - result['tracked_after_drop']:,} | "
        f"{round(result['full_ms_with_grammars'] - result['full_ms_after_drop'], 2)} |",
        "",
    ])


if __name__ == "__main__":
    main()
