"""The model browser: search the Hugging Face Hub for GGUF models, see each file's size and whether it fits this
machine, download several at once, open a finished one with one click.

Thin over ``app.engine.hub``: searching and listing run on a worker thread (results come back through a queued
signal; a newer search drops an older one's answer); downloads are the ``DownloadManager``'s, which the window
owns, so they go on when the dialog is closed. While a download runs, a 4 Hz timer redraws the progress rows
(bytes, speed, time left); with none running the timer is off.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.text import QT_TRANSLATE_NOOP, format_bytes
from app.engine.hub.client import HubClient, HubFile, HubModel
from app.engine.hub.download import Download, State
from app.engine.hub.fit import Fit, Memory, fit
from app.engine.hub.manager import DownloadManager
from app.engine.hub.tokens import hub_token, set_hub_token


class _Relay(QObject):
    """Carries a worker thread's answer to the dialog: ``(generation, kind, payload)``."""

    answered = Signal(object)


#: How the fit verdicts read (translated in the ``ModelHubDialog`` context).
FIT_TEXT = {
    Fit.FITS: QT_TRANSLATE_NOOP("ModelHubDialog", "fits"),
    Fit.TIGHT: QT_TRANSLATE_NOOP("ModelHubDialog", "tight: close other programs"),
    Fit.TOO_LARGE: QT_TRANSLATE_NOOP("ModelHubDialog", "too large"),
    Fit.UNKNOWN: QT_TRANSLATE_NOOP("ModelHubDialog", "unknown"),
}
STATE_TEXT = {
    State.QUEUED: QT_TRANSLATE_NOOP("ModelHubDialog", "queued"),
    State.DOWNLOADING: QT_TRANSLATE_NOOP("ModelHubDialog", "downloading"),
    State.PAUSED: QT_TRANSLATE_NOOP("ModelHubDialog", "paused"),
    State.VERIFYING: QT_TRANSLATE_NOOP("ModelHubDialog", "checking SHA-256"),
    State.DONE: QT_TRANSLATE_NOOP("ModelHubDialog", "done, SHA-256 verified"),
    State.FAILED: QT_TRANSLATE_NOOP("ModelHubDialog", "failed"),
    State.CANCELLED: QT_TRANSLATE_NOOP("ModelHubDialog", "cancelled"),
}


