"""No import cycle anywhere in the project, and a few edges that must never exist.

The graph counts every import: at a module's top, inside functions and under
``TYPE_CHECKING`` alike, since an import moved into a function to dodge a cycle is
still a cycle in the design. Importing ``a.b.c`` is an edge to ``a.b.c`` only (not to
the packages above it), as the packages' ``__init__`` files only re-export.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("structgen", "schema2grammar")
MAX_LINES = 800
"""A module's size beyond which it holds more than one concept (a few are allowed a
little over while they are split; see OVERSIZED)."""

OVERSIZED: set[str] = set()
"""Modules still over MAX_LINES, each to be split by concept; the list only shrinks."""


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def import_graph(found: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in found}
    for name, path in found.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[name].update(alias.name for alias in node.names if alias.name in found)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    above = package[: len(package) - (node.level - 1)]
                    base = ".".join(above + ([base] if base else []))
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    if target in found:
                        graph[name].add(target)
                    elif base in found:
                        graph[name].add(base)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (or a module importing
    itself), by Tarjan's algorithm without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": set()}
    assert sorted(cycles(graph)) == [["a", "b", "c"], ["e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_every_kind_of_import(tmp_path: Path) -> None:
    text = "import structgen.engine.dfa\nfrom structgen import grammar\nfrom .regex import x\n"
    text += "def f():\n    from structgen.matcher import Matcher\n"
    text += "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from structgen.tokenizer_info import TokenizerInfo\n"
    probe = tmp_path / "probe.py"
    probe.write_text(text)
    found = {name: path for name, path in modules().items()}
    found["structgen.engine.probe"] = probe
    edges = import_graph(found)["structgen.engine.probe"]
    assert edges == {
        "structgen.engine.dfa", "structgen.grammar", "structgen.engine.regex", "structgen.matcher",
        "structgen.tokenizer_info",
    }


def test_no_import_cycle() -> None:
    found = cycles(import_graph(modules()))
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in found)


def test_the_engine_imports_nothing_outside_itself() -> None:
    """The engine is a grammar engine: it imports the standard library and itself only
    (no schema translation, no numpy, no torch), so that mypyc compiles it alone."""
    graph = import_graph(modules())
    outside = {
        f"{name} -> {target}"
        for name, targets in graph.items()
        if name.startswith("structgen.engine")
        for target in targets
        if not target.startswith("structgen.engine")
    }
    assert outside == set()
    allowed = set(sys.stdlib_module_names) | {"mypy_extensions", "librt", "structgen", "__future__"}
    foreign = set()
    for name, path in modules().items():
        if not name.startswith("structgen.engine"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                roots = [node.module.split(".")[0]]
            else:
                continue
            foreign |= {f"{name} -> {root}" for root in roots if root not in allowed}
    assert foreign == set()


def test_no_module_is_over_the_size_limit() -> None:
    over = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in modules().values()
    }
    too_long = {name: lines for name, lines in over.items() if lines > MAX_LINES and name not in OVERSIZED}
    assert too_long == {}
    split = sorted(name for name in OVERSIZED if over.get(name, 0) <= MAX_LINES)
    assert split == [], f"{split} are within {MAX_LINES} lines now: take them off OVERSIZED"
