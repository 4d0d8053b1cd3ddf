"""Every failure ``make fuzz`` saved (``fuzz/cases/``) replays clean: a fixed failure
stays fixed. With no case saved, a built-in one checks the replay itself.

Each case runs as ``python fuzz/run.py --replay`` runs it: in its fuzzer's worker
process (one per fuzzer, shared by this module's tests), under the fuzzer's
``CASE_SECONDS``. Failures not fixed yet lie in ``fuzz/open/``, which is not
replayed (docs/testing.md, "Fuzzing").
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
SAVED = sorted((FUZZ / "cases").glob("*.json"))
BUILT_IN = {"fuzzer": "schema", "input": {"source": "built-in", "schema": {"type": "integer", "minimum": 0},
                                          "instances": [0, 5, -1, "x"], "walk": None}}
SAMPLE = {"pattern": "a[bc]*(?:d|ef)?", "flags": "", "strings": ["", "a", "abcbd", "aef", "ae", "b", "abd\n"]}
MARKS = {"request": [pytest.mark.server]}  # its worker serves the tiny model on a free port


def runner() -> Any:
    """``fuzz/run.py`` as a module (the folder is no package: a script's own path;
    only ``fuzz/`` goes on ``sys.path``, so structgen stays the installed one)."""
    if "structgen_fuzz_run" not in sys.modules:
        spec = importlib.util.spec_from_file_location("structgen_fuzz_run", FUZZ / "run.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["structgen_fuzz_run"] = module
        spec.loader.exec_module(module)
    return sys.modules["structgen_fuzz_run"]


@pytest.fixture(scope="module")
def workers() -> Iterator[dict[str, Any]]:
    started: dict[str, Any] = {}
    yield started
    for worker in started.values():
        worker.close()


def _saved() -> list[Any]:
    params = []
    for path in SAVED:
        fuzzer = json.loads(path.read_text(encoding="utf-8")).get("fuzzer", "")
        params.append(pytest.param(path, marks=MARKS.get(fuzzer, []), id=path.name))
    return params or [pytest.param(None, id="built-in")]


@pytest.mark.parametrize("path", _saved())
def test_a_saved_failure_replays_clean(path: Path | None, workers: dict[str, Any]) -> None:
    run = runner()
    case = BUILT_IN if path is None else json.loads(path.read_text(encoding="utf-8"))
    status, payload = run.replay(case, workers)
    assert status in run.PASSING, (path, payload)
    if path is None:
        assert payload.get("compiled") == 1  # the replay really translated and checked it


def test_a_case_saved_is_the_case_replayed(tmp_path: Path, workers: dict[str, Any]) -> None:
    """What ``run.py`` writes for a failure reads back as the same input, which replays."""
    run = runner()
    saved = run.save_case(tmp_path, "regex", 7, 3, "fail",
                          {"kind": "disagree", "key": "accepts", "message": "a sample", "traceback": "", "detail": {}},
                          SAMPLE)
    assert saved.name == "regex-disagree-7-3.json"
    case = json.loads(saved.read_text(encoding="utf-8"))
    assert case["input"] == SAMPLE and case["fuzzer"] == "regex" and case["seed"] == 7 and case["index"] == 3
    assert run.known_signatures(tmp_path) == {"regex:disagree:accepts"}
    status, payload = run.replay(case, workers)
    assert status == "ok", payload
    assert payload["compiled"] == 1 and payload["accepted"] == 3  # a, abcbd, aef


def test_the_same_seed_makes_the_same_cases() -> None:
    run = runner()
    for name in run.FUZZERS:
        first = run.case_input(name, 5, 11)
        assert run.case_input(name, 5, 11) == first
        assert json.loads(json.dumps(first)) == first  # a case is JSON, as it is saved
