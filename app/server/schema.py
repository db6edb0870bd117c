"""Requests and errors of Brook's OpenAI-compatible API, checked by hand (no pydantic): every bad input becomes an
``APIError`` with OpenAI's error shape ``{"error": {"message", "type", "param", "code"}}`` and a 4xx status.

Accepted ``POST /v1/chat/completions`` fields (others are ignored, as OpenAI clients send many): ``model``,
``messages`` (roles system/developer/user/assistant; ``content`` a string or a list of ``{"type": "text"}``
parts), ``stream``, ``stream_options.include_usage``, ``temperature`` (0-2), ``top_p`` (0-1), ``max_tokens`` /
``max_completion_tokens`` (1 to the server's limit), ``seed``, ``stop`` (a string or a list of up to
:data:`MAX_STOP_STRINGS`: OpenAI allows 4, llama.cpp any number, and clients such as SillyTavern send more),
``n`` (only 1),
and llama.cpp's ``top_k`` / ``repeat_penalty``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.text import valid_text
from app.core.types import GenerationParams

#: Most stop strings a request may give (OpenAI's limit is 4; llama.cpp has none; this bounds the work).
MAX_STOP_STRINGS = 64


class APIError(Exception):
    """An error answered to the client: HTTP ``status`` and OpenAI's error object."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """A checked chat completion request."""

    model: str
    messages: list[dict[str, str]]
    params: GenerationParams
    stream: bool
    include_usage: bool


_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


def _number(body: dict[str, Any], name: str, lo: float, hi: float, default: float) -> float:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise APIError(400, f"'{name}' must be a number, got {type(value).__name__}.", param=name)
    if not lo <= value <= hi:
        raise APIError(400, f"'{name}' must be between {lo:g} and {hi:g}, got {value!r}.", param=name)
    return float(value)


def _integer(body: dict[str, Any], name: str, lo: int, hi: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise APIError(400, f"'{name}' must be an integer, got {type(value).__name__}.", param=name)
    if not lo <= value <= hi:
        raise APIError(400, f"'{name}' must be between {lo} and {hi}, got {value}.", param=name)
    return value


def _content(value: Any, i: int) -> str:
    """A message's text (lone surrogates become U+FFFD: the tokenizer cannot encode them)."""
    return valid_text(_text(value, i))


def _text(value: Any, i: int) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = []
        for part in value:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise APIError(400, f"messages[{i}].content: only text parts ({{'type': 'text', 'text': …}}) "
                                    "are supported.", param=f"messages[{i}].content")
            texts.append(part["text"])
        return "".join(texts)
    raise APIError(400, f"messages[{i}].content must be a string or a list of text parts.",
                   param=f"messages[{i}].content")


def parse_chat_request(body: Any, *, models: list[str], max_tokens_limit: int,
                       default_max_tokens: int) -> ChatRequest:
    """Check a decoded JSON body. ``models``: the ids this server serves (the first is used when ``model`` is
    absent); ``max_tokens_limit``: the largest ``max_tokens`` accepted (tokens). Raises ``APIError``."""
    if not isinstance(body, dict):
        raise APIError(400, "The request body must be a JSON object.")
    model = body.get("model")
    if model is None:
        model = models[0]
    elif not isinstance(model, str):
        raise APIError(400, "'model' must be a string.", param="model")
    elif model not in models:
        raise APIError(404, f"The model '{model}' does not exist on this server; it serves: {', '.join(models)}.",
                       param="model", code="model_not_found")
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise APIError(400, "'messages' must be a non-empty list of {'role', 'content'} objects.", param="messages")
    messages = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict):
            raise APIError(400, f"messages[{i}] must be an object.", param=f"messages[{i}]")
        role = m.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise APIError(400, f"messages[{i}].role must be one of system, developer, user, assistant "
                                f"(got {role!r}).", param=f"messages[{i}].role")
        messages.append({"role": _ROLES[role], "content": _content(m.get("content"), i)})
    stream = body.get("stream")
    if stream is None:                  # absent or null: OpenAI answers one JSON completion
        stream = False
    if not isinstance(stream, bool):
        raise APIError(400, "'stream' must be true or false.", param="stream")
    opts = body.get("stream_options")
    include_usage = False
    if opts is not None:
        if not isinstance(opts, dict) or not isinstance(opts.get("include_usage", False), bool):
            raise APIError(400, "'stream_options' must be an object like {'include_usage': true}.",
                           param="stream_options")
        include_usage = bool(opts.get("include_usage", False))
    n = _integer(body, "n", 1, 1)
    del n
    max_tokens = _integer(body, "max_completion_tokens", 1, max_tokens_limit)
    if max_tokens is None:
        max_tokens = _integer(body, "max_tokens", 1, max_tokens_limit)
    stop = body.get("stop")
    if stop is None:
        stops: tuple[str, ...] = ()
    elif isinstance(stop, str):
        stops = (stop,)
    elif isinstance(stop, list) and len(stop) <= MAX_STOP_STRINGS and all(isinstance(s, str) for s in stop):
        stops = tuple(s for s in stop if s)         # an empty stop string would end every reply at once
    else:
        raise APIError(400, f"'stop' must be a string or a list of up to {MAX_STOP_STRINGS} strings.", param="stop")
    d = GenerationParams()
    params = GenerationParams(
        temperature=_number(body, "temperature", 0.0, 2.0, d.temperature),
        top_p=_number(body, "top_p", 0.0, 1.0, d.top_p),
        top_k=_integer(body, "top_k", 0, 100000) or d.top_k,
        repeat_penalty=_number(body, "repeat_penalty", 0.0, 10.0, d.repeat_penalty),
        max_tokens=max_tokens or default_max_tokens,
        seed=_integer(body, "seed", 0, (1 << 32) - 1),
        stop=stops,
    )
    return ChatRequest(model, messages, params, stream, include_usage)
