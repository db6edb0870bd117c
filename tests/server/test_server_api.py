"""Brook's OpenAI-compatible server (issue 12): the official ``openai`` client, raw HTTP error cases, security,
client disconnects and the scheduler shared with the window. Real uvicorn on 127.0.0.1, real HTTP."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Mapping, Sequence

import httpx
import openai
import pytest

from app.core.conversation import Conversation, Message, Role
from app.core.streaming.generation import generate
from app.core.streaming.scheduler import scheduler_for
from app.core.types import Chunk, GenerationParams
from app.engine.scripted import ScriptedEngine
from app.server.api import ServerOptions
from app.server.run import BrookServer, ServerError, check_bind

pytestmark = pytest.mark.timeout(120)


class ServerThread:
    """A ``BrookServer`` on its own asyncio loop in a background thread (the tests' clients are blocking)."""

    def __init__(self, engine: object, options: ServerOptions | None = None) -> None:
        self.engine = engine
        self.server = BrookServer(lambda: engine, host="127.0.0.1", port=0, options=options)
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self.server.start())
        self._ready.set()
        self.loop.run_forever()
        self.loop.run_until_complete(self.server.stop())
        self.loop.close()

    def __enter__(self) -> ServerThread:
        self._thread.start()
        assert self._ready.wait(30)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)

    @property
    def url(self) -> str:
        return self.server.url


def scripted(**kw) -> ScriptedEngine:  # type: ignore[no-untyped-def]
    kw.setdefault("tokens_per_s", 0)
    e = ScriptedEngine(name="brook-test", **kw)
    e.load()
    return e


@pytest.fixture
def served() -> Iterator[ServerThread]:
    with ServerThread(scripted()) as s:
        yield s


# the official client ----------------------------------------------------------------------------------------
def test_openai_client_lists_models_and_completes(served: ServerThread) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="unused")
    assert [m.id for m in client.models.list()] == ["brook-test"]
    out = client.chat.completions.create(model="brook-test", messages=[{"role": "user", "content": "hi"}])
    assert out.choices[0].message.content == served.engine.text
    assert out.choices[0].finish_reason == "stop"
    assert out.usage is not None and out.usage.completion_tokens == len(served.engine.script)
    assert served.engine.calls[-1] == [{"role": "user", "content": "hi"}]


def test_openai_client_streams(served: ServerThread) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="unused")
    parts, finish, usage = [], None, None
    for ev in client.chat.completions.create(model="brook-test", stream=True, stream_options={"include_usage": True},
                                             messages=[{"role": "system", "content": "be brief"},
                                                       {"role": "user", "content": [{"type": "text", "text": "hi"}]}],
                                             max_tokens=5, temperature=0.2, seed=1):
        if ev.usage is not None:
            usage = ev.usage
        if ev.choices:
            parts.append(ev.choices[0].delta.content or "")
            finish = ev.choices[0].finish_reason or finish
    assert "".join(parts) == "".join(served.engine.script[:5])
    assert finish == "length"
    assert usage is not None and usage.completion_tokens == 5
    assert served.engine.calls[-1] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


