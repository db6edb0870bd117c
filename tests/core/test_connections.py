"""Saved connections and API keys (issue 12): keys go to the OS keyring, never to a settings file; where no
keyring exists (this headless machine) they stay in memory for the session, and the user is told so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backend
import pytest
from jaraco.classes import properties

from app.core.connections import API_KEY_ENV, Connections, KeyStore, SavedConnection
from app.core.settings import config_dir

SECRET = "sk-brook-test-7f3a9c"


def files_containing(folder: Path, text: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A hand-written keyring backend standing in for the OS one (Secret Service, Keychain, …)."""

    @properties.classproperty
    def priority(cls) -> float:   # never chosen by keyring's discovery: only set by the fixture
        raise RuntimeError("set explicitly by the test")

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture
def os_keyring() -> Iterator[MemoryKeyring]:
    before = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(before)


def test_connections_round_trip_without_keys() -> None:
    conns = Connections()
    conns.put(SavedConnection("gpu box", "http://10.0.0.5:8000/v1", "qwen", 8))
    conns.put(SavedConnection("local", "http://127.0.0.1:8080/v1"))
    conns.active = "gpu box"
    KeyStore().set("gpu box", SECRET)
    conns.save()
    again = Connections.load()
    assert again.get("gpu box") == SavedConnection("gpu box", "http://10.0.0.5:8000/v1", "qwen", 8)
    assert again.active == "gpu box" and [c.name for c in again.items] == ["gpu box", "local"]
    assert files_containing(config_dir(), SECRET) == []


def test_no_keyring_on_this_machine_keeps_the_key_in_memory_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    store = KeyStore()
    if store.available:
        pytest.skip("this machine has a keyring backend")
    where = store.set("gpu box", SECRET)
    assert "memory for this session only" in where and API_KEY_ENV in where
    assert store.get("gpu box") == SECRET
    assert KeyStore().get("gpu box") is None            # not saved anywhere
    assert files_containing(config_dir(), SECRET) == []
    monkeypatch.setenv(API_KEY_ENV, "from-env")
    assert KeyStore().get("gpu box") == "from-env"
    store.set("gpu box", None)
    assert store.get("gpu box") == "from-env"


def test_keys_go_to_the_os_keyring(os_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    store = KeyStore()
    assert store.available and "system keyring" in store.where
    store.set("gpu box", SECRET)
    assert os_keyring.store == {("Brook", "gpu box"): SECRET}
    assert KeyStore().get("gpu box") == SECRET          # a later session reads it back
    Connections(items=[SavedConnection("gpu box", "http://h/v1")]).save()
    assert files_containing(config_dir(), SECRET) == []
    store.set("gpu box", "")
    assert os_keyring.store == {} and KeyStore().get("gpu box") is None


def test_a_broken_connections_file_loses_nothing_else(tmp_path: Path) -> None:
    path = config_dir() / "connections.json"
    path.write_text('{"active": "b", "connections": [{"name": "a"}, {"name": "b", "base_url": "http://h/v1", '
                    '"max_concurrency": "x"}, {"name": "c", "base_url": "http://c/v1", "max_concurrency": 4}]}')
    conns = Connections.load()
    assert [c.name for c in conns.items] == ["c"] and conns.items[0].max_concurrency == 4
    assert conns.active is None
    path.write_text("{nope")
    assert Connections.load().items == []
