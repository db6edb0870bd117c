"""The remote engine against a fault-injecting SSE server on loopback (issue 12): every byte timing and every fault.

The server (``app.bench.sse_server``) writes exactly the bytes a test chooses, with chosen pauses; the engine is
the real one (httpx + httpx-sse), driven through the real pipeline (``generate``: TokenStream, scheduler).
"""

from __future__ import annotations

import asyncio
import socket
import threading

import pytest

from app.bench.sse_server import DONE, Reply, SSEServer, delta_event, models_reply, sse_event, usage_event
from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.history.store import Store
from app.core.render.markdown import render_markdown, split_thinking
from app.core.streaming.generation import Generation, StreamSettings, generate
from app.core.streaming.scheduler import FairScheduler, scheduler_for
from app.core.types import GenerationParams
from app.engine.remote.engine import (
    RemoteAuthError,
    RemoteConnectError,
    RemoteConnection,
    RemoteEngine,
    RemoteModelError,
    RemoteRateLimitError,
    RemoteServerError,
    normalize_base_url,
)

pytestmark = pytest.mark.timeout(120)

PIECES = ["Hé", "llo — ", "世界 ", "🙂", " ok\n\n```py\nx = 1\n```\n"]
TEXT = "".join(PIECES)


def body(pieces: list[str] = PIECES, *, eol: bytes = b"\n", usage: bool = True, done: bool = True,
         finish: bool = True) -> bytes:
    out = delta_event("", eol=eol)                        # the role-only first delta (content "")
    out += b"".join(delta_event(p, eol=eol) for p in pieces)
    if finish:
        out += delta_event(None, finish="stop", eol=eol)
    if usage:
        out += usage_event(9, len(pieces), eol=eol)
    if done:
        out += DONE.replace(b"\n", eol)
    return out


def serve(make_reply):  # type: ignore[no-untyped-def]
    """An SSEServer whose chat completions answer ``make_reply(request)``."""
    return SSEServer(lambda req: make_reply(req) if req.path.endswith("/chat/completions") else None)


def engine_for(srv: SSEServer, **kw) -> RemoteEngine:  # type: ignore[no-untyped-def]
    e = RemoteEngine(RemoteConnection(srv.url, **kw))
    e.load()
    return e


#: The generation of each reply made by ``reply_once`` (its stream, for the tests that check the worker ended).
GENERATIONS: dict[int, Generation] = {}


def reply_once(engine: RemoteEngine, settings: StreamSettings | None = None,
               stop_after_first: bool = False) -> Message:
    """One reply through ``generate`` (the app's pipeline). With ``stop_after_first``: cancel the task (Stop)
    as soon as the first chunk arrived, then wait for the worker to return."""
    conv = Conversation()
    conv.add(Message(Role.USER, "hi"))
    reply = conv.add(Message(Role.ASSISTANT, status=MessageStatus.WAITING))
    gen = GENERATIONS[reply.id] = Generation(reply, conv)

    async def main() -> Message:
        task = asyncio.ensure_future(generate(engine, scheduler_for(engine), conv, reply, GenerationParams(),
                                              settings=settings, generation=gen))
        if stop_after_first:
            while reply.chunks == 0 and not task.done():
                await asyncio.sleep(0.005)
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        if gen.stream is not None:
            await gen.stream.wait_closed()
        return reply

    return asyncio.run(main())


def chunks_of(engine: RemoteEngine) -> list[str]:
    stop = threading.Event()
    return [c.text for c in engine.stream([{"role": "user", "content": "hi"}], GenerationParams(), stop)]


# byte timing ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_an_event_split_at_every_byte_reads_the_same_text() -> None:
    """Split inside a multi-byte character, inside the JSON, between the two newlines, inside CRLF: each
    position is one request whose body arrives in two reads."""
    data = (delta_event("", eol=b"\r\n") + b": keep-alive\r\n\r\n" + delta_event("é世🙂", eol=b"\r\n")
            + delta_event("ok") + delta_event(None, finish="stop") + DONE)
    split = {"k": 0}
    with serve(lambda _r: Reply(steps=[(data[:split["k"]], 0.003), (data[split["k"]:], 0.0)])) as srv:
        engine = engine_for(srv)
        for k in range(1, len(data)):
            split["k"] = k
            texts = chunks_of(engine)
            assert "".join(texts) == "é世🙂ok", f"split at byte {k}: {texts!r}"


