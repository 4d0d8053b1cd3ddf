"""The model behind the endpoints on vLLM's v1 async engine (``structgen serve --backend vllm``).

``VLLMEngine`` offers what ``engine.Engine`` offers the endpoints — ``prepare``,
``submit``, ``text_so_far``, ``info``, ``context``, and ``engine.Handle`` itself
(its job a ``VLLMJob``, cancelled through ``VLLMEngine.cancel``) — so the same
server runs on vLLM, which brings tensor/pipeline parallelism, multi-node serving,
paged KV cache and its own continuous batching. structgen's masks come from
``StructgenLogitsProcessor``, configured per vLLM request through its
``extra_args``; each sequence of a request (``n`` choices, prompts of a text
completion) is one vLLM request.

- ``prepare`` (in a worker thread, under the server's compile-time limit) builds
  the sequences and has every vLLM worker compile their grammars
  (``StructgenWorkerExtension``) before anything is submitted: a grammar that does
  not compile is a 400, and the engine's step never compiles.
- ``auto`` tool choice: the free text's grammar, then the calls' grammar once the
  call trigger is written (``structgen_next_grammar`` / ``structgen_next_after``).
- Stop strings are vLLM's to find, the cut is made here as the default backend
  makes it; but where the output may hold tool calls, whose JSON no stop string
  may cut (``OutputPlan.stop_scope``), they are looked for here, in the content
  alone, and a sequence that meets one is ended (its vLLM request aborted); a
  stop token ends a sequence without being part of its output; usage
  counts the output's tokens. There is no jump-forward: every token is sampled
  (under the mask), so outputs may be split into tokens differently.

vLLM is imported only here, and only when the backend is chosen.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Callable

from structgen.decoding import DecodeOptions, Sequence, check_request, cut_at_stop
from structgen.engine.deadline import check_deadline, current_deadline
from structgen.integrations.request_args import NEXT_AFTER_KEY, NEXT_GRAMMAR_KEY, constraint_args
from structgen.tokenizer_info import TokenizerInfo

from structgen.server.engine import Handle
from structgen.utf8 import whole_characters
from structgen.server.errors import APIError, bad_request
from structgen.server.grammars import OutputPlan

log = logging.getLogger("structgen.server")

PROCESSOR = "structgen.integrations.vllm:StructgenLogitsProcessor"
WORKER_EXTENSION = "structgen.integrations.vllm.StructgenWorkerExtension"
PRECOMPILE_POLL_SECONDS = 0.01  # the first wait for the workers' compile; doubling up to the next
PRECOMPILE_MAX_POLL_SECONDS = 0.2


@dataclass(eq=False)
class VLLMJob:
    """One request's sequences, each a vLLM request (``params`` alike)."""

    sequences: list[Sequence]
    params: list[Any]  # vllm.SamplingParams, one per sequence
    on_step: Callable[[list[Sequence]], None] | None = None  # after each update, on the event loop
    cancel: threading.Event = field(default_factory=threading.Event)
    done: Future[list[Sequence]] = field(default_factory=Future)
    started: list[bool] = field(default_factory=list)  # per sequence: vLLM sent its first output
    task: asyncio.Task[None] | None = None


class Requests:
    """What ``app.py`` asks of ``engine.scheduler``: counts for ``/metrics``, and stop."""

    def __init__(self, engine: VLLMEngine) -> None:
        self._engine = engine

    @property
    def queued(self) -> int:
        """Sequences submitted that have no output yet (waiting in vLLM, or in prefill)."""
        return sum(not started for job in list(self._engine.jobs) for started in job.started)

    @property
    def running(self) -> int:
        """Sequences with output that have not finished."""
        return sum(
            started and not s.done for job in list(self._engine.jobs) for started, s in zip(job.started, job.sequences)
        )

    def stop(self) -> None:
        self._engine.stop()


