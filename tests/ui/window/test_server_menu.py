"""The window's Server menu (issue 12): the connection dialog against a real SSE server on loopback, and the
serve toggle running Brook's API on the window's own (qasync) loop, sharing the window's engine."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest
from PySide6.QtWidgets import QLabel

from app.bench.sse_server import SSEServer, models_reply
from app.core.connections import Connections, KeyStore
from app.core.settings import config_dir
from app.engine.scripted import ScriptedEngine
from app.ui.dialogs.connection import ConnectionDialog
from app.ui.window.main_window import MainWindow
from app.ui.window.server_menu import ServerMenu
from tests.helpers import run_on, until


def settle(loop, task) -> None:  # type: ignore[no-untyped-def]
    """Wait for ``task`` to end, whatever its outcome (the dialog shows it)."""
    run_on(loop, asyncio.wait({task}))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connection_dialog_tests_saves_and_keeps_the_key_out_of_files(qtbot, qloop,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BROOK_REMOTE_API_KEY", raising=False)
    keys = KeyStore()
    with SSEServer(lambda req: models_reply("qwen", "llama") if req.path.endswith("/models") else None) as srv:
        dialog = ConnectionDialog(Connections(), keys)
        qtbot.addWidget(dialog)
        dialog.url.setText(f"http://127.0.0.1:{_free_port()}")
        settle(qloop, dialog.test())
        assert "connection refused" in dialog.status.text()
        dialog.url.setText("not a url")
        assert dialog.test() is None and "http://host:port/v1" in dialog.status.text()

        dialog.url.setText(srv.url)
        dialog.key.setText("sk-dialog-secret")
        settle(qloop, dialog.test())
        assert [dialog.model.itemText(i) for i in range(dialog.model.count())] == ["qwen", "llama"]
        assert "offers qwen, llama" in dialog.status.text()
        assert srv.requests[-1].headers["authorization"] == "Bearer sk-dialog-secret"
        dialog.name.setText("box")
        dialog.model.setCurrentText("llama")
        dialog.concurrency.setValue(4)
        dialog.accept()
    conn = dialog.result_connection()
    assert (conn.base_url, conn.model, conn.api_key, conn.max_concurrency) == (srv.url, "llama", "sk-dialog-secret", 4)
    dialog.connections.save()
    saved = Connections.load()
    assert saved.active == "box" and saved.get("box").model == "llama"
    assert keys.get("box") == "sk-dialog-secret"
    assert not [p for p in config_dir().rglob("*") if p.is_file() and b"sk-dialog-secret" in p.read_bytes()]
    assert dialog.key_where.text() == keys.where


def test_serve_toggle_serves_the_windows_engine_on_its_loop(qtbot, qloop) -> None:
    engine = ScriptedEngine(tokens_per_s=0, name="window-model")
    w = MainWindow(engine)
    qtbot.addWidget(w)
    w.show()
    assert run_on(qloop, w.load_model())
    menu = w.server_menu
    menu.port = 0
    try:
        menu.serve_action.setChecked(True)
        run_on(qloop, until(lambda: menu.server is not None and menu.server.running))
        url = menu.server.url

        async def ask() -> httpx.Response:
            async with httpx.AsyncClient(timeout=60) as client:
                return await client.post(f"{url}/chat/completions", json={
                    "model": "window-model", "messages": [{"role": "user", "content": "from another app"}]})

        resp = run_on(qloop, ask())
        assert resp.json()["choices"][0]["message"]["content"] == engine.text
        assert engine.calls[-1] == [{"role": "user", "content": "from another app"}]
        menu.serve_action.setChecked(False)
        run_on(qloop, until(lambda: menu.server is None and menu._busy is not None and menu._busy.done()))
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/models", timeout=30)
        menu.serve_action.setChecked(True)                # serving again; closing the window stops it
        run_on(qloop, until(lambda: menu.server is not None and menu.server.running))
        url = menu.server.url
        run_on(qloop, w.shutdown())
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"{url}/models", timeout=30)
    finally:
        run_on(qloop, w.shutdown())


def test_serve_toggle_explains_a_port_in_use(qtbot, qloop) -> None:
    w = MainWindow(ScriptedEngine(tokens_per_s=0))
    qtbot.addWidget(w)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        menu = ServerMenu(w.session, w, lambda text: w.chat.add_notice(text, "errorNotice"), w.status,
                          port=busy.getsockname()[1])
        menu.serve_action.setChecked(True)
        run_on(qloop, until(lambda: menu._busy is not None and menu._busy.done()))
    assert menu.server is None and not menu.serve_action.isChecked()
    notices = [n.text() for n in w.chat.findChildren(QLabel, "errorNotice")]
    assert any("Is another server using that port" in n for n in notices), notices
    run_on(qloop, w.shutdown())


def test_connect_to_a_server_and_chat_through_it(qtbot, qloop) -> None:
    """Server menu → connect: the window's engine becomes a RemoteEngine and a reply streams from the server;
    a server that refuses keeps the engine the window had, with a notice."""
    pytest.importorskip("app.core.chat.session", reason="the window switches engines through its chat session")
    from app.bench.sse_server import DONE, Reply, delta_event
    from app.core.conversation import MessageStatus
    from app.engine.remote.engine import RemoteConnection, RemoteEngine

    def answer(req):  # type: ignore[no-untyped-def]
        if req.path.endswith("/models"):
            return models_reply("far-model")
        return Reply(steps=[(delta_event("Hello from ") + delta_event("the server.") + delta_event(None, finish="stop")
                             + DONE, 0.0)])

    w = MainWindow(ScriptedEngine(tokens_per_s=0))
    qtbot.addWidget(w)
    w.show()
    assert run_on(qloop, w.load_model())
    menu = ServerMenu(w.session, w, lambda text: w.chat.add_notice(text, "errorNotice"), w.status, port=0)
    try:
        with SSEServer(answer) as srv:
            assert run_on(qloop, menu.connect_to(RemoteConnection(srv.url)))
            assert isinstance(w.session.engine, RemoteEngine) and w.session.engine.name == "far-model"
            reply = w.send("hi")
            run_on(qloop, until(lambda: reply.status.final))
            assert reply.status is MessageStatus.DONE and reply.text == "Hello from the server."
            assert reply.provenance.get("model_file") == srv.url
            before, asked = w.session.engine, len(srv.requests)
            assert not run_on(qloop, menu.connect_to(RemoteConnection(f"http://127.0.0.1:{_free_port()}/v1")))
            assert w.session.engine is before and before.loaded
            assert len(srv.requests) == asked        # the engine in use was never unloaded and reloaded
        notices = [n.text() for n in w.chat.findChildren(QLabel, "errorNotice")]
        assert any("connection refused" in n for n in notices), notices
    finally:
        run_on(qloop, menu.shutdown())
        run_on(qloop, w.shutdown())
