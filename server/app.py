"""The OpenAI-compatible HTTP server: ``create_app(model, tokenizer)`` is a FastAPI app.

``POST /v1/chat/completions`` (whole or streamed), ``GET /v1/models``, ``GET /health``.
Every bad request is a 4xx with an OpenAI error body (FastAPI's own 422s become
400s); a failure after a stream started is an SSE ``error`` event.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Any, AsyncIterator

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException
from structgen.decoding import DecodeOptions, Sequence
from structgen.sampling import SamplingParams

from server.chat import ChatPrompt
from server.engine import Engine, Job
from server.errors import APIError, bad_request
from server.grammars import OutputPlan, plan_output
from server.output import ChoiceStream, check_output, finish_reason, message, read_output
from server.protocol import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    Choice,
    ChunkChoice,
    ModelCard,
    ModelList,
    Usage,
)
from server.tool_syntax import HERMES, ToolSyntax

log = logging.getLogger("structgen.server")

DEFAULT_MAX_TOKENS = 512
MAX_STOPS = 4
DISCONNECT_POLL_SECONDS = 0.25


def create_app(
    model: Any,
    tokenizer: Any,
    *,
    model_id: str = "structgen",
    api_key: str | None = None,
    syntax: ToolSyntax = HERMES,
    default_max_tokens: int = DEFAULT_MAX_TOKENS,
) -> FastAPI:
    """An app serving ``model`` as ``model_id``; with ``api_key``, every ``/v1``
    request must send ``Authorization: Bearer <api_key>``."""
    engine = Engine(model, tokenizer)
    prompt = ChatPrompt(tokenizer, syntax)
    created = int(time.time())
    app = FastAPI(title="structgen", docs_url=None, redoc_url=None)
    _install_error_handlers(app)

    async def authorized(request: Request) -> None:
        if api_key is not None and request.headers.get("authorization") != f"Bearer {api_key}":
            raise APIError("invalid API key", status=401, code="invalid_api_key")

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models", dependencies=[Depends(authorized)])
    async def models() -> ModelList:
        card = ModelCard(id=model_id, created=created, tool_call_syntax=syntax.name, tools_in_template=prompt.native_tools)
        return ModelList(data=[card])

    @app.post("/v1/chat/completions", dependencies=[Depends(authorized)], response_model=None)
    async def chat_completions(body: ChatCompletionRequest, request: Request) -> Any:
        if body.model != model_id:
            raise APIError(f"the model {body.model!r} does not exist (this server has {model_id!r})", status=404, param="model", code="model_not_found")
        if body.logprobs:
            raise bad_request("logprobs are not supported yet", "logprobs")
        if body.model_extra:
            log.info("ignored request fields: %s", ", ".join(sorted(body.model_extra)))
        plan = plan_output(body, syntax)
        prompt_ids = prompt.token_ids(body.messages, plan.tools)
        job = Job(prompt_ids, plan, body.n, _max_tokens(body, len(prompt_ids), engine.context, default_max_tokens), _options(body))
        reply = _Reply(f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), model_id, engine, plan, syntax, job)
        if body.stream:
            include_usage = body.stream_options is not None and body.stream_options.include_usage
            return StreamingResponse(reply.events(include_usage), media_type="text/event-stream")
        if body.stream_options is not None:
            raise bad_request("stream_options is only allowed with stream: true", "stream_options")
        return JSONResponse(reply.completion(await _run_unless_gone(engine, job, request)).model_dump())

    return app


class _Reply:
    """One request's answer, whole or as a stream of chunks."""

    def __init__(self, id: str, created: int, model: str, engine: Engine, plan: OutputPlan, syntax: ToolSyntax, job: Job) -> None:
        self.id, self.created, self.model = id, created, model
        self.engine, self.plan, self.syntax, self.job = engine, plan, syntax, job

    def completion(self, sequences: list[Sequence]) -> ChatCompletion:
        choices = []
        for index, sequence in enumerate(sequences):
            text = sequence.text(self.engine.info)
            reading = read_output(self.plan, self.syntax, text, True, self.job.options.stop)
            check_output(self.plan, reading)
            reason = finish_reason(self.plan, sequence.finish_reason, reading.calls)
            choices.append(Choice(index=index, message=message(reading), finish_reason=reason))
        return ChatCompletion(id=self.id, created=self.created, model=self.model, choices=choices, usage=self._usage(sequences))

    async def events(self, include_usage: bool) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        updates: asyncio.Queue[list[str] | None] = asyncio.Queue()

        def on_step(texts: list[str]) -> None:  # on the decode thread
            loop.call_soon_threadsafe(updates.put_nowait, texts)

        self.job.on_step = on_step
        streams = [ChoiceStream(self.plan, self.syntax, self.job.options.stop) for _ in range(self.job.n)]
        task = asyncio.ensure_future(self.engine.run(self.job))
        task.add_done_callback(lambda _: updates.put_nowait(None))
        try:
            while (texts := await updates.get()) is not None:
                for index, text in enumerate(texts):
                    for delta in streams[index].deltas(text, final=False):
                        yield self._chunk(index, delta)
            sequences = task.result()
            for index, sequence in enumerate(sequences):
                text = sequence.text(self.engine.info)
                reading = read_output(self.plan, self.syntax, text, True, self.job.options.stop)
                check_output(self.plan, reading)
                for delta in streams[index].deltas(text, final=True):
                    yield self._chunk(index, delta)
                yield self._chunk(index, {}, finish_reason(self.plan, sequence.finish_reason, reading.calls))
            if include_usage:
                usage = ChatCompletionChunk(id=self.id, created=self.created, model=self.model, choices=[], usage=self._usage(sequences))
                yield f"data: {usage.model_dump_json()}\n\n"
            yield "data: [DONE]\n\n"
        except APIError as exc:
            yield f"data: {_json(exc.body())}\n\n"
        except Exception as exc:  # headers are sent: the only way left to report it
            log.exception("stream %s failed", self.id)
            yield f"data: {_json(APIError(f'generation failed: {exc}', status=500).body())}\n\n"
        finally:
            if not task.done():  # the client went away: stop decoding for it
                task.cancel()

    def _chunk(self, index: int, delta: dict[str, Any], reason: str | None = None) -> str:
        chunk = ChatCompletionChunk(
            id=self.id, created=self.created, model=self.model, choices=[ChunkChoice(index=index, delta=delta, finish_reason=reason)]
        )
        return f"data: {chunk.model_dump_json()}\n\n"

    def _usage(self, sequences: list[Sequence]) -> Usage:
        completion = sum(len(s.output) for s in sequences)
        prompt = len(self.job.prompt_ids)
        return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


