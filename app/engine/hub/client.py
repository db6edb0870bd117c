"""Search the Hugging Face Hub for GGUF models and list a repo's GGUF files, through ``huggingface_hub``.

``HubClient`` wraps ``huggingface_hub.HfApi`` (its search, ``GET /api/models?search=…&filter=gguf``, and its repo
tree, ``GET /api/models/{repo}/tree/{revision}``, which gives each file's size and, for LFS files, the SHA-256
the Hub advertises). The endpoint is ``HF_ENDPOINT`` read at each call (the client's own convention: a mirror, or
the tests' fake Hub on loopback), default ``https://huggingface.co``. Every failure is raised as a ``HubError``
subclass whose message a person can act on (a 401 says a token is needed and where to get one); the client's own
exception is kept as ``__cause__`` for the log.

Blocking (HTTP): call from a worker thread.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import Any

from app.engine.base import EngineError

log = logging.getLogger("brook.hub")

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Seconds a request may wait for the server (connect and each read).
TIMEOUT_S = 30.0

#: A quantization in a GGUF file name: ``Q4_K_M``, ``IQ2_XS``, ``Q8_0``, ``F16``, ``BF16``, ``TQ1_0``…
_QUANT = re.compile(r"(?i)(?:^|[-_.])((?:I?T?Q\d(?:_[A-Z0-9]+)*)|B?F16|F32)(?=[-_.]|$)")
#: A split GGUF's later part (``model-00002-of-00003.gguf``): only the first part is listed.
_LATER_PART = re.compile(r"-0*([2-9]|\d{2,})-of-\d+\.gguf$", re.IGNORECASE)


class HubError(EngineError):
    """Talking to the Hub failed; the message says why and what to do."""


class HubAuthError(HubError):
    """401/403: the repo is gated or private and needs a (valid) token."""


class HubNotFoundError(HubError):
    """404: no such repo, revision or file."""


class HubRateLimitError(HubError):
    """429: the Hub asks to wait (``retry_after_s``, seconds, when it says)."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class HubConnectionError(HubError):
    """The Hub could not be reached or the connection broke."""


