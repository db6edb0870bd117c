"""A scriptable HTTP/SSE server on loopback that writes chosen bytes with chosen pauses (for the remote engine's
tests and ``python -m app.bench remote``).

It is deliberately *not* a real HTTP framework: it writes exactly the bytes it is given, so a test can split an
SSE event at any byte, drip one byte at a time, hang before the first byte, drop the connection mid-reply, or
answer any status. It runs its own asyncio loop in a daemon thread, binds 127.0.0.1 only, and records each
request (``requests``) and when the client disconnected (``disconnects``: ``perf_counter`` seconds)::

    with SSEServer(lambda req: Reply(steps=[(b"data: [DONE]\\n\\n", 0.0)])) as srv:
        url = srv.url            # http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

#: One write: (bytes, seconds to pause after writing them).
Step = tuple[bytes, float]


@dataclass
class Reply:
    """What to answer one request with.

    - ``status`` / ``headers``: the status line and headers (Content-Type defaults to ``text/event-stream``);
    - ``steps``: the body, written piece by piece with a pause (s) after each; any iterable (a generator can
      produce an endless stream);
    - ``pace_per_s``: when set, write step *i* no earlier than ``t0 + i / pace_per_s`` (a deadline schedule:
      an event rate), ignoring the steps' own pauses;
    - ``chunked``: frame the body with ``Transfer-Encoding: chunked`` (one chunk per step); otherwise the body
      ends when the connection closes (``Connection: close``), as many SSE servers do;
    - ``end``: after the last step, ``"close"`` (a clean end), ``"drop"`` (abort the connection without the
      chunked terminator), or ``"hang"`` (keep the connection open until the client leaves);
    - ``hang_before_headers``: send nothing at all until the client leaves (a server that never answers).
    """

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    steps: Iterable[Step] = ()
    pace_per_s: float | None = None
    chunked: bool = False
    end: str = "close"
    hang_before_headers: bool = False


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


@dataclass
class Disconnect:
    """A client that left before the reply ended: when (``perf_counter`` s) and how many steps had been written."""

    t: float
    steps_written: int


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


def sse_event(obj: Any, eol: bytes = b"\n") -> bytes:
    """One SSE event with a JSON payload: ``data: {...}`` + two line ends."""
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode("utf-8") + eol + eol


def delta_event(content: str | None = None, *, reasoning: str | None = None, finish: str | None = None,
                model: str = "test-model", eol: bytes = b"\n") -> bytes:
    """A ``chat.completion.chunk`` event (OpenAI's shape) with one delta."""
    delta: dict[str, Any] = {}
    if content is not None:
        delta["content"] = content
    if reasoning is not None:
        delta["reasoning_content"] = reasoning
    return sse_event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model,
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}, eol)


def usage_event(prompt: int, completion: int, eol: bytes = b"\n") -> bytes:
    """The usage-only final event (``choices`` empty), as sent with ``stream_options.include_usage``."""
    return sse_event({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "test-model",
                      "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                               "total_tokens": prompt + completion}}, eol)


DONE = b"data: [DONE]\n\n"


def models_reply(*ids: str) -> Reply:
    body = json.dumps({"object": "list", "data": [{"id": i, "object": "model", "owned_by": "test"} for i in ids]})
    return Reply(headers=[("Content-Type", "application/json")], steps=[(body.encode(), 0.0)])


class SSEServer:
    """Serve ``handler(request) -> Reply`` on ``127.0.0.1`` (a free port) from a background thread.

    ``url`` is the API root (``http://127.0.0.1:PORT/v1``). ``GET /v1/models`` answers ``models_reply(model)``
    unless the handler returns something for it (the handler sees every request; return ``None`` for the
    default). ``requests`` and ``disconnects`` are appended from the server thread; ``wait_disconnects(n)``
    blocks until at least ``n`` clients left (or ``timeout`` s passed; returns success).
    """

    def __init__(self, handler: Callable[[Request], Reply | None], *, model: str = "test-model") -> None:
        self.handler = handler
        self.model = model
        self.requests: list[Request] = []
        self.disconnects: list[Disconnect] = []
        self._cond = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> SSEServer:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="sse-test-server", daemon=True)
        self._thread.start()
        self._ready.wait()

    def close(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def wait_disconnects(self, n: int, timeout: float = 60.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self.disconnects) >= n, timeout)

    # server thread -------------------------------------------------------------------------------------
    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            for task in asyncio.all_tasks(loop):
                task.cancel()
            with contextlib.suppress(Exception):
                loop.run_until_complete(asyncio.sleep(0))
            loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            import socket
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            first = await reader.readexactly(1)
            if first == b"\x16":           # a TLS ClientHello: answer plain HTTP, as a plain server would
                writer.write(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                await writer.drain()
                writer.close()
                return
            req = await self._read_request(reader, first)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            writer.close()
            return
        self.requests.append(req)
        reply = self.handler(req)
        if reply is None:
            reply = models_reply(self.model) if req.path.rstrip("/").endswith("/models") else Reply(status=404)
        written = 0
        left = asyncio.get_running_loop().create_future()

        async def watch() -> None:   # EOF or reset from the client: it left
            with contextlib.suppress(ConnectionError):
                while await reader.read(65536):
                    pass
            if not left.done():
                left.set_result(time.perf_counter())

        watcher = asyncio.create_task(watch())

        async def write_all() -> None:
            nonlocal written
            if reply.hang_before_headers:
                await asyncio.Future()          # until cancelled by the client leaving
            head = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
            names = {k.lower() for k, _ in reply.headers}
            if "content-type" not in names:
                head.append("Content-Type: text/event-stream; charset=utf-8")
            head += [f"{k}: {v}" for k, v in reply.headers]
            head.append("Transfer-Encoding: chunked" if reply.chunked else "Connection: close")
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            await writer.drain()
            t0 = time.perf_counter()
            for i, (data, pause) in enumerate(reply.steps):
                if reply.pace_per_s:
                    delay = t0 + i / reply.pace_per_s - time.perf_counter()
                    if delay > 0.0005:
                        await asyncio.sleep(delay)
                if data:
                    writer.write(b"%x\r\n%s\r\n" % (len(data), data) if reply.chunked else data)
                    await writer.drain()
                written += 1
                if written % 32 == 0:
                    await asyncio.sleep(0)      # let the disconnect watcher run when writing falls behind
                if pause and not reply.pace_per_s:
                    await asyncio.sleep(pause)
            if reply.end == "hang":
                await asyncio.Future()
            if reply.end == "drop":
                writer.transport.abort()
                return
            if reply.chunked:
                writer.write(b"0\r\n\r\n")
                await writer.drain()

        writing = asyncio.create_task(write_all())
        await asyncio.wait({writing, left}, return_when=asyncio.FIRST_COMPLETED)
        gone: float | None = None
        if left.done() and not writing.done():
            writing.cancel()
            gone = left.result()
        elif writing.done() and not writing.cancelled() and isinstance(writing.exception(), ConnectionError):
            gone = left.result() if left.done() else time.perf_counter()   # a write failed: the client left
        if gone is not None:
            with self._cond:
                self.disconnects.append(Disconnect(gone, written))
                self._cond.notify_all()
        with contextlib.suppress(BaseException):
            await writing
        watcher.cancel()
        with contextlib.suppress(Exception):
            writer.close()

    @staticmethod
    async def _read_request(reader: asyncio.StreamReader, first: bytes) -> Request:
        head = first + await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0") or 0)
        body = await reader.readexactly(n) if n else b""
        return Request(method, path, headers, body)
