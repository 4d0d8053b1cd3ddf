"""What every engine is fed: the grammars, the documents, the vocabularies.

All of it comes from installed packages or this folder, never from the network
(docs/design.md §9), and every engine gets the very same texts and token ids.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import platform
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).resolve().parent / "inputs"
DEFAULT_MASKBENCH = REPO.parent / "shared" / "data" / "maskbench-public.jsonl.gz"
JSON_SAMPLE = 100  # MaskBench instances per run (seeded, so every run feeds the same ones)
JSON_SEED = 20260
QUICK_JSON = 10
QUICK_PROGRAMS = 2
PROGRAM_SUFFIX = {"go": ".go", "java": ".java"}
PYTHON_MODULES = ["bisect.py", "colorsys.py", "copy.py", "fnmatch.py", "sched.py"]
"""The Python documents: these modules of the running Python's standard library, as written."""

GRAMMARS = ["json", "go", "java", "python"]
VOCABS = ["mistral_v3", "smollm2", "deepseek"]

sys.path.insert(0, str(REPO / "tests"))
import vocabularies  # noqa: E402  (the test suite's loaders of the real vocabularies)


@dataclass(frozen=True)
class Workload:
    """One grammar and the texts fed through it (none: a compile-only probe)."""

    grammar: str
    lark: str
    documents: list[str]
    source: str


def package_dir(name: str) -> Path:
    """An installed package's folder, found without importing it (syncode's
    imports pull in heavy dependencies we install without)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{name} is not installed (make bench installs it)")
    return Path(list(spec.submodule_search_locations)[0])


def syncode_grammar(language: str) -> str:
    """SynCode's lark grammar for ``language``, read at run time (never copied here)."""
    return next(package_dir("syncode").rglob(f"{language}.lark")).read_text()


def maskbench_path(flag: str | None) -> Path:
    return Path(flag or os.environ.get("STRUCTGEN_MASKBENCH") or DEFAULT_MASKBENCH)


def json_documents(maskbench: Path, count: int) -> tuple[list[str], str]:
    """A seeded sample of MaskBench's valid instances, serialized as MaskBench does;
    BFCL's function-calling records when the MaskBench file is absent."""
    if maskbench.exists():
        valid = [test["data"] for record in jsonl(maskbench) for test in record["tests"] if test["valid"]]
        source = f"{maskbench.name}: {count} of {len(valid)} valid instances, seed {JSON_SEED}"
    else:
        data = package_dir("bfcl_eval") / "data"
        valid = [record for name in ("BFCL_v4_simple_python.json", "BFCL_v4_multiple.json")
                 for record in jsonl(data / name)]
        source = f"bfcl_eval (MaskBench file {maskbench} missing): {count} of {len(valid)} records, seed {JSON_SEED}"
    sample = random.Random(JSON_SEED).sample(valid, count)
    return [json.dumps(document, ensure_ascii=False) for document in sample], source


def jsonl(path: Path) -> Iterator[Any]:
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)


def programs(language: str, count: int | None) -> list[str]:
    files = sorted((PROGRAMS / language).glob(f"*{PROGRAM_SUFFIX[language]}"))
    return [path.read_text() for path in files[:count]]


def load_workloads(grammars: list[str], maskbench: Path, quick: bool) -> list[Workload]:
    workloads = []
    for name in grammars:
        if name == "json":
            documents, source = json_documents(maskbench, QUICK_JSON if quick else JSON_SAMPLE)
            workloads.append(Workload(name, (REPO / "grammars" / "json.lark").read_text(), documents, source))
        elif name == "python":
            # structgen's own grammar (lark's, strings as automata) with lark's PythonIndenter
            # (it %declares _INDENT and _DEDENT); docs/indentation.md
            stdlib = Path(os.__file__).parent
            modules = PYTHON_MODULES[:QUICK_PROGRAMS] if quick else PYTHON_MODULES
            texts = [(stdlib / module).read_text() for module in modules]
            source = f"grammars/python.lark; Python {platform.python_version()}'s {', '.join(modules)}"
            workloads.append(Workload(name, (REPO / "grammars" / "python.lark").read_text(), texts, source))
        else:
            texts = programs(name, QUICK_PROGRAMS if quick else None)
            source = f"benchmarks/inputs/{name}/ ({len(texts)} programs)"
            workloads.append(Workload(name, syncode_grammar(name), texts, source))
    return workloads


def cpu_model() -> str:
    """The processor's model name (``platform.processor()`` is empty on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_vocab(name: str, scratch: Path) -> Any:
    """The Hugging Face tokenizer for a vocabulary name (``scratch`` holds any copy
    it needs; it must outlive the tokenizer's loading only)."""
    if name == "mistral_v3":
        return vocabularies.mistral_v3(scratch)
    return {"smollm2": vocabularies.smollm2, "deepseek": vocabularies.deepseek}[name]()
