"""The converted-model cache (structgen.model_cache): keyed by the GGUF file's bytes,
hit on the second load with the same model, written whole or not at all, in
``$STRUCTGEN_CACHE_DIR``.

Most tests stand a tiny Llama and a word-level tokenizer in for the conversion
(a file of random bytes named ``.gguf`` is the source: only its bytes matter to the
cache); the ``model`` test runs the real conversion of the bundled SmolLM2.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import structgen
from structgen import model_cache


def tiny_tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<unk>", "<eos>", "hello", "world", "the", "cache", "is", "warm"]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", eos_token="<eos>")


def tiny_llama(seed: int) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=8, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
    )
    return LlamaForCausalLM(config).eval()


class FakeConversion:
    """Stands in for ``model_cache.convert``: a tiny model whose weights depend on the
    file's bytes (so a changed file gives another model), and a count of calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, path: Path, progress: Any = None) -> tuple[Any, Any]:
        self.calls += 1
        seed = int.from_bytes(path.read_bytes()[:4], "little")
        return tiny_llama(seed), tiny_tokenizer()


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeConversion:
    monkeypatch.setenv("STRUCTGEN_CACHE_DIR", str(tmp_path / "cache"))
    conversion = FakeConversion()
    monkeypatch.setattr(model_cache, "convert", conversion)
    return conversion


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "models" / "Tiny-Model.Q4_0.gguf"
    path.parent.mkdir()
    path.write_bytes(os.urandom(4096))
    return path


def logits(model: Any, tokenizer: Any, text: str = "hello world the cache is warm") -> Any:
    import torch

    ids = torch.tensor([tokenizer.encode(text)])
    with torch.no_grad():
        return model(ids).logits


def entries(cache: Path) -> list[Path]:
    folder = cache / "models"
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []


def partials(cache: Path) -> list[Path]:
    folder = cache / "models"
    return sorted(folder.glob(f"{model_cache.PARTIAL_PREFIX}*")) if folder.is_dir() else []


def test_second_load_hits_the_cache_with_the_same_model(fake: FakeConversion, gguf: Path, tmp_path: Path) -> None:
    import torch

    first, tokenizer = structgen.load_model(gguf, device="cpu")
    assert fake.calls == 1
    (entry,) = entries(tmp_path / "cache")
    assert entry.name.startswith("Tiny-Model.Q4_0-")
    assert model_cache.is_valid(entry, model_cache.entry_key(gguf))

    second, cached_tokenizer = structgen.load_model(gguf, device="cpu")
    assert fake.calls == 1  # read from the cache, not converted
    assert second is not first
    assert torch.equal(logits(first, tokenizer), logits(second, cached_tokenizer))
    assert cached_tokenizer.get_vocab() == tokenizer.get_vocab()
    assert cached_tokenizer.eos_token == "<eos>"


def test_dtype_is_applied_on_a_miss_and_on_a_hit(fake: FakeConversion, gguf: Path) -> None:
    import torch

    missed, tokenizer = structgen.load_model(gguf, device="cpu", dtype=torch.bfloat16)
    hit, _ = structgen.load_model(gguf, device="cpu", dtype=torch.bfloat16)
    assert fake.calls == 1
    assert missed.dtype == hit.dtype == torch.bfloat16
    # the buffers a module computes (RoPE's inv_freq) stay float32 on a miss too, as
    # from_pretrained leaves them: cast, the two gave different logits for some weights
    hit_buffers = dict(hit.named_buffers())
    for name, buffer in missed.named_buffers():
        assert buffer.dtype == hit_buffers[name].dtype and torch.equal(buffer, hit_buffers[name]), name
    assert torch.equal(logits(missed, tokenizer), logits(hit, tokenizer))