def test_one_byte_drip_streams_every_character_once_in_order() -> None:
    data = body(eol=b"\r\n")
    with serve(lambda _r: Reply(steps=[(data[i:i + 1], 0.0005) for i in range(len(data))])) as srv:
        engine = engine_for(srv)
        reply = reply_once(engine)
    assert reply.status is MessageStatus.DONE, reply.error
    assert reply.text == TEXT
    assert "\ufffd" not in reply.text
    assert reply.chunks == len(PIECES) + 1          # one chunk per content event, plus the finish event
    assert engine.last_usage == {"prompt_tokens": 9, "completion_tokens": len(PIECES),
                                 "total_tokens": 9 + len(PIECES)}


def test_a_whole_reply_in_one_burst(tmp_path) -> None:  # type: ignore[no-untyped-def]
    many = [f"w{i} é " for i in range(500)]
    with serve(lambda _r: Reply(steps=[(body(many), 0.0)])) as srv:
        reply = reply_once(engine_for(srv))
    assert reply.status is MessageStatus.DONE
    assert reply.text == "".join(many)
    # ... and it is saved as streamed
    store = Store(tmp_path / "h.sqlite3")
    conv = Conversation(messages=[Message(Role.USER, "hi"), reply])
    store.create_conversation(conv)
    for m in conv.messages:
        store.save_message(conv, m)
    assert conv.id is not None
    assert store.load_conversation(conv.id).messages[-1].text == "".join(many)
    store.close()


def test_keep_alive_comments_crlf_and_done_without_usage() -> None:
    data = b": ping\r\n\r\n" + body(usage=False, eol=b"\r\n").replace(b"data: {", b": keep-alive\r\ndata: {")
    with serve(lambda _r: Reply(steps=[(data, 0.0)], chunked=True)) as srv:
        engine = engine_for(srv)
        reply = reply_once(engine)
    assert reply.text == TEXT and reply.status is MessageStatus.DONE
    assert engine.last_usage is None


def test_reasoning_content_becomes_the_thinking_section() -> None:
    data = (delta_event(reasoning="Let me ") + delta_event(reasoning="think.") + delta_event("Answer")
            + delta_event(" here.") + delta_event(None, finish="stop") + DONE)
    with serve(lambda _r: Reply(steps=[(data, 0.0)])) as srv:
        reply = reply_once(engine_for(srv))
    assert reply.text == "<think>Let me think.</think>Answer here."
    assert split_thinking(reply.text) == ("Let me think.", "Answer here.", True)


@pytest.mark.parametrize(("events", "kept"), [
    # vLLM may send reasoning after the answer started (a reasoning parser that re-enters)
    ([("r", "Plan."), ("c", "Part one."), ("r", "Wait, "), ("r", "recheck."), ("c", " Part two.")],
     ["Plan.", "Part one.", "Wait, recheck.", "Part two."]),
    ([("c", "Answer first."), ("r", "Then a thought.")], ["Answer first.", "Then a thought."]),
    ([("c", "A"), ("r", "x"), ("c", "B"), ("r", "y"), ("c", "C")], ["A", "x", "B", "y", "C"]),
])
def test_reasoning_after_the_answer_started_is_kept_and_folds_where_it_stands(
        events: list[tuple[str, str]], kept: list[str]) -> None:
    data = b"".join(delta_event(reasoning=t) if kind == "r" else delta_event(t) for kind, t in events)
    data += delta_event(None, finish="stop") + DONE
    with serve(lambda _r: Reply(steps=[(data, 0.0)])) as srv:
        reply = reply_once(engine_for(srv))
    positions = [reply.text.find(k) for k in kept]
    assert -1 not in positions and positions == sorted(positions)        # nothing dropped, in order
    html = render_markdown(reply.text)
    assert html.count('class="brook-thinking"') == sum(
        1 for i, (kind, _t) in enumerate(events) if kind == "r" and (i == 0 or events[i - 1][0] != "r"))
    assert "&lt;think&gt;" not in html


def test_a_whole_reply_keeps_its_reasoning_content() -> None:
    payload = (b'{"choices": [{"message": {"role": "assistant", "content": "Four.", '
               b'"reasoning_content": "2+2 is 4."}, "finish_reason": "stop"}]}')
    with serve(lambda _r: Reply(headers=[("Content-Type", "application/json")], steps=[(payload, 0.0)])) as srv:
        reply = reply_once(engine_for(srv))
    assert split_thinking(reply.text) == ("2+2 is 4.", "Four.", True)


