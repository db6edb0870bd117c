"""Download a GGUF file from the Hub: resumable (HTTP Range), pausable, cancellable, SHA-256 verified.

``huggingface_hub.hf_hub_download`` resumes a cut download but neither reports progress as it goes, pauses, nor
checks the file against the SHA-256 the Hub lists, so Brook downloads the file itself (httpx, following the
Hub's redirect to its CDN) and uses ``huggingface_hub`` for the URL and the request headers.

One ``Download`` is one file, on a worker thread of its own (several run at once):

- it is written to ``<final name>.part`` beside a ``<final name>.part.json`` (repo, file, revision, URL, size,
  SHA-256), so the model library (``*.gguf``) never sees it, and a later run of Brook finds it and resumes;
- disk space is checked first (the bytes still to come + ``DISK_RESERVE_BYTES``);
- a resumed download hashes the bytes it already has, then asks for the rest (``Range: bytes=N-``); a server
  that answers 200 instead of 206 sends the whole file again, which is taken from the start;
- a connection that breaks mid-file is retried ``retries`` times (each resuming where it broke; waits 0.5, 1,
  2 s…), then the download fails with the part kept: ``start()`` again resumes;
- when the last byte is in, the SHA-256 of the whole file is compared with the Hub's: a mismatch deletes the part
  and fails (the file never appears); a match renames the part to its final name (``os.replace``, atomic).

``progress()`` is a snapshot (thread-safe): state, bytes done / total, speed (bytes/s over the last
``SPEED_WINDOW_S`` seconds) and time left (s).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import httpx

from app.engine.hub.client import HubConnectionError, HubError, HubFile, explain

log = logging.getLogger("brook.hub.download")

#: Bytes left free on the disk beyond the file (so a download never fills a disk to the last byte).
DISK_RESERVE_BYTES = 64 << 20
#: Read size of the body and of re-hashing a part (bytes).
BLOCK_BYTES = 1 << 20
#: Seconds of samples the speed is averaged over.
SPEED_WINDOW_S = 3.0
PART_SUFFIX = ".part"
META_SUFFIX = ".part.json"


class State(StrEnum):
    QUEUED = "queued"
    DOWNLOADING = "downloading"
    PAUSED = "paused"
    VERIFYING = "verifying"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Progress:
    """A download's state: ``done_bytes`` of ``total_bytes``; ``speed_bps`` (bytes/s, 0 before two samples);
    ``eta_s`` (seconds left, None when unknown); ``error``: why it failed (``FAILED``), for a person."""

    state: State
    done_bytes: int
    total_bytes: int
    speed_bps: float = 0.0
    eta_s: float | None = None
    error: str | None = None

    @property
    def fraction(self) -> float:
        return self.done_bytes / self.total_bytes if self.total_bytes else 0.0


class DiskSpaceError(HubError):
    """Not enough free space for the file."""


class HashMismatchError(HubError):
    """The downloaded bytes do not have the SHA-256 the Hub lists."""


def destination(models_dir: Path, f: HubFile) -> Path:
    """Where ``f`` is saved: ``<models_dir>/<owner>/<repo>/<path in the repo>``."""
    return models_dir.joinpath(*f.repo_id.split("/"), *f.path.split("/"))


class _Paused(Exception):
    pass


class _Cancelled(Exception):
    pass


class Download:
    """One file. ``url``: its resolve URL; ``headers``: request headers (user agent, token). ``retries``:
    reconnects after a broken connection before failing. Call ``start()``; ``pause()``, ``cancel()``,
    ``wait()``, ``progress()`` from any thread."""

    def __init__(self, f: HubFile, models_dir: Path, url: str, headers: dict[str, str] | None = None,
                 retries: int = 3) -> None:
        self.file = f
        self.url = url
        self.headers = dict(headers or {})
        self.retries = retries
        self.path = destination(models_dir, f)
        self.part = self.path.with_name(self.path.name + PART_SUFFIX)
        self.meta = self.path.with_name(self.path.name + META_SUFFIX)
        self._lock = threading.Lock()
        self._pause = threading.Event()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._samples: deque[tuple[float, int]] = deque()
        self._state = State.QUEUED
        self._done = self.part.stat().st_size if self.part.is_file() else 0
        self._error: str | None = None
        self.resumed_from: int | None = None    # the byte the last request asked from (Range), for the log/tests
        if self._done:
            self._state = State.PAUSED

    # control ----------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start (or resume) on a worker thread; nothing when it is already running or done."""
        with self._lock:
            if (self._thread is not None and self._thread.is_alive()) or self._state in (State.DONE,
                                                                                           State.CANCELLED):
                return
            self._pause.clear()
            self._cancel.clear()
            self._state, self._error = State.DOWNLOADING, None
            self._samples.clear()
            self._thread = threading.Thread(target=self._run, name=f"download {self.file.file_name}",
                                            daemon=True)
            self._thread.start()

    def pause(self) -> None:
        """Stop after the block in progress, keeping the part (``start()`` resumes)."""
        self._pause.set()
        with self._lock:
            idle = self._thread is None or not self._thread.is_alive()
            if idle and self._state in (State.QUEUED, State.FAILED):
                self._state = State.PAUSED

    def cancel(self) -> None:
        """Stop and delete the part; the download cannot be resumed."""
        self._cancel.set()
        with self._lock:
            running = self._thread is not None and self._thread.is_alive()
            if not running and self._state != State.DONE:
                self._state = State.CANCELLED
                self._remove_part()

    def wait(self, timeout: float | None = None) -> Progress:
        """Block until the worker thread ends (or ``timeout`` seconds); return the progress then."""
        t = self._thread
        if t is not None:
            t.join(timeout)
        return self.progress()

    @property
    def running(self) -> bool:
        t = self._thread
        return t is not None and t.is_alive()

    def progress(self) -> Progress:
        with self._lock:
            speed = 0.0
            if len(self._samples) >= 2:
                (t0, b0), (t1, b1) = self._samples[0], self._samples[-1]
                if t1 > t0:
                    speed = (b1 - b0) / (t1 - t0)
            total = self.file.size_bytes
            eta = (total - self._done) / speed if speed > 0 else None
            return Progress(self._state, self._done, total, speed, eta, self._error)

    # the worker -------------------------------------------------------------------------------------------
    def _set(self, state: State, error: str | None = None) -> None:
        with self._lock:
            self._state, self._error = state, error

    def _advance(self, n: int) -> None:
        now = time.monotonic()
        with self._lock:
            self._done += n
            self._samples.append((now, self._done))
            while len(self._samples) > 2 and now - self._samples[0][0] > SPEED_WINDOW_S:
                self._samples.popleft()

    def _check(self) -> None:
        if self._cancel.is_set():
            raise _Cancelled
        if self._pause.is_set():
            raise _Paused

    def _remove_part(self) -> None:
        for p in (self.part, self.meta):
            with contextlib.suppress(OSError):
                p.unlink(missing_ok=True)

    def _run(self) -> None:
        try:
            self._download()
        except _Paused:
            self._set(State.PAUSED)
        except _Cancelled:
            self._remove_part()
            with self._lock:
                self._done = 0
            self._set(State.CANCELLED)
        except HubError as exc:
            log.warning("download of %s/%s failed: %s", self.file.repo_id, self.file.path, exc)
            self._set(State.FAILED, str(exc))
        except OSError as exc:
            log.warning("download of %s/%s failed", self.file.repo_id, self.file.path, exc_info=True)
            self._set(State.FAILED, f"Writing {self.part} failed ({exc.strerror or exc}).")
        except Exception as exc:     # a bug: keep the part, say so
            log.exception("download of %s/%s failed", self.file.repo_id, self.file.path)
            self._set(State.FAILED, f"The download failed ({type(exc).__name__}: {exc}).")

    def _download(self) -> None:
        f = self.file
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            self._set(State.DONE)
            with self._lock:
                self._done = f.size_bytes
            return
        self.meta.write_text(json.dumps({"url": self.url, **asdict(f)}, indent=1), "utf-8")
        offset = self.part.stat().st_size if self.part.is_file() else 0
        if offset > f.size_bytes:
            self.part.unlink()
            offset = 0
        free = shutil.disk_usage(self.path.parent).free
        need = f.size_bytes - offset
        if free < need + DISK_RESERVE_BYTES:
            raise DiskSpaceError(f"Not enough disk space for {f.file_name}: {need / 1e9:.2f} GB more are needed "
                                 f"and {free / 1e9:.2f} GB are free in {self.path.parent}.")
        hasher = hashlib.sha256()
        if offset:
            with self.part.open("rb") as fh:
                for block in iter(lambda: fh.read(BLOCK_BYTES), b""):
                    self._check()
                    hasher.update(block)
        with self._lock:
            self._done = offset
        attempt = 0
        with httpx.Client(follow_redirects=True, timeout=httpx.Timeout(30.0)) as http:
            while True:
                self._check()
                try:
                    offset, hasher = self._fetch(http, offset, hasher)
                    break
                except httpx.TransportError as exc:
                    offset = self.part.stat().st_size if self.part.is_file() else 0
                    attempt += 1
                    if attempt > self.retries:
                        raise HubConnectionError(
                            f"Downloading {f.file_name}: the connection broke at {offset / 1e6:.1f} of "
                            f"{f.size_bytes / 1e6:.1f} MB ({type(exc).__name__}: {exc}). The part is kept: "
                            "Resume (or the same command again) continues from there.") from exc
                    log.info("download of %s: connection broke at %d bytes (%s); retry %d", f.path, offset,
                             exc, attempt)
                    deadline = time.monotonic() + 0.5 * 2 ** (attempt - 1)
                    while time.monotonic() < deadline:
                        self._check()
                        time.sleep(0.05)
        self._set(State.VERIFYING)
        digest = hasher.hexdigest()
        if f.sha256 and digest != f.sha256.lower():
            self._remove_part()
            with self._lock:
                self._done = 0
            raise HashMismatchError(f"{f.file_name} did not match the Hub's SHA-256 (expected {f.sha256[:12]}…, "
                                    f"got {digest[:12]}…): the download was damaged or changed on the way, and "
                                    "was deleted. Download it again.")
        os.replace(self.part, self.path)
        with contextlib.suppress(OSError):
            self.meta.unlink()
        log.info("downloaded %s/%s (%d bytes, SHA-256 verified)", f.repo_id, f.path, f.size_bytes)
        self._set(State.DONE)

    def _fetch(self, http: httpx.Client, offset: int, hasher: Any) -> tuple[int, Any]:
        """One request for the bytes from ``offset``; returns ``(offset, hasher)`` once the file is complete.
        Raises httpx.TransportError on a broken connection (the part holds what arrived)."""
        f = self.file
        headers = dict(self.headers)
        if offset:
            headers["Range"] = f"bytes={offset}-"
        self.resumed_from = offset
        with http.stream("GET", self.url, headers=headers) as resp:
            if resp.status_code == 416 and offset >= f.size_bytes:
                return offset, hasher
            if resp.status_code >= 400:
                resp.read()
                raise explain(httpx.HTTPStatusError("", request=resp.request, response=resp),
                              f"Downloading {f.file_name}")
            if offset and resp.status_code != 206:      # the server ignored the Range: take it from the start
                log.info("download of %s: the server sent the whole file (HTTP %d); starting over", f.path,
                         resp.status_code)
                offset, hasher = 0, hashlib.sha256()
                with self._lock:
                    self._done = 0
                mode = "wb"
            else:
                mode = "ab" if offset else "wb"
            with self.part.open(mode) as out:
                for block in resp.iter_bytes():       # as received: a cut loses nothing that arrived
                    out.write(block)
                    hasher.update(block)
                    offset += len(block)
                    self._advance(len(block))
                    self._check()
                out.flush()
                os.fsync(out.fileno())
        if offset < f.size_bytes:
            raise httpx.RemoteProtocolError(f"the body ended at {offset} of {f.size_bytes} bytes")
        return offset, hasher


def unfinished(models_dir: Path) -> list[tuple[HubFile, str]]:
    """Downloads a previous run left (``*.part.json`` under ``models_dir``): their file and URL."""
    out: list[tuple[HubFile, str]] = []
    if not models_dir.is_dir():
        return out
    for meta in sorted(models_dir.rglob("*" + META_SUFFIX)):
        try:
            raw = json.loads(meta.read_text("utf-8"))
            url = str(raw.pop("url"))
            out.append((HubFile(**raw), url))
        except (OSError, ValueError, TypeError, KeyError) as exc:
            log.warning("ignoring %s: %s", meta, exc)
    return out
