"""Shared by the lexer-view tests: matchers with views forced on, the oracle, and
random walks that compare the two at every step."""

from __future__ import annotations

import random
from typing import Callable

import structgen
from structgen import Grammar, Matcher, TokenizerInfo
from structgen.engine.matcher import Matcher as EngineMatcher


def with_views(
    grammar: Grammar, info: TokenizerInfo, views: bool = True, every_terminal_long: bool = False
) -> EngineMatcher:
    """An engine matcher on ``grammar`` (a new object: ``compile`` caches per grammar),
    every token group built on first use, views used whatever the lexer's size
    and built whatever their own (``max_view_share``: a test's small lexer has
    views as big as itself). ``every_terminal_long``: each view drops every
    terminal it does not take (``LexerViews.count_as_long(0)``), the hardest case
    for their exactness."""
    compiled = Matcher(structgen.compile(grammar, info, lazy=True))._engine.compiled
    if views:
        compiled.tables.use_views()
        assert compiled.tables.views is not None
        compiled.tables.views.max_view_share = 1.0
        if every_terminal_long:
            compiled.tables.views.count_as_long(0)
    return EngineMatcher(compiled)


def tried(matcher: EngineMatcher, vocab_size: int) -> list[int]:
    """The tokens accepted when each is fed on a fork (the oracle: no tables)."""
    return [token for token in range(vocab_size) if matcher.fork().accept_token(token)]


def walk_against_oracle(
    matcher: EngineMatcher, info: TokenizerInfo, rng: random.Random, steps: int, long_share: float, longer_than: int = 1
) -> tuple[str, int]:
    """A random walk of up to ``steps`` tokens, preferring (``long_share`` of the time)
    tokens longer than ``longer_than`` bytes, that compares every mask with the
    oracle. Returns the first difference ("" if none) and how many lexer states a
    view stood for."""
    vocab = info.decoded_vocab
    text = b""
    failure = ""
    for _step in range(steps):
        allowed = matcher.allowed_tokens()
        oracle = tried(matcher, info.vocab_size)
        if allowed != oracle:
            let_through = [vocab[t] for t in sorted(set(allowed) - set(oracle))][:5]
            masked = [vocab[t] for t in sorted(set(oracle) - set(allowed))][:5]
            failure = f"after {text!r}: let through {let_through}, masked {masked}"
            break
        ids = [t for t in allowed if t not in info.stop_token_ids]
        if not ids:
            break
        longer = [t for t in ids if len(vocab[t]) > longer_than]
        token = rng.choice(longer if longer and rng.random() < long_share else ids)
        assert matcher.accept_token(token)
        text += vocab[token]
    views = matcher.compiled.tables.views
    assert views is not None
    return failure, sum(len(view.states) for view in views._views.values() if view is not None)


def walks_agree_with_oracle(
    new_matcher: Callable[[], EngineMatcher], info: TokenizerInfo, rng: random.Random, walks: int, steps: int,
    long_share: float, longer_than: int = 1,
) -> None:
    """``walks`` random walks (``walk_against_oracle``), each from a new matcher:
    every mask equals the oracle's, and some view stood for some state."""
    failures: list[str] = []
    stood_for = 0
    for walk in range(walks):
        failure, stood = walk_against_oracle(new_matcher(), info, rng, steps, long_share, longer_than)
        if failure:
            failures.append(f"walk {walk} {failure}")
        stood_for += stood
    assert not failures, "\n".join(failures)
    assert stood_for > 0  # some view stood for some state
