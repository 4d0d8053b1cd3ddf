"""Conformance of the JSON Schema translation: MaskBench (structgen, XGrammar and
llguidance on the same schemas, in one run) and the official JSON-Schema-Test-Suite
(docs/schema2grammar.md).

Run: .venv/bin/python benchmarks/conformance.py [--suite .cache/jsonschema-4.26.0/json/tests]
     [--maskbench PATH] [--every K] [--limit N] [--id ID ...] [--schema-timeout S]
     [--jobs N] [--engine NAME ... | --no-peers] [--skip-maskbench] [--skip-suite] [--out benchmarks/conformance.json]
     [--markdown benchmarks/CONFORMANCE.md]
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

import conformance_render
import maskbench
import schema_test_suite
import workloads
from bench_masks import machine
from engines import ENGINES, engine_version

HERE = Path(__file__).resolve().parent


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    started = time.perf_counter()
    engine_names = ["structgen"] if args.no_peers else args.engine or list(ENGINES)
    results: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
        "machine": machine(),
        "versions": {name: engine_version(name) for name in engine_names},
        "schema_timeout_s": args.schema_timeout,
        "jobs": args.jobs,
    }
    if not args.skip_maskbench:
        path = workloads.maskbench_path(args.maskbench)
        records = maskbench.load(path, args.every, args.limit, args.id)
        sample = f"{path.name}: {len(records)} schemas"
        chosen = ([f"every {_ordinal(args.every)}"] if args.every > 1 else []) + ([f"at most {args.limit}"] if args.limit else [])
        if chosen and not args.id:
            sample += f" ({', '.join(chosen)})"
        measured = maskbench.measure(records, engine_names, args.schema_timeout, args.jobs)
        if "stopped_after" in measured:
            sample += f", interrupted after the first {measured['stopped_after']}"
        results["maskbench"] = {"sample": sample, "vocab": maskbench.VOCAB, **measured}
    if not args.skip_suite:
        results["test_suite"] = {"source": str(args.suite), **schema_test_suite.measure(args.suite, args.schema_timeout)}
    results["wall_s"] = round(time.perf_counter() - started, 1)
    args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    args.markdown.write_text(conformance_render.markdown(results))
    print(f"wrote {args.out} and {args.markdown} in {results['wall_s']} s")


def _ordinal(n: int) -> str:
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _stop(signum: int, frame: object) -> None:
    """Ctrl-C or a time limit's SIGTERM (``timeout`` sends it twice: to the run, then
    to its group) stops the run once; what is done is then written undisturbed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--maskbench", help=f"MaskBench jsonl.gz (default $STRUCTGEN_MASKBENCH or {workloads.DEFAULT_MASKBENCH})")
    parser.add_argument("--suite", type=Path, default=workloads.REPO / ".cache" / "jsonschema-4.26.0" / "json" / "tests",
                        help="the JSON-Schema-Test-Suite's tests folder (make conformance fetches it)")
    parser.add_argument("--every", type=int, default=1, help="every K-th MaskBench schema only")
    parser.add_argument("--limit", type=int, help="at most N MaskBench schemas (after --every)")
    parser.add_argument("--id", action="append", default=[], help="only this MaskBench schema (repeatable)")
    parser.add_argument("--schema-timeout", type=float, default=60.0,
                        help="seconds per schema and engine (compile and every test) before the worker is killed")
    parser.add_argument("--jobs", type=int, default=1,
                        help="MaskBench schemas at a time, each in its own worker process (at most one per core: "
                             "the times are per process)")
    parser.add_argument("--engine", action="append", choices=list(ENGINES), default=[],
                        help="only this engine on MaskBench (repeatable; default all)")
    parser.add_argument("--no-peers", action="store_true", help="structgen only, no XGrammar or llguidance")
    parser.add_argument("--skip-maskbench", action="store_true")
    parser.add_argument("--skip-suite", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "conformance.json")
    parser.add_argument("--markdown", type=Path, default=HERE / "CONFORMANCE.md")
    args = parser.parse_args()
    if args.every < 1:
        parser.error("--every must be at least 1")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


if __name__ == "__main__":
    main()
