"""The vLLM tests run only where vLLM is installed (`make test-vllm`, in .venv-vllm).

Elsewhere (the main `pytest` run in .venv) they are not collected at all rather
than skipped: vLLM is an optional extra with its own venv, and `make test-vllm`
fails when it finds no test to run (pytest exits 5), so nothing passes silently.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest


if importlib.util.find_spec("vllm") is None:
    collect_ignore_glob = ["test_*.py"]

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[1]
sys.path.insert(0, str(HERE))  # schema_requests, as pyproject's pythonpath does for tests/
pytest.register_assert_rewrite("vllm_setup")  # its asserts report as the tests' own
DEFAULT_MODEL_DIR = CHECKOUT / ".cache" / "smollm2-135m-instruct-f32"


@pytest.fixture(scope="session")
def model_dir() -> Path:
    """The bundled SmolLM2 as a safetensors folder (`make vllm-model`; converted
    here, once, when missing)."""
    from structgen.integrations.vllm_model import convert_bundled_model

    return convert_bundled_model(os.environ.get("STRUCTGEN_VLLM_MODEL") or DEFAULT_MODEL_DIR)
