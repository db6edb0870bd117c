"""The model browser against the fake Hub: search, files with sizes and fit, download with progress, pause and
resume, a wrong hash shown as failed, a gated repo explained until a token is saved, Open loads the file."""

from __future__ import annotations

import pytest

from app.engine.hub.download import State
from app.engine.hub.fit import Memory
from app.engine.hub.manager import DownloadManager
from app.ui.dialogs.model_hub import ModelHubDialog
from tests.helpers.fake_hub import BAD_HASH, GATED, TINY, TOKEN

WAIT = 60_000
BIG = Memory(16 * 10**9, 8 * 10**9)


@pytest.fixture
def dialog(qtbot, fake_hub, tmp_path):
    def make(memory: Memory | None = BIG) -> ModelHubDialog:
        dlg = ModelHubDialog(DownloadManager(tmp_path / "models"), n_ctx=4096, memory=memory)
        qtbot.addWidget(dlg)
        dlg.show()
        return dlg
    yield make


def _search(qtbot, dlg: ModelHubDialog, text: str) -> None:
    dlg.query.setText(text)
    dlg.search_button.click()
    qtbot.waitUntil(lambda: not dlg.busy, timeout=WAIT)


def _open_repo(qtbot, dlg: ModelHubDialog, repo: str) -> None:
    row = next(i for i in range(dlg.result_list.count())
               if dlg.result_list.item(i).text().startswith(repo))
    dlg.result_list.setCurrentRow(row)
    qtbot.waitUntil(lambda: not dlg.busy, timeout=WAIT)


def _cells(dlg: ModelHubDialog) -> list[list[str]]:
    t = dlg.file_table
    return [[t.item(r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())]


def test_search_and_files_with_size_and_fit(qtbot, dialog):
    dlg = dialog()
    _search(qtbot, dlg, "brook-test")
    assert [dlg.result_list.item(i).text().split("\n")[0] for i in range(dlg.result_list.count())] == \
        [TINY, GATED, BAD_HASH]
    assert "gated" in dlg.result_list.item(1).text()
    _open_repo(qtbot, dlg, TINY)
    assert [row[:3] for row in _cells(dlg)] == [["tiny-Q4_K_M.gguf", "Q4_K_M", "3.1 MB"],
                                                 ["tiny-Q8_0.gguf", "Q8_0", "5.2 MB"]]
    assert [row[4] for row in _cells(dlg)] == ["fits", "fits"]
    assert _cells(dlg)[0][3].startswith("≈ ")


def test_a_file_too_large_for_this_machine_says_so(qtbot, dialog):
    dlg = dialog(Memory(total=106 * 10**6, available=50 * 10**6))   # needs: 104.4 MB (Q4_K_M), 106.8 MB (Q8_0)
    _search(qtbot, dlg, "tiny")
    _open_repo(qtbot, dlg, TINY)
    assert [row[4] for row in _cells(dlg)] == ["tight: close other programs", "too large for 106 MB of RAM"]


def test_download_progress_pause_resume_and_open(qtbot, dialog, fake_hub):
    dlg = dialog()
    _search(qtbot, dlg, "tiny")
    _open_repo(qtbot, dlg, TINY)
    dlg.file_table.selectRow(1)
    fake_hub.throttle_bps = 2_000_000
    d = dlg.download_selected()
    row = dlg.row_of(d)
    qtbot.waitUntil(lambda: "/s" in row.detail.text() and "left" in row.detail.text(), timeout=WAIT)
    assert " of 5.2 MB" in row.detail.text()
    assert row.pause_button.text() == "Pause" and not row.open_button.isVisible()
    row.pause_button.click()
    qtbot.waitUntil(lambda: d.progress().state == State.PAUSED, timeout=WAIT)
    qtbot.waitUntil(lambda: "paused" in row.detail.text(), timeout=WAIT)
    assert row.pause_button.text() == "Resume" and 0 < row.bar.value() < 1000
    fake_hub.throttle_bps = None
    with qtbot.waitSignal(dlg.downloaded, timeout=WAIT) as done:
        row.pause_button.click()
    assert done.args == [str(d.path)]
    qtbot.waitUntil(lambda: row.open_button.isVisible(), timeout=WAIT)
    assert "SHA-256 verified" in row.detail.text() and row.bar.value() == 1000
    assert fake_hub.ranges("tiny-Q8_0")[1].startswith("bytes=")          # resumed, not started over
    with qtbot.waitSignal(dlg.load_requested) as load:
        row.open_button.click()
    assert load.args == [str(d.path)]


def test_wrong_hash_shows_failed_and_leaves_no_file(qtbot, dialog, tmp_path):
    dlg = dialog()
    _search(qtbot, dlg, "badhash")
    _open_repo(qtbot, dlg, BAD_HASH)
    dlg.file_table.selectRow(0)
    d = dlg.download_selected()
    row = dlg.row_of(d)
    qtbot.waitUntil(lambda: "failed" in row.detail.text(), timeout=WAIT)
    assert "SHA-256" in row.detail.text() and not row.open_button.isVisible()
    assert list((tmp_path / "models").rglob("*.gguf")) == []


def test_gated_repo_explained_until_a_token_is_saved(qtbot, dialog):
    dlg = dialog()
    _search(qtbot, dlg, "gated")
    _open_repo(qtbot, dlg, GATED)
    assert "401" in dlg.status.text() and "token" in dlg.status.text()
    assert dlg.file_table.rowCount() == 0
    dlg.token.setText(TOKEN)
    dlg.save_token()
    assert "session only" in dlg.token_where.text()        # no keyring in the tests: said, not hidden
    dlg.show_repo(GATED)
    qtbot.waitUntil(lambda: not dlg.busy, timeout=WAIT)
    assert [row[0] for row in _cells(dlg)] == ["gated-Q4_0.gguf"]
    again = ModelHubDialog(DownloadManager(dlg.manager.models_dir))
    qtbot.addWidget(again)
    assert again.token.text() == TOKEN                      # the saved token is filled in next time
