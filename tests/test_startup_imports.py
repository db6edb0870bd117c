"""The window is shown before Brook imports its heavy modules (issue 20: window shown ≤ 3× a bare PySide6 window,
``python -m app.bench startup``). The real launcher runs in a new process (``main.py --scripted --smoke-test``);
what ``sys.modules`` holds when the window's first frame has been painted (``MainWindow.finish_start`` runs right
after it) must hold none of these, and the renderer must come after it (the smoke test's reply is rendered)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.timeout(180)

#: Imported only once needed (a render, the inspector, serving, a keyring, a remote server, the Hub, formulas,
#: reading a chat) or on the first idle moment after the window is shown: never before.
HEAVY = ("numpy", "matplotlib", "markdown_it", "mdit_py_plugins", "pygments", "pydantic", "uvicorn", "starlette",
         "httpx", "huggingface_hub", "keyring", "llama_cpp", "app.server.run", "app.server.api",
         "app.core.render.markdown.html", "app.core.render.lexers", "app.core.history.schema",
         "app.ui.messages.chat_view", "app.ui.inspector.panel", "app.core.streaming.timeline", "importlib.metadata",
         "app.ui.dialogs.chat_settings")

_PROBE = """
import json, sys
import app.ui.window.main_window as mw

seen = {}
finish = mw.MainWindow.finish_start

def finish_start(self):
    if "first" not in seen:
        seen["first"] = sorted(sys.modules)
    finish(self)

mw.MainWindow.finish_start = finish_start
from app.launcher import main
code = main(["--scripted", "--smoke-test", "--close-after-ms", "0"])
print(json.dumps({"at_first_paint": seen.get("first"), "at_end": sorted(sys.modules), "code": code}))
"""


def _top(names: list[str]) -> set[str]:
    return {n for n in names for h in HEAVY if n == h or n.startswith(h + ".")}


def test_nothing_heavy_is_imported_before_the_window_is_shown(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "BROOK_DATA_DIR": str(tmp_path / "data"), "BROOK_CONFIG_DIR": str(tmp_path / "config"),
           "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=150)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["code"] == 0 and out["at_first_paint"] is not None, proc.stderr[-3000:]
    assert _top(out["at_first_paint"]) == set()
    # … and they do come afterwards: the reply was rendered (the check sees them when they are there)
    assert {"markdown_it", "pygments", "app.ui.messages.chat_view"} <= set(out["at_end"])
