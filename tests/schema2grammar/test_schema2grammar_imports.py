"""No import cycle among schema2grammar's modules.

Every import counts: at a module's top, inside a function and under
``TYPE_CHECKING`` alike (an import moved into a function to dodge a cycle is still
a cycle in the design). The translator's keyword families (``strings``,
``objects``, ...) subclass ``core.TranslatorCore`` and only ``translate`` composes
them, so none of them imports another family or ``translate``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "schema2grammar"

FAMILIES = ("references", "strings", "number_keywords", "arrays", "objects", "combinators", "dependent_schemas",
            "constants")


def _graph() -> dict[str, set[str]]:
    """Module name (``translate``) -> the schema2grammar modules it imports anywhere."""
    names = {path.stem for path in PACKAGE.glob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in names}
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level:  # relative: .x or from . import x
                targets = [f"schema2grammar.{node.module}"] if node.module else \
                    [f"schema2grammar.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module == "schema2grammar":
                targets = [f"schema2grammar.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module]
            for target in targets:
                parts = target.split(".")
                if parts[0] == "schema2grammar" and len(parts) > 1 and parts[1] in names:
                    graph[path.stem].add(parts[1])
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for other in sorted(graph[name]):
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in on_stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == name:
                    break
            if len(component) > 1 or name in graph[name]:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_no_import_cycle() -> None:
    graph = _graph()
    assert len(graph) > 20 and "translate" in graph["__init__"], graph  # the graph itself is read
    assert _cycles(graph) == []


def test_a_cycle_is_found() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}}) == [["a"]]


def test_keyword_families_import_only_what_they_build_on() -> None:
    graph = _graph()
    for family in FAMILIES:
        assert "core" in graph[family], family
        wrong = graph[family] & ({"translate", *FAMILIES} - {family})
        assert not wrong, f"{family} imports {sorted(wrong)}"
