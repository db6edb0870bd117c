"""Requests to a server with a total deadline and a size cap, which the window can end at once.

httpx's timeouts are per operation (connect, each read): a server that trickles one byte every 2 s never trips
a 15 s read timeout, and ``resp.read()`` / ``resp.json()`` take a body of any size into memory. Every request
Brook makes to a server other than the reply's own stream goes through ``request``:

- a **total deadline** (``total_s``, connect included): a timer shuts the request's socket down when it passes
  (``Abort``; a blocked read wakes at once) and the request raises ``RemoteTimeoutError``;
- a **size cap** (``max_bytes``): the body is read piece by piece and a longer one raises
  ``RemoteProtocolError`` (``truncate=True``: cut at the cap instead; an error body, of which 200 characters are
  shown);
- an ``Aborts`` set: ``RemoteEngine.unload`` (closing the window, Server → Use the local model) shuts every
  request in flight down, so no thread that talks to a server outlives the window.

``capped_lines`` bounds the reply's SSE stream the same way per line: one event line longer than the cap (a
server sending 300 MB without a newline) raises instead of filling memory.

Each request uses a fresh connection (the client must not keep connections alive: ``fresh_client``), so the
socket is known from httpcore's trace extension before the first byte is awaited.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from app.engine.remote.errors import RemoteProtocolError, RemoteTimeoutError, transport_error

#: Seconds to open a connection when the caller names none.
CONNECT_S = 10.0
#: Largest body of a model list, a tokenizer's or props answer (bytes).
MAX_BODY_BYTES = 8 << 20
#: Largest error body read (bytes; the first 200 characters are shown).
MAX_ERROR_BYTES = 64 << 10
#: Longest line of a reply's SSE stream (characters): one event of JSON.
MAX_EVENT_CHARS = 4 << 20


class Abort:
    """Shuts one request's socket down from another thread (Stop, a deadline, closing), waking a blocked read.
    ``why`` says who fired it first ("stop", "deadline", "closing")."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.fired = False
        self.why: str | None = None
        self.t_fired: float | None = None

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpcore's trace extension (called in the worker thread): remember the new connection's socket."""
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            with self._lock:
                self._sock = sock
                fired = self.fired
            if fired:
                self._shutdown(sock)

    def fire(self, why: str = "stop") -> None:
        with self._lock:
            if self.fired:
                return
            self.fired, self.why = True, why
            self.t_fired = time.perf_counter()
            sock = self._sock
        self._shutdown(sock)

    @staticmethod
    def _shutdown(sock: socket.socket | None) -> None:
        if sock is None:
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:        # already closed
            pass


class Aborts:
    """The requests in flight to one server; ``fire_all`` ends them (and any started later is ended at once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[Abort] = set()
        self.closed = False

    def add(self, abort: Abort) -> None:
        with self._lock:
            self._live.add(abort)
            closed = self.closed
        if closed:
            abort.fire("closing")

    def discard(self, abort: Abort) -> None:
        with self._lock:
            self._live.discard(abort)

    def fire_all(self, why: str = "closing") -> int:
        """End every request in flight; returns how many there were."""
        with self._lock:
            live = list(self._live)
        for a in live:
            a.fire(why)
        return len(live)

    def __len__(self) -> int:
        with self._lock:
            return len(self._live)


def fresh_client(headers: Mapping[str, str], connect_s: float) -> httpx.Client:
    """An httpx client that opens a fresh connection per request (so ``Abort`` always knows the socket) and has
    no read timeout of its own (``request``'s deadline is the budget)."""
    return httpx.Client(timeout=httpx.Timeout(None, connect=connect_s),
                        limits=httpx.Limits(max_keepalive_connections=0), headers=dict(headers))


@dataclass(frozen=True, slots=True)
class Answer:
    """A server's answer: status, headers and the body (at most the cap), read within the deadline."""

    status_code: int
    headers: httpx.Headers
    content: bytes
    request: httpx.Request
    reason_phrase: str = ""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON. Raises ``ValueError`` (also for JSON nested too deeply)."""
        try:
            return json.loads(self.content)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None


def request(client: httpx.Client, method: str, url: str, *, total_s: float, max_bytes: int = MAX_BODY_BYTES,
            aborts: Aborts | None = None, base_url: str = "", **kwargs: Any) -> Answer:
    """``method url`` on ``client`` (from ``fresh_client``), read whole within ``total_s`` seconds and
    ``max_bytes`` bytes (an error status's body is cut at ``MAX_ERROR_BYTES`` instead). Raises
    ``RemoteTimeoutError`` past the deadline, ``RemoteProtocolError`` for a body over the cap, ``RemoteError``
    (``transport_error``) for a failure below HTTP and when ``aborts`` was fired (closing)."""
    abort = Abort()
    timer = threading.Timer(total_s, abort.fire, args=("deadline",))
    timer.daemon = True
    if aborts is not None:
        aborts.add(abort)
    where = base_url or url
    try:
        timer.start()
        with client.stream(method, url, extensions={"trace": abort.trace}, **kwargs) as resp:
            cap = max_bytes if resp.status_code < 400 else MAX_ERROR_BYTES
            body = bytearray()
            for piece in resp.iter_bytes():
                body += piece
                if len(body) > cap:
                    if resp.status_code >= 400:
                        del body[cap:]
                        break
                    raise RemoteProtocolError(f"{url} answered more than {cap / 2**20:g} MiB; that is not an "
                                              "answer Brook expects there.")
            if abort.fired:      # the shut socket read as the end of a body framed by closing the connection
                raise _ended(abort, url, total_s)
            return Answer(resp.status_code, resp.headers, bytes(body), resp.request, resp.reason_phrase)
    except httpx.HTTPError as exc:
        if abort.fired:
            raise _ended(abort, url, total_s) from None
        raise transport_error(exc, where, 0) from exc
    finally:
        timer.cancel()
        if aborts is not None:
            aborts.discard(abort)


def _ended(abort: Abort, url: str, total_s: float) -> RemoteTimeoutError:
    if abort.why == "deadline":
        return RemoteTimeoutError(f"{url} did not answer within {total_s:g} s (the server is too slow or sends "
                                  "its answer a little at a time).")
    return RemoteTimeoutError(f"{url}: the request was ended (Brook disconnected from the server).")


class _Lines:
    """What ``httpx_sse.EventSource`` reads (``headers``, ``iter_text``), with a cap on one line's length."""

    def __init__(self, resp: httpx.Response, max_chars: int) -> None:
        self._resp = resp
        self._max = max_chars
        self.headers = resp.headers

    def iter_text(self) -> Iterator[str]:
        run = 0                     # characters since the last line break
        for text in self._resp.iter_text():
            cut = max(text.rfind("\n"), text.rfind("\r"))
            run = len(text) - cut - 1 if cut >= 0 else run + len(text)
            if run > self._max:
                raise RemoteProtocolError(f"The server sent an event line longer than {self._max / 2**20:g} MiB "
                                          "characters; the text so far is kept.")
            yield text


def capped_lines(resp: httpx.Response, max_chars: int | None = None) -> Any:
    """``resp`` for ``httpx_sse.EventSource``, raising ``RemoteProtocolError`` for a line over ``max_chars``
    (default ``MAX_EVENT_CHARS``)."""
    return _Lines(resp, MAX_EVENT_CHARS if max_chars is None else max_chars)