async def _run_unless_gone(engine: Engine, job: Job, request: Request) -> list[Sequence]:
    """``engine.run(job)``, cancelled if the client disconnects meanwhile."""
    task = asyncio.ensure_future(engine.run(job))
    while not task.done():
        await asyncio.wait([task], timeout=DISCONNECT_POLL_SECONDS)
        if not task.done() and await request.is_disconnected():
            task.cancel()
            raise APIError("the client disconnected", status=499, code="client_disconnected")
    return task.result()


def _max_tokens(body: ChatCompletionRequest, prompt_tokens: int, context: int, default: int) -> int:
    """``max_completion_tokens`` (or the older ``max_tokens``), within the context."""
    asked = body.max_completion_tokens or body.max_tokens
    room = context - prompt_tokens if context else None
    if room is not None and room < 1:
        raise bad_request(f"the prompt is {prompt_tokens} tokens; the model's context is {context}", "messages", "context_length_exceeded")
    if asked is None:
        return default if room is None else min(default, room)
    if room is not None and asked > room:
        raise bad_request(
            f"the prompt ({prompt_tokens} tokens) and max tokens ({asked}) exceed the model's context ({context})",
            "max_completion_tokens" if body.max_completion_tokens else "max_tokens",
            "context_length_exceeded",
        )
    return asked


def _options(body: ChatCompletionRequest) -> DecodeOptions:
    stops = (body.stop,) if isinstance(body.stop, str) else tuple(body.stop or ())
    if len(stops) > MAX_STOPS or not all(stops):
        raise bad_request(f"stop is up to {MAX_STOPS} non-empty strings", "stop")
    try:
        sampling = SamplingParams(
            temperature=body.temperature or 0.0,
            top_p=body.top_p if body.top_p is not None else 1.0,
            seed=body.seed,
            repetition_penalty=body.repetition_penalty or 1.0,
        )
    except ValueError as exc:
        raise bad_request(str(exc)) from None
    return DecodeOptions(sampling, True, stops)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def api_error(_: Request, exc: APIError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers())

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        location = [str(part) for part in first.get("loc", ()) if part != "body"]
        param = ".".join(location) or None
        text = f"{param}: {first.get('msg', 'invalid request')}" if param else str(first.get("msg", "invalid request"))
        return await api_error(_, bad_request(text, param))

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("request failed")
        return await api_error(_, APIError(f"internal error: {exc}", status=500))

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return await api_error(_, APIError(str(exc.detail), status=exc.status_code))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
