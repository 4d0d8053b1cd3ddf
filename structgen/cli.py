"""The ``structgen`` command."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Sequence

SAMPLE_TEXT = 'Déjà vu: {"emoji": "😀", "日本": [1, 2.5e3]}\n\tdone '


TOOL_SYNTAXES = ("hermes", "llama3_json", "mistral", "qwen3_coder", "deepseek_v3", "deepseek_v31")
"""``--tool-syntax``'s choices: ``structgen.server.syntax_choice.SYNTAXES``'s names (a test
keeps them equal; the server is not imported to read the command line)."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="structgen", description="Guaranteed-valid structured output for language models."
    )
    parser.add_argument("--version", action="store_true", help="print the version and whether the engine is compiled")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser("demo", help="constrained generation on the bundled model: an object, a function call")
    demo.add_argument("--model", help="model folder or .gguf file (default: the bundled SmolLM2-135M-Instruct)")
    vocab = commands.add_parser("vocab", help="show the exact token bytes of a model's vocabulary")
    vocab.add_argument("--model", help="model folder or .gguf file (default: the bundled SmolLM2-135M-Instruct)")
    vocab.add_argument("--text", default=SAMPLE_TEXT, help="a text to split into tokens and their bytes")
    check = commands.add_parser("validate", help="check tool calls (one JSON per line) against tool definitions")
    check.add_argument("--tools", required=True, help="a JSON file: a list of tool definitions (OpenAI or Anthropic)")
    check.add_argument("calls", help="a JSON Lines file of calls (OpenAI tool_call, Anthropic tool_use or {name, arguments})")
    check.add_argument("--json", action="store_true", help="one JSON result a line instead of a report")
    serve = commands.add_parser("serve", help="an OpenAI-compatible server: chat completions, completions, responses")
    serve.add_argument("--model", help="model folder or .gguf file (default: the bundled SmolLM2-135M-Instruct)")
    serve.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="where the model runs")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument("--api-key", help="require 'Authorization: Bearer KEY' on /v1 requests")
    serve.add_argument("--model-id", help="the model's name in the API (default: the model file's name)")
    serve.add_argument("--max-batch", type=int, default=16, help="sequences decoded together; more wait in a queue (default 16)")
    serve.add_argument("--max-requests", type=int, default=64, help="requests in flight; more get HTTP 429 (default 64)")
    serve.add_argument(
        "--shutdown-grace",
        type=float,
        default=25.0,
        metavar="SECONDS",
        help="on SIGTERM, running requests get this long to finish, then end with a 503 (default 25)",
    )
    serve.add_argument(
        "--max-stored-responses",
        type=int,
        default=1000,
        metavar="N",
        help="Responses API answers kept in memory for GET /v1/responses/{id} and previous_response_id (default 1000)",
    )
    serve.add_argument(
        "--stored-response-seconds",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="how long a stored response is kept (default 3600)",
    )
    serve.add_argument(
        "--protect-metrics",
        action="store_true",
        help="require the API key on /metrics and /openapi.json too (with --api-key; /health stays open)",
    )
    serve.add_argument(
        "--tool-syntax",
        choices=TOOL_SYNTAXES,
        help="the tool-call syntax the model writes (default: read from its chat template; docs/server.md)",
    )
    serve.add_argument(
        "--backend",
        default="transformers",
        choices=["transformers", "vllm"],
        help="what runs the model: transformers in this process (default), or vLLM's engine (docs/vllm.md)",
    )
    engine = serve.add_argument_group("vLLM engine options (with --backend vllm; as vLLM's own options of the same names)")
    engine.add_argument("--tensor-parallel-size", type=int, help="GPUs each layer is split over")
    engine.add_argument("--pipeline-parallel-size", type=int, help="pipeline stages (across GPUs or nodes)")
    engine.add_argument("--data-parallel-size", type=int, help="model replicas in this server, vLLM balancing requests between them")
    engine.add_argument("--distributed-executor-backend", choices=["mp", "ray", "uni", "external_launcher"], help="how vLLM starts its workers (ray: multi-node on a Ray cluster)")
    engine.add_argument("--gpu-memory-utilization", type=float, help="fraction of GPU memory vLLM may use")
    engine.add_argument("--kv-cache-memory-bytes", type=int, help="KV cache size in bytes (on the CPU: set it, or VLLM_CPU_KVCACHE_SPACE)")
    engine.add_argument("--max-model-len", type=int, help="context length (prompt and output tokens)")
    engine.add_argument("--dtype", help="weights' dtype (auto, float16, bfloat16, float32)")
    engine.add_argument("--enforce-eager", action="store_true", default=None, help="no CUDA graphs / compilation")
    engine.add_argument("--tokenizer", help="tokenizer folder or name (default: the model's)")
    engine.add_argument("--tokenizer-mode", help="vLLM's tokenizer mode (auto, slow, mistral, ...)")
    engine.add_argument("--trust-remote-code", action="store_true", default=None, help="let the model's repository run its own code")
    engine.add_argument("--seed", type=int, help="vLLM's engine seed")
    engine.add_argument("--logits-processors", nargs="+", default=[], metavar="MODULE:CLASS", help="more vLLM logits processors, applied after structgen's")
    args = parser.parse_args(argv)

    if args.version:
        import structgen

        engine = "compiled with mypyc" if structgen.COMPILED else "pure Python"
        print(f"structgen {structgen.__version__} (engine: {engine})")
        return 0
    if args.command == "demo":
        from structgen.demo import run_demo

        return run_demo(args.model)
    if args.command == "vocab":
        return _vocab(args.model, args.text)
    if args.command == "validate":
        return _validate(args.tools, args.calls, args.json)
    if args.command == "serve" and args.backend == "vllm":
        return _serve_vllm(args)
    if args.command == "serve":
        given = [name for name in VLLM_OPTIONS if getattr(args, name) not in (None, [])]
        if given:
            print(f"structgen serve: --{given[0].replace('_', '-')} is a vLLM option: add --backend vllm", file=sys.stderr)
            return 2
        return _serve(args)
    parser.print_help()
    return 2


