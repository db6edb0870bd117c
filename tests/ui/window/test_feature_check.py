"""app.ui.window.feature_check: PySide6's check of each imported module (does it use PySide6?) answered from the file's
bytes, the same answers as PySide6's own ``inspect.getsource`` search, without it."""

from __future__ import annotations

import inspect
import sys
from typing import Any

import pytest

from app.ui.window import feature_check


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


def test_a_module_imported_afterwards_is_classified_without_reading_it_through_inspect(
        qapp, tmp_path, monkeypatch) -> None:
    feature = _feature()
    assert feature_check.install()
    (tmp_path / "brook_probe_qt.py").write_text("from PySide6.QtCore import QObject\n", encoding="utf-8")
    (tmp_path / "brook_probe_plain.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))

    read: list[str] = []
    real = inspect.getsource

    def getsource(obj: object) -> str:
        read.append(getattr(obj, "__name__", ""))
        return real(obj)  # type: ignore[arg-type]

    monkeypatch.setattr(inspect, "getsource", getsource)
    for name in ("brook_probe_qt", "brook_probe_plain"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        __import__(name)                       # (an import statement: through PySide6's hook; import_module is not)
    monkeypatch.setattr(inspect, "getsource", real)
    assert read == []
    assert feature.pyside_feature_dict["brook_probe_qt"] == 0          # uses PySide6
    assert feature.pyside_feature_dict["brook_probe_plain"] == -1      # does not
