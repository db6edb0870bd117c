"""Brook's remote engine pointed at Brook's own server (a round trip), and ``python main.py --serve`` (issue 12)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from app.core.conversation import Conversation, Message, MessageStatus, Role
from app.core.types import GenerationParams
from app.engine.remote.engine import RemoteAuthError, RemoteConnection, RemoteEngine
from app.server.api import ServerOptions
from tests.helpers.replies import reply_through_pipeline
from tests.server.test_server_api import GatedEngine, ServerThread, scripted

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


def _reply(engine: RemoteEngine, stop_after_chunks: int | None = None) -> Message:
    conv = Conversation(messages=[Message(Role.USER, "hi")])
    return reply_through_pipeline(engine, conv, GenerationParams(), stop_after_chunks)[0]


def test_remote_engine_round_trip_through_brooks_server() -> None:
    local = scripted(script="Héllo 世界 🙂 — **bold** and `code`.\n", byte_chunks=3)
    with ServerThread(local, ServerOptions(api_key="k")) as s:
        with pytest.raises(RemoteAuthError):
            RemoteEngine(RemoteConnection(s.url, api_key="wrong")).load()
        remote = RemoteEngine(RemoteConnection(s.url, api_key="k"))
        remote.load()
        assert remote.name == "brook-test"
        reply = _reply(remote)
    assert reply.status is MessageStatus.DONE, reply.error
    assert reply.text == local.text
    assert remote.last_usage is not None and remote.last_usage["completion_tokens"] > 0


def test_stop_on_the_remote_side_stops_brooks_generation() -> None:
    """Stop in one Brook (remote engine) → its socket closes → the serving Brook sees the disconnect → its
    generation stops where it was (the gated engine was waiting for its third token)."""
    local = GatedEngine()
    with ServerThread(local) as s:
        remote = RemoteEngine(RemoteConnection(s.url))
        remote.load()
        reply = _reply(remote, stop_after_chunks=2)
        assert local.stopped.wait(60)
    assert reply.status is MessageStatus.STOPPED and reply.text == "one two "
    assert local.yielded == 2


def test_headless_serve_command(tmp_path: Path) -> None:
    env = {**os.environ, "BROOK_CONFIG_DIR": str(tmp_path / "c"), "BROOK_DATA_DIR": str(tmp_path / "d")}
    refused = subprocess.run([sys.executable, "main.py", "--serve", "--host", "0.0.0.0", "--scripted"], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "requires an API key" in refused.stderr

    # Ctrl+C: SIGINT; Windows has no SIGINT to send to another process, but Ctrl+Break to its process group
    group = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP} if sys.platform == "win32" else {}
    interrupt = signal.CTRL_BREAK_EVENT if sys.platform == "win32" else signal.SIGINT
    proc = subprocess.Popen([sys.executable, "main.py", "--serve", "--scripted", "--port", "0"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **group)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "Brook serves scripted at http://127.0.0.1:" in line, proc.stderr.read() if proc.stderr else ""
        url = line.split(" at ")[1].split()[0]
        resp = httpx.post(f"{url}/chat/completions", timeout=60,
                          json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3})
        assert resp.status_code == 200 and resp.json()["usage"]["completion_tokens"] == 3
        proc.send_signal(interrupt)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
