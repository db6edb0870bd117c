"""How many tokens a chat's prompt takes on an OpenAI-compatible server, and the server's context window: the
context meter for remote engines (``TokenCounter``, held by ``app.engine.remote.engine.RemoteEngine``).

The OpenAI API has neither, so the servers' own extras are asked, once each, and the first that answers is kept:

- llama.cpp's ``llama-server``: ``POST /apply-template`` (its chat template) then ``POST /tokenize`` counts the
  exact prompt; ``GET /props`` gives ``n_ctx``.
- llama-cpp-python's ``llama_cpp.server``: ``POST /extras/tokenize/count`` counts with the model's tokenizer; the
  chat template's few tokens per message are estimated (``TEMPLATE_TOKENS``).
- vLLM: ``GET /v1/models`` lists ``max_model_len``; llama-server's model list has ``meta.n_ctx_train``.
- anything else: an estimate from the text's length (``estimate_tokens``), said to be one.

``count_prompt(messages)`` returns ``(tokens, exact)``; ``exact`` is True only when the server rendered and
tokenized the very prompt it would prefill. ``context_window()`` returns tokens, or None when no server extra says.
Both block (HTTP, a few ms on loopback): call them from a worker thread. Each request has a total deadline
(``TOKENS_TIMEOUT_S``) and a size cap (``app.engine.remote.bounded``), and is ended when the engine unloads
(closing the window). Raises ``RemoteError`` on a transport failure or a deadline (the meter then shows nothing).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from app.engine.remote.bounded import CONNECT_S, Aborts, fresh_client, request
from app.engine.remote.errors import RemoteError

log = logging.getLogger("brook.engine.remote_tokens")

#: Tokens a chat template adds per message when the server cannot render it (ChatML: ``<|im_start|>role\n`` …
#: ``<|im_end|>\n`` = 5), plus the generation prompt's.
TEMPLATE_TOKENS = 5
#: Seconds for one whole tokenizer or props request (a total deadline, connect included).
TOKENS_TIMEOUT_S = 10.0


def estimate_tokens(text: str) -> int:
    """A tokenizer-free guess: ~4 characters per token for ASCII text, ~1 token per other character (CJK, most
    other scripts, emoji take one or more)."""
    ascii_chars = sum(1 for c in text if c < "\x80")
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def _flat(messages: Sequence[Mapping[str, str]]) -> str:
    return "\n".join(f"{m.get('role', '')}\n{m.get('content', '')}" for m in messages)


class TokenCounter:
    """Counts prompts and asks the context window of the server at ``base_url`` (an API root ending in ``/v1``).

    ``model()`` gives the model id in use (None: the server's default); ``headers()`` the request headers (the
    API key). ``source`` says which way counts: "llama-server", "llama-cpp-python", "estimate" (None until the
    first count).
    """

    def __init__(self, base_url: str, model: Callable[[], str | None], headers: Callable[[], dict[str, str]],
                 requests: Aborts | None = None, connect_s: float = CONNECT_S) -> None:
        self.base_url = base_url
        self._model = model
        self._headers = headers
        self.requests = requests if requests is not None else Aborts()
        self._connect_s = connect_s
        self.source: str | None = None
        self._window: int | None = None
        self._window_asked = False

    def _root(self) -> str:
        """The server's root (llama-server's and llama_cpp.server's extras live beside ``/v1``)."""
        base = self.base_url
        return base[: -len("/v1")] if base.endswith("/v1") else base

    def _get(self, client: httpx.Client, url: str) -> Any:
        return request(client, "GET", url, total_s=TOKENS_TIMEOUT_S, aborts=self.requests, base_url=self.base_url)

    def _post(self, client: httpx.Client, path: str, body: dict[str, Any]) -> Any | None:
        """The JSON answer of ``POST root+path``, or None when the server has no such endpoint."""
        resp = request(client, "POST", self._root() + path, json=body, total_s=TOKENS_TIMEOUT_S,
                       aborts=self.requests, base_url=self.base_url)
        if resp.status_code >= 400:          # 404: no such extra on this server
            return None
        try:
            return resp.json()
        except ValueError:
            return None

    def count_prompt(self, messages: Sequence[Mapping[str, str]]) -> tuple[int, bool]:
        """``(tokens, exact)`` of the prompt ``messages`` make on this server (see the module docstring)."""
        msgs = [{"role": m.get("role", ""), "content": m.get("content", "")} for m in messages]
        overhead = TEMPLATE_TOKENS * len(msgs) + TEMPLATE_TOKENS
        with fresh_client(self._headers(), self._connect_s) as client:
            for source in ([self.source] if self.source else ["llama-server", "llama-cpp-python"]):
                counted = self._count_with(client, source, msgs, overhead)
                if counted is not None:
                    self.source = source
                    return counted
        self.source = "estimate"
        return sum(estimate_tokens(m["content"]) for m in msgs) + overhead, False

    def _count_with(self, client: httpx.Client, source: str, msgs: list[dict[str, str]],
                    overhead: int) -> tuple[int, bool] | None:
        if source == "llama-server":
            rendered = self._post(client, "/apply-template", {"messages": msgs})
            prompt = rendered.get("prompt") if isinstance(rendered, dict) else None
            body = {"content": prompt if isinstance(prompt, str) else _flat(msgs), "add_special": True}
            answer = self._post(client, "/tokenize", body)
            tokens = answer.get("tokens") if isinstance(answer, dict) else None
            if not isinstance(tokens, list):
                return None
            return (len(tokens), True) if isinstance(prompt, str) else (len(tokens) + overhead, False)
        if source == "llama-cpp-python":
            body = {"input": "\n".join(m["content"] for m in msgs)}
            model = self._model()
            if model:
                body["model"] = model
            answer = self._post(client, "/extras/tokenize/count", body)
            count = answer.get("count") if isinstance(answer, dict) else None
            return (int(count) + overhead, False) if isinstance(count, int) else None
        return None

    def context_window(self) -> int | None:
        """The server's context window (tokens): llama-server's ``/props`` ``n_ctx``, else the model list's
        ``max_model_len`` (vLLM) or ``meta.n_ctx_train`` (llama-server); None when no server says. Asked once."""
        if self._window_asked:
            return self._window
        window = None
        try:
            with fresh_client(self._headers(), self._connect_s) as client:
                props = self._get(client, self._root() + "/props")
                if props.status_code == 200:
                    window = _n_ctx(props.json())
                if window is None:
                    models = self._get(client, self.base_url + "/models")
                    if models.status_code == 200:
                        window = _model_window(models.json(), self._model())
        except (RemoteError, ValueError) as exc:
            log.debug("context window of %s: %s", self.base_url, exc)
            return None
        self._window, self._window_asked = window, True
        return window


def _n_ctx(props: Any) -> int | None:
    if not isinstance(props, dict):
        return None
    settings = props.get("default_generation_settings")
    for source in (settings, props):
        if isinstance(source, dict) and isinstance(source.get("n_ctx"), int) and source["n_ctx"] > 0:
            return int(source["n_ctx"])
    return None


def _model_window(listing: Any, model: str | None) -> int | None:
    data = listing.get("data") if isinstance(listing, dict) else None
    for m in data if isinstance(data, list) else []:
        if not isinstance(m, dict) or (model and m.get("id") != model):
            continue
        for value in (m.get("max_model_len"), (m.get("meta") or {}).get("n_ctx_train")):
            if isinstance(value, int) and value > 0:
                return value
    return None
