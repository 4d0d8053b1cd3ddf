"""Where the tests find the shared data files (../shared/data/README.md): beside the
checkout, as the project lays it out, or where $STRUCTGEN_MASKBENCH points."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_NAME = "maskbench-public.jsonl.gz"
_CANDIDATES = [
    Path(__file__).resolve().parent.parent.parent / "shared" / "data" / _NAME,  # ../shared beside the checkout
]


def maskbench_path() -> Path:
    """The public MaskBench file; a clear error naming where it was looked for."""
    given = os.environ.get("STRUCTGEN_MASKBENCH")
    candidates = [Path(given)] if given else _CANDIDATES
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"{_NAME} not found at {', '.join(map(str, candidates))}; set STRUCTGEN_MASKBENCH")


def translated_schemas(every: int) -> Iterator[tuple[dict[str, Any], str]]:
    """Every ``every``-th MaskBench record with its grammar text (``schema2grammar.translate``);
    the schemas it refuses are left out."""
    from schema2grammar import SchemaError, translate

    with gzip.open(maskbench_path(), "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number % every:
                continue
            record = json.loads(line)
            try:
                text, _ = translate(record["schema"])
            except SchemaError:
                continue
            yield record, text