# raw HTTP errors ---------------------------------------------------------------------------------------------
def _post(url: str, content: bytes | str, headers: Mapping[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{url}/chat/completions", content=content,
                      headers={"Content-Type": "application/json", **(headers or {})}, timeout=30)


@pytest.mark.parametrize(("body", "status", "words"), [
    (b"{not json", 400, "not valid JSON"),
    (b"[1, 2]", 400, "JSON object"),
    (json.dumps({"model": "brook-test"}), 400, "'messages'"),
    (json.dumps({"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}), 400, "'temperature'"),
    (json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 10**6}), 400, "max_tokens"),
    (json.dumps({"messages": [{"role": "user", "content": "hi"}], "stream": "yes"}), 400, "'stream'"),
    (json.dumps({"messages": [{"role": "tool", "content": "hi"}]}), 400, "role"),
    (json.dumps({"messages": [{"role": "user", "content": 5}]}), 400, "content"),
    (json.dumps({"model": "gpt-9", "messages": [{"role": "user", "content": "hi"}]}), 404, "does not exist"),
])
def test_bad_requests_get_openai_shaped_errors(served: ServerThread, body: bytes | str, status: int,
                                               words: str) -> None:
    resp = _post(served.url, body)
    assert resp.status_code == status
    err = resp.json()["error"]
    assert words in err["message"]
    assert set(err) == {"message", "type", "param", "code"}
    assert "Traceback" not in resp.text


def test_body_size_limit_and_unknown_routes(served: ServerThread) -> None:
    big = json.dumps({"messages": [{"role": "user", "content": "x" * (2 << 20)}]})
    resp = _post(served.url, big)
    assert resp.status_code == 413 and "limit" in resp.json()["error"]["message"]
    resp = httpx.get(served.url.replace("/v1", "/nope"), timeout=30)
    assert resp.status_code == 404 and resp.json()["error"]["code"] == "not_found"
    resp = httpx.get(f"{served.url}/chat/completions", timeout=30)
    assert resp.status_code == 405 and "error" in resp.json()


def test_the_openai_client_sees_the_errors_as_its_own_exceptions(served: ServerThread) -> None:
    client = openai.OpenAI(base_url=served.url, api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        client.chat.completions.create(model="other", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="max_tokens"):
        client.chat.completions.create(model="brook-test", messages=[{"role": "user", "content": "hi"}],
                                       max_tokens=10**7)


# security ---------------------------------------------------------------------------------------------------
def test_api_key_is_required_when_set() -> None:
    with ServerThread(scripted(), ServerOptions(api_key="s3cret")) as s:
        assert httpx.get(f"{s.url}/models", timeout=30).status_code == 401
        wrong = httpx.get(f"{s.url}/models", headers={"Authorization": "Bearer nope"}, timeout=30)
        assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=s.url, api_key="nope", max_retries=0).models.list()
        ok = openai.OpenAI(base_url=s.url, api_key="s3cret")
        assert ok.chat.completions.create(model="brook-test", messages=[{"role": "user", "content": "hi"}]
                                          ).choices[0].message.content


def test_non_loopback_bind_requires_a_key() -> None:
    with pytest.raises(ServerError, match="requires an API key"):
        check_bind("0.0.0.0", None)
    with pytest.raises(ServerError, match="requires an API key"):
        BrookServer(lambda: None, host="192.168.1.10", port=0)
    check_bind("0.0.0.0", "key")
    check_bind("127.0.0.1", None)
    check_bind("::1", None)
    check_bind("localhost", None)


def test_no_cors_unless_configured() -> None:
    headers = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    with ServerThread(scripted()) as s:
        r = httpx.get(f"{s.url}/models", headers={"Origin": "http://evil.example"}, timeout=30)
        assert "access-control-allow-origin" not in r.headers
        assert "access-control-allow-origin" not in httpx.options(f"{s.url}/chat/completions", headers=headers,
                                                                  timeout=30).headers
    with ServerThread(scripted(), ServerOptions(cors_origins=("http://app.example",))) as s:
        r = httpx.get(f"{s.url}/models", headers={"Origin": "http://app.example"}, timeout=30)
        assert r.headers["access-control-allow-origin"] == "http://app.example"
        r = httpx.get(f"{s.url}/models", headers={"Origin": "http://evil.example"}, timeout=30)
        assert "access-control-allow-origin" not in r.headers


def test_a_port_in_use_is_explained(served: ServerThread) -> None:
    other = BrookServer(lambda: served.engine, host="127.0.0.1", port=served.server.port)
    with pytest.raises(ServerError, match="Is another server using that port"):
        asyncio.run(other.start())


# disconnects and fairness ---------------------------------------------------------------------------------------
class GatedEngine(ScriptedEngine):
    """First call: yields two tokens, then waits for Stop (a slow next token that only a stop can end).
    Later calls: three tokens at once."""

    def __init__(self) -> None:
        super().__init__(name="brook-test")
        self.yielded = 0
        self.stopped = threading.Event()
        self.load()

    def stream(self, messages: Sequence[Mapping[str, str]], params: GenerationParams,
               stop: threading.Event) -> Iterator[Chunk]:
        self.n_calls += 1
        if self.n_calls > 1:
            yield Chunk("one two three", 3, "stop")
            return
        for text in ("one ", "two "):
            self.yielded += 1
            yield Chunk(text)
        stop.wait(120)
        if stop.is_set():
            self.stopped.set()
            return
        self.yielded += 1
        yield Chunk("three", 1, "stop")


@pytest.mark.parametrize("stream", [True, False])
def test_a_client_that_disconnects_stops_its_generation(stream: bool) -> None:
    engine = GatedEngine()
    with ServerThread(engine) as s:
        body = {"model": "brook-test", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
        with httpx.Client(timeout=60) as client:
            if stream:
                with client.stream("POST", f"{s.url}/chat/completions", json=body) as resp:
                    seen = ""
                    for line in resp.iter_lines():
                        if line.startswith("data: {"):
                            seen += json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
                        if seen == "one two ":
                            break       # leaving the block closes the connection
            else:
                with pytest.raises(httpx.ReadTimeout):
                    client.post(f"{s.url}/chat/completions", json=body, timeout=httpx.Timeout(60, read=1.0))
        assert engine.stopped.wait(60)
        assert engine.yielded == 2           # stopped where it was: no token after the disconnect
        # the slot is free again: the next request is served
        again = httpx.post(f"{s.url}/chat/completions", json={**body, "stream": False}, timeout=60)
        assert again.json()["choices"][0]["message"]["content"] == "one two three"


def test_window_replies_and_api_requests_wait_in_fifo_order() -> None:
    """A window reply holds the model; an API request and then another window reply wait; they are served in
    the order they asked."""
    gate = threading.Event()

    class HeldEngine(ScriptedEngine):
        """The first reply holds the model until the test opens ``gate``."""

        def stream(self, messages, params, stop):  # type: ignore[no-untyped-def]
            if self.n_calls == 0:
                gate.wait(60)
            yield from super().stream(messages, params, stop)

    engine = HeldEngine(["a", "b", "c"], tokens_per_s=0, name="brook-test")
    engine.load()

    async def main() -> list[str]:
        server = BrookServer(lambda: engine, host="127.0.0.1", port=0)
        await server.start()
        sched = scheduler_for(engine)

        def window_reply(prompt: str) -> asyncio.Task[Message]:
            conv = Conversation(messages=[Message(Role.USER, prompt)])
            reply = conv.add(Message(Role.ASSISTANT))
            return asyncio.ensure_future(generate(engine, sched, conv, reply, GenerationParams()))

        try:
            first = window_reply("window 1")
            while sched.active == 0:
                await asyncio.sleep(0.005)
            async with httpx.AsyncClient(timeout=60) as client:
                api = asyncio.ensure_future(client.post(f"{server.url}/chat/completions", json={
                    "messages": [{"role": "user", "content": "api"}]}))
                while sched.waiting < 1:
                    await asyncio.sleep(0.005)
                second = window_reply("window 2")
                while sched.waiting < 2:
                    await asyncio.sleep(0.005)
                gate.set()
                await asyncio.gather(first, second)
                assert (await api).status_code == 200
        finally:
            await server.stop()
        return [c[-1]["content"] for c in engine.calls]

    assert asyncio.run(main()) == ["window 1", "api", "window 2"]


@pytest.mark.model
def test_the_real_model_through_the_openai_client(bundled_model) -> None:  # type: ignore[no-untyped-def]
    from app.engine.llama import LlamaEngine

    engine = LlamaEngine(bundled_model, n_ctx=512)
    engine.load()
    try:
        with ServerThread(engine) as s:
            client = openai.OpenAI(base_url=s.url, api_key="unused", max_retries=0)
            messages = [{"role": "user", "content": "Say hi."}]
            out = client.chat.completions.create(model=engine.name, messages=messages, max_tokens=8,
                                                 temperature=0.0)
            assert out.choices[0].message.content
            assert out.usage is not None and out.usage.completion_tokens <= 8
            assert out.usage.prompt_tokens == engine.prompt_tokens(messages) > 0
            with pytest.raises(openai.BadRequestError, match="context window") as info:
                client.chat.completions.create(model=engine.name, max_tokens=8,
                                               messages=[{"role": "user", "content": "word " * 2000}])
            assert info.value.code == "context_length_exceeded"
    finally:
        engine.unload()
