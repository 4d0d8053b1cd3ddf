"""Seeded fuzzers for a bounded time; every failure saved as a case that replays.

    python fuzz/run.py --seconds 600 [--seed 0] [--only schema,regex,grammar,request]
    python fuzz/run.py --replay fuzz/cases/regex-exception-0-12.json [...]

Four fuzzers (``schema_fuzz.py``, ``regex_fuzz.py``, ``grammar_fuzz.py``,
``request_fuzz.py``), each a ``generate(rng)`` that makes a case's input from
``random.Random(f"{seed}/{fuzzer}/{index}")`` here, and a ``check(state, input)``
run in that fuzzer's worker process (``worker.py``), which is killed when a case
overruns ``CASE_SECONDS``. They take turns by the time they have used (the one
that used least goes next), until ``--seconds`` are over.

A failure (an oracle's ``Failure``, any other exception, a hang, a crash) is
saved as ``fuzz/cases/<fuzzer>-<kind>-<seed>-<index>.json``: the input, the
fuzzer, seed and index, the error and its traceback: the first case of each
signature (fuzzer, kind, exception type, the innermost library frame) only, and
none whose signature a saved case already has (in ``cases``, or in ``open``:
failures not fixed yet, moved there by hand so the tests replay only fixed ones).
A failure whose signature is open is reported as such but fails no run: the
exit status says whether anything *new* failed (or a fixed failure came back).
A hang's signature is the stack the worker was stuck in (faulthandler writes it
just before the kill), a crash's where it died. A compile past its deadline is
no failure but is saved apart, in ``fuzz/slow/``. ``--replay`` runs saved cases
again; ``tests/test_fuzz_cases.py`` replays every case in ``fuzz/cases/``, so a
fixed failure stays fixed. Exit status: 0 when nothing failed.

Run as a script (not ``python -m``): only this folder goes on ``sys.path``, so
``structgen`` is the installed package, as the tests import it.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import random
import re
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from worker import Worker  # noqa: E402

FUZZERS = ("schema", "regex", "grammar", "request")
CASES = HERE / "cases"
OPEN = HERE / "open"
"""Failures found and not fixed yet, moved here from ``cases`` by hand: not replayed
by the tests (they would fail them), still known (a run does not save them again)."""
SLOW = HERE / "slow"
GRACE_SECONDS = 5.0
"""How far past ``--seconds`` the last case may run before it is cut (not a failure)."""
PASSING = ("ok", "slow")
MAX_SLOW_SAVED = 3
"""Slow cases saved per fuzzer and run (they are no failures: examples, not a record)."""
LONG_SECONDS = 20.0
"""A passing case that took longer is named in the output (a worker's start included)."""


def fuzzer(name: str) -> Any:
    return importlib.import_module(f"{name}_fuzz")


def case_input(name: str, seed: int, index: int) -> dict[str, Any]:
    """Case ``index`` of fuzzer ``name`` under ``seed``: the same on every machine."""
    return fuzzer(name).generate(random.Random(f"{seed}/{name}/{index}"))


def signature(name: str, kind: str, payload: dict[str, Any]) -> str:
    """What makes two failures one: the fuzzer, the kind, the exception's type and
    the innermost frame in the library (structgen, schema2grammar, server)."""
    trace = payload.get("traceback") or ""
    if kind not in ("exception", "crash", "hang"):
        return f"{name}:{kind}:{payload.get('key', '')}"
    frames = re.findall(r'File "([^"]+)", line \d+, in (\S+)', trace)
    library = [(path, func) for path, func in frames if re.search(r"/(structgen|schema2grammar|server)/", path)]
    where = ""
    if library:
        path, func = library[-1]
        where = re.sub(r".*/(structgen|schema2grammar|server)/", r"\1/", path) + ":" + func
    error = payload.get("message", "").split(":", 1)[0] if kind == "exception" else ""
    error = re.sub(r".* raised ", "", error)
    return f"{name}:{kind}:{error}:{where}"


def save_case(folder: Path, name: str, seed: int | None, index: int | None, status: str, payload: Any,
              data: dict[str, Any]) -> Path:
    payload = payload if isinstance(payload, dict) else {"kind": status, "message": str(payload)}
    kind = payload.get("kind", status)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{kind}-{seed}-{index}.json"
    case = {
        "fuzzer": name, "seed": seed, "index": index, "kind": kind, "signature": signature(name, kind, payload),
        "error": payload.get("message", ""), "traceback": payload.get("traceback", ""),
        "detail": payload.get("detail", {}), "input": data,
        "found": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "replay": f"python fuzz/run.py --replay fuzz/{folder.name}/{path.name}",
    }
    path.write_text(json.dumps(case, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def known_signatures(folder: Path) -> set[str]:
    found = set()
    for path in sorted(folder.glob("*.json")):
        try:
            found.add(json.loads(path.read_text(encoding="utf-8"))["signature"])
        except (ValueError, KeyError, OSError):
            continue
    return found


def replay(case: dict[str, Any], workers: dict[str, Worker] | None = None) -> tuple[str, Any]:
    """Run a saved case again: ``(status, payload)``; it passes when status is in ``PASSING``."""
    name = case["fuzzer"]
    own = workers is None
    workers = workers if workers is not None else {}
    worker = workers.setdefault(name, Worker(name, [str(HERE)]))
    try:
        return worker.call(case["input"], fuzzer(name).CASE_SECONDS)
    finally:
        if own:
            worker.close()


def run(seconds: float, seed: int, only: list[str], cases: Path, slow: Path) -> int:
    end = time.monotonic() + seconds
    used = {name: 0.0 for name in only}
    counts: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    stats: dict[str, Counter[str]] = {name: Counter() for name in only}
    workers = {name: Worker(name, [str(HERE)]) for name in only}
    still_open = known_signatures(OPEN)
    seen = known_signatures(cases)
    known: Counter[str] = Counter()
    saved: list[Path] = []
    broken: set[str] = set()
    print(f"fuzzing {', '.join(only)} for {seconds:g} s, seed {seed}", flush=True)
    try:
        while True:
            left = end - time.monotonic()
            active = [name for name in only if name not in broken]
            if left <= 0 or not active:
                break
            name = min(active, key=lambda n: used[n])
            index = counts[name]
            started = time.monotonic()
            try:
                data = case_input(name, seed, index)
            except Exception:  # noqa: BLE001 (a bug of the fuzzer itself: said, and the next case tried)
                print(f"  {name} #{index}: generating the case failed:\n{traceback.format_exc()}", flush=True)
                failures[f"{name}:generate"] += 1
                counts[name] += 1
                used[name] += time.monotonic() - started
                continue
            limit = fuzzer(name).CASE_SECONDS
            cut = left + GRACE_SECONDS < limit
            try:
                status, payload = workers[name].call(data, min(limit, left + GRACE_SECONDS))
            except RuntimeError as exc:  # the worker did not start
                print(f"  {name}: {exc}", flush=True)
                broken.add(name)
                failures[f"{name}:setup"] += 1
                continue
            finally:
                took = time.monotonic() - started
                used[name] += took
            if took > LONG_SECONDS and status in PASSING:
                print(f"  {name} #{index}: {status} after {took:.0f} s", flush=True)
            if status == "hang" and cut:
                stats[name]["cut at the end"] += 1
                break
            counts[name] += 1
            if status == "ok":
                stats[name].update(payload)
                continue
            if status == "slow":
                stats[name]["slow"] += 1
                if stats[name]["slow"] <= MAX_SLOW_SAVED:
                    save_case(slow, name, seed, index, status, {"kind": "slow", "message": payload}, data)
                continue
            kind = payload.get("kind", status) if isinstance(payload, dict) else status
            key = signature(name, kind, payload if isinstance(payload, dict) else {"message": str(payload)})
            message = payload.get("message", "") if isinstance(payload, dict) else str(payload)
            if key in still_open:  # known and not fixed yet: said, not a failure of this run
                known[f"{name}:{kind}"] += 1
                print(f"  {name} #{index}: {kind} (open: {key}) {message[:160]}", flush=True)
                continue
            failures[f"{name}:{kind}"] += 1
            if key in seen:  # a fixed failure back, or one this run saved already
                print(f"  {name} #{index}: {kind} (known: {key}) {message[:160]}", flush=True)
                continue
            seen.add(key)
            path = save_case(cases, name, seed, index, status, payload, data)
            saved.append(path)
            print(f"  {name} #{index}: {kind}: {message[:300]}\n    saved {path}", flush=True)
    finally:
        for worker in workers.values():
            worker.close()
    print(f"done in {seconds - (end - time.monotonic()):.0f} s")
    for name in only:
        extra = ", ".join(f"{k} {v}" for k, v in sorted(stats[name].items()))
        print(f"  {name}: {counts[name]} cases in {used[name]:.0f} s ({extra})")
    if known:
        print("known open failures (fuzz/open): " + ", ".join(f"{k} {v}" for k, v in sorted(known.items())))
    if failures:
        print("failures: " + ", ".join(f"{k} {v}" for k, v in sorted(failures.items())))
        print(f"new cases saved: {len(saved)}")
        return 1
    print("no failures")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="wall time of the whole run (default 600)")
    parser.add_argument("--seed", type=int, default=0, help="the run's seed: the same seed, the same cases")
    parser.add_argument("--only", default=",".join(FUZZERS), help="fuzzers to run, comma-separated")
    parser.add_argument("--replay", nargs="+", type=Path, metavar="FILE", help="run saved cases again")
    parser.add_argument("--cases", type=Path, default=CASES, help="where failures are saved")
    parser.add_argument("--slow", type=Path, default=SLOW, help="where slow cases are saved")
    args = parser.parse_args()
    if args.replay:
        workers: dict[str, Worker] = {}
        failed = 0
        try:
            for path in args.replay:
                case = json.loads(path.read_text(encoding="utf-8"))
                status, payload = replay(case, workers)
                message = payload.get("message", "") if isinstance(payload, dict) else payload
                print(f"{path}: {status}{': ' + str(message)[:500] if status not in PASSING else ''}")
                if status == "ok":
                    print(f"  {payload}")
                failed += status not in PASSING
        finally:
            for worker in workers.values():
                worker.close()
        return 1 if failed else 0
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in only if name not in FUZZERS]
    if unknown:
        parser.error(f"unknown fuzzer {unknown}; there are {', '.join(FUZZERS)}")
    return run(args.seconds, args.seed, only, args.cases, args.slow)


if __name__ == "__main__":
    sys.exit(main())
