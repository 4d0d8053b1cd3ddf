"""results.json -> RESULTS.md: one table row per (engine, grammar, vocabulary),
the issue's targets checked, and how the numbers were taken.

Run alone to re-render: .venv/bin/python benchmarks/render.py [results.json] [RESULTS.md]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

QUANTILES = {"p50_us": 0.5, "p99_us": 0.99, "p999_us": 0.999}

# The targets for structgen: (grammar, vocab or None for every vocab) -> limits.
TARGETS: dict[tuple[str, str | None], dict[str, float]] = {
    ("json", "deepseek"): {"p50_us": 15, "p99_us": 80, "max_us": 1000},
    ("go", None): {"p50_us": 2000, "p99_us": 5000, "compile_s": 20},
    ("java", None): {"p50_us": 2000, "p99_us": 5000, "compile_s": 20},
    ("python", "deepseek"): {"p50_us": 1000, "p99_us": 5000, "compile_s": 5},
}

UNITS = {"us": "µs", "s": "s"}

PYTHON_NOTE = """\
structgen's `grammars/python.lark` (lark's Python grammar made Python's own, its strings written as
finite automata) with lark's `PythonIndenter` made part of the grammar: exact masks for
indentation (docs/indentation.md). XGrammar and llguidance have no postlexer for
`_INDENT` / `_DEDENT` (`%declare`) and do not compile it (their errors above).
"""


def percentiles(samples_ns: list[int]) -> dict[str, float]:
    """Nearest-rank quantiles, in µs (empty when no step was timed)."""
    if not samples_ns:
        return {}
    ordered = sorted(samples_ns)
    n = len(ordered)
    stats = {key: ordered[min(n - 1, int(q * n))] / 1e3 for key, q in QUANTILES.items()}
    stats["max_us"] = ordered[-1] / 1e3
    stats["mean_us"] = sum(ordered) / n / 1e3
    return stats


def one_line(row: dict[str, Any]) -> str:
    head = f"{row['engine']:>10} {row['grammar']:>6} {row['vocab']:>10}"
    if "error" in row and not row["steps"]:
        return f"{head}  error: {row['error'].splitlines()[0][:100]}"
    timing = " ".join(f"{key[:-3]} {_num(row.get(key))}" for key in ("p50_us", "p99_us", "max_us"))
    compile_s = _num(row.get("compile_s"), 2)
    return f"{head}  compile {compile_s} s  {row['steps']} steps  {timing} µs  {_disagreement(row)}"


def markdown(results: dict[str, Any]) -> str:
    runs = results["runs"]
    reference = {(r["grammar"], r["vocab"]): r for r in runs if r["engine"] == "structgen"}
    machine = results["machine"]
    lines = [
        "# Mask benchmark results",
        "",
        f"- date: {results['date']}; wall time {results['wall_s']} s",
        f"- command: `{results['command']}`",
        f"- machine: {machine['cpu']}, {machine['cores']} cores; Python {machine['python']}; {machine['platform']}",
        f"- structgen commit: {machine['structgen_commit']}",
        "- versions: " + ", ".join(f"{name} {v}" for name, v in results["versions"].items()),
        "",
        "Inputs:",
        "",
        *(f"- {grammar}: {spec['source']}" for grammar, spec in results["inputs"].items()),
        "",
        "One step = fill the bitmask + accept the token (MaskBench's time between masks). "
        "`structgen ÷` is structgen's time over this engine's (above 1: structgen is slower). "
        "`disagree` = forced tokens the mask left out / documents a token of was rejected / "
        "documents whose end was refused; every document is valid, so anything but 0/0/0 is an engine's error "
        f"(or a difference in grammar dialect). `(cut)`: the {results['budget_s']:g} s budget of steps per row "
        "ran out, so its percentiles cover only the first steps. Memory: see docs/benchmarks.md.",
        "",
        "| engine | grammar | vocab | compile s | steps | p50 µs | p99 µs | p99.9 µs | max µs "
        "| structgen ÷ (p50, p99) | memory MB | disagree |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    errors: dict[tuple[str, str], int] = {}  # (engine, error) -> note number: one note for every vocabulary
    for row in _grouped(runs):
        note = errors.setdefault((row["engine"], row["error"]), len(errors) + 1) if "error" in row else None
        lines.append(_table_row(row, reference.get((row["grammar"], row["vocab"])), note))
    if errors:
        lines += ["", "Errors:", ""]
        lines += [f"{number}. {engine}: {_one_paragraph(error)}" for (engine, error), number in errors.items()]
    lines += ["", "## Targets (structgen)", "", *_targets(runs), "", "## Python", "", PYTHON_NOTE]
    return "\n".join(lines)


def _grouped(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows by grammar, then vocabulary, then engine, each in the order first run:
    the engines compared on one input sit together."""
    order: dict[str, int] = {}
    for row in runs:
        for key in ("grammar", "vocab", "engine"):
            order.setdefault(f"{key}={row[key]}", len(order))
    return sorted(runs, key=lambda row: [order[f"{key}={row[key]}"] for key in ("grammar", "vocab", "engine")])


def _table_row(row: dict[str, Any], reference: dict[str, Any] | None, note: int | None) -> str:
    memory = row.get("memory_bytes")
    cells = [
        row["engine"],
        row["grammar"],
        row["vocab"],
        _num(row.get("compile_s"), 3),
        f"{row['steps']:,}" + (" (cut)" if row.get("cut") else ""),
        *(_num(row.get(key)) for key in ("p50_us", "p99_us", "p999_us", "max_us")),
        _ratios(row, reference),
        "—" if memory is None else f"{memory / 1e6:.1f}",
        _disagreement(row) + (f" (error {note})" if note else ""),
    ]
    return "| " + " | ".join(cells) + " |"


def _ratios(row: dict[str, Any], reference: dict[str, Any] | None) -> str:
    if reference is None or row is reference or not row.get("p50_us") or not reference.get("p50_us"):
        return "—"
    return ", ".join(_ratio(reference[key] / row[key]) for key in ("p50_us", "p99_us"))


def _ratio(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.2g}"


def _disagreement(row: dict[str, Any]) -> str:
    return f"{row['masked']}/{row['rejected_documents']}/{row['end_refused']}"


def _targets(runs: list[dict[str, Any]]) -> list[str]:
    lines = []
    for row in _grouped(runs):
        if row["engine"] != "structgen":
            continue
        limits = TARGETS.get((row["grammar"], row["vocab"])) or TARGETS.get((row["grammar"], None))
        if limits is None:
            continue
        checks = []
        for key, limit in limits.items():
            value = row.get(key)
            verdict = "—" if value is None else ("met" if value <= limit else "missed")
            name, unit = key.rsplit("_", 1)
            checks.append(f"{name} {_num(value, 2 if unit == 's' else 0)} {UNITS[unit]} ≤ {limit:g}: {verdict}")
        lines.append(f"- {row['grammar']} / {row['vocab']}: " + "; ".join(checks))
    return lines or ["- no structgen run covered a target"]


def _num(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())


def main() -> None:
    here = Path(__file__).resolve().parent
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else here / "results.json"
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else here / "RESULTS.md"
    target.write_text(markdown(json.loads(source.read_text())))


if __name__ == "__main__":
    main()
