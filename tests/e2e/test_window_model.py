"""End to end on the real bundled model: the window streams, Stop stops, bad models are explained."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.conversation import Message, MessageStatus
from app.engine.llama import LlamaEngine
from app.engine.slow import SlowEngine
from app.smoke import SMOKE_PARAMS, SMOKE_PROMPT
from app.ui.window.main_window import MainWindow
from tests.helpers import run_on as _run

pytestmark = [pytest.mark.model]
ROOT = Path(__file__).resolve().parents[2]


async def _wait_finished(window: MainWindow, reply: Message) -> Message:
    while not reply.status.final or window.session.generating or window.coalescer.tracked(reply):  # painted too
        await asyncio.sleep(0.01)
    return reply


@pytest.fixture
def window(qtbot, qloop, bundled_model):
    w = MainWindow(SlowEngine(LlamaEngine(bundled_model)))    # slow_ms 0: set per test to watch a reply
    qtbot.addWidget(w)
    w.show()
    yield w
    qloop.run_until_complete(w.shutdown())


def test_reply_streams_over_many_ticks_before_it_completes(window, qloop) -> None:
    assert _run(qloop, window.load_model())
    paints: list[tuple[float, int, int]] = []      # (time, chunks painted this tick, chars on screen)

    def on_paint(msg: Message, n: int) -> None:
        paints.append((time.perf_counter(), n, len(window.chat.widgets[-1].view.renderer.text)))

    window.coalescer.painted.connect(on_paint)
    reply = window.send(SMOKE_PROMPT, params=SMOKE_PARAMS)
    assert reply is not None and window.send_button.text() == "Stop"
    _run(qloop, _wait_finished(window, reply))
    assert reply.status is MessageStatus.DONE, reply.error
    assert len(reply.text) > 40
    # streaming is real: many paints, each showing more text than the last, the first long before the end
    assert len(paints) >= 5
    shown = [c for _t, _n, c in paints]
    assert shown == sorted(shown) and shown[0] < shown[-1] == len(reply.text)
    assert paints[-1][0] - paints[0][0] > 0.1
    assert sum(n for _t, n, _c in paints) == reply.chunks
    view = window.chat.widgets[-1].view
    assert view.renderer.code_blocks, "the fenced code block was not rendered as code"
    assert "reverse" in view.toPlainText()
    assert window.send_button.text() == "Send"
    assert reply.metrics["ttft_ms"] > 0 and reply.metrics["decode_tokens_per_s"] > 0
    assert "tok/s" in window.status.rate_label.text() and "–" not in window.status.rate_label.text()


def test_stop_keeps_partial_text_and_next_message_works(window, qloop) -> None:
    assert _run(qloop, window.load_model())
    window.session.engine.slow_ms = 40.0            # a long enough reply to stop in the middle of
    first_paint = asyncio.Event()
    window.coalescer.painted.connect(lambda _m, _n: first_paint.set())
    reply = window.send(SMOKE_PROMPT, params=SMOKE_PARAMS)
    assert reply is not None
    _run(qloop, first_paint.wait())
    _run(qloop, asyncio.sleep(0.3))
    window.stop()
    shown_at_stop = window.chat.widgets[-1].view.renderer.text
    _run(qloop, _wait_finished(window, reply))
    gen = window.session.generation_of(reply)
    assert gen is not None and gen.stream is not None
    _run(qloop, gen.stream.wait_closed())
    assert not gen.stream.alive and gen.stream.join(0), "wait_closed returned before the worker thread ended"
    _run(qloop, asyncio.sleep(0.3))           # late chunks would show up here
    assert reply.status is MessageStatus.STOPPED
    assert reply.text, "the partial reply was lost"
    assert window.chat.widgets[-1].view.renderer.text == shown_at_stop == reply.text
    gen = window.session.generation_of(reply)
    assert gen is not None and gen.chunks_painted_after_stop() == 0
    assert window.chat.widgets[-1].status.text() == "stopped"
    # the model is free at once: a second message streams normally
    window.session.engine.slow_ms = 0.0
    second = window.send("Say hello.", params=SMOKE_PARAMS)
    assert second is not None
    _run(qloop, _wait_finished(window, second))
    assert second.status is MessageStatus.DONE and second.text
    # the stopped partial reply is part of the history the model saw
    assert window.session.conversation.prompt_messages(upto=second)[-2]["content"] == reply.text


@pytest.mark.parametrize(("content", "expected"), [
    (None, "does not exist"),
    (b"this is not a model at all, just text" * 10, "not a GGUF model"),
    (b"GGUF" + b"\x03\x00\x00\x00" + b"\x00" * 40, "could not load the model"),
])
def test_bad_model_file_gives_a_clear_message(qtbot, qloop, tmp_path, content, expected) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    w = MainWindow(LlamaEngine(path))
    qtbot.addWidget(w)
    w.show()
    assert _run(qloop, w.load_model()) is False
    assert expected in (w.session.load_error or "")
    assert w.status.state_label.text() == "model failed to load"
    assert w.send("hello") is None             # explained in the window, nothing crashes
    notices = [lbl.text() for lbl in w.chat.findChildren(type(w.status.state_label), "errorNotice")]
    assert any(expected in t for t in notices)
    assert w.session.conversation.messages == []
    qloop.run_until_complete(w.shutdown())


def _smoke(*args: str) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), "--smoke-test", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=170)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_smoke_test_command(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    out = _smoke("--screenshot", str(shot))
    assert out["chunks"] >= 20 and out["ticks"] >= 5 and out["code_blocks"] >= 1
    assert out["stopped"] is False and out["chunks_after_stop"] == 0
    assert out["ttft_ms"] > 0 and out["tokens_per_s"] > 0
    assert shot.stat().st_size > 10_000


def test_smoke_test_with_stop() -> None:
    out = _smoke("--stop-after-ms", "300")
    assert out["stopped"] is True and out["chunks_after_stop"] == 0
    assert out["reply_chars"] > 0


def test_missing_model_on_the_command_line_exits_with_a_clear_message(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), "--smoke-test", "--model",
                           str(tmp_path / "nope.gguf")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode != 0
    assert "does not exist" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("engine_args", [["--scripted", "--slow-ms", "5000"], ["--slow-ms", "5000"]],
                         ids=["scripted", "model"])
def test_closing_the_window_mid_reply_exits_promptly_and_cleanly(engine_args: list[str]) -> None:
    """One token every 5 s: a process that waited for the rest of the reply would still be running minutes
    later (no wall-clock bound on the exit itself: the machine may be busy)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONASYNCIODEBUG="0")
    proc = subprocess.Popen([sys.executable, "-X", "dev", str(ROOT / "main.py"), "--smoke-test", "--close-after-ms",
                             "200", *engine_args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()               # printed when the window has closed mid-reply
    try:
        rc = proc.wait(timeout=120)             # the rest of the reply would take ≥ 5 minutes
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    err = proc.stderr.read() if proc.stderr else ""
    out = json.loads(line)
    assert out["closed"] is True and out["stopped"] is True and out["chunks_after_stop"] == 0
    assert out["reply_chars"] < 200             # it was closed after a token or two
    assert rc == 0, err
    for bad in ("Task was destroyed but it is pending", "Event loop is closed", "Traceback", "never awaited"):
        assert bad not in err, err


def test_switching_models_keeps_a_working_model_when_the_new_file_is_bad(window, qloop, tmp_path,
                                                                          bundled_model) -> None:
    assert _run(qloop, window.load_model())
    old = window.session.engine
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_text("just text")
    assert _run(qloop, window.session.open_model(str(not_gguf))) is False
    assert window.session.engine is old and old.loaded                # refused before anything was unloaded
    truncated = tmp_path / "broken.gguf"
    truncated.write_bytes(bundled_model.read_bytes()[:1_000_000])
    assert _run(qloop, window.session.open_model(str(truncated))) is False
    assert window.session.engine is old and old.loaded                # the previous model was loaded again
    notices = [lbl.text() for lbl in window.chat.findChildren(type(window.status.state_label), "notice")]
    assert any("Kept" in t for t in notices)
    reply = window.send("Say hi.", params=SMOKE_PARAMS)
    assert reply is not None
    _run(qloop, _wait_finished(window, reply))
    assert reply.status is MessageStatus.DONE and reply.text
    copy = tmp_path / "copy.gguf"
    copy.write_bytes(bundled_model.read_bytes())
    assert _run(qloop, window.session.open_model(str(copy))) is True
    assert not old.loaded and window.session.engine.model_path == copy   # the old model's memory was released