class VLLMEngine:
    """A vLLM ``AsyncLLM`` serving one model; structgen's processor masks its logits.

    Made from ``vllm.AsyncEngineArgs`` (the processor and the worker extension are
    added to them); the engine itself starts in ``start()``, on the serving event
    loop (``create_app``'s lifespan calls it)."""

    def __init__(self, engine_args: Any, *, logits_processors: tuple[str, ...] = ()) -> None:
        from vllm.usage.usage_lib import UsageContext

        from structgen.integrations.vllm import served_tokenizer, tokenizer_info

        given = list(engine_args.logits_processors or [])
        engine_args.logits_processors = [PROCESSOR, *[p for p in [*logits_processors, *given] if p != PROCESSOR]]
        if engine_args.worker_extension_cls and engine_args.worker_extension_cls != WORKER_EXTENSION:
            raise ValueError("structgen serve --backend vllm sets vLLM's worker_extension_cls itself")
        engine_args.worker_extension_cls = WORKER_EXTENSION
        self.vllm_config = engine_args.create_engine_config(UsageContext.OPENAI_API_SERVER)
        model_config = self.vllm_config.model_config
        self.tokenizer = served_tokenizer(model_config)
        self.info: TokenizerInfo = tokenizer_info(model_config)
        self.context = int(model_config.max_model_len)
        self.max_num_seqs = int(self.vllm_config.scheduler_config.max_num_seqs)
        self.stop_ids = frozenset(self.info.stop_token_ids)
        self.llm: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.jobs: set[VLLMJob] = set()
        # each prepared sequence's vllm.SamplingParams, by id(sequence), until submit takes them for its job
        self.params: dict[int, Any] = {}
        self.scheduler = Requests(self)

    async def start(self) -> None:
        """Start vLLM's engine processes (blocking until they are up: tens of seconds)."""
        from vllm.v1.engine.async_llm import AsyncLLM

        if self.llm is None:
            self.loop = asyncio.get_running_loop()
            self.llm = AsyncLLM.from_vllm_config(self.vllm_config, disable_log_stats=True)

    def stop(self) -> None:
        for job in list(self.jobs):
            self.cancel(job)
        if self.llm is not None:
            self.llm.shutdown()
            self.llm = None

    def prepare(
        self, prompts: list[list[int]], plan: OutputPlan, n: int, max_tokens: int, options: DecodeOptions
    ) -> list[Sequence]:
        """``n`` sequences per prompt, their vLLM parameters attached (blocking: the
        workers compile the grammars meanwhile)."""
        if getattr(plan, "start_tokens", ()) or getattr(plan, "escape_token", None) is not None:
            # a tool-call tag that is one special token: create_app gives this backend the tag as text
            raise RuntimeError("internal error: a special-token tool-call tag reached the vLLM backend")
        reasoning = getattr(plan, "reasoning", None)
        constrained = plan.constraint.grammar is not None or plan.constraint.tags is not None or plan.tools is not None
        if reasoning is not None and (constrained or reasoning.budget is not None):
            # never a constraint dropped, nor applied to the thoughts (free text is read apart as on transformers)
            raise bad_request(
                "a reasoning section before a constrained answer, or a thinking budget, is not supported on the vLLM "
                "backend yet: turn thinking off where the template can (reasoning_effort: \"none\", or "
                "chat_template_kwargs), or serve with the transformers backend", "reasoning_effort", "unsupported_value")
        if plan.constraint.tags is not None:
            raise bad_request("structural tags are not supported on the vLLM backend yet (the transformers backend has "
                              "them)", plan.param or "response_format", "unsupported_value")
        args = self._constraint_args(plan)
        if args:
            self._precompile(args)
        sequences = []
        for prompt_ids in prompts:
            check_request(prompt_ids, max_tokens)
            for _ in range(n):
                sequence = Sequence(list(prompt_ids), plan.constraint, None, max_tokens, options)
                if plan.tools is not None:  # stop strings in the content alone: found here, not by vLLM
                    sequence.stop_scope = plan.stop_scope
                sequences.append(sequence)
        vllm_stops = options.stop if plan.tools is None else ()
        # set last: a request that fails here leaves no params behind (submit takes them)
        for index, sequence in enumerate(sequences):
            self.params[id(sequence)] = self._sampling_params(index, max_tokens, options, args, vllm_stops)
        return sequences

    def submit(self, sequences: list[Sequence], on_step: Callable[[list[Sequence]], None] | None = None) -> Handle:
        """Start the sequences' vLLM requests (on the running event loop)."""
        if self.llm is None or self.loop is None:
            raise RuntimeError("the vLLM engine is not started")
        params = [self.params.pop(id(s)) for s in sequences]
        job = VLLMJob(sequences, params, on_step, started=[False] * len(sequences))
        self.jobs.add(job)
        job.task = self.loop.create_task(self._run(job))
        # a task cancelled before its first step never runs _run's cleanup: it is done here
        job.task.add_done_callback(lambda _: self._end(job, None))
        return Handle(self, job)

    def cancel(self, job: VLLMJob) -> None:
        """Stop ``job``: its vLLM requests are aborted (from any thread). Once is
        enough: a job already cancelled, or ended, is left alone."""
        if job.cancel.is_set() or job.task is None or job.task.done():
            job.cancel.set()
            return
        job.cancel.set()
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(job.task.cancel)

    def text_so_far(self, sequence: Sequence) -> str:
        """The text of whole characters only: one split across tokens waits for the rest."""
        if sequence.cut is not None:
            return sequence.text(self.info)
        return whole_characters(self.info.join_bytes(sequence.output))

    def _constraint_args(self, plan: OutputPlan) -> dict[str, Any]:
        args = constraint_args(plan.constraint)
        if plan.trigger is not None:
            assert plan.calls is not None
            calls = constraint_args(plan.calls)
            if "structgen_grammar" not in calls:
                raise RuntimeError("internal error: the calls' constraint is not a lark grammar")
            args[NEXT_GRAMMAR_KEY] = calls["structgen_grammar"]
            args[NEXT_AFTER_KEY] = plan.trigger
        return args

    def _precompile(self, args: dict[str, Any]) -> None:
        """Every worker compiles ``args``' grammars (on a thread beside its step),
        within what is left of this compile's deadline (``run_within``); asked again
        until all are done. A grammar that fails is a 400; past the deadline (or once
        the server cancelled it) ``CompileTimeout``, so this thread is let go."""
        assert self.loop is not None and self.llm is not None
        deadline = current_deadline()
        seconds = None if deadline is None else max(deadline.expires - deadline.clock(), 0.0)
        pause = PRECOMPILE_POLL_SECONDS
        while True:
            check_deadline()
            asked = asyncio.run_coroutine_threadsafe(self._ask_workers(args, seconds), self.loop)
            try:  # a step can hold the answer back: not past the deadline, though
                answers = asked.result(None if deadline is None else max(deadline.expires - deadline.clock(), 0.0) + pause)
            except FutureTimeout:
                asked.cancel()
                continue  # check_deadline() raises
            errors = [a for a in answers if a.startswith("error: ")]
            if errors:
                raise bad_request(f"the constraint cannot be compiled: {errors[0].removeprefix('error: ')}")
            if all(a == "ready" for a in answers):
                return
            time.sleep(pause)
            pause = min(2 * pause, PRECOMPILE_MAX_POLL_SECONDS)

    async def _ask_workers(self, args: dict[str, Any], seconds: float | None) -> list[str]:
        """Every worker's answer: of every engine, with data-parallel replicas
        (``collective_rpc`` answers with the first engine's workers only)."""
        core = self.llm.engine_core
        ask_all = getattr(core, "call_utility_all_async", None)
        if ask_all is None:
            return list(await self.llm.collective_rpc("structgen_precompile", args=(args, seconds)))
        per_engine = await ask_all("collective_rpc", "structgen_precompile", None, (args, seconds), None)
        return [answer for answers in per_engine for answer in answers]

    def _sampling_params(
        self, index: int, max_tokens: int, options: DecodeOptions, args: dict[str, Any], stops: tuple[str, ...]
    ) -> Any:
        from vllm import SamplingParams
        from vllm.sampling_params import RequestOutputKind

        sampling = options.sampling
        return SamplingParams(
            n=1,
            max_tokens=max_tokens,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k or 0,
            # the request's choices draw from one seed as vLLM's own n > 1 does (seed + index)
            seed=None if sampling.seed is None else sampling.seed + index,
            repetition_penalty=sampling.repetition_penalty,
            stop=list(stops) or None,
            # the default backend ends on every stop token of the tokenizer
            stop_token_ids=sorted(self.stop_ids),
            extra_args=dict(args) or None,
            output_kind=RequestOutputKind.CUMULATIVE,
        )

    async def _run(self, job: VLLMJob) -> None:
        """The job's sequences followed to their end; ``job.done`` is resolved
        whatever happens (a cancel may land at any ``await``, even twice)."""
        children: list[asyncio.Future[None]] = []
        error: BaseException | None = None
        try:
            children = [asyncio.ensure_future(self._follow(job, i)) for i in range(len(job.sequences))]
            await asyncio.gather(*children)
        except asyncio.CancelledError:
            job.cancel.set()
        except Exception as exc:  # noqa: BLE001 - the job fails; the server goes on
            error = exc
        finally:
            try:
                for child in children:
                    child.cancel()
                await _until_done(children)  # their vLLM requests aborted
            finally:
                self._end(job, error)

    def _end(self, job: VLLMJob, error: BaseException | None) -> None:
        """The job's end (once; later calls do nothing): ``job.done`` resolved."""
        if job.done.done():
            return
        self.jobs.discard(job)
        for sequence in job.sequences:
            if not sequence.done:
                sequence.finish_reason = "cancelled"
        if error is None:
            job.done.set_result(job.sequences)
        else:
            job.done.set_exception(_client_error(error))

    async def _follow(self, job: VLLMJob, index: int) -> None:
        from vllm.inputs.engine import tokens_input

        sequence = job.sequences[index]
        prompt = tokens_input(sequence.prompt_ids)  # the engine's own input: tokenized already (chat template applied)
        outputs = self.llm.generate(prompt, job.params[index], f"structgen-{uuid.uuid4().hex}")
        async for output in outputs:
            job.started[index] = True
            self._update(job, sequence, output.outputs[0], output.finished)
            if job.on_step is not None and not job.cancel.is_set():
                job.on_step(job.sequences)
            if sequence.done and not output.finished:  # a stop string found here: vLLM aborts the request
                await outputs.aclose()
                break

    def _update(self, job: VLLMJob, sequence: Sequence, completion: Any, finished: bool) -> None:
        ids = list(completion.token_ids)
        if not finished:
            sequence.output = ids
            if sequence.stop_scope is not None and cut_at_stop(sequence, self.info):
                sequence.finish_reason = "stop"
            return
        reason = completion.finish_reason
        if reason == "stop" and ids and ids[-1] in self.stop_ids and not isinstance(completion.stop_reason, str):
            ids.pop()  # the stop token ends the output; it is not part of it (as in the default backend)
        sequence.output = ids
        if cut_at_stop(sequence, self.info, final=True):
            sequence.finish_reason = "stop"
        elif reason in ("stop", "length"):
            sequence.finish_reason = reason
        elif reason == "abort" and job.cancel.is_set():
            sequence.finish_reason = "cancelled"
        else:
            raise RuntimeError(f"vLLM ended the request with finish_reason {reason!r}")


async def _until_done(tasks: list[asyncio.Future[None]]) -> None:
    """Wait for ``tasks`` to end, whatever cancels the waiting meanwhile."""
    pending = [task for task in tasks if not task.done()]
    while pending:
        try:
            await asyncio.shield(asyncio.wait(pending))
        except asyncio.CancelledError:
            pass  # cancelled again (a second cancel): the children are ending all the same
        pending = [task for task in pending if not task.done()]


def _client_error(exc: BaseException) -> BaseException:
    """vLLM's refusal of a request (too long a prompt, ...) is the client's: a 400."""
    from vllm.exceptions import VLLMValidationError

    if isinstance(exc, APIError):
        return exc
    if isinstance(exc, VLLMValidationError) or type(exc).__name__ in ("VLLMValidationError", "VLLMClientError"):
        return bad_request(str(exc))
    return exc
