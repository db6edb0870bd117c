"""``python main.py --download REPO_ID[:FILE]``: download a GGUF from the Hub on the command line.

Prints a text progress bar on stderr (percent, MB done of total, speed, time left), then the saved path on
stdout. Exit code 0 only when the file is complete and its SHA-256 matches the Hub's; 1 when the download
failed (the reason on stderr; a broken connection keeps the part, and running the same command again resumes
it); 2 when the repo has several GGUF files and none was named (they are listed, with their sizes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from app.engine.hub.client import HubClient, HubError, pick_default
from app.engine.hub.download import Download, Progress, State
from app.engine.hub.tokens import hub_token

BAR_WIDTH = 30


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"owner/name:file.gguf"`` → ``("owner/name", "file.gguf")``; ``"owner/name"`` → ``(…, None)``.
    Raises ``ValueError`` for a spec that is not ``owner/name``."""
    repo, _, file = spec.partition(":")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise ValueError(f"{spec!r} is not a Hub repo id: write OWNER/NAME or OWNER/NAME:FILE.gguf")
    return repo, file or None


def format_bar(p: Progress) -> str:
    """``[#########---------]  45%  45.2/100.0 MB  12.3 MB/s  5 s left``"""
    filled = int(BAR_WIDTH * p.fraction)
    eta = f"{p.eta_s:,.0f} s left" if p.eta_s is not None else ""
    return (f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {p.fraction * 100:3.0f}%  "
            f"{p.done_bytes / 1e6:,.1f}/{p.total_bytes / 1e6:,.1f} MB  {p.speed_bps / 1e6:,.1f} MB/s  {eta}")


def run_download(spec: str, models_dir: Path, out: TextIO | None = None, err: TextIO | None = None,
                 interval_s: float = 0.25) -> int:
    """Download ``spec`` into ``models_dir``; returns the exit code (see the module's docstring)."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        repo, name = parse_spec(spec)
        client = HubClient(hub_token())
        files = client.files(repo)
        if not files:
            print(f"brook: {repo} has no GGUF files.", file=err)
            return 1
        f = client.file(repo, name) if name else pick_default(files)
        if f is None:
            print(f"brook: {repo} has {len(files)} GGUF files; name one as {repo}:FILE:", file=err)
            for x in files:
                print(f"  {x.path}  ({x.size_bytes / 1e6:,.1f} MB)", file=err)
            return 2
    except (ValueError, HubError) as exc:
        print(f"brook: {exc}", file=err)
        return 1
    d = Download(f, models_dir, client.url(f), client.headers())
    if d.progress().done_bytes:
        print(f"resuming {f.path} at {d.progress().done_bytes / 1e6:,.1f} MB", file=err)
    d.start()
    tty = err.isatty()
    last_line = 0.0
    try:
        while d.running:
            time.sleep(interval_s)
            now = time.monotonic()
            if tty:
                print("\r" + format_bar(d.progress()), end="", file=err, flush=True)
            elif now - last_line >= 2.0:
                print(format_bar(d.progress()), file=err, flush=True)
                last_line = now
    except KeyboardInterrupt:
        d.pause()
        d.wait()
        print(f"\nbrook: paused; run the same command again to resume ({d.part})", file=err)
        return 1
    p = d.wait()
    print(("\r" if tty else "") + format_bar(p), file=err)
    if p.state != State.DONE:
        print(f"brook: {p.error or p.state.value}", file=err)
        return 1
    print(str(d.path), file=out)
    return 0

