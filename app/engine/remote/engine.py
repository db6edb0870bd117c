"""An OpenAI-compatible server over HTTP/SSE: llama.cpp's ``llama-server``, vLLM, Ollama, LM Studio, Brook itself.

``POST {base_url}/chat/completions`` with ``"stream": true`` (and ``stream_options.include_usage`` where the
server accepts it) is read with httpx + httpx-sse in the stream's worker thread, one SSE event at a time:
``choices[0].delta.content`` is the text, ``reasoning_content`` (or ``reasoning``) deltas become a leading
``<think>…</think>`` section (the Thinking fold) — or, sent after some answer text (as vLLM may), a
``<think>`` section on lines of its own where it stands — a usage-only event with an empty ``choices`` list fills
``last_usage``, ``data: [DONE]`` ends the reply. httpx's incremental UTF-8 decoder and httpx-sse's line
parser make every byte timing safe (a character or an event split across reads, CRLF, keep-alive comments).

Stop: a blocking socket read cannot see the stop flag, so ``stream`` registers an abort on the generation's
``StopEvent``: when the loop calls ``request_stop`` it shuts the connection's socket down from the loop side
(``socket.shutdown``, which wakes the blocked read at once), and the server sees the client disconnect.
Each reply uses a fresh connection (no keep-alive), so the socket is always known from httpcore's trace
extension (``connection.connect_tcp.complete``) before the first byte is awaited.

Failures raise ``RemoteError`` subclasses with a message a person can act on (refused, DNS, TLS, 401/403,
404, 429 with Retry-After, 5xx, an ``error`` object mid-stream, a connection lost mid-reply).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from httpx_sse import EventSource, SSEError

from app.core.render.markdown.thinking import LATE_THINK_CLOSE, LATE_THINK_OPEN, THINK_CLOSE, THINK_OPEN
from app.core.types import Chunk, GenerationParams
from app.engine.base import EngineNotLoadedError, ProgressCallback
from app.engine.remote.bounded import MAX_ERROR_BYTES, Abort, Aborts, capped_lines, fresh_client, request
from app.engine.remote.errors import (  # noqa: F401 - the errors are part of this module's API
    RemoteAuthError,
    RemoteConnectError,
    RemoteDisconnectedError,
    RemoteError,
    RemoteModelError,
    RemoteProtocolError,
    RemoteRateLimitError,
    RemoteServerError,
    RemoteTimeoutError,
    error_text,
    http_error,
    retry_after_seconds,
    transport_error,
)
from app.engine.remote.tokens import TokenCounter

log = logging.getLogger("brook.engine.remote")

#: Seconds to wait for a TCP (+ TLS) connection. Reads have no httpx timeout: the first-token and total
#: budgets of ``StreamSettings`` own the timing of a reply (a long prefill may legitimately take minutes).
CONNECT_TIMEOUT_S = 10.0
#: Largest answer of a server that ignored ``"stream": true`` (bytes).
MAX_WHOLE_REPLY_BYTES = 64 << 20
#: Seconds for a whole ``GET /models`` answer (opening a connection, listing models): a total deadline.
LIST_TIMEOUT_S = 15.0


@dataclass(frozen=True, slots=True)
class RemoteConnection:
    """Where and how to reach a server.

    ``base_url``: the API root, e.g. ``http://127.0.0.1:8080/v1`` (a URL without a path gets ``/v1``);
    ``model``: the model id to ask for (``None``: the first one ``GET /models`` lists);
    ``api_key``: sent as ``Authorization: Bearer …`` (``None``: no header);
    ``max_concurrency``: generations the scheduler lets run at once on this connection (1 for llama.cpp-style
    servers with one slot, more for vLLM).
    """

    base_url: str
    model: str | None = None
    api_key: str | None = None
    max_concurrency: int = 1
    connect_timeout_s: float = CONNECT_TIMEOUT_S


def normalize_base_url(url: str) -> str:
    """``url`` as an API root without a trailing slash: ``http://h:8080`` → ``http://h:8080/v1``;
    ``…/v1/chat/completions`` → ``…/v1``. Raises ``RemoteConnectError`` for anything but http(s)://host."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RemoteConnectError(f"The server URL must look like http://host:port/v1 (got {url!r}).")
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/models"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    if not path:
        path = "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def _on_stop(stop: threading.Event, fn: Callable[[], None]) -> Callable[[], None]:
    """Run ``fn`` as soon as ``stop`` is set; returns an unregister function. A ``StopEvent`` calls back from
    the thread that sets it (the loop); a plain ``Event`` is watched by a small daemon thread."""
    add = getattr(stop, "add_callback", None)
    if add is not None:
        remove: Callable[[], None] = add(fn)
        return remove
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if stop.wait(0.05):
                fn()
                return

    threading.Thread(target=watch, name="brook-remote-stop", daemon=True).start()
    return done.set


