"""generate() edges that mutation testing found unguarded (``BROOK_MUTATE=app.core.streaming.generation python3 -m
mutmut
run "app.core.streaming.generation*"``): the reply's recorded parameters and figures, a stream that ends without a stop
reason, the kind of timeout reported, messages left out to fit the context window."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping, Sequence

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.streaming.generation import StreamSettings, generate
from app.core.streaming.scheduler import FairScheduler
from app.core.types import Chunk, GenerationParams
from app.engine.scripted import ScriptedEngine
from tests.helpers import run


def chat(prompt: str = "hello") -> tuple[Conversation, Message]:
    c = Conversation()
    c.add(Message(Role.USER, prompt))
    return c, c.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))


class Plain:
    """A chunk source that ends without any finish reason, and can leave messages out of the prompt."""

    name = "plain"

    def __init__(self, pieces: list[str], left_out: int = 0) -> None:
        self.pieces, self.left_out = pieces, left_out

    def fit_context(self, messages: Sequence[Mapping[str, str]], params: GenerationParams) -> list:
        class Fitted(list):
            left_out = self.left_out
        return Fitted(messages)

    def stream(self, messages, params, stop: threading.Event) -> Iterator[Chunk]:  # type: ignore[no-untyped-def]
        for p in self.pieces:
            yield Chunk(p)


def test_a_stream_without_a_finish_reason_ends_with_stop_reason_stop() -> None:
    c, reply = chat()
    run(generate(Plain(["a", "b"]), FairScheduler(), c, reply, GenerationParams()))
    assert reply.status is MessageStatus.DONE and reply.text == "ab" and reply.stop_reason == "stop"


def test_the_reply_records_its_parameters_and_whole_timing() -> None:
    c, reply = chat()
    params = GenerationParams(temperature=0.3, max_tokens=77, seed=5)
    run(generate(Plain(["x"]), FairScheduler(), c, reply, params))
    assert reply.params is not None
    assert reply.params["temperature"] == 0.3 and reply.params["max_tokens"] == 77 and reply.params["seed"] == 5
    assert reply.metrics is not None and reply.metrics["total_ms"] is not None and reply.metrics["total_ms"] >= 0
    assert reply.left_out == 0                       # nothing had to be left out


def test_messages_left_out_to_fit_the_window_are_recorded_on_the_reply() -> None:
    c, reply = chat()
    run(generate(Plain(["x"], left_out=2), FairScheduler(), c, reply, GenerationParams()))
    assert reply.status is MessageStatus.DONE and reply.left_out == 2


class FitsItself(Plain):
    """A chunk source that fits the messages inside ``stream`` (as the engine host does) and says what it left
    out through ``on_fit``; its ``fit_context`` must not be called first."""

    fits_in_stream = True

    def fit_context(self, messages: Sequence[Mapping[str, str]], params: GenerationParams) -> list:
        raise AssertionError("fitted twice: the engine fits inside stream")

    def stream(self, messages, params, stop: threading.Event, on_fit=None) -> Iterator[Chunk]:  # type: ignore[no-untyped-def]
        self.got = list(messages)
        on_fit(self.left_out, 123)
        yield from super().stream(messages, params, stop)


def test_an_engine_that_fits_inside_its_stream_is_asked_once_and_its_left_out_recorded() -> None:
    c, reply = chat("question")
    engine = FitsItself(["x", "y"], left_out=3)
    run(generate(engine, FairScheduler(), c, reply, GenerationParams()))
    assert reply.status is MessageStatus.DONE and reply.text == "xy" and reply.left_out == 3
    assert engine.got == [{"role": "user", "content": "question"}]       # the conversation as it is


def test_a_reply_that_waited_for_the_model_says_how_long() -> None:
    e = ScriptedEngine(["w"] * 20, tokens_per_s=400)
    e.load()
    sched = FairScheduler()
    c = Conversation()
    c.add(Message(Role.USER, "hi"))
    first, second = c.add(Message(Role.ASSISTANT)), c.add(Message(Role.ASSISTANT))

    async def main() -> None:
        await asyncio.gather(generate(e, sched, c, first, GenerationParams()),
                             generate(e, sched, c, second, GenerationParams()))
    run(main())
    assert first.metrics is not None and second.metrics is not None
    assert second.metrics["wait_ms"] > 0 and second.metrics["wait_ms"] > first.metrics["wait_ms"]


def test_a_budget_that_runs_out_after_the_first_token_is_a_total_timeout() -> None:
    e = ScriptedEngine(["b"] * 10_000, tokens_per_s=200)
    e.load()
    c, reply = chat()
    run(generate(e, FairScheduler(), c, reply, GenerationParams(max_tokens=10_000),
                 settings=StreamSettings(first_token_timeout_s=2.0, total_timeout_s=2.5)))
    assert reply.status is MessageStatus.TIMED_OUT and reply.text          # tokens came, then time ran out
    assert reply.error is not None and "total timeout" in reply.error and "2.5 s" in reply.error


class Hashing(Plain):
    """An engine whose model-file hash becomes known while a reply streams (hashed in the background)."""

    def __init__(self, pieces: list[str]) -> None:
        super().__init__(pieces)
        self.calls = 0

    def provenance(self) -> dict:
        self.calls += 1
        facts = {"model_file": "m.gguf"}
        if self.calls > 1:
            facts["model_sha256"] = "ab" * 32
        return facts


def test_a_model_hash_known_by_the_end_of_the_reply_is_recorded() -> None:
    c, reply = chat()
    e = Hashing(["x"])
    run(generate(e, FairScheduler(), c, reply, GenerationParams(seed=1)))
    assert reply.provenance is not None
    assert reply.provenance["model_file"] == "m.gguf" and reply.provenance["model_sha256"] == "ab" * 32
    assert e.calls == 2
    again = c.add(Message(Role.ASSISTANT))
    run(generate(e, FairScheduler(), c, again, GenerationParams(seed=1)))
    assert again.provenance is not None and again.provenance["model_sha256"] == "ab" * 32
    assert e.calls == 3                                   # known from the start: not asked again at the end
