"""The installed engine is the mypyc-compiled one, and the pure mode is the same code."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import structgen
import structgen.engine
from structgen.engine import ENGINE_MODULES

CHECKOUT = Path(__file__).resolve().parents[2]


def test_engine_is_compiled() -> None:
    assert structgen.engine.COMPILED is True
    assert structgen.json.COMPILED is True
    assert structgen.COMPILED is True


def test_engine_module_list_matches_the_folder() -> None:
    sources = sorted(p.stem for p in (CHECKOUT / "structgen" / "engine").glob("*.py") if p.stem != "__init__")
    assert sorted(ENGINE_MODULES) == sources


def test_the_json_layers_compiled_modules_are_the_installed_extensions() -> None:
    """``setup.py`` compiles what ``COMPILED_MODULES`` lists; nothing else of the JSON
    layer is an extension (the rest uses numpy, which stays interpreted)."""
    import importlib.machinery

    folder = Path(structgen.json.__file__).parent
    extensions = sorted(
        p.name.split(".")[0] for p in folder.iterdir() if p.name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    )
    assert extensions == sorted(structgen.json.COMPILED_MODULES)
    sources = {p.stem for p in (CHECKOUT / "structgen" / "json").glob("*.py")}
    assert set(structgen.json.COMPILED_MODULES) <= sources


def test_tests_import_the_installed_package_not_the_checkout() -> None:
    installed = Path(structgen.__file__).resolve()
    assert Path(sysconfig.get_paths()["purelib"]).resolve() in installed.parents
    assert CHECKOUT / "structgen" not in installed.parents


def run_python(code: str, **env: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    return result.stdout


WALK = (
    "import random\n"
    "from structgen.engine import COMPILED\n"
    "from structgen.engine.vocab import build_trie\n"
    "rng = random.Random(7)\n"
    "vocab = [bytes(rng.randrange(97, 100) for _ in range(rng.randint(1, 5))) for _ in range(300)]\n"
    "table = [rng.choice([-1, 0, 1, 2]) for _ in range(3 * 256)]\n"
    "print(COMPILED, build_trie(vocab, []).walk(table, 0))\n"
)


def test_pure_mode_loads_sources_and_gives_the_same_results() -> None:
    compiled = run_python(WALK)
    pure = run_python(WALK, STRUCTGEN_PURE="1")
    assert compiled.startswith("True ") and pure.startswith("False ")
    both = "import structgen, structgen.json.unique_items as u; print(structgen.json.COMPILED, u.__file__.endswith('.py'))"
    assert run_python(both).split() == ["True", "False"]
    assert run_python(both, STRUCTGEN_PURE="1").split() == ["False", "True"]
    assert compiled.split(" ", 1)[1] == pure.split(" ", 1)[1]


NESTED = (  # a number bound's regex nests some 330 groups deep (Pydantic's confloat(gt=0) is 5e-324 and up)
    "import sys\n"
    "from structgen.engine.regex import RegexError, parse\n"
    "parse('(?:' * 330 + 'a' + ')' * 330)\n"
    "try:\n"
    "    parse('(?:' * 5000 + 'a' + ')' * 5000)\n"
    "except RegexError as exc:\n"
    "    print(exc)\n"
)


def test_deep_patterns_read_in_both_modes_and_deeper_ones_are_refused() -> None:
    for mode in ("0", "1"):
        assert run_python(NESTED, STRUCTGEN_PURE=mode).strip() == "the pattern nests groups too deeply to read " \
            "(its parsers recurse once per group)"


def test_version_command_reports_the_engine() -> None:
    command = Path(sys.executable).with_name("structgen")  # the installed console script
    out = subprocess.run([str(command), "--version"], capture_output=True, text=True, check=True, cwd="/").stdout
    assert out.strip() == f"structgen {structgen.__version__} (engine: compiled with mypyc)"
    assert structgen.__version__[0].isdigit()


def test_compiled_tables_are_out_of_the_collectors_way() -> None:
    """A full collection walks every tracked object; a grammar's hundreds of
    thousands of token groups once made that a pause of 0.2 s in a step."""
    import gc

    pieces = [bytes([byte]) for byte in range(256)] + [b'{"a": ', b"1}"]
    info = structgen.TokenizerInfo(pieces + [b""], stop_token_ids=[len(pieces)])
    compiled = structgen.compile(structgen.Grammar.from_json_schema({"type": "object"}), info)
    matcher = structgen.Matcher(compiled)
    assert matcher.allowed_tokens()
    gc.collect()  # tuples of ints are untracked by the first collection that sees them
    tables = compiled.tables
    groups = tables.groups(0)
    assert groups and not any(gc.is_tracked(group) for group in groups)
    assert not gc.is_tracked(groups)
    entry = tables.entry(0, 0)
    assert not gc.is_tracked(entry)
    for array in (compiled.trie.node_byte, compiled.trie.token_ids, compiled.lexer.table, compiled.special):
        assert not gc.is_tracked(array)
    # the LR table's cells (a Python grammar has 27,000) and rows, after the full collection
    rows = compiled.table.actions
    assert any(row for row in rows)
    assert not any(gc.is_tracked(row) or any(gc.is_tracked(cell) for cell in row.values()) for row in rows)
    # the lexer's terminals per state, ended and reachable (two per state: 62,000 for 41 schemas)
    lexer = compiled.lexer
    assert not any(gc.is_tracked(labels) for labels in lexer.accepts + lexer.reachable_terminals)
    # the patterns' minimal automata, kept process-wide (``PatternCache``): 650,000 ints for Python
    parts = [part for part in compiled.lexer.pattern_cache._parts.values()]
    assert parts
    for part in parts:
        assert not any(gc.is_tracked(array) for array in (part.table, part.class_of, part.accepting))
        assert not gc.is_tracked(part)
    nodes = list(compiled.lexer.patterns or [])  # the patterns' regex trees, kept for views
    assert nodes
    while nodes:
        node = nodes.pop()
        assert not gc.is_tracked(node) and not gc.is_tracked(node.children) and not gc.is_tracked(node.ranges)
        nodes.extend(node.children)
    gc.disable()  # results memoized since the last collection count too
    try:
        later = structgen.Matcher(compiled)
        assert later.accept_string('{"a": 1') and later.allowed_tokens()
        memos = [context.after for context in tables.memo.contexts.values()]  # simulation results by sequence
        assert any(memos) and not any(gc.is_tracked(memo) for memo in memos)
    finally:
        gc.enable()


def test_a_compile_leaves_its_objects_in_the_oldest_generation() -> None:
    """The compile runs with the collector paused and ends with one collection of
    the young generations (gc_pause.py): what it built is scanned there, not by a
    collection that a later mask happens to trigger. An application that paused
    the collector itself gets no collection and keeps it paused."""
    import gc

    pieces = [bytes([byte]) for byte in range(256)]
    info = structgen.TokenizerInfo(pieces + [b""], stop_token_ids=[len(pieces)])
    assert gc.isenabled()
    compiled = structgen.compile(structgen.Grammar.from_json_schema({"type": "array"}), info)
    assert gc.isenabled()
    young = gc.get_objects(generation=0) + gc.get_objects(generation=1)
    assert not any(item is compiled.tables for item in young)
    assert any(item is compiled.tables for item in gc.get_objects(generation=2))
    gc.disable()
    try:
        compiled = structgen.compile(structgen.Grammar.from_json_schema({"type": "string"}), info)
        assert not gc.isenabled()
        assert any(item is compiled.tables for item in gc.get_objects(generation=0))
    finally:
        gc.enable()


DEEP_DEALLOCATION = (
    "from structgen.engine.spanner import TokenGroup\n"
    "from structgen.engine.partial_stacks import Partial\n"
    "from structgen.engine.mask_entry import MaskEntry\n"
    "from structgen.engine.regex import CONCAT, Node\n"
    "import gc\n"
    "for _ in range(50):\n"
    "    nest = []\n"
    "    for depth in range(200):\n"
    "        nest = [nest, TokenGroup(depth, depth), MaskEntry(b'', (), []), Partial((), False), Node(CONCAT, [], [])]\n"
    "    del nest\n"
    "    gc.collect()\n"
    "tree = Node(CONCAT, [], [])\n"
    "for depth in range(100_000):\n"
    "    tree = Node(CONCAT, [depth], [tree])  # a regex tree's nodes, one under another\n"
    "del tree\n"
    "print('survived')\n"
)


def test_untracked_objects_survive_deep_deallocation() -> None:
    """Freed 200 lists deep, past the trashcan's 50: mypyc's deallocator queued
    them through a GC header they lack (setup.py takes that out). A regex tree
    100,000 nodes deep is freed too: the tuples between its nodes keep the
    trashcan, which stops the C recursion."""
    assert run_python(DEEP_DEALLOCATION).strip() == "survived"
