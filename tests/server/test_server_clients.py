"""Clients of ``--serve`` as they really talk: the installed client libraries (``openai``, ``langchain-openai``,
``litellm``, from the test extra) and the recorded request shapes of clients that cannot run here (a browser page
on the OpenAI JavaScript SDK, Open WebUI, SillyTavern, Continue).

The recorded shapes are what those clients send to an OpenAI-compatible server (their headers and bodies as
their source builds them, reduced to what matters for a server: field names, types and counts)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import httpx
import openai
import pytest

from app.server.api import ServerOptions
from app.server.schema import MAX_STOP_STRINGS
from tests.server.test_server_api import ServerThread, scripted

pytestmark = pytest.mark.timeout(120)

ORIGIN = "http://localhost:5173"
#: Request headers of the OpenAI JavaScript SDK (openai-node v4/v5) in a browser (dangerouslyAllowBrowser).
STAINLESS_HEADERS = [
    "authorization", "content-type", "x-stainless-arch", "x-stainless-lang", "x-stainless-os",
    "x-stainless-package-version", "x-stainless-retry-count", "x-stainless-runtime",
    "x-stainless-runtime-version", "x-stainless-timeout",
]

#: Open WebUI (openai router): lists models, then streams a chat; system prompt first, text parts for content.
OPEN_WEBUI = {
    "stream": True,
    "model": "brook-test",
    "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]},
    ],
    "stream_options": {"include_usage": True},
    "temperature": 0.8,
    "max_tokens": 512,
    "user": {"name": "User", "id": "a1b2", "email": "user@example.org", "role": "admin"},
    "metadata": {"chat_id": "c1", "message_id": "m1"},
}
#: SillyTavern, Chat Completion source "Custom (OpenAI-compatible)": every sampler field, many stop strings.
SILLYTAVERN = {
    "messages": [{"role": "system", "content": "Write Seraphina's next reply."},
                 {"role": "assistant", "content": "*Seraphina smiles.* Welcome."},
                 {"role": "user", "content": "Hello there."}],
    "model": "brook-test",
    "temperature": 1, "max_tokens": 300, "stream": True, "presence_penalty": 0, "frequency_penalty": 0,
    "top_p": 1, "top_k": 0, "min_p": 0, "repetition_penalty": 1, "logit_bias": {}, "seed": 1234, "n": 1,
    "stop": ["\nUser:", "\nSeraphina:", "\n***", "\n<START>", "</s>", "<|im_end|>", "\n\n\n"],
    "include_reasoning": False,
}
#: Continue (VS Code / JetBrains chat): its own fetch-based OpenAI adapter.
CONTINUE = {
    "messages": [{"role": "system", "content": "You are an expert software developer."},
                 {"role": "user", "content": "Explain this code:\n```py\nprint(1)\n```"}],
    "model": "brook-test", "max_tokens": 4096, "temperature": 0.2, "stream": True,
    "stop": ["<|endoftext|>", "<|im_end|>", "[/INST]", "</s>", "<|eot_id|>", "<end_of_turn>"],
}


@pytest.fixture
def served() -> Iterator[ServerThread]:
    with ServerThread(scripted(script="Four. **Bold** and `code`.\n"), ServerOptions(cors_origins=(ORIGIN,))) as s:
        yield s


def _sse_text(body: str) -> str:
    out = []
    for line in body.splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            choices = json.loads(line[6:]).get("choices") or []
            if choices:
                out.append(choices[0]["delta"].get("content") or "")
    return "".join(out)


def test_a_browser_page_on_the_openai_js_sdk_passes_the_cors_preflight(served: ServerThread) -> None:
    for path in ("/chat/completions", "/models", "/models/brook-test"):
        r = httpx.options(f"{served.url}{path}", timeout=30, headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "POST" if "chat" in path else "GET",
            "Access-Control-Request-Headers": ",".join(STAINLESS_HEADERS)})
        assert r.status_code == 200, r.text
        allowed = {h.strip().lower() for h in r.headers["access-control-allow-headers"].split(",")}
        assert set(STAINLESS_HEADERS) <= allowed and r.headers["access-control-allow-origin"] == ORIGIN
    r = httpx.post(f"{served.url}/chat/completions", timeout=30, headers={
        "Origin": ORIGIN, "X-Stainless-Lang": "js", "X-Stainless-Package-Version": "4.104.0",
        "X-Stainless-Retry-Count": "0"}, json={"model": "brook-test", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == ORIGIN
    evil = httpx.options(f"{served.url}/chat/completions", timeout=30, headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert evil.status_code == 400 and "access-control-allow-origin" not in evil.headers   # origins still checked


@pytest.mark.parametrize("n", [5, 8, MAX_STOP_STRINGS])
def test_more_than_four_stop_strings_are_accepted(served: ServerThread, n: int) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0)
    stops = [f"\nStop{i}:" for i in range(n)]
    out = client.chat.completions.create(model="brook-test", messages=[{"role": "user", "content": "hi"}],
                                         stop=stops)
    assert out.choices[0].message.content == "Four. **Bold** and `code`.\n"
    assert served.engine.last_params.stop == tuple(stops)  # type: ignore[attr-defined]
    with pytest.raises(openai.BadRequestError, match=f"up to {MAX_STOP_STRINGS}"):
        client.chat.completions.create(model="brook-test", messages=[{"role": "user", "content": "hi"}],
                                       stop=[f"s{i}" for i in range(MAX_STOP_STRINGS + 1)])


def test_the_openai_client_retrieves_the_model(served: ServerThread) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0)
    model = client.models.retrieve("brook-test")
    assert model.id == "brook-test" and model.object == "model" and model.owned_by == "brook"
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        client.models.retrieve("gpt-4o")
    assert [m.id for m in client.models.list()] == ["brook-test"]


def test_langchain_openai_invokes_and_streams(served: ServerThread) -> None:
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(base_url=served.url, api_key="unused", model="brook-test", max_retries=0,  # type: ignore[arg-type]
                     stop=["\nA:", "\nB:", "\nC:", "\nD:", "\nE:"])
    assert llm.invoke("What is 2+2?").content == "Four. **Bold** and `code`.\n"
    assert "".join(str(c.content) for c in llm.stream("What is 2+2?")) == "Four. **Bold** and `code`.\n"


def test_litellm_completes_and_streams(served: ServerThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environ, "LITELLM_LOCAL_MODEL_COST_MAP", "True")   # no fetch of its price list
    import litellm

    kw = {"model": "openai/brook-test", "api_base": served.url, "api_key": "unused",
          "messages": [{"role": "user", "content": "What is 2+2?"}]}
    out = litellm.completion(**kw)
    assert out.choices[0].message.content == "Four. **Bold** and `code`.\n"
    parts = [c.choices[0].delta.content or "" for c in litellm.completion(stream=True, **kw)]
    assert "".join(parts) == "Four. **Bold** and `code`.\n"


@pytest.mark.parametrize("shape", [OPEN_WEBUI, SILLYTAVERN, CONTINUE], ids=["open-webui", "sillytavern", "continue"])
def test_recorded_request_shapes_of_other_clients(served: ServerThread, shape: dict) -> None:
    assert httpx.get(f"{served.url}/models", timeout=30).json()["data"][0]["id"] == "brook-test"
    r = httpx.post(f"{served.url}/chat/completions", json=shape, timeout=30,
                   headers={"Authorization": "Bearer unused", "Accept": "text/event-stream"})
    assert r.status_code == 200, r.text
    assert _sse_text(r.text) == "Four. **Bold** and `code`.\n"
    params = served.engine.last_params  # type: ignore[attr-defined]
    assert params.stop == tuple(shape.get("stop", ()))
    assert params.max_tokens == shape["max_tokens"] and params.temperature == shape["temperature"]
    sent = served.engine.calls[-1]  # type: ignore[attr-defined]
    assert [m["role"] for m in sent] == [m["role"] for m in shape["messages"]]
    if shape is OPEN_WEBUI:
        assert sent[-1]["content"] == "What is 2+2?" and '"usage"' in r.text
