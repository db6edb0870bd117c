"""Errors of remote engines: one ``RemoteError`` subclass per way a server can fail, each with a message a person
can act on, made from an HTTP answer (``http_error``) or from a failure below HTTP (``transport_error``)."""

from __future__ import annotations

import email.utils
import json
import socket
import ssl
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.engine.base import EngineError


class RemoteError(EngineError):
    """A remote server failed; ``str()`` says what happened and what to do."""


class RemoteConnectError(RemoteError):
    """No connection: refused, DNS failure, TLS failure, connect timeout."""


class RemoteAuthError(RemoteError):
    """HTTP 401/403: the API key is missing or wrong."""


class RemoteModelError(RemoteError):
    """HTTP 404, or the server does not offer the configured model."""


class RemoteRateLimitError(RemoteError):
    """HTTP 429. ``retry_after_s`` is the server's Retry-After (seconds) or None."""

    def __init__(self, message: str, retry_after_s: float | None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class RemoteServerError(RemoteError):
    """HTTP 5xx (e.g. 503 while the server loads its model), or an ``error`` object inside the stream."""


class RemoteProtocolError(RemoteError):
    """The server answered something that is not an OpenAI-compatible SSE stream."""


class RemoteDisconnectedError(RemoteError):
    """The connection was lost mid-reply; the text received so far is kept."""


class RemoteTimeoutError(RemoteError):
    """A request's total deadline passed (a server that answers too slowly, or a little at a time), or the
    request was ended because the window closed."""




def error_text(obj: Any) -> str:
    """The message of an OpenAI-shaped error (``{"error": {"message": …}}``), FastAPI's ``detail``, or the
    JSON itself."""
    if isinstance(obj, dict):
        err = obj.get("error", obj.get("detail", obj.get("message")))
        if isinstance(err, dict):
            msg = err.get("message") or err.get("msg") or json.dumps(err)[:200]
            return str(msg)
        if isinstance(err, str):
            return err
        if isinstance(err, list) and err:
            return "; ".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in err)[:300]
    return json.dumps(obj)[:200]


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header (RFC 9110 §10.2.3: delay-seconds or an HTTP date) as seconds from now."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def http_error(resp: Any, model: str | None) -> RemoteError:
    """A ``RemoteError`` for a non-200 answer: an ``httpx.Response`` whose body was read, or an
    ``app.engine.remote.bounded.Answer``."""
    code = resp.status_code
    try:
        detail = error_text(resp.json())
    except ValueError:
        detail = resp.text.strip()[:200] or resp.reason_phrase
    where = f"{resp.request.method} {resp.request.url}"
    if code in (401, 403):
        return RemoteAuthError(f"The server refused the request (HTTP {code}: {detail}). Check the API key in "
                               "the connection settings.")
    if code == 404:
        return RemoteModelError(f"Not found (HTTP 404 for {where}: {detail}). Check the model name "
                                f"({model!r}) and that the URL ends with the API root, e.g. /v1.")
    if code == 429:
        after = retry_after_seconds(resp.headers.get("retry-after"))
        when = f" Retry after {after:.0f} s." if after is not None else " Try again later."
        return RemoteRateLimitError(f"The server is rate-limiting requests (HTTP 429: {detail}).{when}", after)
    if code in (502, 503, 504):
        return RemoteServerError(f"The server is not ready (HTTP {code}: {detail}); it may still be loading "
                                 "its model. Try again in a moment.")
    if code >= 500:
        return RemoteServerError(f"The server failed (HTTP {code}: {detail}).")
    return RemoteError(f"The server rejected the request (HTTP {code}: {detail}).")


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        yield e
        e = e.__cause__ or e.__context__


def transport_error(exc: httpx.HTTPError, base_url: str, received: int) -> RemoteError:
    """A ``RemoteError`` for a failure below HTTP: refused, DNS, TLS, timeout, connection lost."""
    host = urlsplit(base_url).netloc
    text = " ".join(str(e) for e in _causes(exc))
    if isinstance(exc, httpx.ConnectTimeout):
        return RemoteConnectError(f"Timed out connecting to {host}. Is the address right and the server up?")
    if isinstance(exc, httpx.ConnectError):
        if any(isinstance(e, ssl.SSLError) for e in _causes(exc)) or "SSL" in text or "certificate" in text:
            return RemoteConnectError(f"TLS error talking to {host}: {exc}. Check http:// versus https:// and "
                                      "the server's certificate.")
        if any(isinstance(e, socket.gaierror) for e in _causes(exc)) or "Name or service not known" in text \
                or "nodename nor servname" in text or "getaddrinfo" in text:
            return RemoteConnectError(f"Could not find the server {urlsplit(base_url).hostname!r} (DNS lookup "
                                      f"failed: {exc}). Check the host name.")
        if any(isinstance(e, ConnectionRefusedError) for e in _causes(exc)) or "refused" in text.lower():
            return RemoteConnectError(f"Could not connect to {host}: connection refused. Is the server running "
                                      "on that port?")
        return RemoteConnectError(f"Could not connect to {host}: {exc}.")
    if received or isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return RemoteDisconnectedError(f"The connection to {host} was lost mid-reply after {received} chunk(s) "
                                       f"({exc or type(exc).__name__}); the text so far is kept.")
    return RemoteError(f"HTTP error talking to {host}: {type(exc).__name__}: {exc}")
