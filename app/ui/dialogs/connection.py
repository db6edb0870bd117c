"""Connect to a server: a saved connection's base URL, API key, model and concurrent generations.

The API key goes to the OS keyring (``KeyStore``); the dialog says where it is kept (or that, with no keyring on
this machine, it lasts for this session only). "Test" lists the server's models off the loop and fills the model
box, or shows the error a person can act on (refused, DNS, TLS, key, …).
"""

from __future__ import annotations

import asyncio
import contextlib

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.core.connections import Connections, KeyStore, SavedConnection
from app.engine.remote.engine import RemoteConnection, RemoteError, fetch_models, normalize_base_url


class ConnectionDialog(QDialog):
    """Edit and choose a connection. After ``accept``: ``result_connection()`` is the ``RemoteConnection`` to use
    (key included) and ``connections`` holds the saved list with it active; the key is in ``keys``."""

    def __init__(self, connections: Connections, keys: KeyStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Connect to a server"))
        self.setMinimumWidth(520)
        self.connections = connections
        self.keys = keys
        self._test_task: asyncio.Future[list[str]] | None = None
        outer = QVBoxLayout(self)
        form = QFormLayout()
        outer.addLayout(form)

        self.saved = QComboBox()
        self.saved.addItem(self.tr("New connection"), None)
        for c in connections.items:
            self.saved.addItem(c.name, c.name)
        self.saved.activated.connect(lambda _i: self._fill(self.saved.currentData()))
        form.addRow(self.tr("Saved"), self.saved)
        self.name = QLineEdit()
        self.name.setPlaceholderText(self.tr("e.g. GPU box"))
        form.addRow(self.tr("Name"), self.name)
        self.url = QLineEdit()
        self.url.setPlaceholderText("http://127.0.0.1:8080/v1")
        self.url.setToolTip(self.tr("The API root of an OpenAI-compatible server: llama-server, vLLM, Ollama "
                                    "(http://127.0.0.1:11434/v1), LM Studio, or another Brook."))
        form.addRow(self.tr("Server URL"), self.url)
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText(self.tr("(none)"))
        form.addRow(self.tr("API key"), self.key)
        self.key_where = QLabel(keys.where)
        self.key_where.setWordWrap(True)
        self.key_where.setObjectName("hint")
        form.addRow(self.key_where)          # full width: a sentence, not a field
        model_row = QHBoxLayout()
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setToolTip(self.tr("Leave empty to use the first model the server lists."))
        self.test_button = QPushButton(self.tr("Test"))
        self.test_button.clicked.connect(self.test)
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.test_button)
        form.addRow(self.tr("Model"), model_row)
        self.concurrency = QSpinBox()
        self.concurrency.setRange(1, 256)
        self.concurrency.setToolTip(self.tr("Replies the server generates at once: 1 for llama.cpp-style servers "
                                            "(one slot), more for vLLM. Others wait in line."))
        form.addRow(self.tr("Concurrent replies"), self.concurrency)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        outer.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Connect"))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        outer.addWidget(buttons)
        if connections.active:
            self.saved.setCurrentIndex(max(0, self.saved.findData(connections.active)))
            self._fill(connections.active)

    def _fill(self, name: str | None) -> None:
        c = self.connections.get(name)
        self.name.setText(c.name if c else "")
        self.url.setText(c.base_url if c else "")
        self.key.setText((self.keys.get(c.name) or "") if c else "")
        self.model.setCurrentText(c.model or "" if c else "")
        self.concurrency.setValue(c.max_concurrency if c else 1)

    def _connection(self) -> RemoteConnection:
        """The fields as a connection; raises ``RemoteError`` for a bad URL."""
        return RemoteConnection(normalize_base_url(self.url.text()), self.model.currentText().strip() or None,
                                self.key.text() or None, self.concurrency.value())

    def test(self) -> asyncio.Future[list[str]] | None:
        """List the server's models in a thread; fill the model box or show the error. Returns the task."""
        try:
            conn = self._connection()
        except RemoteError as exc:
            self.status.setText(str(exc))
            return None
        self.status.setText(self.tr("Asking {0} for its models…").format(conn.base_url))
        self.test_button.setEnabled(False)
        loop = asyncio.get_event_loop()
        task = self._test_task = loop.run_in_executor(None, fetch_models, conn)
        task.add_done_callback(self._tested)
        return task

    def _tested(self, task: asyncio.Future[list[str]]) -> None:
        self.test_button.setEnabled(True)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.status.setText(str(exc))
            return
        models = task.result()
        current = self.model.currentText()
        self.model.clear()
        self.model.addItems(models)
        if current:
            self.model.setCurrentText(current)
        self.status.setText(self.tr("Connected: the server offers {0}.").format(", ".join(models) or "no models"))

    def accept(self) -> None:
        try:
            conn = self._connection()
        except RemoteError as exc:
            self.status.setText(str(exc))
            return
        name = self.name.text().strip() or conn.base_url
        saved = SavedConnection(name, conn.base_url, conn.model, conn.max_concurrency)
        self.connections.put(saved)
        self.connections.active = name
        self.key_where.setText(self.keys.set(name, conn.api_key))
        self._result = conn
        super().accept()

    def result_connection(self) -> RemoteConnection:
        return self._result

    def done(self, r: int) -> None:
        if self._test_task is not None:
            with contextlib.suppress(RuntimeError):
                self._test_task.cancel()
        super().done(r)