class RemoteEngine:
    """Chat completions from an OpenAI-compatible server (see the module docstring).

    ``load()`` lists the server's models (``GET /models``) and picks the model; ``stream()`` yields one
    ``Chunk`` per SSE event that carries text or a finish reason. ``last_usage`` is the usage object of the
    last reply (``prompt_tokens``, ``completion_tokens``) when the server sent one; ``models`` the ids listed.
    Thread-safe: several replies may stream at once (``max_concurrency``), each on its own connection.
    """

    def __init__(self, connection: RemoteConnection) -> None:
        self.connection = connection
        self.base_url = normalize_base_url(connection.base_url)
        self.max_concurrency = max(1, int(connection.max_concurrency))
        self.model: str | None = connection.model
        self.models: list[str] = []
        self.last_usage: dict[str, Any] | None = None
        self._include_usage = True
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        #: every request in flight to the server (replies, the model list, the context meter's): ``unload`` ends them
        self.requests = Aborts()
        self._tokens = TokenCounter(self.base_url, lambda: self.model, self._headers, self.requests,
                                    connection.connect_timeout_s)

    # Engine protocol -----------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.model or urlsplit(self.base_url).netloc

    @property
    def loaded(self) -> bool:
        return self._client is not None

    def load(self, progress: ProgressCallback | None = None) -> None:
        """Connect: list the models and check the configured one is offered. Raises ``RemoteError``."""
        if progress:
            progress(0.0)
        client = fresh_client(self._headers(), self.connection.connect_timeout_s)   # a fresh socket per reply
        self.requests.closed = False
        try:
            self.models = self._list_models(client)
        except BaseException:
            client.close()
            raise
        if self.model is None:
            if not self.models:
                client.close()
                raise RemoteModelError(f"The server at {self.base_url} lists no models; set the model name "
                                       "in the connection settings.")
            self.model = self.models[0]
        elif self.models and self.model not in self.models:
            client.close()
            raise RemoteModelError(f"The server at {self.base_url} does not offer the model {self.model!r}; "
                                   f"it offers: {', '.join(self.models)}.")
        if progress:
            try:
                progress(1.0)          # may raise LoadCancelled (the load window's Cancel): stay unconnected
            except BaseException:
                client.close()
                raise
        with self._lock:
            old, self._client = self._client, client
        if old is not None:
            old.close()
        log.info("connected to %s (model %s)", self.base_url, self.model)

    def provenance(self) -> dict[str, Any]:
        """Where replies come from (``app.core.streaming.provenance``'s keys): the server's API root; the chat
        template is
        the server's own."""
        return {"model_file": self.base_url, "chat_template": "the server's"}

    def unload(self) -> None:
        """Disconnect: every request in flight (a reply, the context meter's counts) is ended at once, so no
        thread that talks to the server outlives the window."""
        with self._lock:
            client, self._client = self._client, None
        self.requests.closed = True
        ended = self.requests.fire_all("closing")
        if ended:
            log.info("ended %d request(s) in flight to %s", ended, self.base_url)
        if client is not None:
            client.close()

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]:
        """Stream one reply (blocking; runs in the worker thread). Returns at once when ``stop`` is set (the
        socket is shut down by the stop callback). Raises ``RemoteError`` subclasses."""
        client = self._client
        if client is None:
            raise EngineNotLoadedError("Not connected to the server yet.")
        abort = Abort()
        unregister = _on_stop(stop, abort.fire)
        self.requests.add(abort)
        received = 0
        try:
            for attempt in (0, 1):
                body = self._body(messages, params)
                with client.stream("POST", f"{self.base_url}/chat/completions", json=body,
                                   headers={"Accept": "text/event-stream", "Cache-Control": "no-store"},
                                   extensions={"trace": abort.trace}) as resp:
                    if resp.status_code != 200:
                        answer = _error_answer(resp)
                        if attempt == 0 and self._include_usage and resp.status_code in (400, 422) \
                                and "stream_options" in answer.text:
                            log.info("%s does not accept stream_options; asking without usage", self.base_url)
                            self._include_usage = False
                            continue
                        raise http_error(answer, self.model)
                    ctype = resp.headers.get("content-type", "")
                    if "text/event-stream" not in ctype:
                        yield from self._whole_reply(resp)
                        return
                    for chunk in self._events(resp, stop):
                        received += 1
                        yield chunk
                    return
        except httpx.HTTPError as exc:
            if stop.is_set():
                return
            if abort.why == "closing":
                raise RemoteTimeoutError("The reply was ended: Brook disconnected from the server.") from None
            raise transport_error(exc, self.base_url, received) from exc
        except SSEError as exc:
            if stop.is_set():
                return
            raise RemoteProtocolError(f"The server's stream is not valid SSE: {exc}") from exc
        finally:
            unregister()
            self.requests.discard(abort)

    # helpers -------------------------------------------------------------------------------------------
    # the context meter (app.engine.remote.tokens) ----------------------------------------------------------
    def count_prompt(self, messages: Sequence[Mapping[str, str]]) -> tuple[int, bool]:
        """``(tokens, exact)`` of the prompt ``messages`` make on this server; see :class:`TokenCounter`."""
        return self._tokens.count_prompt(messages)

    def context_window(self) -> int | None:
        """The server's context window (tokens), or None when no server extra says; see :class:`TokenCounter`."""
        return self._tokens.context_window()

    @property
    def token_source(self) -> str | None:
        """How prompts are counted: "llama-server", "llama-cpp-python", "estimate" (None until the first count)."""
        return self._tokens.source

    def _headers(self) -> dict[str, str]:
        key = self.connection.api_key
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _body(self, messages: Sequence[Mapping[str, str]], params: GenerationParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model, "messages": [dict(m) for m in messages], "stream": True,
            "temperature": params.temperature, "top_p": params.top_p, "max_tokens": params.max_tokens,
        }
        if self._include_usage:
            body["stream_options"] = {"include_usage": True}
        if params.seed is not None:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        return body

    def _list_models(self, client: httpx.Client) -> list[str]:
        resp = request(client, "GET", f"{self.base_url}/models", total_s=LIST_TIMEOUT_S, aborts=self.requests,
                       base_url=self.base_url)
        if resp.status_code == 404 and self.model:
            return []            # a server without a model list: trust the configured name
        if resp.status_code != 200:
            raise http_error(resp, self.model)
        try:
            data = resp.json()["data"]
            return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
        except (ValueError, KeyError, TypeError) as exc:
            raise RemoteProtocolError(f"{self.base_url}/models did not answer an OpenAI model list "
                                      f"({resp.text[:120]!r}). Is the URL right?") from exc

    def _events(self, resp: httpx.Response, stop: threading.Event) -> Iterator[Chunk]:
        in_think = late = False   # inside reasoning; it began after some answer text
        said = False              # some answer text (not reasoning) was yielded
        finish: str | None = None
        done = False
        self.last_usage = None
        for sse in EventSource(capped_lines(resp)).iter_sse():
            if stop.is_set():
                return
            data = sse.data
            if not data:
                continue
            if data.strip() == "[DONE]":
                done = True
                break
            try:
                obj = json.loads(data)
            except ValueError:
                raise RemoteProtocolError(f"The server sent an event that is not JSON: {data[:120]!r}") from None
            if not isinstance(obj, dict):
                raise RemoteProtocolError(f"The server sent an unexpected event: {data[:120]!r}")
            if obj.get("error") is not None and obj.get("error") is not False:
                raise RemoteServerError(f"The server reported an error mid-reply: {error_text(obj)}")
            usage = obj.get("usage")
            if isinstance(usage, dict):
                self.last_usage = usage
            choices = obj.get("choices")
            if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
                continue          # usage-only event (empty choices) or a keep-alive
            choice = choices[0]
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                delta = {}        # a delta of another shape (a string, a list) carries nothing Brook can read
            parts: list[str] = []
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                if not in_think:
                    # reasoning after some answer text (vLLM may send it so) is a later section where it stands
                    parts.append(LATE_THINK_OPEN if said else THINK_OPEN)
                    in_think, late = True, said
                parts.append(reasoning)
            content = delta.get("content")
            if isinstance(content, str) and content:
                if in_think:
                    parts.append(LATE_THINK_CLOSE if late else THINK_CLOSE)
                    in_think = False
                parts.append(content)
                said = True
            reason = choice.get("finish_reason")
            if not isinstance(reason, str):
                reason = None
            if reason and in_think:
                parts.append(LATE_THINK_CLOSE if late else THINK_CLOSE)
                in_think = False
            text = "".join(parts)
            if text or reason:
                if reason:
                    finish = str(reason)
                yield Chunk(text, 1 if text else 0, str(reason) if reason else None)
        if not done and finish is None and not stop.is_set():
            raise RemoteDisconnectedError("The server closed the stream before the reply was complete (no "
                                          "finish reason, no [DONE]); the text so far is kept.")

    def _whole_reply(self, resp: httpx.Response) -> Iterator[Chunk]:
        """A server that ignored ``stream: true`` and answered one JSON completion (at most
        ``MAX_WHOLE_REPLY_BYTES``)."""
        body = bytearray()
        for piece in resp.iter_bytes():
            body += piece
            if len(body) > MAX_WHOLE_REPLY_BYTES:
                raise RemoteProtocolError(f"The server answered more than {MAX_WHOLE_REPLY_BYTES >> 20} MiB "
                                          "without streaming; that is not a chat completion Brook reads.")
        try:
            obj = json.loads(bytes(body))
            choice = obj["choices"][0]
            text = choice["message"].get("content") or ""
            reasoning = choice["message"].get("reasoning_content") or choice["message"].get("reasoning")
            if not isinstance(text, str):
                raise TypeError("content is not text")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
            raise RemoteProtocolError(f"The server did not answer a chat completion "
                                      f"({resp.headers.get('content-type', '?')}: {bytes(body[:120])!r}). "
                                      "Is the URL right?") from None
        if isinstance(obj.get("usage"), dict):
            self.last_usage = obj["usage"]
        if isinstance(reasoning, str) and reasoning:
            text = f"{THINK_OPEN}{reasoning}{THINK_CLOSE}{text}"
        reason = choice.get("finish_reason")
        yield Chunk(text, 1, reason if isinstance(reason, str) and reason else "stop")


def fetch_models(connection: RemoteConnection) -> list[str]:
    """The model ids a server lists (``GET /models``; blocking; within ``LIST_TIMEOUT_S`` in all). Raises
    ``RemoteError``."""
    engine = RemoteEngine(RemoteConnection(connection.base_url, "?", connection.api_key))
    with fresh_client(engine._headers(), connection.connect_timeout_s) as client:
        return engine._list_models(client)


def _error_answer(resp: httpx.Response) -> Any:
    """A non-200 answer of the reply's request with its body read up to ``MAX_ERROR_BYTES`` (a server may send
    hundreds of MB of error page)."""
    from app.engine.remote.bounded import Answer

    body = bytearray()
    for piece in resp.iter_bytes():
        body += piece
        if len(body) >= MAX_ERROR_BYTES:
            del body[MAX_ERROR_BYTES:]
            break
    return Answer(resp.status_code, resp.headers, bytes(body), resp.request, resp.reason_phrase)
