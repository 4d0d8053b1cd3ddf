"""The official JSON-Schema-Test-Suite (from jsonschema's sdist) against the grammars.

Per keyword (the suite's file name): does the grammar accept each instance exactly
when the suite says it is valid? Instances are written in the schema's declared
property order (what the grammar enforces, docs/design.md §6) with ``json.dumps``. A false
accept is "reported" when the translation's report marks something approximated
or rejected, and "keyword marked" when that includes the file's own keyword.
Schemas that need another document (``http://localhost:1234/...``) are not
applicable: the translator follows references inside the document only.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import structgen
from schema2grammar import APPROXIMATED, DRAFT_SEMANTICS, REJECTED, SchemaError
from schema2grammar.translate import NOWHERE, follow_pointer

from conformance_worker import Worker

DRAFTS = {"draft2020-12": "https://json-schema.org/draft/2020-12/schema", "draft7": "http://json-schema.org/draft-07/schema#"}
REMOTE = "http://localhost:1234"
MAX_REF_HOPS = 64
FILE_KEYWORDS = {
    "if-then-else": {"if", "then", "else"},
    "ref": {"$ref"},
    "refRemote": {"$ref"},
    "infinite-loop-detection": {"$ref"},
    "dynamicRef": {"$dynamicRef", "$dynamicAnchor"},
    "defs": {"$defs"},
    "anchor": {"$anchor"},
    "vocabulary": {"$vocabulary"},
    "content": {"contentMediaType", "contentEncoding", "contentSchema"},
}


def load(suite: Path, draft: str) -> list[tuple[str, dict[str, Any]]]:
    """(keyword, group) for every group of the draft's required tests (not ``optional/``)."""
    return [(path.stem, group) for path in sorted((suite / draft).glob("*.json"))
            for group in json.loads(path.read_text(encoding="utf-8"))]


# -- in the worker -----------------------------------------------------------


def setup() -> None:
    return None


