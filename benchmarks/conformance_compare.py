"""Two conformance.json files, schema by schema: did the steps get slower?

On a noisy machine a pooled percentile moves with whatever else ran, and one
schema's first visits can carry a whole run's sum. So two builds are compared
schema by schema (the median over schemas of each one's step-p50 ratio), beside
the sums of steps and of times to first mask, and the schemas that moved most.
Run the two builds at the same time, one core each, then again with the cores
swapped (docs/benchmarks.md).

    .venv/bin/python benchmarks/conformance_compare.py OLD.json NEW.json [--engine structgen] [--top 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

TIMED = ("step_p50_us", "step_sum_us", "ttfm_ms")


def rows(results: dict[str, Any], engine: str) -> dict[str, dict[str, Any]]:
    """Per schema id, the engine's row, for rows with step timings (written since
    ``maskbench.py`` records ``step_p50_us``)."""
    found: dict[str, dict[str, Any]] = {}
    for schema in results["maskbench"]["schemas"]:
        row = schema.get(engine)
        if row and all(key in row for key in TIMED):
            found[schema["id"]] = row
    return found


def compare(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The schemas both runs timed: how many, the median of new over old step p50,
    the ratio of the steps' sums and of the TTFM sums, and per schema the change of
    its steps' sum (µs), largest increase first."""
    shared = sorted(set(old) & set(new))
    if not shared:
        raise ValueError("the two runs have no timed schema in common")
    ratios = [new[i]["step_p50_us"] / old[i]["step_p50_us"] for i in shared if old[i]["step_p50_us"] > 0]
    old_sum = sum(old[i]["step_sum_us"] for i in shared)
    new_sum = sum(new[i]["step_sum_us"] for i in shared)
    moved = sorted(shared, key=lambda i: new[i]["step_sum_us"] - old[i]["step_sum_us"], reverse=True)
    return {
        "schemas": len(shared),
        "median_p50_ratio": statistics.median(ratios),
        "step_sum_ratio": new_sum / old_sum if old_sum else float("nan"),
        "ttfm_sum_ratio": sum(new[i]["ttfm_ms"] for i in shared) / sum(old[i]["ttfm_ms"] for i in shared),
        "moved": [(i, new[i]["step_sum_us"] - old[i]["step_sum_us"]) for i in moved],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--engine", default="structgen")
    parser.add_argument("--top", type=int, default=10, help="schemas listed by the change of their steps' sum")
    args = parser.parse_args(argv)
    old = rows(json.loads(args.old.read_text()), args.engine)
    new = rows(json.loads(args.new.read_text()), args.engine)
    result = compare(old, new)
    print(f"{result['schemas']} schemas timed in both; new over old:")
    print(f"  median per-schema step p50 ratio {result['median_p50_ratio']:.3f}")
    print(f"  steps' sum ratio {result['step_sum_ratio']:.3f}; TTFM sum ratio {result['ttfm_sum_ratio']:.3f}")
    print("largest changes of a schema's steps' sum (µs), then the largest decreases:")
    for schema_id, change in result["moved"][: args.top]:
        print(f"  {change:+12.0f}  {schema_id}")
    for schema_id, change in result["moved"][-args.top:][::-1]:
        print(f"  {change:+12.0f}  {schema_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
