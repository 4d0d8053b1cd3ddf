"""One small adapter per engine: build its view of a vocabulary, compile a grammar,
and time one step (fill the bitmask, then accept the token) as MaskBench does.

Each step also reports whether the forced token was allowed by the mask just
computed, so disagreements with the documents (which are all valid) are counted.
"""

from __future__ import annotations

import gc
import json
import re
import sys
import types
from collections.abc import Callable
from importlib.metadata import version
from time import perf_counter_ns
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from librt.vecs import vec

import structgen

_PRIORITY = re.compile(r"(?m)^(\s*[?!]?[A-Za-z_]\w*)\.-?\d+(\s*:)")


def peer_lark(text: str) -> str:
    """A lark grammar in the dialect llguidance and XGrammar read.

    Both reject rule and terminal priorities (SynCode's Go has ``operand.3:`` and
    ``HEX_LIT.2:``), so they are dropped. structgen ignores them too (terminals of
    the same extent stay alternatives, LR conflicts stay forks: docs/grammar.md),
    so all three engines read one language.
    """
    return _PRIORITY.sub(r"\1\2", text)


def allowed(bitmask: npt.NDArray[np.int32], token: int) -> bool:
    return bool((int(bitmask[0, token >> 5]) >> (token & 31)) & 1)


class Session(Protocol):
    def step(self, token: int) -> tuple[int, bool, bool]:
        """Nanoseconds for mask + accept, whether the mask allowed ``token``, whether it was accepted."""

    def at_end(self) -> bool:
        """Whether the engine would let generation stop here."""


class Compiled(Protocol):
    def session(self) -> Session: ...

    def memory_bytes(self) -> int | None:
        """Memory held by the compiled tables now (after the steps: lazy tables count)."""


class Engine(Protocol):
    name: str

    def compile(self, grammar: str, lark: str) -> Compiled: ...

    def compile_schema(self, schema: dict[str, Any]) -> Compiled:
        """A JSON Schema, with the engine's own JSON Schema support."""


def engine_version(name: str) -> str:
    if name == "structgen":
        return f"{structgen.__version__} ({'mypyc' if structgen.COMPILED else 'pure Python'})"
    return version(name)


# -- structgen ---------------------------------------------------------------


class StructgenEngine:
    name = "structgen"

    def __init__(self, hf_tokenizer: Any) -> None:
        self.info = structgen.TokenizerInfo.from_huggingface(hf_tokenizer)
        # What depends on the vocabulary alone (the token trie, shared by every grammar
        # compiled for it) is built here, untimed, as the peers' tokenizer objects are.
        self.vocabulary_only = structgen.compile(structgen.Grammar.from_lark('start: "a"'), self.info)

    def compile(self, grammar: str, lark: str) -> StructgenCompiled:
        compiled = structgen.compile(structgen.Grammar.from_lark(lark), self.info)
        return StructgenCompiled(compiled, self.info.vocab_size, shared=(self.info, self.vocabulary_only))

    def compile_schema(self, schema: dict[str, Any]) -> StructgenCompiled:
        compiled = structgen.compile(structgen.Grammar.from_json_schema(schema), self.info)  # as the server compiles
        return StructgenCompiled(compiled, self.info.vocab_size, shared=(self.info, self.vocabulary_only))


class StructgenCompiled:
    def __init__(self, compiled: structgen.CompiledGrammar, vocab_size: int, shared: object) -> None:
        self.compiled = compiled
        self.shared = shared
        self.bitmask = structgen.allocate_token_bitmask(1, vocab_size)

    def session(self) -> StructgenSession:
        return StructgenSession(structgen.Matcher(self.compiled), self.bitmask)

    def memory_bytes(self) -> int:
        return python_heap_bytes(self.compiled, shared=self.shared)


class StructgenSession:
    def __init__(self, matcher: structgen.Matcher, bitmask: npt.NDArray[np.int32]) -> None:
        self.matcher = matcher
        self.bitmask = bitmask

    def step(self, token: int) -> tuple[int, bool, bool]:
        started = perf_counter_ns()
        self.matcher.fill_next_token_bitmask(self.bitmask)
        accepted = self.matcher.accept_token(token)
        elapsed = perf_counter_ns() - started
        return elapsed, allowed(self.bitmask, token), accepted

    def at_end(self) -> bool:
        return bool(self.matcher.can_terminate())


_OPAQUE = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def python_heap_bytes(root: object, shared: object) -> int:
    """Bytes of every object reachable from ``root`` but not from ``shared`` (what
    every grammar compiled for the same vocabulary shares).

    Agrees with tracemalloc within 10% here, at a tenth of its cost, and
    needs no tracing while the steps are timed.
    """
    seen: set[int] = set()
    _reach(shared, seen, None)
    total = [0]
    _reach(root, seen, total)
    return total[0]


def _reach(root: object, seen: set[int], total: list[int] | None) -> None:
    stack = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, _OPAQUE):
            continue
        seen.add(id(item))
        if total is not None:
            total[0] += sys.getsizeof(item)
            if isinstance(item, vec):  # a packed array: getsizeof counts its header only
                total[0] += memoryview(item).nbytes
        referents = gc.get_referents(item)
        if not referents and type(item).__module__.startswith("structgen.engine."):
            # an acyclic native class (no traversal for the collector): its attributes by name
            referents = [getattr(item, name) for name, slot in vars(type(item)).items()
                         if isinstance(slot, types.GetSetDescriptorType) and hasattr(item, name)]
        stack.extend(referents)
        if isinstance(item, np.ndarray) and item.base is not None:
            stack.append(item.base)  # a view's buffer: numpy does not report it as a referent


