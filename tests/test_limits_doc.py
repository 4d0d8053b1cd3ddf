"""docs/limits.md lists every explicit limit with its current value.

Every module of ``structgen`` (engine included), ``schema2grammar`` and ``server``
is imported; each module-level number it defines whose name starts with ``MAX_``,
holds ``_MAX_`` or ends in ``_LIMIT`` (and each of the other constants the page
lists, ``EXTRA``) must have a row in the page with its value, as must every field
of ``structgen.server.Limits`` (with its default), every integer field of
``schema2grammar.Options`` (with its default and allowed range) and every
``functools.lru_cache`` of a fixed size above one. A row naming something that no
longer exists fails too. Rows are Markdown table lines whose first cell is one
name in backticks and whose second cell is the value, written as in the source
(``100_000``, ``10**15``, ``1 << 20``, ``0x10FFFF``; ``100,000`` is read too).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import operator
import pkgutil
import re
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "limits.md"

PACKAGES = ("structgen", "schema2grammar")

LIMIT_NAME = re.compile(r"^MAX_|_MAX_|_LIMIT$")
"""Constants collected by name: every one of them is a limit."""

EXTRA = frozenset({
    "structgen.engine.lr.CHECK_EVERY",
    "structgen.engine.deadline.OPTIONAL_SHARE",
    "structgen.engine.matcher.GROUPS_WALKS",
    "structgen.engine.matcher.MASK_CACHE_SIZE",
    "structgen.engine.tables.REFINE_AT",
    "structgen.engine.tables.CANDIDATES",
    "structgen.engine.tables.STATE_WORK",
    "structgen.engine.tables.SHIFT_FROM_STATES",
    "structgen.engine.spanner.LARGE_GROUP",
    "structgen.engine.spanner.OR_FROM",
    "structgen.engine.shifted_groups.SHIFT_DEPTH",
    "structgen.engine.shifted_groups.ROW_WORK",
    "structgen.engine.partial_stacks.FORGET_SHARE",
    "structgen.engine.spanner.GROUP_WORK",
    "structgen.engine.views.LONG_PATTERN_STATES",
    "structgen.grammar.LADDER_SECONDS",
    "structgen.decoding.CLOSE_HORIZON",
    "structgen.decoding.CLOSE_SLACK",
    "structgen.model_cache.FREE_SPACE_MARGIN",
    "structgen.validation.SHOWN_CHARS",
    "structgen.integrations.request_matcher.CHECKED_TAIL",
    "schema2grammar.options.LENGTH_BOUNDS",
    "schema2grammar.applicators.NESTING_PER_CONDITIONAL",
    "schema2grammar.numbers.MANTISSA_DIGITS",
    "schema2grammar.unique_arrays.ROOM_CAP",
    "structgen.server.shutdown.BACKSTOP_SECONDS",
    "structgen.server.engine_vllm.PRECOMPILE_POLL_SECONDS",
})
"""Limits (and thresholds beside them) whose names the pattern above misses."""

NOT_IMPORTED = {
    # needs vllm, an optional dependency that is not installed here: its constants are read from its source
    "structgen.integrations.vllm": "vllm",
    # ``python -m structgen``: importing it runs the command line and exits
    "structgen.__main__": None,
}

_OPERATORS = {ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.Mult: operator.mul, ast.Add: operator.add,
              ast.Sub: operator.sub}


def _evaluate(node: ast.AST) -> Any:
    """A number, or a tuple of them, written as a literal: ``100_000``, ``10**15``,
    ``1 << 20``, ``0x10FFFF``, ``(256, 32)``, ``None``. ValueError for anything else."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (int, float)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.Tuple):
        return tuple(_evaluate(item) for item in node.elts)
    raise ValueError(f"not a literal value: {ast.dump(node)}")


def _value(cell: str) -> Any:
    """A value cell of the page as a Python value; a dotted name (``time.monotonic``) as its text."""
    text = cell.strip().strip("`").strip()
    if re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+", text):
        return text
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)  # 100,000 as 100_000 (a tuple's ", " stays)
    return _evaluate(ast.parse(text, mode="eval"))


