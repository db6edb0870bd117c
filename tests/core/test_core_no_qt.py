"""app.core imports without PySide6 or qasync (DESIGN §4): checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import importlib, pkgutil, sys
import app.core
names = sorted(m.name for m in pkgutil.iter_modules(app.core.__path__, "app.core."))
for n in names:
    importlib.import_module(n)
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "qasync", "shiboken6"))
print(len(names), ",".join(bad))
"""


@pytest.mark.timeout(60)
def test_app_core_imports_without_qt() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=True)
    n, bad = out.stdout.strip().split(" ", 1) if " " in out.stdout.strip() else (out.stdout.strip(), "")
    assert int(n) >= 7
    assert bad == "", f"app.core pulled in Qt: {bad}"
