"""No import cycle among schema2grammar's modules.

Every import counts: at a module's top, inside a function and under
``TYPE_CHECKING`` alike (an import moved into a function to dodge a cycle is still
a cycle in the design). The translator's keyword families (``strings``,
``objects``, ...) subclass ``core.TranslatorCore`` and only ``translate`` composes
them, so none of them imports another family or ``translate``.
"""

from __future__ import annotations

from test_import_graph import cycles, import_graph, modules

FAMILIES = ("references", "strings", "number_keywords", "arrays", "objects", "combinators", "dependent_schemas",
            "constants")


def _graph() -> dict[str, set[str]]:
    """Module name (``translate``; ``__init__`` for the package) -> the schema2grammar
    modules it imports anywhere (the project's import graph, read here)."""
    def short(name: str) -> str:
        return name.partition(".")[2] or "__init__"

    graph = import_graph(modules())
    return {short(name): {short(t) for t in targets if t.split(".")[0] == "schema2grammar"}
            for name, targets in graph.items() if name.split(".")[0] == "schema2grammar"}


def test_no_import_cycle() -> None:
    graph = _graph()
    assert len(graph) > 20 and "translate" in graph["__init__"], graph  # the graph itself is read
    assert cycles(graph) == []


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}}) == [["a"]]


def test_keyword_families_import_only_what_they_build_on() -> None:
    graph = _graph()
    for family in FAMILIES:
        assert "core" in graph[family], family
        wrong = graph[family] & ({"translate", *FAMILIES} - {family})
        assert not wrong, f"{family} imports {sorted(wrong)}"
