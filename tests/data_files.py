"""Where the tests find the shared data files (../shared/data/README.md): beside the
checkout, as the project lays it out, or where $STRUCTGEN_MASKBENCH points."""

from __future__ import annotations

import os
from pathlib import Path

_NAME = "maskbench-public.jsonl.gz"
_CANDIDATES = [
    Path(__file__).resolve().parent.parent.parent / "shared" / "data" / _NAME,  # ../shared beside the checkout
    Path("/work/shared/data") / _NAME,  # the project machines' shared folder, for clones made elsewhere
]


def maskbench_path() -> Path:
    """The public MaskBench file; a clear error naming where it was looked for."""
    given = os.environ.get("STRUCTGEN_MASKBENCH")
    candidates = [Path(given)] if given else _CANDIDATES
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(f"{_NAME} not found at {', '.join(map(str, candidates))}; set STRUCTGEN_MASKBENCH")
