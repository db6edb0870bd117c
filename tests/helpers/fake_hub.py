"""A fake Hugging Face Hub on loopback: the endpoints ``huggingface_hub`` and Brook's downloader use.

A real HTTP server (``http.server.ThreadingHTTPServer`` on ``127.0.0.1``, a port of its own) serving:

- ``GET /api/models?search=…&filter=gguf&limit=N`` — model search (a JSON list, like the Hub's);
- ``GET /api/models/{repo_id}`` — a repo's metadata (``siblings``);
- ``GET /api/models/{repo_id}/tree/{revision}`` — the repo's files with ``size`` and, for LFS files, ``lfs.oid``
  (the SHA-256 the Hub advertises);
- ``HEAD|GET /{repo_id}/resolve/{revision}/{path}`` — a 302 redirect to ``/cdn/{repo_id}/{path}`` (as the Hub
  redirects to its CDN), with ``X-Repo-Commit``, ``ETag`` and ``X-Linked-Size``;
- ``GET /cdn/…`` — the bytes, with ``Range: bytes=N-`` (206 + ``Content-Range``) and 416 past the end.

Errors as the Hub sends them (status + ``X-Error-Code``): 401 ``GatedRepo`` for a repo that needs a token when
none or a wrong one is sent, 404 ``RepoNotFound`` / ``EntryNotFound``, 429 with ``Retry-After``. Faults a test
turns on: ``ignore_range`` (200 and the whole file for a Range request), ``cut(n, times)`` (the next responses of
a file send their full ``Content-Length`` header, then close the connection after n bytes), ``rate_limit``
(the next N requests get 429), ``throttle_bps`` (bytes per second of a file body, so a test can pause
mid-file), and a repo file whose advertised SHA-256 is wrong (``HubFile.sha256``).
Every request is logged in ``requests`` (method, path, ``Range`` header, ``Authorization`` header).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit


@dataclass
class HubFile:
    """One file of a repo: its bytes (``data``) or a file on disk (``source``). ``sha256``: what the Hub
    advertises (default: the real hash; set another to fake a wrong one). ``lfs``: listed as an LFS file."""

    path: str
    data: bytes | None = None
    source: Path | None = None
    sha256: str | None = None
    lfs: bool = True

    def __post_init__(self) -> None:
        if self.sha256 is None:
            h = hashlib.sha256()
            if self.data is not None:
                h.update(self.data)
            else:
                assert self.source is not None
                with self.source.open("rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
            self.sha256 = h.hexdigest()

    @property
    def size(self) -> int:
        return len(self.data) if self.data is not None else self.source.stat().st_size  # type: ignore[union-attr]

    def read(self, start: int, end: int) -> bytes:
        """Bytes ``start`` .. ``end`` (exclusive)."""
        if self.data is not None:
            return self.data[start:end]
        assert self.source is not None
        with self.source.open("rb") as fh:
            fh.seek(start)
            return fh.read(end - start)


@dataclass
class HubRepo:
    """A model repo. ``token``: the token it requires (a gated or private repo), ``None`` = public."""

    repo_id: str
    files: list[HubFile]
    token: str | None = None
    downloads: int = 0
    likes: int = 0
    tags: list[str] = field(default_factory=lambda: ["gguf"])

    def file(self, path: str) -> HubFile | None:
        return next((f for f in self.files if f.path == path), None)


COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    """The server. ``start()`` returns the endpoint (``http://127.0.0.1:PORT``); ``stop()`` ends it. Use as a
    context manager. Faults (``cut_after``, ``rate_limit``, ``throttle_bps``) may be changed while it runs."""

    def __init__(self, repos: list[HubRepo] | None = None) -> None:
        self.repos: dict[str, HubRepo] = {r.repo_id: r for r in repos or []}
        self.requests: list[dict[str, Any]] = []
        self.cut_after: int | None = None      # bytes of a file body sent before the connection is closed
        self.cuts_left = 0                     # how many file responses are cut (then whole again)
        self.rate_limit = 0                    # the next N requests get 429
        self.throttle_bps: float | None = None
        self.ignore_range = False              # answer 200 with the whole file to a Range request
        self.endpoint = ""
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle --------------------------------------------------------------------------------------------
    def start(self) -> str:
        hub = self

        class Handler(_Handler):
            fake = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake hub", daemon=True)
        self._thread.start()
        return self.endpoint

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHub:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # faults -----------------------------------------------------------------------------------------------
    def cut(self, after_bytes: int, times: int = 1) -> None:
        """Close the next ``times`` file responses after ``after_bytes`` bytes of body."""
        with self._lock:
            self.cut_after, self.cuts_left = after_bytes, times

    def _take_cut(self) -> int | None:
        with self._lock:
            if self.cuts_left > 0 and self.cut_after is not None:
                self.cuts_left -= 1
                return self.cut_after
            return None

    def _take_rate_limit(self) -> bool:
        with self._lock:
            if self.rate_limit > 0:
                self.rate_limit -= 1
                return True
            return False

    def ranges(self, path_part: str) -> list[str | None]:
        """The ``Range`` headers of the file requests whose path contains ``path_part``."""
        return [r["range"] for r in self.requests if r["path"].startswith("/cdn/") and path_part in r["path"]]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:   # quiet
        pass

    # plumbing ---------------------------------------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, obj: Any, status: int = 200) -> None:
        self._send(status, json.dumps(obj).encode())

    def _error(self, status: int, code: str | None, message: str) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        if status == 429:
            headers["Retry-After"] = "0"
        self._send(status, json.dumps({"error": message}).encode(), headers)

    def _authorized(self, repo: HubRepo) -> bool:
        return repo.token is None or self.headers.get("Authorization") == f"Bearer {repo.token}"

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        self.fake.requests.append({"method": self.command, "path": path, "range": self.headers.get("Range"),
                                   "authorization": self.headers.get("Authorization")})
        if self.fake._take_rate_limit():
            self._error(429, None, "You have been rate-limited; retry later.")
            return
        query = parse_qs(url.query)
        try:
            if path == "/api/models":
                self._search(query)
            elif path.startswith("/api/models/"):
                self._api_repo(path.removeprefix("/api/models/"))
            elif path.startswith("/cdn/"):
                self._file(path.removeprefix("/cdn/"))
            elif "/resolve/" in path:
                self._resolve(path.lstrip("/"))
            else:
                self._error(404, None, "Not found")
        except (BrokenPipeError, ConnectionResetError):
            pass

    # endpoints --------------------------------------------------------------------------------------------
    def _search(self, query: dict[str, list[str]]) -> None:
        text = (query.get("search") or [""])[0].lower()
        wanted = set(query.get("filter") or [])
        limit = int((query.get("limit") or ["1000"])[0])
        hits = [r for r in self.fake.repos.values()
                if text in r.repo_id.lower() and wanted <= set(r.tags)]
        hits.sort(key=lambda r: -r.downloads)
        self._json([{"id": r.repo_id, "modelId": r.repo_id, "downloads": r.downloads, "likes": r.likes,
                     "tags": r.tags, "gated": "manual" if r.token else False, "private": False,
                     "lastModified": "2026-01-01T00:00:00.000Z"} for r in hits[:limit]])

    def _repo(self, repo_id: str) -> HubRepo | None:
        repo = self.fake.repos.get(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return None
        if not self._authorized(repo):
            self._error(401, "GatedRepo", "Access to this repo is restricted: you must be authenticated.")
            return None
        return repo

    def _api_repo(self, rest: str) -> None:
        if "/tree/" in rest:
            repo_id, _, _rev_path = rest.partition("/tree/")
            repo = self._repo(repo_id)
            if repo is None:
                return
            entries = []
            for f in repo.files:
                entry: dict[str, Any] = {"type": "file", "oid": hashlib.sha1(f.path.encode()).hexdigest(),
                                         "size": f.size, "path": f.path}
                if f.lfs:
                    entry["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": 134}
                entries.append(entry)
            self._json(entries)
            return
        repo = self._repo(rest.split("/revision/")[0])
        if repo is None:
            return
        self._json({"id": repo.repo_id, "modelId": repo.repo_id, "sha": COMMIT, "downloads": repo.downloads,
                    "likes": repo.likes, "tags": repo.tags, "gated": "manual" if repo.token else False,
                    "private": False, "siblings": [{"rfilename": f.path} for f in repo.files]})

    def _find(self, repo_id_and_file: str, marker: str) -> tuple[HubRepo, HubFile] | None:
        repo_id, _, rest = repo_id_and_file.partition(marker)
        repo = self._repo(repo_id)
        if repo is None:
            return None
        file_path = rest.split("/", 1)[1] if marker == "/resolve/" else rest
        f = repo.file(file_path)
        if f is None:
            self._error(404, "EntryNotFound", f"{file_path} does not exist on this revision")
            return None
        return repo, f

    def _resolve(self, rest: str) -> None:
        found = self._find(rest, "/resolve/")
        if found is None:
            return
        repo, f = found
        etag = f'"{f.sha256}"'
        self._send(302, b"", {"Location": f"/cdn/{quote(repo.repo_id)}/-/{quote(f.path)}", "ETag": etag,
                              "X-Repo-Commit": COMMIT, "X-Linked-Size": str(f.size), "X-Linked-Etag": etag})

    def _file(self, rest: str) -> None:
        found = self._find(rest, "/-/")
        if found is None:
            return
        _repo, f = found
        size, start = f.size, 0
        rng = self.headers.get("Range")
        status = 200
        headers = {"Accept-Ranges": "bytes", "ETag": f'"{f.sha256}"'}
        if rng and not self.fake.ignore_range:
            spec = rng.removeprefix("bytes=").split("-")[0]
            start = int(spec)
            if start >= size:
                self._send(416, b"", {"Content-Range": f"bytes */{size}"})
                return
            status = 206
            headers["Content-Range"] = f"bytes {start}-{size - 1}/{size}"
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size - start))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command == "HEAD":
            return
        cut = self.fake._take_cut()
        pos, sent = start, 0
        block = 64 * 1024
        while pos < size:
            n = min(block, size - pos)
            if cut is not None and sent + n > cut:
                n = cut - sent
            if n > 0:
                self.wfile.write(f.read(pos, pos + n))
                pos += n
                sent += n
            if cut is not None and sent >= cut:
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(2)    # the cut: fewer bytes than Content-Length, then EOF
                return
            bps = self.fake.throttle_bps
            if bps:
                time.sleep(n / bps)


#: Repo ids of ``standard_hub``.
TINY = "brook-test/tiny-GGUF"
GATED = "brook-test/gated-GGUF"
BAD_HASH = "brook-test/badhash-GGUF"
SMOL = "brook-test/SmolLM2-135M-Instruct-GGUF"
TOKEN = "hf_brooktesttoken"


def gguf_bytes(n: int, seed: int) -> bytes:
    """``n`` bytes starting with a GGUF magic (not a loadable model: the downloader does not care)."""
    import random

    rnd = random.Random(seed)
    return b"GGUF" + rnd.randbytes(n - 4)


def standard_hub() -> FakeHub:
    """A hub with: ``TINY`` (a 3 MB Q4_K_M, a 5 MB Q8_0, a README), ``GATED`` (needs ``TOKEN``), ``BAD_HASH`` (its
    file's advertised SHA-256 is wrong) and a repo without GGUF files (``add_smol`` adds the real model)."""
    repos = [
        HubRepo(TINY, [HubFile("tiny-Q4_K_M.gguf", gguf_bytes(3 << 20, 1)),
                       HubFile("tiny-Q8_0.gguf", gguf_bytes(5 << 20, 2)),
                       HubFile("README.md", b"# tiny\n", lfs=False)], downloads=500, likes=7),
        HubRepo(GATED, [HubFile("gated-Q4_0.gguf", gguf_bytes(1 << 20, 3))], token=TOKEN, downloads=50),
        HubRepo(BAD_HASH, [HubFile("bad-Q4_0.gguf", gguf_bytes(1 << 20, 4), sha256="0" * 64)], downloads=5),
        HubRepo("someone/not-a-gguf-repo", [HubFile("model.safetensors", b"x" * 100)], tags=["safetensors"]),
    ]
    return FakeHub(repos)


def add_smol(hub: FakeHub, bundled_model: Path) -> HubRepo:
    """Serve the real bundled GGUF as ``SMOL`` (hashed once: ~0.3 s for its ~100 MB)."""
    repo = HubRepo(SMOL, [HubFile("SmolLM2-135M-Instruct-Q4_1.gguf", source=bundled_model)], downloads=9000)
    hub.repos[SMOL] = repo
    return repo
