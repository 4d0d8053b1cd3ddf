"""The bundled SmolLM2 as a folder vLLM can serve.

vLLM does not load the bundled GGUF file together with its tokenizer, so the model
is read by transformers (dequantized to float32), stripped of its GGUF
``quantization_config`` and saved as a plain safetensors folder with its
tokenizer. The folder is written once; a later call finds it and returns at once.

    python -m structgen.integrations.vllm_model .cache/smollm2-135m-instruct-f32
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from structgen.models import bundled_model_path

MARKER = "structgen-source.json"
"""Written last: names the GGUF file the folder came from (a half-written folder has none)."""


def convert_bundled_model(target: str | Path) -> Path:
    """``target``, holding the bundled model as safetensors; converted only when
    ``target`` does not already hold a conversion of the same GGUF file."""
    target = Path(target)
    source = bundled_model_path()
    stamp = {"gguf": source.name, "size": source.stat().st_size}  # not the path: each venv has its copy
    marker = target / MARKER
    if marker.is_file() and json.loads(marker.read_text()) == stamp:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    staging.chmod(0o755)  # mkdtemp's 0700 would hide the model from other users
    try:
        _save_plain_model(source, staging)
        (staging / MARKER).write_text(json.dumps(stamp))
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _save_plain_model(gguf: Path, folder: Path) -> None:
    """Dequantized weights into a model built from a config without the GGUF
    quantization, so ``save_pretrained`` writes ordinary float32 safetensors."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
    loaded = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, local_files_only=True, dtype=torch.float32
    )
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(loaded.state_dict())
    plain.generation_config = loaded.generation_config
    plain.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m structgen.integrations.vllm_model TARGET_FOLDER", file=sys.stderr)
        return 2
    print(convert_bundled_model(args[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
