"""structgen's masks inside vLLM (v1): a logits processor configured per request.

    from vllm import LLM, SamplingParams
    from structgen.integrations.vllm import StructgenLogitsProcessor, structgen_args

    llm = LLM(model=..., logits_processors=[StructgenLogitsProcessor])
    params = SamplingParams(max_tokens=256, extra_args=structgen_args(schema=Person))
    outputs = llm.generate(prompts, [params, ...])

A request names its constraint in ``SamplingParams.extra_args`` (``structgen_args``
builds them; under ``vllm serve`` the same dict goes in a request's ``vllm_xargs``);
requests without one are left alone. The processor keeps one ``RequestMatcher`` per
request, follows vLLM's batch updates (added, removed, moved), compiles each grammar
once per tokenizer (``structgen.compile``'s cache, on grammars that
``make_constraint`` caches), and fills one bitmask for the whole batch. ``vllm
serve`` loads it with ``--logits-processors
structgen.integrations.vllm:StructgenLogitsProcessor``.

``StructgenWorkerExtension`` (vLLM's ``worker_extension_cls``) lets a client compile
a request's grammars in the workers before submitting it (``structgen serve
--backend vllm`` does), so that the engine's step never compiles.
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import torch
from vllm import SamplingParams
from vllm.exceptions import VLLMValidationError
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.constraint import Constraint
from structgen.generate import tokenizer_info_for
from structgen.engine.deadline import Deadline, check_deadline, run_within
from structgen.integrations.request_args import check_args, constraint_from_args, next_phase_from_args, structgen_args
from structgen.integrations.request_matcher import NextPhase, RequestMatcher, token_row
from structgen.matcher import Matcher, compile
from structgen.tokenizer_info import TokenizerInfo
from structgen.trie_cache import trie_for

if TYPE_CHECKING:
    from vllm.config import VllmConfig

__all__ = ["StructgenLogitsProcessor", "StructgenWorkerExtension", "parse_output", "request_constraint", "structgen_args"]

logger = logging.getLogger(__name__)


def request_constraint(params: SamplingParams) -> Constraint | None:
    """The constraint a request's ``extra_args`` name (``structgen_args``), or None."""
    return constraint_from_args(params.extra_args)


def parse_output(params: SamplingParams, text: str) -> Any:
    """A finished output read as its constraint reads it (``structgen.generate``'s
    value: a JSON value, or the text); schema keywords the grammar only approximates
    are checked here (``OutputValidationError``)."""
    constraint = request_constraint(params)
    if constraint is None:
        return text
    return constraint.parse(text)


