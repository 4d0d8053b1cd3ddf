"""MaskBench as its authors run it (../shared/data/README.md), for structgen and its
peers, one schema at a time in a worker process that is killed on overrun.

Per schema and engine: compile the schema with the engine's own JSON Schema
support; TTFM is the compile plus the first step. Every test instance is written
with ``json.dumps(data, ensure_ascii=False)``, tokenized (DeepSeek 128k, no special
tokens) and fed token by token: mask, then commit, each pair one timed step. A
valid instance must be accepted to the end with EOS allowed there; an invalid one
must be refused at some token or at EOS. A schema passes when it compiled and
every test came out right.
"""

from __future__ import annotations

import gc
import gzip
import json
import queue
import re
import tempfile
import threading
import warnings
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from time import perf_counter_ns
from typing import Any

import structgen
from schema2grammar import APPROXIMATED, DRAFT_SEMANTICS, REJECTED, SchemaError

import declared_order
import workloads
from conformance_worker import CRASH, TIMEOUT, Worker
from engines import ENGINES, Compiled, LLGuidanceCompiled, StructgenCompiled, XGrammarCompiled
from render import percentiles

VOCAB = "deepseek"
KEYWORDS = (
    "$ref $defs definitions $id $anchor $dynamicRef allOf anyOf oneOf not if then else const enum type format "
    "pattern patternProperties propertyNames additionalProperties unevaluatedProperties properties required "
    "minProperties maxProperties dependentRequired dependentSchemas dependencies prefixItems additionalItems "
    "unevaluatedItems items minItems maxItems uniqueItems contains minContains maxContains minLength maxLength "
    "minimum maximum exclusiveMinimum exclusiveMaximum multipleOf"
).split()
_KEYWORD = re.compile(r"(?<![\w$])(" + "|".join(re.escape(k) for k in KEYWORDS) + r")(?!\w)")
_POINTER = re.compile(r"#?(?:/[^\s/:]*)+")
"""A JSON pointer in a message (``#/$defs/a``, ``/properties/b``): its names are places, not the keyword at fault."""


SLOW_STEP_NS = 300_000
"""A step past this counts in its schema's row (``slow_steps``): the step p99 of a
few hundred schemas is set by a few schemas' many slow steps, which the row's
slowest step alone does not show."""


class CompileError(Exception):
    """The engine refused the schema (honest: counts against coverage only)."""


# -- in the worker -----------------------------------------------------------


def setup(engine_names: list[str]) -> dict[str, Any]:
    # structgen warns, per vocabulary, about bytes no single token spells; not news here.
    warnings.filterwarnings("ignore", category=UserWarning)
    with tempfile.TemporaryDirectory() as scratch:
        hf_tokenizer = workloads.load_vocab(VOCAB, Path(scratch))
    return {"tokenizer": hf_tokenizer, "engines": {name: ENGINES[name](hf_tokenizer) for name in engine_names}}


def run(state: dict[str, Any], task: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One engine on one MaskBench record: compile, then every test."""
    name, record = task
    engine = state["engines"][name]
    tokenized = [state["tokenizer"].encode(json.dumps(test["data"], ensure_ascii=False), add_special_tokens=False)
                 for test in record["tests"]]
    gc.collect()
    gc.freeze()  # as bench_masks does: what the process loaded is frozen, the grammar compiled next is not
    try:
        started = perf_counter_ns()
        try:
            compiled, approximated = compile_schema(engine, record["schema"])
        except CompileError as exc:
            return {"status": "compile_error", "error": str(exc)[:300]}
        compile_ns = perf_counter_ns() - started
        result: dict[str, Any] = {"status": "compiled", "approximated": approximated, "steps": [], "tests": []}
        inconsistent = 0
        for number, (test, ids) in enumerate(zip(record["tests"], tokenized)):
            session = compiled.session()
            refused_at = None
            for index, token in enumerate(ids):
                elapsed, in_mask, accepted = session.step(token)
                if number == 0 and index == 0:
                    result["ttfm_ns"] = compile_ns + elapsed  # the first mask is part of TTFM
                else:
                    result["steps"].append(elapsed)
                inconsistent += in_mask != accepted
                if not accepted:
                    refused_at = index
                    break
            if refused_at is None and not session.at_end():
                refused_at = len(ids)  # EOS refused
            outcome = {"valid": test["valid"], "refused_at": refused_at, "tokens": len(ids)}
            if name == "structgen" and test["valid"] and refused_at is not None:
                outcome["out_of_order"] = accepted_in_declared_order(record["schema"], test["data"])
            result["tests"].append(outcome)
        result["inconsistent"] = inconsistent
        result.setdefault("ttfm_ns", compile_ns)
        return result
    finally:
        gc.unfreeze()


def compile_schema(engine: Any, schema: Any) -> tuple[Compiled, list[str]]:
    """The engine's own JSON Schema compile (reusing the bench adapters' sessions), and
    the keywords structgen's report marks approximated or rejected."""
    if engine.name == "structgen":
        try:
            grammar = structgen.Grammar.from_json_schema(schema, **DRAFT_SEMANTICS)
            compiled = structgen.compile(grammar, engine.info)
        except (SchemaError, structgen.GrammarError) as exc:
            raise CompileError(f"{type(exc).__name__}: {exc}") from None
        loose = sorted({e.keyword for e in grammar.report.entries if e.status in (APPROXIMATED, REJECTED)})
        return StructgenCompiled(compiled, engine.info.vocab_size, shared=None), loose
    try:
        if engine.name == "xgrammar":
            # any_whitespace: json.dumps separators; strict_mode off: JSON Schema's own defaults
            done = engine.compiler.compile_json_schema(json.dumps(schema), any_whitespace=True, strict_mode=False)
            return XGrammarCompiled(engine.xgr, done, engine.info.vocab_size), []
        text = engine.llg.LLMatcher.grammar_from_json_schema(schema, defaults={"whitespace_flexible": True})
        matcher = engine.llg.LLMatcher(engine.tokenizer, text, log_level=0)
        if matcher.is_error():
            raise ValueError(matcher.get_error())
        return LLGuidanceCompiled(engine.llg, matcher, engine.tokenizer.vocab_size), []
    except Exception as exc:  # noqa: BLE001 (a peer's refusal, whatever it raises)
        raise CompileError(f"{type(exc).__name__}: {exc}") from None


