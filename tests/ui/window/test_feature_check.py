"""app.ui.window.feature_check: PySide6's check of each imported module (does it use PySide6?) answered from the file's
bytes, the same answers as PySide6's own ``inspect.getsource`` search, without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.ui.window import feature_check

ROOT = Path(__file__).resolve().parents[3]


def _feature() -> Any:
    return pytest.importorskip("shibokensupport.feature")


def test_the_check_answers_as_pyside6_does_for_every_module_a_window_imports(qapp) -> None:
    import app.ui.window.main_window  # the window's modules, PySide6's and Brook's

    assert feature_check.install()
    original = feature_check.original
    assert original is not None and original is not feature_check.uses_pyside
    modules = [m for m in list(sys.modules.values()) if isinstance(getattr(m, "__file__", None), str)]
    assert len(modules) > 200
    differ = [m.__name__ for m in modules if feature_check.uses_pyside(m) != original(m)]
    assert differ == []
    assert sum(map(feature_check.uses_pyside, modules)) > 20       # both answers occur
    assert not feature_check.uses_pyside(sys.modules["json"]) and feature_check.uses_pyside(app.ui.window.main_window)


#: Run in a fresh process: PySide6's table of imported modules (``pyside_feature_dict``) is process-wide state that
#: the suite's earlier tests share (in one whole-suite CI run a probe imported here never reached it; not reproduced).
PROBE = r"""
import inspect, json, sys
import PySide6.QtCore
from shibokensupport import feature
from app.ui.window import feature_check
assert feature_check.install()
sys.path.insert(0, sys.argv[1])
read = []
real = inspect.getsource
def getsource(obj):
    read.append(getattr(obj, "__name__", ""))
    return real(obj)
inspect.getsource = getsource
for name in ("brook_probe_qt", "brook_probe_plain"):
    __import__(name)                # an import statement's path: through PySide6's hook (import_module is not)
inspect.getsource = real
print(json.dumps({"read": read, "qt": feature.pyside_feature_dict.get("brook_probe_qt"),
                  "plain": feature.pyside_feature_dict.get("brook_probe_plain")}))
"""


def test_a_module_imported_afterwards_is_classified_without_reading_it_through_inspect(tmp_path) -> None:
    pytest.importorskip("shibokensupport.feature")
    (tmp_path / "brook_probe_qt.py").write_text("from PySide6.QtCore import QObject\n", encoding="utf-8")
    (tmp_path / "brook_probe_plain.py").write_text("VALUE = 1\n", encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["read"] == []
    assert out["qt"] == 0            # uses PySide6
    assert out["plain"] == -1        # does not
