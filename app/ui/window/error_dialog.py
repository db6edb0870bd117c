"""The error dialog of the frozen app (see ``app.crash``): the message, where the log is, the traceback under
"Show Details…", and a button that opens the log's folder."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QMessageBox

log = logging.getLogger("brook.crash")

#: The non-modal dialog shown for an uncaught exception, while it is open (one at a time).
_open: QMessageBox | None = None
_app: QApplication | None = None


def show_error_dialog(title: str, message: str, *, details: str | None = None, log_file: Path,
                      wait: bool = True) -> QMessageBox | None:
    """Show ``message`` and the path ``log_file`` in a critical message box titled ``title``.

    ``wait=True``: modal, returns after the user closed it (creates the QApplication if there is none).
    ``wait=False``: non-modal, returns the box at once; while one is open, later calls show nothing (the log
    has every error) and return ``None``. Logs ``error dialog shown: <title>`` as the box is shown.
    """
    global _open, _app
    if QApplication.instance() is None:
        _app = QApplication(sys.argv[:1])       # kept: the application must outlive the dialog
    if not wait and _open is not None and _open.isVisible():
        return None
    box = QMessageBox(QMessageBox.Icon.Critical, title, message)
    box.setObjectName("brookErrorDialog")
    box.setInformativeText(f"The details were written to the log:\n{log_file}")
    if details:
        box.setDetailedText(details)
    folder = box.addButton("Open log folder", QMessageBox.ButtonRole.ActionRole)
    box.addButton(QMessageBox.StandardButton.Close)
    box.setDefaultButton(QMessageBox.StandardButton.Close)
    if not QApplication.windowIcon().isNull():
        box.setWindowIcon(QApplication.windowIcon())

    def clicked(button: object) -> None:
        if button is folder:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(Path(log_file).parent)))

    box.buttonClicked.connect(clicked)
    if wait:
        log.info("error dialog shown: %s", title)       # logged as exec() shows it: the app now waits for a click
        while True:
            box.exec()
            if box.clickedButton() is not folder:   # "Open log folder" keeps the dialog open
                break
        return box
    box.setModal(False)
    box.show()
    log.info("error dialog shown: %s", title)
    _open = box
    return box
