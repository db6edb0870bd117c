"""Hostile servers on loopback: every request to a server has a total deadline and a size cap, events of the
wrong shape are read safely, and every thread that talks to a server ends when the engine unloads (closing the
window). Each test bounds what the old code did without limit: a trickle of one byte at a time, a body of many MB,
a ``delta`` that is a string."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from app.bench.sse_server import DONE, Reply, SSEServer, delta_event, sse_event
from app.core.types import GenerationParams
from app.engine.remote import bounded
from app.engine.remote import engine as remote_engine
from app.engine.remote import tokens as remote_tokens
from app.engine.remote.engine import (
    RemoteConnection,
    RemoteEngine,
    RemoteProtocolError,
    RemoteServerError,
    RemoteTimeoutError,
    fetch_models,
)
from tests.helpers import ROOT

pytestmark = pytest.mark.timeout(120)
DEADLINE_S = 1.0


def trickle(data: bytes = b'{"object": "list", "data": [' + b" " * 100_000, every_s: float = 0.2):
    """One byte every ``every_s`` seconds, forever (long after any sensible deadline)."""
    return ((data[i % len(data):i % len(data) + 1], every_s) for i in range(10 ** 9))


def json_reply(steps, status: int = 200, **kw) -> Reply:  # type: ignore[no-untyped-def]
    return Reply(status=status, headers=[("Content-Type", "application/json")], steps=steps, **kw)


@pytest.fixture(autouse=True)
def _short_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote_engine, "LIST_TIMEOUT_S", DEADLINE_S)
    monkeypatch.setattr(remote_tokens, "TOKENS_TIMEOUT_S", DEADLINE_S)


@pytest.mark.parametrize("reply", [
    lambda: json_reply(trickle()),                                 # a byte every 0.2 s after the headers
    lambda: json_reply(trickle(), chunked=True),                   # the same, chunked
    lambda: json_reply((), hang_before_headers=True),              # never answers at all
    lambda: json_reply(trickle(), status=500),                     # an error page, trickled
], ids=["trickle", "chunked", "silent", "error-trickle"])
def test_a_model_list_that_never_ends_fails_within_the_deadline(reply) -> None:  # type: ignore[no-untyped-def]
    with SSEServer(lambda req: reply() if req.path.endswith("/models") else None) as srv:
        for call in (lambda: RemoteEngine(RemoteConnection(srv.url)).load(),
                     lambda: fetch_models(RemoteConnection(srv.url))):
            t0 = time.perf_counter()
            with pytest.raises(RemoteTimeoutError, match="did not answer within 1 s"):
                call()
            assert time.perf_counter() - t0 < DEADLINE_S + 2.0      # before: as long as the server trickled


def test_a_huge_model_list_is_refused_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "MAX_BODY_BYTES", 1 << 20)
    monkeypatch.setattr(remote_engine, "LIST_TIMEOUT_S", 60.0)
    piece = b" " * 65536
    with SSEServer(lambda req: json_reply((piece, 0.0) for _ in range(16 * 300)) if req.path.endswith("/models")
                   else None) as srv:                            # 300 MB of spaces
        with pytest.raises(RemoteProtocolError, match="more than"):
            RemoteEngine(RemoteConnection(srv.url)).load()
        assert srv.wait_disconnects(1)
        assert srv.disconnects[0].steps_written < 16 * 300 // 10      # it stopped reading at the cap


def _chat(srv: SSEServer) -> tuple[RemoteEngine, list[str]]:
    e = RemoteEngine(RemoteConnection(srv.url))
    e.load()
    return e, []


@pytest.mark.parametrize("status", [500, 400, 503])
def test_a_huge_error_body_is_read_only_up_to_the_cap(status: int) -> None:
    piece = b"<html>" + b"x" * 65530
    with SSEServer(lambda req: json_reply([(piece, 0.0) for _ in range(16 * 300)], status=status)
                   if req.path.endswith("/chat/completions") else None) as srv:     # 300 MB of error page
        e, _ = _chat(srv)
        t0 = time.perf_counter()
        with pytest.raises(RemoteServerError if status >= 500 else Exception) as err:
            list(e.stream([{"role": "user", "content": "hi"}], GenerationParams(), threading.Event()))
        assert time.perf_counter() - t0 < 10
        assert f"HTTP {status}" in str(err.value) and len(str(err.value)) < 600
        assert srv.wait_disconnects(1)
        assert srv.disconnects[-1].steps_written < 16 * 300 // 10


def test_events_of_the_wrong_shape_are_read_safely() -> None:
    events = [
        sse_event({"choices": [{"delta": "a string"}]}),
        sse_event({"choices": [{"delta": ["a", "list"]}]}),
        sse_event({"choices": [{"delta": 5}]}),
        sse_event({"choices": [{"delta": {"content": 7}}]}),
        sse_event({"choices": [{"delta": {"content": "ok"}, "finish_reason": {"an": "object"}}]}),
        sse_event({"choices": ["not an object"]}),
        sse_event({"choices": {"0": {}}}),
        sse_event({"usage": ["a list"], "choices": []}),
        sse_event({"error": False, "choices": [{"delta": {"content": " fine"}}]}),
        delta_event(None, finish="stop"),
        DONE,
    ]
    with SSEServer(lambda req: Reply(steps=[(b"".join(events), 0.0)])
                   if req.path.endswith("/chat/completions") else None) as srv:
        e, _ = _chat(srv)
        chunks = list(e.stream([{"role": "user", "content": "hi"}], GenerationParams(), threading.Event()))
    assert "".join(c.text for c in chunks) == "ok fine" and chunks[-1].finish_reason == "stop"


def test_an_endless_event_line_is_refused_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "MAX_EVENT_CHARS", 1 << 20)
    head = delta_event("kept ")
    with SSEServer(lambda req: Reply(steps=[(head, 0.0), *((b'data: {"x": "' + b"y" * 65536, 0.0)
                                                          for _ in range(16 * 300))])
                   if req.path.endswith("/chat/completions") else None) as srv:
        e, _ = _chat(srv)
        got: list[str] = []
        with pytest.raises(RemoteProtocolError, match="event line longer"):
            for c in e.stream([{"role": "user", "content": "hi"}], GenerationParams(), threading.Event()):
                got.append(c.text)
        assert got == ["kept "]
        assert srv.wait_disconnects(1) and srv.disconnects[-1].steps_written < 16 * 300 // 10


def _extras_trickle(req):  # type: ignore[no-untyped-def]
    if req.path.endswith(("/apply-template", "/tokenize", "/props", "/extras/tokenize/count")):
        return json_reply(trickle(b'{"tokens": [' + b"1, " * 1000))
    return None


def test_trickling_tokenizer_and_props_end_within_the_deadline() -> None:
    with SSEServer(_extras_trickle) as srv:
        e, _ = _chat(srv)
        t0 = time.perf_counter()
        with pytest.raises(RemoteTimeoutError):
            e.count_prompt([{"role": "user", "content": "hello"}])
        assert time.perf_counter() - t0 < DEADLINE_S + 2.0
        t0 = time.perf_counter()
        assert e.context_window() is None
        assert time.perf_counter() - t0 < 2 * DEADLINE_S + 2.0      # /props, then /models


def test_unload_ends_every_request_in_flight_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote_tokens, "TOKENS_TIMEOUT_S", 600.0)
    with SSEServer(_extras_trickle) as srv:
        e, _ = _chat(srv)
        errors: list[BaseException] = []

        def count() -> None:
            try:
                e.count_prompt([{"role": "user", "content": "hello"}])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=count) for _ in range(3)]
        for t in threads:
            t.start()
        while len(e.requests) < 3:
            time.sleep(0.01)
        t0 = time.perf_counter()
        e.unload()
        for t in threads:
            t.join(30)
        assert time.perf_counter() - t0 < 2.0 and not any(t.is_alive() for t in threads)
        assert len(errors) == 3 and all(isinstance(x, RemoteTimeoutError) for x in errors)


_CHILD = textwrap.dedent("""
    import asyncio, sys, time
    sys.path.insert(0, {root!r})
    from app.engine.remote.engine import RemoteConnection, RemoteEngine
    from app.engine.remote import tokens
    tokens.TOKENS_TIMEOUT_S = 600.0

    async def main():
        e = RemoteEngine(RemoteConnection({url!r}))
        e.load()
        loop = asyncio.get_running_loop()
        # as the context meter does: the default executor (its threads are joined when the process exits)
        job = loop.run_in_executor(None, e.count_prompt, [{{"role": "user", "content": "hi"}}])
        while not len(e.requests):
            await asyncio.sleep(0.01)
        e.unload()                       # closing the window
        try:
            await job
        except Exception as exc:
            print(type(exc).__name__, flush=True)

    asyncio.run(main())
""")


def test_the_process_exits_after_closing_while_the_meter_counts_on_a_trickling_server() -> None:
    with SSEServer(_extras_trickle) as srv:
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _CHILD.format(root=str(ROOT), url=srv.url)],
                             capture_output=True, text=True, timeout=60, env=dict(os.environ))
        took = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "RemoteTimeoutError" and took < 20
