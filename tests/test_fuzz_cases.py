"""Every failure ``make fuzz`` saved (``fuzz/cases/``) replays clean: a fixed failure
stays fixed. With no case saved, a built-in one checks the replay itself."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
SAVED = sorted((FUZZ / "cases").glob("*.json"))
BUILT_IN = {"fuzzer": "schema", "input": {"source": "built-in", "schema": {"type": "integer", "minimum": 0},
                                          "instances": [0, 5, -1, "x"], "walk": None}}


def runner() -> Any:
    """``fuzz/run.py`` as a module (the folder is no package: a script's own path)."""
    if str(FUZZ) not in sys.path:
        sys.path.insert(0, str(FUZZ))
    spec = importlib.util.spec_from_file_location("fuzz_run", FUZZ / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", SAVED or [None], ids=[p.name for p in SAVED] or ["built-in"])
def test_a_saved_failure_replays_clean(path: Path | None) -> None:
    run = runner()
    case = BUILT_IN if path is None else json.loads(path.read_text(encoding="utf-8"))
    status, payload = run.replay(case)
    assert status in run.PASSING, (path, payload)
    if path is None:
        assert payload.get("compiled") == 1  # the replay really translated and checked it
