"""Running Brook's API: ``BrookServer`` (uvicorn on the current asyncio loop: the window's qasync loop or the
headless one) and ``python main.py --serve`` (no window).

A bind address that is not loopback requires an API key: ``check_bind`` refuses otherwise, with a message that
says how to give one (``--api-key`` or ``BROOK_API_KEY``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator

import uvicorn

from app.core.errors import BrookError
from app.engine.base import Engine
from app.server.api import BrookAPI, ServerOptions, is_loopback
from app.server.defaults import API_KEY_ENV, DEFAULT_HOST, DEFAULT_PORT

log = logging.getLogger("brook.server")


class ServerError(BrookError):
    """The server cannot start (address in use, non-loopback bind without a key, …)."""


def check_api_key(api_key: str | None) -> None:
    """Raise ``ServerError`` for a key no client could send: empty or only whitespace (``--api-key " "``),
    with whitespace in it (a Bearer token has none: clients strip it), or outside printable ASCII (HTTP headers)."""
    if api_key is None:
        return
    if not api_key.strip():
        raise ServerError("The API key is empty or only spaces: no client could send it. Give a real key "
                          f"(--api-key KEY or {API_KEY_ENV}), or none on 127.0.0.1.")
    if any(c.isspace() for c in api_key) or not all(" " < c < "\x7f" for c in api_key):
        raise ServerError("The API key must be printable ASCII without spaces (letters, digits, punctuation): "
                          "clients send it in an HTTP header as 'Authorization: Bearer KEY'.")


def check_bind(host: str, api_key: str | None) -> None:
    """Raise ``ServerError`` for a non-loopback ``host`` without an API key, or for a key no client could send
    (``check_api_key``)."""
    check_api_key(api_key)
    if not is_loopback(host) and not api_key:
        raise ServerError(f"Refusing to serve on {host}: other machines could reach it. Serving beyond this "
                          f"machine requires an API key (--api-key KEY or the {API_KEY_ENV} environment "
                          "variable), or bind 127.0.0.1.")


class _Uvicorn(uvicorn.Server):
    """uvicorn that leaves the process's signal handlers alone (the window or our CLI own them)."""

    def __init__(self, config: uvicorn.Config, handle_signals: bool) -> None:
        super().__init__(config)
        self._handle_signals = handle_signals

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if self._handle_signals:
            with super().capture_signals():
                yield
        else:
            yield


class BrookServer:
    """Brook's OpenAI-compatible API on ``host:port`` (port 0: a free one; ``port`` holds the real one after
    ``start``). ``engine_provider()`` gives the engine to serve. ``await start()`` binds (raises
    ``ServerError``) and serves in a task on the running loop; ``await stop()`` stops the replies in flight
    (their generations stop within one token) and closes the listener."""

    def __init__(self, engine_provider: Callable[[], Engine], *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 options: ServerOptions | None = None, handle_signals: bool = False) -> None:
        self.host = host
        self.port = port
        self.options = options or ServerOptions()
        check_bind(host, self.options.api_key)
        self.api = BrookAPI(engine_provider, self.options)
        self.api.bound_host = host           # the Host header must name it (or localhost) on loopback
        self._handle_signals = handle_signals
        self._server: _Uvicorn | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host.strip("[]"), self.port))
        except OSError as exc:
            sock.close()
            raise ServerError(f"Cannot serve on {self.host}:{self.port}: {exc.strerror or exc}. Is another "
                              "server using that port? Choose another with --port.") from exc
        sock.listen(128)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        return sock

    async def start(self) -> None:
        sock = self._bind()
        config = uvicorn.Config(self.api, log_config=None, access_log=False, lifespan="off",
                                timeout_graceful_shutdown=2)
        server = self._server = _Uvicorn(config, self._handle_signals)
        self._task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started and not self._task.done():  # noqa: ASYNC110 - uvicorn has no "started" event
            await asyncio.sleep(0.01)
        if self._task.done():
            exc = self._task.exception()
            raise ServerError(f"The server did not start: {exc!r}")
        log.info("serving the OpenAI-compatible API on %s", self.url)

    async def serve_forever(self) -> None:
        """Wait until the server ends (a signal when ``handle_signals``, or ``stop()``)."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def stop(self) -> None:
        server, task = self._server, self._task
        if server is None or task is None:
            return
        await self.api.stop_all()
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, SystemExit):
            await task
        self._server = self._task = None
        log.info("stopped serving on %s", self.url)


# python main.py --serve ----------------------------------------------------------------------------------
def serve_main(args: argparse.Namespace, make_engine: Callable[[], Engine]) -> int:
    """The headless server: load the engine, serve until Ctrl+C / SIGTERM, stop every reply, unload."""
    from app.core.streaming.generation import shutdown
    from app.core.streaming.stream import tune_switch_interval
    from app.engine.base import EngineError

    api_key = getattr(args, "api_key", None)
    if api_key is None:
        api_key = os.environ.get(API_KEY_ENV) or None
    options = ServerOptions(api_key=api_key, cors_origins=tuple(getattr(args, "cors_origin", None) or ()),
                            allowed_hosts=tuple(getattr(args, "allowed_host", None) or ()))
    host = args.host or DEFAULT_HOST
    port = DEFAULT_PORT if args.port is None else args.port
    try:
        check_bind(host, api_key)
        engine = make_engine()
    except (ServerError, EngineError) as exc:
        print(f"brook: {exc}", file=sys.stderr)
        return 2
    tune_switch_interval()

    async def run() -> int:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, engine.load, None)
        except EngineError as exc:
            print(f"brook: {exc}", file=sys.stderr)
            return 2
        server = BrookServer(lambda: engine, host=host, port=port, options=options)
        try:
            await server.start()
        except ServerError as exc:
            print(f"brook: {exc}", file=sys.stderr)
            return 2
        print(f"Brook serves {engine.name} at {server.url} (OpenAI-compatible; Ctrl+C stops)", flush=True)
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):   # Windows: no loop signal handlers
                loop.add_signal_handler(sig, stop.set)
        if sys.platform == "win32":      # Ctrl+C, and Ctrl+Break (what a parent can send to a process group)
            for sig in (signal.SIGINT, signal.SIGBREAK):
                signal.signal(sig, lambda *_: loop.call_soon_threadsafe(stop.set))
        try:
            waiting = asyncio.ensure_future(stop.wait())
            await asyncio.wait({waiting, asyncio.ensure_future(server.serve_forever())},
                               return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
        finally:
            await server.stop()
            await shutdown([], [engine])
        return 0

    return asyncio.run(run())
