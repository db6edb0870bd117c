"""app.core never imports PySide6 or qasync: every module of the package, subpackages included,
imported in a fresh interpreter, and every import statement in its source (a lazy import inside a function too)."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.helpers import ROOT

QT = ("PySide6", "qasync", "shiboken6", "PyQt5", "PyQt6")

SCRIPT = f"""
import importlib, pkgutil, sys
import app.core
names = sorted(m.name for m in pkgutil.walk_packages(app.core.__path__, "app.core."))
for n in names:
    importlib.import_module(n)
bad = sorted(m for m in sys.modules if m.split(".")[0] in {QT!r})
print(len(names), ",".join(bad))
"""


def test_app_core_imports_without_qt() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True)
    n, _, bad = out.stdout.strip().partition(" ")
    assert int(n) >= 7
    assert bad == "", f"app.core pulled in Qt: {bad}"


def test_no_qt_import_statement_in_app_core() -> None:
    sources = sorted((ROOT / "app" / "core").rglob("*.py"))
    assert len(sources) >= 7
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n.split(".")[0] in QT for n in names), f"{path.relative_to(ROOT)} imports {names}"


def test_core_tests_are_not_marked_gui(request) -> None:  # type: ignore[no-untyped-def]
    assert request.node.get_closest_marker("gui") is None         # tests/conftest.py marks only Qt tests
