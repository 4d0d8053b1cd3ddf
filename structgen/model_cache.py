"""GGUF models converted once and kept on disk, so the next load skips the conversion.

transformers reads a GGUF file by parsing its metadata in Python (the whole
vocabulary, twice: once for the config, once for the weights, and again for the
tokenizer) and dequantizing every tensor: about 20 s for the bundled 98 MB
SmolLM2 on two CPU cores, at every load. The first load here saves what it
produced (float32 safetensors, config, tokenizer) in one folder of the cache, and
the next loads read that folder instead.

Where: ``$STRUCTGEN_CACHE_DIR/models/<file stem>-<key>/`` (the trie cache's folder,
default ``$XDG_CACHE_HOME/structgen`` or ``~/.cache/structgen``; ``off`` disables
both). The key is a sha256 of the GGUF file's bytes (the whole file, about 0.1 s
for 98 MB), of the transformers and gguf versions that converted it and of
``FORMAT``: a changed file, or a conversion by another version, is a miss, never
stale weights.

A folder is written under a temporary name and renamed when complete, its
manifest (the key and every file's size) written last: a load killed halfway
leaves no entry, only a ``.partial-<pid>-*`` folder that the next conversion
removes once that process is gone. An entry whose files are missing, of the wrong
size, or that transformers cannot read is removed and converted again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from structgen.trie_cache import cache_dir

FORMAT = "structgen-model-1"
MANIFEST = "structgen-entry.json"
PARTIAL_PREFIX = ".partial-"
FREE_SPACE_MARGIN = 1 << 30  # bytes left free on the disk after an entry is written


def models_dir() -> Path | None:
    """The folder of converted models, or None when the cache is off."""
    folder = cache_dir()
    return None if folder is None else folder / "models"


def file_sha256(path: Path) -> str:
    with open(path, "rb") as data:
        return hashlib.file_digest(data, "sha256").hexdigest()


def entry_key(path: Path) -> str:
    """What the converted model depends on: the file's bytes and the converters' versions."""
    import transformers

    h = hashlib.sha256(FORMAT.encode())
    for part in (file_sha256(path), transformers.__version__, _version("gguf")):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


def entry_path(path: Path, key: str) -> Path | None:
    folder = models_dir()
    if folder is None:
        return None
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", path.stem)[:64]
    return folder / f"{stem}-{key[:32]}"


def load_gguf(path: Path, dtype: Any) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of a GGUF file: from the cache, or converted and cached."""
    key = entry_key(path)
    entry = entry_path(path, key)
    if entry is not None and is_valid(entry, key):
        try:
            with _quiet_transformers():
                return _model_from(entry, dtype), _tokenizer_from(entry)
        except Exception as exc:  # noqa: BLE001 - any unreadable entry is converted again
            print(f"structgen: the cached model {entry} cannot be read ({exc}); converting it again", file=sys.stderr)
            shutil.rmtree(entry, ignore_errors=True)
    with Progress(path.name, entry, steps=3 if entry is not None else 2) as progress:
        model, tokenizer = convert(path, progress)
        if entry is not None:
            progress.step("writing the cache")
            store(entry, key, path, model, tokenizer)
    if dtype is not None and dtype != model.dtype:
        model = _to_dtype(model, dtype)
    return model, tokenizer


def _to_dtype(model: Any, dtype: Any) -> Any:
    """``model`` in ``dtype`` as ``from_pretrained(dtype=...)`` gives it from the cache:
    the weights cast, the buffers a module computes for itself (a rotary embedding's
    ``inv_freq``, not in any checkpoint) left as they were. Cast too, they made the
    converted model's logits differ from the cached one's (RoPE in bfloat16)."""
    computed = [(module, name, module._buffers[name]) for module in model.modules()
                for name in module._non_persistent_buffers_set if module._buffers.get(name) is not None]
    model = model.to(dtype)
    for module, name, buffer in computed:
        module._buffers[name] = buffer
    return model


def cached_tokenizer(path: Path) -> Any | None:
    """The tokenizer of a GGUF file's cache entry, or None when it has none (nothing is written)."""
    key = entry_key(path)
    entry = entry_path(path, key)
    if entry is None or not is_valid(entry, key):
        return None
    try:
        return _tokenizer_from(entry)
    except Exception:  # noqa: BLE001 - the caller reads the GGUF file instead
        return None


