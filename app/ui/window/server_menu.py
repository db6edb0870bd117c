"""The window's "Server" menu: chat with a model on a server (OpenAI-compatible), go back to the local model,
and serve the window's model to other apps (a checkable toggle, ``BrookServer`` on the window's loop).

``ServerMenu(window)`` uses only the window's public face: ``engine`` (the current engine), ``menuBar()``,
``session.switch_engine(engine)`` (a coroutine: stop, unload, load the new engine, keep the old one on failure),
``chat.add_notice(text, kind)`` and ``statusBar()``. API requests share the window's scheduler (the same engine
object), so a window reply and an API request wait in FIFO order.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from app.core.connections import Connections, KeyStore
from app.server.run import DEFAULT_HOST, DEFAULT_PORT, BrookServer, ServerError

log = logging.getLogger("brook.ui.server")


class ServerMenu(QObject):
    """Adds the menu to ``window``. ``serve_action`` is the toggle; ``server`` the running ``BrookServer``."""

    def __init__(self, window: Any, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
        super().__init__(window)
        self.w = window
        self.host, self.port = host, port
        self.keys = KeyStore()
        self.server: BrookServer | None = None
        self._busy: asyncio.Future[Any] | None = None
        bar = window.menuBar()
        menu = self.menu = QMenu(self.tr("&Server"), bar)
        actions = bar.actions()
        if actions:
            bar.insertMenu(actions[-1], menu)          # before Help, which stays last
        else:
            bar.addMenu(menu)
        self.connect_action = QAction(self.tr("Connect to a server…"), window)
        self.connect_action.triggered.connect(self.open_connection_dialog)
        menu.addAction(self.connect_action)
        self.local_action = QAction(self.tr("Use the local model"), window)
        self.local_action.triggered.connect(lambda: self._run(self.use_local()))
        menu.addAction(self.local_action)
        menu.addSeparator()
        self.serve_action = QAction(self.tr("Serve this model to other apps ({0})").format(self.url), window)
        self.serve_action.setCheckable(True)
        self.serve_action.setToolTip(self.tr("An OpenAI-compatible API on this machine only (loopback); other apps "
                                             "and the window take turns with the model."))
        self.serve_action.toggled.connect(self._on_serve_toggled)
        menu.addAction(self.serve_action)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def _run(self, coro: Any) -> asyncio.Future[Any]:
        self._busy = asyncio.ensure_future(coro)
        return self._busy

    # remote ------------------------------------------------------------------------------------------
    def open_connection_dialog(self) -> Any:
        from app.ui.dialogs.connection import ConnectionDialog

        connections = Connections.load()
        dialog = ConnectionDialog(connections, self.keys, self.w)
        dialog.accepted.connect(lambda: self._connect_from(dialog))
        dialog.open()
        return dialog

    def _connect_from(self, dialog: Any) -> None:
        dialog.connections.save()
        self._run(self.connect(dialog.result_connection()))

    async def connect(self, connection: Any) -> bool:
        """Switch the window to a ``RemoteEngine`` for ``connection``; False (old engine kept) on failure. The
        server is asked for its models first, so an unreachable server never costs the loaded model."""
        from app.engine.remote.engine import RemoteEngine, RemoteError, fetch_models

        try:
            await asyncio.get_running_loop().run_in_executor(None, fetch_models, connection)
        except RemoteError as exc:
            self._notice(f"⚠ {exc}")
            return False
        return bool(await self._switch(RemoteEngine(connection)))

    def _notice(self, text: str) -> None:
        self.w.chat.add_notice(text, "errorNotice")

    def _switch(self, engine: Any) -> Any:
        """The chat session's ``switch_engine``: stop, unload, load, or keep the old engine with a notice when
        the new one fails."""
        return self.w.session.switch_engine(engine)

    async def use_local(self) -> bool:
        """Back to the local model (the one in the settings, else the bundled one); the saved connections stay,
        none is active any more."""
        from app.engine.models import bundled_model_path

        conns = Connections.load()
        conns.active = None
        conns.save()
        path = self.w.session.settings.model_path or bundled_model_path()
        return bool(await self.w.session.open_model(str(path)))

    # serve -------------------------------------------------------------------------------------------
    def _on_serve_toggled(self, on: bool) -> None:
        self._run(self.start_serving() if on else self.stop_serving())

    async def start_serving(self) -> bool:
        if self.server is not None:
            return True
        server = BrookServer(lambda: self.w.engine, host=self.host, port=self.port)
        try:
            await server.start()
        except ServerError as exc:
            self._notice(f"⚠ {exc}")
            self.serve_action.blockSignals(True)
            self.serve_action.setChecked(False)
            self.serve_action.blockSignals(False)
            return False
        self.server = server
        self.serve_action.setText(self.tr("Serve this model to other apps ({0})").format(server.url))
        self.w.statusBar().showMessage(self.tr("Serving {0} at {1}").format(self.w.engine.name, server.url), 5000)
        return True

    async def stop_serving(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            await server.stop()
        if self.serve_action.isChecked():
            self.serve_action.blockSignals(True)
            self.serve_action.setChecked(False)
            self.serve_action.blockSignals(False)

    async def shutdown(self) -> None:
        """Closing the window: stop serving (replies in flight stop within one token). Touches no Qt object:
        the window's widgets may already be gone."""
        server, self.server = self.server, None
        if server is not None:
            await server.stop()
