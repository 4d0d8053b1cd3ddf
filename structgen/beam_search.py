"""Constrained beam search: every beam keeps its own matcher, forked from its parent's.

A fork shares the parent's parse stack (O(1)), so keeping ``num_beams`` grammar
states costs no more than keeping one. Scores are sums of log-probabilities of
the masked distribution; finished hypotheses are ranked by score per token (length
penalty 1, as transformers' default), and the search stops once ``num_beams`` of
them finished or ``max_tokens`` is reached. Jump-forward is not used here: the
beams are ranked by the model's probabilities of every token.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from structgen.bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from structgen.constraint import Constraint
from structgen.decoding import Decoder, check_request, mask_worker
from structgen.generation import Generation
from structgen.matcher import Matcher, compile


@dataclass
class _Beam:
    tokens: list[int]
    matcher: Matcher | None
    score: float


def beam_search(
    decoder: Decoder, prompt_ids: list[int], constraint: Constraint, max_tokens: int, num_beams: int
) -> Generation:
    """The best of ``num_beams`` constrained beams (greedy in each beam's ranking)."""
    import torch

    check_request(prompt_ids, max_tokens)
    started = time.perf_counter()
    info = decoder.info
    root = Matcher(compile(constraint.grammar, info)) if constraint.grammar is not None else None
    beams = [_Beam([], root, 0.0)]
    finished: list[_Beam] = []
    device = decoder.model.device
    passes = 0
    cache: Any = None
    feed = [list(prompt_ids)]
    attention = torch.ones((1, 0), dtype=torch.long, device=device)
    with torch.inference_mode():
        while beams and len(finished) < num_beams:
            masks = mask_worker().submit(_fill_masks, beams, info.vocab_size)
            width = len(feed[0])
            start = len(prompt_ids) + len(beams[0].tokens) - width
            attention = torch.cat([attention, torch.ones((len(beams), width), dtype=torch.long, device=device)], 1)
            out = decoder.model(
                input_ids=torch.tensor(feed, device=device),
                attention_mask=attention,
                position_ids=torch.arange(start, start + width, device=device).expand(len(beams), -1),
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
            passes += 1
            cache = out.past_key_values
            logits = out.logits[:, -1, :].float()
            apply_token_bitmask_inplace(logits, masks.result())
            scores = logits.log_softmax(dim=-1) + torch.tensor([b.score for b in beams], device=device)[:, None]
            top = torch.topk(scores.flatten(), min(2 * num_beams, scores.numel()))
            chosen: list[tuple[int, _Beam]] = []
            for value, flat in zip(top.values.tolist(), top.indices.tolist()):
                if value == float("-inf") or len(chosen) == num_beams:
                    break
                parent, token_id = divmod(flat, scores.shape[1])
                beam = _extend(beams[parent], token_id, value, decoder)
                if token_id in decoder.stop_ids or _only_stop(beam, decoder):
                    finished.append(beam)
                elif len(beam.tokens) >= max_tokens:
                    finished.append(beam)
                else:
                    chosen.append((parent, beam))
            beams = [beam for _, beam in chosen]
            if beams:
                index = torch.tensor([parent for parent, _ in chosen], device=device)
                cache.reorder_cache(index)
                attention = attention[index]
                feed = [[beam.tokens[-1]] for beam in beams]
    # a beam max_tokens cut short loses to any complete one, whatever its score
    best = max(finished or beams, key=lambda b: (_complete(b), b.score / max(1, len(b.tokens))))
    complete = _complete(best)
    return Generation(
        value=None,
        text=info.join_bytes(best.tokens).decode("utf-8", errors="replace"),
        token_ids=best.tokens,
        finish_reason="stop" if complete and len(best.tokens) < max_tokens else "length",
        prompt_tokens=len(prompt_ids),
        forward_passes=passes,
        forced_tokens=0,
        seconds=time.perf_counter() - started,
    )


def _extend(beam: _Beam, token_id: int, score: float, decoder: Decoder) -> _Beam:
    matcher = beam.matcher.fork() if beam.matcher is not None else None
    if matcher is not None and not matcher.accept_token(token_id):
        raise RuntimeError(f"internal error: token {token_id} was allowed by the mask, then refused")
    tokens = beam.tokens if token_id in decoder.stop_ids else [*beam.tokens, token_id]
    return _Beam(tokens, matcher, score)


def _complete(beam: _Beam) -> bool:
    matcher = beam.matcher
    return matcher is None or matcher.can_terminate() or matcher.is_terminated()


def _only_stop(beam: _Beam, decoder: Decoder) -> bool:
    matcher = beam.matcher
    if matcher is None or not matcher.can_terminate() or matcher.find_jump_forward_string():
        return False
    return all(t in decoder.stop_ids for t in matcher.allowed_tokens())


def _fill_masks(beams: list[_Beam], vocab_size: int) -> Any:
    bitmask = allocate_token_bitmask(len(beams), vocab_size)
    for row, beam in enumerate(beams):
        if beam.matcher is not None:
            beam.matcher.fill_next_token_bitmask(bitmask, row)
    return bitmask
