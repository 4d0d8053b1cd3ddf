"""Two conformance runs compared schema by schema (benchmarks/conformance_compare.py),
from the step timings each schema's row records (benchmarks/maskbench.py)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest


@pytest.fixture(scope="module")
def modules(benchmark_module: Callable[[str], ModuleType]) -> tuple[ModuleType, ModuleType]:
    return benchmark_module("conformance_compare"), benchmark_module("maskbench")


def _results(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"maskbench": {"schemas": [{"id": key, "structgen": row} for key, row in rows.items()]}}


def test_a_schema_row_records_its_own_step_median_and_sum(modules) -> None:  # type: ignore[no-untyped-def]
    _, maskbench = modules
    result = {"status": "compiled", "approximated": [], "ttfm_ns": 5_000_000, "inconsistent": 0,
              "steps": [3_000, 1_000, 2_000_000, 4_000], "tests": [{"valid": True, "refused_at": None, "tokens": 5}]}
    row = maskbench.Tally().add("done", result)
    assert row["step_p50_us"] == 4.0 and row["step_sum_us"] == 2008.0 and row["step_count"] == 4
    assert row["max_step_ms"] == 2.0 and row["slow_steps"] == 1


def test_two_runs_are_compared_by_each_schemas_own_median(modules) -> None:  # type: ignore[no-untyped-def]
    compare_module, _ = modules
    old = {f"s{i}": {"step_p50_us": 10.0, "step_sum_us": 1_000.0, "ttfm_ms": 2.0} for i in range(5)}
    new = {f"s{i}": {"step_p50_us": 11.0, "step_sum_us": 1_000.0, "ttfm_ms": 1.0} for i in range(5)}
    new["s4"] = {"step_p50_us": 100.0, "step_sum_us": 50_000.0, "ttfm_ms": 1.0}  # one schema's first visits
    old["gone"] = {"step_p50_us": 1.0, "step_sum_us": 1.0, "ttfm_ms": 1.0}  # timed in one run only
    old["untimed"] = {"ttfm_ms": 1.0}  # a row written before the step timings
    results = compare_module.compare(compare_module.rows(_results(old), "structgen"),
                                     compare_module.rows(_results(new), "structgen"))
    assert results["schemas"] == 5
    assert results["median_p50_ratio"] == pytest.approx(1.1)  # the outlier moves the sum, not the median
    assert results["step_sum_ratio"] == pytest.approx(54_000 / 5_000)
    assert results["ttfm_sum_ratio"] == pytest.approx(0.5)
    assert results["moved"][0] == ("s4", 49_000.0)
    with pytest.raises(ValueError, match="no timed schema"):
        compare_module.compare({}, compare_module.rows(_results(new), "structgen"))
