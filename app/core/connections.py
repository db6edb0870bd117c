"""Saved connections to OpenAI-compatible servers, and their API keys in the OS keyring.

Connections (name, base URL, model, max concurrent generations) are kept in ``connections.json`` in the config
folder; API keys never are: they go to the OS keyring through ``keyring`` (macOS Keychain, Windows Credential
Locker, Secret Service / KWallet on Linux), under the service ``Brook`` and the connection's name.

Where no keyring backend exists (a headless Linux box, a minimal container), ``KeyStore`` falls back to keeping
the key in memory for this session only, says so in ``where`` (the settings dialog shows it), and reads
``BROOK_REMOTE_API_KEY`` from the environment at start-up: nothing secret is ever written to a plain file.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.core.settings import config_dir

log = logging.getLogger("brook.connections")

KEYRING_SERVICE = "Brook"
#: Environment variable that supplies a remote server's API key (any connection) without storing it.
API_KEY_ENV = "BROOK_REMOTE_API_KEY"


@dataclass
class SavedConnection:
    """One server: ``base_url`` like ``http://127.0.0.1:8080/v1``; ``model`` ``None`` = the first the server
    lists; ``max_concurrency``: generations at once (1 for llama.cpp-style servers, more for vLLM)."""

    name: str
    base_url: str
    model: str | None = None
    max_concurrency: int = 1


@dataclass
class Connections:
    """The saved connections and which one is in use (``active``: a name, or ``None`` = the local model)."""

    items: list[SavedConnection] = field(default_factory=list)
    active: str | None = None

    def get(self, name: str | None) -> SavedConnection | None:
        return next((c for c in self.items if c.name == name), None)

    def put(self, conn: SavedConnection) -> None:
        """Add ``conn`` or replace the one with its name."""
        self.items = [c for c in self.items if c.name != conn.name] + [conn]

    def remove(self, name: str) -> None:
        self.items = [c for c in self.items if c.name != name]
        if self.active == name:
            self.active = None

    @classmethod
    def load(cls, path: Path | None = None) -> Connections:
        """Read ``connections.json``; never raises (a bad file or entry is logged and left out)."""
        path = path or config_dir() / "connections.json"
        try:
            raw: Any = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            log.warning("connections file %s unreadable (%s); none loaded", path, exc)
            return cls()
        out = cls()
        if not isinstance(raw, dict):
            log.warning("connections file %s is not a JSON object; none loaded", path)
            return out
        for item in raw.get("connections") or []:
            try:
                conn = SavedConnection(name=str(item["name"]), base_url=str(item["base_url"]),
                                       model=item.get("model") if isinstance(item.get("model"), str) else None,
                                       max_concurrency=max(1, int(item.get("max_concurrency", 1))))
            except (KeyError, TypeError, ValueError, AttributeError):
                log.warning("connections file %s: bad entry %r left out", path, item)
                continue
            out.put(conn)
        active = raw.get("active")
        out.active = active if isinstance(active, str) and out.get(active) else None
        return out

    def save(self, path: Path | None = None) -> None:
        """Write atomically (temp file + rename). Holds no API key."""
        path = path or config_dir() / "connections.json"
        tmp = path.with_suffix(".tmp")
        data = {"active": self.active, "connections": [asdict(c) for c in self.items]}
        tmp.write_text(json.dumps(data, indent=2), "utf-8")
        os.replace(tmp, path)


class KeyStore:
    """API keys by connection name: the OS keyring, or (none available) memory for this session.

    ``available``: a real keyring backend answers; ``where``: a sentence for the settings dialog saying where
    keys are kept. ``set`` returns that sentence. ``get`` also falls back to ``env`` (``BROOK_REMOTE_API_KEY``).
    Keyring errors (locked, denied) are logged and fall back to memory; they never raise.
    """

    def __init__(self, env: str = API_KEY_ENV) -> None:
        """``env``: the environment variable ``get`` falls back to (the Hub's token store uses ``HF_TOKEN``).
        The keyring is looked for at the first use, not here (it loads every installed backend: 30-70 ms, which
        the window's start-up does not pay)."""
        self.env = env
        self._memory: dict[str, str] = {}
        self._found = False
        self._found_backend: Any = None

    @property
    def _backend(self) -> Any:
        if not self._found:
            self._found = True
            try:
                import keyring
                import keyring.backends.fail

                backend = keyring.get_keyring()
                if not isinstance(backend, keyring.backends.fail.Keyring) and getattr(backend, "backends", True):
                    self._found_backend = backend  # (a chainer with no backends under it is no keyring either)
            except Exception as exc:   # keyring missing or broken: memory only
                log.warning("no usable keyring: %s", exc)
        return self._found_backend

    @_backend.setter
    def _backend(self, backend: Any) -> None:     # a test's choice (None: memory only), kept over any lookup
        self._found, self._found_backend = True, backend

    @property
    def available(self) -> bool:
        return self._backend is not None

    @property
    def where(self) -> str:
        if self._backend is not None:
            return f"API keys are kept in the system keyring ({type(self._backend).__name__})."
        return ("No system keyring was found, so API keys are kept in memory for this session only and are not "
                f"saved. Set {self.env} to supply one at start-up, or install a keyring (e.g. GNOME Keyring, "
                "KWallet).")

    def set(self, name: str, key: str | None) -> str:
        """Store (or, with ``None``/empty, delete) the key of connection ``name``; returns ``where``."""
        if not key:
            self.delete(name)
            return self.where
        self._memory[name] = key
        if self._backend is not None:
            try:
                self._backend.set_password(KEYRING_SERVICE, name, key)
                self._memory.pop(name, None)
            except Exception as exc:
                log.warning("keyring refused to store the key of %r (%s); kept in memory", name, exc)
        return self.where

    def get(self, name: str) -> str | None:
        if name in self._memory:
            return self._memory[name]
        if self._backend is not None:
            try:
                key = self._backend.get_password(KEYRING_SERVICE, name)
                if key:
                    return str(key)
            except Exception as exc:
                log.warning("keyring could not read the key of %r: %s", name, exc)
        return os.environ.get(self.env) or None

    def delete(self, name: str) -> None:
        self._memory.pop(name, None)
        if self._backend is not None:
            try:
                self._backend.delete_password(KEYRING_SERVICE, name)
            except Exception:       # not there
                pass
