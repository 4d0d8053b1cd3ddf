"""Request fuzzer: random and malformed OpenAI requests against a live server.

The server runs in the worker process: ``structgen.server.create_app`` on the tiny
random-weight Llama over SmolLM2's tokenizer (``tests/tiny_model.py``), under
uvicorn on a free port, as ``tests/server/test_server.py`` serves it. Requests: valid
chat and text completions (``response_format`` text / json_object /
json_schema, ``guided_json``/``regex``/``grammar``/``choice`` with inputs from the
other fuzzers, tools with every ``tool_choice``, streaming, ``n``, ``stop``,
``seed``, sampling), then mutated: fields of the wrong type, huge or negative
numbers, deep nesting, unknown fields, bad tools and formats, missing fields, a
wrong key, bodies that are not JSON, paths that do not exist.

Oracles, for every request:

- a 2xx with a well-formed body (a ``chat.completion`` or ``text_completion``;
  streamed, ``data:`` events of chunks ending in ``[DONE]``) or a 4xx whose body
  is ``{"error": {"message", "type", "param", "code"}}`` with a code; never a 5xx
  (but a 500 ``output_validation_failed`` where the schema's report is inexact,
  which docs/server.md describes), never an SSE error event but a request's own
  (a 4xx code), never a hang (the client's timeout);
- a 2xx that finished (``finish_reason`` ``stop``, no ``stop`` strings) keeps its
  constraint: the JSON parses and validates against the schema
  (``structgen.schema_validator.json_schema_validator``, the server's own check), a
  regex ``fullmatch``es, a choice is one, a grammar accepts; a tool call's
  arguments validate against its tool's parameters;
- the server answers ``GET /health`` afterwards.
"""

from __future__ import annotations

import copy
import json
import random
import re
from typing import Any

from common import Failure, random_json, shown

NAME = "request"
CASE_SECONDS = 120.0
LOADS_MODEL = True  # no address-space limit for this worker (torch)
MODEL = "tiny"
KEY = "fuzz-key"
CLIENT_SECONDS = 60.0
FIELDS = ["model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "n", "seed", "stop",
          "stream", "stream_options", "response_format", "tools", "tool_choice", "parallel_tool_calls",
          "guided_json", "guided_regex", "guided_grammar", "guided_choice", "logprobs", "repetition_penalty",
          "prompt", "echo", "suffix", "best_of", "user", "frequency_penalty", "unknown_field"]
JUNK = [None, True, -1, 0, 1.5, "x", "", [], {}, [1, "a"], {"a": 1}, 10**30, -(10**30), 1e308, "\u0000", "é" * 50,
        [{"role": "user"}], {"type": "function"}, "auto", "required", "none"]
PROMPTS = ["hi", "Give me JSON.", "What is the weather in Paris?", "", "é" * 20, "<|im_start|>", "[TOOL_CALLS]"]