def _vocab(model: str | None, text: str) -> int:
    """Print facts about a vocabulary that grammar-constrained decoding depends on."""
    from structgen import TokenizerError, TokenizerInfo, bundled_model_path, load_tokenizer
    from structgen.engine.dfa import DEAD
    from structgen.engine.vocab import build_trie

    try:
        source = model or str(bundled_model_path())
        started = time.perf_counter()
        tokenizer = load_tokenizer(source)
        loaded = time.perf_counter()
        info = TokenizerInfo.from_huggingface(tokenizer)
        built = time.perf_counter()
    except (TokenizerError, OSError) as exc:  # ModelNotFoundError is an OSError
        print(f"structgen vocab: {exc}", file=sys.stderr)
        return 1
    trie = build_trie(info.decoded_vocab, info.special_token_ids)
    trie_built = time.perf_counter()

    vocab = info.decoded_vocab
    partial_utf8 = sum(1 for b in vocab if b and not _is_utf8(b))
    longest = max(range(info.vocab_size), key=lambda i: len(vocab[i]))
    digit_table = [DEAD] * 256
    for digit in b"0123456789":
        digit_table[digit] = 0
    digit_ids, _ = trie.walk(digit_table, 0)

    print(f"model:            {source}")
    print(f"vocabulary:       {info.kind}, {info.vocab_size} token ids")
    print(f"special ids:      {len(info.special_token_ids)} (never allowed by a grammar)")
    names = ", ".join(f"{i} {info.special_token_texts.get(i, '?')}" for i in info.stop_token_ids)
    print(f"stop ids:         {names}")
    spellable = "yes" if not info.unspellable_bytes else f"no, missing {info.unspellable_bytes}"
    print(f"every byte has a single-byte token: {spellable}")
    print(f"prepends a space when encoding from the start: {'yes' if info.prepends_space else 'no'}")
    print(f"partial UTF-8:    {partial_utf8} tokens are not valid UTF-8 on their own")
    print(f"longest token:    {len(vocab[longest])} bytes, id {longest}: {vocab[longest]!r}")
    print(f"trie:             {trie.node_count} nodes, depth {trie.max_depth}")
    print(f"all-digit tokens: {len(digit_ids)} (found by walking the trie with a [0-9]+ automaton)")
    print(
        f"time:             tokenizer {loaded - started:.2f} s, token bytes {built - loaded:.2f} s, "
        f"trie {trie_built - built:.2f} s"
    )
    ids = tokenizer.encode(text, add_special_tokens=False)
    print(f"\n{text!r} is {len(ids)} tokens:")
    for token_id in ids:
        print(f"  {token_id:>7}  {vocab[token_id]!r}")
    joined = info.join_bytes(ids)
    expected = text.encode("utf-8")
    if info.prepends_space and joined.startswith(b" "):
        joined = joined[1:]
    print(f"their bytes join to the text's UTF-8: {'yes' if joined == expected else 'NO'}")
    return 0 if joined == expected else 1