def _rows() -> dict[str, list[str]]:
    """The page's table rows by the name in their first cell: the other cells."""
    rows: dict[str, list[str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        named = re.fullmatch(r"`([\w.]+)`", cells[0])
        if named is None or len(cells) < 2:
            continue
        assert named.group(1) not in rows, f"docs/limits.md lists {named.group(1)} twice"
        rows[named.group(1)] = cells[1:]
    return rows


def _module_names() -> Iterator[str]:
    for package in PACKAGES:
        yield package
        module = importlib.import_module(package)
        for found in pkgutil.walk_packages(module.__path__, package + "."):
            yield found.name


def _imported(name: str) -> ModuleType | None:
    """The module, or None where it is not imported (``NOT_IMPORTED``)."""
    if name in NOT_IMPORTED:
        missing = NOT_IMPORTED[name]
        if missing is None:
            return None
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != missing:
                raise
            return None
    return importlib.import_module(name)


def _source(name: str) -> Path | None:
    """The module's Python source (for a compiled engine module, the ``.py`` beside it)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin)
    if path.suffix != ".py":
        path = path.with_name(path.name.split(".")[0] + ".py")
    return path if path.is_file() else None


def _assigned(path: Path) -> dict[str, ast.AST]:
    """The names a module's own top-level statements assign (not those it imports), with their values."""
    found: dict[str, ast.AST] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                found[node.target.id] = node.value
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", ()):
                    visit(handler.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _collect() -> tuple[dict[str, Any], dict[str, int]]:
    """(every limit constant: qualified name -> value, every bounded lru_cache: qualified name -> maxsize)."""
    constants: dict[str, Any] = {}
    caches: dict[str, int] = {}
    for name in _module_names():
        module = _imported(name)
        source = _source(name)
        if source is not None:
            assigned = _assigned(source)
        else:  # no source beside a compiled module: every name it holds
            assert module is not None, f"{name}: neither imported nor its source found"
            assigned = {key: ast.Constant(None) for key in vars(module)}
        for key, node in assigned.items():
            qualified = f"{name}.{key}"
            if not (LIMIT_NAME.search(key) or qualified in EXTRA):
                continue
            if module is not None:
                value = getattr(module, key)
            else:
                try:
                    value = _evaluate(node)
                except ValueError:
                    continue  # not a plain number in the source: not a constant limit
            if _is_number(value) or (qualified in EXTRA and isinstance(value, tuple) and all(map(_is_number, value))):
                constants[qualified] = value
        if module is not None:
            for key, value in vars(module).items():
                parameters = getattr(value, "cache_parameters", None)
                if callable(parameters) and getattr(value, "__module__", None) == name:
                    size = parameters()["maxsize"]
                    if size is not None and size > 1:
                        caches[f"{name}.{key}"] = size
    return constants, caches


@pytest.fixture(scope="module")
def collected() -> tuple[dict[str, Any], dict[str, int]]:
    return _collect()


@pytest.fixture(scope="module")
def rows() -> dict[str, list[str]]:
    return _rows()


def _row(rows: dict[str, list[str]], qualified: str, bare_unique: bool) -> list[str] | None:
    if qualified in rows:
        return rows[qualified]
    bare = qualified.rsplit(".", 1)[1]
    return rows.get(bare) if bare_unique else None


def test_every_extra_constant_exists(collected: tuple[dict[str, Any], dict[str, int]]) -> None:
    constants, _ = collected
    assert sorted(EXTRA - set(constants)) == [], "EXTRA names constants that are gone (or no longer numbers)"


def test_every_limit_constant_is_listed_with_its_value(
    collected: tuple[dict[str, Any], dict[str, int]], rows: dict[str, list[str]]
) -> None:
    constants, caches = collected
    assert len(constants) > 80, sorted(constants)  # the collection itself works
    bare_counts: dict[str, int] = {}
    for qualified in constants:
        bare = qualified.rsplit(".", 1)[1]
        bare_counts[bare] = bare_counts.get(bare, 0) + 1
    problems = []
    for qualified, value in sorted({**constants, **caches}.items()):
        row = _row(rows, qualified, bare_counts.get(qualified.rsplit(".", 1)[1]) == 1)
        if row is None:
            problems.append(f"{qualified} = {value!r}: not in docs/limits.md")
            continue
        written = _value(row[0])
        if written != value or type(written) is not type(value):
            problems.append(f"{qualified} = {value!r}: docs/limits.md says {row[0]}")
    assert problems == [], "\n".join(problems)


def test_every_server_limit_is_listed_with_its_default(rows: dict[str, list[str]]) -> None:
    from structgen.server import Limits

    problems = []
    for field in dataclasses.fields(Limits):
        row = rows.get(f"Limits.{field.name}") or rows.get(f"structgen.server.Limits.{field.name}")
        if row is None:
            problems.append(f"Limits.{field.name}: not in docs/limits.md")
            continue
        default = field.default
        expected = f"{default.__module__}.{default.__qualname__}" if callable(default) else default
        if _value(row[0]) != expected:
            problems.append(f"Limits.{field.name} = {expected!r}: docs/limits.md says {row[0]}")
    assert problems == [], "\n".join(problems)


def test_every_integer_option_is_listed_with_its_default_and_range(rows: dict[str, list[str]]) -> None:
    from schema2grammar import Options

    integers = [field for field in dataclasses.fields(Options) if re.fullmatch(r"int( \| None)?", str(field.type))]
    assert integers, "Options has no integer fields?"
    problems = []
    for field in integers:
        row = rows.get(f"Options.{field.name}")
        if row is None:
            problems.append(f"Options.{field.name}: not in docs/limits.md")
            continue
        if _value(row[0]) != field.default:
            problems.append(f"Options.{field.name} = {field.default!r}: docs/limits.md says {row[0]}")
        bounds = re.fullmatch(r"`?(-?\d+)\.\.(-?\d+)`?", row[1])
        if bounds is None:
            problems.append(f"Options.{field.name}: its range {row[1]!r} is not written low..high")
            continue
        low, high = int(bounds.group(1)), int(bounds.group(2))
        for inside in (low, high):
            try:
                Options(**{field.name: inside})
            except ValueError as exc:
                problems.append(f"Options.{field.name}={inside} is refused ({exc}); docs/limits.md allows {row[1]}")
        for outside in (low - 1, high + 1):
            try:
                Options(**{field.name: outside})
            except ValueError:
                continue
            problems.append(f"Options.{field.name}={outside} is accepted; docs/limits.md allows {row[1]}")
    assert problems == [], "\n".join(problems)


def test_every_listed_name_exists(collected: tuple[dict[str, Any], dict[str, int]], rows: dict[str, list[str]]) -> None:
    from schema2grammar import Options
    from structgen.server import Limits

    constants, caches = collected
    known = set(constants) | set(caches)
    known |= {f"Limits.{field.name}" for field in dataclasses.fields(Limits)}
    known |= {f"structgen.server.Limits.{field.name}" for field in dataclasses.fields(Limits)}
    known |= {f"Options.{field.name}" for field in dataclasses.fields(Options)}
    bare = {name.rsplit(".", 1)[1] for name in set(constants) | set(caches)}
    stale = [name for name in rows if name not in known and name not in bare]
    assert stale == [], f"docs/limits.md lists names that are gone: {stale}"


def test_values_are_read_as_written() -> None:
    assert _value("`100_000`") == _value("100,000") == 100_000
    assert _value("`10**15`") == 10**15
    assert _value("`1 << 20`") == 1 << 20
    assert _value("`0x10FFFF`") == 0x10FFFF
    assert _value("`(256, 32)`") == (256, 32)
    assert _value("`30.0`") == 30.0 and isinstance(_value("30.0"), float)
    assert _value("`time.monotonic`") == "time.monotonic"