class StructgenLogitsProcessor(LogitsProcessor):  # type: ignore[misc]
    """Masks each constrained request's logits to what its grammar allows next; a
    stop token is allowed only once the output is complete."""

    @classmethod
    def validate_params(cls, sampling_params: SamplingParams) -> None:
        """Rejects malformed arguments (unknown or missing keys, values of the wrong
        type) when the request arrives: an HTTP 400 under ``vllm serve``. Nothing is
        translated or compiled here (it runs on the serving event loop): a regex,
        grammar or schema that does not translate fails in the worker —
        ``structgen_precompile`` answers ``"error: ..."``, or, not precompiled, the
        request is ended with no output and the error logged."""
        try:
            check_args(sampling_params.extra_args)
        except ValueError as exc:
            raise VLLMValidationError(str(exc), parameter="extra_args") from exc

    def __init__(self, vllm_config: VllmConfig, device: torch.device, is_pin_memory: bool) -> None:
        # the tokenizer's bytes and their trie are read here, at engine start, so that
        # the first constrained request does not stall the batch for them (~1.5 s at 49k)
        self.info = tokenizer_info(vllm_config.model_config)
        trie_for(self.info)
        self.bitmask = allocate_token_bitmask(vllm_config.scheduler_config.max_num_seqs, self.info.vocab_size)
        self.requests: dict[int, RequestMatcher] = {}
        # requests lately removed from the batch, by their output list's id: vLLM removes
        # a request it preempts or does not schedule for a step, and re-adds it later
        # with the same list; its matcher is taken back instead of replaying the tokens
        self.parked: OrderedDict[int, RequestMatcher] = OrderedDict()
        self.max_parked = vllm_config.scheduler_config.max_num_seqs
        _processors.add(self)

    def is_argmax_invariant(self) -> bool:
        return False  # it changes which token is likeliest

    def update_state(self, batch_update: BatchUpdate | None) -> None:
        """Follows the batch: removed, then added, then moved (vLLM's order)."""
        if batch_update is None:
            return
        for index in batch_update.removed:
            gone = self.requests.pop(index, None)
            if gone is not None:
                self._park(gone)
        for index, params, _prompt_ids, output_ids in batch_update.added:
            tracked = self._unpark(params, output_ids) or self._track(params, output_ids)
            if tracked is None:
                self.requests.pop(index, None)  # a new request in a reused slot
            else:
                self.requests[index] = tracked
        for source, target, direction in batch_update.moved:
            moving = self.requests.pop(source, None)
            displaced = self.requests.pop(target, None)
            if moving is not None:
                self.requests[target] = moving
            if displaced is not None and direction == MoveDirectionality.SWAP:
                self.requests[source] = displaced

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        """Syncs every matcher with the tokens vLLM sampled, then masks all
        constrained rows with one bitmask."""
        if not self.requests:
            return logits
        rows = sorted(self.requests)
        bitmask = self.bitmask[: len(rows)]
        for position, row in enumerate(rows):
            tracked = self.requests[row]
            tracked.sync()
            tracked.fill(bitmask, position)
        if rows == list(range(logits.shape[0])):
            apply_token_bitmask_inplace(logits, bitmask)
        else:
            index = torch.tensor(rows, device=logits.device)
            masked = logits.index_select(0, index)
            apply_token_bitmask_inplace(masked, bitmask)
            logits.index_copy_(0, index, masked)
        return logits

    def _park(self, tracked: RequestMatcher) -> None:
        self.parked[id(tracked.output_ids)] = tracked  # the reference keeps the id unique
        while len(self.parked) > self.max_parked:
            self.parked.popitem(last=False)  # most likely finished, never to come back

    def _unpark(self, params: SamplingParams, output_ids: list[int]) -> RequestMatcher | None:
        tracked = self.parked.pop(id(output_ids), None)
        if tracked is None or tracked.output_ids is not output_ids or tracked.params is not params:
            return None
        return tracked

    def _track(self, params: SamplingParams, output_ids: list[int]) -> RequestMatcher | None:
        info = self.info
        ours, theirs = set(info.stop_token_ids), vllm_stop_token_ids(params)
        # complete: end on a token vLLM stops on; with none (ignore_eos), on the grammar's
        ends = token_row(theirs or ours, info.vocab_size)
        not_stops = ~token_row(ours | theirs, info.vocab_size)
        try:
            constraint, phase = _precompiled(params.extra_args) or (request_constraint(params), None)
            if constraint is None or constraint.grammar is None:
                return None
            # lazy: a grammar not compiled beforehand (StructgenWorkerExtension) is
            # compiled here, inside the engine's step, stalling the whole batch; built on
            # first use, the tables cost a few ms per mask instead (~3x less in all for
            # the test schemas on SmolLM2's 49k vocabulary)
            compiled = compile(constraint.grammar, info, lazy=True)
            phase = phase or next_phase_from_args(params.extra_args)
            next_phase = None
            if phase is not None and phase[0].grammar is not None:
                stops = frozenset(info.stop_token_ids)
                next_phase = NextPhase(compile(phase[0].grammar, info, lazy=True), phase[1], info.join_bytes, stops)
        except Exception as exc:  # noqa: BLE001 - one request's constraint must not take the engine down
            logger.error(
                "structgen: this request's constraint failed to compile (%s: %s); the request is ended "
                "with no output. Its arguments: %s",
                type(exc).__name__,
                exc,
                _describe(params.extra_args),
            )
            return RequestMatcher(None, params, output_ids, ends, not_stops, failed=True)  # type: ignore[arg-type]
        return RequestMatcher(Matcher(compiled), params, output_ids, ends, not_stops, next_phase)


def vllm_stop_token_ids(params: SamplingParams) -> set[int]:
    """The ids vLLM ends this request on: its EOS (None under ``ignore_eos``) and
    ``stop_token_ids``. Not ``all_stop_token_ids``, which keeps EOS under
    ``ignore_eos`` (it is what ``min_tokens`` masks)."""
    stops = set(params.stop_token_ids or ())
    if params.eos_token_id is not None:
        stops.add(params.eos_token_id)
    return stops