# -- XGrammar ----------------------------------------------------------------


class XGrammarEngine:
    name = "xgrammar"

    def __init__(self, hf_tokenizer: Any) -> None:
        import xgrammar  # imported here: a structgen-only run needs no peer installed

        self.xgr = xgrammar
        self.info = xgrammar.TokenizerInfo.from_huggingface(hf_tokenizer)
        # One thread, as MaskBench runs every engine; no cache, so each compile is a real one.
        self.compiler = xgrammar.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)

    def compile(self, grammar: str, lark: str) -> XGrammarCompiled:
        if grammar == "json":  # its own JSON grammar, the one it is tuned for
            compiled = self.compiler.compile_builtin_json_grammar()
        else:
            compiled = self.compiler.compile_grammar(self.xgr.Grammar.from_lark(peer_lark(lark)))
        return XGrammarCompiled(self.xgr, compiled, self.info.vocab_size)

    def compile_schema(self, schema: dict[str, Any]) -> XGrammarCompiled:
        compiled = self.compiler.compile_json_schema(json.dumps(schema))
        return XGrammarCompiled(self.xgr, compiled, self.info.vocab_size)


class XGrammarCompiled:
    def __init__(self, xgr: Any, compiled: Any, vocab_size: int) -> None:
        self.xgr = xgr
        self.compiled = compiled
        self.tensor = xgr.allocate_token_bitmask(1, vocab_size)  # XGrammar fills torch tensors
        self.bitmask: npt.NDArray[np.int32] = self.tensor.numpy()  # the same memory

    def session(self) -> XGrammarSession:
        return XGrammarSession(self.xgr.GrammarMatcher(self.compiled), self.tensor, self.bitmask)

    def memory_bytes(self) -> int:
        return int(self.compiled.memory_size_bytes)


class XGrammarSession:
    def __init__(self, matcher: Any, tensor: Any, bitmask: npt.NDArray[np.int32]) -> None:
        self.matcher = matcher
        self.tensor = tensor
        self.bitmask = bitmask

    def step(self, token: int) -> tuple[int, bool, bool]:
        started = perf_counter_ns()
        self.matcher.fill_next_token_bitmask(self.tensor)
        accepted = self.matcher.accept_token(token)
        elapsed = perf_counter_ns() - started
        return elapsed, allowed(self.bitmask, token), accepted

    def at_end(self) -> bool:
        return bool(self.matcher.is_completed())


# -- llguidance --------------------------------------------------------------


class LLGuidanceEngine:
    name = "llguidance"

    def __init__(self, hf_tokenizer: Any) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy

        self.llg = llguidance
        self.tokenizer = llguidance.hf.from_tokenizer(hf_tokenizer)

    def compile(self, grammar: str, lark: str) -> LLGuidanceCompiled:
        return self._compiled(self.llg.LLMatcher.grammar_from_lark(peer_lark(lark)))  # grammars/json.lark too

    def compile_schema(self, schema: dict[str, Any]) -> LLGuidanceCompiled:
        return self._compiled(self.llg.LLMatcher.grammar_from_json_schema(schema))

    def _compiled(self, text: str) -> LLGuidanceCompiled:
        matcher = self.llg.LLMatcher(self.tokenizer, text, log_level=0)
        if matcher.is_error():  # it never raises; a bad grammar leaves the matcher in error
            raise ValueError(matcher.get_error())
        return LLGuidanceCompiled(self.llg, matcher, self.tokenizer.vocab_size)


class LLGuidanceCompiled:
    def __init__(self, llg: Any, pristine: Any, vocab_size: int) -> None:
        self.fill = llg.numpy.fill_next_token_bitmask
        self.pristine = pristine  # sessions start from copies: what llguidance compiled lazily is shared
        self.bitmask = llg.numpy.allocate_token_bitmask(1, vocab_size)

    def session(self) -> LLGuidanceSession:
        return LLGuidanceSession(self.fill, self.pristine.deep_copy(), self.bitmask)

    def memory_bytes(self) -> None:
        return None  # llguidance does not say, and its Rust heap is not Python's


class LLGuidanceSession:
    def __init__(self, fill: Any, matcher: Any, bitmask: npt.NDArray[np.int32]) -> None:
        self.fill = fill
        self.matcher = matcher
        self.bitmask = bitmask

    def step(self, token: int) -> tuple[int, bool, bool]:
        started = perf_counter_ns()
        self.fill(self.matcher, self.bitmask)
        accepted = self.matcher.consume_token(token)
        elapsed = perf_counter_ns() - started
        return elapsed, allowed(self.bitmask, token), accepted

    def at_end(self) -> bool:
        return bool(self.matcher.is_accepting())


ENGINES: dict[str, Callable[[Any], Engine]] = {
    "structgen": StructgenEngine,
    "xgrammar": XGrammarEngine,
    "llguidance": LLGuidanceEngine,
}