class DownloadRow(QWidget):
    """One download: its name, a progress bar, "45 MB of 100 MB · 12 MB/s · 5 s left", Pause/Resume, Cancel and
    (once verified) Open. ``changed``: Pause/Resume/Cancel was pressed."""

    changed = Signal()

    def __init__(self, d: Download, on_open: Callable[[str], None]) -> None:
        super().__init__()
        self.download = d
        self.setObjectName("downloadRow")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 2)
        self.name = QLabel(f"{d.file.repo_id} · {d.file.file_name}")
        self.name.setMinimumWidth(220)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setAccessibleName(self.tr("Download progress"))
        self.detail = QLabel()
        self.detail.setMinimumWidth(260)
        self.detail.setWordWrap(True)
        self.pause_button = QPushButton()
        self.pause_button.clicked.connect(self._pause_or_resume)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.clicked.connect(self._cancel)
        self.open_button = QPushButton(self.tr("Open"))
        self.open_button.setToolTip(self.tr("Load this model now"))
        self.open_button.clicked.connect(lambda: on_open(str(d.path)))
        for w in (self.name, self.bar, self.detail, self.pause_button, self.cancel_button, self.open_button):
            lay.addWidget(w, 1 if w is self.bar else 0)
        self.refresh()

    def duration(self, seconds: float) -> str:
        """``"5 s"``, ``"3 min 05 s"``, ``"1 h 02 min"``."""
        s = int(seconds + 0.5)
        if s < 60:
            return self.tr("%1 s").replace("%1", str(s))
        if s < 3600:
            return self.tr("%1 min %2 s").replace("%1", str(s // 60)).replace("%2", f"{s % 60:02d}")
        return self.tr("%1 h %2 min").replace("%1", str(s // 3600)).replace("%2", f"{s % 3600 // 60:02d}")

    def _pause_or_resume(self) -> None:
        if self.download.running:
            self.download.pause()
        else:
            self.download.start()
        self.refresh()
        self.changed.emit()

    def _cancel(self) -> None:
        self.download.cancel()
        self.refresh()
        self.changed.emit()

    def refresh(self) -> None:
        p = self.download.progress()
        self.bar.setValue(int(p.fraction * 1000))
        parts = [self.tr("%1 of %2").replace("%1", format_bytes(p.done_bytes))
                 .replace("%2", format_bytes(p.total_bytes))]
        if p.state == State.DOWNLOADING:
            if p.speed_bps > 0:
                parts.append(self.tr("%1/s").replace("%1", format_bytes(p.speed_bps)))
            if p.eta_s is not None:
                parts.append(self.tr("%1 left").replace("%1", self.duration(p.eta_s)))
        else:
            parts.append(QCoreApplication.translate("ModelHubDialog", STATE_TEXT[p.state]))
        text = " · ".join(parts)
        if p.error:
            text += "\n" + p.error
        self.detail.setText(text)
        self.detail.setToolTip(p.error or "")
        running = self.download.running
        self.pause_button.setText(self.tr("Pause") if running else self.tr("Resume"))
        self.pause_button.setVisible(p.state not in (State.DONE, State.CANCELLED))
        self.cancel_button.setVisible(p.state not in (State.DONE, State.CANCELLED))
        self.open_button.setVisible(p.state == State.DONE)


class ModelHubDialog(QDialog):
    """Search, pick a file, download. ``manager``: the window's downloads (their rows are shown); ``n_ctx``: the
    context window the fit is judged for; ``memory``: the RAM (or VRAM, when the model runs on a GPU) it is
    judged against, with ``memory_kind`` naming it ("RAM"/"VRAM"). Signals: ``load_requested(str)`` (Open on a
    finished download), ``downloaded(str)`` (a file became complete and verified)."""

    load_requested = Signal(str)
    downloaded = Signal(str)

    FILE_COLUMNS = (
        QT_TRANSLATE_NOOP("ModelHubDialog", "File"),
        QT_TRANSLATE_NOOP("ModelHubDialog", "Quantization"),
        QT_TRANSLATE_NOOP("ModelHubDialog", "Size"),
        QT_TRANSLATE_NOOP("ModelHubDialog", "Memory needed"),
        QT_TRANSLATE_NOOP("ModelHubDialog", "This machine"),
    )

    def __init__(self, manager: DownloadManager, *, n_ctx: int = 4096, memory: Memory | None = None,
                 memory_kind: str = "RAM", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Download models"))
        self.setObjectName("modelHub")
        self.resize(1000, 620)
        self.manager = manager
        self.n_ctx = n_ctx
        self.memory = memory
        self.memory_kind = memory_kind
        self.results: list[HubModel] = []
        self.files: list[HubFile] = []
        self.repo: str | None = None
        self._generation = 0
        self._busy = 0
        self._relay = _Relay(self)
        self._relay.answered.connect(self._answered)
        self._rows: dict[int, DownloadRow] = {}
        self._announced: set[int] = set()
        self._timer = QTimer(self)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._tick)

        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.query = QLineEdit()
        self.query.setPlaceholderText(self.tr("Search the Hugging Face Hub for GGUF models, e.g. qwen2.5 instruct"))
        self.query.setAccessibleName(self.tr("Search models"))
        self.query.returnPressed.connect(self.search)
        self.search_button = QPushButton(self.tr("Search"))
        self.search_button.clicked.connect(self.search)
        top.addWidget(self.query, 1)
        top.addWidget(self.search_button)
        lay.addLayout(top)

        split = QSplitter(Qt.Orientation.Horizontal)
        self.result_list = QListWidget()
        self.result_list.setObjectName("hubResults")
        self.result_list.setAccessibleName(self.tr("Models found"))
        self.result_list.currentItemChanged.connect(lambda cur, _prev: self._choose_repo(cur))
        split.addWidget(self.result_list)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        self.repo_label = QLabel(self.tr("Choose a model on the left to see its files."))
        self.repo_label.setWordWrap(True)
        rl.addWidget(self.repo_label)
        self.file_table = QTableWidget(0, len(self.FILE_COLUMNS))
        self.file_table.setObjectName("hubFiles")
        self.file_table.setAccessibleName(self.tr("Files of the model"))
        self.file_table.setHorizontalHeaderLabels([self.tr(c) for c in self.FILE_COLUMNS])
        self.file_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.file_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.file_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.file_table.verticalHeader().hide()
        header = self.file_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.file_table.itemSelectionChanged.connect(self._file_selected)
        self.file_table.itemDoubleClicked.connect(lambda _i: self.download_selected())
        rl.addWidget(self.file_table, 1)
        self.download_button = QPushButton(self.tr("Download"))
        self.download_button.setEnabled(False)
        self.download_button.clicked.connect(self.download_selected)
        rl.addWidget(self.download_button, 0, Qt.AlignmentFlag.AlignRight)
        split.addWidget(right)
        split.setSizes([330, 670])
        lay.addWidget(split, 1)

        self.status = QLabel("")
        self.status.setObjectName("hubStatus")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)

        self.downloads_label = QLabel(self.tr("Downloads (into %1)").replace("%1", str(manager.models_dir)))
        lay.addWidget(self.downloads_label)
        self.downloads_box = QVBoxLayout()
        lay.addLayout(self.downloads_box)

        tok = QHBoxLayout()
        self.token = QLineEdit()
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText(self.tr("Hub token for gated or private models (optional)"))
        self.token.setAccessibleName(self.tr("Hub token"))
        self.token.setText(hub_token() or "")
        save = QPushButton(self.tr("Save token"))
        save.clicked.connect(self.save_token)
        self.token_where = QLabel("")
        self.token_where.setWordWrap(True)
        tok.addWidget(QLabel(self.tr("Token")))
        tok.addWidget(self.token, 1)
        tok.addWidget(save)
        lay.addLayout(tok)
        lay.addWidget(self.token_where)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.button(QDialogButtonBox.StandardButton.Close).setText(self.tr("Close"))
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        for d in manager.downloads:
            self._add_row(d)
        self._tick()

    # background calls ------------------------------------------------------------------------------------
    def _client(self) -> HubClient:
        client = HubClient(self.token.text().strip() or None)
        self.manager.client = client
        return client

    def _call(self, kind: str, work: Callable[[], Any]) -> None:
        self._generation += 1
        gen, relay = self._generation, self._relay
        self._busy += 1

        def run() -> None:
            try:
                payload: Any = work()
            except Exception as exc:        # HubError: a sentence; anything else: said as it is
                payload = exc
            relay.answered.emit((gen, kind, payload))

        threading.Thread(target=run, name=f"hub {kind}", daemon=True).start()

    def search(self) -> None:
        """Search for the query's text (in the background)."""
        text = self.query.text().strip()
        client = self._client()
        self.status.setText(self.tr("Searching…"))
        self.result_list.clear()
        self._call("search", lambda: client.search(text))

    def show_repo(self, repo_id: str) -> None:
        """List ``repo_id``'s GGUF files (in the background)."""
        client = self._client()
        self.repo = repo_id
        self.files = []
        self.file_table.setRowCount(0)
        self.download_button.setEnabled(False)
        self.repo_label.setText(repo_id)
        self.status.setText(self.tr("Reading the files of %1…").replace("%1", repo_id))
        self._call("files", lambda: client.files(repo_id))

    def _answered(self, answer: tuple[int, str, Any]) -> None:
        gen, kind, payload = answer
        self._busy -= 1
        if gen != self._generation:
            return
        if isinstance(payload, Exception):
            self.status.setText(str(payload))
            return
        if kind == "search":
            self.results = payload
            for m in payload:
                label = f"{m.repo_id}\n   ↓ {m.downloads:,}   ♥ {m.likes:,}"
                if m.gated:
                    label += "   " + self.tr("gated: needs a token")
                item = QListWidgetItem(label)
                item.setData(Qt.ItemDataRole.UserRole, m.repo_id)
                self.result_list.addItem(item)
            self.status.setText(self.tr("%n model(s) found", "", len(payload)) if payload else
                                self.tr("No GGUF models found for this search."))
        elif kind == "files":
            self.files = payload
            self._fill_files()

    def _choose_repo(self, item: QListWidgetItem | None) -> None:
        if item is not None:
            self.show_repo(str(item.data(Qt.ItemDataRole.UserRole)))

    def _fill_files(self) -> None:
        self.file_table.setRowCount(0)
        mem = self.memory
        for f in self.files:
            verdict, need = fit(f.size_bytes, self.n_ctx, mem)
            row = self.file_table.rowCount()
            self.file_table.insertRow(row)
            fit_text = self.tr(FIT_TEXT[verdict])
            if verdict == Fit.TOO_LARGE and mem is not None:
                fit_text = self.tr("too large for %1 of %2").replace("%1", format_bytes(mem.total)) \
                    .replace("%2", self.memory_kind)
            cells = [f.path, f.quantization or "–", format_bytes(f.size_bytes), "≈ " + format_bytes(need), fit_text]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, f.path)
                item.setToolTip(self.tr("SHA-256 %1").replace("%1", f.sha256 or "–"))
                if verdict == Fit.TOO_LARGE:
                    item.setForeground(Qt.GlobalColor.red)
                self.file_table.setItem(row, col, item)
        n = len(self.files)
        self.status.setText(self.tr("%n GGUF file(s); memory for a %1-token context, against this machine's %2",
                                    "", n).replace("%1", f"{self.n_ctx:,}").replace("%2", self.memory_kind)
                            if n else self.tr("This repo has no GGUF files."))

    # downloads --------------------------------------------------------------------------------------------
    def selected_file(self) -> HubFile | None:
        rows = self.file_table.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.file_table.item(rows[0].row(), 0)
        path = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return next((f for f in self.files if f.path == path), None)

    def _file_selected(self) -> None:
        self.download_button.setEnabled(self.selected_file() is not None)

    def download_selected(self) -> Download | None:
        f = self.selected_file()
        if f is None:
            return None
        self._client()
        d = self.manager.add(f)
        self._add_row(d)
        self._tick()
        return d

    def _add_row(self, d: Download) -> DownloadRow:
        row = self._rows.get(id(d))
        if row is None:
            row = DownloadRow(d, self._open)
            row.changed.connect(self._tick)
            self._rows[id(d)] = row
            self.downloads_box.addWidget(row)
            if d.progress().state == State.DONE:
                self._announced.add(id(d))
        return row

    def row_of(self, d: Download) -> DownloadRow:
        return self._rows[id(d)]

    def _open(self, path: str) -> None:
        self.load_requested.emit(path)
        self.accept()

    def _tick(self) -> None:
        for key, row in self._rows.items():
            row.refresh()
            if key not in self._announced and row.download.progress().state == State.DONE:
                self._announced.add(key)
                self.downloaded.emit(str(row.download.path))
        running = any(r.download.running for r in self._rows.values())
        if running and not self._timer.isActive():
            self._timer.start()
        elif not running and self._timer.isActive():
            self._timer.stop()

    def save_token(self) -> None:
        """Keep the token field's text in the keyring (empty: forget it)."""
        where = set_hub_token(self.token.text())
        self._client()
        self.token_where.setText(where.replace("API keys are", "The token is"))

    @property
    def busy(self) -> bool:
        """A search or listing is on its way."""
        return self._busy > 0