def _validate(tools_path: str, calls_path: str, as_json: bool) -> int:
    """Check every call of a JSON Lines file: 0 when all are valid, 1 when some
    are not, 2 when the input cannot be read."""
    import json

    from structgen import ToolDefinitionError, ToolSet, validate_tool_call

    try:
        with open(tools_path, encoding="utf-8") as file:
            tools = ToolSet.read(json.load(file))
        with open(calls_path, encoding="utf-8") as file:
            lines = file.read().splitlines()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ToolDefinitionError) as exc:
        print(f"structgen validate: {exc}", file=sys.stderr)
        return 2
    valid = total = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            call = json.loads(line)
        except json.JSONDecodeError:
            call = line  # raw text: the result says where it stops being JSON
        result = validate_tool_call(tools, call)
        total += 1
        valid += bool(result)
        if as_json:
            print(json.dumps({"line": number, **result.as_dict()}, ensure_ascii=False, default=str))
        elif result:
            print(f"line {number}: valid call to {result.name}")
        else:
            details = "\n".join(f"  {e.pointer or '#'} [{e.keyword}] {e.message}" for e in result.errors)
            print(f"line {number}: invalid call to {result.name or '?'}\n{details}")
    if not as_json:
        print(f"{valid} of {total} calls valid")
    return 0 if valid == total else 1


