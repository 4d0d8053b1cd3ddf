"""The OpenAI-compatible HTTP server: ``create_app(model, tokenizer)`` is a FastAPI app.

``POST /v1/chat/completions``, ``POST /v1/completions`` and ``POST /v1/responses``
(whole or streamed; ``GET`` and ``DELETE /v1/responses/{id}`` for stored ones),
``GET /v1/models``, ``GET /v1/models/{id}``, ``GET /health``, ``GET /metrics``
(and ``/openapi.json``; with ``protect_metrics``, both behind the API key).
Every bad request is a 4xx with an OpenAI error body (FastAPI's own 422s become
400s, an unknown path is a 404 ``not_found``, a wrong method a 405
``method_not_allowed``); a failure after a
stream started is an SSE ``error`` event; an unexpected failure a 500 saying
only "internal error" and the request's id (``errors.InternalErrors``). All
requests share one decoding batch (``scheduler.py``); on shutdown, running ones
get a grace period (``shutdown.py``).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any, AsyncIterator, Callable, TypeVar

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException
from structgen.compiled_budget import BUDGET
from structgen.decoding import Sequence
from structgen.lark_rules import GrammarError

from structgen.server.chat import ChatPrompt, check_content
from structgen.server.chat_reply import ChatReply
from structgen.server.completions import DEFAULT_MAX_TOKENS as COMPLETION_MAX_TOKENS
from structgen.server.completions import CompletionReply, prompt_ids
from structgen.server.engine import Engine
from structgen.server.errors import APIError, InternalErrors, bad_request, model_not_found, route_error, validation_error
from structgen.server.grammars import REJECTED, SGLANG_KEYS, OutputPlan, content_constraint, content_format, plan_output
from structgen.server.limits import Limits, check_constraint_sizes, check_content_type, check_nesting, check_tool_count, read_body
from structgen.server.metrics import ServerMetrics
from structgen.server.params import check_room, decode_options, max_tokens
from structgen.server.protocol import ChatCompletionRequest, CompletionRequest, GenerationRequest, ModelCard, ModelList
from structgen.server.reasoning_plan import request_reasoning, template_kwargs
from structgen.server.request_metrics import RequestMetrics
from structgen.server.response_store import ResponseStore
from structgen.server.responses import translate
from structgen.server.responses_protocol import DeletedResponse, Response, ResponsesRequest
from structgen.server.responses_reply import ResponsesReply
from structgen.server.serving import Generations, Updates, wait_unless_gone
from structgen.server.shutdown import Drain
from structgen.server.syntax_choice import syntax_for
from structgen.server.tool_syntax import ToolSyntax

log = logging.getLogger("structgen.server")

EXTENSION_FIELDS = frozenset({"structured_outputs", *SGLANG_KEYS, *REJECTED})
"""Extra request fields ``grammars.extension_formats`` reads: honoured, or a 400."""

Body = TypeVar("Body", bound=BaseModel)


def create_app(
    model: Any,
    tokenizer: Any,
    *,
    model_id: str = "structgen",
    api_key: str | None = None,
    syntax: ToolSyntax | None = None,
    limits: Limits = Limits(),
    engine: Any = None,
    protect_metrics: bool = False,
) -> FastAPI:
    """An app serving ``model`` as ``model_id``; with ``api_key``, every ``/v1``
    request must send ``Authorization: Bearer <api_key>`` (and, with
    ``protect_metrics``, ``/metrics`` and ``/openapi.json`` too; ``/health`` stays
    open). ``syntax``: the tool-call syntax (default: the one the chat template
    writes). ``engine``: another backend with ``Engine``'s interface
    (``engine_vllm.VLLMEngine``; then ``model`` is unused), started by the app's
    lifespan when it has ``start()``. ``app.state.drain`` gives running requests
    their grace on SIGTERM, then ends them (``shutdown.py``; the lifespan chains its
    signal handler before uvicorn's)."""
    if protect_metrics and api_key is None:
        raise ValueError("protect_metrics puts /metrics behind the API key: give api_key too")
    # a tag that is one special token is written as that token only by a backend
    # that lets it through the grammar (structgen.server.engine.Engine; the default engine)
    syntax = syntax_for(tokenizer, syntax, tag_tokens=getattr(engine, "special_tag_tokens", engine is None))
    metrics = ServerMetrics(queued=lambda: engine.scheduler.queued, running=lambda: engine.scheduler.running)

    def observe(stats: Any) -> None:  # on the scheduler thread, after each step
        metrics.batch_size.observe(stats.batch_size)
        metrics.mask_seconds.observe(stats.mask_seconds)
        metrics.step_seconds.observe(stats.forward_seconds)

    if engine is None:
        engine = Engine(model, tokenizer, limits.max_batch, observe)
    generations = Generations(engine, limits, metrics)
    BUDGET.configure(limits.max_compiled_grammars, limits.max_compiled_bytes)  # the process's, for every grammar compiled
    prompt = ChatPrompt(tokenizer, syntax)
    created = int(time.time())
    drain = Drain(limits.shutdown_grace_seconds)
    stored = ResponseStore(limits.max_stored_responses, limits.stored_response_seconds)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        start = getattr(engine, "start", None)
        if start is not None:
            await start()
        drain.attach(asyncio.get_running_loop())
        restore = drain.on_signals()  # SIGTERM: the running requests' grace starts (shutdown.py)
        try:
            yield
        finally:
            restore()
            drain.stop()
            engine.scheduler.stop()

    # the OpenAPI document is served by a route of our own when it is behind the key
    app = FastAPI(
        title="structgen", docs_url=None, redoc_url=None, openapi_url=None if protect_metrics else "/openapi.json", lifespan=lifespan
    )
    app.state.drain = drain
    app.add_middleware(InternalErrors)  # inside the metrics: a 500 it answers is counted
    app.add_middleware(RequestMetrics, counter=metrics.requests)
    _install_error_handlers(app)
    expected = None if api_key is None else f"Bearer {api_key}".encode("utf-8")

    async def authorized(request: Request) -> None:
        # constant time: how much of a guess matches must not show in how long it takes
        given = request.headers.get("authorization", "").encode("latin-1")  # the header's own bytes
        if expected is not None and not hmac.compare_digest(given, expected):
            raise APIError("invalid API key", status=401, code="invalid_api_key")

    keyed = [Depends(authorized)] if protect_metrics else []

    async def read(request: Request, model: type[Body]) -> Body:
        """The body as ``model``: declared JSON, read within the size and time
        limits, for this server's model."""
        check_content_type(request)
        raw = await read_body(request, limits.max_body_bytes, limits.body_seconds)
        try:
            body = model.model_validate_json(raw)
        except ValidationError as exc:
            raise RequestValidationError(exc.errors()) from None
        asked = getattr(body, "model")
        if asked != model_id:
            raise model_not_found(asked, model_id)
        return body

    def checked(body: GenerationRequest) -> None:
        """The request's constraints' sizes and nesting; its fields read as options."""
        if body.stream_options is not None and not body.stream:
            raise bad_request("stream_options is only allowed with stream: true", "stream_options", "invalid_value")
        check_tool_count(body, limits.max_tools)
        check_constraint_sizes(body, limits.max_schema_bytes)
        check_nesting(body, limits.max_json_depth)
        ignored = set(body.model_extra or ()) - EXTENSION_FIELDS
        if ignored:
            log.info("ignored request fields: %s", ", ".join(sorted(ignored)))

    async def parsed(request: Request, model: type[Body]) -> Body:
        body = await read(request, model)
        assert isinstance(body, GenerationRequest)
        checked(body)
        return body

    def chat_job(body: ChatCompletionRequest, param: str, prompt_param: str) -> tuple[Callable[[], list[Sequence]], Callable[[], OutputPlan]]:
        """What a chat request (or a Responses request in chat form) generates:
        ``build`` plans its output and prepares its sequences (in a worker thread);
        ``plan`` is that output plan, once built. ``param`` names the max tokens'
        field and ``prompt_param`` the prompt's, for a 400."""
        plans: list[OutputPlan] = []
        options = decode_options(body)

        def build() -> list[Sequence]:
            plan = plan_output(body, syntax, structural=getattr(engine, "structural_tags", False))
            text = prompt.render(body.messages, plan.tools, template_kwargs(body))
            plan = replace(plan, reasoning=request_reasoning(tokenizer, text, body, plan))
            plans.append(plan)
            ids = prompt.encode(text)
            budget = max_tokens(
                body.max_completion_tokens or body.max_tokens, param, len(ids), prompt_param, engine.context, limits.default_max_tokens, limits.max_tokens
            )
            check_room(plan.constraint.grammar, budget, param, engine.info, plan.param)
            return prepared(lambda: engine.prepare([ids], plan, body.n, budget, options), plan)

        return build, lambda: plans[0]

    async def respond(
        request: Request, body: GenerationRequest, build: Callable[[], list[Sequence]], reply: Callable[[], ChatReply | CompletionReply | ResponsesReply]
    ) -> Any:
        """Start the generation; stream it, or answer once it is complete (a 503
        once the server is shutting down; ended with one past its grace)."""
        drain.check_open()
        if body.stream:
            updates = Updates(engine)
            handle = drain.track(await generations.start(build, updates))
            include_usage = body.stream_options is not None and body.stream_options.include_usage
            return StreamingResponse(reply().events(handle, updates, include_usage), media_type="text/event-stream")
        handle = drain.track(await generations.start(build))
        return JSONResponse(reply().completion(await wait_unless_gone(handle, request)).model_dump())

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metrics", dependencies=keyed)
    async def prometheus() -> PlainTextResponse:
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    if protect_metrics:

        @app.get("/openapi.json", dependencies=keyed, include_in_schema=False)
        async def openapi() -> JSONResponse:
            return JSONResponse(app.openapi())

    def card() -> ModelCard:
        return ModelCard(id=model_id, created=created, tool_call_syntax=syntax.name, tools_in_template=prompt.native_tools)

    @app.get("/v1/models", dependencies=[Depends(authorized)])
    async def models() -> ModelList:
        return ModelList(data=[card()])

    # ``:path``: an id such as "org/name" arrives with its slash (the SDK sends it as %2F)
    @app.get("/v1/models/{model:path}", dependencies=[Depends(authorized)])
    async def retrieve_model(model: str) -> ModelCard:
        if model != model_id:
            raise model_not_found(model, model_id)
        return card()

    @app.post("/v1/chat/completions", dependencies=[Depends(authorized)], response_model=None)
    async def chat_completions(request: Request) -> Any:
        body = await parsed(request, ChatCompletionRequest)
        check_content(body.messages)
        if body.logprobs:
            raise bad_request("logprobs are not supported yet", "logprobs", "unsupported_parameter")
        generations.check_fits(body.n)
        build, plan = chat_job(body, "max_completion_tokens" if body.max_completion_tokens else "max_tokens", "messages")

        def reply() -> ChatReply:
            return ChatReply(_id("chatcmpl"), int(time.time()), model_id, engine, plan(), syntax, decode_options(body).stop, metrics)

        return await respond(request, body, build, reply)

    @app.post("/v1/responses", dependencies=[Depends(authorized)], response_model=None)
    async def create_response(request: Request) -> Any:
        body = await read(request, ResponsesRequest)
        history = stored.history(body.previous_response_id) if body.previous_response_id is not None else []
        translation = translate(body, history)
        chat = translation.chat
        try:
            checked(chat)
            check_content(chat.messages)
            build, plan = chat_job(chat, "max_output_tokens", "input")

            def reply() -> ResponsesReply:
                return ResponsesReply(_id("resp"), int(time.time()), model_id, engine, plan(), syntax, decode_options(chat).stop,
                                      metrics, body, translation, stored)

            return await respond(request, chat, build, reply)
        except APIError as exc:
            raise translation.renamed(exc) from None

    @app.get("/v1/responses/{response_id}", dependencies=[Depends(authorized)])
    async def retrieve_response(response_id: str) -> Response:
        return stored.fetch(response_id).response

    @app.delete("/v1/responses/{response_id}", dependencies=[Depends(authorized)])
    async def delete_response(response_id: str) -> DeletedResponse:
        stored.fetch(response_id)
        stored.delete(response_id)
        return DeletedResponse(id=response_id)

    @app.post("/v1/completions", dependencies=[Depends(authorized)], response_model=None)
    async def completions(request: Request) -> Any:
        body = await parsed(request, CompletionRequest)
        generations.check_fits(len(body.prompts()) * body.n)
        options = decode_options(body)
        plan: OutputPlan | None = None

        def build() -> list[Sequence]:
            nonlocal plan
            form = content_format(body)
            content = content_constraint(form)
            plan = OutputPlan(content, content, param=form.param if form is not None else None)
            prompts = prompt_ids(body, tokenizer, engine.info.vocab_size)
            budget = min(
                max_tokens(body.max_tokens, "max_tokens", len(ids), "prompt", engine.context, COMPLETION_MAX_TOKENS, limits.max_tokens)
                for ids in prompts
            )
            check_room(content.grammar, budget, "max_tokens", engine.info, plan.param)
            return prepared(lambda: engine.prepare(prompts, plan, body.n, budget, options), plan)

        def reply() -> CompletionReply:
            assert plan is not None  # build() made it
            return CompletionReply(_id("cmpl"), int(time.time()), model_id, engine, plan, options.stop, body.n, metrics)

        return await respond(request, body, build, reply)

    return app


def prepared(prepare: Callable[[], list[Sequence]], plan: OutputPlan) -> list[Sequence]:
    """``prepare()``, where compiling checks the constraint against the vocabulary
    (``structgen.spelling``): a refusal names the request field it came from."""
    try:
        return prepare()
    except GrammarError as exc:
        if getattr(exc, "code", None) is not None and getattr(exc, "param", None) is None:
            exc.param = plan.param  # type: ignore[attr-defined]
        raise


def _id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def api_error(_: Request, exc: APIError) -> JSONResponse:
        return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers())

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return await api_error(_, validation_error(list(exc.errors())))

    # no handler for Exception here: errors.InternalErrors answers those (see there why)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        """Starlette's routing failures (an unknown path, a wrong method), with a code."""
        path = request.url.path
        under_v1 = exc.status_code == 404 and any(
            isinstance(route, APIRoute) and request.method in route.methods and route.path_regex.match("/v1" + path)
            for route in request.app.routes
        )
        error = route_error(exc.status_code, str(exc.detail), request.method, path, exc.headers, under_v1=under_v1)
        return await api_error(request, error)
