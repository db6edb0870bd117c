"""The model library dialog: every GGUF in the models folder, described from its header, scanned in the background.

Thin: ``app.engine.library.scan_models`` reads the headers in a worker thread (results arrive through a queued
signal, one row at a time, so a folder of large models fills in as it is read). "Load" (or a double click) emits
``load_requested(path)``; the window loads it. Broken files are listed with the reason and cannot be loaded.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.text import QT_TRANSLATE_NOOP, format_bytes
from app.engine.library import LibraryCache, ModelInfo, gguf_files, scan_models


class _Relay(QObject):
    """Carries scan results from the worker thread to the dialog (queued connection)."""

    found = Signal(object)
    finished = Signal(int)


def size_label(n: int) -> str:
    """Decimal units, as everywhere in Brook (``app.core.text.format_bytes``)."""
    return format_bytes(n)


class ModelLibraryDialog(QDialog):
    """Lists ``folder``'s models. ``extra`` models (e.g. the bundled one) are listed first. Signals:
    ``load_requested(str)``, ``folder_changed(str)``."""

    load_requested = Signal(str)
    folder_changed = Signal(str)

    COLUMNS = (
        QT_TRANSLATE_NOOP("ModelLibraryDialog", "Model"),
        QT_TRANSLATE_NOOP("ModelLibraryDialog", "Architecture"),
        QT_TRANSLATE_NOOP("ModelLibraryDialog", "Parameters"),
        QT_TRANSLATE_NOOP("ModelLibraryDialog", "Quantization"),
        QT_TRANSLATE_NOOP("ModelLibraryDialog", "Context"),
        QT_TRANSLATE_NOOP("ModelLibraryDialog", "Size"),
        QT_TRANSLATE_NOOP("ModelLibraryDialog", "Chat template"),
        QT_TRANSLATE_NOOP("ModelLibraryDialog", "Status"),
    )

    def __init__(self, folder: Path, *, current: str | None = None, extra: list[Path] | None = None,
                 cache: LibraryCache | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Model library"))
        self.setObjectName("modelLibrary")
        self.resize(900, 420)
        self.folder = folder
        self.current = current
        self.extra = list(extra or [])
        self.cache = cache
        self.models: list[ModelInfo] = []
        self._generation = 0
        self._relay = _Relay(self)
        self._relay.found.connect(self._add)
        self._relay.finished.connect(self._done)
        self.scanning: threading.Thread | None = None

        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.folder_label = QLabel()
        self.folder_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        change = QPushButton(self.tr("Change folder…"))
        change.clicked.connect(self._choose_folder)
        show = QPushButton(self.tr("Show in file manager"))
        show.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.folder))))
        self.rescan_button = QPushButton(self.tr("Rescan"))
        self.rescan_button.clicked.connect(self.rescan)
        top.addWidget(self.folder_label, 1)
        for b in (change, show, self.rescan_button):
            top.addWidget(b)
        lay.addLayout(top)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setObjectName("modelTable")
        self.table.setAccessibleName(self.tr("Models"))
        self.table.setHorizontalHeaderLabels([self.tr(c) for c in self.COLUMNS])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(7, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(True)
        self.table.itemDoubleClicked.connect(lambda _i: self._load_selected())
        self.table.itemSelectionChanged.connect(self._selection_changed)
        lay.addWidget(self.table, 1)
        self.status = QLabel("")
        lay.addWidget(self.status)
        buttons = QDialogButtonBox()
        self.load_button = buttons.addButton(self.tr("Load"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.load_button.setEnabled(False)
        self.load_button.clicked.connect(self._load_selected)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.clicked.connect(self.reject)
        lay.addWidget(buttons)
        self.rescan()

    # scanning ------------------------------------------------------------------------------------------
    def rescan(self) -> None:
        """Clear the list and scan the folder again in a worker thread."""
        self._generation += 1
        gen = self._generation
        self.models = []
        self.table.setRowCount(0)
        self.folder_label.setText(self.tr("Folder: %1").replace("%1", str(self.folder)))
        self.status.setText(self.tr("Reading model headers…"))
        self.rescan_button.setEnabled(False)
        relay, folder, extra, cache = self._relay, self.folder, list(self.extra), self.cache
        shown: set[str] = set()
        if cache is not None:         # what the cache knows is listed at once; the thread reads the rest
            for p in [*extra, *gguf_files(folder)]:
                info = cache.get(p)
                if info is not None:
                    self._add((gen, info))
                    shown.add(info.path)

        def work() -> None:
            from app.engine.library import read_model_info

            for p in extra:
                info = (cache.get(p) if cache is not None else None) or read_model_info(p)
                if cache is not None:
                    cache.put(p, info)
                if info.path not in shown:
                    relay.found.emit((gen, info))
            scan_models(folder, cache, lambda info: None if info.path in shown else relay.found.emit((gen, info)))
            relay.finished.emit(gen)

        self.scanning = threading.Thread(target=work, name="model library scan", daemon=True)
        self.scanning.start()

    def _add(self, payload: tuple[int, ModelInfo]) -> None:
        gen, info = payload
        if gen != self._generation:
            return
        self.models.append(info)
        row = self.table.rowCount()
        self.table.insertRow(row)
        yes, no = self.tr("yes"), self.tr("no")
        cells = [info.file_name, info.architecture or "–", info.parameters_label,
                 info.quantization or "–", f"{info.context_length:,}" if info.context_length else "–",
                 size_label(info.size_bytes), yes if info.has_chat_template else no,
                 self.tr("broken: %1").replace("%1", info.broken) if info.broken else
                 (self.tr("loaded") if info.path == self.current else self.tr("ok"))]
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, info.path)
            item.setToolTip("\n".join(x for x in (info.name, info.path, info.broken) if x))
            if info.broken:
                item.setForeground(Qt.GlobalColor.red)
            self.table.setItem(row, col, item)

    def _done(self, gen: int) -> None:
        if gen != self._generation:
            return
        self.rescan_button.setEnabled(True)
        broken = sum(1 for m in self.models if m.broken)
        text = self.tr("%n model(s)", "", len(self.models))
        if broken:
            text += " · " + self.tr("%n broken", "", broken)
        if not self.models:
            text = self.tr("No GGUF files here yet. Put .gguf models in this folder, then Rescan.")
        self.status.setText(text)

    # actions -------------------------------------------------------------------------------------------
    def selected(self) -> ModelInfo | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.table.item(rows[0].row(), 0)
        path = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return next((m for m in self.models if m.path == path), None)

    def _selection_changed(self) -> None:
        info = self.selected()
        self.load_button.setEnabled(info is not None and info.broken is None)

    def _load_selected(self) -> None:
        info = self.selected()
        if info is None or info.broken:
            return
        self.load_requested.emit(info.path)
        self.accept()

    def _choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, self.tr("Models folder"), str(self.folder))
        if path:
            self.folder = Path(path)
            self.folder_changed.emit(path)
            self.rescan()