def accepted_in_declared_order(schema: Any, data: Any) -> bool:
    """Whether a valid instance structgen refused is refused for its key order alone:
    accepted once its keys are rewritten in the order the schema declares them
    (``declared_order``), or as it is by the grammar that takes members in any order
    (``property_order="any"``, which differs from the default in order only).
    MaskBench's instances do not all follow the declared order its README promises,
    which the default enforces."""
    text = json.dumps(data, ensure_ascii=False)
    ordered = json.dumps(declared_order.rewritten(schema, data), ensure_ascii=False)
    try:
        if ordered != text and structgen.Grammar.from_json_schema(schema, **DRAFT_SEMANTICS).accepts(ordered):
            return True
        return structgen.Grammar.from_json_schema(schema, property_order="any", **DRAFT_SEMANTICS).accepts(text)
    except (SchemaError, structgen.GrammarError):
        return False


# -- in the parent -----------------------------------------------------------


def load(path: Path, every: int, limit: int | None, ids: list[str]) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    if ids:
        return [r for r in records if r["id"] in ids]
    return records[::every][:limit]


def error_keyword(message: str) -> str:
    """The keyword an engine's compile error names (the first one it mentions
    outside a JSON pointer: ``/properties/a: no value matches exactly one branch
    of oneOf`` is ``oneOf``'s), or the message's shape when it names none."""
    found = _KEYWORD.search(_POINTER.sub("", message))
    if found:
        return found.group(1)
    shape = re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "…", message.split(": ", 2)[-1])
    return shape[:60]