def test_the_request_asks_for_a_stream_with_usage_and_falls_back_when_refused() -> None:
    def answer(req):  # type: ignore[no-untyped-def]
        if "stream_options" in req.json():
            return Reply(status=400, headers=[("Content-Type", "application/json")],
                         steps=[(b'{"error": {"message": "unknown field stream_options"}}', 0.0)])
        return Reply(steps=[(body(), 0.0)])

    with serve(answer) as srv:
        engine = engine_for(srv, model="test-model")
        assert "".join(chunks_of(engine)) == TEXT
        sent = [r.json() for r in srv.requests if r.path.endswith("/chat/completions")]
    assert sent[0]["stream"] is True and sent[0]["stream_options"] == {"include_usage": True}
    assert sent[0]["model"] == "test-model" and sent[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert "stream_options" not in sent[1]


# faults ----------------------------------------------------------------------------------------------------
def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_connection_refused_is_explained() -> None:
    engine = RemoteEngine(RemoteConnection(f"http://127.0.0.1:{_free_port()}/v1"))
    with pytest.raises(RemoteConnectError, match="connection refused"):
        engine.load()


def test_dns_failure_is_explained() -> None:
    engine = RemoteEngine(RemoteConnection("http://brook-test-host.invalid:8080/v1"))   # RFC 2606: never resolves
    with pytest.raises(RemoteConnectError, match="DNS lookup failed"):
        engine.load()


def test_tls_error_is_explained() -> None:
    with SSEServer(lambda _r: None) as srv:     # plain HTTP: a TLS handshake with it fails
        engine = RemoteEngine(RemoteConnection(srv.url.replace("http://", "https://")))
        with pytest.raises(RemoteConnectError, match="TLS error"):
            engine.load()


def _json_error(status: int, message: str, headers: list[tuple[str, str]] | None = None) -> Reply:
    payload = b'{"error": {"message": "%s", "type": "x"}}' % message.encode()
    return Reply(status=status, headers=[("Content-Type", "application/json"), *(headers or [])],
                 steps=[(payload, 0.0)])


@pytest.mark.parametrize(("status", "error", "words"), [
    (401, RemoteAuthError, "Check the API key"),
    (403, RemoteAuthError, "Check the API key"),
    (404, RemoteModelError, "Check the model name"),
    (500, RemoteServerError, "HTTP 500"),
    (503, RemoteServerError, "may still be loading"),
])
def test_http_errors_are_explained_and_keep_the_chat(status: int, error: type, words: str) -> None:
    with serve(lambda _r: _json_error(status, "server says no")) as srv:
        engine = engine_for(srv)
        with pytest.raises(error, match=words) as info:
            chunks_of(engine)
        assert "server says no" in str(info.value)
        reply = reply_once(engine)
    assert reply.status is MessageStatus.ERROR and reply.error == str(info.value)


def test_model_list_refused_for_a_bad_key() -> None:
    with SSEServer(lambda _r: _json_error(401, "invalid api key")) as srv:
        with pytest.raises(RemoteAuthError, match="invalid api key"):
            RemoteEngine(RemoteConnection(srv.url, api_key="wrong")).load()
        assert srv.requests[0].headers["authorization"] == "Bearer wrong"


def test_a_model_the_server_does_not_offer() -> None:
    with SSEServer(lambda _r: models_reply("a", "b")) as srv:
        with pytest.raises(RemoteModelError, match="offers: a, b"):
            RemoteEngine(RemoteConnection(srv.url, model="c")).load()
        engine = RemoteEngine(RemoteConnection(srv.url))
        engine.load()
    assert engine.name == "a" and engine.models == ["a", "b"]


def test_rate_limit_shows_retry_after() -> None:
    with serve(lambda _r: _json_error(429, "slow down", [("Retry-After", "7")])) as srv, \
            pytest.raises(RemoteRateLimitError, match="Retry after 7 s") as info:
        chunks_of(engine_for(srv))
    assert info.value.retry_after_s == 7


def test_an_error_object_mid_stream_keeps_the_partial_reply() -> None:
    data = delta_event("partial ") + delta_event("text") + sse_event({"error": {"message": "CUDA out of memory"}})
    with serve(lambda _r: Reply(steps=[(data, 0.0)], end="hang")) as srv:
        reply = reply_once(engine_for(srv))
    assert reply.status is MessageStatus.ERROR
    assert reply.text == "partial text"
    assert "error mid-reply: CUDA out of memory" in (reply.error or "")


@pytest.mark.parametrize("chunked", [True, False])
def test_a_connection_dropped_mid_reply_keeps_the_partial_text(chunked: bool) -> None:
    data = delta_event("partial ") + delta_event("text")
    with serve(lambda _r: Reply(steps=[(data, 0.05)], chunked=chunked, end="drop")) as srv:
        reply = reply_once(engine_for(srv))
    assert reply.status is MessageStatus.ERROR
    assert reply.text == "partial text"
    assert "the text so far is kept" in (reply.error or "")


def test_a_server_that_never_sends_the_first_byte_times_out_and_is_disconnected() -> None:
    with serve(lambda _r: Reply(hang_before_headers=True)) as srv:
        reply = reply_once(engine_for(srv), StreamSettings(first_token_timeout_s=0.5))
        assert srv.wait_disconnects(1)        # Stop (the timeout) closed the socket: the server saw it
    assert reply.status is MessageStatus.TIMED_OUT
    assert "first-token timeout" in (reply.error or "")
    stream = GENERATIONS[reply.id].stream
    assert stream is not None and not stream.alive


# stop ---------------------------------------------------------------------------------------------------------
def test_stop_mid_reply_closes_the_stream_at_once() -> None:
    """The server sends one event and then nothing (the next token is 'slow'): a blocked read that only a
    socket shutdown from the loop side can end. Stop → the server sees the disconnect; nothing is added."""
    with serve(lambda _r: Reply(steps=[(delta_event("first"), 0.0)], end="hang")) as srv:
        engine = engine_for(srv)
        reply = reply_once(engine, stop_after_first=True)
        assert srv.wait_disconnects(1)
        assert srv.disconnects[0].steps_written == 1
        # the engine is free at once: the next reply is served
        srv.handler = lambda req: (Reply(steps=[(body(), 0.0)]) if req.path.endswith("/chat/completions")
                                   else None)
        again = reply_once(engine)
    assert reply.status is MessageStatus.STOPPED and reply.text == "first"
    assert not GENERATIONS[reply.id].worker_alive
    assert again.status is MessageStatus.DONE and again.text == TEXT


def test_stop_while_waiting_for_the_headers() -> None:
    with serve(lambda _r: Reply(hang_before_headers=True)) as srv:
        engine = engine_for(srv)
        conv = Conversation(messages=[Message(Role.USER, "hi")])
        reply = conv.add(Message(Role.ASSISTANT))
        gen = Generation(reply, conv)

        async def main() -> None:
            task = asyncio.ensure_future(generate(engine, FairScheduler(), conv, reply, GenerationParams(),
                                                  generation=gen))
            while len(srv.requests) < 2:          # GET /models, then the POST is in
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert gen.stream is not None
            await gen.stream.wait_closed()

        asyncio.run(main())
        assert srv.wait_disconnects(1)
    assert reply.status is MessageStatus.STOPPED


def test_the_scheduler_limits_concurrent_generations_per_connection() -> None:
    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def answer(_req):  # type: ignore[no-untyped-def]
        def steps():  # type: ignore[no-untyped-def]
            with lock:
                active["now"] += 1
                active["max"] = max(active["max"], active["now"])
            yield delta_event("a"), 0.1
            with lock:
                active["now"] -= 1
            yield delta_event(None, finish="stop") + DONE, 0.0
        return Reply(steps=steps())

    with serve(answer) as srv:
        engine = engine_for(srv, max_concurrency=2)
        assert scheduler_for(engine).limit == 2

        async def main() -> list[Message]:
            sched = scheduler_for(engine)
            replies = []
            tasks = []
            for _ in range(5):
                conv = Conversation(messages=[Message(Role.USER, "hi")])
                r = conv.add(Message(Role.ASSISTANT))
                replies.append(r)
                tasks.append(asyncio.ensure_future(generate(engine, sched, conv, r, GenerationParams())))
            await asyncio.gather(*tasks)
            return replies

        replies = asyncio.run(main())
    assert [r.text for r in replies] == ["a"] * 5
    assert active["max"] == 2


def test_base_url_forms() -> None:
    assert normalize_base_url("http://h:1") == "http://h:1/v1"
    assert normalize_base_url("http://h:1/v1/") == "http://h:1/v1"
    assert normalize_base_url("https://h/api/v1/chat/completions") == "https://h/api/v1"
    with pytest.raises(RemoteConnectError):
        normalize_base_url("h:1/v1")