def _serve(args: argparse.Namespace) -> int:
    """Load the model, then serve it until interrupted (imports the server lazily:
    FastAPI and uvicorn are the ``server`` extra); SIGTERM gives running requests
    ``--shutdown-grace`` seconds (``structgen/server/shutdown.py``)."""
    from pathlib import Path

    from structgen import ModelNotFoundError, bundled_model_path, load_model

    try:
        import uvicorn

        from structgen.server import Limits, create_app
        from structgen.server.shutdown import uvicorn_options
    except ImportError as exc:
        print(f"structgen serve: {exc} (install structgen[server])", file=sys.stderr)
        return 2
    limits = _serve_limits(args, Limits)
    if limits is None:
        return 2
    source = args.model or str(bundled_model_path())
    try:
        loaded, tokenizer = load_model(source, device=args.device)
    except (ModelNotFoundError, OSError, ValueError) as exc:
        print(f"structgen serve: {exc}", file=sys.stderr)
        return 1
    name = args.model_id or Path(source).stem
    app = create_app(loaded, tokenizer, model_id=name, api_key=args.api_key, limits=limits, protect_metrics=args.protect_metrics,
                     syntax=_tool_syntax(args))
    _freeze_loaded()
    print(f"serving {name} on http://{args.host}:{args.port}/v1", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", **uvicorn_options(app))
    return 0


def _tool_syntax(args: argparse.Namespace) -> Any:
    """``--tool-syntax``'s syntax, or None (read from the chat template)."""
    if args.tool_syntax is None:
        return None
    from structgen.server.syntax_choice import SYNTAXES

    return SYNTAXES[args.tool_syntax]


def _serve_limits(args: argparse.Namespace, limits: Any) -> Any:
    """``serve``'s ``structgen.server.Limits``, or None (the reason printed) when an option is
    out of range or ``--protect-metrics`` lacks ``--api-key``."""
    if args.protect_metrics and args.api_key is None:
        print("structgen serve: --protect-metrics puts /metrics behind the API key: give --api-key too", file=sys.stderr)
        return None
    try:
        return limits(
            max_batch=args.max_batch,
            max_requests=args.max_requests,
            shutdown_grace_seconds=args.shutdown_grace,
            max_stored_responses=args.max_stored_responses,
            stored_response_seconds=args.stored_response_seconds,
        )
    except ValueError as exc:
        print(f"structgen serve: {exc}", file=sys.stderr)
        return None


def _freeze_loaded() -> None:
    """Keep what serving loaded (model, tokenizer, libraries) out of every later
    collection: a full one rescans it all, 0.1 s or more inside whichever decoding
    step triggers it (docs/tables.md, garbage collection)."""
    import gc

    gc.collect()
    gc.freeze()


VLLM_OPTIONS = (
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "distributed_executor_backend",
    "gpu_memory_utilization",
    "kv_cache_memory_bytes",
    "max_model_len",
    "dtype",
    "enforce_eager",
    "tokenizer",
    "tokenizer_mode",
    "trust_remote_code",
    "seed",
    "logits_processors",
)
"""``serve``'s options that go to vLLM's ``AsyncEngineArgs`` as they are (but the last)."""


def _serve_vllm(args: argparse.Namespace) -> int:
    """The same server on vLLM's engine (``structgen/server/engine_vllm.py``); vLLM is
    imported only here."""
    try:
        import vllm  # noqa: F401
    except ImportError:
        print(
            "structgen serve: --backend vllm needs vLLM, which is not installed here "
            "(`make vllm-env` builds .venv-vllm with it; elsewhere pip install 'structgen[vllm]')",
            file=sys.stderr,
        )
        return 2
    if args.model is None:
        print(
            "structgen serve: --backend vllm needs --model (a model folder or hub name vLLM loads; "
            "`make vllm-model` converts the bundled SmolLM2 into .cache/smollm2-135m-instruct-f32)",
            file=sys.stderr,
        )
        return 2
    if args.device != "auto":
        print("structgen serve: --device is the transformers backend's; vLLM uses the platform it was built for", file=sys.stderr)
        return 2
    import uvicorn
    from vllm.engine.arg_utils import AsyncEngineArgs

    from structgen.server import Limits, create_app
    from structgen.server.engine_vllm import VLLMEngine
    from structgen.server.shutdown import uvicorn_options

    limits = _serve_limits(args, Limits)
    if limits is None:
        return 2
    options = {name: getattr(args, name) for name in VLLM_OPTIONS[:-1] if getattr(args, name) is not None}
    try:
        engine_args = AsyncEngineArgs(model=args.model, max_num_seqs=args.max_batch, **options)
        engine = VLLMEngine(engine_args, logits_processors=tuple(args.logits_processors))
    except (OSError, ValueError, TypeError) as exc:  # vLLM's config errors are ValueErrors
        print(f"structgen serve: {exc}", file=sys.stderr)
        return 1
    name = args.model_id or _vllm_model_name(args.model)
    app = create_app(
        None, engine.tokenizer, model_id=name, api_key=args.api_key, limits=limits, engine=engine, protect_metrics=args.protect_metrics,
        syntax=_tool_syntax(args),
    )
    _freeze_loaded()
    print(f"serving {name} with vLLM on http://{args.host}:{args.port}/v1", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", **uvicorn_options(app))
    return 0


def _vllm_model_name(model: str) -> str:
    """The API's model name for ``--model`` under vLLM: a local folder's name, or the
    hub id as given ("org/name"), which is what clients send."""
    from pathlib import Path

    path = Path(model)
    return path.resolve().name if path.exists() else model


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True

