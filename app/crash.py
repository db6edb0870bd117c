"""Start-up errors and crashes, made visible: the frozen (double-clicked) app has no terminal, so what would go to
stderr is also written to the log and shown in a dialog.

- ``guarded_main(main, argv)`` is the frozen app's entry point (``packaging/entry.py``): it runs ``main`` (the
  entry passes one that imports and runs ``app.launcher.main``) and turns an exception that escapes it (even an
  ``ImportError`` of a broken bundle) into a log entry with the
  traceback, a line on stderr and, when dialogs are wanted, a modal dialog naming the log file. Exit status 70.
- a system library missing at start-up (``ImportError``/``OSError`` "libGL.so.1: cannot open shared object file",
  typically the tarball on a bare system) is no traceback but ``missing_library_message``: which library, which
  package has it, and the README's list; exit status 2 (``EXIT_STARTUP``).
- ``report_startup_error(message)``: a start-up problem the user can fix (a missing model file): stderr, log,
  and a modal dialog when wanted. Returns the exit status (2).
- ``report_uncaught(text)``: called by the launcher's ``sys.excepthook`` after it logged the traceback; shows a
  non-modal dialog (one at a time) when wanted. The window stays up.

Dialogs are wanted when the app is frozen and not running ``--smoke-test`` (a check run by a script must never
wait for a click); ``BROOK_ERROR_DIALOGS=1``/``0`` overrides that either way. This module imports no Qt; the
dialog itself is ``app.ui.window.error_dialog``.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("brook.crash")

#: Exit status when an exception escapes ``main`` (BSD ``EX_SOFTWARE``).
EXIT_CRASH = 70
#: Exit status of a start-up error the user can fix (the launcher's usage/model errors).
EXIT_STARTUP = 2
LOG_NAME = "brook.log"
#: A shared library the dynamic loader could not find: ``libGL.so.1: cannot open shared object file`` (Linux),
#: ``Library not loaded: …/QtGui`` (macOS); the name of the library is group 1.
MISSING_LIBRARY_RE = re.compile(r"([\w.+-]+\.so(?:\.\d+)*): cannot open shared object file"
                                r"|Library not loaded: (\S+)")
#: Debian/Ubuntu packages of the system libraries the Linux bundle needs (the .deb declares them all).
SYSTEM_LIBRARY_PACKAGES = {
    "libGL.so.1": "libgl1", "libEGL.so.1": "libegl1", "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1", "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0", "libX11-xcb.so.1": "libx11-xcb1", "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0", "libdbus-1.so.3": "libdbus-1-3", "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0", "libX11.so.6": "libx11-6", "libgomp.so.1": "libgomp1",
}


def is_frozen() -> bool:
    """True inside a PyInstaller bundle (``sys.frozen``)."""
    return bool(getattr(sys, "frozen", False))


def dialogs_wanted(argv: list[str] | None = None) -> bool:
    """Whether errors are shown in a dialog: frozen and not ``--smoke-test``, unless ``BROOK_ERROR_DIALOGS`` says."""
    forced = os.environ.get("BROOK_ERROR_DIALOGS", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    args = sys.argv[1:] if argv is None else argv
    return is_frozen() and "--smoke-test" not in args


def log_path() -> Path:
    """The app's log file (``<data folder>/logs/brook.log``; a temporary folder if that cannot be imported)."""
    try:
        from app.core.settings import log_dir

        return log_dir() / LOG_NAME
    except Exception:  # a broken bundle must still be able to say what broke
        return Path(tempfile.gettempdir()) / f"brook-{LOG_NAME}"


def _ensure_file_logging() -> Path:
    """Make sure the root logger writes to ``log_path()`` (the launcher may not have set logging up yet)."""
    path = log_path()
    root = logging.getLogger()
    for h in root.handlers:
        if isinstance(h, logging.FileHandler) and Path(h.baseFilename) == path.resolve():
            return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        return path
    fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(fh)
    if root.level == logging.NOTSET or root.level > logging.INFO:
        root.setLevel(logging.INFO)
    return path


def _stderr(text: str) -> None:
    if sys.stderr is not None:          # None in a windowed app on Windows
        try:
            print(text, file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass


def report_startup_error(message: str, argv: list[str] | None = None) -> int:
    """Tell the user about a start-up problem (``message``: one or two sentences): stderr, the log, and a modal
    dialog when ``dialogs_wanted(argv)``. Returns ``EXIT_STARTUP``."""
    path = _ensure_file_logging()
    log.error("start-up error: %s", message)
    _stderr(f"brook: {message}")
    if dialogs_wanted(argv):
        _dialog("Brook could not start", message, None, path, wait=True)
    return EXIT_STARTUP


def report_uncaught(text: str) -> None:
    """After the launcher logged an uncaught exception (``text``: its formatted traceback), show a non-modal
    dialog naming the log when dialogs are wanted and a QApplication exists. Never raises."""
    if not dialogs_wanted():
        return
    try:
        from PySide6.QtWidgets import QApplication

        if QApplication.instance() is None:
            return
        _dialog("Brook ran into a problem",
                "Something went wrong. Your chats are saved; you can keep working or restart Brook.",
                text, log_path(), wait=False)
    except Exception:  # the error report must never raise from inside an excepthook
        log.exception("could not show the error dialog")


def guarded_main(main: Callable[[list[str]], int | None], argv: list[str] | None = None) -> int:
    """Run ``main(argv)`` (``argv`` defaults to ``sys.argv[1:]``); an exception that escapes it — an
    ``ImportError`` of a broken bundle included, when ``main`` imports the app — is logged with its traceback,
    printed, and shown in a modal dialog when wanted. Returns main's exit status, or ``EXIT_CRASH`` after a
    crash."""
    args = sys.argv[1:] if argv is None else argv
    try:
        return int(main(args) or 0)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:
        message = missing_library_message(exc)
        if message is None:
            return _crashed(exc, args)
        log.debug("missing system library", exc_info=exc)
        return report_startup_error(message, args)


def missing_library_message(exc: BaseException) -> str | None:
    """A readable message when ``exc`` (or what caused it) says a shared library is missing from the system;
    None for any other error. Names the Debian package where known."""
    seen: BaseException | None = exc
    while seen is not None:
        m = MISSING_LIBRARY_RE.search(str(seen))
        if m:
            lib = m.group(1) or os.path.basename(m.group(2))
            package = SYSTEM_LIBRARY_PACKAGES.get(lib)
            how = f" On Debian or Ubuntu: sudo apt install {package}." if package else ""
            return (f"Brook needs the system library {lib}, which is not installed on this computer.{how} "
                    "README.txt in the Brook download lists every library it needs.")
        seen = seen.__cause__ or seen.__context__
    return None


def _crashed(exc: BaseException, args: list[str]) -> int:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    path = _ensure_file_logging()
    log.critical("Brook crashed:\n%s", text)
    _stderr(text)
    if dialogs_wanted(args):
        _dialog("Brook crashed", f"Brook stopped because of an unexpected error: {exc}", text, path, wait=True)
    return EXIT_CRASH


def _dialog(title: str, message: str, details: str | None, path: Path, *, wait: bool) -> None:
    try:
        from app.ui.window.error_dialog import show_error_dialog

        show_error_dialog(title, message, details=details, log_file=path, wait=wait)
    except Exception:
        log.exception("could not show the error dialog")
