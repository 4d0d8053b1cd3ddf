"""Compile time and per-step mask time of structgen, XGrammar and llguidance on the
same grammars, documents and token ids, in one process (docs/benchmarks.md).

Run: .venv/bin/python benchmarks/bench_masks.py [--engines structgen,xgrammar,llguidance]
     [--grammars json,go,java,python] [--vocabs mistral_v3,smollm2,deepseek] [--quick]
     [--budget SECONDS] [--maskbench PATH] [--out benchmarks/results.json] [--markdown benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import workloads
import render
from engines import ENGINES, Engine, engine_version

HERE = Path(__file__).resolve().parent


def main() -> None:
    args = parse_args()
    # structgen warns, per vocabulary, about bytes no single token spells; not news here.
    warnings.filterwarnings("ignore", category=UserWarning, module="structgen")
    started = time.perf_counter()
    chosen = workloads.load_workloads(args.grammars, workloads.maskbench_path(args.maskbench), args.quick)
    runs = []
    for vocab in args.vocabs:
        with tempfile.TemporaryDirectory() as scratch:
            hf_tokenizer = workloads.load_vocab(vocab, Path(scratch))
        token_ids = {w.grammar: [hf_tokenizer.encode(text, add_special_tokens=False) for text in w.documents]
                     for w in chosen}
        for name in args.engines:
            engine = ENGINES[name](hf_tokenizer)  # its view of the vocabulary: not timed
            for workload in chosen:
                row = run_cell(engine, workload, vocab, token_ids[workload.grammar], args.budget)
                runs.append(row)
                print(render.one_line(row), flush=True)
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
        "wall_s": round(time.perf_counter() - started, 1),
        "budget_s": args.budget,
        "machine": machine(),
        "versions": {name: engine_version(name) for name in args.engines},
        "inputs": {w.grammar: {"source": w.source, "documents": len(w.documents)} for w in chosen},
        "runs": runs,
    }
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    args.markdown.write_text(render.markdown(results))
    print(f"wrote {args.out} and {args.markdown} in {results['wall_s']} s")


def parse_args() -> argparse.Namespace:
    def names(choices: list[str]) -> Any:
        def parse(text: str) -> list[str]:
            chosen = text.split(",")
            unknown = sorted(set(chosen) - set(choices))
            if unknown:
                raise argparse.ArgumentTypeError(f"unknown {unknown}; choose from {','.join(choices)}")
            return chosen

        return parse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", type=names(list(ENGINES)), default=list(ENGINES))
    parser.add_argument("--grammars", type=names(workloads.GRAMMARS), default=workloads.GRAMMARS)
    parser.add_argument("--vocabs", type=names(workloads.VOCABS), default=workloads.VOCABS)
    quick = f"{workloads.QUICK_JSON} JSON documents, {workloads.QUICK_PROGRAMS} programs a language"
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--budget", type=float, default=60.0, help="seconds of steps per row (default 60)")
    maskbench = f"MaskBench jsonl.gz (default $STRUCTGEN_MASKBENCH or {workloads.DEFAULT_MASKBENCH})"
    parser.add_argument("--maskbench", help=maskbench)
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    parser.add_argument("--markdown", type=Path, default=HERE / "RESULTS.md")
    return parser.parse_args()


def run_cell(
    engine: Engine, workload: workloads.Workload, vocab: str, documents: list[list[int]], budget_s: float
) -> dict[str, Any]:
    """Compile once, then feed every document token by token from a fresh matcher.

    A token the engine rejects ends that document for it (its matcher cannot go
    on); an error is recorded, never raised, so one engine cannot stop the run.
    Steps stop once ``budget_s`` is spent (XGrammar takes ~0.2 s a step on the
    programming-language grammars): the row is marked ``cut``.
    """
    row: dict[str, Any] = {"engine": engine.name, "grammar": workload.grammar, "vocab": vocab}
    row["documents"] = len(documents)
    samples: list[int] = []
    masked = rejected = end_refused = 0
    # what a latency-minded server does once its model and tokenizer are loaded: the
    # collector never rescans them (docs/benchmarks.md). The grammar is compiled
    # after, as a request's would be: collections during the steps scan its tables.
    gc.collect()
    gc.freeze()
    try:
        started = time.perf_counter()
        compiled = engine.compile(workload.grammar, workload.lark)
        row["compile_s"] = time.perf_counter() - started
        deadline = time.perf_counter() + budget_s
        for ids in documents:
            session = compiled.session()
            for token in ids:
                if time.perf_counter() > deadline:
                    row["cut"] = True
                    break
                elapsed, in_mask, accepted = session.step(token)
                samples.append(elapsed)
                masked += not in_mask
                if not accepted:
                    rejected += 1
                    break
            else:
                end_refused += not session.at_end()
            if row.get("cut"):
                break
        row["memory_bytes"] = compiled.memory_bytes()
    except Exception as exc:  # noqa: BLE001 (recorded in the results instead)
        row["error"] = f"{type(exc).__name__}: {str(exc).strip()}"[:400]
    gc.unfreeze()
    row.update(steps=len(samples), masked=masked, rejected_documents=rejected, end_refused=end_refused)
    row.update(render.percentiles(samples))
    return row


def machine() -> dict[str, Any]:
    # the checkout's commit; the run imports the installed build, which may be older.
    # A copy of the tree without .git names it in STRUCTGEN_COMMIT.
    commit = os.environ.get("STRUCTGEN_COMMIT") or _git("rev-parse", "--short", "HEAD")
    if _git("status", "--porcelain", "--", "structgen"):
        commit += " + uncommitted structgen/ changes"
    return {
        "cpu": workloads.cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "structgen_commit": commit,
    }


def _git(*args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=workloads.REPO, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


if __name__ == "__main__":
    main()