def run(state: None, task: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One group: compile its schema, then whether each instance is accepted."""
    draft, group = task
    schema = group["schema"]
    if isinstance(schema, dict) and "$schema" not in schema:
        schema = {"$schema": DRAFTS[draft], **schema}  # the suite's dialect, said aloud
    try:
        grammar = structgen.Grammar.from_json_schema(schema, **DRAFT_SEMANTICS)
    except (SchemaError, structgen.GrammarError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}
    loose = sorted({e.keyword for e in grammar.report.entries if e.status in (APPROXIMATED, REJECTED)})
    accepted = [grammar.accepts(json.dumps(declared_order(test["data"], schema, schema), ensure_ascii=False))
                for test in group["tests"]]
    return {"accepted": accepted, "loose": loose}


def declared_order(value: Any, schema: Any, root: Any) -> Any:
    """``value`` with every object's keys in the order the translator declares them
    (a ``$ref`` target's, ``properties``, then ``allOf`` parts' and the matching
    ``anyOf``/``oneOf`` branch's; undeclared keys after, as they came), recursively
    through properties and items; a ``const`` object as the schema spells it."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return value
    constant = schema.get("const")
    if isinstance(value, dict) and isinstance(constant, dict) and _same(constant, value):
        return constant  # a const object is written as the schema writes it
    if isinstance(value, dict):
        declared = _declared(schema, root, value)
        keys = [key for key in declared if key in value] + [key for key in value if key not in declared]
        return {key: declared_order(value[key], declared.get(key, schema.get("additionalProperties")), root) for key in keys}
    if isinstance(value, list):
        items = schema.get("items")
        prefix = schema.get("prefixItems") or (items if isinstance(items, list) else [])
        rest = schema.get("additionalItems") if isinstance(items, list) else items
        return [declared_order(item, prefix[i] if i < len(prefix) else rest, root) for i, item in enumerate(value)]
    return value


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``True`` is not ``1`` there, as it is in Python)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _declared(schema: dict[str, Any], root: Any, value: dict[str, Any]) -> dict[str, Any]:
    """Declared property names in the translator's order, with their schemas."""
    order: dict[str, Any] = {}
    if "$ref" in schema and len(schema) > 1:  # the target first, as the translator merges them
        order.update(_declared_of(_resolve({"$ref": schema["$ref"]}, root), root, value))
    order.update({k: v for k, v in schema.get("properties", {}).items() if k not in order})
    for part in schema.get("allOf", []):
        for key, sub in _declared_of(_resolve(part, root), root, value).items():
            order.setdefault(key, sub)
    for keyword in ("anyOf", "oneOf"):
        for branch in schema.get(keyword, []):
            names = _declared_of(_resolve(branch, root), root, value)
            if set(value) <= set(names) | set(order):  # the first branch that names every key
                for key, sub in names.items():
                    order.setdefault(key, sub)
                break
    return order


def _declared_of(schema: Any, root: Any, value: dict[str, Any]) -> dict[str, Any]:
    return _declared(schema, root, value) if isinstance(schema, dict) else {}


def _resolve(schema: Any, root: Any) -> Any:
    """Follow a chain of ``$ref``s inside the document (a bare one only)."""
    for _ in range(MAX_REF_HOPS):
        if not (isinstance(schema, dict) and set(schema) == {"$ref"} and str(schema["$ref"]).startswith("#")):
            return schema
        found = follow_pointer(root, schema["$ref"])
        if found is NOWHERE:
            return {}
        schema = found
    return schema


# -- in the parent -----------------------------------------------------------


def measure(suite: Path, timeout_s: float) -> dict[str, Any]:
    """Per draft and keyword: how the grammars' verdicts compare with the suite's."""
    results: dict[str, Any] = {}
    worker = Worker(setup, run)
    try:
        for draft in DRAFTS:
            per_keyword: dict[str, Counter[str]] = {}
            details: list[dict[str, Any]] = []
            for keyword, group in load(suite, draft):
                counts = per_keyword.setdefault(keyword, Counter())
                tally_group(draft, keyword, group, worker, timeout_s, counts, details)
            total: Counter[str] = Counter()
            for counts in per_keyword.values():
                total.update(counts)
            results[draft] = {"total": dict(total), "keywords": {k: dict(c) for k, c in per_keyword.items()},
                              "disagreements": details}
            print(f"{draft}: {dict(total)}", flush=True)
    finally:
        worker.close()
    return results


def tally_group(draft: str, keyword: str, group: dict[str, Any], worker: Worker, timeout_s: float,
                counts: Counter[str], details: list[dict[str, Any]]) -> None:
    tests = group["tests"]
    counts["tests"] += len(tests)
    if REMOTE in json.dumps(group["schema"]):
        counts["not_applicable"] += len(tests)
        return
    status, result = worker.call((draft, group), timeout_s)
    if status != "ok":
        counts[status] += len(tests)
        details.append({"keyword": keyword, "group": group["description"], "outcome": status, "error": result})
        return
    if "error" in result:
        counts["compile_error"] += len(tests)
        details.append({"keyword": keyword, "group": group["description"], "outcome": "compile_error",
                        "error": result["error"]})
        return
    marked = FILE_KEYWORDS.get(keyword, {keyword}) & set(result["loose"])
    for test, accepted in zip(tests, result["accepted"]):
        if accepted == test["valid"]:
            counts["agree"] += 1
            continue
        outcome = "false_reject" if test["valid"] else "false_accept"
        counts[outcome] += 1
        if outcome == "false_accept":
            counts["false_accept_reported" if result["loose"] else "false_accept_unreported"] += 1
            counts["false_accept_keyword_marked"] += bool(marked)
        details.append({"keyword": keyword, "group": group["description"], "test": test["description"],
                        "outcome": outcome, "loose": result["loose"]})
