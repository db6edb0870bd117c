"""The window's "Server" menu: chat with a model on a server (OpenAI-compatible), go back to the local model,
and serve the window's model to other apps (a checkable toggle, ``BrookServer`` on the window's loop).

``ServerMenu(session, parent, notice, status)`` offers three actions (the window puts them in its Server menu);
it switches engines through ``session.switch_engine`` (stop, unload, load the new engine, keep the old one on
failure). API requests share the session's scheduler (the same engine object), so a window reply and an API
request wait in FIFO order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QStatusBar, QWidget

from app.core.chat.session import ChatSession
from app.core.connections import Connections, KeyStore
from app.engine.base import Engine
from app.server.defaults import DEFAULT_HOST, DEFAULT_PORT

if TYPE_CHECKING:
    from app.engine.remote.engine import RemoteConnection
    from app.server.run import BrookServer
    from app.ui.dialogs.connection import ConnectionDialog

log = logging.getLogger("brook.ui.server")


class ServerMenu(QObject):
    """The Server menu's actions: ``connect_action``, ``local_action`` and ``serve_action`` (the toggle);
    ``server`` is the running ``BrookServer``.

    Args:
        session: the chat session whose engine is switched or served.
        parent: the dialogs' parent and the actions' owner.
        notice: shows an error sentence in the chat ("⚠ …").
        status: where "Serving … at …" is said.
        host, port: where the API listens (port 0: any free port).
    """

    def __init__(self, session: ChatSession, parent: QWidget, notice: Callable[[str], None], status: QStatusBar,
                 *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
        super().__init__(parent)
        self.session = session
        self.parent_widget = parent
        self.notice = notice
        self.status = status
        self.host, self.port = host, port
        self.keys = KeyStore()
        self.server: BrookServer | None = None
        self._busy: asyncio.Future[Any] | None = None
        self.connect_action = QAction(self.tr("Connect to a server…"), parent)
        self.connect_action.triggered.connect(self.open_connection_dialog)
        self.local_action = QAction(self.tr("Use the local model"), parent)
        self.local_action.triggered.connect(lambda: self._run(self.use_local()))
        self.serve_action = QAction(self.tr("Serve this model to other apps ({0})").format(self.url), parent)
        self.serve_action.setCheckable(True)
        self.serve_action.setToolTip(self.tr("An OpenAI-compatible API on this machine only (loopback); other apps "
                                             "and the window take turns with the model."))
        self.serve_action.toggled.connect(self._on_serve_toggled)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def _run(self, coro: Awaitable[Any]) -> asyncio.Future[Any]:
        self._busy = asyncio.ensure_future(coro)
        return self._busy

    # remote ------------------------------------------------------------------------------------------
    def open_connection_dialog(self) -> ConnectionDialog:
        from app.ui.dialogs.connection import ConnectionDialog

        connections = Connections.load()
        dialog = ConnectionDialog(connections, self.keys, self.parent_widget)
        dialog.accepted.connect(lambda: self._connect_from(dialog))
        dialog.open()
        return dialog

    def _connect_from(self, dialog: ConnectionDialog) -> None:
        dialog.connections.save()
        self._run(self.connect_to(dialog.result_connection()))

    async def connect_to(self, connection: RemoteConnection) -> bool:
        """Switch the session to a ``RemoteEngine`` for ``connection``. The server is asked for its models first,
        so an unreachable server never costs the loaded model (a notice says why instead).

        Returns:
            True when the remote engine is in use; False when the old engine was kept.
        """
        from app.engine.remote.engine import RemoteEngine, RemoteError, fetch_models

        try:
            await asyncio.get_running_loop().run_in_executor(None, fetch_models, connection)
        except RemoteError as exc:
            self._notice(f"⚠ {exc}")
            return False
        return bool(await self._switch(RemoteEngine(connection)))

    def _notice(self, text: str) -> None:
        self.notice(text)

    def _switch(self, engine: Engine) -> Awaitable[bool]:
        """The chat session's ``switch_engine``: stop, unload, load, or keep the old engine with a notice when
        the new one fails."""
        return self.session.switch_engine(engine)

    async def use_local(self) -> bool:
        """Back to the local model (the one in the settings, else the bundled one); the saved connections stay,
        none is active any more."""
        from app.engine.models import bundled_model_path

        conns = Connections.load()
        conns.active = None
        conns.save()
        path = self.session.settings.model_path or bundled_model_path()
        return bool(await self.session.open_model(str(path)))

    # serve -------------------------------------------------------------------------------------------
    def _on_serve_toggled(self, on: bool) -> None:
        self._run(self.start_serving() if on else self.stop_serving())

    async def start_serving(self) -> bool:
        if self.server is not None:
            return True
        from app.server.run import BrookServer, ServerError  # uvicorn and the API: only when serving

        server = BrookServer(lambda: self.session.engine, host=self.host, port=self.port)
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
        self.status.showMessage(self.tr("Serving {0} at {1}").format(self.session.engine.name, server.url), 5000)
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
