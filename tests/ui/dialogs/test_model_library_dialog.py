"""The model library dialog scans a real folder in the background; broken files are shown broken, not loadable."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.ui.dialogs.model_library import ModelLibraryDialog

gguf = pytest.importorskip("gguf")


def test_lists_good_and_broken_models_and_loads_the_chosen_one(qtbot, tmp_path: Path) -> None:
    from tests.engine.test_library import write_gguf

    write_gguf(tmp_path / "tiny.gguf")
    (tmp_path / "broken.gguf").write_bytes((tmp_path / "tiny.gguf").read_bytes()[:300])
    dlg = ModelLibraryDialog(tmp_path)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitUntil(lambda: dlg.rescan_button.isEnabled())
    assert dlg.table.rowCount() == 2
    rows = {dlg.table.item(r, 0).text(): [dlg.table.item(r, c).text() for c in range(8)] for r in range(2)}
    assert rows["tiny.gguf"][1:7] == ["llama", "3.1K", "Q8_0", "2,048", rows["tiny.gguf"][5], "yes"]
    assert rows["broken.gguf"][7].startswith("broken: the GGUF header is damaged or truncated")
    assert "1 broken" in dlg.status.text()
    broken_row = next(r for r in range(2) if dlg.table.item(r, 0).text() == "broken.gguf")
    dlg.table.selectRow(broken_row)
    assert not dlg.load_button.isEnabled()
    dlg.table.selectRow(1 - broken_row)
    assert dlg.load_button.isEnabled()
    with qtbot.waitSignal(dlg.load_requested) as sig:
        dlg.load_button.click()
    assert sig.args == [str(tmp_path / "tiny.gguf")]


def test_empty_folder_explains_what_to_do(qtbot, tmp_path: Path) -> None:
    dlg = ModelLibraryDialog(tmp_path)
    qtbot.addWidget(dlg)
    qtbot.waitUntil(lambda: dlg.rescan_button.isEnabled())
    assert "No GGUF files here yet" in dlg.status.text()


def test_cached_models_are_listed_at_once(qtbot, tmp_path: Path) -> None:
    """The table is filled from the cache when the dialog opens, not seconds later when the headers are read."""
    from app.engine.library import LibraryCache, scan_models
    from tests.engine.test_library import write_gguf

    folder = tmp_path / "models"
    folder.mkdir()
    write_gguf(folder / "tiny.gguf")
    cache = LibraryCache(tmp_path / "cache.json")
    scan_models(folder, cache)                 # an earlier visit
    dlg = ModelLibraryDialog(folder, cache=LibraryCache(tmp_path / "cache.json"))
    qtbot.addWidget(dlg)
    assert dlg.table.rowCount() == 1 and dlg.table.item(0, 0).text() == "tiny.gguf"     # before any event
    qtbot.waitUntil(lambda: dlg.rescan_button.isEnabled())
    assert dlg.table.rowCount() == 1                                                     # not listed twice
