"""``VLLMEngine``'s own bookkeeping, on a stand-in for vLLM's ``AsyncLLM``: a job
ends (``job.done`` resolved, its slot and params let go) however often it is
cancelled, and the precompile polling stops with the request's compile deadline."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace
from typing import Any, AsyncIterator

import pytest
from clocks import TickingClock
from waiting import wait_until_async

from structgen.server.engine_vllm import VLLMEngine
from structgen.decoding import DecodeOptions, Sequence
from structgen.engine.deadline import CompileTimeout, Deadline, run_within


class HangingLLM:
    """Writes one token per request, then waits forever (the first request fails
    instead, with ``failing``); an abort takes a while, whatever cancels it again."""

    def __init__(self, failing: bool = False) -> None:
        self.failing = failing
        self.failed = False
        self.requests = 0
        self.aborted = 0
        self.asked: list[tuple[Any, ...]] = []
        self.engine_core = SimpleNamespace()  # no call_utility_all_async: one engine

    async def generate(self, prompt: Any, params: Any, request_id: str) -> AsyncIterator[Any]:
        first = self.requests == 0
        self.requests += 1
        yield SimpleNamespace(outputs=[SimpleNamespace(token_ids=[5], finish_reason=None, stop_reason=None)], finished=False)
        if first and self.failing:
            await asyncio.sleep(0.05)
            self.failed = True
            raise RuntimeError("the engine failed this request")
        try:
            await asyncio.Event().wait()
        finally:  # vLLM's abort: a round trip to the engine core, seen through
            aborted = asyncio.ensure_future(asyncio.sleep(0.3))
            while not aborted.done():
                try:
                    await asyncio.shield(aborted)
                except asyncio.CancelledError:
                    pass
            self.aborted += 1

    async def collective_rpc(self, method: str, args: tuple[Any, ...]) -> list[str]:
        self.asked.append((method, *args))
        return ["pending"]

    def shutdown(self) -> None:
        pass


def engine_on(llm: HangingLLM, loop: asyncio.AbstractEventLoop) -> VLLMEngine:
    engine = VLLMEngine.__new__(VLLMEngine)  # no vLLM config: only what submit and _run use
    engine.llm, engine.loop = llm, loop
    engine.jobs, engine.params = set(), {}
    engine.stop_ids = frozenset({2})
    return engine


def sequences(engine: VLLMEngine, count: int) -> list[Sequence]:
    made = [Sequence([1, 2, 3], None, None, 10, DecodeOptions()) for _ in range(count)]
    for s in made:
        engine.params[id(s)] = object()
    return made


@pytest.mark.parametrize("failing", [False, True])
def test_a_job_cancelled_twice_still_ends(failing: bool) -> None:
    """The client cancels, then the server stops, while the job waits for its
    requests' aborts (after a cancel, or after one of them failed): ``job.done`` is
    resolved all the same, and the job leaves nothing behind."""

    async def main() -> None:
        llm = HangingLLM(failing)
        engine = engine_on(llm, asyncio.get_running_loop())
        handle = engine.submit(sequences(engine, 3))
        job, task = handle.job, handle.job.task
        assert task is not None
        waiting = asyncio.ensure_future(handle.result())
        # all started; with failing, the job is waiting for the others' aborts
        await wait_until_async(lambda: all(job.started) and llm.failed == failing, "every request started (and the first failed)")
        waiting.cancel()  # the client went away: Handle.result cancels the job
        await asyncio.sleep(0.01)
        engine.stop()  # the server stops meanwhile
        task.cancel()  # and cancels once more, straight at the task
        await asyncio.sleep(0.01)
        task.cancel()
        outcome = await asyncio.wait_for(asyncio.gather(asyncio.wrap_future(job.done), return_exceptions=True), 5)
        if failing:
            assert isinstance(outcome[0], RuntimeError)
        else:
            assert [s.finish_reason for s in outcome[0]] == ["cancelled"] * 3
        assert llm.aborted == 2 + (not failing) and not engine.jobs and not engine.params
        with pytest.raises(asyncio.CancelledError):
            await waiting
        engine.cancel(job)  # an ended job: nothing to do

    asyncio.run(main())


def test_cancel_is_sent_once() -> None:
    async def main() -> None:
        engine = engine_on(HangingLLM(), asyncio.get_running_loop())
        handle = engine.submit(sequences(engine, 1))
        task = handle.job.task
        assert task is not None
        calls = []
        original = task.cancel
        task.cancel = lambda *a: calls.append(1) or original(*a)  # type: ignore[method-assign]
        handle.cancel()
        handle.cancel()
        engine.stop()
        await asyncio.wait_for(asyncio.wrap_future(handle.job.done), 5)
        assert calls == [1]

    asyncio.run(main())


def test_precompile_stops_at_the_compile_deadline() -> None:
    """The workers never finish: the polling thread asks them again after each of
    its deadline checks within the limit, and stops at the first check past it (on
    a clock that moves a second at each reading, the 3 s limit is past within a few
    readings: each poll reads the clock at most twice, its check and its wait);
    once the server cancels the deadline, it stops at its next check. The workers
    are told the time left."""

    async def main() -> None:
        llm = HangingLLM()
        engine = engine_on(llm, asyncio.get_running_loop())
        args = {"structgen_regex": "a"}
        clock = TickingClock(step=1.0)
        with pytest.raises(CompileTimeout, match="ran past its 3 s limit"):
            await asyncio.to_thread(run_within, Deadline(3.0, clock), lambda: engine._precompile(args))
        assert clock.readings <= 1 + 1 + 2 * 3  # made, the time left read, then at most three polls
        assert 1 <= len(llm.asked) <= 2  # asked only after a check within the limit
        assert all(method == "structgen_precompile" and sent == args for method, sent, _ in llm.asked)
        llm.asked.clear()
        deadline = Deadline(600)
        polling = asyncio.ensure_future(asyncio.to_thread(run_within, deadline, lambda: engine._precompile(args)))
        await wait_until_async(lambda: llm.asked, "the workers asked")
        _, _, seconds = llm.asked[0]
        assert 0 < seconds <= 600  # what is left of the deadline
        deadline.cancel()  # the server answered the client (its own wait_for ran out)
        asked_when_cancelled = len(llm.asked)
        with pytest.raises(CompileTimeout, match="cancelled"):
            await polling
        assert len(llm.asked) <= asked_when_cancelled + 1  # at most the ask already past its check
        assert threading.active_count() < 50

    asyncio.run(main())


class ScriptedLLM:
    """Writes ``ids`` a token at a time (cumulative outputs, as the server asks
    for them), then ends as vLLM ends on a stop token; counts the requests it was
    told to abort (the generator closed before its end)."""

    def __init__(self, ids: list[int]) -> None:
        self.ids = ids
        self.aborted = 0
        self.engine_core = SimpleNamespace()

    async def generate(self, prompt: Any, params: Any, request_id: str) -> AsyncIterator[Any]:
        try:
            for end in range(1, len(self.ids) + 1):
                done = end == len(self.ids)
                completion = SimpleNamespace(token_ids=self.ids[:end], finish_reason="stop" if done else None, stop_reason=None)
                yield SimpleNamespace(outputs=[completion], finished=done)
                await asyncio.sleep(0)
        except GeneratorExit:
            self.aborted += 1
            raise


def test_stop_strings_are_found_here_in_the_content_alone() -> None:
    """With tools, vLLM is given no stop strings (they would cut a call's JSON): the
    engine looks for them in the content alone (``OutputPlan.stop_scope``), on each
    update, and ends the request at one; once the output is final, a tail that
    might have become the tag is content, and a stop string there cuts it."""
    import structgen
    from structgen.server.grammars import plan_output
    from structgen.server.protocol import ChatCompletionRequest
    from structgen.server.tool_syntax import HERMES
    from structgen.generate import tokenizer_info_for

    tokenizer = structgen.load_tokenizer()
    request = ChatCompletionRequest.model_validate({
        "model": "m", "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    })
    plan = plan_output(request, HERMES)
    call = '<tool_call>\n{"name":"f","arguments":{"a":"}"}}\n</tool_call>'

    async def run(text: str, stops: tuple[str, ...]) -> tuple[str, str | None, int]:
        eos = int(tokenizer.eos_token_id)
        llm = ScriptedLLM(tokenizer.encode(text, add_special_tokens=False) + [eos])
        engine = engine_on(llm, asyncio.get_running_loop())  # type: ignore[arg-type]
        engine.stop_ids = frozenset({eos})
        engine.info = tokenizer_info_for(tokenizer)
        sequence = Sequence([1, 2, 3], None, None, 100, DecodeOptions(stop=stops))
        sequence.stop_scope = plan.stop_scope
        engine.params[id(sequence)] = object()
        [done] = await asyncio.wait_for(engine.submit([sequence]).result(), 5)
        return done.text(engine.info), done.finish_reason, llm.aborted

    async def main() -> None:
        assert await run("Hi. Bye." + call, ("Bye",)) == ("Hi. ", "stop", 1)  # cut in the content: aborted
        assert await run("Hi." + call, ("}", "<")) == ("Hi." + call, "stop", 0)  # none in the tag or the call
        assert await run("Hi <tool", ("<",)) == ("Hi ", "stop", 0)  # the tail was text after all

    asyncio.run(main())
