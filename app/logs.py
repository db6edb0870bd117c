"""Logging: one rotating file in the data folder, Brook's own messages only unless ``--debug``.

- ``brook.*`` loggers: INFO (DEBUG with ``--debug``: one timing line per reply);
- every other logger (markdown-it, asyncio, httpx, …): WARNING, so a library's debug trace (markdown-it logs every
  rule it tries: 660 KB for one reply) never reaches the file; with ``--debug`` everything;
- the file ``<data>/logs/brook.log`` rotates at ``MAX_BYTES`` keeping ``BACKUPS`` old files
  (``logging.handlers.RotatingFileHandler``); stderr shows warnings and errors (everything with ``--debug``).
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

#: Size at which the log file is rotated (bytes), and how many rotated files are kept.
MAX_BYTES = 1_000_000
BACKUPS = 2
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_OURS = "brook_handler"


def setup_logging(debug: bool, folder: Path | None = None) -> Path | None:
    """Configure logging for the app (idempotent: a second call replaces the handlers of the first). Returns
    the log file's path, or None when the folder cannot be written (the app goes on, logging to stderr)."""
    from app.core.settings import log_dir

    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(h)
        h.close()
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    logging.getLogger("brook").setLevel(logging.DEBUG if debug else logging.INFO)
    fmt = logging.Formatter(LOG_FORMAT)
    err = logging.StreamHandler(sys.stderr)
    err.setLevel(logging.DEBUG if debug else logging.WARNING)
    handlers: list[logging.Handler] = [err]
    path: Path | None = None
    try:
        path = (folder or log_dir()) / "brook.log"
        handlers.append(logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                                             encoding="utf-8"))
    except OSError:                      # a read-only data folder must not stop the app
        path = None
    for h in handlers:
        h.setFormatter(fmt)
        setattr(h, _OURS, True)
        root.addHandler(h)
    logging.captureWarnings(True)
    return path
