"""Downloading a GGUF from the fake Hub: Range resume (also after a restart), a cut connection, pause, cancel,
several at once, the SHA-256 check (a wrong hash never leaves a file), the disk-space check, errors explained."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import app.engine.hub.download as dl
from app.engine.hub.client import HubClient
from app.engine.hub.download import Download, State, destination
from app.engine.hub.manager import DownloadManager
from app.engine.library import scan_models
from tests.helpers import wait_for_thread
from tests.helpers.fake_hub import BAD_HASH, GATED, TINY, TOKEN


def _download(f, models: Path, client: HubClient | None = None, **kw) -> Download:
    client = client or HubClient()
    return Download(f, models, client.url(f), client.headers(), **kw)


def test_download_is_verified_and_appears_in_the_library(fake_hub, tmp_path):
    models = tmp_path / "models"
    f = HubClient().file(TINY, "tiny-Q4_K_M.gguf")
    d = _download(f, models)
    d.start()
    p = d.wait()
    assert p.state == State.DONE, p.error
    assert d.path == models / "brook-test" / "tiny-GGUF" / "tiny-Q4_K_M.gguf"
    assert hashlib.sha256(d.path.read_bytes()).hexdigest() == f.sha256
    assert not d.part.exists() and not d.meta.exists()
    assert [m.file_name for m in scan_models(models)] == ["tiny-Q4_K_M.gguf"]
    assert fake_hub.ranges("tiny-Q4_K_M") == [None]           # one request, whole file, via the redirect


def test_wrong_hash_is_refused_and_the_file_never_appears(fake_hub, tmp_path):
    models = tmp_path / "models"
    f = HubClient().file(BAD_HASH, "bad-Q4_0.gguf")
    d = _download(f, models)
    d.start()
    p = d.wait()
    assert p.state == State.FAILED
    assert "SHA-256" in p.error and "deleted" in p.error
    assert not d.path.exists() and not d.part.exists()
    assert list(models.rglob("*.gguf*")) == []


def test_cut_connection_is_resumed_with_range(fake_hub, tmp_path):
    f = HubClient().file(TINY, "tiny-Q8_0.gguf")
    fake_hub.cut(1_000_000, times=2)
    d = _download(f, tmp_path / "models")
    d.start()
    p = d.wait()
    assert p.state == State.DONE, p.error
    assert fake_hub.ranges("tiny-Q8_0") == [None, "bytes=1000000-", "bytes=2000000-"]
    assert hashlib.sha256(d.path.read_bytes()).hexdigest() == f.sha256


def test_persistent_cuts_fail_keep_the_part_and_a_restart_resumes(fake_hub, tmp_path):
    models = tmp_path / "models"
    f = HubClient().file(TINY, "tiny-Q8_0.gguf")
    fake_hub.cut(700_000, times=3)
    d = _download(f, models, retries=2)
    d.start()
    p = d.wait()
    assert p.state == State.FAILED and "connection broke" in p.error
    assert d.part.stat().st_size == 2_100_000 and not d.path.exists()
    # "a restart": a new manager finds the part and its record, paused, and resumes from the last byte
    restored = DownloadManager(models).restore()
    assert [r.file for r in restored] == [f]
    again = restored[0]
    assert again.progress().state == State.PAUSED and again.progress().done_bytes == 2_100_000
    again.start()
    assert again.wait().state == State.DONE
    assert fake_hub.ranges("tiny-Q8_0")[-1] == "bytes=2100000-"
    assert hashlib.sha256(again.path.read_bytes()).hexdigest() == f.sha256


def test_pause_then_resume_continues_from_the_byte_it_had(fake_hub, tmp_path):
    f = HubClient().file(TINY, "tiny-Q8_0.gguf")
    fake_hub.throttle_bps = 4_000_000
    d = _download(f, tmp_path / "models")
    d.start()
    wait_for_thread(lambda: d.progress().done_bytes >= 1 << 20)
    d.pause()
    p = d.wait()
    assert p.state == State.PAUSED and 0 < p.done_bytes < f.size_bytes
    assert d.part.stat().st_size == p.done_bytes
    fake_hub.throttle_bps = None
    d.start()
    assert d.wait().state == State.DONE
    assert fake_hub.ranges("tiny-Q8_0") == [None, f"bytes={p.done_bytes}-"]
    assert hashlib.sha256(d.path.read_bytes()).hexdigest() == f.sha256


def test_progress_has_speed_and_time_left(fake_hub, tmp_path):
    f = HubClient().file(TINY, "tiny-Q8_0.gguf")
    fake_hub.throttle_bps = 2_000_000
    d = _download(f, tmp_path / "models")
    d.start()
    wait_for_thread(lambda: d.progress().done_bytes >= 2 << 20)
    p = d.progress()
    d.cancel()
    d.wait()
    assert p.state == State.DOWNLOADING and p.speed_bps > 0
    assert p.eta_s is not None and p.eta_s == pytest.approx((p.total_bytes - p.done_bytes) / p.speed_bps)


def test_cancel_deletes_the_part(fake_hub, tmp_path):
    f = HubClient().file(TINY, "tiny-Q8_0.gguf")
    fake_hub.throttle_bps = 2_000_000
    d = _download(f, tmp_path / "models")
    d.start()
    wait_for_thread(lambda: d.progress().done_bytes > 0)
    d.cancel()
    assert d.wait().state == State.CANCELLED
    assert not d.part.exists() and not d.meta.exists() and not d.path.exists()
    d.start()                                   # a cancelled download stays cancelled
    assert not d.running


def test_several_downloads_at_once(fake_hub, tmp_path):
    models = tmp_path / "models"
    client = HubClient(TOKEN)
    mgr = DownloadManager(models, client)
    fake_hub.throttle_bps = 8_000_000
    files = [*client.files(TINY), *client.files(GATED)]
    downloads = [mgr.add(f) for f in files]
    wait_for_thread(lambda: sum(1 for d in downloads if d.progress().done_bytes > 0) == len(downloads))
    assert len(mgr.active) >= 2                 # they overlap: none waited for another to finish
    for d in downloads:
        assert d.wait().state == State.DONE
    assert sorted(m.file_name for m in scan_models(models)) == ["gated-Q4_0.gguf", "tiny-Q4_K_M.gguf",
                                                                "tiny-Q8_0.gguf"]
    assert mgr.add(files[0]) is downloads[0]    # the same file is one download


def test_gated_download_without_token_is_explained(fake_hub, tmp_path):
    f = HubClient(TOKEN).file(GATED, "gated-Q4_0.gguf")
    d = _download(f, tmp_path / "models", HubClient())          # listed with a token, downloaded without
    d.start()
    p = d.wait()
    assert p.state == State.FAILED and "401" in p.error and "token" in p.error


def test_rate_limited_download_is_explained_and_resumable(fake_hub, tmp_path):
    f = HubClient().file(TINY, "tiny-Q4_K_M.gguf")
    fake_hub.rate_limit = 1
    d = _download(f, tmp_path / "models")
    d.start()
    p = d.wait()
    assert p.state == State.FAILED and "429" in p.error
    d.start()
    assert d.wait().state == State.DONE


def test_disk_space_is_checked_first(fake_hub, tmp_path, monkeypatch):
    f = HubClient().file(TINY, "tiny-Q8_0.gguf")

    class Usage:
        free = f.size_bytes          # the file, but not the reserve
    monkeypatch.setattr(dl.shutil, "disk_usage", lambda _p: Usage)
    d = _download(f, tmp_path / "models")
    d.start()
    p = d.wait()
    assert p.state == State.FAILED and "Not enough disk space" in p.error
    assert fake_hub.ranges("tiny-Q8_0") == []                  # nothing was asked for
    assert not d.part.exists()


def test_a_damaged_part_is_caught_by_the_hash(fake_hub, tmp_path):
    f = HubClient().file(TINY, "tiny-Q4_K_M.gguf")
    dest = destination(tmp_path / "models", f)
    dest.parent.mkdir(parents=True)
    part = dest.with_name(dest.name + ".part")
    part.write_bytes(b"GARBAGE!" * 1000)        # bytes that are not the file's
    d = _download(f, tmp_path / "models")
    assert d.progress().state == State.PAUSED and d.progress().done_bytes == 8000
    d.start()
    p = d.wait()
    assert p.state == State.FAILED and "SHA-256" in p.error     # resumed onto a bad part: refused, deleted
    assert not part.exists() and not dest.exists()
    d.start()
    assert d.wait().state == State.DONE                         # and the next try takes it whole
    assert fake_hub.ranges("tiny-Q4_K_M") == ["bytes=8000-", None]


def test_server_ignoring_range_restarts_from_zero(fake_hub, tmp_path):
    f = HubClient().file(TINY, "tiny-Q8_0.gguf")
    fake_hub.cut(1_000_000)
    d = _download(f, tmp_path / "models", retries=0)
    d.start()
    assert d.wait().state == State.FAILED and d.part.stat().st_size == 1_000_000
    fake_hub.ignore_range = True
    d.start()
    p = d.wait()
    assert p.state == State.DONE, p.error
    assert fake_hub.ranges("tiny-Q8_0") == [None, "bytes=1000000-"]
    assert hashlib.sha256(d.path.read_bytes()).hexdigest() == f.sha256     # not the first MB twice