def endpoint() -> str:
    """The Hub's base URL: ``HF_ENDPOINT`` (without a trailing slash), else ``https://huggingface.co``."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


@dataclass(frozen=True, slots=True)
class HubModel:
    """A search hit: ``repo_id`` (``owner/name``), downloads and likes as the Hub counts them, ``gated``."""

    repo_id: str
    downloads: int = 0
    likes: int = 0
    gated: bool = False


@dataclass(frozen=True, slots=True)
class HubFile:
    """A GGUF file of a repo: ``path`` in the repo, ``size_bytes``, ``sha256`` (the LFS hash the Hub advertises;
    None for a non-LFS file), ``quantization`` read from the name (None when the name has none)."""

    repo_id: str
    path: str
    size_bytes: int
    sha256: str | None
    revision: str = "main"

    @property
    def quantization(self) -> str | None:
        return quantization_of(self.path)

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def quantization_of(file_name: str) -> str | None:
    """The quantization named in a GGUF file name (``"Q4_K_M"``), upper-case; None when there is none."""
    stem = file_name.rsplit("/", 1)[-1]
    stem = stem[:-5] if stem.lower().endswith(".gguf") else stem
    found = _QUANT.findall(stem)
    return found[-1].upper() if found else None


def explain(exc: BaseException, what: str) -> HubError:
    """``exc`` (from ``huggingface_hub`` or httpx) as a ``HubError`` with a sentence about ``what`` failed."""
    from huggingface_hub import errors as hf_errors

    if isinstance(exc, HubError):
        return exc
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, hf_errors.GatedRepoError) or status in (401, 403):
        return HubAuthError(f"{what}: the Hub refused access (HTTP {status or 401}). The repo is gated or private: "
                            "accept its terms on the Hub's page, then enter a token (Hub settings → Access "
                            "tokens, read access) in Brook's Hub token field or HF_TOKEN.")
    if isinstance(exc, (hf_errors.RepositoryNotFoundError, hf_errors.RevisionNotFoundError)) or status == 404:
        return HubNotFoundError(f"{what}: not found on the Hub (HTTP 404). Check the repo id (owner/name) and "
                                "the file name.")
    if status == 429:
        retry = getattr(getattr(exc, "response", None), "headers", {}).get("Retry-After")
        try:
            seconds = float(retry) if retry is not None else None
        except ValueError:
            seconds = None
        wait = f" in {seconds:g} s" if seconds else " in a minute"
        return HubRateLimitError(f"{what}: the Hub is limiting requests (HTTP 429); try again{wait}.", seconds)
    if status is not None:
        return HubError(f"{what}: the Hub answered HTTP {status}.")
    return HubConnectionError(f"{what}: the Hub at {endpoint()} could not be reached ({type(exc).__name__}: "
                              f"{exc}). Check the network, or HF_ENDPOINT for a mirror.")


class HubClient:
    """Search and list GGUF models. ``token``: for gated/private repos (None: anonymous, or what
    ``huggingface_hub`` finds itself, e.g. ``HF_TOKEN``)."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token or None

    def _api(self) -> Any:
        from huggingface_hub import HfApi

        return HfApi(endpoint=endpoint(), token=self.token, library_name="brook")

    def search(self, text: str, limit: int = 50) -> list[HubModel]:
        """Model repos tagged ``gguf`` whose name contains ``text``, most downloaded first (at most ``limit``).
        Raises ``HubError``."""
        try:
            found = list(self._api().list_models(search=text.strip() or None, filter="gguf", sort="downloads",
                                                 limit=limit))
        except Exception as exc:
            raise explain(exc, f"Searching the Hub for {text!r}") from exc
        return [HubModel(m.id, int(m.downloads or 0), int(m.likes or 0), bool(m.gated)) for m in found]

    def files(self, repo_id: str, revision: str = "main") -> list[HubFile]:
        """The repo's GGUF files (the first part of a split GGUF only), sorted by size. Raises ``HubError``
        (``HubAuthError`` for a gated repo without a valid token, ``HubNotFoundError``)."""
        from huggingface_hub.hf_api import RepoFile

        try:
            tree = list(self._api().list_repo_tree(repo_id, recursive=True, revision=revision))
        except Exception as exc:
            raise explain(exc, f"Listing the files of {repo_id}") from exc
        out = []
        for entry in tree:
            if not isinstance(entry, RepoFile) or not entry.path.lower().endswith(".gguf"):
                continue
            if _LATER_PART.search(entry.path):
                continue
            sha = entry.lfs.sha256 if entry.lfs is not None else None
            out.append(HubFile(repo_id, entry.path, int(entry.size), sha, revision))
        out.sort(key=lambda f: (f.size_bytes, f.path))
        return out

    def file(self, repo_id: str, path: str, revision: str = "main") -> HubFile:
        """One GGUF file of the repo by its path. Raises ``HubNotFoundError`` when the repo has no such GGUF."""
        for f in self.files(repo_id, revision):
            if f.path == path or f.file_name == path:
                return f
        raise HubNotFoundError(f"{repo_id} has no GGUF file named {path!r}.")

    def url(self, f: HubFile) -> str:
        """The file's resolve URL (``{endpoint}/{repo}/resolve/{revision}/{path}``; the Hub redirects it to its
        CDN)."""
        from huggingface_hub import hf_hub_url

        return str(hf_hub_url(f.repo_id, f.path, revision=f.revision, endpoint=endpoint()))

    def headers(self) -> dict[str, str]:
        """The request headers ``huggingface_hub`` sends (user agent, and the token when there is one)."""
        from huggingface_hub.utils import build_hf_headers

        return dict(build_hf_headers(token=self.token, library_name="brook"))


def pick_default(files: list[HubFile]) -> HubFile | None:
    """The file to download when only a repo is named: the only one, else a Q4_K_M, else the smallest Q4, else
    None (the person must choose)."""
    if len(files) == 1:
        return files[0]
    for q in ("Q4_K_M", "Q4_K_S", "Q4_0"):
        hit = [f for f in files if f.quantization == q]
        if hit:
            return hit[0]
    return None
