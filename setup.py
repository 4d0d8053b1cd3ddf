"""Build script: compiles every module of ``structgen/engine/``, and the JSON layer's
mask-path modules (``structgen/json/``), with mypyc.

``STRUCTGEN_MYPYC`` selects what happens:

* ``auto`` (default): compile; if mypyc or the C compiler fails, warn loudly and
  install pure Python instead.
* ``required``: compile or fail the install (``make test`` and CI use this).
* ``pure``: do not compile (for editing the engine with ``pip install -e .``).

Everything else (metadata, dependencies) lives in ``pyproject.toml``.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

MODES = ("auto", "required", "pure")
MODE = os.environ.get("STRUCTGEN_MYPYC", "auto").strip().lower() or "auto"
if MODE not in MODES:
    sys.exit(f"STRUCTGEN_MYPYC={MODE!r} is not one of {', '.join(MODES)}")

ENGINE_DIR = Path("structgen") / "engine"
JSON_DIR = Path("structgen") / "json"


def json_compiled_modules() -> list[str]:
    """``structgen/json/__init__.py``'s ``COMPILED_MODULES``, read without importing it."""
    tree = ast.parse((JSON_DIR / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "COMPILED_MODULES":
            return list(ast.literal_eval(node.value))
    sys.exit("structgen/json/__init__.py has no COMPILED_MODULES")


# The packages' __init__ files stay interpreted (they only re-export and report COMPILED);
# every other engine module is compiled, and the JSON layer's listed ones, sorted so the
# generated C is deterministic.
TARGETS = sorted(
    [str(p) for p in ENGINE_DIR.glob("*.py") if p.name != "__init__.py"]
    + [str(JSON_DIR / f"{name}.py") for name in json_compiled_modules()]
)


def warn(message: str) -> None:
    """A warning pip shows even without -v: plain stderr plus a banner."""
    banner = "=" * 78
    print(f"\n{banner}\nstructgen: {message}\n{banner}\n", file=sys.stderr)


class OptionalBuildExt(build_ext):
    """build_ext that falls back to pure Python in ``auto`` mode."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, missing headers, ...
            if MODE == "required":
                raise
            warn(f"compiling the engine failed ({exc!r}); installing the pure-Python engine (slow)")
            for output in self.get_outputs():
                if os.path.exists(output):
                    os.remove(output)
            self.extensions = []


def engine_extensions() -> list:
    if MODE == "pure":
        return []
    try:
        from mypyc.build import mypycify

        # --follow-imports=skip: see [tool.mypy] in pyproject.toml
        extensions = mypycify(["--follow-imports=skip", *TARGETS], opt_level=os.environ.get("STRUCTGEN_MYPYC_OPT", "3"), debug_level="0")
    except (ImportError, SystemExit) as exc:  # mypycify exits on a type error
        if MODE == "required":
            raise
        warn(f"mypyc is unavailable or the engine failed to type-check ({exc!r}); installing pure Python (slow)")
        return []
    for extension in extensions:
        for source in extension.sources:
            if source.endswith(".c"):
                untrash_acyclic_deallocs(Path(source))
    return extensions


def untrash_acyclic_deallocs(source: Path) -> None:
    """Take the trashcan out of the deallocators of ``acyclic`` classes.

    mypyc 2.4.1 wraps every deallocator in ``Py_TRASHCAN_BEGIN``, which, once
    deallocations nest 50 deep, queues the object through its GC header. Objects
    of an ``@mypyc_attr(acyclic=True)`` class have none, so that write corrupts
    the heap (``tests/engine/test_build.py`` reproduces it). Their deallocators are
    the ones that never untrack ``self``. None of those classes holds objects of
    its own kind, so none can start a deep chain of deallocations: they need no
    trashcan.
    """
    original = source.read_text()
    kept: list[str] = []
    untracks = True  # whether the deallocator being read untracks self
    dropping = False  # inside a trashcan being taken out
    for line in original.split("\n"):
        code = line.strip()
        if re.fullmatch(r"\w+_dealloc\(\w+ \*self\)", code):
            untracks = False
        elif code == "PyObject_GC_UnTrack(self);":
            untracks = True
        elif code.startswith("CPy_TRASHCAN_BEGIN(self,") and not untracks:
            dropping = True
            continue
        elif code == "CPy_TRASHCAN_END(self)" and dropping:
            dropping = False
            continue
        kept.append(line)
    patched = "\n".join(kept)
    if patched != original:
        source.write_text(patched)


setup(ext_modules=engine_extensions(), cmdclass={"build_ext": OptionalBuildExt})