def generate(rng: random.Random) -> dict[str, Any]:
    import grammar_fuzz
    import regex_fuzz
    import schema_fuzz

    chat = rng.random() < 0.85
    body: dict[str, Any] = {"model": MODEL, "max_tokens": rng.randint(1, 40)}
    if chat:
        body["messages"] = [{"role": "user", "content": rng.choice(PROMPTS)}]
        if rng.random() < 0.15:
            body["messages"].insert(0, {"role": "system", "content": "Answer briefly."})
    else:
        body["prompt"] = rng.choice(PROMPTS) if rng.random() < 0.8 else [rng.choice(PROMPTS), rng.choice(PROMPTS)]
    roll = rng.random()
    schema = lambda: schema_fuzz.gen_schema(rng, rng.randint(0, 2), [])  # noqa: E731
    if roll < 0.2:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "out", "schema": schema()}}
    elif roll < 0.28:
        body["response_format"] = {"type": rng.choice(["json_object", "text"])}
    elif roll < 0.4:
        body["guided_json"] = schema()
    elif roll < 0.5:
        body["guided_regex"] = regex_fuzz.regex(rng, rng.randint(1, 3))[0]
    elif roll < 0.57:
        body["guided_grammar"] = grammar_fuzz.generate(rng)["text"]
    elif roll < 0.62:
        body["guided_choice"] = [rng.choice(PROMPTS[:4]) + str(i) for i in range(rng.randint(1, 3))]
    if chat and rng.random() < 0.25:
        names = ["get_weather", "note", "f_1"][: rng.randint(1, 3)]
        body["tools"] = [{"type": "function", "function": {"name": name, "parameters": {
            "type": "object", "properties": {"a": schema()}, "required": ["a"] if rng.random() < 0.5 else []}}}
            for name in names]
        body["tool_choice"] = rng.choice(["auto", "none", "required",
                                          {"type": "function", "function": {"name": rng.choice(names)}}])
        if rng.random() < 0.3:
            body["parallel_tool_calls"] = rng.random() < 0.5
    if rng.random() < 0.3:
        body["stream"] = True
        if rng.random() < 0.3:
            body["stream_options"] = {"include_usage": rng.random() < 0.5}
    if rng.random() < 0.2:
        body["n"] = rng.randint(1, 3)
    if rng.random() < 0.1:
        body["stop"] = rng.choice(["}", "\n", ["a", "b"], ""])
    body["seed"] = rng.randint(0, 1000)  # sampling too answers the same on a replay
    if rng.random() < 0.3:
        body["temperature"] = rng.choice([0, 0.7, 1.0, 2.0])
    if rng.random() < 0.1:
        body["top_p"] = rng.choice([0.1, 0.9, 1.0])
    request: dict[str, Any] = {"method": "POST", "path": "/v1/chat/completions" if chat else "/v1/completions",
                               "headers": {"Authorization": f"Bearer {KEY}"}, "body": body}
    if rng.random() < 0.45:
        for _ in range(rng.randint(1, 3)):
            mutate(rng, request)
    return request


def mutate(rng: random.Random, request: dict[str, Any]) -> None:
    body = request.get("body")
    op = rng.randrange(12)
    if body is None or op == 0:  # a body that is not JSON, or JSON nested deeper than any limit
        request["body"] = None
        request["raw"] = rng.choice(["{not json", "", "null", "[]", "\"x\"", "{\"model\": \"tiny\",",
                                     "[" * 10000 + "]" * 10000, "{\"a\":" * 3000 + "1" + "}" * 3000,
                                     json.dumps(body)[: rng.randint(0, 40)] if body else "{"])
        if rng.random() < 0.3:
            request["headers"]["Content-Type"] = rng.choice(["text/plain", "application/json; charset=latin-1", ""])
    elif op == 1:
        body[rng.choice(FIELDS)] = rng.choice(JUNK)
    elif op == 2 and body:
        del body[rng.choice(list(body))]
    elif op == 3:
        body[rng.choice(FIELDS)] = nested(rng, rng.choice([20, 70, 200]))
    elif op == 4:
        body["messages"] = [rng.choice([
            {"role": "wizard", "content": "hi"}, {"role": "tool", "content": "x"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "x"}}]},
            {"role": "user", "content": [{"type": "text"}]}, {"role": "user"}, {"role": "user", "content": None},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                                   "function": {"name": "f", "arguments": "{bad"}}]},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                                   "function": {"name": "f", "arguments": "[" * 100}}]},
            {"role": "user", "content": "x" * rng.choice([10, 5000, 200_000])},
        ]) for _ in range(rng.randint(1, 3))]
    elif op == 5:
        body["tools"] = rng.choice([[], [{"type": "function"}], [{"type": "function", "function": {"name": "bad name!"}}],
                                    [{"type": "function", "function": {"name": "f", "parameters": {"type": 5}}}],
                                    [{"type": "function", "function": {"name": "f", "parameters": random_json(rng)}}],
                                    [{"type": "custom", "custom": {"name": "f"}}],
                                    [{"type": "function", "function": {"name": "f"}}] * 2])
        body["tool_choice"] = rng.choice(["auto", "required", {"type": "function", "function": {"name": "nope"}}, 3])
    elif op == 6:
        body["response_format"] = rng.choice([{"type": "json_schema"}, {"type": "json_schema", "json_schema": {}},
                                              {"type": "json_schema", "json_schema": {"name": "x", "schema": random_json(rng)}},
                                              {"type": "xml"}, "json", {"type": "json_object", "schema": {}}])
    elif op == 7:
        body[rng.choice(["max_tokens", "n", "seed", "temperature", "top_p", "max_completion_tokens"])] = \
            rng.choice([10**30, -1, 0, 1e308, -1e308, 2**63, 4097, 17, 0.5])
    elif op == 8:
        body[rng.choice(["guided_json", "guided_regex", "guided_grammar", "guided_choice"])] = rng.choice(
            ["(unclosed", "a" * 70_000, {"$ref": "#"}, {"type": "strng"}, 'start: start "a"', "\\U00050000", "\x04",
             ["a"] * 1000, [], "%import os.path\nstart: \"a\"", {"pattern": "(?<=a)b"}, True, False])
    elif op == 9:
        request["headers"]["Authorization"] = rng.choice(["Bearer wrong", "", "Basic eA==", f"Bearer {KEY} extra"])
    elif op == 10:
        request["path"] = rng.choice(["/chat/completions", "/v1/chat/completion", "/v1/models/tiny", "/v1/embeddings",
                                      "/v1/completions", "/v1/chat/completions/", "/health"])
        request["method"] = rng.choice(["POST", "POST", "GET", "PUT", "DELETE"])
    else:
        body["model"] = rng.choice(["gpt-9", "", MODEL.upper(), None, 5])


