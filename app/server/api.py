"""Brook's model for other apps: an OpenAI-compatible API on Starlette (the ASGI stack ``llama_cpp.server`` uses).

``GET /v1/models``, ``GET /v1/models/{id}`` and ``POST /v1/chat/completions`` (streaming as SSE, or one JSON
answer). Every request goes through the engine's ``FairScheduler`` (``scheduler_for(engine)``), the one the
window uses: a window reply and an API request wait in FIFO order. Each reply runs in a ``TokenStream`` worker;
a client that disconnects (streaming or not) cancels the reply's task, whose cleanup calls
``TokenStream.request_stop`` — the same stop path as the Stop button — so its generation stops within one token.

Security: an optional API key (``Authorization: Bearer …``, compared in constant time), a request body limit
(bytes), a ``max_tokens`` limit, no CORS unless origins are given (then any request header: browser clients send
their own), and OpenAI-shaped 4xx/5xx errors (never a traceback; the log keeps it). Web pages are kept out even
without a key: a request with an ``Origin`` that is not one of the CORS origins is refused (403), so a page on
another site cannot make a browser generate with a "simple" ``text/plain`` POST; a server bound to loopback answers
only a ``Host`` of its own address or ``localhost`` (403 otherwise: DNS rebinding), unless more host names are
configured (``allowed_hosts``); and a chat completion must be sent as JSON (``Content-Type: application/json``,
415 otherwise). A failure in the middle of a stream is an ``error`` event followed by ``[DONE]``.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import itertools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.core.errors import BrookError
from app.core.streaming.generation import StreamSettings
from app.core.streaming.scheduler import scheduler_for
from app.core.streaming.stream import TokenStream
from app.core.text import valid_json
from app.core.types import Chunk
from app.engine.base import ContextOverflowError, Engine
from app.server.schema import APIError, ChatRequest, parse_chat_request

log = logging.getLogger("brook.server")

#: Largest request body accepted (bytes): 1 MiB is ~250,000 tokens of chat history, beyond any small model's
#: context window.
MAX_BODY_BYTES = 1 << 20
#: Largest ``max_tokens`` accepted, and the default when a request gives none (tokens).
MAX_TOKENS_LIMIT = 4096
DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """``api_key``: required as a Bearer token when set; ``max_body_bytes``/``max_tokens_limit``: see above;
    ``cors_origins``: origins allowed by CORS (empty: no CORS headers at all); ``stream``: the first-token and
    total budgets of each reply (seconds)."""

    api_key: str | None = None
    max_body_bytes: int = MAX_BODY_BYTES
    max_tokens_limit: int = MAX_TOKENS_LIMIT
    default_max_tokens: int = DEFAULT_MAX_TOKENS
    cors_origins: tuple[str, ...] = ()
    stream: StreamSettings = field(default_factory=StreamSettings)
    #: more host names the ``Host`` header may name (a server bound to loopback answers only its own address
    #: and ``localhost`` otherwise; a server bound to another address checks ``Host`` only when this is given)
    allowed_hosts: tuple[str, ...] = ()


#: Host names every loopback server answers to.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP literals (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host name of a ``Host`` header (``[::1]:8080`` → ``::1``, ``Example.COM:80`` → ``example.com``)."""
    h = header.strip().lower()
    if h.startswith("["):
        return h[1:h.find("]")] if "]" in h else h[1:]
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


_ids = itertools.count(1)


def _model_object(name: str) -> dict[str, Any]:
    """OpenAI's model object for the model Brook serves."""
    return {"id": name, "object": "model", "created": 0, "owned_by": "brook"}


def _error_response(err: APIError) -> JSONResponse:
    return JSONResponse(err.body(), status_code=err.status, headers=err.headers)


async def _read_json(request: Request, limit: int) -> Any:
    length = request.headers.get("content-length")
    if length is not None:
        try:
            too_big = int(length) > limit
        except ValueError:
            raise APIError(400, "Bad Content-Length header.") from None
        if too_big:
            raise APIError(413, f"The request body is larger than this server's limit of {limit} bytes.",
                           code="request_too_large")
    buf = bytearray()
    async for piece in request.stream():
        buf += piece
        if len(buf) > limit:
            raise APIError(413, f"The request body is larger than this server's limit of {limit} bytes.",
                           code="request_too_large")
    try:
        return valid_json(json.loads(buf))      # lone surrogates (JSON's "\\ud800") become U+FFFD
    except ValueError as exc:
        raise APIError(400, f"The request body is not valid JSON ({exc}).") from None
    except RecursionError:
        raise APIError(400, "The request body is nested too deeply.") from None


