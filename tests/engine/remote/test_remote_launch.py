"""Which engine the launcher opens (issue 12): ``--remote URL``, the connection saved as active, or the local
model when ``--model`` is given or nothing is saved."""

from __future__ import annotations

import pytest

from app.core.connections import Connections, KeyStore, SavedConnection
from app.engine.hosted import HostedEngine
from app.engine.remote.engine import RemoteEngine
from app.launcher import build_parser, make_engine


def test_remote_url_saved_connection_and_local(bundled_model, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BROOK_REMOTE_API_KEY", "k1")
    e = make_engine(build_parser().parse_args(["--remote", "http://h:1", "--remote-concurrency", "3"]), None)
    assert isinstance(e, RemoteEngine) and e.base_url == "http://h:1/v1" and e.max_concurrency == 3
    assert e.connection.api_key == "k1"
    monkeypatch.delenv("BROOK_REMOTE_API_KEY")

    assert isinstance(make_engine(build_parser().parse_args([]), None), HostedEngine)   # nothing saved
    conns = Connections([SavedConnection("box", "http://box:8000/v1", "qwen", 8)], active="box")
    conns.save()
    keys = KeyStore()
    keys.set("box", "k2")
    if not keys.available:          # no keyring here: a new session has no key (memory only)
        monkeypatch.setenv("BROOK_REMOTE_API_KEY", "k2")
    e = make_engine(build_parser().parse_args([]), None)
    assert isinstance(e, RemoteEngine) and (e.base_url, e.model, e.max_concurrency) == ("http://box:8000/v1",
                                                                                        "qwen", 8)
    assert e.connection.api_key == "k2"
    assert isinstance(make_engine(build_parser().parse_args(["--model", str(bundled_model)]), None), HostedEngine)
