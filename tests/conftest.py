from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import vocabularies
from vocabularies import NAMES
from structgen import TokenizerInfo


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never read or write the user's trie cache."""
    import os

    os.environ["STRUCTGEN_CACHE_DIR"] = str(tmp_path_factory.mktemp("structgen-cache"))



@pytest.fixture(scope="session")
def benchmark_module() -> Callable[[str], ModuleType]:
    """Imports a module of ``benchmarks/`` by name: the folder is scripts, not a
    package, so its path is on ``sys.path`` only while the import runs."""
    folder = str(Path(__file__).resolve().parent.parent / "benchmarks")

    def load(name: str) -> ModuleType:
        sys.path.insert(0, folder)
        try:
            return importlib.import_module(name)
        finally:
            sys.path.remove(folder)

    return load


@pytest.fixture(scope="session")
def hf_tokenizers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The four real tokenizers, loaded once per test session."""
    return {
        "smollm2": vocabularies.smollm2(),
        "deepseek": vocabularies.deepseek(),
        "mistral_v3": vocabularies.mistral_v3(tmp_path_factory.mktemp("mistral_v3")),
        "tekken": vocabularies.tekken(tmp_path_factory.mktemp("tekken")),
    }


@pytest.fixture(scope="session")
def infos(hf_tokenizers: dict[str, Any]) -> dict[str, TokenizerInfo]:
    return {name: TokenizerInfo.from_huggingface(tok) for name, tok in hf_tokenizers.items()}
