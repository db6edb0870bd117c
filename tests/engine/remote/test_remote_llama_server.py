"""The remote engine against the real ``python -m llama_cpp.server`` serving the bundled model (issue 12).

The server runs in a subprocess on 127.0.0.1. To count the tokens it decodes, the subprocess wraps
``llama_cpp.Llama.eval`` (called once per decode step, once per prompt batch) to append the wall-clock time of
each call to a file; nothing of Brook's HTTP code is replaced.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.types import GenerationParams
from app.engine.remote.engine import RemoteConnection, RemoteEngine
from tests.helpers.replies import reply_through_pipeline

pytestmark = [pytest.mark.timeout(300), pytest.mark.model, pytest.mark.slow]

pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python[server] is not installed")

#: Runs llama_cpp.server with ``Llama.eval`` wrapped to log one line per call: wall time and tokens evaluated.
_WRAPPER = """
import os, sys, time, runpy
import llama_cpp
from app.engine.load_progress import install_model_params
install_model_params()    # Brook's model params (no extra buffer types: AMX faults on some CPUs)
_log = open(os.environ["BROOK_EVAL_LOG"], "a", buffering=1)
_eval = llama_cpp.Llama.eval
def eval(self, tokens):
    _eval(self, tokens)
    _log.write(f"{time.time():.6f} {len(tokens)}\\n")
llama_cpp.Llama.eval = eval
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__")
"""

COUNT_PROMPT = "Count from 1 to 100, one number per line, and nothing else."


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    def __init__(self, proc: subprocess.Popen[bytes], url: str, eval_log: Path) -> None:
        self.proc, self.url, self.eval_log = proc, url, eval_log

    def evals(self) -> list[tuple[float, int]]:
        """The server's ``eval`` calls, oldest first: (wall time, tokens). A decode step evaluates 1 token; a
        prompt (prefill) several."""
        out = []
        for line in self.eval_log.read_text().splitlines():
            t, n = line.split()
            out.append((float(t), int(n)))
        return out


@pytest.fixture(scope="module")
def llama_server(bundled_model: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("llama-server")
    port = _free_port()
    eval_log = folder / "evals.txt"
    eval_log.touch()
    log = open(folder / "server.log", "wb")   # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRAPPER, "--model", str(bundled_model), "--model_alias", "smollm2",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "BROOK_EVAL_LOG": str(eval_log)})
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail("llama_cpp.server exited:\n" + (folder / "server.log").read_text()[-3000:])
            try:
                if httpx.get(f"{url}/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start within 180 s")
            time.sleep(0.2)
        yield LlamaServer(proc, url, eval_log)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _reply(engine: RemoteEngine, prompt: str, params: GenerationParams, stop_after_chunks: int | None = None
           ) -> tuple[Message, float | None]:
    """One reply through the app's pipeline; with ``stop_after_chunks``, press Stop after that many chunks.
    Returns the reply and the wall time of Stop."""
    conv = Conversation()
    conv.add(Message(Role.USER, prompt))
    return reply_through_pipeline(engine, conv, params, stop_after_chunks)


def test_streamed_reply_stop_and_the_next_request(llama_server: LlamaServer) -> None:
    engine = RemoteEngine(RemoteConnection(llama_server.url))
    engine.load()
    assert engine.name == "smollm2"
    params = GenerationParams(temperature=0.0, seed=42, max_tokens=300)

    # 1. a streamed reply
    reply, _ = _reply(engine, "Say hello in one short sentence.", GenerationParams(temperature=0.0, max_tokens=40))
    assert reply.status is MessageStatus.DONE, reply.error
    assert reply.text.strip() and "\ufffd" not in reply.text
    assert reply.chunks >= 3

    # 2. Stop mid-reply: the server stops decoding once it sees the disconnect. First the whole reply, to know
    #    how many tokens the server would decode without Stop (temperature 0: the same reply each time).
    full, _ = _reply(engine, COUNT_PROMPT, params)
    assert full.status is MessageStatus.DONE, full.error
    full_tokens = full.chunks - 1          # the last chunk carries only the finish reason
    assert full_tokens >= 40
    before = len(llama_server.evals())
    stopped, t_stop = _reply(engine, COUNT_PROMPT, params, stop_after_chunks=10)
    assert stopped.status is MessageStatus.STOPPED and stopped.text
    assert t_stop is not None

    # 3. a second request right after Stop is served (after the server's stopped generation ended)
    again, _ = _reply(engine, "Say hello in one short sentence.", GenerationParams(temperature=0.0, max_tokens=20))
    assert again.status is MessageStatus.DONE, again.error
    evals = llama_server.evals()[before:]
    n_before = sum(1 for t, n in evals if n == 1 and t <= t_stop)
    after_stop = 0
    for t, n in evals:                   # decode steps after Stop, up to the next request's prompt eval
        if t > t_stop:
            if n > 1:
                break
            after_stop += 1
    print(f"\nllama_cpp.server decode steps: {n_before} before Stop, {after_stop} after the disconnect "
          f"(the stopped reply had {stopped.chunks} chunks; the whole reply is {full_tokens} tokens)")
    # The server decodes at most a couple of tokens already in flight, not the rest of the reply (had Stop not
    # closed the stream, it would have decoded all of it).
    assert after_stop <= 3
    assert n_before + after_stop < full_tokens - 10


@pytest.mark.parametrize("stop_after_ms", [None, 300])
def test_smoke_test_against_llama_cpp_server(llama_server: LlamaServer, tmp_path: Path,
                                             stop_after_ms: int | None) -> None:
    """``python main.py --smoke-test --remote URL``: the real window streams from the server (issue 12's "done
    when": chunks ≥ 20 and a code block; with Stop after 300 ms: stopped, nothing painted after Stop)."""
    import json

    cmd = [sys.executable, "main.py", "--smoke-test", "--remote", llama_server.url]
    if stop_after_ms is not None:
        # the bundled model's reply to the smoke prompt can end within 300 ms on a quiet machine: 30 ms per chunk
        # keeps it streaming when Stop comes, so the test always exercises Stop mid-reply
        cmd += ["--stop-after-ms", str(stop_after_ms), "--slow-ms", "30"]
    env = {**os.environ, "BROOK_CONFIG_DIR": str(tmp_path / "c"), "BROOK_DATA_DIR": str(tmp_path / "d"),
           "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(cmd, cwd=Path(__file__).resolve().parents[3], env=env, capture_output=True, text=True,
                         timeout=280)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print("\n" + json.dumps(result))
    assert result["model"] == "smollm2" and result["chunks_after_stop"] == 0
    if stop_after_ms is None:
        assert result["status"] == "done" and result["chunks"] >= 20 and result["code_blocks"] >= 1
    else:
        assert result["stopped"] is True and result["status"] == "stopped"