def test_a_changed_file_is_a_miss(fake: FakeConversion, gguf: Path, tmp_path: Path) -> None:
    import torch

    before, tokenizer = structgen.load_model(gguf, device="cpu")
    stat = gguf.stat()
    data = bytearray(gguf.read_bytes())
    data[0] ^= 0xFF  # same size, same modification time: only the bytes differ
    gguf.write_bytes(bytes(data))
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    after, _ = structgen.load_model(gguf, device="cpu")
    assert fake.calls == 2
    assert len(entries(tmp_path / "cache")) == 2
    assert not torch.equal(logits(before, tokenizer), logits(after, tokenizer))


def test_the_key_covers_the_converters_versions(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import transformers

    key = model_cache.entry_key(gguf)
    assert model_cache.entry_key(gguf) == key
    monkeypatch.setattr(transformers, "__version__", transformers.__version__ + ".other")
    assert model_cache.entry_key(gguf) != key
    monkeypatch.undo()
    monkeypatch.setattr(model_cache, "FORMAT", "structgen-model-0")
    assert model_cache.entry_key(gguf) != key


def test_an_interrupted_write_leaves_no_entry(
    fake: FakeConversion, gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while the cache is written (the weights are, the tokenizer not yet):
    nothing is left, and the next load converts and writes the entry whole."""
    from transformers import PreTrainedTokenizerFast

    def interrupted(self: Any, *args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(PreTrainedTokenizerFast, "save_pretrained", interrupted)
        with pytest.raises(KeyboardInterrupt):
            structgen.load_model(gguf, device="cpu")
    assert entries(tmp_path / "cache") == [] and partials(tmp_path / "cache") == []

    structgen.load_model(gguf, device="cpu")
    structgen.load_model(gguf, device="cpu")
    assert fake.calls == 2
    assert len(entries(tmp_path / "cache")) == 1


def test_a_killed_write_is_no_entry_and_is_cleaned_up(fake: FakeConversion, gguf: Path, tmp_path: Path) -> None:
    """A process killed while writing leaves a partial folder under a name no load
    reads; the next conversion removes it once that process is gone."""
    folder = tmp_path / "cache" / "models"
    folder.mkdir(parents=True)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = folder / f"{model_cache.PARTIAL_PREFIX}{int(gone.stdout)}-abc"
    live = folder / f"{model_cache.PARTIAL_PREFIX}{os.getpid()}-def"
    for partial in (dead, live):
        partial.mkdir()
        (partial / "model.safetensors").write_bytes(b"half of it")

    structgen.load_model(gguf, device="cpu")
    assert fake.calls == 1
    assert not dead.exists()
    assert live.exists()  # another load, still writing
    assert len(entries(tmp_path / "cache")) == 1


def _truncate(entry: Path) -> None:
    weights = entry / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-10])


def _garble(entry: Path) -> None:
    weights = entry / "model.safetensors"  # the same size: only reading it fails
    weights.write_bytes(b"\xff" * weights.stat().st_size)


def _no_manifest(entry: Path) -> None:
    (entry / model_cache.MANIFEST).unlink()


def _no_tokenizer(entry: Path) -> None:
    (entry / "tokenizer.json").unlink()


@pytest.mark.parametrize("damage", [_truncate, _garble, _no_manifest, _no_tokenizer], ids=lambda f: f.__name__[1:])
def test_a_damaged_entry_is_converted_again(
    fake: FakeConversion, gguf: Path, tmp_path: Path, damage: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    first, tokenizer = structgen.load_model(gguf, device="cpu")
    (entry,) = entries(tmp_path / "cache")
    damage(entry)
    again, _ = structgen.load_model(gguf, device="cpu")
    assert fake.calls == 2
    assert torch.equal(logits(first, tokenizer), logits(again, tokenizer))
    (rewritten,) = entries(tmp_path / "cache")
    assert model_cache.is_valid(rewritten, model_cache.entry_key(gguf))
    structgen.load_model(gguf, device="cpu")
    assert fake.calls == 2


def test_the_cache_lives_in_structgen_cache_dir(
    fake: FakeConversion, gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    monkeypatch.setenv("STRUCTGEN_CACHE_DIR", str(elsewhere))
    structgen.load_model(gguf, device="cpu")
    assert len(entries(elsewhere)) == 1
    assert not (tmp_path / "cache").exists()


def test_off_writes_nothing(fake: FakeConversion, gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STRUCTGEN_CACHE_DIR", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.setenv("HOME", str(home))
    assert model_cache.models_dir() is None
    structgen.load_model(gguf, device="cpu")
    structgen.load_model(gguf, device="cpu")
    assert fake.calls == 2
    assert not any(home.rglob("*")) and not (tmp_path / "cache").exists()


def test_load_tokenizer_reads_an_entry_and_writes_none(fake: FakeConversion, gguf: Path, tmp_path: Path) -> None:
    assert model_cache.cached_tokenizer(gguf) is None
    assert not (tmp_path / "cache").exists()
    _, tokenizer = structgen.load_model(gguf, device="cpu")
    # transformers cannot read the random bytes: the tokenizer comes from the entry
    assert structgen.load_tokenizer(gguf).get_vocab() == tokenizer.get_vocab()


def test_progress_is_one_line_in_a_log() -> None:
    log = io.StringIO()
    with model_cache.Progress("m.gguf", Path("/cache/m"), steps=3, stream=log) as progress:
        progress.step("weights: reading the GGUF file")
        progress.count(5, 10)
        progress.step("tokenizer")
        progress.step("writing the cache")
    assert log.getvalue() == "structgen: converting m.gguf (once, then cached)\n"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_shows_steps_and_percent() -> None:
    terminal = Terminal()
    with model_cache.Progress("m.gguf", Path("/cache/m"), steps=3, stream=terminal) as progress:
        progress.step("weights: reading the GGUF file")
        progress.step("weights: dequantizing tensors", same_step=True)
        progress.count(68, 272)
        progress.step("tokenizer")
    text = terminal.getvalue()
    assert "[1/3] weights: dequantizing tensors 68/272 (25%)" in text
    assert "[2/3] tokenizer" in text
    assert text.endswith("cached in /cache/m\x1b[K\n")


@pytest.mark.model
def test_bundled_model_converted_then_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real conversion of the bundled SmolLM2, then a load from the cache: no
    conversion, the same logits, the same tokenizer."""
    import torch

    cache = tmp_path / "cache"
    monkeypatch.setenv("STRUCTGEN_CACHE_DIR", str(cache))
    real = model_cache.convert
    calls: list[Path] = []

    def counted(path: Path, progress: Any = None) -> tuple[Any, Any]:
        calls.append(path)
        return real(path, progress)

    monkeypatch.setattr(model_cache, "convert", counted)
    try:
        converted, gguf_tokenizer = structgen.load_model(device="cpu")
        assert len(calls) == 1
        cached, cached_tokenizer = structgen.load_model(device="cpu")
        assert len(calls) == 1

        messages = [{"role": "user", "content": "Extract the employee as JSON. Maria Lopez is 34."}]
        texts = [gguf_tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)]
        assert cached_tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) == texts[0]
        texts.append("naïve café 東京 {\"age\": 34}\n\t<|im_end|>")
        for text in texts:
            assert cached_tokenizer.encode(text) == gguf_tokenizer.encode(text)
        assert cached_tokenizer.get_vocab() == gguf_tokenizer.get_vocab()
        assert cached_tokenizer.all_special_ids == gguf_tokenizer.all_special_ids
        assert cached_tokenizer.eos_token_id == gguf_tokenizer.eos_token_id
        assert structgen.load_tokenizer().get_vocab() == gguf_tokenizer.get_vocab()

        ids = torch.tensor([gguf_tokenizer.encode(texts[0])])
        with torch.no_grad():
            assert torch.equal(converted(ids).logits, cached(ids).logits)
        assert converted.config.tie_word_embeddings and cached.lm_head.weight is cached.model.embed_tokens.weight
    finally:
        shutil.rmtree(cache, ignore_errors=True)  # half a gigabyte
