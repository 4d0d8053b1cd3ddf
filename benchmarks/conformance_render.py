"""conformance.json -> CONFORMANCE.md: the MaskBench table (with the peers' ratios),
compile errors by keyword, the failing schemas, and the test suite per keyword.

Run alone to re-render: .venv/bin/python benchmarks/conformance_render.py [conformance.json] [CONFORMANCE.md]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SUITE_COLUMNS = ["tests", "agree", "false_reject", "false_accept", "false_accept_reported", "false_accept_unreported",
                 "false_accept_keyword_marked", "compile_error", "not_applicable", "timeout", "crash"]
LISTED = 40  # failing schemas / disagreements listed by name
SLOWEST = 5  # schemas listed by their TTFM and by their slowest step


def markdown(results: dict[str, Any]) -> str:
    machine = results["machine"]
    lines = [
        "# Conformance: MaskBench and the JSON-Schema-Test-Suite",
        "",
        f"- date: {results['date']}; wall time {results['wall_s']} s",
        f"- command: `{results['command']}`",
        f"- machine: {machine['cpu']}, {machine['cores']} cores; Python {machine['python']}",
        f"- structgen commit: {machine['structgen_commit']}",
        "- versions: " + ", ".join(f"{name} {v}" for name, v in results["versions"].items()),
        f"- time limit per schema and engine: {results['schema_timeout_s']} s (the worker process is killed)",
        f"- schemas at a time: {results.get('jobs', 1)}, each in its own worker process",
        "",
    ]
    if "maskbench" in results:
        lines += _maskbench(results["maskbench"])
    if "test_suite" in results:
        lines += _suite(results["test_suite"])
    return "\n".join(lines) + "\n"


def _maskbench(bench: dict[str, Any]) -> list[str]:
    engines = bench["engines"]
    lines = [
        "## MaskBench",
        "",
        f"{bench['sample']}; {bench['vocab']} tokenizer; each engine compiles the schema with its own JSON Schema support.",
        "",
        "| engine | passing | compile errors | valid rejected | invalid accepted | crashes | timeouts "
        "| TTFM p50 / p90 / p99 / max (ms) | step p50 / p99 / p99.9 / max (µs) | steps |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, e in engines.items():
        ttfm = " / ".join(_num(e["ttfm_ms"].get(k)) for k in ("p50", "p90", "p99", "max"))
        step = " / ".join(_num(e["step_us"].get(k)) for k in ("p50_us", "p99_us", "p999_us", "max_us"))
        rejected = f"{e.get('valid_rejected', 0)}"
        if e.get("valid_rejected_out_of_order"):
            rejected += f" ({e['valid_rejected_out_of_order']} accepted once written in declared property order)"
        invalid = f"{e.get('invalid_accepted', 0)}"
        if e.get("invalid_accepted_reported"):
            invalid += f" ({e['invalid_accepted_reported']} where the report says approximated)"
        lines.append(
            f"| {name} | {e.get('passing', 0)} of {e['schemas']} ({e['passing_pct']}%) | {e.get('compile_errors', 0)} "
            f"| {rejected} | {invalid} | {e.get('crashes', 0)} | {e.get('timeouts', 0)} "
            f"| {ttfm} | {step} | {e['steps']} |"
        )
    ours = engines.get("structgen", {}).get("step_us", {})
    for name, e in engines.items():
        if name != "structgen" and ours and e["step_us"]:
            lines.append("")
            lines.append(f"structgen / {name} time per step: p50 {_ratio(ours, e['step_us'], 'p50_us')}, "
                         f"p99 {_ratio(ours, e['step_us'], 'p99_us')}.")
    lines += ["", "Compile errors by keyword (the first keyword the message names):", ""]
    for name, e in engines.items():
        errors = ", ".join(f"{k} {v}" for k, v in e["compile_errors_by_keyword"].items()) or "none"
        lines.append(f"- {name}: {errors}")
    if "structgen" in engines:
        failing = [row for row in bench["schemas"] if row["structgen"]["outcome"] not in ("pass", "compile_error")]
        lines += ["", f"structgen's failing schemas ({len(failing)}; valid rejected: test → token index refused):", ""]
        for row in failing[:LISTED]:
            outcome = row["structgen"]
            detail = {k: outcome[k] for k in ("valid_rejected", "invalid_accepted", "approximated", "error") if k in outcome}
            lines.append(f"- `{row['id']}` {outcome['outcome']}: {json.dumps(detail, ensure_ascii=False)[:300]}")
        if len(failing) > LISTED:
            lines.append(f"- … {len(failing) - LISTED} more in conformance.json")
        lines += ["", "structgen's slowest schemas (the tails of the TTFM and step distributions):", ""]
        for key, what, unit in (("ttfm_ms", "TTFM", " ms"), ("max_step_ms", "slowest step", " ms"),
                                ("slow_steps", "most steps over 0.3 ms", "")):
            timed = sorted((row for row in bench["schemas"] if row["structgen"].get(key)),
                           key=lambda row: -row["structgen"][key])[:SLOWEST]
            if timed:  # results files before session 24 have no slow_steps
                lines.append(f"- {what}: " + ", ".join(f"`{row['id']}` {_num(row['structgen'][key])}{unit}"
                                                       for row in timed))
    return lines + [""]


def _suite(suite: dict[str, Any]) -> list[str]:
    lines = [
        "## JSON-Schema-Test-Suite",
        "",
        f"{suite['source']}; every instance written in the schema's declared property order. "
        "A false accept is *reported* when the report marks something approximated or rejected, "
        "*keyword marked* when that includes the file's own keyword.",
        "",
    ]
    for draft in (key for key in suite if key != "source"):
        result = suite[draft]
        lines += [f"### {draft}", "", "| keyword | " + " | ".join(c.replace("_", " ") for c in SUITE_COLUMNS) + " |",
                  "| --- " * (len(SUITE_COLUMNS) + 1) + "|"]
        for keyword, counts in [*result["keywords"].items(), ("**total**", result["total"])]:
            lines.append(f"| {keyword} | " + " | ".join(str(counts.get(c, 0)) for c in SUITE_COLUMNS) + " |")
        worst = [d for d in result["disagreements"] if d["outcome"] == "false_reject" or
                 (d["outcome"] == "false_accept" and not d["loose"]) or d["outcome"] in ("timeout", "crash")]
        lines += ["", f"False rejects, unreported false accepts, timeouts and crashes ({len(worst)}):", ""]
        for d in worst[:LISTED]:
            lines.append(f"- {d['outcome']}: {d['keyword']} / {d['group']}" + (f" / {d['test']}" if "test" in d else ""))
        if len(worst) > LISTED:
            lines.append(f"- … {len(worst) - LISTED} more in conformance.json")
        lines.append("")
    return lines


def _ratio(ours: dict[str, float], theirs: dict[str, float], key: str) -> str:
    return f"{ours[key] / theirs[key]:.2f}×" if theirs.get(key) else "—"


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "conformance.json"
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else source.with_name("CONFORMANCE.md")
    target.write_text(markdown(json.loads(source.read_text())))