def _is_json(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def _wait_disconnect(receive: Receive) -> None:
    """Return when the client has gone (ASGI ``http.disconnect``; the request body was read before)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _race_disconnect(work: Awaitable[Any], receive: Receive) -> tuple[bool, Any]:
    """Run ``work``; if the client disconnects first, cancel it (→ ``TokenStream.request_stop``).
    Returns (client left, work's result)."""
    task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_wait_disconnect(receive))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        watcher.cancel()
        raise
    if task.done():
        watcher.cancel()
        if task.cancelled():          # the server is stopping (``BrookAPI.stop_all``)
            return True, None
        return False, task.result()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return True, None


class BrookAPI:
    """The ASGI app. ``engine_provider()`` returns the engine to serve (the window's current one, which may
    change when the user opens another model); ``app`` is the Starlette application."""

    def __init__(self, engine_provider: Callable[[], Engine], options: ServerOptions | None = None) -> None:
        self.engine_provider = engine_provider
        self.options = options or ServerOptions()
        #: the address the server is bound to (``BrookServer`` sets it; None: loopback)
        self.bound_host: str | None = None
        self.active = 0                  # replies streaming now (for tests and the status bar)
        self.served = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        middleware = []
        if self.options.cors_origins:
            # any request header, as llama.cpp's server allows: browser clients send their own (the OpenAI
            # JavaScript SDK's x-stainless-*, OpenAI-Organization …); the origins are what CORS restricts
            middleware.append(Middleware(CORSMiddleware, allow_origins=list(self.options.cors_origins),
                                         allow_methods=["GET", "POST"], allow_headers=["*"]))
        self.app = Starlette(
            routes=[Route("/v1/models", self.models, methods=["GET"]),
                    Route("/v1/models/{model_id:path}", self.model, methods=["GET"]),
                    Route("/v1/chat/completions", self.chat_completions, methods=["POST"]),
                    Route("/health", self.health, methods=["GET"])],
            middleware=middleware,
            exception_handlers={HTTPException: self._http_exception, Exception: self._internal_error},
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    async def stop_all(self) -> None:
        """Stop every reply in flight or in line (as if its client had left) and wait for them to end."""
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # handlers ------------------------------------------------------------------------------------------
    async def _http_exception(self, _request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        kind = "not_found" if exc.status_code == 404 else None
        return _error_response(APIError(exc.status_code, str(exc.detail), code=kind))

    async def _internal_error(self, _request: Request, exc: Exception) -> Response:
        log.error("internal error in the API", exc_info=exc)
        return _error_response(APIError(500, "Internal server error (see Brook's log).", type="server_error"))

    def allowed_hosts(self) -> set[str] | None:
        """Host names a request's ``Host`` may name, or None for any (see the module docstring)."""
        bound = self.bound_host
        extra = {host_name(h) for h in self.options.allowed_hosts}
        if bound is not None and not is_loopback(bound) and not extra:
            return None
        return {*LOOPBACK_HOSTS, *extra, *([host_name(bound)] if bound else [])}

    def _check_caller(self, request: Request) -> None:
        """Refuse web pages of other sites (``Origin``), other host names (``Host``), then a wrong key."""
        origin = request.headers.get("origin")
        if origin is not None and origin not in self.options.cors_origins:
            raise APIError(403, f"Requests from web pages ({origin}) are not allowed; start the server with "
                           f"--cors-origin {origin} to allow that site.", code="origin_not_allowed")
        allowed = self.allowed_hosts()
        host = request.headers.get("host")
        if allowed is not None and host is not None and host_name(host) not in allowed:
            raise APIError(403, f"This server does not answer to the host name {host_name(host)!r} (it answers "
                           f"{', '.join(sorted(allowed))}); add it with --allowed-host if it is yours.",
                           code="host_not_allowed")
        self._check_key(request)

    def _check_key(self, request: Request) -> None:
        key = self.options.api_key
        if not key:
            return
        given = request.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), key.encode()):
            raise APIError(401, "Missing or wrong API key: send 'Authorization: Bearer <key>'.",
                           code="invalid_api_key")

    def _engine(self) -> Any:
        engine = self.engine_provider()
        if engine is None or not getattr(engine, "loaded", False):
            raise APIError(503, "The model is still loading; try again in a moment.", type="server_error",
                           code="model_loading", headers={"Retry-After": "5"})
        return engine

    async def health(self, request: Request) -> Response:
        try:
            self._check_caller(request)
        except APIError as err:
            if err.code != "invalid_api_key":      # health needs no key, but web pages and other hosts stay out
                return _error_response(err)
        engine = self.engine_provider()
        return JSONResponse({"status": "ok" if engine is not None and engine.loaded else "loading"})

    async def models(self, request: Request) -> Response:
        try:
            self._check_caller(request)
            engine = self._engine()
        except APIError as err:
            return _error_response(err)
        return JSONResponse({"object": "list", "data": [_model_object(engine.name)]})

    async def model(self, request: Request) -> Response:
        """``GET /v1/models/{id}`` (OpenAI's retrieve): the model object, or 404 for another id."""
        try:
            self._check_caller(request)
            engine = self._engine()
            model_id = request.path_params["model_id"]
            if model_id != engine.name:
                raise APIError(404, f"The model '{model_id}' does not exist on this server; it serves: "
                               f"{engine.name}.", param="model", code="model_not_found")
        except APIError as err:
            return _error_response(err)
        return JSONResponse(_model_object(engine.name))

    async def chat_completions(self, request: Request) -> Response:
        try:
            self._check_caller(request)
            if not _is_json(request.headers.get("content-type")):
                raise APIError(415, "Send the request as JSON (Content-Type: application/json).",
                               code="unsupported_media_type")
            body = await _read_json(request, self.options.max_body_bytes)
            engine = self._engine()
            req = parse_chat_request(body, models=[engine.name], max_tokens_limit=self.options.max_tokens_limit,
                                     default_max_tokens=self.options.default_max_tokens)
        except APIError as err:
            return _error_response(err)
        except ClientDisconnect:
            log.info("API client disconnected while sending its request")
            return Response(status_code=400)          # nobody reads it
        if req.stream:
            return _ASGIResponse(lambda receive, send: self._stream(engine, req, receive, send))
        return _ASGIResponse(lambda receive, send: self._complete(engine, req, receive, send))

    # generation ----------------------------------------------------------------------------------------
    async def _generate(self, engine: Engine, req: ChatRequest, on_batch: Callable[[list[Chunk]], Awaitable[None]]
                        ) -> tuple[int, str | None]:
        """Wait for the engine's slot (FIFO, shared with the window), stream the reply, hand each batch to
        ``on_batch``. Returns (completion tokens, finish reason). Cancelling it stops the generation (the
        worker returns within one token) and releases the slot when the worker has returned."""
        settings = self.options.stream
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            return await self._generate_in_slot(engine, req, on_batch, settings)
        finally:
            self._tasks.discard(task)

    async def _generate_in_slot(self, engine: Engine, req: ChatRequest,
                                on_batch: Callable[[list[Chunk]], Awaitable[None]],
                                settings: StreamSettings) -> tuple[int, str | None]:
        slot = await scheduler_for(engine).acquire()
        stream = TokenStream(lambda stop: engine.stream(req.messages, req.params, stop),
                             maxsize=settings.queue_maxsize, name="brook-api")
        tokens = 0
        finish: str | None = None
        self.active += 1
        try:
            stream.start()
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            async with asyncio.timeout_at(t0 + min(settings.first_token_timeout_s, settings.total_timeout_s)) as tb:
                first = True
                while (batch := await stream.get_batch()) is not None:
                    if first:
                        first = False
                        tb.reschedule(t0 + settings.total_timeout_s)
                    for c in batch:
                        tokens += c.n_tokens
                        finish = c.finish_reason or finish
                    await on_batch(batch)
        finally:
            self.active -= 1
            stream.request_stop()
            assert stream.worker_done is not None
            stream.worker_done.add_done_callback(lambda _f: slot.release())
        self.served += 1
        return tokens, finish

    async def _stream(self, engine: Engine, req: ChatRequest, receive: Receive, send: Send) -> None:
        cid, created = f"chatcmpl-brook-{next(_ids)}", int(time.time())
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-store"),
            (b"x-accel-buffering", b"no")]})

        def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
            obj = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": engine.name,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return b"data: " + json.dumps(obj, ensure_ascii=False).encode("utf-8") + b"\n\n"

        async def body(data: bytes) -> None:
            await send({"type": "http.response.body", "body": data, "more_body": True})

        async def on_batch(batch: list[Chunk]) -> None:
            parts = [event({"content": c.text}) for c in batch if c.text]
            if parts:
                await body(b"".join(parts))

        async def work() -> tuple[int, str | None]:
            await body(event({"role": "assistant", "content": ""}))
            return await self._generate(engine, req, on_batch)

        tail: list[bytes] = []
        try:
            left, result = await _race_disconnect(work(), receive)
        except Exception as exc:         # any failure mid-stream: an error event, then [DONE]
            msg = _failure(exc)
            err = {"error": {"message": msg, "type": "server_error", "param": None, "code": None}}
            tail.append(b"data: " + json.dumps(err).encode("utf-8") + b"\n\n")
            left, result = False, None
        if left:
            log.info("API client disconnected; its reply was stopped")
            return
        if result is not None:
            tokens, finish = result
            tail.append(event({}, finish or "stop"))
            if req.include_usage:
                usage = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": engine.name,
                         "choices": [], "usage": await _usage(engine, req, tokens)}
                tail.append(b"data: " + json.dumps(usage).encode("utf-8") + b"\n\n")
        tail.append(b"data: [DONE]\n\n")
        await send({"type": "http.response.body", "body": b"".join(tail), "more_body": False})

    async def _complete(self, engine: Engine, req: ChatRequest, receive: Receive, send: Send) -> None:
        parts: list[str] = []

        async def on_batch(batch: list[Chunk]) -> None:
            parts.extend(c.text for c in batch)

        try:
            left, result = await _race_disconnect(self._generate(engine, req, on_batch), receive)
        except Exception as exc:
            if isinstance(exc, ContextOverflowError):
                err = APIError(400, str(exc), param="messages", code="context_length_exceeded")
            else:
                err = APIError(500, _failure(exc), type="server_error")
            await _error_response(err)({"type": "http"}, receive, send)
            return
        if left:
            log.info("API client disconnected; its reply was stopped")
            return
        tokens, finish = result
        answer = {"id": f"chatcmpl-brook-{next(_ids)}", "object": "chat.completion", "created": int(time.time()),
                  "model": engine.name,
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "".join(parts)},
                               "finish_reason": finish or "stop"}],
                  "usage": await _usage(engine, req, tokens)}
        await JSONResponse(answer)({"type": "http"}, receive, send)