class Tally:
    """One engine's totals over the schemas run."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.ttfm_ns: list[int] = []
        self.steps_ns: list[int] = []

    def add(self, status: str, result: Any) -> dict[str, Any]:
        """Count one schema's outcome; the row kept for it in the results file."""
        self.counts["schemas"] += 1
        if status in (TIMEOUT, CRASH):
            self.counts["timeouts" if status == TIMEOUT else "crashes"] += 1
            return {"outcome": status, **({"error": str(result)[-300:]} if result else {})}
        if result["status"] == "compile_error":
            self.counts["compile_errors"] += 1
            self.errors[error_keyword(result["error"])] += 1
            return {"outcome": "compile_error", "error": result["error"]}
        self.counts["compiled"] += 1
        self.ttfm_ns.append(result["ttfm_ns"])
        self.steps_ns.extend(result["steps"])
        valid_rejected = [i for i, t in enumerate(result["tests"]) if t["valid"] and t["refused_at"] is not None]
        invalid_accepted = [i for i, t in enumerate(result["tests"]) if not t["valid"] and t["refused_at"] is None]
        self.counts["valid_rejected"] += len(valid_rejected)
        self.counts["valid_rejected_out_of_order"] += sum(1 for i in valid_rejected if result["tests"][i].get("out_of_order"))
        self.counts["invalid_accepted"] += len(invalid_accepted)
        if invalid_accepted and result["approximated"]:
            self.counts["invalid_accepted_reported"] += len(invalid_accepted)
        self.counts["tests"] += len(result["tests"])
        self.counts["mask_accept_disagreements"] += result["inconsistent"]
        passing = not valid_rejected and not invalid_accepted
        self.counts["passing"] += passing
        row: dict[str, Any] = {"outcome": "pass" if passing else "fail", "ttfm_ms": round(result["ttfm_ns"] / 1e6, 3)}
        if result["steps"]:
            row["max_step_ms"] = round(max(result["steps"]) / 1e6, 3)  # where the step distribution's tail comes from
            row["slow_steps"] = sum(1 for elapsed in result["steps"] if elapsed > SLOW_STEP_NS)
            # two builds compared schema by schema (conformance_compare.py): the machine's noise
            # moves a pooled percentile more than it moves most schemas' own medians
            ordered = sorted(result["steps"])
            row["step_p50_us"] = round(ordered[len(ordered) // 2] / 1e3, 3)
            row["step_sum_us"] = round(sum(ordered) / 1e3, 1)
            row["step_count"] = len(ordered)
        if valid_rejected:
            row["valid_rejected"] = {i: result["tests"][i]["refused_at"] for i in valid_rejected}
        if invalid_accepted:
            row["invalid_accepted"] = invalid_accepted
        if result["approximated"]:
            row["approximated"] = result["approximated"]
        return row

    def summary(self) -> dict[str, Any]:
        schemas = self.counts["schemas"]
        summary: dict[str, Any] = dict(sorted(self.counts.items()))
        summary["passing_pct"] = round(100 * self.counts["passing"] / schemas, 2) if schemas else 0.0
        summary["compile_errors_by_keyword"] = dict(self.errors.most_common())
        summary["ttfm_ms"] = ttfm_quantiles(self.ttfm_ns)
        summary["step_us"] = percentiles(self.steps_ns)
        summary["steps"] = len(self.steps_ns)
        return summary


def ttfm_quantiles(samples_ns: list[int]) -> dict[str, float]:
    if not samples_ns:
        return {}
    ordered = sorted(samples_ns)
    n = len(ordered)
    stats = {f"p{round(q * 100)}": ordered[min(n - 1, int(q * n))] / 1e6 for q in (0.5, 0.9, 0.99)}
    stats["max"] = ordered[-1] / 1e6
    return {key: round(value, 3) for key, value in stats.items()}


def measure(records: list[dict[str, Any]], engine_names: list[str], timeout_s: float, jobs: int = 1) -> dict[str, Any]:
    """Every record through every engine; per-engine totals and per-schema rows.

    ``jobs`` schemas run at a time, each in its own worker process (one schema's
    engines one after the other in the same worker), so a many-core machine runs
    the whole file in minutes; the totals are added up in the file's order. A run
    interrupted (Ctrl-C, or SIGTERM from a time limit) keeps the schemas done so
    far, and says where it stopped."""
    tallies = {name: Tally() for name in engine_names}
    idle: queue.SimpleQueue[Worker] = queue.SimpleQueue()
    workers = [Worker(setup, run, engine_names) for _ in range(jobs)]
    for worker in workers:
        idle.put(worker)
    stopping = threading.Event()

    def one_schema(record: dict[str, Any]) -> list[tuple[str, Any]]:
        worker = idle.get()
        try:
            return [worker.call((name, record), timeout_s) for name in engine_names if not stopping.is_set()]
        finally:
            idle.put(worker)

    rows = []
    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(one_schema, record) for record in records]
        for count, (record, future) in enumerate(zip(records, futures), 1):
            answers = _result(future)
            row: dict[str, Any] = {"id": record["id"], "tests": len(record["tests"])}
            for name, (status, result) in zip(engine_names, answers):
                row[name] = tallies[name].add(status, result)
            rows.append(row)
            outcomes = " ".join(f"{name}={row[name]['outcome']}" for name in engine_names)
            print(f"[{count}/{len(records)}] {record['id']}: {outcomes}", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted: keeping the first {len(rows)} of {len(records)} schemas", flush=True)
        stopping.set()
        for worker in workers:  # what a worker was running ends as a crash nobody reads
            worker.kill()
    finally:
        stopping.set()  # the loop is over: nothing more to start
        pool.shutdown(cancel_futures=True)
        for worker in workers:
            worker.close()
    summary: dict[str, Any] = {"engines": {name: tally.summary() for name, tally in tallies.items()}, "schemas": rows}
    if len(rows) < len(records):
        summary["stopped_after"] = len(rows)
    return summary


def _result(future: Future[Any]) -> Any:
    """A future's result, waited for in short naps: a signal another thread took
    only runs its handler (Ctrl-C, SIGTERM) once the main thread wakes up."""
    while True:
        try:
            return future.result(timeout=0.5)
        except TimeoutError:
            continue
