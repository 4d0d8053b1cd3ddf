"""Build script: compiles every module of ``structgen/engine/`` with mypyc.

``STRUCTGEN_MYPYC`` selects what happens:

* ``auto`` (default): compile; if mypyc or the C compiler fails, warn loudly and
  install pure Python instead.
* ``required``: compile or fail the install (``make test`` and CI use this).
* ``pure``: do not compile (for editing the engine with ``pip install -e .``).

Everything else (metadata, dependencies) lives in ``pyproject.toml``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

MODES = ("auto", "required", "pure")
MODE = os.environ.get("STRUCTGEN_MYPYC", "auto").strip().lower() or "auto"
if MODE not in MODES:
    sys.exit(f"STRUCTGEN_MYPYC={MODE!r} is not one of {', '.join(MODES)}")

ENGINE_DIR = Path("structgen") / "engine"
# The package __init__ stays interpreted (it only re-exports and reports COMPILED);
# every other engine module is compiled, sorted so the generated C is deterministic.
TARGETS = sorted(str(p) for p in ENGINE_DIR.glob("*.py") if p.name != "__init__.py")


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
        return mypycify(["--follow-imports=skip", *TARGETS], opt_level=os.environ.get("STRUCTGEN_MYPYC_OPT", "3"), debug_level="0")
    except (ImportError, SystemExit) as exc:  # mypycify exits on a type error
        if MODE == "required":
            raise
        warn(f"mypyc is unavailable or the engine failed to type-check ({exc!r}); installing pure Python (slow)")
        return []


setup(ext_modules=engine_extensions(), cmdclass={"build_ext": OptionalBuildExt})