def _failure(exc: BaseException) -> str:
    """The sentence a client gets for a reply that failed (logged: a warning for an explained failure, the
    traceback for anything else)."""
    if isinstance(exc, (BrookError, TimeoutError)):
        msg = str(exc) or "The reply took too long (timeout)."
        log.warning("API reply failed: %s", msg)
        return msg
    log.error("API reply failed", exc_info=exc)
    return f"The model failed while generating ({type(exc).__name__}); see Brook's log."


async def _usage(engine: Engine, req: ChatRequest, completion_tokens: int) -> dict[str, int]:
    """OpenAI's usage object. Prompt tokens: the engine's count of the built prompt (chat template included),
    tokenized off the loop; 0 where the engine cannot count (a remote or scripted engine)."""
    prompt = 0
    count = getattr(engine, "prompt_tokens", None)
    if count is not None:
        try:
            prompt = int(await asyncio.get_running_loop().run_in_executor(None, count, req.messages))
        except Exception:      # unloaded meanwhile: unknown
            prompt = 0
    return {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens}


class _ASGIResponse(Response):
    """A response written by a coroutine ``run(receive, send)`` that sends its own ASGI messages."""

    def __init__(self, run: Callable[[Receive, Send], Awaitable[None]]) -> None:
        self._run = run

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._run(receive, send)
