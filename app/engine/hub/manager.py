"""The downloads of one models folder: several at once, each a ``Download`` on its own thread; the ones a
previous run left unfinished (``*.part.json``) are listed again, paused, to resume."""

from __future__ import annotations

from pathlib import Path

from app.engine.hub.client import HubClient, HubFile
from app.engine.hub.download import Download, State, destination, unfinished


class DownloadManager:
    """``models_dir``: where files go. ``client``: builds URLs and headers (its token is sent)."""

    def __init__(self, models_dir: Path, client: HubClient | None = None) -> None:
        self.models_dir = models_dir
        self.client = client or HubClient()
        self.downloads: list[Download] = []

    def add(self, f: HubFile, start: bool = True) -> Download:
        """The download of ``f`` (the one already listed for its destination, if any), started."""
        dest = destination(self.models_dir, f)
        for d in self.downloads:
            if d.path == dest and d.progress().state != State.CANCELLED:
                d.headers = self.client.headers()
                if start:
                    d.start()
                return d
        d = Download(f, self.models_dir, self.client.url(f), self.client.headers())
        self.downloads.append(d)
        if start:
            d.start()
        return d

    def restore(self) -> list[Download]:
        """List the downloads a previous run left (paused, not started); returns the new ones."""
        new = []
        known = {d.path for d in self.downloads}
        for f, url in unfinished(self.models_dir):
            if destination(self.models_dir, f) in known:
                continue
            d = Download(f, self.models_dir, url, self.client.headers())
            self.downloads.append(d)
            new.append(d)
        return new

    @property
    def active(self) -> list[Download]:
        return [d for d in self.downloads if d.running]

    def pause_all(self, timeout_s: float = 2.0) -> None:
        """Pause every running download and wait up to ``timeout_s`` seconds in all for their threads (a stalled
        connection notices the pause only when its read returns; its thread is a daemon and its part stays
        resumable either way)."""
        import time

        running = self.active
        for d in running:
            d.pause()
        end = time.monotonic() + timeout_s
        for d in running:
            d.wait(max(0.0, end - time.monotonic()))
