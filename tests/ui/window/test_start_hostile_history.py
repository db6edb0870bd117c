"""A hostile history never stops the window from opening: the last chat shown holds rows of the wrong type or
range (written by another program, or imported before imports were checked); the next start opens the window
with that chat, its damaged messages marked."""

from __future__ import annotations

import pytest

from app.core.conversation import MessageStatus
from app.core.settings import AppSettings
from app.engine.scripted import ScriptedEngine
from app.ui.window.main_window import MainWindow
from tests.core.history.test_import_hostile import _hostile_rows

pytestmark = pytest.mark.timeout(120)


def test_a_start_restores_a_hostile_last_chat(qtbot, qloop, tmp_path) -> None:
    store, cid = _hostile_rows(tmp_path / "h.sqlite3")
    settings = AppSettings.load()
    settings.last_conversation_id = cid
    w = MainWindow(ScriptedEngine(["Hi"], tokens_per_s=0), settings, store)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    try:
        qtbot.waitUntil(lambda: w.first_painted_at is not None)    # the last chat is restored right after
        assert w.session.conversation.id == cid and w.session.conversation.title == "Hostile"
        assert [m.status for m in w.session.conversation.messages].count(MessageStatus.ERROR) == 3
        assert w.chat.isVisible()
        assert any(x.message.text == "a spell" for x in w.chat.widgets)
    finally:
        qloop.run_until_complete(w.shutdown())


def test_the_launcher_starts_on_a_hostile_last_chat(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The real launcher (``python3 main.py``) on a history whose last chat has hostile rows: the window opens
    and keeps running (before: it exited at every start with a traceback)."""
    import json
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.helpers import ROOT

    data, config = tmp_path / "data", tmp_path / "config"
    data.mkdir()
    config.mkdir()
    store, cid = _hostile_rows(data / "history.sqlite3")
    store.close()
    (config / "settings.json").write_text(json.dumps({"last_conversation_id": cid}), "utf-8")
    env = {**os.environ, "BROOK_DATA_DIR": str(data), "BROOK_CONFIG_DIR": str(config), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen([sys.executable, "main.py", "--scripted", "--debug"], cwd=ROOT, env=env,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        for line in proc.stderr:            # until the last chat's rows were read: the window is restoring it
            lines.append(line)
            if "message 3 is damaged" in line or "unexpected error" in line or "Traceback" in line:
                break
        time.sleep(1.0)                      # the chat is shown right after; an exit would come now
        assert proc.poll() is None, "".join(lines)
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=60)[1]
    text = "".join(lines) + rest
    assert "Traceback" not in text and "unexpected error" not in text
    assert "message 3 is damaged" in text           # the damaged row was read and marked (logged)
