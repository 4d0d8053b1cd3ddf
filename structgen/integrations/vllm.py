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
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import torch
from vllm import SamplingParams
from vllm.exceptions import VLLMValidationError
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.constraint import Constraint
from structgen.generate import tokenizer_info_for
from structgen.integrations.request_args import constraint_from_args, structgen_args
from structgen.integrations.request_matcher import RequestMatcher, token_row
from structgen.matcher import Matcher, compile
from structgen.tokenizer_info import TokenizerInfo
from structgen.trie_cache import trie_for

if TYPE_CHECKING:
    from vllm.config import VllmConfig

__all__ = ["StructgenLogitsProcessor", "parse_output", "request_constraint", "structgen_args"]


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
        """Rejects a bad constraint when the request arrives (an HTTP 400 under
        ``vllm serve``), not later in the engine."""
        try:
            request_constraint(sampling_params)
        except ValueError as exc:
            raise VLLMValidationError(str(exc), parameter="extra_args") from exc

    def __init__(self, vllm_config: VllmConfig, device: torch.device, is_pin_memory: bool) -> None:
        # the tokenizer's bytes and their trie are read here, at engine start, so that
        # the first constrained request does not stall the batch for them (~1.5 s at 49k)
        self.info = _tokenizer_info(vllm_config.model_config)
        trie_for(self.info)
        self.bitmask = allocate_token_bitmask(vllm_config.scheduler_config.max_num_seqs, self.info.vocab_size)
        self.requests: dict[int, RequestMatcher] = {}
        # requests lately removed from the batch, by their output list's id: vLLM removes
        # a request it preempts or does not schedule for a step, and re-adds it later
        # with the same list; its matcher is taken back instead of replaying the tokens
        self.parked: OrderedDict[int, RequestMatcher] = OrderedDict()
        self.max_parked = vllm_config.scheduler_config.max_num_seqs

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
        constraint = request_constraint(params)
        if constraint is None or constraint.grammar is None:
            return None
        info = self.info
        # lazy: a new request's compile runs inside the engine's step, stalling the whole
        # batch; built on first use, the tables cost a few ms per mask instead (~3x less
        # in all for the test schemas on SmolLM2's 49k vocabulary)
        compiled = compile(constraint.grammar, info, lazy=True)
        ours, theirs = set(info.stop_token_ids), vllm_stop_token_ids(params)
        # complete: end on a token vLLM stops on; with none (ignore_eos), on the grammar's
        ends = token_row(theirs or ours, info.vocab_size)
        not_stops = ~token_row(ours | theirs, info.vocab_size)
        return RequestMatcher(Matcher(compiled), params, output_ids, ends, not_stops)


def vllm_stop_token_ids(params: SamplingParams) -> set[int]:
    """The ids vLLM ends this request on: its EOS (None under ``ignore_eos``) and
    ``stop_token_ids``. Not ``all_stop_token_ids``, which keeps EOS under
    ``ignore_eos`` (it is what ``min_tokens`` masks)."""
    stops = set(params.stop_token_ids or ())
    if params.eos_token_id is not None:
        stops.add(params.eos_token_id)
    return stops


def _tokenizer_info(model_config: Any) -> TokenizerInfo:
    """The bytes of every token id of the served model's tokenizer, at its logits size."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(
        model_config.tokenizer,
        revision=model_config.tokenizer_revision,
        trust_remote_code=model_config.trust_remote_code,
    )
    return tokenizer_info_for(tokenizer, model_config.get_vocab_size())