def _describe(args: dict[str, Any] | None, limit: int = 300) -> str:
    text = json.dumps({k: v for k, v in (args or {}).items() if k.startswith("structgen_")}, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "..."


def served_tokenizer(model_config: Any) -> Any:
    """The served model's tokenizer as vLLM loads it (its ``tokenizer_mode``,
    revision and ``trust_remote_code`` honoured)."""
    from vllm.tokenizers import cached_tokenizer_from_config

    tokenizer = cached_tokenizer_from_config(model_config)
    if tokenizer is None:
        raise ValueError("structgen needs the model's tokenizer; vLLM was started with skip_tokenizer_init")
    return tokenizer


def tokenizer_info(model_config: Any) -> TokenizerInfo:
    """The bytes of every token id of the served model's tokenizer (``served_tokenizer``),
    at its logits size. A wrapper vLLM puts around a tokenizer (``tokenizer_mode=
    "mistral"``) is read through the tokenizer it wraps."""
    from structgen.tokenizer_info import TokenizerError

    tokenizer = served_tokenizer(model_config)
    vocab_size = model_config.get_vocab_size()
    try:
        return tokenizer_info_for(tokenizer, vocab_size)
    except TokenizerError:
        inner = getattr(tokenizer, "tokenizer", None)
        if inner is None:
            raise
        return tokenizer_info_for(inner, vocab_size)


_processors: weakref.WeakSet[StructgenLogitsProcessor] = weakref.WeakSet()
"""This worker's processors (one per model runner)."""


class StructgenWorkerExtension:
    """Methods vLLM adds to its workers (``worker_extension_cls=
    "structgen.integrations.vllm:StructgenWorkerExtension"``), called with
    ``collective_rpc``: ``structgen_precompile(args, seconds)`` compiles the grammars
    that a request's ``structgen_args`` name, on a background thread of each worker,
    for the processor to find compiled; the compile stops itself ``seconds`` after
    the first call (None: no limit), so that one pathological grammar does not hold
    up the compiles queued behind it. It answers at once — ``"ready"``,
    ``"pending"`` (ask again) or ``"error: ..."`` (a timeout included) — so the
    engine's step, which runs the calls between two steps, never waits for a compile."""

    def structgen_precompile(self, args: dict[str, Any], seconds: float | None = None) -> str:
        key = _args_key(args)
        with _compiles_lock:
            job = _compiles.get(key)
            if job is None:
                if not _processors:
                    return "ready"  # no structgen processor in this worker: nothing to compile for
                info = next(iter(_processors)).info
                if seconds is None:
                    job = _compile_pool().submit(_compile_for, args, info)
                else:  # counted from now: time spent queued behind other compiles is the client's too
                    deadline = Deadline(seconds)
                    job = _compile_pool().submit(run_within, deadline, lambda: _compile_for(args, info))
                _compiles[key] = job
                while len(_compiles) > MAX_REMEMBERED_COMPILES:
                    _compiles.popitem(last=False)  # the least lately asked for or used
            else:
                _compiles.move_to_end(key)
        if not job.done():
            return "pending"
        error = job.exception()
        if error is not None:
            with _compiles_lock:
                _compiles.pop(key, None)  # a later request may try again
            return f"error: {error}"
        return "ready"


Compiled = tuple[Constraint | None, tuple[Constraint, str] | None]
MAX_REMEMBERED_COMPILES = 256
_compiles: OrderedDict[str, Future[Compiled]] = OrderedDict()
"""Precompiled requests' constraints by their arguments, least recently used first
(``structgen_precompile`` and the processor move an entry to the end): the processor takes them
from here (not from ``make_constraint``'s smaller cache, which could have let them
go and would translate them again inside the step)."""
_compiles_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _compile_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="structgen-compile")
    return _pool


def _args_key(args: dict[str, Any] | None) -> str:
    return json.dumps({k: v for k, v in (args or {}).items() if k.startswith("structgen_")}, sort_keys=True, ensure_ascii=False)


def _compile_for(args: dict[str, Any], info: TokenizerInfo) -> Compiled:
    """The constraints ``args`` name, their grammars compiled (fully) for ``info``
    (``structgen.compile`` caches them on the grammar); under a deadline
    (``run_within``) it stops itself when past it (``CompileTimeout``)."""
    check_deadline()  # queued past its deadline: not started at all
    constraint = constraint_from_args(args)
    phase = next_phase_from_args(args)
    for grammar in (constraint.grammar if constraint else None, phase[0].grammar if phase else None):
        if grammar is not None:
            compile(grammar, info)
    return constraint, phase


def _precompiled(args: dict[str, Any] | None) -> Compiled | None:
    """The constraints of ``args`` if ``structgen_precompile`` compiled them."""
    if not _compiles or not args:
        return None
    key = _args_key(args)
    with _compiles_lock:
        job = _compiles.get(key)
        if job is not None:
            _compiles.move_to_end(key)
    if job is None or not job.done() or job.exception() is not None:
        return None
    return job.result()