def nested(rng: random.Random, depth: int) -> Any:
    value: Any = rng.choice([1, "a", None])
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


# -- checking (in the worker) ---------------------------------------------------


def setup() -> dict[str, Any]:
    import importlib.util
    import logging
    import socket
    import threading
    import time
    from collections import deque
    from pathlib import Path

    import httpx
    import uvicorn

    import structgen
    from structgen.server import Limits, create_app

    records: deque[str] = deque(maxlen=200)

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    root = logging.getLogger()
    root.handlers[:] = [Keep()]
    root.handlers[0].setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    path = Path(__file__).resolve().parent.parent / "tests" / "tiny_model.py"
    spec = importlib.util.spec_from_file_location("fuzz_tiny_model", path)
    assert spec is not None and spec.loader is not None
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    tokenizer = structgen.load_tokenizer()
    model = tiny.tiny_model(tokenizer)
    app = create_app(model, tokenizer, model_id=MODEL, api_key=KEY, limits=Limits(compile_seconds=20.0))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", log_config=None))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(1200):
        if server.started or not thread.is_alive():
            break
        time.sleep(0.1)
    if not server.started:
        raise RuntimeError("the server did not start")
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=CLIENT_SECONDS)
    return {"server": server, "thread": thread, "client": client, "records": records}


def teardown(state: dict[str, Any]) -> None:
    state["client"].close()
    state["server"].should_exit = True
    state["thread"].join(10)


