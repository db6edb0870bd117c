"""Hostile requests to Brook's server: web pages of other sites and other host names are refused, a chat
completion must be JSON, every bad request is a 4xx with an OpenAI-shaped error, every failure mid-stream is an
error event followed by ``[DONE]``, a client leaving mid-upload is no ERROR, and a key no client can send is
refused. Real uvicorn on 127.0.0.1, real HTTP (``tests.server.test_server_api.ServerThread``)."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from app.server.api import ServerOptions
from app.server.run import BrookServer, ServerError
from tests.helpers import ROOT
from tests.server.test_server_api import ServerThread, scripted

pytestmark = pytest.mark.timeout(120)
HI = json.dumps({"messages": [{"role": "user", "content": "hi"}]})


@pytest.fixture
def served() -> Iterator[ServerThread]:
    with ServerThread(scripted(script="Hello there.")) as s:
        yield s


def post(url: str, body: bytes | str = HI, **headers: str) -> httpx.Response:
    return httpx.post(f"{url}/chat/completions", content=body, headers=headers, timeout=30)


def _openai_error(resp: httpx.Response, status: int, code: str | None = None) -> dict:
    assert resp.status_code == status, resp.text
    err = resp.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and "Traceback" not in resp.text
    if code is not None:
        assert err["code"] == code
    return err


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_a_browser_simple_post_from_another_site_never_generates(served: ServerThread, ctype: str) -> None:
    resp = post(served.url, **{"Content-Type": ctype, "Origin": "http://evil.example"})
    _openai_error(resp, 403, "origin_not_allowed")
    assert served.engine.n_calls == 0                       # type: ignore[attr-defined]


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1.evil.example"])
def test_any_request_from_a_foreign_origin_is_refused(served: ServerThread, origin: str) -> None:
    _openai_error(post(served.url, **{"Content-Type": "application/json", "Origin": origin}), 403)
    _openai_error(httpx.get(f"{served.url}/models", headers={"Origin": origin}, timeout=30), 403)
    assert served.engine.n_calls == 0                       # type: ignore[attr-defined]


def test_an_allowed_origin_generates() -> None:
    with ServerThread(scripted(), ServerOptions(cors_origins=("http://app.example",))) as s:
        resp = post(s.url, **{"Content-Type": "application/json", "Origin": "http://app.example"})
        assert resp.status_code == 200 and resp.headers["access-control-allow-origin"] == "http://app.example"
        _openai_error(post(s.url, **{"Content-Type": "application/json", "Origin": "http://other.example"}), 403)


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "attacker.localhost.example", "10.0.0.1"])
def test_a_host_that_is_not_the_bound_address_is_refused(served: ServerThread, host: str) -> None:
    _openai_error(httpx.get(f"{served.url}/models", headers={"Host": host}, timeout=30), 403, "host_not_allowed")
    _openai_error(post(served.url, **{"Content-Type": "application/json", "Host": host}), 403)
    assert served.engine.n_calls == 0                       # type: ignore[attr-defined]


def test_the_bound_address_localhost_and_configured_hosts_are_answered() -> None:
    with ServerThread(scripted(), ServerOptions(allowed_hosts=("brook.lan",))) as s:
        port = s.server.port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}", "brook.lan:80"):
            assert httpx.get(f"{s.url}/models", headers={"Host": host}, timeout=30).status_code == 200, host
        assert httpx.get(f"{s.url}/models", headers={"Host": "evil.lan"}, timeout=30).status_code == 403


@pytest.mark.parametrize("ctype", [None, "text/plain", "application/x-www-form-urlencoded", "text/json"])
def test_a_chat_completion_must_be_json(served: ServerThread, ctype: str | None) -> None:
    headers = {} if ctype is None else {"Content-Type": ctype}
    with httpx.Client() as c:
        req = c.build_request("POST", f"{served.url}/chat/completions", content=HI.encode(), headers=headers)
        assert ctype is not None or "content-type" not in req.headers
        _openai_error(c.send(req), 415, "unsupported_media_type")
    for ok in ("application/json", "application/json; charset=utf-8", "Application/JSON", "application/x+json"):
        assert post(served.url, **{"Content-Type": ok}).status_code == 200, ok


def _deep(n: int) -> str:
    return json.dumps({"messages": [{"role": "user", "content": "hi"}], "x": None})[:-1] + \
        ', "deep": ' + "[" * n + "]" * n + "}"


@pytest.mark.parametrize("body, words", [
    pytest.param(_deep(100_000), "nested too deeply", id="deep-100000"),
    pytest.param(_deep(5_000), "nested too deeply", id="deep-5000"),
    (json.dumps({"messages": [{"role": ["user"], "content": "hi"}]}), "role"),
    (json.dumps({"messages": [{"role": {"a": 1}, "content": "hi"}]}), "role"),
    (json.dumps({"messages": [{"role": 5, "content": "hi"}]}), "role"),
    (json.dumps({"messages": [{"role": "user", "content": [{"type": "text", "text": ["x"]}]}]}), "content"),
    (json.dumps({"model": ["a"], "messages": [{"role": "user", "content": "hi"}]}), "'model'"),
    (json.dumps({"messages": [{"role": "user", "content": "hi"}], "stop": [{"a": 1}]}), "'stop'"),
    (json.dumps({"messages": [{"role": "user", "content": "hi"}], "stream_options": []}), "stream_options"),
    pytest.param(b'{"messages": [{"role": "user", "content": "hi"}], "model": "\\ud800"}', "does not exist",
                 id="model-lone-surrogate"),
])
def test_every_bad_request_is_a_4xx_with_an_openai_error(served: ServerThread, body: str | bytes,
                                                         words: str) -> None:
    resp = post(served.url, body, **{"Content-Type": "application/json"})
    assert 400 <= resp.status_code < 500, resp.text
    assert words in _openai_error(resp, resp.status_code)["message"]


def test_lone_surrogates_and_stream_null_are_accepted(served: ServerThread) -> None:
    body = b'{"messages": [{"role": "user", "content": "a\\ud800b\\udfff"}], "stream": null}'
    resp = post(served.url, body, **{"Content-Type": "application/json"})
    assert resp.status_code == 200 and resp.json()["choices"][0]["message"]["content"] == "Hello there."
    assert served.engine.calls[-1][-1]["content"] == "a\ufffdb\ufffd"          # type: ignore[attr-defined]


def _sse(resp: httpx.Response) -> list[str]:
    return [line[6:] for line in resp.text.split("\n") if line.startswith("data: ")]


@pytest.mark.parametrize("exc", [RuntimeError("llama_decode returned -1"), UnicodeEncodeError("utf-8", "x", 0, 1, "x"),
                                 ValueError("bad"), MemoryError()])
def test_a_failure_mid_stream_is_an_error_event_then_done(exc: BaseException, caplog) -> None:
    engine = scripted(script="one two three four", fail_after=2, fail_with=lambda _i: exc)
    with ServerThread(engine) as s:
        stream = json.dumps({"messages": [{"role": "user", "content": "hi"}], "stream": True})
        resp = post(s.url, stream, **{"Content-Type": "application/json"})
        assert resp.status_code == 200
        events = _sse(resp)
        assert events[-1] == "[DONE]" and "error" in json.loads(events[-2])
        assert type(exc).__name__ in json.loads(events[-2])["error"]["message"]
        _openai_error(post(s.url, **{"Content-Type": "application/json"}), 500)       # not streaming: a 500


def test_a_client_that_leaves_while_uploading_is_no_error(served: ServerThread, caplog) -> None:
    caplog.set_level(logging.INFO)
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", served.server.port)) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n" + b'{"messages": [' * 100)
            time.sleep(0.2)
    deadline = time.monotonic() + 30
    while "disconnected while sending" not in caplog.text and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "disconnected while sending" in caplog.text
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert post(served.url, **{"Content-Type": "application/json"}).status_code == 200    # still serving


@pytest.mark.parametrize("key", [" ", "   ", "\t", "", "two words", " padded ", "ключ", "tab\tkey"])
def test_a_key_no_client_can_send_is_refused(key: str) -> None:
    with pytest.raises(ServerError, match="API key"):
        BrookServer(lambda: None, host="127.0.0.1", port=0, options=ServerOptions(api_key=key))


def test_the_command_line_refuses_a_blank_api_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out = subprocess.run([sys.executable, "main.py", "--serve", "--scripted", "--api-key", " ", "--port", "0"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"BROOK_DATA_DIR": str(tmp_path / "d"), "BROOK_CONFIG_DIR": str(tmp_path / "c"),
                              "PATH": "/usr/bin:/bin"})
    assert out.returncode == 2 and "API key is empty" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.model
def test_lone_surrogates_on_the_real_model_stream_and_complete(bundled_model) -> None:  # type: ignore[no-untyped-def]
    from app.engine.llama import LlamaEngine

    engine = LlamaEngine(bundled_model, n_ctx=512)
    engine.load()
    try:
        with ServerThread(engine) as s:
            for stream in ("false", "true"):
                body = ('{"messages": [{"role": "user", "content": "Say \\ud83d hi \\udc00."}], "max_tokens": 4, '
                        f'"temperature": 0, "stream": {stream}}}')
                resp = post(s.url, body, **{"Content-Type": "application/json"})
                assert resp.status_code == 200, resp.text
                if stream == "true":
                    events = _sse(resp)
                    assert events[-1] == "[DONE]" and not any("error" in json.loads(e) for e in events[:-1])
                else:
                    assert resp.json()["choices"][0]["message"]["content"]
    finally:
        engine.unload()


def test_many_streaming_clients_with_half_resetting_keep_fifo_order_and_the_server_answers() -> None:
    """Regression: 16 streaming clients, every other one resets its connection after the first event; the
    others finish, in the order they asked, and /v1/models answers meanwhile."""
    import struct
    import threading

    engine = scripted(script="one two three four five six", tokens_per_s=300)
    with ServerThread(engine) as s:
        done: list[int] = []
        lock = threading.Lock()
        body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()
        head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()

        asked = [threading.Event() for _ in range(16)]

        def client(i: int) -> None:
            with socket.create_connection(("127.0.0.1", s.server.port)) as sock:
                sock.sendall(head + body)
                got = b""
                while b"data: " not in got:
                    got += sock.recv(65536)
                asked[i].set()                   # its reply is in line (the first event comes before the slot)
                if i % 2:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))   # RST
                    return
                while b"[DONE]" not in got:
                    piece = sock.recv(65536)
                    if not piece:
                        break
                    got += piece
            assert b"[DONE]" in got and got.count(b'"content"') >= 6
            with lock:
                done.append(i)

        threads = []
        for i in range(16):
            t = threading.Thread(target=client, args=(i,))
            t.start()
            threads.append(t)
            assert asked[i].wait(60)             # arrival order = i
        assert httpx.get(f"{s.url}/models", timeout=30).status_code == 200
        for t in threads:
            t.join(60)
        assert done == list(range(0, 16, 2))
        deadline = time.monotonic() + 30
        while (s.server.api.active or engine.active) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert s.server.api.active == 0 and engine.active == 0