def convert(path: Path, progress: Progress | None = None) -> tuple[Any, Any]:
    """Read a GGUF file with transformers: a float32 model, without GGUF quantizer state, and its tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:  # dense weights even where a GGUF matmul kernel would keep them packed
        from transformers import GgufConfig

        dense: dict[str, Any] = {"quantization_config": GgufConfig(dequantize=True)}
    except ImportError:  # a transformers that always dequantizes
        dense = {}
    progress = progress or Progress(path.name, None, steps=2, stream=None)
    with _quiet_transformers(), _counting_gguf_tensors(progress):
        progress.step("weights: reading the GGUF file")
        model: Any = AutoModelForCausalLM.from_pretrained(
            path.parent, gguf_file=path.name, local_files_only=True, dtype=torch.float32, **dense
        )
        progress.step("tokenizer")
        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True)
    # the weights are dense: what is left of the GGUF quantizer only blocks save_pretrained
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    return model.eval(), tokenizer


def store(entry: Path, key: str, source: Path, model: Any, tokenizer: Any) -> bool:
    """Write ``entry`` whole or not at all; False (and a line on stderr) when it cannot be written."""
    parent = entry.parent
    partial: Path | None = None
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned(parent)
        needed = sum(p.numel() * p.element_size() for p in model.state_dict().values()) + FREE_SPACE_MARGIN
        free = shutil.disk_usage(parent).free
        if free < needed:
            print(
                f"structgen: not caching the converted model: {free >> 20} MiB free in {parent}, "
                f"{needed >> 20} MiB needed",
                file=sys.stderr,
            )
            return False
        partial = Path(tempfile.mkdtemp(prefix=f"{PARTIAL_PREFIX}{os.getpid()}-", dir=parent))
        with _quiet_transformers():
            model.save_pretrained(partial)
            tokenizer.save_pretrained(partial)
        files = {p.name: p.stat().st_size for p in sorted(partial.iterdir()) if p.is_file()}
        manifest = {"format": FORMAT, "key": key, "source": str(source), "files": files}
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        for file in partial.iterdir():
            os.chmod(file, 0o644)  # a shared cache folder serves every user
        os.chmod(partial, 0o755)
        if entry.exists() and not is_valid(entry, key):
            shutil.rmtree(entry)
        try:
            os.rename(partial, entry)
        except OSError:
            if not is_valid(entry, key):  # else another process wrote the same entry first
                raise
        return True
    except Exception as exc:  # noqa: BLE001 - a read-only home, a full disk: the cache is an optimization
        print(f"structgen: cannot write the model cache {entry}: {exc}", file=sys.stderr)
        return False
    finally:
        if partial is not None and partial.exists():
            shutil.rmtree(partial, ignore_errors=True)


def is_valid(entry: Path, key: str) -> bool:
    """Whether ``entry`` is a complete entry for ``key`` (its manifest, every file of its size)."""
    try:
        manifest = json.loads((entry / MANIFEST).read_text())
        if manifest.get("format") != FORMAT or manifest.get("key") != key:
            return False
        files = manifest["files"]
        return bool(files) and all((entry / name).stat().st_size == size for name, size in files.items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def remove_abandoned(folder: Path) -> None:
    """Remove the partial entries of processes that are gone (killed while writing)."""
    for partial in folder.glob(f"{PARTIAL_PREFIX}*"):
        match = re.match(re.escape(PARTIAL_PREFIX) + r"(\d+)-", partial.name)
        if match and not _alive(int(match.group(1))):
            shutil.rmtree(partial, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, another user's
        return True
    return True


def _model_from(entry: Path, dtype: Any) -> Any:
    from transformers import AutoModelForCausalLM

    model: Any = AutoModelForCausalLM.from_pretrained(entry, local_files_only=True, dtype=dtype)
    return model.eval()


def _tokenizer_from(entry: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(entry, local_files_only=True)


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "none"


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """transformers' own progress bars off while structgen loads (its "Loading weights" bar)."""
    from transformers.utils import logging

    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()  # type: ignore[no-untyped-call]


@contextlib.contextmanager
def _counting_gguf_tensors(progress: Progress) -> Iterator[None]:
    """Count the tensors transformers dequantizes (its loop's tqdm bar, replaced by ``progress``)."""
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:
        yield
        return
    original = getattr(gguf_utils, "tqdm", None)
    if original is None:  # another transformers: the step shows without a count
        yield
        return

    def counted(items: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        items = list(items)
        progress.step("weights: dequantizing tensors", same_step=True)
        for done, item in enumerate(items):
            progress.count(done, len(items))
            yield item
        progress.count(len(items), len(items))

    setattr(gguf_utils, "tqdm", counted)
    try:
        yield
    finally:
        setattr(gguf_utils, "tqdm", original)


class Progress:
    """The first load's steps on stderr: a line redrawn twice a second on a terminal,
    a single line otherwise (logs stay clean)."""

    def __init__(self, name: str, entry: Path | None, steps: int, stream: TextIO | None = sys.stderr) -> None:
        self.name = name
        self.entry = entry
        self.steps = steps
        self.stream = stream
        self.live = bool(stream is not None and stream.isatty())
        self.number = 0
        self.text = ""
        self.counted = ""
        self.started = time.perf_counter()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Progress:
        cached = "once, then cached" if self.entry is not None else "the model cache is off"
        if self.stream is not None and not self.live:
            print(f"structgen: converting {self.name} ({cached})", file=self.stream, flush=True)
        elif self.live:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def step(self, text: str, same_step: bool = False) -> None:
        with self._lock:
            self.number += 0 if same_step else 1
            self.text, self.counted = text, ""
        self._draw()

    def count(self, done: int, total: int) -> None:
        percent = 100 * done // max(total, 1)
        with self._lock:
            changed = f"({percent}%)" not in self.counted
            self.counted = f" {done}/{total} ({percent}%)"
        if changed:  # a redraw per percent, not per tensor
            self._draw()

    def __exit__(self, kind: object, *rest: object) -> None:
        self._done.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.live and self.stream is not None:
            seconds = time.perf_counter() - self.started
            ending = "stopped" if kind is not None else "converted"
            where = f"; cached in {self.entry}" if self.entry is not None and kind is None else ""
            self.stream.write(f"\rstructgen: {ending} {self.name} in {seconds:.0f} s{where}\x1b[K\n")
            self.stream.flush()

    def _tick(self) -> None:
        while not self._done.wait(0.5):
            self._draw()

    def _draw(self) -> None:
        if not self.live or self.stream is None:
            return
        with self._lock:
            seconds = time.perf_counter() - self.started
            line = (
                f"\rstructgen: converting {self.name} [{self.number}/{self.steps}] "
                f"{self.text}{self.counted}  {seconds:.0f} s\x1b[K"
            )
            self.stream.write(line)
            self.stream.flush()