def check(state: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    import httpx

    client = state["client"]
    state["records"].clear()
    body = case.get("body")
    content = json.dumps(body, ensure_ascii=False).encode() if body is not None else case.get("raw", "").encode()
    headers = {"Content-Type": "application/json", **case["headers"]}
    headers = {k: v for k, v in headers.items() if v != ""}
    try:
        with client.stream(case["method"], case["path"], content=content, headers=headers) as response:
            raw = response.read()
    except httpx.TimeoutException:
        raise Failure("hang", f"no answer in {CLIENT_SECONDS:g} s", key="timeout") from None
    except httpx.TransportError as exc:
        raise Failure("connection", f"{type(exc).__name__}: {exc}", {"log": list(state["records"])},
                      key=type(exc).__name__) from None
    status = response.status_code
    stats: dict[str, Any] = {f"{status // 100}xx": 1}
    if status >= 500:
        error = _json(raw)
        code = error.get("error", {}).get("code") if isinstance(error, dict) and isinstance(error.get("error"), dict) else None
        if not (status == 500 and code == "output_validation_failed" and not _exact(body)):
            raise Failure("5xx", f"{case['method']} {case['path']}: {status} {raw[:500]!r}",
                          {"log": list(state["records"])}, key=f"{status}:{code}")
        stats["output_validation_failed"] = 1
    elif status >= 400:
        _error_body(raw, status)
    elif case["path"].endswith("completions") and case["method"] == "POST" and isinstance(body, dict):
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            choices = _streamed(raw, state)
        else:
            choices = _whole(raw)
        stats.update(_constraints(body, choices))
    health = _health(client)
    if health != 200:
        raise Failure("health", f"GET /health answered {health} after the request", {"log": list(state["records"])},
                      key=str(health))
    return stats


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _error_body(raw: bytes, status: int) -> None:
    body = _json(raw)
    error = body.get("error") if isinstance(body, dict) else None
    if not (isinstance(error, dict) and {"message", "type", "param", "code"} <= set(error)
            and isinstance(error["message"], str) and error["message"] and isinstance(error["type"], str)
            and isinstance(error["code"], str) and error["code"]):
        raise Failure("error-body", f"a {status} whose body is no OpenAI error: {raw[:500]!r}", key=str(status))


def _whole(raw: bytes) -> list[dict[str, Any]]:
    body = _json(raw)
    if not (isinstance(body, dict) and isinstance(body.get("choices"), list) and body["choices"]
            and body.get("object") in ("chat.completion", "text_completion") and isinstance(body.get("usage"), dict)):
        raise Failure("body", f"a 2xx whose body is not a completion: {raw[:500]!r}", key="shape")
    choices = []
    for choice in body["choices"]:
        if body["object"] == "chat.completion":
            message = choice.get("message") or {}
            choices.append({"content": message.get("content"), "tool_calls": message.get("tool_calls") or [],
                            "finish_reason": choice.get("finish_reason")})
        else:
            choices.append({"content": choice.get("text"), "tool_calls": [], "finish_reason": choice.get("finish_reason")})
        if not isinstance(choices[-1]["finish_reason"], str):
            raise Failure("body", f"a choice without a finish_reason: {shown(choice)}", key="finish_reason")
    return choices


def _streamed(raw: bytes, state: dict[str, Any]) -> list[dict[str, Any]]:
    events = [line[len("data: "):] for line in raw.decode("utf-8").split("\n") if line.startswith("data: ")]
    if not events or events[-1] != "[DONE]":
        last = _json(events[-1].encode()) if events else None
        error = last.get("error") if isinstance(last, dict) else None
        if isinstance(error, dict) and error.get("code") not in (None, "internal_error", "output_validation_failed"):
            return []  # a request's own error, found where its sequence was made (docs/server.md, "Isolation")
        raise Failure("stream", f"the stream did not end in [DONE]: {events[-3:]!r}"[:2000],
                      {"log": list(state["records"])}, key=str(error.get("code") if isinstance(error, dict) else "cut"))
    choices: dict[int, dict[str, Any]] = {}
    for data in events[:-1]:
        chunk = _json(data.encode())
        if not isinstance(chunk, dict) or not isinstance(chunk.get("choices"), list):
            raise Failure("stream", f"an event that is not a chunk: {data[:500]!r}", key="chunk")
        for choice in chunk["choices"]:
            into = choices.setdefault(choice.get("index", 0), {"content": None, "tool_calls": {}, "finish_reason": None})
            delta = choice.get("delta") if "delta" in choice else {"content": choice.get("text")}
            if delta.get("content") is not None:
                into["content"] = (into["content"] or "") + delta["content"]
            for call in delta.get("tool_calls") or []:
                slot = into["tool_calls"].setdefault(call.get("index", 0), {"function": {"name": "", "arguments": ""}})
                function = call.get("function") or {}
                slot["function"]["name"] += function.get("name") or ""
                slot["function"]["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                into["finish_reason"] = choice["finish_reason"]
    out = []
    for index in sorted(choices):
        choice = choices[index]
        if choice["finish_reason"] is None:
            raise Failure("stream", f"choice {index} streamed no finish_reason", key="finish_reason")
        out.append({**choice, "tool_calls": [choice["tool_calls"][i] for i in sorted(choice["tool_calls"])]})
    return out


def _constraints(body: dict[str, Any], choices: list[dict[str, Any]]) -> dict[str, Any]:
    """What a finished answer must keep: its content's constraint, its calls' schemas."""
    from structgen.schema_validator import json_schema_validator

    checked = 0
    tools = {tool["function"]["name"]: tool["function"].get("parameters") or {"type": "object"}
             for tool in body.get("tools") or [] if isinstance(tool, dict) and isinstance(tool.get("function"), dict)}
    for choice in choices:
        if choice["finish_reason"] == "length":
            continue  # cut by max_tokens: what it wrote so far need not be complete
        for call in choice["tool_calls"]:
            function = call.get("function") or {}
            name = function.get("name")
            if name not in tools:
                raise Failure("constraint", f"a call of {name!r}, which is no tool of the request", key="tool-name")
            cut = "-stop" if body.get("stop") else ""  # a stop string inside the call's JSON
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                raise Failure("constraint", f"a call's arguments are not JSON: {shown(function)}",
                              key="arguments" + cut) from None
            if not isinstance(arguments, dict):  # a function's arguments are an object, whatever its parameters allow
                raise Failure("constraint", f"a call's arguments are no JSON object: {shown(function)}",
                              key="arguments-object")
            errors = [e.message for e in json_schema_validator(tools[name]).iter_errors(arguments)]
            if errors:
                raise Failure("constraint", f"a call of {name} whose arguments break its schema: {errors[0]}",
                              {"arguments": arguments}, key="arguments-schema" + cut)
            checked += 1
        if choice["finish_reason"] != "stop" or choice["content"] is None or body.get("stop") or choice["tool_calls"]:
            continue
        if _content_check(body, choice["content"]):
            checked += 1
    return {"checked": checked}


def _content_check(body: dict[str, Any], text: str) -> bool:
    from structgen import Grammar
    from structgen.schema_validator import json_schema_validator

    format_ = body.get("response_format") if isinstance(body.get("response_format"), dict) else {}
    schema: Any = None
    if format_.get("type") == "json_schema":  # as structgen.server.grammars.content_format reads them
        schema = (format_.get("json_schema") or {}).get("schema")
        schema = {"type": "object"} if schema is None else schema
    elif format_.get("type") == "json_object":
        schema = format_.get("schema", {"type": "object"})  # instructor's and SGLang's json_object + schema
    elif "guided_json" in body:
        schema = json.loads(body["guided_json"]) if isinstance(body["guided_json"], str) else body["guided_json"]
    if schema is not None:
        try:
            value = json.loads(text)
        except ValueError:
            raise Failure("constraint", f"the answer is not JSON: {shown(text)}", key="json") from None
        errors = [e.message for e in json_schema_validator(schema).iter_errors(value)]
        if errors:
            raise Failure("constraint", f"the answer {shown(text)} breaks its schema: {errors[0]}", key="schema")
        return True
    if isinstance(body.get("guided_regex"), str):
        if re.fullmatch(body["guided_regex"], text) is None:
            raise Failure("constraint", f"the answer {text!r} does not fullmatch {body['guided_regex']!r}", key="regex")
        return True
    if isinstance(body.get("guided_choice"), list):
        if text not in body["guided_choice"]:
            raise Failure("constraint", f"the answer {text!r} is none of {body['guided_choice']!r}", key="choice")
        return True
    if isinstance(body.get("guided_grammar"), str):
        if not Grammar.from_lark(body["guided_grammar"]).accepts(text):
            raise Failure("constraint", f"the grammar refuses the answer {text!r}", key="grammar")
        return True
    return False


def _exact(body: Any) -> bool:
    """Whether every schema of the request (its content's, its tools' parameters)
    has an exact grammar as the server translates it: then no output can fail the
    server's check after generation."""
    from structgen.server.grammars import CONTENT_OPTIONS, SCHEMA_OPTIONS
    from structgen import Grammar

    if not isinstance(body, dict):
        return True
    format_ = body.get("response_format") if isinstance(body.get("response_format"), dict) else {}
    schema = (format_.get("json_schema") or {}).get("schema") if format_.get("type") == "json_schema" else \
        format_.get("schema") if format_.get("type") == "json_object" else body.get("guided_json")
    schemas = [(schema, CONTENT_OPTIONS)] if schema is not None else []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
            schemas.append((tool["function"].get("parameters") or {"type": "object"}, SCHEMA_OPTIONS))
    try:
        return all(Grammar.from_json_schema(s, **options).report.exact for s, options in schemas)
    except Exception:  # noqa: BLE001
        return True


def _health(client: Any) -> int:
    import httpx

    try:
        return client.get("/health", timeout=10.0).status_code
    except httpx.HTTPError:
        return 0
