"""Tool calling, the worst case: BFCL tools per engine, and many tools as one grammar.

Two measurements, peers in the same process on one vocabulary (DeepSeek's 128k by
default), one thread each:

- **per tool**: a seeded sample of BFCL's function-calling records (``bfcl_eval``,
  docs/design.md §9); each engine compiles a tool's parameters as JSON Schema
  (structgen: ``Grammar.from_json_schema`` + ``compile``; XGrammar:
  ``compile_json_schema``; llguidance: ``grammar_from_json_schema`` + a matcher)
  and follows the ground-truth call's arguments, written compactly in the
  schema's declared order, token by token. A step is a mask plus its token's
  accept. Compile p50, step p50 / p99 / max, and the calls an engine refused.
- **many tools** (structgen): the first ``--tools`` distinct BFCL tools as one
  call grammar in the server's way (``structgen.server.grammars.calls_constraint``,
  Hermes envelope), from nothing to the first mask; then a request with the same
  tool set again; then the set with one tool changed.

Writes ``benchmarks/tools_results.json`` and ``benchmarks/TOOLS.md``:
``python benchmarks/bench_tools.py [--pairs 200] [--tools 128] [--vocab deepseek] [--engines ...]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import workloads  # noqa: E402  (puts tests/ on the path: bfcl_calls)
import bfcl_calls  # noqa: E402
from engines import ENGINES, StructgenCompiled, engine_version  # noqa: E402

import structgen  # noqa: E402
from structgen.tool_calls import ToolSet  # noqa: E402

SEED = 20261


def bfcl_pairs() -> list[tuple[dict[str, Any], dict[str, Any], str]]:
    """Every (tool parameters as JSON Schema, ground-truth arguments in the
    schema's declared order, id) of BFCL's four Python AST categories, as the
    test suite reads them (``tests/bfcl_calls.py``)."""
    pairs = []
    for case in bfcl_calls.cases():
        tools = ToolSet.read(case.functions).tools
        if case.name in tools:
            schema = tools[case.name].schema
            pairs.append((schema, bfcl_calls.declared_order(schema, case.arguments), f"{case.id}:{case.name}"))
    return pairs


def per_tool(engine: Any, hf: Any, pairs: list[tuple[dict[str, Any], dict[str, Any], str]]) -> dict[str, Any]:
    """Each pair compiled (timed) and its arguments followed token by token
    (``engines``' sessions: a step is a mask plus the token's accept)."""
    compiles, steps, refused, errors = [], [], [], []
    walking = [0, 0, 0, 0]  # structgen: compiled grammars by the walks a step may still make (StepBound.walks: 0, 1, 3)
    for schema, arguments, ident in pairs:
        text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
        tokens = hf.encode(text, add_special_tokens=False)
        gc.collect()
        started = time.perf_counter_ns()
        try:
            compiled = engine.compile_schema(schema)
        except Exception as exc:  # a peer's unsupported keyword: counted, not fatal
            errors.append(f"{ident}: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        compiles.append(time.perf_counter_ns() - started)
        if isinstance(compiled, StructgenCompiled):
            walking[compiled.compiled.step_bound().walks] += 1
        session = compiled.session()
        accepted = True
        for token in tokens:
            elapsed, _, accepted = session.step(token)
            steps.append(elapsed)
            if not accepted:
                break
        if not (accepted and session.at_end()):
            refused.append(ident)
    return {"pairs": len(pairs), "compile_errors": len(errors), "refused": len(refused), "may_walk": walking,
            "refused_ids": refused[:20], "errors": errors[:20], "steps": len(steps),
            "compile_ms": _quantiles(compiles, 1e6, (50, 99, 100)), "step_us": _quantiles(steps, 1e3, (50, 99, 99.9, 100))}


def many_tools(hf: Any, count: int) -> dict[str, Any]:
    """The server's calls grammar for ``count`` distinct BFCL tools: to the first
    mask, the same set again, and the set with one tool changed."""
    from structgen.server import grammars
    from structgen.server.tool_syntax import HERMES

    data = workloads.package_dir("bfcl_eval") / "data"
    seen: dict[str, Any] = {}
    for category in ("multiple", "parallel_multiple", "simple_python", "parallel"):
        for line in (data / f"BFCL_v4_{category}.json").read_text().splitlines():
            for tool in ToolSet.read(json.loads(line)["function"]).tools.values():
                seen.setdefault(tool.name, tool)
    tools = list(seen.values())
    random.Random(SEED).shuffle(tools)
    chosen, spare = tools[:count], tools[count]
    info = structgen.TokenizerInfo.from_huggingface(hf)
    structgen.compile(structgen.Grammar.from_lark('start: "a"'), info)
    bitmask = structgen.allocate_token_bitmask(1, info.vocab_size)

    def first_mask(tool_set: list[Any]) -> float:
        gc.collect()
        started = time.perf_counter_ns()
        constraint = grammars.calls_constraint(HERMES, tool_set, parallel=True)
        matcher = structgen.Matcher(structgen.compile(constraint.grammar, info))  # as the server compiles it
        matcher.fill_next_token_bitmask(bitmask)
        return (time.perf_counter_ns() - started) / 1e6

    first = first_mask(chosen)
    again = first_mask(list(chosen))
    changed = first_mask(chosen[:-1] + [spare])
    return {"tools": count, "first_mask_ms": round(first, 1), "same_set_again_ms": round(again, 2),
            "one_tool_changed_ms": round(changed, 1)}


def _quantiles(values: list[int], unit: float, points: tuple[float, ...]) -> dict[str, float | None]:
    if not values:
        return {f"p{p:g}": None for p in points}
    array = np.array(values, dtype=np.float64) / unit
    return {("max" if p == 100 else f"p{p:g}"): round(float(np.percentile(array, p)), 3) for p in points}


def render(results: dict[str, Any]) -> str:
    lines = ["# Tool calling: BFCL tools per engine, many tools as one grammar", "",
             f"- date: {results['date']}; commit {results['commit']}; {results['machine']}",
             f"- command: `{results['command']}`",
             f"- vocabulary: {results['vocab']}; {results['pairs']} (tool, call) pairs of BFCL {', '.join(bfcl_calls.CATEGORIES)}, "
             f"seed {SEED}; arguments compact, in declared order", "",
             "| engine | compile p50 / p99 / max (ms) | step p50 / p99 / p99.9 / max (µs) | steps | refused | compile errors |",
             "| --- | --- | --- | --- | --- | --- |"]
    walking = results["per_tool"].get("structgen", {}).get("may_walk")
    refused = {name: row["refused_ids"] for name, row in results["per_tool"].items() if row["refused_ids"]}
    for name, row in results["per_tool"].items():
        c, s = row["compile_ms"], row["step_us"]
        lines.append(f"| {name} ({row['version']}) | {c['p50']} / {c['p99']} / {c['max']} | "
                     f"{s['p50']} / {s['p99']} / {s['p99.9']} / {s['max']} | {row['steps']} | {row['refused']} | "
                     f"{row['compile_errors']} |")
    if refused:
        lines += ["", "Calls refused (a ground truth that breaks its own schema is refused by every engine): "
                  + "; ".join(f"{name}: {', '.join(ids)}" for name, ids in refused.items()) + "."]
    if walking is not None:
        lines += ["", f"structgen grammars by the vocabulary walks a step may still make after compile "
                  f"(`compiled.step_bound().walks`): none {walking[0]}, one (deep states a step builds alone) "
                  f"{walking[1]}, three {walking[3]}, of {results['pairs']}."]
    many = results.get("many_tools")
    if many:
        lines += ["", f"{many['tools']} BFCL tools as one call grammar (structgen, the server's Hermes calls grammar): "
                  f"first mask {many['first_mask_ms']} ms; the same tool set again {many['same_set_again_ms']} ms; "
                  f"one tool changed {many['one_tool_changed_ms']} ms."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--tools", type=int, default=128)
    parser.add_argument("--vocab", default="deepseek", choices=workloads.VOCABS)
    parser.add_argument("--engines", nargs="+", default=list(ENGINES), choices=list(ENGINES))
    parser.add_argument("--out", type=Path, default=HERE / "tools_results.json")
    parser.add_argument("--markdown", type=Path, default=HERE / "TOOLS.md")
    args = parser.parse_args()
    pairs = bfcl_pairs()
    sample = random.Random(SEED).sample(pairs, min(args.pairs, len(pairs)))
    with tempfile.TemporaryDirectory() as scratch:
        hf = workloads.load_vocab(args.vocab, Path(scratch))
        results: dict[str, Any] = {
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                     cwd=HERE).stdout.strip(),
            "machine": f"{workloads.cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "command": "python benchmarks/bench_tools.py " + " ".join(sys.argv[1:]),
            "vocab": args.vocab, "pairs": len(sample), "per_tool": {}}
        for name in args.engines:
            engine = ENGINES[name](hf)
            row = per_tool(engine, hf, sample)
            row["version"] = engine_version(name)
            results["per_tool"][name] = row
            print(name, json.dumps({k: row[k] for k in ("compile_ms", "step_us", "refused", "compile_errors")}), flush=True)
        if args.tools:
            results["many_tools"] = many_tools(hf, args.tools)
            print(json.dumps(results["many_tools"]), flush=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    args.markdown.write_text(render(results))


if __name__ == "__main__":
    main()
