"""``app.crash``: start-up errors and crashes reach the log, stderr and (when wanted) a dialog naming the log."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from app import crash


def _close_dialog_later(seen: list[QMessageBox]) -> None:
    """Close the modal error dialog as soon as it is up (the test plays the user), remembering what it showed."""
    def poll() -> None:
        boxes = [w for w in QApplication.topLevelWidgets()
                 if isinstance(w, QMessageBox) and w.objectName() == "brookErrorDialog" and w.isVisible()]
        if boxes:
            seen.append(boxes[0])
            boxes[0].button(QMessageBox.StandardButton.Close).click()
        else:
            QTimer.singleShot(10, poll)
    QTimer.singleShot(0, poll)


def test_dialogs_only_when_frozen_and_not_a_smoke_test(monkeypatch):
    monkeypatch.delenv("BROOK_ERROR_DIALOGS", raising=False)
    assert not crash.dialogs_wanted([])
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert crash.dialogs_wanted([])
    assert not crash.dialogs_wanted(["--smoke-test"])
    monkeypatch.setenv("BROOK_ERROR_DIALOGS", "0")
    assert not crash.dialogs_wanted([])


def test_startup_error_goes_to_stderr_the_log_and_a_dialog(qapp, monkeypatch, capsys):
    monkeypatch.setenv("BROOK_ERROR_DIALOGS", "1")
    seen: list[QMessageBox] = []
    _close_dialog_later(seen)
    assert crash.report_startup_error("The bundled model is missing.", []) == crash.EXIT_STARTUP
    assert "brook: The bundled model is missing." in capsys.readouterr().err
    assert seen, "no dialog was shown"
    assert seen[0].text() == "The bundled model is missing."
    assert str(crash.log_path()) in seen[0].informativeText()
    log = crash.log_path().read_text(encoding="utf-8")
    assert "start-up error: The bundled model is missing." in log and "error dialog shown" in log


def test_crash_in_main_is_logged_with_its_traceback_and_shown(qapp, monkeypatch):
    monkeypatch.setenv("BROOK_ERROR_DIALOGS", "1")

    def broken_main(argv):
        raise RuntimeError("boom in start-up")
    seen: list[QMessageBox] = []
    _close_dialog_later(seen)
    assert crash.guarded_main(broken_main, []) == crash.EXIT_CRASH
    assert seen and "boom in start-up" in seen[0].text()
    assert "broken_main" in seen[0].detailedText()
    log = crash.log_path().read_text(encoding="utf-8")
    assert "Brook crashed:" in log and 'raise RuntimeError("boom in start-up")' in log


def test_a_missing_system_library_is_a_message_not_a_traceback(monkeypatch, capsys):
    """The tarball on a bare system: Qt's import fails in the dynamic loader (the text is PySide6's, from a
    Debian without libgl1); a real ``dlopen`` failure of a library of no known package is a message too."""
    monkeypatch.setenv("BROOK_ERROR_DIALOGS", "0")

    def no_libgl(argv):
        try:
            raise ImportError("libGL.so.1: cannot open shared object file: No such file or directory")
        except ImportError as exc:          # as the launcher sees it: raised while importing the window
            raise RuntimeError("the window could not be imported") from exc
    assert crash.guarded_main(no_libgl, []) == crash.EXIT_STARTUP
    err = capsys.readouterr().err
    assert "system library libGL.so.1" in err and "sudo apt install libgl1" in err
    assert "Traceback" not in err

    def real_loader_error(argv):
        import ctypes

        ctypes.CDLL("libbrook-test-absent.so.3")
    assert crash.guarded_main(real_loader_error, []) == crash.EXIT_STARTUP
    err = capsys.readouterr().err
    assert "system library libbrook-test-absent.so.3" in err and "apt install" not in err
    assert "Traceback" not in err


def test_other_import_errors_still_crash_with_their_traceback(monkeypatch, capsys):
    monkeypatch.setenv("BROOK_ERROR_DIALOGS", "0")

    def broken(argv):
        import app.no_such_module  # noqa: F401
    assert crash.guarded_main(broken, []) == crash.EXIT_CRASH
    assert "Traceback" in capsys.readouterr().err


def test_uncaught_exception_shows_one_non_modal_dialog(qapp, monkeypatch):
    monkeypatch.setenv("BROOK_ERROR_DIALOGS", "1")
    crash.report_uncaught("Traceback (most recent call last):\nValueError: first")
    crash.report_uncaught("Traceback (most recent call last):\nValueError: second")
    boxes = [w for w in QApplication.topLevelWidgets()
             if isinstance(w, QMessageBox) and w.objectName() == "brookErrorDialog" and w.isVisible()]
    try:
        assert len(boxes) == 1 and not boxes[0].isModal()
        assert "ValueError: first" in boxes[0].detailedText()
        assert str(crash.log_path()) in boxes[0].informativeText()
    finally:
        for b in boxes:
            b.close()


def test_uncaught_exception_without_dialogs_shows_nothing(qapp, monkeypatch):
    monkeypatch.setenv("BROOK_ERROR_DIALOGS", "0")
    crash.report_uncaught("Traceback (most recent call last):\nValueError: x")
    assert not [w for w in QApplication.topLevelWidgets()
                if isinstance(w, QMessageBox) and w.objectName() == "brookErrorDialog" and w.isVisible()]


@pytest.fixture(autouse=True)
def _no_file_handlers_left():
    """``app.crash`` may add a file handler to the root logger; remove it so later tests log nowhere odd."""
    import logging

    before = list(logging.getLogger().handlers)
    yield
    for h in logging.getLogger().handlers[:]:
        if h not in before:
            logging.getLogger().removeHandler(h)
            h.close()
