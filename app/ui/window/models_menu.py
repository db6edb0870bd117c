"""File → Models: the model library, recent models, the bundled model, and unloading the model to free its
memory. ``ModelsMenu.entries()`` is the submenu the window puts in its File menu."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QObject, Qt
from PySide6.QtWidgets import QDialog, QMenu, QMessageBox, QWidget

from app.core.chat.idle import IdleUnloader
from app.core.chat.session import ChatSession, ModelState
from app.core.errors import BrookError
from app.ui.window.menus import Item, Submenu

log = logging.getLogger("brook.ui.models")

if TYPE_CHECKING:
    from app.engine.hub.manager import DownloadManager
    from app.engine.library import ModelInfo
    from app.ui.dialogs.model_hub import ModelHubDialog
    from app.ui.dialogs.model_library import ModelLibraryDialog


class ModelsMenu(QObject):
    """Opening, switching and unloading models.

    Args:
        session: the chat session whose engine is switched (``open_model``) or unloaded.
        idle: the idle unloader, told when the model was unloaded by hand (the next send loads it again).
        parent: the dialogs' parent.
    """

    def __init__(self, session: ChatSession, idle: IdleUnloader, parent: QWidget) -> None:
        super().__init__(parent)
        self.session = session
        self.idle = idle
        self.parent_widget = parent
        self.library: ModelLibraryDialog | None = None
        self.hub: ModelHubDialog | None = None
        self.settings_dialog: QDialog | None = None     # the last Settings of this model dialog (tests)
        self.downloads: DownloadManager | None = None    # made on the first File → Models → Download models…
        self._tasks: set[asyncio.Future[Any]] = set()

    def entries(self) -> Submenu:
        """The Models submenu."""
        return Submenu(self.tr("Models"), [
            Item(self.tr("Model &library…"), self.open_library, "Ctrl+M"),
            Item(self.tr("&Download models (Hugging Face Hub)…"), self.open_hub, "Ctrl+Shift+M"),
            Item(self.tr("Settings of &this model…"), self.edit_model_settings),
            Submenu(self.tr("Recent models"), about_to_show=self.fill_recent, name="recentModels"),
            Item(self.tr("Use the &bundled model"), self.use_bundled),
            Item(self.tr("&Unload the model (free its memory)"), self.unload_now),
        ])

    def choose_model(self) -> None:
        """File → Open model: a GGUF file chosen in a file dialog is loaded (``ChatSession.open_model``)."""
        from PySide6.QtWidgets import QFileDialog

        # (the window's texts: their translations are in its context)
        path, _ = QFileDialog.getOpenFileName(
            self.parent_widget, QCoreApplication.translate("MainWindow", "Open a GGUF model"), "",
            QCoreApplication.translate("MainWindow", "GGUF models (*.gguf);;All files (*)"))
        if path:
            self._keep(self.session.open_model(path))

    def _keep(self, coro: Awaitable[Any]) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def models_folder(self) -> Path:
        """The folder the library lists: the settings' ``models_dir``, else ``app.engine.library``'s default."""
        from app.engine.library import default_models_dir

        custom = self.session.settings.models_dir
        return Path(custom) if custom else default_models_dir()

    def open_library(self) -> ModelLibraryDialog:
        """Show the model library (not modal); choosing a model there loads it."""
        from app.core.settings import data_dir
        from app.engine.library import LibraryCache
        from app.engine.models import bundled_model_path
        from app.ui.dialogs.model_library import ModelLibraryDialog

        try:
            extra = [bundled_model_path()]
        except BrookError:
            extra = []
        current = str(getattr(self.session.engine, "model_path", "")) or None
        dlg = ModelLibraryDialog(self.models_folder(), current=current, extra=extra,
                                 cache=LibraryCache(data_dir() / "model-library.json"), parent=self.parent_widget)
        dlg.load_requested.connect(self.load_model)
        dlg.folder_changed.connect(self._set_models_folder)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        self.library = dlg
        return dlg

    def open_hub(self) -> ModelHubDialog:
        """Show the model browser (not modal): search the Hub, download into the models folder; Open on a finished
        download loads it. Downloads belong to this menu, so they go on when the dialog is closed; the ones a
        previous run left unfinished are listed, paused."""
        from app.engine.hub.client import HubClient
        from app.engine.hub.fit import gpu_memory, system_memory
        from app.engine.hub.manager import DownloadManager
        from app.engine.hub.tokens import hub_token
        from app.ui.dialogs.model_hub import ModelHubDialog
        from app.ui.dialogs.settings import gpu_offload_supported

        folder = self.models_folder()
        if self.downloads is None or self.downloads.models_dir != folder:
            self.downloads = DownloadManager(folder, HubClient(hub_token()))
            self.downloads.restore()
        settings = self.session.settings
        on_gpu = settings.n_gpu_layers != 0 and gpu_offload_supported()
        vram = gpu_memory() if on_gpu else None
        memory, kind = (vram, "VRAM") if vram is not None else (system_memory(), "RAM")
        dlg = ModelHubDialog(self.downloads, n_ctx=settings.n_ctx, memory=memory, memory_kind=kind,
                             parent=self.parent_widget)
        dlg.load_requested.connect(self.load_model)
        dlg.downloaded.connect(self._downloaded)
        dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dlg.show()
        self.hub = dlg
        return dlg

    def _downloaded(self, _path: str) -> None:
        if self.library is not None:
            try:
                self.library.rescan()         # the new file is listed at once
            except RuntimeError:             # the library dialog was closed (deleted)
                self.library = None

    def pause_downloads(self) -> None:
        """Pause every running download (its part is kept; the next start lists it to resume)."""
        if self.downloads is not None:
            self.downloads.pause_all()

    def edit_model_settings(self) -> bool:
        """Settings of this model: the loaded GGUF's own context window, GPU layers, sampling defaults and
        chat-template override. On OK they are saved; a changed context window, GPU layers or template loads the
        model again to apply them. Returns True when saved (False: cancelled, or no model file is in use)."""
        from app.core.model_settings import ModelSettingsStore
        from app.engine.template_preview import gguf_template
        from app.ui.dialogs.model_settings import ModelSettingsDialog
        from app.ui.dialogs.settings import gpu_offload_supported

        path = getattr(self.session.engine, "model_path", None)
        if not path:
            QMessageBox.information(self.parent_widget, self.tr("Settings of this model"),
                                    self.tr("The model in use is not a model file on this computer."))
            return False
        store = ModelSettingsStore()
        own = store.get(path)
        try:
            gguf = gguf_template(path)
        except (OSError, ValueError) as exc:
            log.warning("cannot read the chat template of %s: %s", path, exc)
            gguf = None
        dlg = ModelSettingsDialog(Path(path), own, self.session.settings, gguf, gpu_offload_supported(),
                                  self.parent_widget)
        self.settings_dialog = dlg
        if not dlg.exec():
            return False
        new = dlg.result_settings()
        try:
            store.put(path, new)
        except BrookError as exc:
            QMessageBox.warning(self.parent_widget, self.tr("Settings of this model"), str(exc))
            return False
        if (new.n_ctx, new.n_gpu_layers, new.chat_template) != (own.n_ctx, own.n_gpu_layers, own.chat_template):
            self.load_model(str(path))            # loaded again with its new context window / layers / template
        return True

    def model_info(self) -> ModelInfo | None:
        """The loaded model's header (``app.engine.library.ModelInfo``: layers, heads, size, for the memory
        estimate), from the model library's cache or read now (~0.2 s for the bundled model, once); None for an
        engine without a GGUF file (scripted, remote) or a file that cannot be read."""
        from app.core.settings import data_dir
        from app.engine.library import LibraryCache, read_model_info

        path = getattr(self.session.engine, "model_path", None)
        if not path or not Path(path).is_file():
            return None
        cache = LibraryCache(data_dir() / "model-library.json")
        info = cache.get(Path(path))
        if info is None:
            info = read_model_info(path)
            cache.put(Path(path), info)
            cache.save()
        return None if info.broken else info

    def _set_models_folder(self, path: str) -> None:
        self.session.settings.models_dir = path
        self.session.save_settings()

    def load_model(self, path: str) -> asyncio.Future[Any]:
        """Switch to the GGUF at ``path`` in the background (``ChatSession.open_model``). Returns the task."""
        return self._keep(self.session.open_model(path))

    def unload_now(self) -> asyncio.Future[Any] | None:
        """Free the model's memory now (waits for a running reply's worker); the next message loads it again.

        Returns:
            The unloading task, or None when no model is loaded and idle.
        """
        if self.session.model_state is not ModelState.IDLE:
            return None
        self.session.stop_all()
        self.idle.unloaded = True
        return self._keep(self.session.unload())

    def use_bundled(self) -> None:
        """Switch to the model that ships with Brook (a warning when it is missing)."""
        from app.engine.models import bundled_model_path

        try:
            self.load_model(str(bundled_model_path()))
        except BrookError as exc:
            QMessageBox.warning(self.parent_widget, self.tr("Bundled model"), str(exc))

    def fill_recent(self, menu: QMenu) -> None:
        """Recent models that still exist, newest first (a disabled "(none yet)" when there are none)."""
        menu.clear()
        recent = [p for p in self.session.settings.recent_models if Path(p).is_file()]
        if not recent:
            a = menu.addAction(self.tr("(none yet)"))
            a.setEnabled(False)
        for p in recent:
            a = menu.addAction(Path(p).name)
            a.setToolTip(p)
            a.triggered.connect(lambda _c=False, path=p: self.load_model(path))
