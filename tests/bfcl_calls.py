"""BFCL's function-calling data (the bfcl-eval package, docs/design.md §9) as tools and calls.

Each ground-truth answer lists, per parameter, the values a checker accepts; a
call is built from the first of them ("" and null mean "left out": BFCL's way
of saying an optional parameter may be omitted), nested objects and lists of
objects the same way. The four Python AST categories are used (1,747 calls).
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")

DATA_ERRORS = {
    ("simple_python_307", 0): "/venue",  # true for a string parameter
    ("parallel_multiple_21", 1): "/x",  # "data['sales']" for an array
    ("parallel_multiple_94", 0): "/elements/0",  # fruit names for an array of integers
}
"""Ground-truth calls (entry id, position in its answer) that break their own schema, and where."""


@dataclass(frozen=True)
class Case:
    id: str
    functions: list[dict[str, Any]]  # the entry's tool definitions, as BFCL writes them
    position: int  # in the entry's ground truth
    name: str
    arguments: dict[str, Any]

    @property
    def data_error(self) -> str | None:
        """Where this ground truth breaks its schema (None: it does not)."""
        return DATA_ERRORS.get((self.id, self.position))


def data_dir() -> Path:
    spec = importlib.util.find_spec("bfcl_eval")
    assert spec is not None and spec.submodule_search_locations, "the bfcl-eval package is not installed"
    return Path(list(spec.submodule_search_locations)[0]) / "data"


@cache
def cases() -> tuple[Case, ...]:
    found: list[Case] = []
    for category in CATEGORIES:
        entries = {}
        for line in (data_dir() / f"BFCL_v4_{category}.json").read_text().splitlines():
            entry = json.loads(line)
            entries[entry["id"]] = entry["function"]
        for line in (data_dir() / "possible_answer" / f"BFCL_v4_{category}.json").read_text().splitlines():
            answer = json.loads(line)
            for position, call in enumerate(answer["ground_truth"]):
                ((name, options),) = call.items()
                found.append(Case(answer["id"], entries[answer["id"]], position, name, _pick(options)))
    return tuple(found)


@cache
def functions_by_entry() -> dict[str, list[dict[str, Any]]]:
    return {case.id: case.functions for case in cases()}


def _pick(options: dict[str, list[Any]]) -> dict[str, Any]:
    chosen = {}
    for key, values in options.items():
        given = [v for v in values if v != "" and v is not None]
        if given:
            chosen[key] = _pick_value(given[0])
    return chosen


def _pick_value(value: Any) -> Any:
    if isinstance(value, dict):
        return _pick(value)
    if isinstance(value, list):
        return [_pick_value(v) for v in value]
    return value


def declared_order(schema: Any, value: Any) -> Any:
    """``value`` with every object's keys in its schema's declared order (the
    order the grammar, and generation, use)."""
    if isinstance(value, dict) and isinstance(schema, dict):
        properties = schema.get("properties", {})
        keys = [k for k in properties if k in value] + [k for k in value if k not in properties]
        return {k: declared_order(properties.get(k, {}), value[k]) for k in keys}
    if isinstance(value, list) and isinstance(schema, dict):
        return [declared_order(schema.get("items", {}), v) for v in value]
    return value
