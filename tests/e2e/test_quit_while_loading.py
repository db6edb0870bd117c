"""Quitting while the model loads ends the process at once (issue 10, item 8).

The whole kind: closing the window while a worker thread is still busy in the engine and cannot be interrupted
— a model load (a large GGUF takes seconds to minutes), an uninterruptible prefill — must not wait for it. Here:
the real launcher and window, an engine whose ``load()`` blocks for an hour in its loading thread (the scripted
engine's ``load_s``: what a very slow disk looks like to the app), and the window closed half a second after it
is shown. Before the fix the process lived on until the load ended (the loop's executor joined the loading
thread before the leave-without-finalising escape ran).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER = """
import sys, time
from PySide6.QtCore import QTimer
import app.launcher as launcher
import app.ui.window.main_window as mw
from app.engine.scripted import ScriptedEngine

launcher.make_engine = lambda args, settings: ScriptedEngine(load_s=3600.0)
show = mw.MainWindow.show

def show_then_close(self):
    show(self)
    def close():
        print("closing", self.session.model_state.value, flush=True)
        self.close()
    QTimer.singleShot(500, close)

mw.MainWindow.show = show_then_close
sys.exit(launcher.main([]))
"""


@pytest.mark.timeout(200)
def test_closing_the_window_while_the_model_loads_exits(tmp_path: Path) -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", BROOK_DATA_DIR=str(tmp_path / "data"),
               BROOK_CONFIG_DIR=str(tmp_path / "config"))
    proc = subprocess.Popen([sys.executable, "-c", DRIVER], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    t_closed = time.perf_counter()
    assert line.split() == ["closing", "loading"]          # the load was still running when the window closed
    try:
        rc = proc.wait(timeout=150)                         # the load would take an hour
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the process waited for the model load after the window closed")
    print(f"exit {time.perf_counter() - t_closed:.2f} s after the window closed")
    err = proc.stderr.read() if proc.stderr else ""
    assert rc == 0, err
    assert "Traceback" not in err, err
